"""The module's promises under hostile use (issue 44's regressions), each
against a real redis-server: a value's saved time moves no other value's
clock, whatever state accepted commands reach saves and loads again as the
same value, pending BF.LOADCHUNKs are bounded and freed, BF.SCANDUMP never
mixes two states. Run by `make check-module` with the other module suites."""
import os
import random
import struct
import sys
import time

import redis

sys.path.insert(0, os.path.dirname(__file__))
from server import Server  # noqa: E402,F401
from test_module import ModuleTest, VARIANTS, crc64_jones, dump, items  # noqa: E402

DAY_MS = 86400 * 1000


def saved_field(payload: bytes):
    """Where the module value's saved time lies in a DUMP payload: the first
    unsigned the value writes (opcode 0x02 at byte 10), RDB-length-encoded
    from byte 11 (6, 14, 32 or 64 bits). (start, end, value)."""
    assert payload[10] == 2, payload[:20].hex()
    b = payload[11]
    if b >> 6 == 0:
        return 11, 12, b & 0x3F
    if b >> 6 == 1:
        return 11, 13, ((b & 0x3F) << 8) | payload[12]
    if b == 0x80:
        return 11, 16, struct.unpack(">I", payload[12:16])[0]
    assert b == 0x81, hex(b)
    return 11, 20, struct.unpack(">Q", payload[12:20])[0]


def restamp(payload: bytes, saved_ms: int) -> bytes:
    """A DUMP payload of the module's type with its saved time set to
    saved_ms mod 2^64 (64-bit encoded), resealed (CRC-64 of the rest)."""
    start, end, _ = saved_field(payload)
    body = payload[:start] + b"\x81" + struct.pack(">Q", saved_ms % (1 << 64)) + \
        payload[end:-8]
    return body + struct.pack("<Q", crc64_jones(body))


def saved_time(payload: bytes) -> int:
    return saved_field(payload)[2]


