"""RedisBloom's replies, exactly (issue 57 point 5): thousands of random
BF.*/CF.* commands (valid or wrong arity; on missing keys, on strings, on
RedisBloom's chains and cuckoo filters, on keys bloomkit made) checked
against RedisBloom's reply rules as written down here from its documented formats
(section 6: arity, wrong types, missing keys), under either NEW_KEYS.
BK_SEED replays a run. Run by `make check-module`."""
import os
import random
import socket
import sys
import time
import unittest

import redis

sys.path.insert(0, os.path.dirname(__file__))
from test_module import ModuleTest  # noqa: E402

WT = "WRONGTYPE Operation against a key holding the wrong kind of value"
BLOOM, CUCKOO = "bloom", "cuckoo"
# name: (family, smallest and largest argument count with the command (None:
# no largest))
COMMANDS = {
    "bf.reserve": (BLOOM, 4, 7), "bf.add": (BLOOM, 3, 3), "bf.madd": (BLOOM, 3, None),
    "bf.insert": (BLOOM, 4, None), "bf.exists": (BLOOM, 3, 3), "bf.mexists": (BLOOM, 3, None),
    "bf.info": (BLOOM, 2, 3), "bf.card": (BLOOM, 2, 2), "bf.scandump": (BLOOM, 3, 3),
    "cf.reserve": (CUCKOO, 3, None), "cf.add": (CUCKOO, 3, 3), "cf.addnx": (CUCKOO, 3, 3),
    "cf.insert": (CUCKOO, 4, None), "cf.insertnx": (CUCKOO, 4, None),
    "cf.exists": (CUCKOO, 3, 3), "cf.mexists": (CUCKOO, 3, None), "cf.count": (CUCKOO, 3, 3),
    "cf.del": (CUCKOO, 3, 3), "cf.info": (CUCKOO, 2, 2), "cf.compact": (CUCKOO, 2, 2),
    "cf.scandump": (CUCKOO, 3, 3),
}
# what RedisBloom answers a command on a key of another type (or of the other
# family), and on a missing key (None: the command's own reply, not checked here)
OTHER = {"bf.exists": 0, "bf.mexists": "zeros", "cf.exists": 0, "cf.mexists": "zeros",
         "cf.count": 0, "cf.del": "Not found", "cf.compact": "Cuckoo filter was not found"}
MISSING = dict(OTHER, **{"bf.card": 0, "bf.info": "not found", "bf.scandump": "not found",
                         "cf.info": "not found", "cf.scandump": "not found"})


def args_for(cmd, rng):
    """A valid argument list (after the key) for cmd."""
    item = "item:%d" % rng.randrange(50)
    return {
        "bf.reserve": ["0.01", "100"], "bf.insert": ["ITEMS", item], "bf.info": [],
        "bf.card": [], "bf.scandump": ["0"], "cf.reserve": ["100"],
        "cf.insert": ["ITEMS", item], "cf.insertnx": ["ITEMS", item], "cf.info": [],
        "cf.compact": [], "cf.scandump": ["0"],
    }.get(cmd, [item])


