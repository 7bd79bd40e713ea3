"""Keys that grow without a chain (issue 60): under the default NEW_KEYS a
key BF.ADD, BF.MADD or BF.INSERT makes is bloomkit's expandable filter,
one table however far it grows, with RedisBloom's replies and their
meaning (BF.INFO, BF.CARD, NONSCALING, EXPANSION), every item kept, the
rate under the key's error rate, and the same bytes on a replica, after
an AOF restart and after an RDB restart. Run by `make check-module`."""
import importlib.util
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from test_module import ModuleTest, dump, items  # noqa: E402


def info(r, key):
    out = r.execute_command("BF.INFO", key)
    return dict(zip([k.decode() for k in out[0::2]], out[1::2]))


def config(r, key):
    out = r.execute_command("BK.INFO", key)
    return dict(zip([k.decode() for k in out[0::2]], out[1::2]))


def madd(r, key, keys, step=1000):
    out = []
    for i in range(0, len(keys), step):
        out += r.execute_command("BF.MADD", key, *keys[i:i + step])
    return out


def present(r, key, keys, step=1000):
    return sum(sum(r.execute_command("BF.MEXISTS", key, *keys[i:i + step]))
               for i in range(0, len(keys), step))


class GrowthTest(ModuleTest):
    def test_a_key_grown_from_nothing_is_one_table(self):
        r = self.server().client()
        self.assertEqual(r.execute_command("BF.ADD", "g", "first"), 1)
        self.assertEqual(config(r, "g")["variant"], b"expandable")
        start = info(r, "g")
        # what it holds before it grows: the first table the capacity asked
        self.assertEqual(start["Capacity"], 100)
        self.assertEqual(start["Expansion rate"], 2)
        n = 60000
        keys = items("in", n)
        added = madd(r, "g", keys)
        grown = info(r, "g")
        self.assertEqual(grown["Number of filters"], 1)  # no chain: one table
        self.assertEqual(grown["Number of items inserted"], 1 + sum(added))
        self.assertEqual(r.execute_command("BF.CARD", "g"), 1 + sum(added))
        self.assertGreater(sum(added), n * 0.99)  # a few adds met false positives
        # it holds what it says, and says what it can hold: 0.75 of 2^17 homes
        self.assertEqual(grown["Capacity"], 98304)
        self.assertGreater(grown["Size"], start["Size"] * 200)
        self.assertEqual(present(r, "g", keys), n)  # no false negative
        fp = present(r, "g", items("out", 100000))
        self.assertLess(fp / 100000, 0.01)  # the key's error rate (the default)

    def test_expansion_sets_how_fast_it_grows(self):
        r = self.server().client()
        for e, per in ((2, 2), (4, 4), (3, 4), (16, 16)):
            key = "e%d" % e
            r.execute_command("BF.INSERT", key, "CAPACITY", "1000", "EXPANSION", str(e),
                              "ITEMS", "a")
            first = info(r, key)
            self.assertEqual((first["Capacity"], first["Expansion rate"]), (1000, e))
            madd(r, key, items(key, 1600))
            # one growth: 2^11 homes (for 1000) times `per` (growth rounded
            # up to a power of two), three quarters of them its capacity
            self.assertEqual(info(r, key)["Capacity"], 1536 * per, e)
            self.assertEqual(info(r, key)["Number of filters"], 1)

    def test_nonscaling_and_reserved_keys_keep_their_kinds(self):
        r = self.server().client()
        r.execute_command("BF.INSERT", "n", "CAPACITY", "2", "NONSCALING", "ITEMS", "a", "b")
        self.assertEqual(config(r, "n")["variant"], b"standard")
        out = r.execute_command("BF.INSERT", "n", "ITEMS", "c", "d", "e", "f")
        self.assertTrue(any("non scaling filter is full" in str(x) for x in out))
        # BF.RESERVE states the count: RedisBloom's memory for it (a chain
        # whose first slice is a Bloom array), not a table's
        r.execute_command("BF.RESERVE", "res", "0.01", "1000")
        self.assertEqual(config(r, "res")["variant"], b"scalable")
        self.assertEqual(info(r, "res")["Capacity"], 1000)
        # bf-expansion-factor 0: no key scales
        r.config_set("bloomkit.bf-expansion-factor", 0)
        r.execute_command("BF.ADD", "fixed", "a")
        self.assertEqual(config(r, "fixed")["variant"], b"standard")

    def test_bf_config_can_ask_for_a_chain(self):
        # a key only chains take, or the variant named: BF.ADD makes a chain
        for text in ("layout=blocked", "variant=scalable"):
            s = self.server(text.replace("=", "-"), module_args=["BF_CONFIG", text])
            r = s.client()
            r.execute_command("BF.ADD", "c", "a")
            self.assertEqual(config(r, "c")["variant"], b"scalable", text)
            r.execute_command("BF.RESERVE", "d", "0.01", "100", "NONSCALING")
            self.assertEqual(config(r, "d")["variant"], b"standard", text)
        r = self.server("hash", module_args=["BF_CONFIG", "hash=siphash13"]).client()
        r.execute_command("BF.ADD", "x", "a")
        self.assertEqual(config(r, "x")["variant"], b"expandable")
        self.assertEqual(config(r, "x")["hash"], b"siphash13")

    def test_replica_aof_and_rdb_have_the_same_bytes(self):
        rm, rr = self.replicated(args=["--appendonly", "yes"])
        keys = items("k", 30000)
        madd(rm, "g", keys)  # from nothing, through eight doublings
        rm.execute_command("BF.INSERT", "h", "EXPANSION", "4", "ITEMS", *keys[:5000])
        rm.execute_command("WAIT", 1, 5000)
        for key in ("g", "h"):
            self.assertEqual(dump(rr, key), dump(rm, key), key)
        master = self.servers[0]
        before = dump(rm, "g")
        master.restart()  # from its AOF
        rm = master.client()
        self.assertEqual(dump(rm, "g"), before)
        rm.execute_command("SAVE")
        master.restart(["--appendonly", "no"])  # from its RDB
        rm = master.client()
        self.assertEqual(dump(rm, "g"), before)
        self.assertEqual(present(rm, "g", keys), len(keys))

    def test_the_crawlers_defaults_through_the_module(self):
        s = self.server()
        r = s.client()
        # an earlier version's default chain, already there: taken as it is
        r.execute_command("BK.CREATE", "older", "variant=scalable", "capacity=1000000",
                          "fpr=0.0001")
        cli = os.environ.get("BLOOMKIT_CLI", "build/bloomkit")
        for name, variant in (("seen", b"expandable"), ("older", b"scalable")):
            url = "redis://127.0.0.1:%d/%s" % (s.port, name)
            p = subprocess.run([cli, "dedup", "--redis", url], input="a\nb\na\n",
                               capture_output=True, text=True, timeout=60)
            self.assertEqual((p.returncode, p.stdout), (0, "a\nb\n"), p.stderr)
            self.assertEqual(config(r, name)["variant"], variant)
        if importlib.util.find_spec("scrapy") is None:
            self.skipTest("Scrapy is not installed (python3-scrapy)")
        try:
            from scrapy.settings import Settings

            from bloomkit.scrapy import BloomDupeFilter
        except ImportError:
            self.skipTest("the bloomkit Python binding is not on the path")
        url = "redis://127.0.0.1:%d/crawl" % s.port
        f = BloomDupeFilter.from_settings(Settings({"BLOOMKIT_REDIS": url}))
        f.close("finished")
        self.assertEqual(config(r, "crawl")["variant"], b"expandable")
        self.assertEqual(config(r, "crawl")["target_fpr"], b"0.0001")


if __name__ == "__main__":
    unittest.main()