class TimeTest(ModuleTest):
    """Point 1 and 2: a RESTOREd value's time is its own, and every state
    reached saves, reloads and saves again to the same image."""

    def debug_server(self, **kw):
        return self.server(args=["--enable-debug-command", "local", "--rdbcompression", "no"], **kw)

    def images(self, r):
        return {k: dump(r, k) for k in sorted(r.keys("*"))}

    def assertSameImages(self, before, after, note=""):
        self.assertEqual(sorted(before), sorted(after), note)
        changed = [k for k in before if before[k] != after[k]]
        self.assertEqual(changed, [], note)

    def test_restored_time_moves_no_other_window(self):
        s = self.debug_server()
        r = s.client()
        r.execute_command("BK.CREATE", "seen", "variant=window", "window=1d", "capacity=1000")
        r.execute_command("BK.ADD", "seen", "https://a.example/")
        r.execute_command("BF.RESERVE", "other", 0.01, 100)
        payload = r.dump("other")
        now = int(time.time() * 1000)
        self.assertEqual(saved_time(payload), 0)  # only a window's answers depend on time
        self.assertLess(abs(saved_time(r.dump("seen")) - now), 60000)  # the clock's own time
        accepted = 0
        for i, t in enumerate([now + 2 * DAY_MS, now + 3650 * DAY_MS, 253402300799999, 0,
                               now - 3650 * DAY_MS]):
            r.restore("other%d" % i, 0, restamp(payload, t))
            accepted += 1
            self.assertEqual(r.execute_command("BK.EXISTS", "seen", "https://a.example/"), [1], t)
        for t in [253402300800000, (1 << 63) - 1, 1 << 63, -1]:  # outside 1970 .. 9999
            self.assertError("Bad data format", r.restore, "bad", 0, restamp(payload, t))
        self.assertIn("outside 1970 .. 9999", s.log())
        self.assertEqual(r.exists("bad"), 0)
        self.assertEqual(accepted, 5)
        # the server's clock is still now: a new write is dated now
        r.execute_command("BK.ADD", "seen", "x")
        self.assertLess(abs(saved_time(r.dump("seen")) - int(time.time() * 1000)), 60000)
        self.assertEqual(r.execute_command("BK.EXISTS", "seen", "https://a.example/", "x"),
                         [1, 1])
        before = self.images(r)
        self.assertEqual(r.execute_command("DEBUG", "RELOAD"), b"OK")
        self.assertEqual(self.images(r), before)
        r.save()
        s.restart()
        self.assertEqual(self.images(s.client()), before)

    def test_a_window_from_a_clock_ahead_is_its_own(self):
        """A window filter RESTOREd with a saved time half a window ahead (a
        host whose clock ran ahead) keeps its keys, saves and reloads as the
        same value while unchanged, and is re-dated (alone) at its first add,
        as docs/windows.md says; one dated ten years ahead is, at that time,
        past its window: it holds nothing, and nothing else forgets."""
        s = self.debug_server()
        r = s.client()
        for name in ("w", "mine"):
            r.execute_command("BK.CREATE", name, "variant=window", "window=1h", "capacity=1000")
            r.execute_command("BK.ADD", name, *items(name, 50))
        ahead = int(time.time() * 1000) + 1800 * 1000
        r.restore("w2", 0, restamp(r.dump("w"), ahead))
        r.restore("w10y", 0, restamp(r.dump("w"), ahead + 3650 * DAY_MS))
        self.assertEqual(r.execute_command("BK.EXISTS", "w2", *items("w", 50)), [1] * 50)
        self.assertEqual(r.execute_command("BK.EXISTS", "w10y", *items("w", 50)), [0] * 50)
        self.assertEqual(saved_time(r.dump("w2")), ahead)  # its own time, kept
        image = dump(r, "w2")
        r.execute_command("DEBUG", "RELOAD")
        self.assertEqual(dump(r, "w2"), image)
        for name in ("w", "mine"):
            self.assertEqual(r.execute_command("BK.EXISTS", name, *items(name, 50)), [1] * 50)
        r.execute_command("BK.ADD", "w2", "new")  # re-dated to the clock
        self.assertLess(saved_time(r.dump("w2")), ahead)
        self.assertEqual(r.execute_command("BK.EXISTS", "w2", *items("w", 50), "new"), [1] * 51)
        before = self.images(r)
        r.execute_command("DEBUG", "RELOAD")
        self.assertEqual(self.images(r), before)

    def test_bk_at_refuses_a_time_out_of_range(self):
        """BK.AT comes only from the master or the AOF; a time in it outside
        1970 .. 9999 is refused like a damaged payload (an AOF so edited
        loads no such time into the clock)."""
        s = self.server(args=["--appendonly", "yes", "--appendfsync", "always"])
        r = s.client()
        r.execute_command("BK.CREATE", "seen", "variant=window", "window=1d", "capacity=1000")
        r.execute_command("BK.ADD", "seen", "a")
        r.execute_command("BK.CREATE", "w2", "variant=window", "window=1d", "capacity=1000")
        s.stop()
        aof_dir = os.path.join(s.dir, "appendonlydir")
        incr = [f for f in os.listdir(aof_dir) if f.endswith(".incr.aof")]
        self.assertEqual(len(incr), 1)
        bad = "BK.AT %d BK.ADD w2 b" % ((1 << 63) - 1)
        args = bad.split()
        with open(os.path.join(aof_dir, incr[0]), "ab") as f:
            f.write(("*%d\r\n" % len(args)).encode())
            for a in args:
                f.write(("$%d\r\n%s\r\n" % (len(a), a)).encode())
        try:
            s.start()
        except RuntimeError:
            pass  # the server refuses an AOF whose command fails: that is the point
        log = s.log()
        self.assertIn("BK.AT: bad time", log)

    def test_random_states_save_and_load_as_themselves(self):
        """Point 2 as a property: random commands over every variant,
        RESTOREs of their payloads with random saved times (accepted or
        refused), the clock of each restored window ahead or behind; after
        every step the whole dataset saves and reloads (DEBUG RELOAD) to the
        same images, and no window key added and not yet expired is lost."""
        s = self.debug_server()
        r = s.client()
        seed = int(os.environ.get("BK_SEED", str(int(time.time() * 1000))))
        rng = random.Random(seed)
        seed_note = "BK_SEED=%d" % seed
        names = list(VARIANTS)
        for name in names:
            r.execute_command("BK.CREATE", name, *VARIANTS[name].split())
        added = {name: [] for name in names}
        now = int(time.time() * 1000)
        times = [0, 1, now - 400 * DAY_MS, now - 3600 * 1000, now, now + 1000, now + 2 * DAY_MS,
                 now + 3650 * DAY_MS, 253402300799999, 253402300800000, (1 << 63) - 1,
                 1 << 63, (1 << 64) - 1]
        steps = int(os.environ.get("BK_STEPS", "40"))
        for step in range(steps):
            op = rng.randrange(4)
            name = rng.choice(names)
            if op == 0:
                ks = items("%s-%d" % (name, step), rng.randrange(1, 200))
                r.execute_command("BK.ADD", name, *ks)
                added[name].extend(ks)
            elif op == 1 and added[name]:
                t = rng.choice(times)
                copy = "%s-r%d" % (name, step)
                try:
                    r.restore(copy, 0, restamp(r.dump(name), t))
                except redis.ResponseError as e:
                    self.assertIn("Bad data format", str(e), seed_note)
                    self.assertTrue(t > 253402300799999, (t, seed_note))
                    continue
                self.assertLessEqual(t, 253402300799999, seed_note)
                names.append(copy)
                added[copy] = list(added[name])
                # the copy holds every key; if dated far back it may forget them
                # (docs/windows.md); every other filter holds its own
            elif op == 2:
                r.execute_command("DEBUG", "RELOAD")
            else:
                before = self.images(r)
                self.assertEqual(r.execute_command("DEBUG", "RELOAD"), b"OK", seed_note)
                self.assertSameImages(before, self.images(r), seed_note)
            for n in VARIANTS:  # the originals never forget (a 1 h window)
                if added[n]:
                    got = r.execute_command("BK.EXISTS", n, *added[n])
                    self.assertEqual(got, [1] * len(added[n]), (n, seed_note))
        before = self.images(r)
        r.execute_command("DEBUG", "RELOAD")
        self.assertSameImages(before, self.images(r), seed_note)


