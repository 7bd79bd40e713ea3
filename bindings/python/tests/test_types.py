"""The type hints (py.typed) match: the extension's stub against the module
itself (mypy's stubtest), the package checked by mypy, and code written the
way docs/python.md shows accepted, a wrong call refused."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

import bloomkit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(bloomkit.__file__)))
HAVE_MYPY = importlib.util.find_spec("mypy") is not None

USE = '''
from typing import List
import bloomkit
from bloomkit import BloomFilter, FileLock
f = BloomFilter(capacity=10**6, fpr=0.001)
g = BloomFilter("variant=counting", capacity=100)
new: bool = f.add("https://example.org/")
seen: bool = b"k" in f
answers: List[bool] = f.add_many([b"a", "b", bytearray(b"c"), memoryview(b"d")])
f.update(k for k in ["x", "y"])
removed: List[bool] = g.remove_many(["a"])
u: BloomFilter = f | f
i: BloomFilter = f.intersection(f, f)
f |= u
same: bool = f == u
config: str = f.config
n: int = len(f)
raw: bytes = f.to_bytes()
back: BloomFilter = BloomFilter.from_bytes(raw)
url: str = bloomkit.canonical_url("http://A/")
with FileLock("x.bkf", wait=False):
    pass
'''
WRONG = 'from bloomkit import BloomFilter\nBloomFilter(capacity=10).add(5)\n'


def env():
    """mypy finds an installed bloomkit itself (py.typed); a tree's
    build/python is named to it (and a site-packages must not be)."""
    out = dict(os.environ)
    out.pop("MYPYPATH", None)
    if os.path.basename(ROOT) not in ("site-packages", "dist-packages"):
        out["MYPYPATH"] = ROOT
    return out


def mypy(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental",
                           "--cache-dir", os.devnull, *args],
                          capture_output=True, text=True, cwd=cwd, env=env())


@unittest.skipUnless(HAVE_MYPY, "mypy is not installed (Debian: apt-get install mypy)")
class TypesTest(unittest.TestCase):
    def test_the_stub_is_the_module(self):
        out = subprocess.run([sys.executable, "-m", "mypy.stubtest", "bloomkit._native"],
                             capture_output=True, text=True, cwd=ROOT, env=env())
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def test_the_package_and_its_documented_use_type_check(self):
        out = mypy("--ignore-missing-imports", "-p", "bloomkit", cwd=ROOT)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        with tempfile.TemporaryDirectory() as d:
            for name, text in (("use.py", USE), ("wrong.py", WRONG)):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            # the user's code strict; the package's own modules as a user
            # sees an installed package's (their errors are not the user's)
            out = mypy("--strict", "--follow-imports=silent", "use.py", cwd=d)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            out = mypy("wrong.py", cwd=d)
            self.assertNotEqual(out.returncode, 0, out.stdout)
            self.assertIn('"add"', out.stdout)


class FiguresTest(unittest.TestCase):
    """stats() and its stub carry the library's table of figures
    (figures(), the one list docs/figures.md is made from), under its
    names, plus fpr, target_fpr's older name."""

    def test_stats_and_its_stub_are_the_table(self):
        from bloomkit import _native
        names = [row[0] for row in _native.figures()]
        self.assertIn("target_fpr", names)
        self.assertIn("model_fpr", names)
        want = names + ["fpr"]
        with open(os.path.join(ROOT, "bloomkit", "_native.pyi")) as f:
            stub = f.read()
        body = stub.split("class _FilterStats(TypedDict):\n", 1)[1].split("\n\n", 1)[0]
        fields = [line.split(":")[0].strip() for line in body.splitlines() if line.strip()]
        self.assertEqual(sorted(fields), sorted(want))
        for variant, _, _, _ in _native.variants():
            stats = bloomkit.BloomFilter(variant=variant, capacity=1000).stats()
            self.assertEqual(sorted(stats), sorted(want), variant)
            self.assertEqual(stats["fpr"], stats["target_fpr"])
            self.assertEqual(stats["variant"], variant)
        for name, kind, variants, meaning in _native.figures():
            self.assertIn(kind, ("str", "int", "float"), name)
            self.assertTrue(variants and meaning, name)


if __name__ == "__main__":
    unittest.main()
