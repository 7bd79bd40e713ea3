"""A fuzzing harness against a real server (issue 44 point 9): RESTORE
payloads, BF.LOADCHUNK sequences and BF.*/BK.* argument vectors, mutated at
random from every variant's real ones. After every accepted input the
property of the module's own persistence holds: DEBUG RELOAD gives the same
images. The server never crashes (tearDown reads its log, and under
check-module-asan the sanitizer's report). Bounded: BK_FUZZ_ROUNDS rounds
(default 300) of each kind; BK_SEED replays a run (the seed is in every
failure's message)."""
import os
import random
import struct
import sys
import time

import redis

sys.path.insert(0, os.path.dirname(__file__))
from server import Server  # noqa: E402,F401
from test_module import ModuleTest, VARIANTS, crc64_jones, dump, items  # noqa: E402
from test_promises import restamp  # noqa: E402

ROUNDS = int(os.environ.get("BK_FUZZ_ROUNDS", "300"))
TIMES = [0, 1, 1 << 31, 1 << 40, 253402300799999, 253402300800000, (1 << 63) - 1, 1 << 63,
         (1 << 64) - 1]


def mutate(rng, data: bytes, start=0) -> bytes:
    """A few random changes past `start`: byte flips, a cut, a repeat."""
    b = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        kind = rng.randrange(5)
        if not b[start:]:
            break
        at = rng.randrange(start, len(b))
        if kind == 0:
            b[at] ^= 1 << rng.randrange(8)
        elif kind == 1:
            b[at] = rng.choice([0, 0xFF, 0x7F, 0x80])
        elif kind == 2:
            del b[at:]
        elif kind == 3:
            b[at:at] = b[at:at + rng.randrange(1, 64)]
        else:
            b[at:at + 8] = struct.pack("<Q", rng.choice([0, 1, (1 << 64) - 1, 1 << 40,
                                                         rng.getrandbits(64)]))
    return bytes(b)


