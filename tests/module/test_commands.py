"""What the server says of the module's commands: COMMAND DOCS (summary,
since, complexity, arguments), COMMAND INFO (arity, key specs), COMMAND
GETKEYS, and ACL categories. Every command is called as its docs describe
it, each optional argument in turn, so the docs cannot drift from what the
parsers accept. Run by `make check-module`."""
import os
import sys
import unittest

import redis

sys.path.insert(0, os.path.dirname(__file__))
from test_module import ModuleTest  # noqa: E402

SAMPLES = {"error_rate": "0.01", "error": "0.01", "capacity": "1000", "expansion": "2",
           "bucketsize": "2", "maxiterations": "20", "iterator": "0", "item": "x",
           "items": "x", "data": "x", "config": "capacity=1000"}
REFUSALS = ("wrong number of arguments", "Unknown argument", "unknown argument", "syntax")


def as_dict(reply):
    """A RESP2 flat list of name, value pairs as a dict (names decoded)."""
    it = iter(reply)
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in zip(it, it)}


def words(value):
    return [w.decode() if isinstance(w, bytes) else w for w in value]


class CommandsTest(ModuleTest):
    def setUp(self):
        super().setUp()
        self.r = self.server().client()
        self.r.set_response_callback("COMMAND", lambda reply, **kw: reply)  # the raw reply
        self.names = sorted(n.decode() for n in
                            self.r.execute_command("COMMAND", "LIST", "FILTERBY", "MODULE",
                                                   "bloomkit"))
        self.keys = 0

    def docs(self, name):
        reply = self.r.execute_command("COMMAND", "DOCS", name)
        return as_dict(as_dict(reply)[name])

    def info(self, name):
        return self.r.execute_command("COMMAND", "INFO", name)[0]

    def sample(self, arg):
        kind = arg["type"].decode()
        if kind == "key":
            self.keys += 1
            return ["k%d" % self.keys]
        if kind == "pure-token":
            return [arg["token"].decode()]
        if kind == "oneof":
            raise AssertionError("oneof is expanded by the caller")
        value = SAMPLES[arg["name"].decode()]
        return ([arg["token"].decode()] if "token" in arg else []) + [value]

    def calls(self, args):
        """The invocations the docs describe: the required arguments alone,
        then each optional one (each choice of a oneof) added in its place."""
        args = [as_dict(a) for a in args]
        for a in args:
            if "arguments" in a:  # a oneof's choices
                a["subargs"] = [as_dict(s) for s in a["arguments"]]
        def flags(a):
            return words(a.get("flags", []))
        def build(extra):
            out = []
            for i, a in enumerate(args):
                if "optional" in flags(a) and i != extra[0]:
                    continue
                if a["type"] == b"oneof":
                    choice = a["subargs"][extra[1] if i == extra[0] else 0]
                    out += self.sample(choice)
                else:
                    out += self.sample(a) * (2 if "multiple" in flags(a) and i == extra[0] else 1)
            return out
        yield build((-1, 0))
        for i, a in enumerate(args):
            for choice in range(len(a.get("subargs", [])) or 1):
                if "optional" in flags(a) or "multiple" in flags(a):
                    yield build((i, choice))

    def test_every_command_has_docs_and_key_specs(self):
        self.assertEqual(len(self.names), 33)
        for name in self.names:
            d = self.docs(name)
            for field in ("summary", "since", "complexity"):
                self.assertTrue(d.get(field), (name, field))
            self.assertEqual(d["module"], b"bloomkit")
            info = self.info(name)
            specs = [as_dict(s) for s in info[8]]
            if name == "bk.sweep":
                self.assertEqual(specs, [])
                continue
            self.assertEqual(len(specs), 2 if name == "bk.merge" else 1, name)
            flags = [f.upper() for f in words(specs[0]["flags"])]
            writes = b"write" in info[2]
            self.assertIn("RW" if writes else "RO", flags, name)
            self.assertTrue({"INSERT", "UPDATE", "DELETE"} & set(flags) if writes else True, name)
        self.assertEqual(self.r.execute_command("COMMAND", "GETKEYS", "BF.ADD", "k", "x"), [b"k"])
        self.assertEqual(self.r.execute_command("COMMAND", "GETKEYS", "CF.INSERT", "c", "ITEMS",
                                                "a", "b"), [b"c"])

    def test_every_command_takes_what_its_docs_say(self):
        for name in self.names:
            if name == "bk.at":  # replication's: clients are refused whatever they send
                continue
            d, arity = self.docs(name), self.info(name)[1]
            for n, call in enumerate(self.calls(d.get("arguments", []))):
                try:
                    self.r.execute_command(name, *call)
                except redis.ResponseError as e:
                    self.assertFalse(any(w in str(e) for w in REFUSALS), (name, call, str(e)))
                if n == 0:  # the required arguments: the arity, and one fewer refused
                    argc = 1 + len(call)
                    self.assertEqual(argc, abs(arity), (name, call))
                    if argc > 1:
                        self.assertError("wrong number of arguments", self.r.execute_command,
                                         name, *call[:-1])
                    if arity > 0:  # an exact arity: one more refused too
                        self.assertError("wrong number of arguments", self.r.execute_command,
                                         name, *call, "x")

    def test_acl_categories(self):
        cats = words(self.r.execute_command("ACL", "CAT"))
        if "bloom" not in cats:  # Redis 7.0 (Debian 12's): no module categories, and it says so
            self.assertIn("no module ACL categories", self.servers[0].log())
            self.assertError("Unknown", self.r.execute_command, "ACL", "SETUSER", "u", "+@bloom")
            return
        self.assertTrue({"cuckoo", "bloomkit"} <= set(cats))
        self.r.execute_command("ACL", "SETUSER", "crawler", "on", ">pw", "~*", "+@bloom")
        u = redis.Redis(host="127.0.0.1", port=self.servers[0].port, username="crawler",
                        password="pw")
        self.assertEqual(u.execute_command("BF.ADD", "seen", "x"), 1)
        for cmd in (("CF.ADD", "c", "x"), ("BK.CREATE", "b")):
            self.assertError("NOPERM", u.execute_command, *cmd)
        self.assertIn("bf.exists", words(self.r.execute_command("ACL", "CAT", "read")))


if __name__ == "__main__":
    unittest.main()