def info_bk(r):
    """The module's INFO fields (section bloomkit_settings), unprefixed."""
    return {k[len("bloomkit_"):]: v for k, v in r.info("bloomkit").items()}


def first_chunk(image: bytes) -> bytes:
    """The image's whole header: the shortest first chunk LOADCHUNK takes."""
    return image[:struct.unpack("<I", image[12:16])[0]]


class LoadChunkTest(ModuleTest):
    """Point 4: unfinished BF.LOADCHUNKs take what arrived, not what a
    header claims; their bytes are bounded and counted; they are freed when
    abandoned; an image past maxmemory's headroom is refused up front."""

    def big_header(self, nbytes_cap=64 << 20):
        """The header of a real image of about 36 MB (a filter for 2*10^7
        items at 0.001), taken from a scratch server."""
        src = self.server("src", module_args=["MAX_BYTES", "64M"]).client()
        src.execute_command("BF.RESERVE", "big", 0.001, 20_000_000)
        _, chunk = src.execute_command("BF.SCANDUMP", "big", 0)
        head = first_chunk(chunk)
        total = struct.unpack("<Q", chunk[72:80])[0]
        self.assertGreater(total, 30 << 20)
        return head, total

    def test_headers_cannot_evict_the_database(self):
        head, total = self.big_header()
        s = self.server(module_args=["MAX_BYTES", "64M"])
        r = s.client()
        r.config_set("maxmemory", str(r.info("memory")["used_memory"] + (40 << 20)))
        r.config_set("maxmemory-policy", "allkeys-lru")
        for i in range(1000):
            r.set("k%d" % i, "v" * 100)
        used = r.info("memory")["used_memory"]
        for i in range(16):
            self.assertError("not enough memory: this needs", r.execute_command, "BF.LOADCHUNK",
                             "f%d" % i, len(head), head)
        tampered = bytearray(head)
        tampered[72:80] = struct.pack("<Q", 513 << 20)  # the size field, checksum not redone
        self.assertError("header checksum", r.execute_command, "BF.LOADCHUNK", "g", len(head),
                         bytes(tampered))
        self.assertEqual(r.dbsize(), 1000)
        self.assertLess(r.info("memory")["used_memory"], used + (1 << 20))
        self.assertEqual(info_bk(r)["loads_pending"], 0)
        r.set("after", "ok")  # writes go on

    def test_pending_loads_hold_what_arrived_and_are_bounded(self):
        head, total = self.big_header()
        s = self.server(module_args=["MAX_BYTES", "64M", "LOADS_MAX_BYTES", "4M"])
        r = s.client()
        used = r.info("memory")["used_memory"]
        for i in range(16):  # each holds its header, not the 36 MB it declares
            self.assertTrue(r.execute_command("BF.LOADCHUNK", "f%d" % i, len(head), head))
        info = info_bk(r)
        self.assertEqual(info["loads_pending"], 16)
        self.assertLessEqual(info["loading_bytes"], 16 * (64 << 10))
        self.assertLess(r.info("memory")["used_memory"], used + (4 << 20))
        # a load that would pass LOADS_MAX_BYTES is refused, saying so
        piece = b"\0" * (1 << 20)
        at = len(head)
        with self.assertRaises(redis.ResponseError) as cm:
            for _ in range(8):
                at += len(piece)
                r.execute_command("BF.LOADCHUNK", "f0", at, piece)
        self.assertIn("LOADS_MAX_BYTES", str(cm.exception))
        self.assertLessEqual(info_bk(r)["loading_bytes"], 4 << 20)
        # a 17th load drops the oldest (abandoned, counted)
        r.execute_command("BF.LOADCHUNK", "f16", len(head), head)
        self.assertEqual(info_bk(r)["loads_pending"], 16)
        self.assertEqual(info_bk(r)["loads_abandoned"], 1)

    def test_abandoned_loads_are_freed(self):
        s = self.server(module_args=["LOAD_TIMEOUT_MS", "300"])
        r = s.client()
        r.execute_command("BK.CREATE", "src", "variant=scalable", "capacity=20000")
        r.execute_command("BK.ADD", "src", *[b"p%d" % i for i in range(3000)])
        image = dump(r, "src")
        head = first_chunk(image)

        def pending():
            return info_bk(r)["loads_pending"]

        # flushed
        r.execute_command("BF.LOADCHUNK", "a", len(head), head)
        self.assertEqual(pending(), 1)
        r.flushall()
        self.assertEqual(pending(), 0)
        self.assertErrorIs("ERR not found", r.execute_command, "BF.LOADCHUNK", "a",
                           len(image), image[len(head):])  # RedisBloom's: a chunk of no key
        # its key made by another command meanwhile
        r.execute_command("BF.LOADCHUNK", "b", len(head), head)
        r.set("b", "taken")
        self.assertError("WRONGTYPE", r.execute_command, "BF.LOADCHUNK", "b", len(image),
                         image[len(head):])
        self.assertEqual(pending(), 0)
        # a new first chunk for the same key replaces the old load
        r.execute_command("BF.LOADCHUNK", "c", len(head), head)
        r.execute_command("BF.LOADCHUNK", "c", len(head), head)
        self.assertEqual(pending(), 1)
        self.assertEqual(info_bk(r)["loads_abandoned"], 3)
        # idle past LOAD_TIMEOUT_MS: freed by the timer, with no further command
        deadline = time.time() + 10  # a 300 ms limit: a bounded wait for the timer
        while pending() and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(pending(), 0)
        self.assertEqual(info_bk(r)["loading_bytes"], 0)
        # and a whole load still works
        r.execute_command("BF.LOADCHUNK", "d", len(head), head)
        r.execute_command("BF.LOADCHUNK", "d", len(image), image[len(head):])
        self.assertEqual(dump(r, "d"), image)

    def test_module_arguments_of_loads(self):
        for bad in (["LOAD_TIMEOUT_MS", "5"], ["LOADS_MAX_BYTES", "0"], ["LOADS_MAX_BYTES", "x"]):
            with self.assertRaises(RuntimeError):
                self.server("bad%s" % bad[1], module_args=bad)
        r = self.server(module_args=["MAX_BYTES", "8M"]).client()
        self.assertEqual(info_bk(r)["loads_max_bytes"], 8 << 20)  # MAX_BYTES unless given


