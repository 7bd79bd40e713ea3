"""A RedisBloom operator's paths, each with nothing lost (issue 57): every
state the commands can reach survives RDB save and load, DUMP/RESTORE, an
AOF rewrite and restart, and a replica's full sync, with the same DUMP and
DEBUG DIGEST-VALUE; keys replayed from an AOF RedisBloom wrote, or from a
master's stream, end as their origin left them. Run by `make check-module`."""
import json
import os
import random
import shutil
import subprocess
import sys
import time
import unittest

import redis

sys.path.insert(0, os.path.dirname(__file__))
from test_module import VARIANTS, ModuleTest, items  # noqa: E402
from test_redisbloom import cf_payload  # noqa: E402

DEBUG = ["--enable-debug-command", "local", "--rdbcompression", "no"]
AOF = os.path.join(os.path.dirname(__file__), "../data/redisbloom/aof")


def recorded():
    with open(os.path.join(AOF, "answers-aof.json"), encoding="utf-8") as f:
        return json.load(f)["keys"]


def aof_commands(path):
    """The commands of an AOF file (RESP arrays of bulk strings), in order."""
    with open(path, "rb") as f:
        data = f.read()
    out, at = [], 0
    while at < len(data):
        assert data[at:at + 1] == b"*", at
        end = data.index(b"\r\n", at)
        n, at = int(data[at + 1:end]), end + 2
        args = []
        for _ in range(n):
            end = data.index(b"\r\n", at)
            size = int(data[at + 1:end])
            args.append(data[end + 2:end + 2 + size])
            at = end + 2 + size + 2
        out.append(args)
    return out


def grow_to_the_limit(r, create, add, batch=5000):
    """Run `create`, then `add` of `batch` new items at a time until a reply
    says an item was refused; returns the items added before it."""
    r.execute_command(*create)
    n = 0
    while n < 2000000:
        items = ["grow:%d" % i for i in range(n, n + batch)]
        got = r.execute_command(*add, *items)
        refused = [i for i, v in enumerate(got) if isinstance(v, Exception) or v == -1]
        if refused:
            return n + refused[0]
        n += batch
    raise AssertionError("%s grew past 2,000,000 items without a limit" % (create,))


def wait_rewrite(test, r):
    """Wait for r's AOF rewrite to end, and check that it succeeded."""
    deadline = time.time() + 60
    while True:
        p = r.info("persistence")
        if not p.get("aof_rewrite_in_progress") and not p.get("aof_rewrite_scheduled"):
            break
        test.assertLess(time.time(), deadline, "the AOF rewrite did not end")
        time.sleep(0.05)
    test.assertEqual(p.get("aof_last_bgrewrite_status"), "ok")


