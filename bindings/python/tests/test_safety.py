"""No Python operation can crash the interpreter: copies are real copies,
every method and dunder of a closed filter raises, and writers of one file
take turns through FileLock."""
import copy
import os
import pickle
import shutil
import subprocess
import sys
import unittest

import bloomkit
from bloomkit import BloomFilter, FileLock, FileLockedError
from helpers import child_env, scratch


class CopyTest(unittest.TestCase):
    def test_copy_is_independent_for_every_variant(self):
        for variant, kind in bloomkit.variants().items():
            capacity = 100 if kind["grows"] else 5000  # a growing one: several arrays
            rate = {"fpr": 0.0001} if "fpr" in kind["keys"] else {}  # rbcuckoo: its shape's
            f = BloomFilter({"variant": variant, "capacity": capacity, **rate})
            f.add_many("k%d" % i for i in range(1000))  # scalable: several slices
            # a key the original answers absent (rbcuckoo's 8-bit fingerprints
            # answer a few percent of absent keys present)
            only = next(k for k in ("only in the copy %d" % j for j in range(1000)) if k not in f)
            for c in (copy.copy(f), copy.deepcopy(f), f.copy()):
                self.assertEqual(c.stats(), f.stats())
                self.assertTrue(all(c.contains_many("k%d" % i for i in range(1000))))
                self.assertNotIn(only, c)  # the copy answers as the original
                c.add(only)
                self.assertIn(only, c)
                self.assertNotIn(only, f)
                c.close()
                self.assertIn("k1", f)  # the original lives on
            f.close()

    def test_copies_and_closes_in_any_order_never_crash(self):
        # a child interpreter: a double free or use after free would kill it
        code = (
            "import copy, bloomkit\n"
            "f = bloomkit.BloomFilter('capacity=1000')\n"
            "f.add('a')\n"
            "c = copy.copy(f)\n"
            "f.close()\n"
            "assert 'a' in c\n"
            "d = copy.deepcopy(c)\n"
            "del c\n"
            "assert 'a' in d\n"
            "print('ok')\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ
        )
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "ok")

    def test_pickle_and_bytes_round_trip_every_variant(self):
        d = scratch()
        self.addCleanup(shutil.rmtree, d, True)
        for config in ("variant=standard capacity=1000",
                       "variant=standard layout=blocked capacity=1000",
                       "variant=counting capacity=1000",
                       "variant=scalable capacity=100",
                       "variant=window window=1h generations=4 capacity=1000"):
            with BloomFilter(config) as f:
                f.add_many(f"k{i}" for i in range(500))
                path = os.path.join(d, "f.bkf")
                f.save(path)
                with open(path, "rb") as fp:
                    saved = fp.read()
                raw = f.to_bytes()
                self.assertEqual(raw, saved, config)  # the file format, byte for byte
                for g in (BloomFilter.from_bytes(raw), pickle.loads(pickle.dumps(f)),
                          BloomFilter.from_bytes(bytearray(saved))):
                    with g:
                        self.assertEqual(g.to_bytes(), raw, config)
                        self.assertTrue(all(g.contains_many(f"k{i}" for i in range(500))))
                        # a key f answers absent (at fpr 0.01 some keys are false
                        # positives of f already) stays absent in f once the copy has it
                        only = next(k for k in ("only in the copy %d" % j for j in range(100))
                                    if k not in f)
                        g.add(only)
                        self.assertIn(only, g)
                        self.assertNotIn(only, f)

    def test_damaged_bytes_are_refused(self):
        with BloomFilter("capacity=100") as f:
            f.add("x")
            raw = f.to_bytes()
        for bad in (b"", raw[:-1], raw + b"\0", raw[:100] + bytes([raw[100] ^ 1]) + raw[101:]):
            with self.assertRaises(OSError) as cm:
                BloomFilter.from_bytes(bad)
            self.assertIn("from_bytes", str(cm.exception))
        with self.assertRaises(TypeError):
            BloomFilter.from_bytes(None)

    def test_a_crafted_window_image_is_refused_in_a_child_interpreter(self):
        # checksums that pass, a generation out of range after one already
        # adopted (once a double free that killed the interpreter): a child
        # interpreter runs from_bytes and pickle.loads on it and must live
        image = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                             "tests", "fuzz", "regress", "load", "window-generation-out-of-range")
        code = (
            "import pickle, sys, bloomkit\n"
            "raw = open(sys.argv[1], 'rb').read()\n"
            "class Pickled:  # a pickle of a filter whose bytes are these\n"
            "    def __reduce__(self):\n"
            "        return (bloomkit.BloomFilter.from_bytes, (raw,))\n"
            "for load in (lambda: bloomkit.BloomFilter.from_bytes(raw),\n"
            "             lambda: pickle.loads(pickle.dumps(Pickled()))):\n"
            "    try:\n"
            "        load()\n"
            "    except OSError as e:\n"
            "        assert 'generation' in str(e), e\n"
            "    else:\n"
            "        raise SystemExit('accepted')\n"
            "print('ok')\n"
        )
        out = subprocess.run([sys.executable, "-c", code, image], capture_output=True, text=True,
                             env=os.environ)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "ok")

    def test_merge_and_intersect(self):
        key = "key=000102030405060708090a0b0c0d0e0f"
        with BloomFilter(f"capacity=10000 {key}") as a, \
                BloomFilter(f"capacity=10000 {key}") as b, \
                BloomFilter("capacity=10000") as other:
            a.add_many(["left", "both"])
            b.add_many(["right", "both"])
            u = a.copy()
            u.merge(b)
            self.assertEqual(u.contains_many(["left", "right", "both", "none"]),
                             [True, True, True, False])
            a.intersect(b)
            self.assertEqual(a.contains_many(["left", "right", "both", "none"]),
                             [False, False, True, False])
            for op in (a.merge, a.intersect):
                with self.assertRaises(ValueError):
                    op(other)  # another hash key
                with self.assertRaises(TypeError):
                    op("not a filter")
            u.close()


