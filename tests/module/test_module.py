"""bloomkit's Redis module in a real redis-server, driven by redis-py (Debian's
python3-redis) as RedisBloom's users drive it: BF.* replies and errors, every
variant through BK.*, persistence (RDB, AOF), replication, the generic key
commands, hostile input. Run by `make check-module`."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import unittest

import redis

sys.path.insert(0, os.path.dirname(__file__))
from server import Server  # noqa: E402

VARIANTS = {
    "standard": "variant=standard capacity=5000 fpr=0.01",
    "blocked": "variant=standard capacity=5000 fpr=0.01 layout=blocked hash=xxh3",
    "pinned": "variant=standard bits=65536 hashes=5 capacity=5000 hash=siphash13",
    "counting": "variant=counting capacity=5000 fpr=0.01",
    "scalable": "variant=scalable capacity=500 fpr=0.01",
    "window": "variant=window window=1h capacity=5000 fpr=0.01",
    "cuckoo": "variant=cuckoo capacity=5000 fpr=0.01",
    "rbchain": "variant=rbchain capacity=500 fpr=0.01",
    "rbcuckoo": "variant=rbcuckoo capacity=5000 bucket_size=4",
    "expandable": "variant=expandable capacity=500 fpr=0.01",
}


def crc64_jones(data: bytes) -> int:
    """CRC-64/Jones (reflected, polynomial 0xad93d23594c935a9), the checksum
    of a DUMP payload, written from its published parameters."""
    poly = 0x95AC9329AC4BC9B5  # the polynomial, bit-reflected
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
    return crc


def dump(r, key) -> bytes:
    """The filter's image by BF.SCANDUMP, chunk after chunk."""
    out, it = b"", 0
    while True:
        it, data = r.bf().scandump(key, it)
        if it == 0:
            return out
        out += data


def card(r, key):
    return r.execute_command("BF.CARD", key)  # redis-py 4.3 has no bf().card


def absent(r, key, tag="absent"):
    """An item the filter says it does not hold (skipping its false positives)."""
    i = 0
    while r.execute_command("BF.EXISTS", key, "%s-%d" % (tag, i)):
        i += 1
    return "%s-%d" % (tag, i)


def items(tag, n):
    return [("%s-%d" % (tag, i)).encode() for i in range(n)]


class ModuleTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="bkmod-")
        self.servers = []

    def tearDown(self):
        codes = [s.stop() for s in self.servers]
        reports = [s.sanitizer_report() for s in self.servers]
        bugs = [s.log() for s in self.servers if "BUG REPORT" in s.log()]
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.assertEqual(bugs, [], "a server crashed or asserted (its log)")
        for c in codes:  # under valgrind (BLOOMKIT_MODULE_WRAP) its error exit code
            self.assertNotEqual(c, 99, "valgrind found errors in the module")
        for rep in reports:  # check-module-asan
            self.assertEqual(rep, "", "a sanitizer found errors in the module:\n" + rep)

    def server(self, name="a", **kw) -> Server:
        s = Server(os.path.join(self.tmp, name), **kw)
        self.servers.append(s)
        return s

    def replicated(self, **master_kw):
        """A master (made with master_kw) and a replica of it, linked: their
        clients."""
        m = self.server("master", **master_kw)
        rep = self.server("replica", args=["--replicaof", "127.0.0.1", str(m.port)])
        rm, rr = m.client(), rep.client()
        for _ in range(200):
            if rr.info("replication").get("master_link_status") == "up":
                break
            time.sleep(0.05)
        return rm, rr

    def race(self, urls, n=20000):
        """One `bloomkit dedup --redis` process per URL (each naming the
        same filter), all over the same n lines at once: each line printed
        by exactly one of them, and almost all printed (fpr 1e-4)."""
        lines = "".join("https://race.example/%d\n" % i for i in range(n))
        cli = os.environ.get("BLOOMKIT_CLI", "build/bloomkit")
        src = os.path.join(self.tmp, "lines")
        with open(src, "w") as f:
            f.write(lines)
        procs = []
        for i, url in enumerate(urls):
            with open(src) as inp, open(os.path.join(self.tmp, "out%d" % i), "w") as out:
                procs.append(subprocess.Popen([cli, "dedup", "--redis", url], stdin=inp,
                                              stdout=out, stderr=subprocess.PIPE, text=True))
        outs = []
        for i, p in enumerate(procs):
            _, err = p.communicate(timeout=300)
            self.assertEqual(p.returncode, 0, err)
            with open(os.path.join(self.tmp, "out%d" % i)) as f:
                outs.extend(f.read().split())
        self.assertEqual(len(outs), len(set(outs)))  # nobody printed a line another did
        self.assertGreater(len(outs), n - 10)

    def assertError(self, text, fn, *args):
        with self.assertRaises(redis.ResponseError) as cm:
            fn(*args)
        self.assertIn(text, str(cm.exception))

    def assertErrorIs(self, text, fn, *args):
        """The error reply is exactly text (redis-py drops a leading "ERR ")."""
        with self.assertRaises(redis.ResponseError) as cm:
            fn(*args)
        self.assertEqual(str(cm.exception), text[4:] if text.startswith("ERR ") else text)


