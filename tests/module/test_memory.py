"""What an operator reads of the module's memory: MEMORY USAGE of a key of
every variant and type against what the server's used_memory grew by for
it, and INFO bloomkit's keys and bytes per value type, kept exact through
growth, compaction, dump snapshots, copies, deletes and FLUSHALL. Run by
`make check-module`."""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from test_module import VARIANTS, ModuleTest, items  # noqa: E402

COPIES = 8  # keys of each kind: used_memory's noise spread over them

# every variant bigger (0.1 .. 3 MB a key), so a key's bytes dwarf its name's
BIG = {name: cfg.replace("capacity=5000", "capacity=400000")
       .replace("capacity=500 ", "capacity=40000 ").replace("bits=65536", "bits=4000000")
       for name, cfg in VARIANTS.items()}


def held(r):
    """INFO bloomkit's held section: {type: (keys, bytes)}."""
    info = r.info("bloomkit")
    return {t: (info["bloomkit_%s_keys" % t], info["bloomkit_%s_bytes" % t])
            for t in ("bloomkit0", "mbbloom", "mbbloomcf")}


class MemoryTest(ModuleTest):
    def assertNear(self, reported, grown, what):
        self.assertLessEqual(abs(reported - grown), 0.10 * grown,
                             "%s: MEMORY USAGE %d, used_memory grew %d" % (what, reported, grown))

    def measure(self, r, what, make):
        """make(name) COPIES keys; MEMORY USAGE of them against used_memory's growth."""
        used = r.info("memory")["used_memory"]
        names = ["%s-%d" % (what, i) for i in range(COPIES)]
        for n in names:
            make(n)
        grown = r.info("memory")["used_memory"] - used
        reported = sum(r.memory_usage(n, samples=0) for n in names)
        self.assertNear(reported, grown, what)

    def test_memory_usage_is_what_the_server_holds(self):
        r = self.server(module_args=["NEW_KEYS", "redisbloom"]).client()
        for name, cfg in BIG.items():
            def make(key, cfg=cfg):
                r.execute_command("BK.CREATE", key, *cfg.split())
                r.execute_command("BK.ADD", key, *items(key, 3000))
            self.measure(r, name, make)
        self.measure(r, "MBbloom--", lambda k: (r.bf().create(k, 0.001, 300000),
                                                r.bf().madd(k, *items(k, 3000))))
        self.measure(r, "MBbloomCF", lambda k: (r.cf().create(k, 500000),
                                                r.cf().insert(k, items(k, 3000))))

    def test_info_counts_every_type_exactly(self):
        s = self.server(module_args=["NEW_KEYS", "redisbloom"])
        r = s.client()
        self.assertEqual(held(r), {t: (0, 0) for t in ("bloomkit0", "mbbloom", "mbbloomcf")})
        r.execute_command("BK.CREATE", "w", *VARIANTS["window"].split())
        r.execute_command("BK.CREATE", "s", *VARIANTS["scalable"].split())
        r.bf().create("b", 0.01, 100)
        r.cf().create("c", 1000)
        for i in range(4):  # growth: new slices, links, sub-filters
            r.execute_command("BK.ADD", "s", *items("s%d" % i, 500))
            r.bf().madd("b", *items("b%d" % i, 200))
            r.cf().insert("c", items("c%d" % i, 800))
        r.execute_command("BF.SCANDUMP", "s", 0)  # a snapshot held, counted
        r.cf().delete("c", "c0-1")
        r.execute_command("CF.COMPACT", "c")
        r.copy("b", "b2")
        r.copy("c", "c2")
        r.copy("s", "s2")
        h = held(r)
        self.assertEqual({t: k for t, (k, _) in h.items()},
                         {"bloomkit0": 3, "mbbloom": 2, "mbbloomcf": 2})
        total = sum(r.memory_usage(k, samples=0) for k in ("w", "s", "s2", "b", "b2", "c", "c2"))
        counted = sum(b for _, b in h.values())
        self.assertLessEqual(counted, total)  # MEMORY USAGE adds the key's own bytes
        self.assertGreaterEqual(counted, total - 7 * 200)
        # a RedisBloom value leaves with its bytes counted afresh: a change the
        # running sums missed on the way would be left over here
        r.delete("w", "s", "s2", "b", "b2", "c", "c2")
        self.assertEqual(held(r), {t: (0, 0) for t in ("bloomkit0", "mbbloom", "mbbloomcf")})

    def test_info_after_restart_delete_and_flush(self):
        s = self.server(args=["--save", "900 1"], module_args=["NEW_KEYS", "redisbloom"])
        r = s.client()
        r.execute_command("BK.CREATE", "k", *VARIANTS["counting"].split())
        r.bf().madd("b", *items("b", 1000))
        r.cf().insert("c", items("c", 3000))
        before = held(r)
        r.save()
        s.restart()
        r = s.client()
        self.assertEqual(held(r), before)  # loaded from the RDB: counted as made
        r.delete("b")
        self.assertEqual(held(r)["mbbloom"], (0, 0))
        for i in range(50):  # values to free in the server's background thread
            r.execute_command("BK.CREATE", "k%d" % i, *VARIANTS["scalable"].split())
            r.execute_command("BK.ADD", "k%d" % i, *items("k%d" % i, 100))
            r.cf().add("c%d" % i, "x")
        r.flushall(asynchronous=True)
        deadline = time.time() + 30  # a wait for a condition, bounded
        while held(r) != {t: (0, 0) for t in ("bloomkit0", "mbbloom", "mbbloomcf")}:
            self.assertLess(time.time(), deadline, "FLUSHALL ASYNC left %s" % held(r))
            time.sleep(0.05)

    def test_large_values_are_freed_in_the_background(self):
        """A value's free effort is its size in pages: UNLINK frees one of
        more than 64 pages on the server's background thread (as the server
        does its own large values), and INFO's sums follow."""
        r = self.server(module_args=["NEW_KEYS", "redisbloom"]).client()
        r.execute_command("BK.CREATE", "big", "variant=window", "window=1h", "capacity=2000000")
        r.execute_command("BK.ADD", "big", *items("big", 1000))
        r.bf().create("rb", 0.001, 1000000)
        r.cf().create("rc", 2000000)
        r.execute_command("BK.CREATE", "small", "variant=standard", "capacity=100")
        before = r.info("memory")["lazyfreed_objects"]
        r.unlink("big", "rb", "rc", "small")
        deadline = time.time() + 30  # a wait for a condition, bounded: the
        # background thread counts a value freed once its free has returned
        while (held(r) != {t: (0, 0) for t in ("bloomkit0", "mbbloom", "mbbloomcf")} or
               r.info("memory")["lazyfreed_objects"] - before < 3):
            self.assertLess(time.time(), deadline, "UNLINK left %s" % held(r))
            time.sleep(0.05)
        self.assertEqual(r.info("memory")["lazyfreed_objects"] - before, 3)  # not "small"
        self.assertEqual(r.ping(), True)


if __name__ == "__main__":
    unittest.main()