class EveryPathTest(ModuleTest):
    def state(self, r):
        """Each key's DUMP and DEBUG DIGEST-VALUE."""
        return {k.decode(): (r.dump(k), r.execute_command("DEBUG", "DIGEST-VALUE", k))
                for k in sorted(r.keys("*"))}

    def assert_every_path(self, s, note):
        """s's dataset comes back whole by every path an operator takes."""
        r = s.client()
        want = self.state(r)
        self.assertTrue(want, note)
        # DUMP / RESTORE
        for k, (image, _) in want.items():
            r.restore(k + ":copy", 0, image)
            self.assertEqual(r.dump(k + ":copy"), image, note)
            r.delete(k + ":copy")
        # the RDB: SAVE and a restart, and DEBUG RELOAD
        self.assertTrue(r.save())
        self.assertNotIn("could not save", s.log(), note)
        s.restart()
        r = s.client()
        self.assertEqual(self.state(r), want, note + ": RDB")
        self.assertEqual(r.execute_command("DEBUG", "RELOAD"), b"OK")
        self.assertEqual(self.state(r), want, note + ": DEBUG RELOAD")
        # a replica's full sync
        rep = self.server("replica-" + note, args=DEBUG)
        rr = rep.client()
        rr.replicaof("127.0.0.1", s.port)
        deadline = time.time() + 60
        while rr.info("replication").get("master_link_status") != "up" or rr.dbsize() != len(want):
            self.assertLess(time.time(), deadline, "the replica did not sync")
            time.sleep(0.05)
        self.assertEqual(self.state(rr), want, note + ": replica")
        rep.stop()
        # an AOF rewritten as commands (no RDB preamble), then a restart from it
        r.config_set("aof-use-rdb-preamble", "no")
        r.config_set("appendonly", "yes")
        wait_rewrite(self, r)
        s.restart(["--appendonly", "yes", "--aof-use-rdb-preamble", "no"])
        got = self.state(s.client())
        self.assertEqual(sorted(got), sorted(want), note + ": AOF")
        for k in want:
            self.assertEqual(got[k][1], want[k][1], "%s: AOF: %s digest" % (note, k))
            self.assertEqual(got[k][0], want[k][0], "%s: AOF: %s dump" % (note, k))

    def test_a_grown_key_saves_and_loads_by_every_path(self):
        """Keys grown until the module refuses an item: a bloomkit cuckoo
        filter and chain (BK.*) and a keyed CF.* key under CF_MAX_EXPANSIONS
        300 stop at the 256 sub-filters a bloomkit value holds, saying so;
        before, they grew to 294 and the RDB written could not be loaded."""
        s = self.server(args=DEBUG, module_args=["CF_MAX_EXPANSIONS", "300"])
        r = s.client()
        n = grow_to_the_limit(r, ["BK.CREATE", "cuckoo", "variant=rbcuckoo", "capacity=4",
                                  "expansion=1"], ["BK.ADD", "cuckoo"])
        self.assertGreater(n, 200000)
        refused = [e for e in r.execute_command("BK.ADD", "cuckoo", *("more:%d" % i for i in range(1000)))
                   if isinstance(e, Exception)]
        self.assertIn("the most a bloomkit file or key holds", str(refused[0]))
        grow_to_the_limit(r, ["BK.CREATE", "chain", "variant=rbchain", "capacity=1",
                              "expansion=1", "fpr=0.1"], ["BK.ADD", "chain"], batch=50)
        grow_to_the_limit(r, ["CF.RESERVE", "cf", "4", "EXPANSION", "1"],
                          ["CF.INSERT", "cf", "ITEMS"])
        info = r.execute_command("CF.INFO", "cf")
        self.assertEqual(dict(zip(info[0::2], info[1::2]))[b"Number of filters"], 256)
        self.assertErrorIs("Filter is full", r.execute_command, "CF.ADD", "cf", "one-more")
        self.assert_every_path(s, "grown")

    def test_random_states_of_every_variant_and_key_type_survive_every_path(self):
        """The property: random writes (adds, removals where the variant has
        them, CF.DEL and CF.COMPACT on cuckoo keys) over a key of every
        variant (BK.*), the keys BF.* and CF.* make under the default
        NEW_KEYS and RedisBloom's own types (BF.*/CF.* under NEW_KEYS
        redisbloom, then loaded by a server with the default): every path
        gives back every key with the same DUMP and digest. BK_SEED replays."""
        seed = int(os.environ.get("BK_SEED", str(int(time.time() * 1000))))
        rng = random.Random(seed)
        note = "BK_SEED=%d" % seed
        s = self.server(args=DEBUG, module_args=["NEW_KEYS", "redisbloom"])
        r = s.client()
        r.bf().add("rb-bf", "a")
        r.execute_command("BF.RESERVE", "rb-bf-ns", 0.001, 300, "NONSCALING")
        r.execute_command("CF.RESERVE", "rb-cf", 100, "BUCKETSIZE", 1, "EXPANSION", 2)
        self.assertTrue(r.save())
        s.restart()  # the default NEW_KEYS: RedisBloom's keys stay RedisBloom's
        s.module_args = []
        s.restart()
        r = s.client()
        self.assertEqual(r.type("rb-cf"), b"MBbloomCF")
        for name, text in VARIANTS.items():
            r.execute_command("BK.CREATE", name, *text.split())
        r.bf().add("bf", "a")
        r.cf().add("cf", "a")
        names = list(VARIANTS) + ["bf", "cf", "rb-bf", "rb-bf-ns", "rb-cf"]
        for step in range(60):
            name = rng.choice(names)
            ks = items("%s-%d" % (name, step), rng.randrange(1, 300))
            kind = r.type(name)
            cuckoo = name in ("cf", "rb-cf", "rbcuckoo")
            op = rng.randrange(4)
            if cuckoo and op == 1:
                r.execute_command("CF.INSERT", name, "ITEMS", *ks)
                for k in ks[::3]:
                    r.execute_command("CF.DEL", name, k)
            elif cuckoo and op == 2:
                r.execute_command("CF.COMPACT", name)
            elif name in VARIANTS:
                r.execute_command("BK.ADD", name, *ks)
                if op == 3 and name in ("counting", "cuckoo"):
                    r.execute_command("BK.REMOVE", name, *ks[::2])
            elif kind == b"MBbloomCF" or name == "cf":
                r.execute_command("CF.INSERT", name, "ITEMS", *ks)
            else:
                r.execute_command("BF.INSERT", name, "ITEMS", *ks)
        self.assert_every_path(s, note)

    def test_restore_takes_only_what_the_rewrite_carries(self):
        """Point 4: cuckoo values whose shape CF.LOADCHUNK's header refuses
        (what an AOF rewrite is replayed through) are refused by RESTORE
        too; before, they restored and were lost at the next restart."""
        s = self.server(args=DEBUG)
        r = s.client()

        def value(buckets, bucket_size=2, iters=20, expansion=1, counts=None):
            counts = counts or [buckets]
            fields = [("u", len(counts)), ("u", buckets), ("u", 0), ("u", 0),
                      ("u", bucket_size), ("u", iters), ("u", expansion)]
            for n in counts:
                fields += [("u", n), ("s", b"\x00" * (n * bucket_size))]
            return cf_payload(fields)

        refused = {
            "buckets not a power of two": value(6),
            "expansion 0 with 3 sub-filters": value(4, expansion=0, counts=[4, 4, 4]),
            "max_iterations 0": value(4, iters=0),
            "bucket size 300": value(4, bucket_size=300),
            "a sub-filter larger than its header says": value(4, counts=[1024]),
        }
        for why, payload in refused.items():
            self.assertErrorIs("ERR Bad data format", r.restore, "k", 0, payload)
            self.assertEqual(r.exists("k"), 0, why)
        self.assertTrue(r.restore("ok", 0, value(4, expansion=2, counts=[4, 8])))
        r.execute_command("CF.ADD", "ok", "a")
        self.assert_every_path(s, "restored")