class BFTest(ModuleTest):
    """RedisBloom's commands through redis-py's r.bf()."""

    def test_module_listed_and_commands_known(self):
        r = self.server().client()
        mods = r.execute_command("MODULE", "LIST")
        names = [dict(zip(m[::2], m[1::2]))[b"name"] for m in mods]
        self.assertIn(b"bloomkit", names)
        info = r.execute_command("COMMAND", "INFO", "BF.ADD", "BF.EXISTS", "BK.ADD")
        # registered in lower case, as RedisBloom's (the arity error says 'bf.add')
        self.assertIn("write", info["bf.add"]["flags"])
        self.assertIn("denyoom", info["bf.add"]["flags"])
        self.assertIn("readonly", info["bf.exists"]["flags"])
        self.assertIn("denyoom", info["bk.add"]["flags"])
        self.assertEqual(info["bf.add"]["first_key_pos"], 1)

    def test_reserve_add_exists_info_card(self):
        s = self.server()
        r, raw = s.client(), s.client()  # raw: no bf() reply parsing
        bf = r.bf()
        self.assertTrue(bf.create("f", 0.001, 1000))
        self.assertEqual(bf.add("f", "a"), 1)
        self.assertEqual(bf.add("f", "a"), 0)
        self.assertEqual(bf.madd("f", "a", "b", "c"), [0, 1, 1])
        self.assertEqual(bf.exists("f", "b"), 1)
        self.assertEqual(bf.exists("f", "zz"), 0)
        self.assertEqual(bf.mexists("f", "a", "zz", "c"), [1, 0, 1])
        self.assertEqual(card(r, "f"), 3)
        self.assertEqual(card(r, "missing"), 0)
        self.assertEqual(bf.exists("missing", "a"), 0)
        info = bf.info("f")
        self.assertEqual(info.capacity, 1000)
        self.assertEqual(info.filterNum, 1)
        self.assertEqual(info.insertedNum, 3)
        self.assertEqual(info.expansionRate, 2)
        self.assertGreater(info.size, 1000 * 14 // 8)
        for field, want in (("CAPACITY", 1000), ("FILTERS", 1), ("ITEMS", 3), ("EXPANSION", 2)):
            self.assertEqual(raw.execute_command("BF.INFO", "f", field), [want])
        self.assertEqual(raw.execute_command("BF.INFO", "f", "SIZE"), [info.size])

    def test_add_on_missing_key_uses_defaults(self):
        r = self.server().client()
        self.assertEqual(r.bf().add("d", "x"), 1)
        info = r.bf().info("d")
        self.assertEqual((info.capacity, info.expansionRate), (100, 2))
        cfg = dict(zip(*[iter(r.execute_command("BK.INFO", "d"))] * 2))
        self.assertEqual(cfg[b"target_fpr"], b"0.01")
        self.assertEqual(cfg[b"variant"], b"expandable")  # one table that grows (test_growth)

    def test_module_arguments_set_defaults(self):
        r = self.server(module_args=["ERROR_RATE", "0.001", "INITIAL_SIZE", "500",
                                     "EXPANSION", "4"]).client()
        r.bf().add("d", "x")
        info = r.bf().info("d")
        self.assertEqual((info.capacity, info.expansionRate), (500, 4))
        cfg = dict(zip(*[iter(r.execute_command("BK.INFO", "d"))] * 2))
        self.assertEqual(float(cfg[b"target_fpr"]), 0.001)

    def test_bad_module_arguments_refuse_to_load(self):
        for args in (["ERROR_RATE", "2"], ["INITIAL_SIZE", "-1"], ["NOPE", "1"], ["EXPANSION"],
                     ["MAX_BYTES", "lots"], ["BF_CONFIG", "variant=nope"], ["SWEEP_MS", "5"],
                     ["SWEEP_MS", "-1"]):
            with self.assertRaises(RuntimeError, msg=args) as cm:
                Server(os.path.join(self.tmp, "bad"), module_args=args)
            self.assertIn("bloomkit", str(cm.exception))

    def test_insert_options(self):
        r = self.server().client()
        bf = r.bf()
        self.assertEqual(bf.insert("i", ["a", "b"], capacity=1000, error=0.001, expansion=4),
                         [1, 1])
        info = bf.info("i")
        self.assertEqual((info.capacity, info.expansionRate), (1000, 4))
        self.assertEqual(bf.insert("i", ["b", "c"], capacity=5), [0, 1])  # options ignored
        self.assertEqual(bf.info("i").capacity, 1000)
        self.assertError("not found", r.execute_command, "BF.INSERT", "nope", "NOCREATE",
                         "ITEMS", "a")
        self.assertEqual(r.exists("nope"), 0)
        self.assertEqual(bf.insert("ns", ["a", "b"], capacity=2, noScale=True), [1, 1])
        self.assertIsNone(bf.info("ns").expansionRate)
        self.assertEqual(bf.info("ns").capacity, 2)

    def test_nonscaling_is_full_at_capacity(self):
        r = self.server().client()
        bf = r.bf()
        bf.create("n", 0.01, 3, noScale=True)
        self.assertIsNone(bf.info("n").expansionRate)
        # three items the filter does not hold yet (a fixed third one is a
        # false positive of "a" and "b" now and then: the hash key is random)
        first = [absent(r, "n", "a")]
        self.assertEqual(bf.madd("n", first[0]), [1])
        first.append(absent(r, "n", "b"))
        self.assertEqual(bf.madd("n", first[1]), [1])
        first.append(absent(r, "n", "c"))
        self.assertEqual(bf.madd("n", first[2]), [1])
        self.assertEqual(bf.add("n", first[0]), 0)  # present: still answered
        self.assertError("non scaling filter is full", bf.add, "n", absent(r, "n"))
        res = r.execute_command("BF.MADD", "n", first[0], absent(r, "n"))
        self.assertEqual(res[0], 0)
        self.assertIsInstance(res[1], redis.ResponseError)
        self.assertIn("non scaling filter is full", str(res[1]))
        self.assertEqual(card(r, "n"), 3)
        out = r.execute_command("BF.INSERT", "m", "CAPACITY", "2", "NONSCALING", "ITEMS",
                                "a", "b")
        self.assertEqual(out, [1, 1])
        out = r.execute_command("BF.INSERT", "m", "ITEMS", "a", absent(r, "m"))
        self.assertEqual(out[0], 0)
        self.assertIn("non scaling filter is full", str(out[1]))

    def test_error_texts(self):
        r = self.server().client()
        bf = r.bf()
        bf.create("f", 0.01, 100)
        r.set("s", "1")
        self.assertError("item exists", bf.create, "f", 0.01, 100)
        self.assertError("not found", bf.info, "nope")
        self.assertError("not found", bf.scandump, "nope", 0)
        # RedisBloom's own texts, exactly, where it has one (FORMATS.md 6.1)
        for bad, text in (("x", "bad error rate"), ("0", "(0 < error rate range < 1) "),
                          ("1", "(0 < error rate range < 1) "),
                          ("-0.1", "(0 < error rate range < 1) ")):
            self.assertErrorIs("ERR " + text, r.execute_command, "BF.RESERVE", "g", bad, 100)
        for bad in ("nan", "inf", "1e308"):
            self.assertError("error rate", bf.create, "g", bad, 100)
        for bad, text in (("x", "bad capacity"), ("1.5", "bad capacity"),
                          ("0", "(capacity should be larger than 0)"),
                          ("-1", "(capacity should be larger than 0)")):
            self.assertErrorIs("ERR " + text, r.execute_command, "BF.RESERVE", "g", "0.01", bad)
        for bad, text in (("x", "bad expansion"), ("0", "expansion should be greater or equal to 1"),
                          ("-2", "expansion should be greater or equal to 1")):
            self.assertErrorIs("ERR " + text, r.execute_command, "BF.RESERVE", "g", "0.01", "100",
                               "EXPANSION", bad)
        # over bloomkit's own limit, as RedisBloom takes it: RedisBloom's type (docs/redis.md)
        r.execute_command("BF.RESERVE", "g1000", "0.01", "100", "EXPANSION", "1000")
        self.assertEqual(r.type("g1000"), b"MBbloom--")
        self.assertErrorIs("Nonscaling filters cannot expand", r.execute_command, "BF.RESERVE",
                           "g", "0.01", "100", "EXPANSION", "2", "NONSCALING")
        # RedisBloom's looseness: other words pass, its words count anywhere (the key too)
        self.assertTrue(r.execute_command("BF.RESERVE", "g", "0.01", "100", "FOO"))
        self.assertTrue(r.execute_command("BF.RESERVE", "NONSCALING", "0.01", "100"))
        self.assertIsNone(bf.info("NONSCALING").expansionRate)
        self.assertEqual(r.execute_command("BF.INSERT", "h", "EXP", "3", "NONS", "INSERTME", "a",
                                           "b"), [1, 1])
        self.assertIsNone(bf.info("h").expansionRate)
        self.assertErrorIs("Bad capacity", r.execute_command, "BF.INSERT", "h2", "ERROR", "2",
                           "CAPACITY", "x", "ITEMS", "a")  # values read before ranges are checked
        r.delete("g", "NONSCALING", "h")
        self.assertErrorIs("Unknown argument received", r.execute_command, "BF.INSERT", "g",
                           "FOO", "ITEMS", "a")
        for opt, bad, text in (("ERROR", "x", "Bad error rate"), ("ERROR", "2", "Bad argument received"),
                               ("CAPACITY", "x", "Bad capacity"), ("CAPACITY", "0", "Bad argument received"),
                               ("EXPANSION", "x", "Bad expansion"),
                               ("EXPANSION", "0", "Bad argument received")):
            self.assertErrorIs(text, r.execute_command, "BF.INSERT", "g", opt, bad, "ITEMS", "a")
        # a rate RedisBloom takes and bloomkit does not: RedisBloom's type, as RedisBloom made
        self.assertEqual(r.execute_command("BF.INSERT", "z", "ERROR", "0.9", "ITEMS", "a"), [1])
        self.assertEqual(r.type("z"), b"MBbloom--")
        # any number of option words before ITEMS (RedisBloom takes repeats)
        self.assertEqual(r.execute_command("BF.INSERT", "many", *(["CAPACITY", "1000"] * 12),
                                           "ERROR", "0.01", "NONSCALING",
                                           "ITEMS", "a", "b"), [1, 1])
        self.assertEqual(bf.info("many").capacity, 1000)
        r.delete("many")
        self.assertEqual(r.exists("g"), 0)
        # lookups answer 0 for another type, as RedisBloom's
        self.assertEqual(r.execute_command("BF.EXISTS", "s", "x"), 0)
        self.assertEqual(r.execute_command("BF.MEXISTS", "s", "x", "y"), [0, 0])
        for cmd in (("BF.ADD", "s", "x"), ("BF.MADD", "s", "x"), ("BF.INFO", "s"), ("BF.CARD", "s"),
                    ("BF.RESERVE", "s", "0.01", "10"), ("BF.INSERT", "s", "ITEMS", "x"),
                    ("BF.SCANDUMP", "s", "0"), ("BK.ADD", "s", "x"), ("BK.EXISTS", "s", "x"),
                    ("BK.REMOVE", "s", "x"), ("BK.INFO", "s"), ("BK.CREATE", "s")):
            self.assertError("WRONGTYPE", r.execute_command, *cmd)
        for cmd in (("BF.ADD", "f"), ("BF.ADD", "f", "a", "b"), ("BF.EXISTS", "f"),
                    ("BF.MADD", "f"), ("BF.RESERVE", "f", "0.1"), ("BF.INFO",),
                    ("BF.CARD",), ("BF.INSERT", "f", "ITEMS"), ("BF.SCANDUMP", "f"),
                    ("BF.LOADCHUNK", "f", "1"), ("BK.ADD", "f"), ("BK.CREATE",)):
            self.assertError("wrong number of arguments", r.execute_command, *cmd)
        self.assertErrorIs("Invalid information value", r.execute_command, "BF.INFO", "f", "X")
        self.assertErrorIs("Second argument must be numeric", r.execute_command, "BF.SCANDUMP",
                           "f", "x")
        self.assertError("not found", r.execute_command, "BF.SCANDUMP", "nope", "x")  # key first
        self.assertErrorIs("ERR Second argument must be numeric", r.execute_command,
                           "BF.LOADCHUNK", "g", "x", "data")

    def test_scandump_loadchunk_round_trip(self):
        r = self.server(module_args=["MAX_BYTES", "64M"]).client()
        bf = r.bf()
        bf.create("big", 0.001, 2_000_000)  # 3.4 MiB: one chunk
        bf.madd("big", *items("k", 5000))
        chunks, it = [], 0
        while True:
            it, data = bf.scandump("big", it)
            if it == 0:
                break
            chunks.append((it, data))
        for it, data in chunks:
            self.assertTrue(bf.loadchunk("copy", it, data))
        self.assertEqual(dump(r, "copy"), dump(r, "big"))
        self.assertEqual(bf.mexists("copy", *items("k", 5000)), [1] * 5000)
        self.assertEqual(bf.info("copy").insertedNum, 5000)
        self.assertError("item exists", bf.loadchunk, "copy", chunks[0][0], chunks[0][1])

    def test_loadchunk_in_pieces_and_refusals(self):
        r = self.server().client()
        r.execute_command("BK.CREATE", "src", "variant=scalable capacity=20000")
        r.execute_command("BK.ADD", "src", *items("p", 3000))
        image = dump(r, "src")
        header = struct.unpack("<I", image[12:16])[0]  # the first chunk holds it whole
        self.assertError("its header is %d bytes" % header, r.execute_command, "BF.LOADCHUNK",
                         "dst", header - 1, image[:header - 1])
        cut = [0, header, 1000, len(image) // 2, len(image)]
        for a, b in zip(cut, cut[1:]):
            r.execute_command("BF.LOADCHUNK", "dst", b, image[a:b])
            self.assertEqual(r.exists("dst"), 1 if b == len(image) else 0)
        self.assertEqual(dump(r, "dst"), image)
        self.assertError("out of order", lambda: (
            r.execute_command("BF.LOADCHUNK", "d2", 1000, image[:1000]),
            r.execute_command("BF.LOADCHUNK", "d2", 3000, image[2000:3000])))
        bad = bytearray(image)
        bad[len(bad) // 2] ^= 0x40
        self.assertError("invalid filter image", r.execute_command, "BF.LOADCHUNK", "d3",
                         len(bad), bytes(bad))
        # not an image's start, an iterator before the chunk's end: RedisBloom's answer
        self.assertErrorIs("ERR received bad data", r.execute_command, "BF.LOADCHUNK", "d3", 10,
                           b"0123456789")
        self.assertErrorIs("ERR received bad data", r.execute_command, "BF.LOADCHUNK", "d3", 5000,
                           b"x" * 5000)
        self.assertErrorIs("ERR received bad data", r.execute_command, "BF.LOADCHUNK", "d3", -1,
                           b"x")
        self.assertEqual(r.exists("d3"), 0)

    def test_scandump_refuses_a_changed_filter(self):
        r = self.server().client()
        r.bf().create("f", 0.01, 1000)
        it, _ = r.bf().scandump("f", 0)
        r.bf().add("f", "new")
        self.assertError("changed during BF.SCANDUMP", r.bf().scandump, "f", it)


class VariantTest(ModuleTest):
    """Every variant through BK.*, and BF.* on them where it makes sense."""

    def test_every_variant(self):
        r = self.server().client()
        for name, cfg in VARIANTS.items():
            self.assertTrue(r.execute_command("BK.CREATE", name, *cfg.split()), name)
            keys = items(name, 2000)
            added = r.execute_command("BK.ADD", name, *keys)
            self.assertGreater(sum(added), 1900, name)  # 0: a false positive at the add
            self.assertEqual(r.execute_command("BK.EXISTS", name, *keys), [1] * 2000, name)
            # RedisBloom's cuckoo filter is another type for BF.*: its lookups answer 0
            one = 0 if name == "rbcuckoo" else 1
            self.assertEqual(r.execute_command("BF.MEXISTS", name, *keys), [one] * 2000, name)
            self.assertEqual(r.execute_command("BF.EXISTS", name, keys[0]), one)
            absent_hits = sum(r.execute_command("BK.EXISTS", name, *items("no-" + name, 2000)))
            self.assertLess(absent_hits, 100, name)  # fpr 0.01 (pinned: ~0.02) of 2000
            info = dict(zip(*[iter(r.execute_command("BK.INFO", name))] * 2))
            want = cfg.split()[0].split("=")[1]
            self.assertEqual(info[b"variant"], want.encode(), name)
            self.assertGreater(int(info[b"keys"]), 1900, name)
            if name == "rbcuckoo":  # another type for BF.CARD, as RedisBloom's cuckoo filter
                self.assertError("WRONGTYPE", r.execute_command, "BF.CARD", name)
            else:
                self.assertEqual(r.execute_command("BF.CARD", name), int(info[b"keys"]))
            # the library's table of figures, every row under its name
            from bloomkit import _native
            names = [row[0].encode() for row in _native.figures()]
            extra = [b"config"] + ([b"window_ms", b"now_ms"] if want == "window" else [])
            self.assertEqual(list(info), names + extra, name)
            self.assertEqual(info[b"input"], b"raw", name)
        self.assertError("not supported", r.execute_command, "BK.REMOVE", "standard", "x")
        self.assertEqual(r.execute_command("BK.REMOVE", "counting", "counting-1", absent(
            r, "counting")), [1, 0])
        self.assertEqual(r.execute_command("BK.EXISTS", "counting", "counting-1"), [0])
        self.assertEqual(r.execute_command("BK.REMOVE", "cuckoo", "cuckoo-1", absent(
            r, "cuckoo")), [1, 0])
        self.assertEqual(r.execute_command("BK.EXISTS", "cuckoo", "cuckoo-1"), [0])
        self.assertError("not found", r.execute_command, "BK.ADD", "nope", "x")
        self.assertEqual(r.execute_command("BK.EXISTS", "nope", "x", "y"), [0, 0])
        self.assertError("bad config", r.execute_command, "BK.CREATE", "x", "variant=nope")
        self.assertError("bad config", r.execute_command, "BK.CREATE", "x", "capacity=0")
        self.assertError("item exists", r.execute_command, "BK.CREATE", "standard")

    def test_the_variants_are_the_librarys(self):
        """VARIANTS covers every variant the library's registry has (as the
        command lists them), so a new variant is tested here too."""
        cli = os.environ.get("BLOOMKIT_CLI", "build/bloomkit")
        p = subprocess.run([cli, "plan", "--capacity", "1000", "--fpr", "0.01", "--compare",
                            "--json"], capture_output=True, text=True, timeout=60, check=True)
        names = {row["variant"] for row in json.loads(p.stdout)}
        tested = {cfg.split()[0].split("=")[1] for cfg in VARIANTS.values()}
        self.assertEqual(names - tested, set())

    def test_a_cuckoo_filter_is_full_without_change(self):
        """A cuckoo filter refuses what it has no room for with an error and
        changes nothing; its adds are replayed on a replica byte for byte."""
        r = self.server().client()
        r.execute_command("BK.CREATE", "ck", "variant=cuckoo", "capacity=100")
        added = 0
        while added < 1000:
            reply = r.execute_command("BK.ADD", "ck", "k-%d" % added)[0]
            if isinstance(reply, redis.ResponseError):  # an item's error, in its place
                self.assertIn("filter is full", str(reply))
                break
            added += 1
        self.assertGreaterEqual(added, 100)
        before = dump(r, "ck")
        reply = r.execute_command("BK.ADD", "ck", "k-%d" % added, "k-0")
        self.assertIsInstance(reply[0], redis.ResponseError)
        self.assertEqual(dump(r, "ck"), before)
        self.assertEqual(r.execute_command("BK.EXISTS", "ck", "k-0", "k-1"), [1, 1])

    def test_same_bytes_as_a_local_filter(self):
        """The module runs the library's own code: a filter made with a fixed
        hash key holds, after the same adds, exactly the image the Python
        binding (libbloomkit) makes locally."""
        try:
            import bloomkit
        except ImportError:
            self.skipTest("the bloomkit Python binding is not on the path")
        r = self.server().client()
        for cfg in ("variant=standard capacity=1000 layout=blocked",
                    "variant=counting capacity=1000 hash=xxh3",
                    "variant=scalable capacity=100 hash=siphash13 max_bytes=512M",
                    "variant=cuckoo capacity=1000 layout=blocked"):
            text = cfg + " key=000102030405060708090a0b0c0d0e0f"
            r.execute_command("BK.CREATE", "same", *text.split())
            local = bloomkit.BloomFilter(text)
            keys = items("same", 700)
            r.execute_command("BK.ADD", "same", *keys)
            for k in keys:
                local.add(k)
            self.assertEqual(dump(r, "same"), local.to_bytes(), cfg)
            r.delete("same")

    def test_window_forgets_with_no_client_sweeping(self):
        r = self.server().client()
        r.execute_command("BK.CREATE", "w", "variant=window", "window=2s", "generations=2",
                          "capacity=1000")
        r.execute_command("BK.ADD", "w", "old")
        self.assertEqual(r.execute_command("BF.EXISTS", "w", "old"), 1)
        time.sleep(3.2)  # a 2 s window of 2 spans: forgotten by 3 s after the add
        self.assertEqual(r.execute_command("BF.EXISTS", "w", "old"), 0)
        self.assertEqual(r.execute_command("BK.ADD", "w", "old", "new"), [1, 1])

    def window_to_sweep(self, r):
        """A window filter whose one generation grew (2 s, 2 spans), and what
        its arrays then hold: its memory less that of the same window empty
        (its structures and first array, which a sweep keeps)."""
        cfg = ["variant=window", "window=2s", "generations=2", "capacity=100"]
        r.execute_command("BK.CREATE", "w", *cfg)
        r.execute_command("BK.CREATE", "w-empty", *cfg)
        r.execute_command("BK.ADD", "w", *items("w", 3000))
        self.empty = r.memory_usage("w-empty")
        return r.memory_usage("w") - self.empty

    def wait_swept(self, r, full, write=None):
        deadline = time.time() + 20  # a 2 s window: forgotten by 3 s; a bounded wait
        while (r.memory_usage("w") - self.empty) * 4 > full:
            self.assertLess(time.time(), deadline, "the sweep never freed the expired generation")
            if write:
                write()
            time.sleep(0.05)

    def test_sweep_frees_memory_of_a_server_nobody_writes(self):
        """No AOF, no replica: the timer sweeps, with no command at all."""
        r = self.server(module_args=["SWEEP_MS", "100"]).client()
        full = self.window_to_sweep(r)
        self.wait_swept(r, full)
        self.assertEqual(r.execute_command("BF.EXISTS", "w", "w-1"), 0)
        self.assertEqual(r.execute_command("BK.SWEEP"), 0)  # nothing left to free

    def test_sweep_reaches_replicas_and_the_aof(self):
        """With a replica and an AOF, the sweep the timer asks for runs in
        the master's next write of any filter, and goes to the replica and
        the AOF as BK.AT <ms> BK.SWEEP: the same bytes everywhere. A SHUTDOWN
        waiting for its replica (clients paused) meets no sweep."""
        m = self.server("master", module_args=["SWEEP_MS", "100"],
                        args=["--appendonly", "yes", "--appendfsync", "always"])
        rep = self.server("replica", module_args=["SWEEP_MS", "100"],
                          args=["--replicaof", "127.0.0.1", str(m.port)])
        rm, rr = m.client(), rep.client()
        full = self.window_to_sweep(rm)
        rm.execute_command("BK.CREATE", "s", "variant=scalable", "capacity=100")
        rm.execute_command("BK.ADD", "s", *items("s", 3000))
        ticks = iter(range(10 ** 6))
        self.wait_swept(rm, full,  # writes to another filter only
                        lambda: rm.execute_command("BK.ADD", "s", "tick-%d" % next(ticks)))
        self.assertEqual(rm.execute_command("BF.EXISTS", "w", "w-1"), 0)
        self.assertGreaterEqual(rm.execute_command("WAIT", 1, 5000), 1)
        self.assertEqual(dump(rr, "w"), dump(rm, "w"))
        self.assertEqual(dump(rr, "s"), dump(rm, "s"))
        self.assertLess((rr.memory_usage("w") - self.empty) * 4, full)
        aof = b""
        for root, _, files in os.walk(m.dir):
            for f in files:
                if ".aof" in f:
                    with open(os.path.join(root, f), "rb") as fh:
                        aof += fh.read()
        self.assertIn(b"BK.SWEEP", aof)
        self.assertEqual(rm.execute_command("BK.SWEEP"), 0)  # nothing left to free
        self.assertError("read only replica", rr.execute_command, "BK.SWEEP")


class PersistenceTest(ModuleTest):
    """RDB, AOF, replication, and the generic key commands."""

    def fill(self, r, seed):
        for name, cfg in VARIANTS.items():
            if not r.exists(name):
                r.execute_command("BK.CREATE", name, *cfg.split())
            r.execute_command("BK.ADD", name, *items(seed + name, 700))
        r.execute_command("BK.REMOVE", "counting", seed + "counting-1")
        r.execute_command("BK.REMOVE", "cuckoo", seed + "cuckoo-1")
        r.bf().madd("bf-" + seed, *items(seed, 300))

    def answers(self, r):
        out = {}
        for k in sorted(r.keys("*")):
            out[k] = dump(r, k)
        return out

    def test_rdb_restart(self):
        s = self.server()
        r = s.client()
        self.fill(r, "x")
        before = self.answers(r)
        r.save()
        s.restart()
        self.assertEqual(self.answers(s.client()), before)

    def test_aof_restart_and_rewrite(self):
        s = self.server(args=["--appendonly", "yes", "--appendfsync", "always"])
        r = s.client()
        self.fill(r, "a")
        before = self.answers(r)
        s.restart()
        self.assertEqual(self.answers(s.client()), before)
        r = s.client()
        r.bgrewriteaof()
        for _ in range(200):
            if r.info("persistence")["aof_rewrite_in_progress"] == 0 and \
               r.info("persistence")["aof_rewrite_scheduled"] == 0:
                break
            time.sleep(0.05)
        self.fill(r, "b")  # writes after the rewrite go to the new increment
        before = self.answers(r)
        s.restart()
        self.assertEqual(self.answers(s.client()), before)

    def test_replica_has_the_same_bytes(self):
        m = self.server("master")
        rep = self.server("replica", args=["--replicaof", "127.0.0.1", str(m.port)])
        rm, rr = m.client(), rep.client()
        self.fill(rm, "r1")  # before and after the replica's first sync
        for _ in range(200):
            if rr.info("replication").get("master_link_status") == "up":
                break
            time.sleep(0.05)
        self.fill(rm, "r2")
        rm.execute_command("BK.CREATE", "w2", "variant=window", "window=2s", "generations=2")
        rm.execute_command("BK.ADD", "w2", *items("w", 100))
        time.sleep(2.2)  # rotate: the next add drops a generation on the master
        rm.execute_command("BK.ADD", "w2", *items("w2", 100))
        self.assertGreaterEqual(rm.execute_command("WAIT", 1, 5000), 1)
        self.assertEqual(self.answers(rr), self.answers(rm))
        self.assertError("BK.AT carries", rm.execute_command, "BK.AT", "1", "BF.ADD", "x", "y")

    def test_generic_key_commands(self):
        r = self.server(args=["--notify-keyspace-events", "KEA"]).client()
        p = r.pubsub()
        p.psubscribe("__keyspace@0__:*")
        r.bf().madd("f", *items("g", 100))
        image = dump(r, "f")
        self.assertGreater(r.memory_usage("f"), len(image) - 200)
        r.rename("f", "g")
        self.assertEqual(dump(r, "g"), image)
        self.assertTrue(r.copy("g", "h"))
        self.assertEqual(dump(r, "h"), image)
        r.bf().add("h", "only-in-h")
        self.assertEqual(dump(r, "g"), image)  # a deep copy
        payload = r.dump("g")
        r.restore("i", 0, payload)
        self.assertEqual(dump(r, "i"), image)
        self.assertEqual(r.delete("g"), 1)
        self.assertEqual(r.unlink("h"), 1)
        self.assertEqual(r.type("i"), b"bloomkit0")
        events = []
        deadline = time.time() + 5
        while time.time() < deadline and b"del" not in events:
            msg = p.get_message(timeout=0.5)
            if msg and msg["type"] == "pmessage":
                events.append(msg["data"])
        self.assertIn(b"bf.reserve", events)
        self.assertIn(b"bf.add", events)
        self.assertIn(b"rename_from", events)
        self.assertIn(b"del", events)

    def test_damaged_payload_is_refused_and_the_server_lives(self):
        # Uncompressed payloads, so that the flipped byte lands in the
        # filter's image and not in Redis's LZF stream (whose damage Redis
        # itself refuses before the module sees the image).
        s = self.server(args=["--rdbcompression", "no"])
        r = s.client()
        r.bf().madd("f", *items("d", 100))
        payload = r.dump("f")
        body = bytearray(payload[:-8])
        at = body.index(b"\x89BKF")  # the filter's image inside the payload
        body[at + 200] ^= 0x10  # in its first slice's bits
        crafted = bytes(body) + struct.pack("<Q", crc64_jones(bytes(body)))
        self.assertError("Bad data format", r.restore, "g", 0, crafted)
        self.assertEqual(r.exists("g"), 0)
        self.assertTrue(r.ping())
        self.assertIn("damaged filter refused", s.log())
        r.restore("ok", 0, payload)  # the intact payload still loads
        self.assertEqual(dump(r, "ok"), dump(r, "f"))


class CommandTest(ModuleTest):
    """The bloomkit command (bloomkit's Redis part) on a server with the module:
    --redis uses the module's commands (a new name is made there), pull, info
    and drop work on module filters, and eight processes racing over the
    same lines print each line once."""

    def run_cli(self, *args, stdin=""):
        cli = os.environ.get("BLOOMKIT_CLI", "build/bloomkit")
        return subprocess.run([cli, *args], input=stdin, capture_output=True, text=True,
                              timeout=120)

    def test_redis_option_uses_the_module(self):
        s = self.server()
        r = s.client()
        url = "redis://127.0.0.1:%d/seen" % s.port
        p = self.run_cli("dedup", "--redis", url, stdin="a\nb\na\nc\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), ["a", "b", "c"])
        self.assertEqual(r.type("seen"), b"bloomkit0")  # made by the module, no Lua keys
        self.assertEqual(r.keys("*"), [b"seen"])
        self.assertEqual(r.execute_command("BF.MEXISTS", "seen", "a", "b", "c"), [1, 1, 1])
        p = self.run_cli("check", "--redis", url, stdin="a\nnever-added\n")
        self.assertEqual(p.stdout.split(), ["a"])
        r.execute_command("BK.CREATE", "cnt", "variant=counting", "capacity=1000")
        curl = "redis://127.0.0.1:%d/cnt" % s.port
        self.assertEqual(self.run_cli("add", "--redis", curl, stdin="x\ny\n").returncode, 0)
        p = self.run_cli("remove", "--redis", curl, stdin="x\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(r.execute_command("BK.EXISTS", "cnt", "x", "y"), [0, 1])
        p = self.run_cli("dedup", "--redis", url, "--config", "variant=counting", stdin="q\n")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("different variant", p.stderr)

    def test_python_binding_uses_the_module(self):
        try:
            import bloomkit
        except ImportError:
            self.skipTest("the bloomkit Python binding is not on the path")
        if not bloomkit._native.HAVE_REDIS:
            self.skipTest("the binding was built without Redis support")
        s = self.server()
        r = s.client()
        f = bloomkit.BloomFilter.redis("redis://127.0.0.1:%d/py" % s.port,
                                       "variant=window window=1h")
        self.assertTrue(f.add(b"k1"))
        self.assertFalse(f.add(b"k1"))
        self.assertIn(b"k1", f)
        self.assertNotIn(b"never-added", f)
        self.assertEqual(r.type("py"), b"bloomkit0")
        self.assertEqual(r.execute_command("BF.EXISTS", "py", "k1"), 1)
        self.assertEqual(f.stats()["keys"], 1)  # figures from a copy of the image
        # the module filter's store has no digest operations and no clear:
        # removal follows the variant, clear is refused naming the way out
        with self.assertRaises(bloomkit.BloomkitError) as e:
            f.remove(b"k1")
        self.assertIn("window filters cannot remove", str(e.exception))
        with self.assertRaises(bloomkit.BloomkitError) as e:
            f.clear()
        self.assertIn("bk_redis_drop", str(e.exception))
        self.assertIn(b"k1", f)
        c = bloomkit.BloomFilter.redis("redis://127.0.0.1:%d/pyc" % s.port, "variant=cuckoo")
        self.assertTrue(c.add(b"k"))
        c.remove(b"k")
        self.assertNotIn(b"k", c)

    def test_a_reservation_past_maxmemory_is_refused_first(self):
        """A reservation past what maxmemory leaves is refused before any
        memory is taken, saying what it needs and what there is."""
        r = self.server().client()
        r.config_set("maxmemory", "40mb")
        with self.assertRaisesRegex(redis.ResponseError,
                                    r"needs \d+ bytes and maxmemory leaves \d+"):
            r.execute_command("BF.RESERVE", "big", "0.0001", "100000000")
        with self.assertRaisesRegex(redis.ResponseError, r"needs \d+ bytes"):
            r.execute_command("CF.RESERVE", "bigcf", "100000000")
        self.assertEqual(r.exists("big", "bigcf"), 0)
        r.config_set("maxmemory", "0")
        self.assertEqual(r.execute_command("BF.RESERVE", "big", "0.0001", "100000000"), b"OK")

    def test_a_reserved_capacity_holds_without_growing(self):
        """BF.RESERVE (and BF.INSERT CAPACITY) for N items holds N distinct
        items in its first sub-filter at every rate (sized with headroom:
        before, half the filters grew before N), and so does CF.RESERVE (and
        CF.INSERT CAPACITY) at every bucket size from 2; MEMORY USAGE says
        what the one sub-filter takes."""
        r = self.server().client()
        n = 20000
        for rate in ("0.1", "0.01", "0.001", "0.00001"):
            for how in ("reserve", "insert"):
                name = "cap-%s-%s" % (how, rate)
                items = ["%s-%d-%s" % (name, i, os.urandom(4).hex()) for i in range(n)]
                if how == "reserve":
                    r.execute_command("BF.RESERVE", name, rate, n)
                    for i in range(0, n, 1000):
                        r.execute_command("BF.MADD", name, *items[i:i + 1000])
                else:
                    for i in range(0, n, 1000):
                        r.execute_command("BF.INSERT", name, "CAPACITY", n, "ERROR", rate,
                                          "ITEMS", *items[i:i + 1000])
                info = r.execute_command("BF.INFO", name, "FILTERS")
                self.assertEqual(info, [1], name)
                bits = dict(zip(*[iter(r.execute_command("BK.INFO", name))] * 2))[b"bits"]
                # its array in the allocator's size class (at most a quarter
                # more: jemalloc's) and the filter's structures
                self.assertLess(r.memory_usage(name), int(bits) / 8 * 1.25 + 4096, name)
        # CF.RESERVE and CF.INSERT CAPACITY: N items, each inserted (CF.ADD
        # takes duplicates too), one sub-filter, MEMORY USAGE its slots
        for bucket in (2, 3, 4):
            for how in ("reserve", "insert"):
                name = "cfcap-%s-%d" % (how, bucket)
                items = ["%s-%d-%s" % (name, i, os.urandom(4).hex()) for i in range(n)]
                if how == "reserve":
                    r.execute_command("CF.RESERVE", name, n, "BUCKETSIZE", bucket)
                for i in range(0, n, 1000):
                    if how == "reserve":
                        args = ("CF.INSERT", name, "ITEMS")
                    else:
                        args = ("CF.INSERT", name, "CAPACITY", n, "ITEMS")
                    self.assertEqual(set(r.execute_command(*args, *items[i:i + 1000])), {1})
                info = dict(zip(*[iter(r.execute_command("CF.INFO", name))] * 2))
                self.assertEqual(info[b"Number of filters"], 1, name)
                self.assertEqual(info[b"Number of items inserted"], n, name)
                # the allocator's size classes round an array up by at most a quarter
        self.assertLess(r.memory_usage(name), info[b"Size"] * 1.25 + 4096, name)

    def test_pull_info_drop(self):
        s = self.server()
        r = s.client()
        r.execute_command("BK.CREATE", "m", "variant=counting", "capacity=1000")
        r.execute_command("BK.ADD", "m", "a", "b")
        url = "redis://127.0.0.1:%d/m" % s.port
        out = os.path.join(self.tmp, "m.bkf")
        p = self.run_cli("pull", "--redis", url, out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.read(), dump(r, "m"))
        p = self.run_cli("check", out, stdin="a\nb\nnever-added\n")
        self.assertEqual(p.stdout.split(), ["a", "b"])
        p = self.run_cli("info", "--redis", url, "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('"variant":"counting"', p.stdout)
        self.assertIn('"keys":2', p.stdout)
        p = self.run_cli("push", out, "--redis", url)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("push needs a new name", p.stderr)
        p = self.run_cli("drop", "--redis", url)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(r.exists("m"), 0)

    def test_eight_processes_race(self):
        """Eight dedup processes over the same lines: each line printed once
        in all (exactly one process is told it is new)."""
        s = self.server()
        self.race(["redis://127.0.0.1:%d/race" % s.port] * 8)


class SafetyTest(ModuleTest):
    """Hostile input: the server answers and lives."""

    def test_hostile_arguments(self):
        s = self.server(module_args=["MAX_BYTES", "8M"])
        r = s.client()
        for name, cfg in VARIANTS.items():
            r.execute_command("BK.CREATE", name, *cfg.split())
        r.set("str", "x")
        r.lpush("list", "x")
        numbers = ["0", "-1", "1e308", "-1e308", "NaN", "nan", "inf", "-inf", "1e-320",
                   "18446744073709551616", "9223372036854775807", "0x10", " 1", "1 ", "",
                   "\x00", "1\x002"]
        targets = list(VARIANTS) + ["str", "list", "missing"]
        commands = [["BF.RESERVE", None, "N", "N"], ["BF.RESERVE", None, "0.1", "N"],
                    ["BF.RESERVE", None, "0.1", "10", "EXPANSION", "N"],
                    ["BF.INSERT", None, "CAPACITY", "N", "ITEMS", "a"],
                    ["BF.INSERT", None, "ERROR", "N", "ITEMS", "a"],
                    ["BF.INSERT", None, "EXPANSION", "N", "NONSCALING", "ITEMS", "a"],
                    ["BF.SCANDUMP", None, "N"], ["BF.LOADCHUNK", None, "N", "data"],
                    ["BF.INFO", None, "N"], ["BK.CREATE", None, "capacity=N"],
                    ["BK.CREATE", None, "bits=N", "hashes=N"]]
        for cmd in commands:
            for t in targets:
                for n in numbers:
                    args = [t if a is None else (n if a == "N" else a) for a in cmd]
                    try:
                        r.execute_command(*args)
                    except redis.ResponseError:
                        pass
        plain = [["BF.ADD", None, "\x00a\x00"], ["BF.MADD", None, "", "\x00"],
                 ["BF.EXISTS", None, ""], ["BF.MEXISTS", None, "x"], ["BF.CARD", None],
                 ["BF.INFO", None], ["BF.INFO", None, "ITEMS"], ["BK.ADD", None, "\x00"],
                 ["BK.EXISTS", None, "x"], ["BK.REMOVE", None, "x"], ["BK.INFO", None],
                 ["BF.INSERT", None, "NOCREATE", "ITEMS", "x"], ["BF.INSERT", None, "BOGUS"],
                 ["BF.RESERVE", None, "0.01", "100", "BOGUS"], ["BK.CREATE", None, "\x00"]]
        for cmd in plain:
            for t in targets:
                try:
                    r.execute_command(*[t if a is None else a for a in cmd])
                except redis.ResponseError:
                    pass
        self.assertTrue(r.ping())
        # an item of 100 MB and a million items in one BF.MADD
        big = b"x" * (100 << 20)
        self.assertEqual(r.execute_command("BF.ADD", "scalable", big), 1)
        self.assertEqual(r.execute_command("BF.EXISTS", "scalable", big), 1)
        del big
        many = items("m", 1_000_000)
        res = r.execute_command("BF.MADD", "huge", *many)
        self.assertEqual(len(res), 1_000_000)
        self.assertTrue(all(x == 1 or x == 0 or isinstance(x, redis.ResponseError) for x in res))
        self.assertTrue(r.ping())

    def test_reservation_limit_and_maxmemory(self):
        s = self.server(module_args=["MAX_BYTES", "1M"])
        r = s.client()
        used = r.info("memory")["used_memory"]
        self.assertError("MAX_BYTES", r.bf().create, "big", 0.0001, 10_000_000_000)
        self.assertError("MAX_BYTES", r.execute_command, "BK.CREATE", "big",
                         "variant=counting", "capacity=100000000")
        self.assertLess(r.info("memory")["used_memory"], used + (1 << 20))
        self.assertEqual(r.exists("big"), 0)
        # a growing filter stops at MAX_BYTES: "full", nothing lost before
        r.bf().create("grow", 0.01, 1000)
        keys = items("grow", 400_000)
        res = r.execute_command("BF.MADD", "grow", *keys)
        errors = [x for x in res if isinstance(x, redis.ResponseError)]
        self.assertTrue(errors and "full" in str(errors[0]))
        taken = [k for k, x in zip(keys, res) if x == 1]
        self.assertEqual(set(r.execute_command("BF.MEXISTS", "grow", *taken)), {1})
        r.config_set("maxmemory", str(r.info("memory")["used_memory"]))
        r.config_set("maxmemory-policy", "noeviction")
        self.assertError("OOM", r.execute_command, "BF.RESERVE", "more", "0.01", "1000")
        self.assertEqual(r.execute_command("BF.EXISTS", "grow", taken[0]), 1)  # reads go on


class NodeTest(ModuleTest):
    """node-redis (Debian's node-redis) through client.bf."""

    def test_node_redis_bf(self):
        node = shutil.which("node") or shutil.which("nodejs")
        if not node or not os.path.isdir("/usr/share/nodejs/redis"):
            self.skipTest("node-redis (Debian's node-redis) is not installed")
        s = self.server()
        script = os.path.join(os.path.dirname(__file__), "node_bf.js")
        env = dict(os.environ, NODE_PATH="/usr/share/nodejs", REDIS_PORT=str(s.port))
        out = subprocess.run([node, script], env=env, capture_output=True, text=True,
                             timeout=120)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("node-redis bf: ok", out.stdout)


if __name__ == "__main__":
    unittest.main()
