"""A RedisBloom user's data and clients against bloomkit's module: the RDB
RedisBloom 2.6.28 wrote loads and every answer it recorded comes back
(tests/data/redisbloom), its save reproduces RedisBloom's values
field for field, its SCANDUMP chunks load through LOADCHUNK both ways, the
keys survive AOF rewrite, restart and replication, CF.* answers as
RedisBloom does (redis-py's cf(), node-redis's cf), and damaged values are
refused with the server up. Run by `make check-module`."""
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
import unittest

import redis

sys.path.insert(0, os.path.dirname(__file__))
from test_module import ModuleTest, crc64_jones  # noqa: E402

DATA = os.environ.get("BK_REDISBLOOM_DATA",
                      os.path.join(os.path.dirname(__file__), "../data/redisbloom"))
BLOOMS = ["bf_default", "bf_nonscaling", "bf_exp4", "bf_big"]
CUCKOOS = ["cf_default", "cf_b4"]
CHECKED = {"bf_default": 5000, "bf_nonscaling": 8000, "bf_exp4": 20000, "bf_big": 20000,
           "cf_default": 1500, "cf_b4": 9000}


def fixture(name, mode="r"):
    with open(os.path.join(DATA, name), mode) as f:
        return f.read()


def chunks(name):
    """[(iterator, bytes)] of a fixture's SCANDUMP, header first."""
    out = []
    for line in fixture(name + ".chunks.txt").splitlines():
        parts = line.split()
        if line.startswith("#") or len(parts) != 3 or parts[0] == "0":
            continue
        out.append((int(parts[0]), fixture(parts[2], "rb")))
    return out


def recorded_fps(name):
    return [l for l in fixture(name + ".fp.txt").splitlines() if l and not l.startswith("#")]


def recorded_zeros(name):
    text = fixture(name + ".items.txt")
    return {l for l in text.split("answering 0:")[1].split() if l}


def info_of(name):
    out = {}
    for line in fixture(name + ".info.txt").splitlines():
        k, v = line.split(": ")
        out[k] = None if v == "None" else int(v)
    return out


def scan(r, key, cuckoo=None):
    """[(iterator, chunk)] of a key's SCANDUMP, header first."""
    cuckoo = r.type(key) == b"MBbloomCF" if cuckoo is None else cuckoo
    cmd = "CF.SCANDUMP" if cuckoo else "BF.SCANDUMP"
    it, got = 0, []
    while True:
        it, data = r.execute_command(cmd, key, it)
        if it == 0:
            return got
        got.append((it, data))


def mexists(r, cmd, key, items):
    out = []
    for i in range(0, len(items), 1000):
        out += r.execute_command(cmd, key, *items[i:i + 1000])
    return out


# ---- a minimal RDB reader: the module values of a file, field by field ----

def _length(b, i):
    t = b[i] >> 6
    if t == 0:
        return b[i] & 0x3F, i + 1, False
    if t == 1:
        return ((b[i] & 0x3F) << 8) | b[i + 1], i + 2, False
    if b[i] == 0x80:
        return struct.unpack(">I", b[i + 1:i + 5])[0], i + 5, False
    if b[i] == 0x81:
        return struct.unpack(">Q", b[i + 1:i + 9])[0], i + 9, False
    return b[i] & 0x3F, i + 1, True  # a special string encoding


def _string(b, i):
    n, i, special = _length(b, i)
    if not special:
        return b[i:i + n], i + n
    size = {0: 1, 1: 2, 2: 4}[n]  # int8/16/32 (LZF is off: rdbcompression no)
    v = int.from_bytes(b[i:i + size], "little", signed=True)
    return str(v).encode(), i + size


def _length_of(n):
    return bytes([n]) if n < 64 else b"\x81" + struct.pack(">Q", n)


def cf_payload(fields, module_id=0x3016e5a289821404):
    """A RESTORE payload of RedisBloom's cuckoo type (encoding 4) with these
    fields: ("u", unsigned), ("d", double), ("s", bytes)."""
    body = b"\x07\x81" + struct.pack(">Q", module_id)
    for kind, v in fields:
        if kind == "u":
            body += b"\x02" + _length_of(v)
        elif kind == "d":
            body += b"\x04" + struct.pack("<d", v)
        else:
            body += b"\x05" + _length_of(len(v)) + v
    body += b"\x00" + struct.pack("<H", 10)
    return body + struct.pack("<Q", crc64_jones(body))


