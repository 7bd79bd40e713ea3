"""One logical filter split over the masters of a Redis Cluster (shards=S):
three masters with the module loaded, as the C suite's cluster of three, and
the command, the Python binding and racing processes on it. Run by `make
check-module`."""
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from server import cluster_port  # noqa: E402
from test_module import ModuleTest  # noqa: E402

CLI = os.environ.get("BLOOMKIT_CLI", "build/bloomkit")
CLUSTER = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
           "--cluster-node-timeout", "5000"]


def run_cli(*args, stdin=""):
    return subprocess.run([CLI, *args], input=stdin, capture_output=True, text=True, timeout=300)


class ShardTest(ModuleTest):
    def cluster(self):
        nodes = [self.server("n%d" % i, args=CLUSTER, port=cluster_port()) for i in range(3)]
        p = subprocess.run(["redis-cli", "--cluster", "create",
                            *("127.0.0.1:%d" % n.port for n in nodes),
                            "--cluster-replicas", "0", "--cluster-yes"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        deadline = time.time() + 60  # a wait for a condition, bounded
        while not all(b"cluster_state:ok" in n.client().execute_command("CLUSTER", "INFO")
                      for n in nodes):
            self.assertLess(time.time(), deadline, "the cluster never reached state ok")
            time.sleep(0.05)
        return nodes

    def module_keys(self, node):
        return sorted(k.decode() for k in node.client().scan_iter(_type="bloomkit0"))

    def test_shards_spread_over_every_master_and_lose_nothing(self):
        nodes = self.cluster()
        url = "redis://127.0.0.1:%d/crawl?shards=6" % nodes[0].port
        lines = ["https://shard.example/%d" % i for i in range(30000)]
        p = run_cli("dedup", "--redis", url, stdin="\n".join(lines + lines[:5000]) + "\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout.split()
        self.assertEqual(len(out), len(set(out)))
        self.assertGreater(len(out), 30000 - 10)  # fpr 1e-4: a handful at most
        per_node = [self.module_keys(n) for n in nodes]
        for keys in per_node:  # two of the six shards on each master
            self.assertEqual(len(keys), 2, per_node)
        self.assertEqual(sum(len(k) for k in per_node), 6)
        # no key lost: every line is in, through another node's URL, with
        # the shard count adopted from the descriptor
        other = "redis://127.0.0.1:%d/crawl" % nodes[2].port
        p = run_cli("check", "--redis", other, stdin="\n".join(lines) + "\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(p.stdout.split()), 30000)
        # each shard holds its share; together they hold every line once
        counts = []
        for n, keys in zip(nodes, per_node):
            for k in keys:
                counts.append(n.client().execute_command("BF.CARD", k))
        self.assertEqual(sum(counts), len(out))
        self.assertGreater(min(counts), 30000 / 6 * 0.8)  # routing by hash: near-equal shares
        p = run_cli("info", "--redis", other, "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('"keys":%d' % len(out), p.stdout)
        p = run_cli("dedup", "--redis", other + "?shards=4", stdin="x\n")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("made with shards=6", p.stderr)
        p = run_cli("pull", "--redis", other, os.path.join(self.tmp, "out.bkf"))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("split into shards", p.stderr)
        p = run_cli("drop", "--redis", other)
        self.assertEqual(p.returncode, 0, p.stderr)
        for n in nodes:
            self.assertEqual(n.client().dbsize(), 0)

    def test_racing_processes_see_each_key_new_once(self):
        nodes = self.cluster()
        # eight processes, each on its own node's URL, creating the name at once
        self.race(["redis://127.0.0.1:%d/race?shards=3" % nodes[i % 3].port for i in range(8)])
        for n in nodes:
            self.assertEqual(len(self.module_keys(n)), 1)

    def test_python_binding_on_shards(self):
        try:
            import bloomkit
        except ImportError:
            self.skipTest("the bloomkit Python binding is not on the path")
        nodes = self.cluster()
        url = "redis://127.0.0.1:%d/py?shards=3" % nodes[1].port
        f = bloomkit.BloomFilter.redis(url, "variant=counting capacity=30000")
        keys = [b"k%d" % i for i in range(3000)]
        self.assertEqual(sum(f.add_many(keys)), 3000)
        self.assertTrue(all(k in f for k in keys))
        f.remove(b"k7")
        self.assertNotIn(b"k7", f)
        self.assertEqual(f.stats()["keys"], 2999)
        with self.assertRaises(Exception):  # another config than the descriptor's
            bloomkit.BloomFilter.redis(url, "variant=standard")

    def test_a_lost_shard_is_reported_never_made_again(self):
        """Only the opener that made the descriptor makes shards: a shard
        lost later (DEL, eviction, a flush of one master) makes every other
        opener, read-only ones first, fail naming it (exit 3) and write
        nothing; a descriptor altered to claim more shards makes no key; a
        descriptor whose maker never finished is refused; drop still removes
        what is left."""
        s = self.server()
        r = s.client()
        url = "redis://127.0.0.1:%d/sf" % s.port
        keys = "".join("k%d\n" % i for i in range(2000))
        p = run_cli("create", "--redis", url + "?shards=4", "--config",
                    "variant=standard capacity=10000")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(run_cli("add", "--redis", url, stdin=keys).returncode, 0)
        self.assertTrue(r.get("sf").endswith(b"ready=1\n"))
        shards = sorted(k.decode() for k in r.scan_iter(_type="bloomkit0"))
        self.assertEqual(len(shards), 4)
        self.assertEqual(len(run_cli("check", "--redis", url, stdin=keys).stdout.split()), 2000)
        r.delete(shards[1])
        for cmd in (["check", "--redis", url], ["info", "--redis", url],
                    ["add", "--redis", url], ["dedup", "--redis", url]):
            p = run_cli(*cmd, stdin=keys)
            self.assertEqual(p.returncode, 3, (cmd, p.stdout, p.stderr))
            self.assertIn("shard %s" % shards[1], p.stderr, cmd)
            self.assertIn("missing", p.stderr, cmd)
            self.assertEqual(p.stdout, "", cmd)
            self.assertEqual(r.exists(shards[1]), 0, cmd)  # not made again, empty
        try:
            import bloomkit
            with self.assertRaises(Exception) as cm:
                bloomkit.BloomFilter.redis(url)
            self.assertIn(shards[1], str(cm.exception))
        except ImportError:
            pass
        # a descriptor altered to claim 1024 shards makes no key
        text = r.get("sf")
        r.set("sf", text.replace(b"shards=4\n", b"shards=1024\n"))
        before = r.dbsize()
        p = run_cli("check", "--redis", url, stdin="k1\n")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(r.dbsize(), before)
        r.set("sf", text)
        # a descriptor whose maker stopped before it made every shard
        r.set("half", text.replace(b"ready=1\n", b""))
        p = run_cli("check", "--redis", url.replace("/sf", "/half"), stdin="k1\n")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("still being made", p.stderr)
        r.delete("half")
        # drop removes what is left
        p = run_cli("drop", "--redis", url)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(r.dbsize(), 0)

    def test_push_goes_into_the_module(self):
        s = self.server()
        src = os.path.join(self.tmp, "local.bkf")
        lines = "".join("k%d\n" % i for i in range(1000))
        self.assertEqual(run_cli("create", src, "--config", "variant=counting capacity=5000"
                                 ).returncode, 0)
        self.assertEqual(run_cli("add", src, stdin=lines).returncode, 0)
        url = "redis://127.0.0.1:%d/pushed" % s.port
        p = run_cli("push", src, "--redis", url)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = s.client()
        self.assertEqual(r.type("pushed"), b"bloomkit0")
        with open(src, "rb") as f:
            from test_module import dump
            self.assertEqual(dump(r, "pushed"), f.read())
        p = run_cli("push", src, "--redis", url)
        self.assertIn("push needs a new name", p.stderr)
        p = run_cli("push", src, "--redis", url.replace("pushed", "p2") + "?shards=2")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("cannot be split into shards", p.stderr)
        self.assertEqual(r.exists("p2"), 0)


if __name__ == "__main__":
    unittest.main()