class FuzzTest(ModuleTest):
    def setUp(self):
        super().setUp()
        seed = int(os.environ.get("BK_SEED", str(int(time.time() * 1000))))
        self.rng = random.Random(seed)
        self.note = "BK_SEED=%d" % seed
        self.s = self.server(args=["--enable-debug-command", "local", "--rdbcompression", "no"],
                             module_args=["MAX_BYTES", "64M", "LOADS_MAX_BYTES", "16M"])
        self.r = self.s.client()
        for name, cfg in VARIANTS.items():
            self.r.execute_command("BK.CREATE", name, *cfg.split())
            self.r.execute_command("BK.ADD", name, *items(name, 300))

    def images(self):
        return {k: dump(self.r, k) for k in sorted(self.r.keys("*"))
                if self.r.type(k) == b"bloomkit0"}

    def reloads_as_itself(self):
        before = self.images()
        self.assertEqual(self.r.execute_command("DEBUG", "RELOAD"), b"OK", self.note)
        after = self.images()
        self.assertEqual(sorted(before), sorted(after), self.note)
        self.assertEqual([k for k in before if before[k] != after[k]], [], self.note)

    def test_restore_payloads(self):
        payloads = {name: self.r.dump(name) for name in VARIANTS}
        accepted = 0
        for i in range(ROUNDS):
            name = self.rng.choice(list(VARIANTS))
            p = payloads[name]
            if self.rng.random() < 0.5:
                p = restamp(p, self.rng.choice(TIMES + [int(time.time() * 1000)]))
            body, version = p[:-10], p[-10:-8]  # the RDB version stays Redis's
            image_at = body.find(b"\x89BKF")
            if self.rng.random() < 0.8:
                body = mutate(self.rng, body, max(image_at, 20))
            body += version
            crafted = body + struct.pack("<Q", crc64_jones(body))
            key = "r%d" % i
            try:
                self.r.restore(key, 0, crafted)
            except redis.ResponseError as e:
                self.assertIn("Bad data format", str(e), self.note)
                self.assertEqual(self.r.exists(key), 0, self.note)
                continue
            accepted += 1
            try:  # an accepted filter works: an add may be refused (full), never crash
                self.r.execute_command("BK.ADD", key, *items("after", 20))
            except redis.ResponseError:
                pass
            self.r.execute_command("BK.EXISTS", key, "x", "y")
            if accepted % 10 == 1:
                self.reloads_as_itself()
        self.assertTrue(self.r.ping())
        self.assertGreater(accepted, 0, self.note)  # the unmutated fifth are accepted
        self.reloads_as_itself()

    def test_loadchunk_sequences(self):
        images = {name: dump(self.r, name) for name in VARIANTS}
        done = 0
        for i in range(ROUNDS):
            name = self.rng.choice(list(VARIANTS))
            image = images[name]
            header = struct.unpack("<I", image[12:16])[0]
            if self.rng.random() < 0.6:
                image = mutate(self.rng, image, self.rng.choice([0, header, 128]))
            # a mutation may cut the image to nothing: then no cut inside it
            inside = {self.rng.randrange(1, len(image) + 1)
                      for _ in range(self.rng.randrange(0, 4))} if image else set()
            cuts = sorted({min(header, len(image))} | inside | {len(image)})
            chunks = [(b, image[a:b]) for a, b in zip([0] + cuts, cuts) if b > a]
            if self.rng.random() < 0.2 and len(chunks) > 1:
                self.rng.shuffle(chunks)  # out of order
            if self.rng.random() < 0.1:
                chunks.insert(self.rng.randrange(len(chunks) + 1), self.rng.choice(chunks))
            tag = self.rng.choice([0, 0, 1, self.rng.randrange(1, 1 << 22)]) << 40
            key = "l%d" % (i % 20)  # names reused: a new first chunk replaces a load
            self.r.delete(key)
            ok = True
            for it, data in chunks:
                try:
                    self.r.execute_command("BF.LOADCHUNK", key, it | tag, data)
                except redis.ResponseError:
                    ok = False
                    if self.rng.random() < 0.5:
                        break  # abandoned: the timer or a later first chunk frees it
            if ok and self.r.exists(key):
                done += 1
                self.r.execute_command("BK.EXISTS", key, "x")
                if done % 5 == 1:
                    self.reloads_as_itself()
        info = self.r.info("bloomkit")
        self.assertLessEqual(info["bloomkit_loading_bytes"], 16 << 20, self.note)
        self.assertGreater(done, 0, self.note)
        self.reloads_as_itself()

    def test_argument_vectors(self):
        words = ["ITEMS", "CAPACITY", "ERROR", "EXPANSION", "NONSCALING", "NOCREATE",
                 "0", "1", "-1", "2", "0.01", "0.5", "0.9", "1.0", "nan", "inf", "-inf",
                 "4.9e-324", "1e308", str(1 << 63), str(1 << 64), str((1 << 64) - 1),
                 "18446744073709551616", "", " ", "\0", "x" * 5000, "variant=window",
                 "variant=cuckoo", "capacity=1e6", "window=1s", "fpr=1e-300", "bits=64",
                 "key=00", "CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION"]
        commands = ["BF.RESERVE", "BF.ADD", "BF.MADD", "BF.INSERT", "BF.EXISTS", "BF.MEXISTS",
                    "BF.INFO", "BF.CARD", "BF.SCANDUMP", "BF.LOADCHUNK", "BK.CREATE", "BK.ADD",
                    "BK.EXISTS", "BK.REMOVE", "BK.INFO", "BK.SWEEP", "BK.AT"]
        keys = list(VARIANTS) + ["fresh", "s"]
        self.r.set("s", "a string")
        for i in range(ROUNDS * 4):
            cmd = self.rng.choice(commands)
            argv = [cmd]
            if self.rng.random() < 0.9:
                argv.append(self.rng.choice(keys) if self.rng.random() < 0.7 else "k%d" % (i % 7))
            argv += [self.rng.choice(words + keys) for _ in range(self.rng.randrange(0, 8))]
            try:
                self.r.execute_command(*argv)
            except redis.ResponseError:
                pass
            if i % 100 == 99:
                self.assertTrue(self.r.ping(), self.note)
        self.reloads_as_itself()
        for name in VARIANTS:  # every original key is still there (added, never removed)
            # but in the variants that remove: a BK.REMOVE of a word never added
            # takes a key whose fingerprint it shares (cuckoo, rbcuckoo: RedisBloom's
            # 8-bit fingerprints make that a run in a hundred), or a counter's share
            if name not in ("counting", "cuckoo", "rbcuckoo"):
                got = self.r.execute_command("BK.EXISTS", name, *items(name, 300))
                self.assertEqual(got, [1] * 300, (name, self.note))