class RepliesTest(ModuleTest):
    def keys(self, r, new_keys):
        """name -> family (None: a string; "missing": no key)."""
        r.set("str", "x")
        r.execute_command("BF.RESERVE", "rb-bf", "0.01", "100", "EXPANSION", "1")  # RedisBloom's
        r.execute_command("BF.ADD", "bf", "item:1")
        r.execute_command("CF.ADD", "cf", "item:1")
        r.execute_command("BK.CREATE", "bk", "variant=standard", "capacity=1000")
        return {"str": None, "rb-bf": BLOOM, "bf": BLOOM, "cf": CUCKOO, "bk": BLOOM,
                "missing": "missing"}

    def run_random(self, new_keys, n):
        seed = int(os.environ.get("BK_SEED", str(int(time.time() * 1000))))
        rng = random.Random(seed)
        note = "BK_SEED=%d NEW_KEYS %s" % (seed, new_keys)
        args = ["NEW_KEYS", new_keys] if new_keys != "bloomkit" else []
        r = self.server("s-" + new_keys, module_args=args).client()
        kinds = self.keys(r, new_keys)
        checked = 0
        for _ in range(n):
            cmd = rng.choice(sorted(COMMANDS))
            family, low, high = COMMANDS[cmd]
            key = rng.choice(sorted(kinds))
            argv = [cmd.upper() if rng.random() < 0.5 else cmd, key] + args_for(cmd, rng)
            wrong = rng.random() < 0.2
            if wrong:  # too few, or (where there is a largest) too many
                argv = argv[:rng.randrange(1, low)] if high is None or rng.random() < 0.5 \
                    else argv + ["x"] * rng.randrange(1, 3)
                if low <= len(argv) <= (high or 1 << 30):
                    continue
            kind = kinds[key]
            try:
                got = r.execute_command(*argv)
            except redis.ResponseError as e:
                got = str(e)
            if kind == "missing":
                r.delete("missing")  # a write may have made it: missing again
            if wrong:
                want = "wrong number of arguments for '%s' command" % cmd
            elif kind == "missing":
                want = MISSING.get(cmd)
            elif kind != family:
                if cmd == "bf.scandump" and r.type(key) == b"bloomkit0":
                    continue  # documented: a keyed cuckoo dumps as bloomkit's image
                want = OTHER.get(cmd, WT)
            else:
                continue  # the command's own reply: other suites check those
            if want == "zeros":
                want = [0] * (len(argv) - 2)
            if want is None:
                continue
            self.assertEqual(got, want, "%s: %s on %s (%s)" % (note, argv, key, kind))
            checked += 1
        self.assertGreater(checked, n // 3, note)
        return checked

    def test_random_commands_answer_as_redisbloom_does(self):
        n = int(os.environ.get("BK_REPLY_ROUNDS", "3000"))
        for new_keys in ("bloomkit", "redisbloom"):
            checked = self.run_random(new_keys, n)
            print("\n[replies] NEW_KEYS %s: %d replies checked, 0 differences" % (new_keys, checked))

    def test_loadchunk_and_debug_replies(self):
        """BF.LOADCHUNK's errors and the DEBUG replies' shape, as RedisBloom's."""
        s = self.server()
        r = s.client()
        r.set("str", "x")
        r.execute_command("CF.ADD", "cf", "a")
        r.execute_command("BF.RESERVE", "rb", "0.01", "100", "EXPANSION", "1")
        self.assertErrorIs(WT, r.execute_command, "BF.LOADCHUNK", "str", 1, b"garbage")
        # a keyed cuckoo filter takes bloomkit's image, into an empty key only (documented)
        self.assertErrorIs("ERR item exists", r.execute_command, "BF.LOADCHUNK", "cf", 1,
                           b"garbage")
        self.assertErrorIs("ERR received bad data", r.execute_command, "BF.LOADCHUNK", "new", 1,
                           b"garbage")
        self.assertErrorIs("ERR not found", r.execute_command, "BF.LOADCHUNK", "new", 100,
                           b"garbage")
        self.assertErrorIs("ERR Second argument must be numeric", r.execute_command,
                           "BF.LOADCHUNK", "new", "x", b"garbage")
        # BF.DEBUG and CF.DEBUG: bulk strings, as the raw protocol shows
        with socket.create_connection(("127.0.0.1", s.port), timeout=30) as c:
            c.sendall(b"*2\r\n$8\r\nBF.DEBUG\r\n$2\r\nrb\r\n")
            c.sendall(b"*2\r\n$8\r\nCF.DEBUG\r\n$2\r\ncf\r\n")
            got = b""
            while got.count(b"\r\n") < 7:
                got += c.recv(4096)
        self.assertTrue(got.startswith(b"*2\r\n$6\r\nsize:0\r\n$"), got)
        self.assertIn(b"\r\n$", got[got.index(b"ratio:"):], got)  # CF.DEBUG's line, bulk


if __name__ == "__main__":
    unittest.main()
