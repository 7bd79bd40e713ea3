"""The module's settings as server configs: CONFIG GET / SET / REWRITE on
every one, the load-time arguments beside them, the server's range errors,
a change reaching only filters made after it, and replicas making what the
master made whatever their own settings. Run by `make check-module`."""
import os
import sys
import time
import unittest

import redis

sys.path.insert(0, os.path.dirname(__file__))
from server import MODULE  # noqa: E402
from test_module import ModuleTest  # noqa: E402

# name: (default, a valid other value, an invalid value)
SETTINGS = {
    "bf-error-rate": ("0.01", "0.001", "1"),
    "bf-initial-size": ("100", "5000", "0"),
    "bf-expansion-factor": ("2", "4", "32769"),
    "max-bytes": (str(512 << 20), str(1 << 30), "0"),
    "bf-config": ("", "hash=xxh3", "hash=nope"),
    "sweep-ms": ("1000", "0", "5"),
    "loads-max-bytes": (str(512 << 20), str(64 << 20), "0"),
    "load-timeout-ms": ("60000", "1000", "99"),
    "cf-max-expansions": ("32", "8", "0"),
    "cf-bucket-size": ("2", "4", "256"),
    "cf-initial-size": ("1024", "4096", "1048577"),
    "cf-max-iterations": ("20", "50", "65536"),
    "cf-expansion-factor": ("1", "2", "-1"),
    "new-keys": ("bloomkit", "redisbloom", "both"),
    "module-name": ("bloomkit", None, "bf"),
}