class ScanDumpTest(ModuleTest):
    """Point 6: an iterator belongs to one snapshot; a reader whose snapshot
    was replaced is told to start again, never served another state."""

    def test_a_reader_never_gets_a_mix_of_two_states(self):
        r = self.server(module_args=["MAX_BYTES", "128M"]).client()
        r.execute_command("BF.RESERVE", "f", 0.001, 20_000_000)  # 36 MB: three chunks
        r.execute_command("BF.MADD", "f", *items("a", 1000))
        it_a, first_a = r.execute_command("BF.SCANDUMP", "f", 0)
        it_b0, first_b0 = r.execute_command("BF.SCANDUMP", "f", 0)  # no write: the same one
        self.assertEqual((it_a, first_a), (it_b0, first_b0))
        r.execute_command("BF.ADD", "f", "new")
        it_b, _ = r.execute_command("BF.SCANDUMP", "f", 0)  # after a write: a new snapshot
        self.assertNotEqual(it_a >> 40, it_b >> 40)
        self.assertEqual(it_a & ((1 << 40) - 1), it_b & ((1 << 40) - 1))
        self.assertError("start again", r.execute_command, "BF.SCANDUMP", "f", it_a)
        self.assertError("start again", r.execute_command, "BF.SCANDUMP", "f",
                         it_a & ((1 << 40) - 1))  # a bare offset names no snapshot
        # B reads on, whole, and its image loads; A starts again and gets the same
        image_b = dump(r, "f")
        self.assertEqual(dump(r, "f"), image_b)
        chunks, it = [], 0
        while True:
            it, data = r.execute_command("BF.SCANDUMP", "f", it)
            if it == 0:
                break
            chunks.append((it, data))
        self.assertEqual(b"".join(d for _, d in chunks), image_b)
        for it, data in chunks:  # LOADCHUNK takes the tagged iterators
            r.execute_command("BF.LOADCHUNK", "copy", it, data)
        self.assertEqual(dump(r, "copy"), image_b)
        # a reader that finished freed the snapshot: another still reading an
        # unchanged filter is served the same bytes
        it1, c1 = r.execute_command("BF.SCANDUMP", "f", 0)
        it2, _ = r.execute_command("BF.SCANDUMP", "f", 0)
        self.assertEqual(it1, it2)
        rest, it = c1, it1
        while it:  # reader 1 to the end (frees the snapshot)
            it, data = r.execute_command("BF.SCANDUMP", "f", it)
            rest += data
        self.assertEqual(rest, image_b)
        it, data = r.execute_command("BF.SCANDUMP", "f", it2)  # reader 2 goes on
        self.assertEqual(data, image_b[it2 & ((1 << 40) - 1):][:len(data)])