def module_values(path):
    """{key: [(opcode, value), ...]} of every module value in an RDB file."""
    with open(path, "rb") as f:
        b = f.read()
    assert b[:5] == b"REDIS"
    i, out = 9, {}
    while b[i] != 0xFF:
        op = b[i]
        i += 1
        if op == 0xFA:  # aux field
            _, i = _string(b, i)
            _, i = _string(b, i)
        elif op == 0xFE:  # select db
            _, i, _ = _length(b, i)
        elif op == 0xFB:  # resize db
            _, i, _ = _length(b, i)
            _, i, _ = _length(b, i)
        elif op == 0xFC:  # expiry ms
            i += 8
        elif op == 0xF5:  # module aux: not written by these modules
            raise AssertionError("module aux data")
        else:
            assert op == 7, "value type %d" % op
            key, i = _string(b, i)
            module_id, i, _ = _length(b, i)
            fields = [("id", module_id)]
            while True:
                code, i, _ = _length(b, i)
                if code == 0:
                    break
                if code == 2:
                    v, i, _ = _length(b, i)
                elif code == 4:
                    v = b[i:i + 8]
                    i += 8
                elif code == 5:
                    v, i = _string(b, i)
                else:
                    raise AssertionError("field opcode %d" % code)
                fields.append((code, v))
            out[key.decode()] = fields
    return out