class ConfigTest(ModuleTest):
    def get(self, r, name, prefix="bloomkit."):
        got = r.config_get(prefix + name)
        self.assertEqual(len(got), 1, name)
        return got[prefix + name]

    def test_every_setting_is_a_config(self):
        r = self.server().client()
        self.assertEqual(set(k[len("bloomkit."):] for k in r.config_get("bloomkit.*")),
                         set(SETTINGS))
        for name, (default, other, bad) in SETTINGS.items():
            self.assertEqual(self.get(r, name), default, name)
            with self.assertRaises(redis.ResponseError, msg=name) as cm:
                r.config_set("bloomkit." + name, bad)
            self.assertIn("bloomkit." + name, str(cm.exception))
            self.assertEqual(self.get(r, name), default, name)  # a refusal changes nothing
            if other is not None:
                self.assertTrue(r.config_set("bloomkit." + name, other), name)
                self.assertEqual(self.get(r, name), other, name)
        # the server's own words for a numeric range; ours for what depends on another
        self.assertError("between 1 and 255", r.config_set, "bloomkit.cf-bucket-size", "300")
        self.assertError("twice cf-bucket-size", r.config_set, "bloomkit.cf-initial-size", "6")
        self.assertError("immutable", r.config_set, "bloomkit.module-name", "bloomkit")

    def test_load_time_arguments_are_the_configs(self):
        # RedisBloom's names, bloomkit's, and the config names, in any case
        r = self.server(module_args=["ERROR_RATE", "0.002", "initial_size", "300",
                                     "CF_MAX_EXPANSIONS", "4", "cf-bucket-size", "4",
                                     "MAX_BYTES", "1G", "MODULE_NAME", "bf"]).client()
        want = {"bf-error-rate": "0.002", "bf-initial-size": "300", "cf-max-expansions": "4",
                "cf-bucket-size": "4", "max-bytes": str(1 << 30),
                "loads-max-bytes": str(1 << 30), "module-name": "bf"}
        for name, value in want.items():  # MODULE_NAME bf: configs are bf.*
            self.assertEqual(self.get(r, name, "bf."), value, name)
        r.bf().add("b", "x")
        self.assertEqual(r.bf().info("b").capacity, 300)

    def test_a_change_reaches_only_new_filters(self):
        for new_keys in ("bloomkit", "redisbloom"):
            r = self.server(new_keys, module_args=["NEW_KEYS", new_keys]).client()
            r.bf().add("b1", "x")
            r.cf().add("c1", "x")
            for name, value in (("bf-initial-size", "700"), ("bf-error-rate", "0.001"),
                                ("bf-expansion-factor", "4"), ("cf-initial-size", "8192"),
                                ("cf-bucket-size", "4"), ("cf-expansion-factor", "2"),
                                ("cf-max-iterations", "30")):
                r.config_set("bloomkit." + name, value)
            r.bf().add("b2", "x")
            r.cf().add("c2", "x")
            r.execute_command("CF.RESERVE", "c3", 64)  # options not given: the settings
            b1, b2 = r.bf().info("b1"), r.bf().info("b2")
            self.assertEqual((b1.capacity, b1.expansionRate), (100, 2), new_keys)
            self.assertEqual((b2.capacity, b2.expansionRate), (700, 4), new_keys)
            c1, c2, c3 = (r.cf().info(k) for k in ("c1", "c2", "c3"))
            self.assertEqual((c1.bucketSize, c1.expansionRate, c1.maxIteration),
                             (2, 1, 20 if new_keys == "redisbloom" else c1.maxIteration))
            for c in (c2, c3):
                self.assertEqual((c.bucketSize, c.expansionRate, c.maxIteration), (4, 2, 30),
                                 new_keys)
            self.assertGreaterEqual(c2.bucketNum * c2.bucketSize, 8192)
            self.assertTrue(r.config_set("bloomkit.bf-expansion-factor", "0"))
            r.bf().add("b3", "x")  # 0: made non-scaling
            self.assertIsNone(r.bf().info("b3").expansionRate, new_keys)

    def test_rewrite_keeps_what_was_set(self):
        conf = os.path.join(self.tmp, "redis.conf")
        with open(conf, "w") as f:
            f.write("loadmodule %s ERROR_RATE 0.002\n" % os.path.abspath(MODULE))
        s = self.server(conf=conf)
        r = s.client()
        r.config_set("bloomkit.cf-initial-size", "2048")
        r.config_set("bloomkit.bf-config", "hash=xxh3 layout=blocked")
        r.config_set("bloomkit.new-keys", "redisbloom")
        r.config_set("bloomkit.max-bytes", "64mb")
        r.config_rewrite()
        s.restart()
        r = s.client()
        for name, value in (("cf-initial-size", "2048"), ("bf-config", "hash=xxh3 layout=blocked"),
                            ("new-keys", "redisbloom"), ("max-bytes", str(64 << 20)),
                            ("bf-error-rate", "0.002")):  # the load-time argument still holds
            self.assertEqual(self.get(r, name), value, name)

    def test_a_config_file_cannot_rename_the_module(self):
        conf = os.path.join(self.tmp, "redis.conf")
        with open(conf, "w") as f:
            f.write("loadmodule %s\nbloomkit.module-name bf\n" % os.path.abspath(MODULE))
        with self.assertRaises(RuntimeError) as cm:
            self.server(conf=conf)
        self.assertIn("fixed when the module loads, by its argument MODULE_NAME", str(cm.exception))

    def test_replicas_make_what_the_master_made(self):
        rm, rr = self.replicated(module_args=["NEW_KEYS", "redisbloom"])
        for name, value in (("bf-initial-size", "900"), ("bf-error-rate", "0.0001"),
                            ("cf-initial-size", "4096"), ("cf-bucket-size", "3"),
                            ("cf-max-iterations", "40")):
            rm.config_set("bloomkit." + name, value)
        rm.bf().add("b", "x")
        rm.cf().add("c", "x")
        rm.cf().insert("c2", ["x", "y"])
        self.assertGreaterEqual(rm.execute_command("WAIT", 1, 5000), 1)
        for key in ("b",):
            self.assertEqual(rr.bf().info(key).__dict__, rm.bf().info(key).__dict__)
        for key in ("c", "c2"):
            self.assertEqual(rr.cf().info(key).__dict__, rm.cf().info(key).__dict__)
        self.assertEqual(rr.execute_command("BF.DEBUG", "b"), rm.execute_command("BF.DEBUG", "b"))


if __name__ == "__main__":
    unittest.main()
