"""BK.MERGE dest src [src ...]: the union of bloomkit filters on the server,
all or nothing, with the library's compatibility rules; replicated as its
effect (replica and AOF end with the master's bytes); CROSSSLOT across
slots in a cluster. Run by `make check-module`."""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from server import cluster_port  # noqa: E402
from test_module import ModuleTest, dump, items  # noqa: E402

KEY = "key=000102030405060708090a0b0c0d0e0f"  # one hash key: the filters can merge


def make(r, name, cfg, keys):
    r.execute_command("BK.CREATE", name, *cfg.split(), KEY)
    if keys:
        r.execute_command("BK.ADD", name, *keys)


def exists(r, name, keys):
    return r.execute_command("BK.EXISTS", name, *keys)


class MergeTest(ModuleTest):
    def test_union_of_every_mergeable_variant(self):
        r = self.server().client()
        for variant, cfg in (("standard", "variant=standard capacity=5000"),
                             ("counting", "variant=counting capacity=5000"),
                             ("scalable", "variant=scalable capacity=500"),
                             ("window", "variant=window window=1h capacity=5000")):
            a, b = items(variant + "a", 1000), items(variant + "b", 1000)
            make(r, variant + ":a", cfg, a)
            make(r, variant + ":b", cfg, b)
            before = dump(r, variant + ":a"), dump(r, variant + ":b")
            self.assertEqual(r.execute_command("BK.MERGE", variant + ":d", variant + ":a",
                                               variant + ":b"), b"OK")
            self.assertEqual(exists(r, variant + ":d", a + b), [1] * 2000, variant)
            self.assertEqual((dump(r, variant + ":a"), dump(r, variant + ":b")), before)
            # into an existing dest: the union of it and the sources
            c = items(variant + "c", 1000)  # as many: a chain of as many slices
            make(r, variant + ":c", cfg, c)
            r.execute_command("BK.MERGE", variant + ":a", variant + ":c", variant + ":a")
            self.assertEqual(exists(r, variant + ":a", a + c), [1] * 2000, variant)
        # a standard filter merged is the filter built from both sets, bit for bit
        make(r, "both", "variant=standard capacity=5000",
             items("standarda", 1000) + items("standardb", 1000))
        self.assertEqual(dump(r, "standard:d")[64:], dump(r, "both")[64:])
        # counting: dest named again is not counted twice; a removal then leaves
        # the other copy
        make(r, "k1", "variant=counting capacity=100", [b"x"])
        make(r, "k2", "variant=counting capacity=100", [b"x"])
        r.execute_command("BK.MERGE", "k1", "k1", "k2")
        self.assertEqual(r.execute_command("BK.REMOVE", "k1", "x"), [1])
        self.assertEqual(exists(r, "k1", [b"x"]), [1])
        self.assertEqual(r.execute_command("BK.REMOVE", "k1", "x"), [1])
        self.assertEqual(exists(r, "k1", [b"x"]), [0])

    def test_refusals_change_nothing(self):
        r = self.server(module_args=["NEW_KEYS", "redisbloom"]).client()
        make(r, "a", "variant=standard capacity=5000", items("a", 100))
        make(r, "b", "variant=standard capacity=5000", items("b", 100))
        make(r, "wide", "variant=standard capacity=9000", items("w", 100))
        r.execute_command("BK.CREATE", "otherkey", "variant=standard", "capacity=5000")
        make(r, "cuckoo", "variant=cuckoo capacity=5000", items("c", 10))
        r.bf().add("rb", "x")
        r.set("str", "v")
        before = dump(r, "a")
        for srcs, text in ((["b", "wide"], "'wide'"), (["otherkey"], "'otherkey'"),
                           (["b", "missing"], "source 'missing' not found"),
                           (["rb"], "RedisBloom's type"), (["str"], "WRONGTYPE")):
            self.assertError(text, r.execute_command, "BK.MERGE", "a", *srcs)
            self.assertEqual(dump(r, "a"), before, srcs)  # all or nothing
        self.assertError("'cuckoo'", r.execute_command, "BK.MERGE", "c2", "cuckoo", "cuckoo")
        self.assertFalse(r.exists("c2"))
        self.assertError("RedisBloom's type", r.execute_command, "BK.MERGE", "rb", "a")
        self.assertError("wrong number", r.execute_command, "BK.MERGE", "a")

    def test_replicated_as_its_effect(self):
        rm, rr = self.replicated(args=["--appendonly", "yes"])
        cfg = "variant=window window=1h capacity=5000"
        make(rm, "a", cfg, items("a", 2000))
        make(rm, "b", cfg, items("b", 2000))
        make(rm, "d", cfg, items("d", 2000))
        rm.execute_command("BK.MERGE", "d", "a", "b")
        self.assertGreaterEqual(rm.execute_command("WAIT", 1, 5000), 1)
        self.assertEqual(dump(rr, "d"), dump(rm, "d"))
        aof = b""  # the effect, not the command: DEL, then d's image in pieces
        for root, _, files in os.walk(self.servers[0].dir):
            for f in files:
                if ".aof" in f:
                    with open(os.path.join(root, f), "rb") as fh:
                        aof += fh.read()
        self.assertNotIn(b"BK.MERGE", aof.upper())
        self.assertIn(b"BF.LOADCHUNK", aof.upper())
        self.servers[0].restart()  # from the AOF
        self.assertEqual(dump(self.servers[0].client(), "d"), dump(rr, "d"))

    def test_crossslot_in_a_cluster(self):
        n = self.server("node", port=cluster_port(),
                        args=["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"])
        r = n.client()
        r.set_response_callback("COMMAND", lambda reply, **kw: reply)  # the raw reply
        r.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
        deadline = time.time() + 30  # a wait for a condition, bounded
        while b"cluster_state:ok" not in r.execute_command("CLUSTER", "INFO"):
            self.assertLess(time.time(), deadline, "the node never reached state ok")
            time.sleep(0.05)
        make(r, "{t}a", "variant=standard capacity=100", [b"x"])
        make(r, "{u}b", "variant=standard capacity=100", [b"y"])
        self.assertError("CROSSSLOT", r.execute_command, "BK.MERGE", "{t}d", "{t}a", "{u}b")
        make(r, "{t}b", "variant=standard capacity=100", [b"y"])
        self.assertEqual(r.execute_command("BK.MERGE", "{t}d", "{t}a", "{t}b"), b"OK")
        self.assertEqual(r.execute_command("COMMAND", "GETKEYS", "BK.MERGE", "d", "a", "b"),
                         [b"d", b"a", b"b"])


if __name__ == "__main__":
    unittest.main()