class RedisBloomTest(ModuleTest):
    def from_rdb(self, name="rb", **kw):
        """A server started over RedisBloom's RDB."""
        d = os.path.join(self.tmp, name)
        os.makedirs(d)
        shutil.copyfile(os.path.join(DATA, "redisbloom-2.6.28.rdb"), os.path.join(d, "dump.rdb"))
        return self.server(name, **kw)

    def replica_of(self, s, keys=None, **kw):
        """A client of a new server made a replica of s, once its link is up
        (and, when keys is given, it holds that many keys)."""
        rr = self.server("replica", **kw).client()
        rr.replicaof("127.0.0.1", s.port)
        deadline = time.time() + 30
        while rr.info("replication").get("master_link_status") != "up" or \
                (keys is not None and rr.dbsize() != keys):
            self.assertLess(time.time(), deadline, "replica did not sync")
            time.sleep(0.05)
        return rr

    def check_answers(self, r, key, name=None):
        name = name or key
        cmd = "BF.MEXISTS" if key.startswith("bf") or name.startswith("bf") else "CF.MEXISTS"
        items = ["item:%d" % i for i in range(CHECKED[name])]
        zeros = recorded_zeros(name)
        got = mexists(r, cmd, key, items)
        self.assertEqual([it for it, v in zip(items, got) if v == 0], sorted(zeros, key=items.index),
                         name)
        probes = ["probe:%d" % i for i in range(100000)]
        got = mexists(r, cmd, key, probes)
        self.assertEqual([p for p, v in zip(probes, got) if v], recorded_fps(name), name)

    def check_info(self, r, key, name=None):
        name = name or key
        raw = r.execute_command("BF.INFO" if name.startswith("bf") else "CF.INFO", key)
        got = dict(zip([k.decode() for k in raw[0::2]], raw[1::2]))
        self.assertEqual(got, info_of(name), name)

    def check_dump(self, r, key, name=None):
        name = name or key
        self.assertEqual(scan(r, key, name.startswith("cf")), chunks(name), name)

    def test_rdb_loads_and_answers_as_redisbloom(self):
        s = self.from_rdb()
        r = s.client()
        self.assertIn("keys loaded: 6", s.log())
        self.assertEqual(sorted(k.decode() for k in r.keys()), sorted(BLOOMS + CUCKOOS))
        self.assertEqual(r.type("bf_default"), b"MBbloom--")
        self.assertEqual(r.type("cf_b4"), b"MBbloomCF")
        for key in BLOOMS + CUCKOOS:
            self.check_answers(r, key)
            self.check_info(r, key)
            self.check_dump(r, key)
        for key in BLOOMS:
            self.assertEqual(r.execute_command("BF.CARD", key), info_of(key)["Number of items inserted"])
        for key in CUCKOOS:
            want = {}
            for line in fixture(key + ".count.txt").splitlines():
                if not line.startswith("#"):
                    item, n = line.split()
                    want[item] = int(n)
            got = {item: r.execute_command("CF.COUNT", key, item) for item in want}
            self.assertEqual(got, want, key)

    def test_save_writes_redisbloom_values(self):
        """SAVE writes every key as RedisBloom wrote it: the same module id
        (type name and encoding 4) and the same fields, byte for byte."""
        s = self.from_rdb(args=["--rdbcompression", "no"])
        r = s.client()
        r.save()
        ours = module_values(os.path.join(s.dir, "dump.rdb"))
        theirs = module_values(os.path.join(DATA, "redisbloom-2.6.28.rdb"))
        self.assertEqual(sorted(ours), sorted(theirs))
        for key in theirs:
            self.assertEqual(ours[key], theirs[key], key)
        self.assertEqual(theirs["bf_default"][0][1], 0x3016e5a289bef804)  # MBbloom-- v4
        self.assertEqual(theirs["cf_b4"][0][1], 0x3016e5a289821404)  # MBbloomCF v4

    def test_writes_continue_and_survive_aof_restart_and_replication(self):
        s = self.from_rdb()
        r = s.client()
        rr = self.replica_of(s, keys=6)
        new = ["new:%d" % i for i in range(3000)]
        r.execute_command("BF.MADD", "bf_default", *new)  # grows the chain
        r.execute_command("CF.INSERT", "cf_default", "ITEMS", *new)  # grows past a sub-filter
        for i in range(200):
            r.execute_command("CF.DEL", "cf_default", "new:%d" % i)
        r.execute_command("CF.COMPACT", "cf_b4")
        r.execute_command("BF.ADD", "bf_fresh", "x")  # a bloomkit key beside them
        states = {key: scan(r, key) for key in BLOOMS + CUCKOOS}
        self.assertEqual(len(states["bf_default"]), 1 + 7)  # a link more
        self.assertEqual(r.execute_command("WAIT", 1, 10000), 1)
        for key, want in states.items():
            self.assertEqual(scan(rr, key), want, "replica " + key)
        # AOF (no RDB preamble: the rewrite's own commands) then restart
        r.config_set("aof-use-rdb-preamble", "no")
        r.config_set("appendonly", "yes")
        deadline = time.time() + 30
        while r.info("persistence")["aof_rewrite_in_progress"] or \
                r.info("persistence")["aof_rewrite_scheduled"]:
            self.assertLess(time.time(), deadline)
            time.sleep(0.05)
        s.restart(["--appendonly", "yes", "--aof-use-rdb-preamble", "no"])
        r = s.client()
        for key, want in states.items():
            self.assertEqual(scan(r, key), want, "after AOF restart: " + key)
        self.assertEqual(r.type("bf_default"), b"MBbloom--")
        self.assertEqual(r.execute_command("BF.EXISTS", "bf_fresh", "x"), 1)

    def test_new_keys_redisbloom_makes_what_redisbloom_made(self):
        """Under NEW_KEYS redisbloom the fixtures' own commands (their README)
        give RedisBloom's filters byte for byte, and keys of its types."""
        s = self.server(module_args=["NEW_KEYS", "redisbloom"])
        r = s.client()

        def madd(cmd, key, items):
            for i in range(0, len(items), 1000):
                r.execute_command(cmd, key, *items[i:i + 1000])

        items = ["item:%d" % i for i in range(20000)]
        for i in range(5000):  # autocreated by BF.ADD, one at a time as the fixture was
            r.execute_command("BF.ADD", "bf_default", items[i])
        r.execute_command("BF.RESERVE", "bf_nonscaling", "0.001", "10000", "NONSCALING")
        madd("BF.MADD", "bf_nonscaling", items[:8000])
        r.execute_command("BF.RESERVE", "bf_exp4", "0.0001", "1000", "EXPANSION", "4")
        madd("BF.MADD", "bf_exp4", items)
        r.execute_command("CF.RESERVE", "cf_default", "1000")
        for i in range(1500):
            r.execute_command("CF.ADD", "cf_default", items[i])
        for i in range(100):
            r.execute_command("CF.DEL", "cf_default", items[i])
        r.execute_command("CF.RESERVE", "cf_b4", "10000", "BUCKETSIZE", "4", "MAXITERATIONS",
                          "50", "EXPANSION", "2")
        for i in range(9000):
            r.execute_command("CF.ADD", "cf_b4", items[i])
        for _ in range(3):
            r.execute_command("CF.ADD", "cf_b4", "item:5")
        for key in ("bf_default", "bf_nonscaling", "bf_exp4", "cf_default", "cf_b4"):
            self.assertEqual(r.type(key), b"MBbloomCF" if key.startswith("cf") else b"MBbloom--")
            self.check_dump(r, key)
            self.check_info(r, key)

    def test_limits_before_memory(self):
        """A key a command makes, or its growth, stays within MAX_BYTES (and
        what maxmemory leaves), refused before any memory is taken; data
        loaded from an RDB is never refused for its size."""
        s = self.from_rdb(module_args=["MAX_BYTES", "300k", "NEW_KEYS", "redisbloom"])
        r = s.client()
        self.assertEqual(r.execute_command("BF.CARD", "bf_big"), 300000)  # 1.3 MB, loaded
        for args in (("CF.RESERVE", "c", "10000000"), ("BF.RESERVE", "b", "0.01", "10000000"),
                     ("BF.LOADCHUNK", "l", 1, chunks("bf_big")[0][1])):
            with self.assertRaises(redis.ResponseError) as cm:
                r.execute_command(*args)
            self.assertIn("MAX_BYTES", str(cm.exception))
        self.assertEqual(r.exists("c", "b", "l"), 0)
        # growth: a chain whose next link would pass 300k is refused, unchanged
        r.execute_command("BF.RESERVE", "g", "0.01", "20000")
        out, links = [], 0
        for i in range(0, 400000, 1000):  # MADD ends its array with the error
            links = len(scan(r, "g"))
            out = r.execute_command("BF.MADD", "g", *["g%d" % j for j in range(i, i + 1000)])
            if isinstance(out[-1], redis.ResponseError):
                break
        self.assertIn("MAX_BYTES", str(out[-1]))
        self.assertEqual(len(scan(r, "g")), links)  # the link it needed was not made
        self.assertLessEqual(sum(len(c) for _, c in scan(r, "g")[1:]), 300 * 1024)
        self.assertRaisesRegex(redis.ResponseError, "MAX_BYTES", r.execute_command, "BF.ADD",
                               "g", "one more")
        self.assertEqual(r.ping(), True)

    def test_a_refusal_for_memory_reaches_replicas_as_what_was_done(self):
        """Items refused for memory on the master changed nothing there; the
        replica, which does not check memory, is not sent them, so both keep
        the same bytes."""
        s = self.server(module_args=["MAX_BYTES", "300k", "NEW_KEYS", "redisbloom"])
        r = s.client()
        rr = self.replica_of(s, module_args=["NEW_KEYS", "redisbloom"])
        r.execute_command("CF.RESERVE", "c", "100000", "EXPANSION", "2")
        r.execute_command("BF.RESERVE", "b", "0.01", "20000")
        refused = {"c": 0, "b": 0}
        for i in range(0, 300000, 1000):
            items = ["i%d" % j for j in range(i, i + 1000)]
            out = r.execute_command("CF.INSERT", "c", "ITEMS", *items)
            refused["c"] += out.count(-1)
            out = r.execute_command("BF.MADD", "b", *items)
            refused["b"] += isinstance(out[-1], redis.ResponseError)
        self.assertGreater(refused["c"], 0)
        self.assertGreater(refused["b"], 0)
        self.assertEqual(r.execute_command("WAIT", 1, 10000), 1)
        for key in ("c", "b"):
            self.assertEqual(scan(rr, key), scan(r, key), key)

    def test_pull_and_push_carry_redisbloom_keys(self):
        """bloomkit pull copies each RedisBloom key into a file (variants
        rbchain and rbcuckoo, hash=murmur), where it answers as RedisBloom
        answered; bloomkit push copies the file back as RedisBloom's type,
        the same bytes; the Python binding reaches the same files."""
        s = self.from_rdb()
        r = s.client()
        cli = os.environ.get("BLOOMKIT_CLI", "build/bloomkit")
        for name in BLOOMS + CUCKOOS:
            out = os.path.join(self.tmp, name + ".bkf")
            p = subprocess.run([cli, "pull", "--redis", "redis://127.0.0.1:%d/%s" % (s.port, name),
                                out], capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            p = subprocess.run([cli, "info", out], capture_output=True, text=True, timeout=60)
            self.assertIn("rbcuckoo" if name.startswith("cf") else "rbchain", p.stdout)
            self.assertIn("murmur", p.stdout)
            p = subprocess.run([cli, "push", out, "--redis",
                                "redis://127.0.0.1:%d/back:%s" % (s.port, name)],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(r.type("back:" + name), r.type(name))
            self.check_info(r, "back:" + name, name)
            self.check_dump(r, "back:" + name, name)
        self.check_answers(r, "back:bf_default", "bf_default")
        # the file answers as RedisBloom did, in Python too
        import bloomkit
        f = bloomkit.BloomFilter.load(os.path.join(self.tmp, "bf_default.bkf"))
        probes = [b"probe:%d" % i for i in range(100000)]
        self.assertEqual([p.decode() for p in probes if p in f], recorded_fps("bf_default"))

    def test_new_cf_keys_are_keyed(self):
        """By default a new CF.* key is bloomkit's keyed filter (variant
        rbcuckoo: RedisBloom's growth, its hash SipHash under a random key);
        its creation reaches a replica with that key, CF.SCANDUMP copies it
        (key and all) to another server, and NEW_KEYS redisbloom makes
        RedisBloom's own type instead."""
        s = self.server()
        r = s.client()
        rr = self.replica_of(s)
        items = ["k%d" % i for i in range(3000)]
        r.execute_command("CF.RESERVE", "c", "1000", "EXPANSION", "2")
        r.execute_command("CF.INSERT", "c", "ITEMS", *items)
        r.execute_command("CF.ADD", "auto", "x")
        for key in ("c", "auto"):
            self.assertEqual(r.type(key), b"bloomkit0")
            info = r.execute_command("BK.INFO", key)
            info = dict(zip(info[::2], info[1::2]))
            self.assertEqual(info[b"variant"], b"rbcuckoo")
            self.assertEqual(info[b"hash"], b"siphash24")
        self.assertGreaterEqual(r.cf().info("c").filterNum, 2)  # grew, by EXPANSION
        self.assertEqual(r.execute_command("WAIT", 1, 10000), 1)
        probes = ["p%d" % i for i in range(20000)]
        want = r.execute_command("CF.MEXISTS", "c", *probes)
        self.assertEqual(rr.execute_command("CF.MEXISTS", "c", *probes), want)
        self.assertEqual(scan(rr, "c"), scan(r, "c"))
        # copied by chunks: the same answers, keyed the same
        other = self.server("other").client()
        for it, data in scan(r, "c", cuckoo=True):
            self.assertEqual(other.execute_command("CF.LOADCHUNK", "c", it, data), b"OK")
        self.assertEqual(other.execute_command("CF.MEXISTS", "c", *probes), want)
        self.assertEqual(other.execute_command("CF.MEXISTS", "c", *items), [1] * len(items))
        self.assertEqual(other.execute_command("CF.COUNT", "c", "k1"),
                         r.execute_command("CF.COUNT", "c", "k1"))
        # RedisBloom's own, when asked
        rb = self.server("rb", module_args=["NEW_KEYS", "redisbloom"]).client()
        rb.execute_command("CF.ADD", "c", "x")
        self.assertEqual(rb.type("c"), b"MBbloomCF")

    def test_chunks_load_both_ways(self):
        s = self.server()
        r = s.client()
        for name in BLOOMS + CUCKOOS:
            cmd = "BF.LOADCHUNK" if name.startswith("bf") else "CF.LOADCHUNK"
            for it, data in chunks(name):
                self.assertEqual(r.execute_command(cmd, "copy:" + name, it, data), b"OK")
            self.check_info(r, "copy:" + name, name)
            self.check_dump(r, "copy:" + name, name)
        for name in ("bf_default", "cf_default"):
            self.check_answers(r, "copy:" + name, name)

    def test_bf_replies_and_errors_on_redisbloom_keys(self):
        s = self.from_rdb()
        r = s.client()
        self.assertEqual(r.execute_command("BF.INFO", "bf_nonscaling", "EXPANSION"), [None])
        self.assertEqual(r.execute_command("BF.INFO", "bf_default", "CAPACITY"), [6300])
        self.assertRaisesRegex(redis.ResponseError, "^Invalid information value$",
                               r.execute_command, "BF.INFO", "bf_default", "NOPE")
        self.assertRaisesRegex(redis.ResponseError, "^item exists$", r.execute_command,
                               "BF.RESERVE", "bf_default", "0.01", "100")
        # a non-scaling chain takes exactly its capacity, then says so at the end of MADD
        left = 10000 - 8000
        out = r.execute_command("BF.MADD", "bf_nonscaling",
                                *["more:%d" % i for i in range(left + 500)])
        self.assertIsInstance(out[-1], redis.ResponseError)
        self.assertEqual(str(out[-1]), "non scaling filter is full")
        self.assertEqual(r.execute_command("BF.CARD", "bf_nonscaling"), 10000)
        self.assertEqual(sum(1 for v in out[:-1] if v == 1), left)
        self.assertRaisesRegex(redis.ResponseError, "^non scaling filter is full$",
                               r.execute_command, "BF.ADD", "bf_nonscaling", "one more")
        debug = r.execute_command("BF.DEBUG", "bf_exp4")
        self.assertEqual(debug[0], b"size:19999")
        self.assertEqual(len(debug), 4)
        self.assertIn(b"hashwidth:64", debug[1])
        # BK.INFO says plainly that RedisBloom's hash has no key
        r.execute_command("BK.CREATE", "unkeyed", "variant=rbchain", "hash=murmur")
        for key, variant in (("bf_exp4", b"rbchain"), ("cf_b4", b"rbcuckoo"),
                             ("unkeyed", b"rbchain")):
            raw = r.execute_command("BK.INFO", key)
            info = dict(zip(raw[0::2], raw[1::2]))
            self.assertEqual(info[b"variant"], variant)
            self.assertEqual(info[b"hash"], b"murmur")
            self.assertTrue(info[b"hash_key"].startswith(b"none"))
        # reads of another type answer 0, as RedisBloom's do
        self.assertEqual(r.execute_command("BF.EXISTS", "cf_b4", "item:1"), 0)
        self.assertEqual(r.execute_command("CF.EXISTS", "bf_default", "item:1"), 0)
        self.assertEqual(r.execute_command("CF.COUNT", "bf_default", "item:1"), 0)
        self.assertRaisesRegex(redis.ResponseError, "^Not found$", r.execute_command, "CF.DEL",
                               "bf_default", "item:1")
        # a chunk where no link is
        self.assertRaisesRegex(redis.ResponseError, "^invalid offset - no link found$",
                               r.execute_command, "BF.LOADCHUNK", "bf_default", 10 ** 9, b"x")
        self.assertRaisesRegex(redis.ResponseError, "^received bad data$", r.execute_command,
                               "BF.LOADCHUNK", "newkey", 1, b"not a header")
        self.assertEqual(r.exists("newkey"), 0)

    def test_cf_commands_as_redisbloom(self):
        s = self.server()
        r = s.client()
        cf = r.cf()
        self.assertTrue(cf.create("c", 1000))
        self.assertRaisesRegex(redis.ResponseError, "item exists", cf.create, "c", 1000)
        self.assertEqual(cf.add("c", "a"), 1)
        self.assertEqual(cf.add("c", "a"), 1)  # a second copy
        self.assertEqual(cf.addnx("c", "a"), 0)
        self.assertEqual(cf.count("c", "a"), 2)
        self.assertEqual(cf.exists("c", "a"), 1)
        self.assertEqual(cf.mexists("c", "a", "zz"), [1, 0])
        self.assertEqual(cf.insert("c", ["b", "c"]), [1, 1])
        self.assertEqual(cf.insertnx("c", ["b", "d"]), [0, 1])
        self.assertEqual(cf.delete("c", "a"), 1)
        self.assertEqual(cf.count("c", "a"), 1)
        # a keyed filter (the default NEW_KEYS) is sized to hold its
        # capacity (1000 at 80% of two-slot buckets: 1024) and walks up to
        # 500 evictions; RedisBloom's own (NEW_KEYS redisbloom) as RedisBloom
        rb = self.server("rbkeys", module_args=["NEW_KEYS", "redisbloom"]).client()
        for conn, buckets, iters, auto in ((r, 1024, 500, 1024), (rb, 512, 20, 512)):
            if conn is rb:
                rb.cf().create("c", 1000)
                rb.cf().insert("c", ["a", "b", "c", "d", "e"])
                rb.cf().delete("c", "e")
            info = conn.cf().info("c")
            self.assertEqual((info.size, info.bucketNum, info.filterNum, info.insertedNum,
                              info.deletedNum, info.bucketSize, info.expansionRate,
                              info.maxIteration),
                             (40 + 16 + 2 * buckets, buckets, 1, 4, 1, 2, 1, iters))
            self.assertEqual(conn.execute_command("CF.DEBUG", "c"),
                             b"bktsize:2 buckets:%d items:4 deletes:1 filters:1 max_iterations:%d "
                             b"expansion:1" % (buckets, iters))
            # autocreation: capacity 1024
            self.assertEqual(conn.cf().add("auto", "x"), 1)
            self.assertEqual(conn.cf().info("auto").bucketNum, auto)
        self.assertRaisesRegex(redis.ResponseError, "^not found$", cf.insert, "nokey", ["x"],
                               nocreate=True)
        for args, err in (
                (("CF.RESERVE", "e", "x"), "Bad capacity"),
                (("CF.RESERVE", "e", "3"), r"Capacity must be at least \(BucketSize \* 2\)"),
                (("CF.RESERVE", "e", "100", "BUCKETSIZE", "300"),
                 "BUCKETSIZE: value must be an integer between 1 and 255, inclusive."),
                (("CF.RESERVE", "e", "100", "MAXITERATIONS", "x"), "Couldn't parse MAXITERATIONS"),
                (("CF.RESERVE", "e", "100", "EXPANSION", "40000"),
                 "EXPANSION: value must be an integer between 0 and 32768, inclusive."),
                (("CF.INSERT", "e", "CAPACITY", "2", "ITEMS", "a"),
                 r"Capacity must be at least \(BucketSize \* 2\)"),
                (("CF.INSERT", "e", "FOO", "ITEMS", "a"), "Unknown argument received"),
                (("CF.SCANDUMP", "c", "-1"), "Invalid position"),
                (("CF.LOADCHUNK", "e", "0", "x"), "Invalid position"),
                (("CF.LOADCHUNK", "e", "1", "short"), "Invalid header"),
                (("CF.LOADCHUNK", "e", "5", "x"), "not found"),
                (("CF.COMPACT", "e"), "Cuckoo filter was not found"),
                (("CF.INFO", "e"), "not found")):
            self.assertRaisesRegex(redis.ResponseError, "^%s$" % err, r.execute_command, *args)
        self.assertEqual(r.exists("e"), 0)  # no failed command made it
        self.assertRaises(redis.ResponseError, r.execute_command, "CF.RESERVE", "e", "100",
                          "EXPANSION")  # an option without its value: arity
        # expansion 0: full, and the reply says so
        self.assertTrue(cf.create("tiny", 4, expansion=0))
        out = cf.insert("tiny", ["t%d" % i for i in range(2000)])  # 512 buckets at least
        self.assertIn(-1, out)
        self.assertRaisesRegex(redis.ResponseError, "^Filter is full$", cf.add, "tiny",
                               "t%d" % out.index(-1))
        # the expansion guard
        s2 = self.server("guard", module_args=["CF_MAX_EXPANSIONS", "2"])
        r2 = s2.client()
        r2.execute_command("CF.RESERVE", "g", "4", "EXPANSION", "1")
        with self.assertRaisesRegex(redis.ResponseError, "^Maximum expansions reached$"):
            for i in range(5000):
                r2.execute_command("CF.ADD", "g", "g%d" % i)
        # an empty filter has no dump (RedisBloom's [0, nil])
        r.execute_command("CF.RESERVE", "empty", "100")
        self.assertEqual(r.execute_command("CF.SCANDUMP", "empty", 0), [0, None])
        # WRONGTYPE
        r.set("str", "1")
        self.assertRaisesRegex(redis.ResponseError, "WRONGTYPE", cf.add, "str", "x")

    def test_resp3_shapes(self):
        s = self.server()
        r = s.client()
        r.execute_command("CF.RESERVE", "c", "100")
        r.execute_command("BF.LOADCHUNK", "b", *chunks("bf_nonscaling")[0])
        for it, data in chunks("bf_nonscaling")[1:]:
            r.execute_command("BF.LOADCHUNK", "b", it, data)

        def resp3(*cmds):
            with socket.create_connection(("127.0.0.1", s.port)) as c:
                out = b""
                for cmd in (("HELLO", "3"),) + cmds:
                    out = b""
                    req = b"*%d\r\n" % len(cmd) + b"".join(
                        b"$%d\r\n%s\r\n" % (len(str(a)), str(a).encode()) for a in cmd)
                    c.sendall(req)
                    time.sleep(0.05)
                    c.settimeout(0.5)
                    try:
                        while True:
                            chunk = c.recv(65536)
                            if not chunk:
                                break
                            out += chunk
                    except socket.timeout:
                        pass
                return out

        self.assertEqual(resp3(("CF.ADD", "c", "a")), b"#t\r\n")
        self.assertEqual(resp3(("CF.EXISTS", "c", "zz")), b"#f\r\n")
        self.assertEqual(resp3(("CF.COUNT", "c", "a")), b":1\r\n")
        self.assertEqual(resp3(("CF.INSERTNX", "c", "ITEMS", "a")), b"*1\r\n:0\r\n")
        self.assertEqual(resp3(("CF.INSERT", "c", "ITEMS", "q")), b"*1\r\n#t\r\n")
        self.assertTrue(resp3(("CF.INFO", "c")).startswith(b"%8\r\n"))
        self.assertEqual(resp3(("BF.INFO", "b", "EXPANSION")), b"%1\r\n+Expansion rate\r\n_\r\n")
        self.assertEqual(resp3(("BF.EXISTS", "b", "item:1")), b"#t\r\n")
        self.assertEqual(resp3(("BF.ADD", "own", "x")), b"#t\r\n")  # a bloomkit filter too
        self.assertEqual(resp3(("BF.MADD", "own", "x", "y")), b"*2\r\n#f\r\n#t\r\n")
        # one field of a bloomkit filter's BF.INFO: a one-entry map too, as RedisBloom's
        self.assertEqual(resp3(("BF.INFO", "own", "EXPANSION")), b"%1\r\n+Expansion rate\r\n:2\r\n")
        self.assertEqual(resp3(("BF.INFO", "own", "ITEMS")),
                         b"%1\r\n+Number of items inserted\r\n:2\r\n")
        self.assertEqual(resp3(("CF.DEL", "c", "a")), b"#t\r\n")

    def test_a_crafted_cuckoo_value_cannot_hold_the_server(self):
        """65,535 one-bucket sub-filters, every slot taken (393 KB): RedisBloom's
        compaction tries every older sub-filter for each fingerprint, which
        held the server 25 s (RedisBloom's own: 42 s). One CF.COMPACT now
        does a bounded amount of work: SLOWLOG, set to 5 s, records nothing,
        and the filter answers as before."""
        s = self.server(args=["--slowlog-log-slower-than", "5000000"])
        r = s.client()
        n = 65535
        fields = [("u", n), ("u", 1), ("u", 2 * n), ("u", 0), ("u", 2), ("u", 20), ("u", 1)]
        for i in range(n):
            fields += [("u", 1), ("s", bytes([i % 255 + 1, (i * 7) % 255 + 1]))]
        self.assertTrue(r.restore("crafted", 0, cf_payload(fields)))
        before = r.execute_command("CF.SCANDUMP", "crafted", 0)
        r.slowlog_reset()
        self.assertEqual(r.execute_command("CF.COMPACT", "crafted"), b"OK")
        self.assertEqual([e for e in r.slowlog_get(10) if b"CF.COMPACT" in e["command"]], [])
        self.assertEqual(r.execute_command("CF.SCANDUMP", "crafted", 0), before)  # all full
        self.assertEqual(r.execute_command("CF.INFO", "crafted")[5], n)
        self.assertTrue(r.ping())

    def test_damaged_values_are_refused_with_the_server_up(self):
        s = self.server()
        r = s.client()

        def payload(module_id, fields):
            return cf_payload(fields, module_id)

        cf_v4 = 0x3016e5a289821404
        # a cuckoo value whose slots are not buckets x bucket size (RedisBloom dies on it)
        bad = payload(cf_v4, [("u", 1), ("u", 4), ("u", 0), ("u", 0), ("u", 2), ("u", 20),
                              ("u", 1), ("u", 4), ("s", b"\x00" * 7)])
        self.assertRaisesRegex(redis.ResponseError, "Bad data format", r.restore, "k", 0, bad)
        good = payload(cf_v4, [("u", 1), ("u", 4), ("u", 0), ("u", 0), ("u", 2), ("u", 20),
                               ("u", 1), ("u", 4), ("s", b"\x00" * 8)])
        self.assertTrue(r.restore("k", 0, good))
        self.assertEqual(r.execute_command("CF.INFO", "k")[3], 4)
        # encodings RedisBloom 2.6 never wrote are refused
        self.assertRaisesRegex(redis.ResponseError, "Bad data format", r.restore, "k5", 0,
                               payload(cf_v4 + 1, [("u", 1), ("u", 4), ("u", 0), ("u", 0),
                                                   ("u", 2), ("u", 20), ("u", 1), ("u", 4),
                                                   ("s", b"\x00" * 8)]))
        # an older cuckoo encoding (2): bucket size 2, 20 iterations, expansion 1
        v2 = payload(cf_v4 - 2, [("u", 1), ("u", 4), ("u", 0), ("s", b"\x00" * 8)])
        self.assertTrue(r.restore("old", 0, v2))
        self.assertEqual(r.execute_command("CF.DEBUG", "old"),
                         b"bktsize:2 buckets:4 items:0 deletes:0 filters:1 max_iterations:20 "
                         b"expansion:1")
        # a chain link whose bits are not 8 x its bytes, and one of encoding 0 that fits
        bf_v4 = 0x3016e5a289bef804
        link = [("u", 1000), ("d", 0.005), ("u", 8), ("d", 11.027753418256411)]
        bad = payload(bf_v4, [("u", 0), ("u", 1), ("u", 5), ("u", 2)] + link +
                      [("u", 11072), ("u", 0), ("s", b"\x00" * 1383), ("u", 0)])
        self.assertRaisesRegex(redis.ResponseError, "Bad data format", r.restore, "b", 0, bad)
        enc0 = payload(bf_v4 - 4, [("u", 0), ("u", 1), ("u", 1000), ("d", 0.5), ("u", 6),
                                   ("d", 8.0), ("s", b"\x00" * 1000), ("u", 0)])
        self.assertTrue(r.restore("b0", 0, enc0))
        self.assertEqual(r.execute_command("BF.DEBUG", "b0")[1],
                         b"bytes:1000 bits:8000 hashes:6 hashwidth:32 capacity:1000 size:0 "
                         b"ratio:0.5")
        # encodings 1 to 3 of a chain: no growth field (2), and before 2 no options
        # either (the 32-bit hash pair); a link of 1,000 items at 0.005
        links = link + [("u", 11072), ("u", 0), ("s", b"\x00" * 1384), ("u", 0)]
        for encver, head in ((1, [("u", 0), ("u", 1)]), (2, [("u", 0), ("u", 1), ("u", 5)]),
                             (3, [("u", 0), ("u", 1), ("u", 5)])):
            key = "enc%d" % encver
            self.assertTrue(r.restore(key, 0, payload(bf_v4 - 4 + encver, head + links)))
            self.assertEqual(r.execute_command("BF.INFO", key)[-1], 2)
            width = b"hashwidth:32" if encver == 1 else b"hashwidth:64"
            self.assertIn(width, r.execute_command("BF.DEBUG", key)[1])
            self.assertEqual(r.execute_command("BF.ADD", key, "x"), 1)
            self.assertEqual(r.execute_command("BF.EXISTS", key, "x"), 1)
            # DUMP writes RedisBloom's current encoding, 4, which loads back the same
            again = r.dump(key)
            self.assertEqual(struct.unpack(">Q", again[2:10])[0] & 1023, 4)
            self.assertTrue(r.restore(key + "b", 0, again))
            self.assertEqual(r.execute_command("BF.SCANDUMP", key + "b", 1),
                             r.execute_command("BF.SCANDUMP", key, 1))
        # COPY, RENAME and MEMORY USAGE treat them as any key
        self.assertEqual(r.copy("enc2", "enc2c"), True)
        r.rename("enc2c", "enc2r")
        self.assertEqual(r.execute_command("BF.EXISTS", "enc2r", "x"), 1)
        self.assertGreater(r.memory_usage("enc2r"), 1384)
        self.assertTrue(r.copy("k", "kc"))
        self.assertEqual(r.execute_command("CF.INFO", "kc")[3], 4)
        self.assertEqual(r.ping(), True)


class NodeCfTest(ModuleTest):
    """node-redis (Debian's node-redis) through client.cf."""

    def test_node_redis_cf(self):
        node = shutil.which("node") or shutil.which("nodejs")
        if not node or not os.path.isdir("/usr/share/nodejs/redis"):
            self.skipTest("node-redis (Debian's node-redis) is not installed")
        s = self.server()
        script = os.path.join(os.path.dirname(__file__), "node_cf.js")
        env = dict(os.environ, NODE_PATH="/usr/share/nodejs", REDIS_PORT=str(s.port))
        out = subprocess.run([node, script], env=env, capture_output=True, text=True,
                             timeout=120)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("node-redis cf: ok", out.stdout)


if __name__ == "__main__":
    unittest.main()