class FiguresTest(ModuleTest):
    """Point 7: every figure of stats() is the same after a push into the
    module and a pull back, bytes, a file and a mapping, for every variant
    and cell shape (4-bit cuckoo fingerprints included)."""

    SHAPES = [
        "variant=standard capacity=3000 fpr=0.05",
        "variant=standard capacity=3000 fpr=0.05 layout=blocked",
        "variant=counting capacity=3000 fpr=0.05 layout=blocked",
        "variant=scalable capacity=500 fpr=0.05",
        "variant=window window=1h capacity=3000 fpr=0.05",
        "variant=cuckoo capacity=3000 fpr=0.1 fingerprint=4 bucket=4",
        "variant=cuckoo capacity=3000 fpr=0.1 fingerprint=4 bucket=2 layout=blocked",
        "variant=cuckoo capacity=3000 fpr=0.01 fingerprint=12 bucket=4",
    ]

    def test_every_figure_survives_every_way_of_travel(self):
        try:
            import bloomkit
        except ImportError:
            self.skipTest("the bloomkit Python binding is not on the path")
        s = self.server(module_args=["MAX_BYTES", "64M"])
        path = os.path.join(self.tmp, "f.bkf")
        for i, cfg in enumerate(self.SHAPES):
            f = bloomkit.BloomFilter(cfg + " max_bytes=32M" if "scalable" in cfg
                                     or "window" in cfg else cfg)
            for k in items("fig", 3000):
                try:
                    f.add(k)
                except Exception:  # a full cuckoo filter refuses, changing nothing
                    pass
            for _ in range(20 if "counting" in cfg else 0):  # counters stuck at 15
                f.add(b"hot")
            want = f.stats()
            if "cuckoo" in cfg:
                self.assertEqual(want["saturated"], 0, cfg)
            url = "redis://127.0.0.1:%d/f%d" % (s.port, i)
            f.push(url)
            f.save(path)
            travelled = {
                "bytes": bloomkit.BloomFilter.from_bytes(f.to_bytes()),
                "file": bloomkit.BloomFilter.load(path),
                "mmap": bloomkit.BloomFilter.open_mmap(path),
                "pull": bloomkit.BloomFilter.pull(url),
            }
            for how, g in travelled.items():
                got = g.stats()
                self.assertEqual({k: got.get(k) for k in want}, want, (cfg, how))
                g.close()
            # the module's own figures agree with the filter's
            info = dict(zip(*[iter(s.client().execute_command("BK.INFO", "f%d" % i))] * 2))
            self.assertEqual(int(info[b"saturated"]), want["saturated"], cfg)
            self.assertEqual(int(info[b"keys"]), want["keys"], cfg)
            f.close()


class WindowReplicationTest(ModuleTest):
    """Every add on a window filter reaches replicas, new or not: a renewed
    key (refresh=1) or a new generation changes the bytes without a key
    being new (found by fuzz_module_payload's save-and-reload property)."""

    def test_renewals_and_rotations_reach_the_replica(self):
        rm, rr = self.replicated()
        rm.execute_command("BK.CREATE", "w", "variant=window", "window=2s", "generations=4",
                           "refresh=1", "capacity=1000")
        rm.execute_command("BK.ADD", "w", "k")
        time.sleep(0.6)  # the next span: a renewal (not new) makes a generation and a copy
        self.assertEqual(rm.execute_command("BK.ADD", "w", "k"), [0])
        self.assertGreaterEqual(rm.execute_command("WAIT", 1, 5000), 1)
        self.assertEqual(dump(rr, "w"), dump(rm, "w"))