class VersionTest(unittest.TestCase):
    def test_a_library_of_another_release_is_refused(self):
        # the check the import makes (bloomkit/_lib.py); Debian's shared build
        # meets it for real with another library preloaded (tools/deb.sh check)
        from bloomkit import _lib
        with self.assertRaises(ImportError) as e:
            _lib.check_release("9.9.9", bloomkit.__version__, bloomkit.__version__)
        self.assertIn("libbloomkit 9.9.9, this package needs " + bloomkit.__version__,
                      str(e.exception))
        with self.assertRaises(ImportError) as e:
            _lib.check_release(bloomkit.__version__, "9.9.9", bloomkit.__version__)
        self.assertIn("built against libbloomkit 9.9.9", str(e.exception))
        _lib.check_release(bloomkit.__version__, bloomkit.__version__, bloomkit.__version__)

    def test_one_version_and_no_ctypes(self):
        # the package's version is the library's (written once, in bloomkit.h)
        self.assertEqual(bloomkit.__version__, bloomkit.library_version())
        # every call goes through the extension: importing bloomkit (and
        # using it) loads no ctypes
        out = subprocess.run(
            [sys.executable, "-c",
             "import sys, bloomkit; f = bloomkit.BloomFilter(capacity=10); f.add('a'); "
             "f.add_many(['b']); bloomkit.canonical_url('http://a/'); "
             "print('ctypes' in sys.modules)"],
            capture_output=True, text=True, env=child_env())
        self.assertEqual(out.stdout.strip(), "False", out.stderr)
        with BloomFilter("capacity=10") as f:
            self.assertEqual(f.stats()["capacity"], 10)


class TruthTest(unittest.TestCase):
    def test_an_empty_filter_is_true_and_its_rate_is_zero(self):
        with BloomFilter("capacity=100") as f:
            self.assertTrue(f)  # not len(f) == 0
            self.assertEqual(len(f), 0)
            rate = f.stats()["est_fpr"]
            self.assertEqual(rate, 0.0)
            self.assertEqual(str(rate), "0.0")  # not -0.0


class ClosedFilterTest(unittest.TestCase):
    def test_every_method_and_dunder_after_close_raises(self):
        d = scratch()
        try:
            f = BloomFilter("variant=counting capacity=100")
            f.add("a")
            f.close()
            f.close()  # idempotent
            calls = [
                lambda: f.add("x"),
                lambda: "x" in f,
                lambda: f.contains("x"),
                lambda: f.remove("a"),
                lambda: f.add_many(["x"]),
                lambda: f.contains_many(["x"]),
                lambda: f.stats(),
                lambda: len(f),
                lambda: f.config,
                lambda: f.differs_from("capacity=100"),
                lambda: f.clear(),
                lambda: f.save(os.path.join(d, "x.bkf")),
                lambda: f.sync(),
                lambda: f.copy(),
                lambda: copy.copy(f),
                lambda: copy.deepcopy(f),
            ]
            for i, call in enumerate(calls):
                with self.assertRaises(ValueError, msg="call %d" % i):
                    call()
            self.assertIn("closed", repr(f))
            with f:  # entering and leaving a closed filter is harmless
                pass
            self.assertFalse(os.path.exists(os.path.join(d, "x.bkf")))
        finally:
            shutil.rmtree(d, ignore_errors=True)


class FileLockTest(unittest.TestCase):
    def setUp(self):
        self.dir = scratch()
        self.path = os.path.join(self.dir, "seen.bkf")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_second_writer_is_refused_without_waiting(self):
        with FileLock(self.path):
            with self.assertRaises(FileLockedError) as cm:
                FileLock(self.path, wait=False)
            self.assertIn("process %d" % os.getpid(), str(cm.exception))
            self.assertIsInstance(cm.exception, BlockingIOError)
        FileLock(self.path, wait=False).release()  # free again

    def test_the_command_waits_for_a_python_writer(self):
        cli = os.environ.get("BLOOMKIT_CLI")
        if not cli or not os.path.exists(cli):
            self.skipTest("BLOOMKIT_CLI not set")
        with FileLock(self.path):
            f = BloomFilter("capacity=1000")
            f.add("from python")
            f.save(self.path)
            out = subprocess.run(
                [cli, "add", self.path, "--no-wait"], input=b"x\n", capture_output=True
            )
            self.assertEqual(out.returncode, 3, out.stderr)
            self.assertIn(b"process %d" % os.getpid(), out.stderr)
        out = subprocess.run([cli, "add", self.path], input=b"from the command\n")
        self.assertEqual(out.returncode, 0)
        g = BloomFilter.load(self.path)
        self.assertIn("from python", g)
        self.assertIn("from the command", g)
        g.close()

    def test_scrapy_state_in_use_stops_a_second_crawl(self):
        try:
            from scrapy.settings import Settings
        except ImportError:
            self.skipTest("Scrapy is not installed")
        from bloomkit.scrapy import BloomDupeFilter

        settings = Settings({"BLOOMKIT_STATE": self.path})
        first = BloomDupeFilter.from_settings(settings)
        with self.assertRaises(FileLockedError) as cm:
            BloomDupeFilter.from_settings(settings)
        self.assertIn("in use by another crawl", str(cm.exception))
        first.close("finished")
        second = BloomDupeFilter.from_settings(settings)  # free after close
        second.close("finished")


if __name__ == "__main__":
    unittest.main()
