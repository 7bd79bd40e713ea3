"""bloomkit_build: the build backend of `pip install ./bindings/python`
(PEP 517, in this directory; pyproject.toml names it).

It needs nothing but the Python that runs it: no setuptools, no wheel, no
download. It checks what the build needs (this Python's C headers, make, a C
compiler, libxxhash's header) and names the first thing missing in one line;
then builds the extension bloomkit._native with the source tree's Makefile
(`make python`, the library linked in statically, the Redis part when
hiredis's header is there) in a scratch directory, and writes the wheel.
"""
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.dirname(os.path.dirname(HERE))  # the source tree: its Makefile and src/
NAME = "bloomkit"
SUMMARY = ("Bloom filters (standard, counting, scalable, window; local, mapped from files, or "
           "shared in Redis) over libbloomkit, and a Scrapy duplicate filter")


def _fail(message):
    """pip shows the backend's last line: one line that says what to do."""
    raise SystemExit("bloomkit: " + message)


def _version():
    with open(os.path.join(HERE, "bloomkit", "_version.py"), encoding="utf-8") as f:
        m = re.search(r'__version__\s*=\s*"([^"]+)"', f.read())
    if not m:
        _fail("bloomkit/_version.py holds no __version__")
    return m.group(1)


def _compiles(cc, header):
    """True when `#include <header>` preprocesses with cc."""
    try:
        out = subprocess.run([cc, "-E", "-x", "c", "-", "-o", os.devnull],
                             input="#include <%s>\n" % header, capture_output=True, text=True)
    except OSError:
        return False
    return out.returncode == 0


def _check():
    """The first thing the build lacks, in one line, or the C compiler."""
    if sys.implementation.name != "cpython":
        _fail("the extension is written against CPython's C API; this is %s"
              % sys.implementation.name)
    if not os.path.isfile(os.path.join(TREE, "Makefile")) or not os.path.isdir(
            os.path.join(TREE, "src")):
        _fail("the C library is built from the bloomkit source tree, and %s is not one: "
              "install from a checkout or the release tarball (pip install ./bindings/python)"
              % TREE)
    include = sysconfig.get_paths()["include"]
    if not os.path.isfile(os.path.join(include, "Python.h")):
        _fail("this Python (%s) has no C headers (no Python.h in %s): install them "
              "(Debian: apt-get install python3-dev; pyenv builds have them)"
              % (sys.executable, include))
    if not shutil.which("make"):
        _fail("building needs make (Debian: apt-get install build-essential)")
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        _fail("building needs a C compiler, cc (Debian: apt-get install build-essential)")
    if not shutil.which(cc.split()[0]):
        _fail("the C compiler CC=%s is not there" % cc)
    if not _compiles(cc, "xxhash.h"):
        _fail("building needs libxxhash's header, xxhash.h (Debian: apt-get install "
              "libxxhash-dev)")
    return cc


def _tag():
    impl = "cp%d%d" % sys.version_info[:2]
    soabi = sysconfig.get_config_var("SOABI") or ""  # cpython-311-x86_64-linux-gnu
    parts = soabi.split("-")
    abi = "cp" + parts[1] if len(parts) > 1 and parts[0] == "cpython" else impl
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s-%s" % (impl, abi, plat)


def _build(scratch, cc):
    """make python into scratch; returns the staged package directory."""
    redis = "1" if _compiles(cc, "hiredis/hiredis.h") else "0"
    cmd = ["make", "-C", TREE, "BUILD=" + scratch, "PYTHON=" + sys.executable, "WERROR=",
           "PYEXT_LINK=static", "HIREDIS=" + redis, "PYEXT_REDIS=" + redis, "CC=" + cc,
           "python"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(out.stdout[-4000:] + out.stderr[-4000:])
    pkg = os.path.join(scratch, "python", NAME)
    if out.returncode != 0 or not os.path.isfile(os.path.join(pkg, "_native.so")):
        _fail("building the extension failed (make python, above)")
    if redis == "0":
        sys.stderr.write("bloomkit: no hiredis header (Debian: libhiredis-dev): built without "
                         "Redis support; BloomFilter.redis will say so\n")
    return pkg


def _metadata(version):
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
            "Requires-Python: >=3.7\nProvides-Extra: scrapy\n"
            "Requires-Dist: scrapy>=2.7; extra == \"scrapy\"\n"
            "Description-Content-Type: text/markdown\n\n%s" % (NAME, version, SUMMARY, readme))


def _digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    cc = _check()
    version = _version()
    tag = _tag()
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    name = "%s-%s-%s.whl" % (NAME, version, tag)
    info = "%s-%s.dist-info" % (NAME, version)
    with tempfile.TemporaryDirectory(prefix="bloomkit-pip-") as scratch:
        pkg = _build(scratch, cc)
        files = []
        for entry in sorted(os.listdir(pkg)):
            if entry.endswith((".py", ".pyi")) or entry == "py.typed":
                files.append(("%s/%s" % (NAME, entry), os.path.join(pkg, entry)))
        files.append(("%s/_native%s" % (NAME, suffix), os.path.join(pkg, "_native.so")))
        record = []
        path = os.path.join(wheel_directory, name)
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as whl:
            def put(arc, data):
                whl.writestr(arc, data)
                record.append("%s,%s,%d" % (arc, _digest(data), len(data)))
            for arc, src in files:
                with open(src, "rb") as f:
                    put(arc, f.read())
            put(info + "/METADATA", _metadata(version).encode())
            put(info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: bloomkit_build\n"
                                  "Root-Is-Purelib: false\nTag: %s\n" % tag).encode())
            put(info + "/top_level.txt", (NAME + "\n").encode())
            record.append(info + "/RECORD,,")
            whl.writestr(info + "/RECORD", "\n".join(record) + "\n")
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []  # nothing from an index: the standard library is enough


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    _fail("the binding's source is the bloomkit tree's release tarball (make dist), which "
          "carries the C library it builds; install with pip install ./bindings/python")
