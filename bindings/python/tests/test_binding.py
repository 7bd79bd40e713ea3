"""The Python binding over libbloomkit.so: every method, the errors as
Python exceptions with the library's message, files, mappings, Redis."""
import os
import pickle
import shutil
import subprocess
import threading
import time
import unittest

import bloomkit
from bloomkit import BloomFilter
from helpers import RedisServer, have_redis, scratch

KEY = "000102030405060708090a0b0c0d0e0f"


class BindingTest(unittest.TestCase):
    def setUp(self):
        self.dir = scratch()

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_add_contains_len_for_every_variant(self):
        for variant, kind in bloomkit.variants().items():
            rate = {"fpr": 0.001} if "fpr" in kind["keys"] else {}  # rbcuckoo: its shape's
            with BloomFilter({"variant": variant, "capacity": 1000, **rate}) as f:
                self.assertTrue(f.add("https://example.org/a"))
                self.assertFalse(f.add("https://example.org/a"))
                self.assertTrue(f.add(b"https://example.org/a\x00binary"))
                self.assertIn("https://example.org/a", f)
                self.assertIn(b"https://example.org/a\x00binary", f)
                self.assertNotIn("https://example.org/never", f)
                self.assertEqual(len(f), 3 if kind["removes"] else 2)  # every add counted
                self.assertEqual(f.stats()["variant"], variant)

    def test_batches_match_single_calls(self):
        keys = ["k%d" % (i % 700) for i in range(1000)]
        a = BloomFilter("variant=standard capacity=5000 fpr=0.01 key=" + KEY)
        b = BloomFilter("variant=standard capacity=5000 fpr=0.01 key=" + KEY)
        self.assertEqual(a.add_many(keys), [b.add(k) for k in keys])
        probes = ["p%d" % i for i in range(2000)] + keys
        self.assertEqual(a.contains_many(probes), [k in b for k in probes])
        self.assertEqual(a.add_many([]), [])
        # generators, and more keys than one library batch (16,384)
        many = a.add_many(("g%d" % i for i in range(70000)))
        self.assertEqual(len(many), 70000)
        self.assertEqual(len(a), 700 + sum(many))

    def test_calls_release_the_gil(self):
        # FileLock() waits inside the library (flock) while another holder
        # has the lock; the holder is a Python thread that releases it only
        # once the waiter is inside the library, and can run then only if the
        # call released the GIL (the extension does around every wait on a
        # file, a server or a batch). Held, this would deadlock: faulthandler ends it in 60 s.
        # (A FIFO served for this before: the library now refuses FIFOs
        # without blocking.)
        import faulthandler

        path = os.path.join(self.dir, "locked.bkf")
        held = bloomkit.FileLock(path)
        waiting = threading.Event()

        def holder():
            waiting.wait()
            time.sleep(0.05)  # let the main thread reach flock(2); not for timing
            held.release()

        t = threading.Thread(target=holder)
        faulthandler.dump_traceback_later(60, exit=True)
        try:
            t.start()
            waiting.set()
            with bloomkit.FileLock(path):  # blocks until holder() runs
                pass
            t.join()
        finally:
            faulthandler.cancel_dump_traceback_later()

    def test_remove_on_counting_and_its_errors(self):
        f = BloomFilter("variant=counting capacity=1000 fpr=0.01")
        f.add("x")
        f.remove("x")
        self.assertNotIn("x", f)
        with self.assertRaises(KeyError) as cm:
            f.remove("x")
        self.assertIsInstance(cm.exception, bloomkit.NotFoundError)
        self.assertEqual(cm.exception.name, "BK_ENOTFOUND")
        self.assertIn("key not found", str(cm.exception))
        with self.assertRaises(TypeError):
            BloomFilter("variant=standard").remove("x")

    def test_a_cuckoo_filter(self):
        """variant=cuckoo through the binding: its own keys as keywords, a
        multiset as counting, bytes and files, and a full table refusing
        an add with FilterFullError, changing nothing."""
        f = BloomFilter(variant="cuckoo", capacity=1000, fpr=0.001, bucket=4)
        self.assertIn(" bucket=4", f.config)
        self.assertRegex(f.config, r" fingerprint=[1-9]")  # chosen, and recorded
        self.assertTrue(f.add("x"))
        self.assertFalse(f.add("x"))
        f.remove("x")
        self.assertIn("x", f)
        f.remove("x")
        self.assertNotIn("x", f)
        f.update("k%d" % i for i in range(1000))
        g = BloomFilter.from_bytes(f.to_bytes())
        self.assertEqual(f, g)
        self.assertTrue(all("k%d" % i in g for i in range(1000)))
        path = os.path.join(self.dir, "ck.bkf")
        h = BloomFilter(variant="cuckoo", capacity=1000, fpr=0.001, path=path)
        h.update("k%d" % i for i in range(500))
        h.close()
        self.assertIn("k7", BloomFilter.load(path))
        added = 1000
        with self.assertRaises(bloomkit.FilterFullError):
            while True:
                f.add("more%d" % added)
                added += 1
        before = f.to_bytes()
        with self.assertRaises(bloomkit.FilterFullError):
            f.add("more%d" % added)
        self.assertEqual(f.to_bytes(), before)
        with self.assertRaises(ValueError):
            BloomFilter(variant="counting", fingerprint=8)
        once = BloomFilter(variant="cuckoo", capacity=100)
        once.set_add_once(True)  # a set: repeats add nothing, one removal takes a key out
        self.assertEqual([once.add("x") for _ in range(50)], [True] + [False] * 49)
        once.remove("x")
        self.assertNotIn("x", once)

    def test_bad_config_is_a_value_error_naming_the_key(self):
        for bad in ("fpr=2", "variant=quotient", "capacity=0", "nonsense=1", {"fpr": "a b"}):
            with self.assertRaises(ValueError) as cm:
                BloomFilter(bad)
            self.assertIsInstance(cm.exception, bloomkit.BloomkitError)
        with self.assertRaises(ValueError) as cm:
            BloomFilter("fpr=2")
        self.assertIn("fpr", str(cm.exception))
        with self.assertRaises(TypeError):
            BloomFilter(42)
        with self.assertRaises(TypeError):
            BloomFilter().add(42)

    def test_save_load_and_mmap(self):
        path = os.path.join(self.dir, "f.bkf")
        f = BloomFilter({"variant": "scalable", "capacity": 100, "fpr": 0.001})
        f.add_many("u%d" % i for i in range(1000))  # grows past its first slice
        f.save(path)
        g = BloomFilter.load(path)
        self.assertEqual(g.stats(), f.stats())
        self.assertTrue(all(g.contains_many("u%d" % i for i in range(1000))))
        m = BloomFilter.open_mmap(path)
        self.assertIn("u5", m)
        with self.assertRaises(PermissionError):
            m.add("new")
        m.close()
        m.close()  # idempotent
        with self.assertRaises(ValueError):
            m.add("closed")
        w = BloomFilter.open_mmap(path, writable=True)
        self.assertTrue(w.add("new"))
        w.close()
        self.assertIn("new", BloomFilter.load(path))

    def test_file_errors_are_os_errors_with_the_reason(self):
        with self.assertRaises(OSError) as cm:
            BloomFilter.load(os.path.join(self.dir, "missing.bkf"))
        self.assertIn("No such file", str(cm.exception))
        bad = os.path.join(self.dir, "bad.bkf")
        with open(bad, "wb") as fh:
            fh.write(b"not a filter at all" * 10)
        with self.assertRaises(OSError) as cm:
            BloomFilter.load(bad)
        self.assertEqual(cm.exception.name, "BK_ECORRUPT")
        with self.assertRaises(OSError):
            BloomFilter().save(os.path.join(self.dir, "no", "such", "dir.bkf"))

    def test_differs_from_names_the_first_difference(self):
        f = BloomFilter("variant=scalable fpr=0.001 key=" + KEY)
        self.assertIsNone(f.differs_from("fpr=0.001"))
        self.assertIsNone(f.differs_from(""))
        self.assertIsNone(f.differs_from("key=" + KEY))
        self.assertEqual(f.differs_from("fpr=0.01"), "fpr")
        self.assertEqual(f.differs_from({"variant": "counting"}), "variant")
        self.assertEqual(f.differs_from("key=" + "1" * 32), "key")
        with self.assertRaises(ValueError):
            f.differs_from("fpr=7")

    def test_xxh3_for_trusted_keys(self):
        """hash=xxh3 works through the binding, and its files keep it."""
        f = BloomFilter("hash=xxh3 capacity=1000 fpr=0.001")
        self.assertEqual(f.add_many(["a", "b", "a"]), [True, True, False])
        self.assertEqual(f.stats()["hash"], "xxh3")
        path = os.path.join(self.dir, "x.bkf")
        f.save(path)
        g = BloomFilter.load(path)
        self.assertIn("hash=xxh3", g.config)
        self.assertTrue("a" in g and "b" in g)

    def test_config_and_clear(self):
        f = BloomFilter("variant=counting capacity=500 fpr=0.02 layout=blocked")
        self.assertIn("variant=counting", f.config)
        self.assertIn("layout=blocked", f.config)
        f.add("a")
        f.clear()
        self.assertEqual(len(f), 0)
        self.assertRegex(bloomkit.library_version(), r"^\d+\.\d+\.\d+$")

    def test_canonical_url_is_the_commands(self):
        cu = bloomkit.canonical_url
        self.assertEqual(cu("HTTP://Example.COM:80/a/./b/../c?b=2&a=1#top"),
                         "http://example.com/a/c?a=1&b=2")
        self.assertEqual(cu("http://e.com/?b=2&a=1", keep_query_order=True), "http://e.com/?b=2&a=1")
        self.assertEqual(cu("https://example.com/café?q=a b"),
                         "https://example.com/caf%C3%A9?q=a+b")
        self.assertEqual(cu(b"http://B\xc3\xbccher.EXAMPLE/%7e"), b"http://b\xc3\xbccher.example/~")
        for not_a_url in ("not a url", "mailto:a@b.c", "http://h:port/", "", "\udcff"):
            self.assertEqual(cu(not_a_url), not_a_url)
        with self.assertRaises(TypeError):
            cu(42)
        # the command decides on the same key: two spellings, one line out
        lines = "http://Example.com/a?b=2&a=1\nhttp://example.com:80/a?a=1&b=2#x\n"
        self.assertEqual(cu(lines.split("\n")[0]), cu(lines.split("\n")[1]))
        cli = os.environ.get("BLOOMKIT_CLI")
        if cli:
            out = subprocess.run([cli, "dedup", "--canonical-urls"], input=lines.encode(),
                                 capture_output=True, check=True).stdout
            self.assertEqual(out, lines.splitlines(keepends=True)[0].encode())

    def test_pinned_bits_and_hashes(self):
        # the seed recipes' parameters: exactly m bits and k hashes
        for config in ("bits=1048576 hashes=6", {"bits": 1048576, "hashes": 6},
                       {"hashes": 6, "bits": 1048576}):
            f = BloomFilter(config)
            st = f.stats()
            self.assertEqual((st["bits"], st["k"]), (1 << 20, 6))
            self.assertIn("bits=1048576", f.config)
            self.assertNotIn("fpr=", f.config)
            f.add("a")
            g = BloomFilter.from_bytes(f.to_bytes())
            self.assertIn("hashes=6", g.config)
            self.assertIn("a", g)
        # contradictions name both keys, as text or as a mapping in any order
        for bad in ("bits=4096 fpr=0.01", {"fpr": 0.01, "bits": 4096}, {"bits": 4096, "fpr": 0.01}):
            with self.assertRaises(ValueError) as cm:
                BloomFilter(bad)
            self.assertIn("fpr", str(cm.exception))
            self.assertIn("bits", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            BloomFilter("hashes=3")
        self.assertIn("bits", str(cm.exception))

    @unittest.skipUnless(have_redis(), "no redis-server, or a binding built without hiredis")
    def test_redis_filters_are_shared(self):
        server = RedisServer(self.dir)
        try:
            url = server.url("shared")
            a = BloomFilter.redis(url, "variant=scalable capacity=1000 fpr=0.001")
            b = BloomFilter.redis(url)  # adopts the parameters and key
            self.assertTrue(a.add("k"))
            self.assertFalse(b.add("k"))
            self.assertEqual(b.add_many(["k", "l", "l"]), [False, True, False])
            self.assertEqual(len(a), 2)
            with self.assertRaises(TypeError):  # its bytes are on the server: pull it
                pickle.dumps(a)
            with self.assertRaises(ValueError) as cm:
                BloomFilter.redis(url, "fpr=0.01")
            self.assertIn("fpr", str(cm.exception))
            a.close()
            b.close()
        finally:
            server.stop()
        with self.assertRaises(OSError) as cm:
            BloomFilter.redis(server.url("gone"))
        self.assertIn("connect", str(cm.exception))

    @unittest.skipUnless(have_redis(), "no redis-server, or a binding built without hiredis")
    def test_a_shared_window_forgets_after_it(self):
        """variant=window in Redis, whose clock is the server's (TIME): what
        one filter object adds another finds inside the window, and is new
        again after it. The window is sized from what the calls took: 2 s,
        and when the second lookup came later than that (a busy machine),
        the run is made again on a new key with a window four times as long,
        so how fast the machine is never decides the answer."""
        server = RedisServer(self.dir)
        try:
            window = 2.0
            for attempt in range(4):
                url = server.url("win%d" % attempt)
                config = "variant=window window=%ds generations=4 capacity=1000 fpr=0.001" % window
                a = BloomFilter.redis(url, config)
                b = BloomFilter.redis(url)
                started = time.monotonic()
                self.assertEqual(a.add_many(["x", "y"]), [True, True])
                added = time.monotonic()
                seen = b.add_many(["x", "y", "z"])
                if time.monotonic() - started < window:
                    break  # every call inside the window: its answers are the test's
                a.close()
                b.close()
                window *= 4
            else:
                self.fail("four windows up to %g s each outlasted by two calls" % window)
            self.assertEqual(seen, [False, False, True])
            # forgotten one span after the window at the latest (by the server's clock)
            time.sleep(max(0.0, added + window * 1.25 + 0.35 - time.monotonic()))
            self.assertEqual(b.add_many(["x", "y"]), [True, True])
            a.close()
            b.close()
        finally:
            server.stop()

if __name__ == "__main__":
    unittest.main()