class ReplayTest(ModuleTest):
    """Point 2: a replayed write leaves the key as its origin left it."""

    def answers(self, r, key, kind):
        m = "BF.MEXISTS" if kind == "bf" else "CF.MEXISTS"
        items = ["%s:%d" % (key, i) for i in range(600)]
        probes = ["probe:%d" % i for i in range(20000)]
        got_probes = []
        for i in range(0, len(probes), 1000):
            got_probes += r.execute_command(m, key, *probes[i:i + 1000])
        info = r.execute_command("BF.INFO" if kind == "bf" else "CF.INFO", key)
        return {"type": r.type(key).decode(), "items": r.execute_command(m, key, *items),
                "probes": got_probes, "info": [v.decode() if isinstance(v, bytes) else v
                                               for v in info]}

    def assert_as_recorded(self, r, note):
        for key, want in recorded().items():
            got = self.answers(r, key, want["kind"])
            self.assertEqual(got["type"], want["type"], "%s: %s" % (note, key))
            self.assertEqual(got["items"], want["items"], "%s: %s items" % (note, key))
            self.assertEqual(got["probes"], want["probes"], "%s: %s probes" % (note, key))
            self.assertEqual(got["info"], want["info"], "%s: %s info" % (note, key))

    def test_an_aof_redisbloom_wrote_replays_as_redisbloom_answered(self):
        """RedisBloom's AOF (an RDB base, a tail of its own commands with
        EXPANSION 1 and 24, error rates 0.5 to 0.95, NONSCALING, bucket size
        1, expansion 0) loaded by a server with the default NEW_KEYS: every
        key RedisBloom's type, every item, false positive and INFO field as
        RedisBloom answered (before, the tail's keys were refused or made
        bloomkit's, answering 0 for items RedisBloom held)."""
        d = os.path.join(self.tmp, "aof")
        os.makedirs(d)
        shutil.copytree(os.path.join(AOF, "appendonlydir"), os.path.join(d, "appendonlydir"))
        for f in os.listdir(os.path.join(d, "appendonlydir")):
            os.chmod(os.path.join(d, "appendonlydir", f), 0o644)
        s = self.server("aof", args=["--appendonly", "yes"])
        # the one error of the replay is RedisBloom's own, per item: the adds
        # past the NONSCALING key's capacity (RedisBloom logs the same)
        critical = [line for line in s.log().splitlines() if "CRITICAL" in line]
        self.assertEqual([c for c in critical if "non scaling filter is full" not in c], [])
        self.assert_as_recorded(s.client(), "AOF replay")
        # and again after this server rewrites the AOF and restarts from it
        r = s.client()
        r.execute_command("BGREWRITEAOF")
        wait_rewrite(self, r)
        s.restart()
        self.assert_as_recorded(s.client(), "AOF rewritten")

    def test_a_redisbloom_stream_makes_redisbloom_keys_on_a_bloomkit_replica(self):
        """A rolling upgrade: a master making RedisBloom's keys (NEW_KEYS
        redisbloom, as RedisBloom itself does) sends the commands of
        RedisBloom's AOF tail; the replica, with the default NEW_KEYS, makes
        every key as the master did and answers every item and probe as the
        master does, and as RedisBloom did."""
        m = self.server("master", module_args=["NEW_KEYS", "redisbloom"])
        rep = self.server("replica")
        rr = rep.client()
        rr.replicaof("127.0.0.1", m.port)
        self.wait_link(rr)
        rm = m.client()
        tail = aof_commands(os.path.join(AOF, "appendonlydir", "appendonly.aof.2.incr.aof"))
        pipe = rm.pipeline(transaction=False)
        for cmd in tail:
            if cmd[0].upper() != b"SELECT":
                pipe.execute_command(*cmd)
        pipe.execute(raise_on_error=False)
        self.assertGreaterEqual(rm.execute_command("WAIT", 1, 10000), 1)
        for key, want in recorded().items():
            if not rm.exists(key):  # old_bf, old_cf: in the AOF's base, not its tail
                continue
            on_master = self.answers(rm, key, want["kind"])
            self.assertEqual(self.answers(rr, key, want["kind"]), on_master, key)
            if key not in ("old_bf", "old_cf"):
                self.assertEqual(on_master["items"], want["items"], key)
                self.assertEqual(on_master["probes"], want["probes"], key)
                self.assertEqual(on_master["type"], want["type"], key)

    def test_a_replica_under_other_arguments_makes_the_masters_chain(self):
        """A RedisBloom chain that BF.ADD makes with the master's ERROR_RATE
        and INITIAL_SIZE reaches a replica, and an AOF replayed under other
        module arguments, as the BF.RESERVE of what the master decided."""
        m = self.server("master", args=["--appendonly", "yes"],
                        module_args=["NEW_KEYS", "redisbloom", "ERROR_RATE", "0.05",
                                     "INITIAL_SIZE", "7", "EXPANSION", "4"])
        rep = self.server("replica")  # the defaults: 0.01, 100, 2
        rr = rep.client()
        rr.replicaof("127.0.0.1", m.port)
        self.wait_link(rr)
        rm = m.client()
        rm.execute_command("BF.MADD", "made", *["m:%d" % i for i in range(50)])
        rm.execute_command("BF.INSERT", "ins", "ITEMS", "a", "b")
        self.assertGreaterEqual(rm.execute_command("WAIT", 1, 10000), 1)
        for key in ("made", "ins"):
            self.assertEqual(rr.execute_command("BF.INFO", key), rm.execute_command("BF.INFO", key))
            self.assertEqual(rr.dump(key), rm.dump(key), key)
        want = {k: rm.dump(k) for k in ("made", "ins")}
        m.module_args = []  # replayed under the defaults
        m.restart()
        self.assertEqual({k: m.client().dump(k) for k in want}, want)

    def wait_link(self, rr):
        deadline = time.time() + 60
        while rr.info("replication").get("master_link_status") != "up":
            self.assertLess(time.time(), deadline, "the replica did not sync")
            time.sleep(0.05)

    def test_a_client_call_redisbloom_takes_is_never_refused(self):
        """Under the default NEW_KEYS, arguments a bloomkit key does not take
        (EXPANSION 1 or over 16, error rates over 0.5, bucket size 1) make
        RedisBloom's type, as RedisBloom would have made; the others stay
        bloomkit's keys."""
        r = self.server().client()
        made = {
            "e1": ("BF.RESERVE", "e1", "0.01", "100", "EXPANSION", "1"),
            "e20": ("BF.RESERVE", "e20", "0.01", "100", "EXPANSION", "20"),
            "r06": ("BF.RESERVE", "r06", "0.6", "100"),
            "i09": ("BF.INSERT", "i09", "ERROR", "0.9", "ITEMS", "a"),
        }
        for key, cmd in made.items():
            r.execute_command(*cmd)
            self.assertEqual(r.type(key), b"MBbloom--", key)
            add = "BF.ADD"
            self.assertEqual(r.execute_command(add, key, "x"), 1, key)
            self.assertEqual(r.execute_command(add.replace("ADD", "EXISTS"), key, "x"), 1, key)
        # the cuckoo shapes RedisBloom's AOF tail made: taken (by a keyed filter)
        r.execute_command("CF.RESERVE", "cb1", "100", "BUCKETSIZE", "1", "MAXITERATIONS", "3",
                          "EXPANSION", "2")
        r.execute_command("CF.RESERVE", "ce0", "2000", "BUCKETSIZE", "3", "EXPANSION", "0")
        for key in ("cb1", "ce0"):
            self.assertEqual(r.execute_command("CF.ADD", key, "x"), 1, key)
            self.assertEqual(r.execute_command("CF.EXISTS", key, "x"), 1, key)
        r.execute_command("BF.RESERVE", "plain", "0.01", "100", "EXPANSION", "4")
        r.execute_command("CF.RESERVE", "cplain", "100")
        self.assertEqual(r.type("plain"), r.type("cplain"))
        self.assertNotEqual(r.type("plain"), b"MBbloom--")


