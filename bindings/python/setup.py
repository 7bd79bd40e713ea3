"""Build hook: `pip install ./bindings/python` (in a bloomkit source tree)
builds the C library with the tree's Makefile and puts libbloomkit.so (and
libbloomkit-redis.so, when hiredis is there) inside the installed package, so
`import bloomkit` needs nothing installed beside it. Everything else is in
pyproject.toml. Debian: apt-get install build-essential libxxhash-dev
(libhiredis-dev for Redis) python3-setuptools python3-wheel; then
pip install --no-build-isolation ./bindings/python."""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
TREE = HERE.parent.parent  # the source tree: its Makefile and src/


class BuildWithLibrary(build_py):
    """build_py, then the C library built by `make lib` in a scratch build
    directory (the tree's own build/ is left alone) and copied in."""

    def run(self):
        super().run()
        if os.environ.get("BLOOMKIT_PIP_NO_LIBRARY"):
            return  # packagers that ship the library on its own (Debian)
        if not (TREE / "Makefile").exists() or not (TREE / "src").is_dir():
            raise SystemExit(
                "bloomkit: the C library is built from the bloomkit source tree, and "
                f"{TREE} is not one: install from a checkout or the release tarball "
                "(pip install ./bindings/python), or set BLOOMKIT_PIP_NO_LIBRARY=1 to "
                "install the binding alone over a system libbloomkit")
        if not shutil.which("make") or not (shutil.which("cc") or os.environ.get("CC")):
            raise SystemExit(
                "bloomkit: building the C library needs make and a C compiler "
                "(Debian: apt-get install build-essential libxxhash-dev)")
        out = Path(self.build_lib) / "bloomkit"
        with tempfile.TemporaryDirectory(prefix="bloomkit-pip-") as scratch:
            make = ["make", "-C", str(TREE), f"BUILD={scratch}", "WERROR="]
            subprocess.run(make + [f"{scratch}/libbloomkit.so"], check=True)
            shutil.copy2(Path(scratch, "libbloomkit.so").resolve(), out / "libbloomkit.so")
            # the optional Redis part needs hiredis: without it, the binding
            # works and BloomFilter.redis says what is missing
            redis = subprocess.run(make + [f"{scratch}/libbloomkit-redis.so"])
            if redis.returncode == 0:
                shutil.copy2(Path(scratch, "libbloomkit-redis.so").resolve(),
                             out / "libbloomkit-redis.so")


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: tag it for this platform, not 'any'."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