def swap_blocks():
    """The sh blocks of docs/redis.md's "The swap, step by step", in order."""
    path = os.path.join(os.path.dirname(__file__), "../../docs/redis.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("#### The swap, step by step"):text.index("**Going back.**")]
    return [b.split("\n", 1)[1] for b in section.split("```")[1::2] if b.startswith("sh\n")]


class OperatorDocTest(ModuleTest):
    """Point 6: every command of docs/redis.md's swap section, as written.
    `redis-cli` and `redis-server` are shims on PATH that point the
    commands at this test's servers: port 6379 is the server being moved,
    6380 the other one; `redis-server /etc/redis/redis.conf` starts the
    moved server again with bloomkit's module (and MODULE_NAME bf). The
    server being moved stands in for RedisBloom by making RedisBloom's
    types (NEW_KEYS redisbloom); a string stands in for a Count-Min key."""

    def shims(self, main, other, restart_args):
        d = os.path.join(self.tmp, "bin")
        os.makedirs(d, exist_ok=True)
        cli = os.path.join(d, "redis-cli")
        with open(cli, "w") as f:
            f.write("#!%s\nimport os, sys\nm = {'6379': '%d', '6380': '%d'}\n"
                    "a = [m.get(x, x) for x in sys.argv[1:]]\n"
                    "a = a if '-p' in a else ['-p', '%d'] + a\n"
                    "os.execv(%r, ['redis-cli'] + a)\n"
                    % (sys.executable, main.port, other.port, main.port,
                       shutil.which("redis-cli") or "/usr/bin/redis-cli"))
        srv = os.path.join(d, "redis-server")
        with open(srv, "w") as f:
            f.write("#!%s\nimport json, sys\nopen(%r, 'w').write(json.dumps(sys.argv[1:]))\n"
                    % (sys.executable, os.path.join(self.tmp, "restart")))
        for p in (cli, srv):
            os.chmod(p, 0o755)
        env = dict(os.environ, PATH=d + os.pathsep + os.environ["PATH"])
        self.restart_args = restart_args
        return env

    def sh(self, script, env, main=None):
        out = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True,
                             timeout=120)
        if main is not None and os.path.exists(os.path.join(self.tmp, "restart")):
            os.remove(os.path.join(self.tmp, "restart"))
            main.module_args = self.restart_args
            main.start()  # what `redis-server /etc/redis/redis.conf` asked for
        return out.stdout + out.stderr

    def wait(self, what, fn):
        deadline = time.time() + 60
        while not fn():
            self.assertLess(time.time(), deadline, what)
            time.sleep(0.05)

    def test_every_command_of_the_swap_section(self):
        blocks = swap_blocks()
        self.assertEqual(len(blocks), 5, "the section's sh blocks")
        main = self.server("main", args=["--appendonly", "yes"],
                           module_args=["NEW_KEYS", "redisbloom"])
        other = self.server("other")
        env = self.shims(main, other, ["MODULE_NAME", "bf"])
        r = main.client()
        r.execute_command("BF.ADD", "seen", "https://example.com/")
        r.execute_command("CF.RESERVE", "empty", 1024)
        main.client(db=3).set("sketch", "a Count-Min sketch's stand-in")
        # 1. every database's types
        listed = self.sh(blocks[0], env)
        for want in ("db0 MBbloom--", "db0 MBbloomCF", "db3 string"):
            self.assertIn(want, listed)
        # the other module types go, and the AOF is rewritten
        for line in blocks[1].splitlines():
            self.sh(line, env)
        wait_rewrite(self, r)
        self.assertEqual(main.client(db=3).exists("sketch"), 0)
        # 2. the swap: stop, start with bloomkit's module, MODULE LIST
        lines = blocks[2].splitlines()
        self.sh(lines[0], env)  # SHUTDOWN SAVE
        main.proc.wait(timeout=60)
        self.sh(lines[1], env, main)  # redis-server /etc/redis/redis.conf
        listed = self.sh(lines[2], env)
        self.assertIn("bf", listed.split())
        self.assertIn("20628", listed.split())
        r = main.client()
        self.assertEqual(r.type("seen"), b"MBbloom--")
        self.assertEqual(r.execute_command("BF.EXISTS", "seen", "https://example.com/"), 1)
        # 3. a rolling upgrade: the other server follows, then takes over
        lines = blocks[3].splitlines()
        self.sh(lines[0], env)  # REPLICAOF
        rr = other.client()
        self.wait("the replica's link", lambda: rr.info("replication").get(
            "master_link_status") == "up")
        self.assertIn("master_link_status:up", self.sh(lines[1], env))
        self.sh(lines[2], env)  # FAILOVER
        self.wait("the failover", lambda: rr.execute_command("ROLE")[0] == b"master")
        self.assertIn("master", self.sh(lines[3], env))
        self.assertEqual(rr.type("seen"), b"MBbloom--")
        # copying an empty cuckoo filter: its dump is [0, nil]; made again from CF.INFO
        fresh = self.server("fresh", module_args=["NEW_KEYS", "redisbloom"])
        env = self.shims(main, fresh, [])
        lines = blocks[4].splitlines()
        self.assertEqual(self.sh(lines[0], env).split(), ["0"])  # [0, nil]
        self.assertEqual(r.execute_command("CF.SCANDUMP", "empty", 0), [0, None])
        info = self.sh(lines[1], env)
        self.assertIn("Number of buckets", info)
        self.sh(lines[2], env)
        self.assertEqual(fresh.client().execute_command("CF.INFO", "empty"),
                         r.execute_command("CF.INFO", "empty"))


if __name__ == "__main__":
    unittest.main()
