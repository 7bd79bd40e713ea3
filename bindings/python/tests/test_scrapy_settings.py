"""BloomDupeFilter and the settings Scrapy users already have: scrapy-redis's
(REDIS_URL, REDIS_HOST, REDIS_PORT, REDIS_PARAMS, SCHEDULER_DUPEFILTER_KEY)
and the Redis Bloom recipes' (REDIS_DUP_DB, BLOOMFILTER_*), each constructor
the way Scrapy and scrapy-redis call it, contradictions and unknown settings
refused at start, the figures in the stats, and real crawls under a scheduler
that drives the filter as scrapy-redis's does."""
import importlib.util
import os
import re
import shutil
import subprocess
import unittest

from helpers import RedisServer, Site, crawl, have_redis, redis_keys, scratch

HAVE_SCRAPY = importlib.util.find_spec("scrapy") is not None


def settings_of(**values):
    from scrapy.settings import Settings

    return Settings(values)


class FakeSpider:
    """What from_spider reads of a spider: its name and settings (and a
    crawler, for the stats and the closing signal, when the test gives one)."""

    def __init__(self, name, settings, crawler=None):
        self.name = name
        self.settings = settings
        if crawler is not None:
            self.crawler = crawler


@unittest.skipUnless(HAVE_SCRAPY, "Scrapy is not installed (python3-scrapy)")
class RefusedSettingsTest(unittest.TestCase):
    """Nothing silently ignored: each case stops at construction, naming the
    settings at fault, before any connection is tried."""

    def refused(self, names, **values):
        from bloomkit.scrapy import BloomDupeFilter

        with self.assertRaises(ValueError) as cm:
            BloomDupeFilter.from_settings(settings_of(**values), spider_name="s")
        for name in names:
            self.assertIn(name, str(cm.exception))
        return str(cm.exception)

    def test_contradictions_name_both_settings(self):
        cases = [
            (["BLOOMKIT_STATE", "REDIS_HOST"], dict(BLOOMKIT_STATE="/x.bkf", REDIS_HOST="h")),
            (["BLOOMKIT_STATE", "BLOOMKIT_REDIS"],
             dict(BLOOMKIT_STATE="/x.bkf", BLOOMKIT_REDIS="redis://h/n")),
            (["BLOOMKIT_REDIS", "BLOOMFILTER_REDIS_KEY"],
             dict(BLOOMKIT_REDIS="redis://h/n", BLOOMFILTER_REDIS_KEY="k")),
            (["BLOOMKIT_REDIS", "REDIS_DUP_DB"], dict(BLOOMKIT_REDIS="redis://h/n", REDIS_DUP_DB=2)),
            (["REDIS_URL", "REDIS_HOST"], dict(REDIS_URL="redis://a:6379", REDIS_HOST="b")),
            (["REDIS_URL", "REDIS_PORT"], dict(REDIS_URL="redis://a:6379", REDIS_PORT=6380)),
            (["REDIS_DUP_DB", "REDIS_PARAMS['db']"],
             dict(REDIS_HOST="h", REDIS_DUP_DB=1, REDIS_PARAMS={"db": 2})),
            (["REDIS_URL (path)", "REDIS_DUP_DB"], dict(REDIS_URL="redis://h:1/3", REDIS_DUP_DB=4)),
            (["BLOOMFILTER_REDIS_KEY", "SCHEDULER_DUPEFILTER_KEY"],
             dict(BLOOMFILTER_REDIS_KEY="a", SCHEDULER_DUPEFILTER_KEY="b")),
            (["BLOOMFILTER_BIT", "BLOOMFILTER_BIT_SIZE"],
             dict(BLOOMFILTER_BIT=30, BLOOMFILTER_BIT_SIZE=31)),
            (["BLOOMKIT_CONFIG", "fpr", "BLOOMFILTER_HASH_NUMBER"],
             dict(BLOOMKIT_CONFIG="fpr=0.001", BLOOMFILTER_HASH_NUMBER=6)),
            (["BLOOMKIT_SAVE_EVERY"], dict(REDIS_HOST="h", BLOOMKIT_SAVE_EVERY=5)),
        ]
        for names, values in cases:
            with self.subTest(values=values):
                self.refused(names, **values)

    def test_unknown_dupefilter_settings_are_named(self):
        text = self.refused(["BLOOMKIT_CONFG"], BLOOMKIT_CONFG="variant=counting")
        self.assertIn("typo", text)
        text = self.refused(["BLOOMFILTER_HASH_SEEDS"], BLOOMFILTER_HASH_SEEDS=[5, 7, 11])
        self.assertIn("BLOOMFILTER_HASH_NUMBER", text)
        self.refused(["DUPEFILTER_TTL", "REDIS_DUP_KEY"], DUPEFILTER_TTL=3, REDIS_DUP_KEY="x")
        self.refused(["REDIS_PARAMS['ssl']"], REDIS_HOST="h", REDIS_PARAMS={"ssl": True})
        self.refused(["rediss"], REDIS_URL="rediss://h:6379")
        self.refused(["BLOOMFILTER_BIT"], BLOOMFILTER_BIT=40)
        self.refused(["BLOOMFILTER_HASH_NUMBER"], BLOOMFILTER_HASH_NUMBER="six")

    def test_odd_values_stop_the_crawl_naming_the_setting(self):
        # each once gave a bare traceback or a silent change
        cases = [
            (["REDIS_PORT"], dict(REDIS_PORT="\u00b2")),  # '²': str.isdigit() says yes
            (["BLOOMFILTER_BIT"], dict(BLOOMFILTER_BIT="\u00b2")),
            (["REDIS_PARAMS['socket_timeout']"],
             dict(REDIS_HOST="h", REDIS_PARAMS={"socket_timeout": float("inf")})),
            (["REDIS_PARAMS['socket_timeout']"],
             dict(REDIS_HOST="h", REDIS_PARAMS={"socket_timeout": 0})),
            (["REDIS_PARAMS['socket_connect_timeout']"],
             dict(REDIS_HOST="h", REDIS_PARAMS={"socket_connect_timeout": -5})),
            (["REDIS_URL (socket_timeout=)"], dict(REDIS_URL="redis://h:1?socket_timeout=nan")),
            (["SCHEDULER_DUPEFILTER_KEY", "%(spider)s"],
             dict(SCHEDULER_DUPEFILTER_KEY="%(x)s:dupefilter")),
            (["BLOOMFILTER_REDIS_KEY"], dict(BLOOMFILTER_REDIS_KEY="50% off")),
            (["BLOOMKIT_SAVE_EVERY"], dict(BLOOMKIT_SAVE_EVERY="abc")),
            (["REDIS_HOST"], dict(REDIS_HOST="127.0.0.1/other")),
            (["REDIS_HOST"], dict(REDIS_HOST="evil@127.0.0.1")),
            (["REDIS_HOST", "REDIS_PORT"], dict(REDIS_HOST="127.0.0.1:7000")),
            (["REDIS_URL"], dict(REDIS_URL="redis://h:99999")),
        ]
        for names, values in cases:
            with self.subTest(values=values):
                self.refused(names, **values)
        # what is right passes as given
        from bloomkit.scrapy_settings import resolve

        for host, url in (("::1", "redis://[::1]:6379/s:dupefilter"),
                          ("[::1]", "redis://[::1]:6379/s:dupefilter"),
                          ("redis-1.example", "redis://redis-1.example:6379/s:dupefilter")):
            self.assertEqual(resolve(settings_of(REDIS_HOST=host), "s").redis_url, url)
        self.assertEqual(resolve(settings_of(BLOOMKIT_SAVE_EVERY="25"), "s").save_every, 25)

    def test_a_spider_key_without_a_spider_is_refused(self):
        from bloomkit.scrapy import BloomDupeFilter

        with self.assertRaises(ValueError) as cm:
            BloomDupeFilter.from_settings(settings_of(REDIS_HOST="h"))
        self.assertIn("%(spider)s", str(cm.exception))

    def test_settings_of_other_parts_are_left_alone(self):
        from bloomkit.scrapy import BloomDupeFilter

        # scrapy-redis's queue and pipeline settings are not the filter's
        df = BloomDupeFilter.from_settings(settings_of(
            SCHEDULER_QUEUE_KEY="%(spider)s:requests", REDIS_ITEMS_KEY="%(spider)s:items",
            SCHEDULER_PERSIST=True, BLOOMKIT_CONFIG="capacity=1000"))
        self.assertIsNone(df.state)
        df.close("finished")


@unittest.skipUnless(HAVE_SCRAPY, "Scrapy is not installed (python3-scrapy)")
@unittest.skipUnless(have_redis(), "no redis-server, or a binding built without hiredis")
class RedisSettingsTest(unittest.TestCase):
    def setUp(self):
        self.dir = scratch()
        self.redis = RedisServer(self.dir)

    def tearDown(self):
        self.redis.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_the_recipe_makes_a_pinned_filter_split_over_its_blocks(self):
        from scrapy import Request

        from bloomkit import BloomFilter
        from bloomkit.scrapy import BloomDupeFilter

        settings = settings_of(
            REDIS_HOST="127.0.0.1", REDIS_PORT=self.redis.port, REDIS_DUP_DB=3,
            BLOOMFILTER_REDIS_KEY="bf", BLOOMFILTER_BLOCK_NUMBER=4,
            BLOOMFILTER_HASH_NUMBER=6, BLOOMFILTER_BIT=20)
        df = BloomDupeFilter.from_settings(settings)
        st = df.bloom.stats()
        self.assertEqual((st["bits"], st["k"], st["variant"]), (4 << 20, 6, "standard"))
        self.assertIn("layout=blocked", df.bloom.config)
        self.assertFalse(df.request_seen(Request("http://a.example/1")))
        self.assertTrue(df.request_seen(Request("http://a.example/1")))
        for i in range(2, 201):
            df.request_seen(Request("http://a.example/%d" % i))
        # in database 3, under the name bf, its 4 blocks of 2^20 bits each a key
        keys = redis_keys(self.redis.port, 3, "bf*")
        self.assertIn("bf", keys)
        self.assertEqual(len([k for k in keys if k.endswith(":data")]), 4, keys)
        self.assertEqual(redis_keys(self.redis.port, 0, "*"), [])
        # another process with the same settings shares it
        other = BloomFilter.redis("redis://127.0.0.1:%d/bf?db=3" % self.redis.port)
        self.assertEqual(other.stats()["keys"], 200)
        self.assertEqual(other.stats()["bits"], 4 << 20)
        other.close()
        df.close("finished")
        # the recipe's defaults: 2^30 bits, 6 hashes, one block
        df = BloomDupeFilter.from_settings(settings_of(
            REDIS_URL="redis://127.0.0.1:%d/1" % self.redis.port, BLOOMFILTER_REDIS_KEY="dflt",
            BLOOMFILTER_HASH_NUMBER=6))
        self.assertEqual(df.bloom.stats()["bits"], 1 << 30)
        self.assertIn("layout=classic", df.bloom.config)
        df.clear()
        df.close("finished")
        self.assertEqual(redis_keys(self.redis.port, 1, "dflt*")[:1], ["dflt"])

    def test_scrapy_redis_settings_and_from_spider(self):
        from scrapy import Request

        from bloomkit.scrapy import BloomDupeFilter

        settings = settings_of(REDIS_URL="redis://127.0.0.1:%d/2" % self.redis.port,
                               REDIS_PARAMS={"socket_timeout": 5, "retry_on_timeout": True})
        alpha = BloomDupeFilter.from_spider(FakeSpider("alpha", settings))
        beta = BloomDupeFilter.from_spider(FakeSpider("beta", settings))
        alpha2 = BloomDupeFilter.from_spider(FakeSpider("alpha", settings))
        r = Request("http://a.example/x")
        self.assertFalse(alpha.request_seen(r))
        self.assertTrue(alpha2.request_seen(r))  # the same spider's filter, shared
        self.assertFalse(beta.request_seen(r))  # each spider its own by default
        self.assertEqual(sorted(k for k in redis_keys(self.redis.port, 2, "*")
                                if k.endswith(":dupefilter")),
                         ["alpha:dupefilter", "beta:dupefilter"])
        # scrapy-redis's clear (at close, without SCHEDULER_PERSIST)
        alpha.clear()
        self.assertFalse(alpha2.request_seen(r))
        for df in (alpha, beta, alpha2):
            df.close("finished")
        # an explicit key, with the spider's name in it, and the old name of the setting
        gamma = BloomDupeFilter.from_spider(FakeSpider("gamma", settings_of(
            REDIS_HOST="127.0.0.1", REDIS_PORT=str(self.redis.port),
            DUPEFILTER_KEY="crawl-%(spider)s")))
        self.assertFalse(gamma.request_seen(r))
        self.assertIn("crawl-gamma", redis_keys(self.redis.port, 0, "crawl-*"))
        gamma.close("finished")

    def test_a_window_is_shared_through_bloomkit_redis(self):
        from scrapy import Request

        from bloomkit import BloomFilter
        from bloomkit.scrapy import BloomDupeFilter

        url = "redis://127.0.0.1:%d/recrawl" % self.redis.port
        settings = settings_of(BLOOMKIT_REDIS=url,
                               BLOOMKIT_CONFIG="variant=window window=30d capacity=10000")
        a = BloomDupeFilter.from_settings(settings)
        b = BloomDupeFilter.from_settings(settings)
        r = Request("http://a.example/page")
        self.assertFalse(a.request_seen(r))
        self.assertTrue(b.request_seen(r))  # the other spider's filter: the same window
        self.assertEqual(a.bloom.stats()["variant"], "window")
        other = BloomFilter.redis(url)
        self.assertIn("window=30d", other.config)
        other.close()
        a.close("finished")
        b.close("finished")

    def test_stats_carry_the_filters_figures_at_close(self):
        from scrapy import Request
        from scrapy.statscollectors import MemoryStatsCollector

        from bloomkit.scrapy import BloomDupeFilter

        class Crawler:  # what the filter reads of a crawler
            signals = None

            def __init__(self, settings):
                self.settings = settings
                self.stats = MemoryStatsCollector(self)

        settings = settings_of(REDIS_HOST="127.0.0.1", REDIS_PORT=self.redis.port,
                               BLOOMKIT_CONFIG="capacity=10000 fpr=0.001")
        crawler = Crawler(settings)
        df = BloomDupeFilter.from_spider(FakeSpider("delta", settings, crawler))
        for i in range(300):
            df.request_seen(Request("http://a.example/%d" % (i % 200)))
        bytes_ = df.bloom.stats()["bytes"]
        df.clear()  # scrapy-redis at close: the figures are those before the clear
        df.close("finished")
        stats = crawler.stats.get_stats()
        self.assertEqual(stats["bloomkit/keys"], 200)
        self.assertEqual(stats["bloomkit/bytes"], bytes_)
        self.assertGreater(stats["bloomkit/fill"], 0)
        self.assertLess(stats["bloomkit/estimated_fpr"], 0.001)


@unittest.skipUnless(HAVE_SCRAPY, "Scrapy is not installed (python3-scrapy)")
@unittest.skipUnless(have_redis(), "no redis-server, or a binding built without hiredis")
class RecipeCrawlTest(unittest.TestCase):
    """Real crawls of the local site, the filter built and driven as
    scrapy-redis's scheduler does, with the recipe's settings."""

    PAGES = 600

    def setUp(self):
        self.dir = scratch()
        self.site = Site(self.dir, self.PAGES)
        self.redis = RedisServer(self.dir)

    def tearDown(self):
        self.site.stop()
        self.redis.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_a_persistent_recipe_crawl_fetches_each_page_once_across_runs(self):
        settings = {
            "SCHEDULER": "redis_like_scheduler.Scheduler",
            "SCHEDULER_PERSIST": "True",
            "REDIS_HOST": "127.0.0.1", "REDIS_PORT": str(self.redis.port),
            "REDIS_DUP_DB": "1", "BLOOMFILTER_REDIS_KEY": "recipe",
            "BLOOMFILTER_BIT": "22", "BLOOMFILTER_HASH_NUMBER": "10",
            "BLOOMFILTER_BLOCK_NUMBER": "2",
        }
        first = crawl(self.dir, "r1", [self.site.url(0)], settings)
        fetches = self.site.fetches()
        self.assertEqual(first["finish_reason"], "finished")
        self.assertEqual({p: n for p, n in fetches.items() if n > 1}, {})
        self.assertGreaterEqual(len(fetches), self.PAGES - 1)  # a false positive at most
        # the figures: every request the filter took, in 2 x 2^22 bits
        self.assertEqual(first["bloomkit/keys"], len(fetches))
        self.assertEqual(first["bloomkit/bytes"], (2 << 22) // 8)
        self.assertLess(first["bloomkit/estimated_fpr"], 1e-6)
        # persisted in Redis: a second crawl fetches nothing again
        second = crawl(self.dir, "r2", [self.site.url(0), self.site.url(7)], settings)
        self.assertEqual(self.site.fetches(), fetches)
        self.assertEqual(second.get("downloader/response_count", 0), 0)
        self.assertEqual(second["dupefilter/filtered"], 2)
        data = [k for k in redis_keys(self.redis.port, 1, "recipe*") if k.endswith(":data")]
        self.assertEqual(len(data), 2)
        print("\n[scrapy recipe] %d pages once, %d bits in %d Redis keys, second crawl "
              "fetched none" % (len(fetches), 2 << 22, len(data)))

    def test_without_persist_the_filter_is_cleared_at_close(self):
        settings = {
            "SCHEDULER": "redis_like_scheduler.Scheduler",
            "REDIS_URL": "redis://127.0.0.1:%d" % self.redis.port,
            "BLOOMKIT_CONFIG": "variant=scalable capacity=10000 fpr=0.000001",
        }
        first = crawl(self.dir, "c1", [self.site.url(0)], settings)
        n = sum(self.site.fetches().values())
        self.assertGreaterEqual(n, self.PAGES - 1)
        self.assertEqual(first["bloomkit/keys"], n)  # the figures before the clear
        crawl(self.dir, "c2", [self.site.url(0)], settings)
        self.assertEqual(sum(self.site.fetches().values()), 2 * n)  # all again


@unittest.skipUnless(HAVE_SCRAPY, "Scrapy is not installed (python3-scrapy)")
@unittest.skipUnless(have_redis(), "no redis-server, or a binding built without hiredis")
class MigrationTest(unittest.TestCase):
    """A crawl kept by scrapy-redis's duplicate filter (a set of request
    fingerprints) or by a Bloom dupefilter recipe (bitmaps) meets bloomkit's:
    the set is imported and the crawl goes on where it was; the recipe's
    bits cannot be, and the crawl stops rather than fetch everything again.
    scrapy-redis's filter is the stand-in in tests/scrapy_redis."""

    PAGES = 1500

    def setUp(self):
        self.dir = scratch()
        self.site = Site(self.dir, self.PAGES)
        self.redis = RedisServer(self.dir)
        self.server = "redis://127.0.0.1:%d" % self.redis.port

    def tearDown(self):
        self.site.stop()
        self.redis.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_a_scrapy_redis_crawl_moves_over_by_import_and_fetches_nothing_twice(self):
        from bloomkit import import_set

        settings = {
            "SCHEDULER": "redis_like_scheduler.Scheduler", "SCHEDULER_PERSIST": "True",
            "SCHEDULER_QUEUE_FILE": os.path.join(self.dir, "queue.json"),
            "REDIS_URL": self.server, "SCHEDULER_DUPEFILTER_KEY": "legacy:dupefilter",
        }
        old = crawl(self.dir, "old", [self.site.url(0)], dict(
            settings, DUPEFILTER_CLASS="scrapy_redis.dupefilter.RFPDupeFilter",
            CLOSESPIDER_PAGECOUNT="500"))
        self.assertEqual(old["finish_reason"], "closespider_pagecount")
        before = sum(self.site.fetches().values())
        self.assertLess(before, self.PAGES)
        self.assertEqual(redis_keys(self.redis.port, 0, "legacy:*"), ["legacy:dupefilter"])
        # in place: the set is kept under another name, the filter takes its
        # name (the command when the tests have it, as a user runs it)
        url = self.server + "/legacy:dupefilter"
        cli = os.environ.get("BLOOMKIT_CLI")
        if cli:
            out = subprocess.run([cli, "import", "--redis", url, "--from-set",
                                  "legacy:dupefilter"], capture_output=True, text=True, check=True)
            m = re.search(r"(\d+) members of (\S+), (\d+) of them new", out.stderr)
            done = {"members": int(m[1]), "kept": m[2], "added": int(m[3])}
        else:
            done = import_set(url, "legacy:dupefilter")
        self.assertGreater(done["members"], before)  # those fetched and those queued
        self.assertEqual(done["added"], done["members"])
        self.assertEqual(done["kept"], "{legacy:dupefilter}:imported")
        new = crawl(self.dir, "new", [self.site.url(0)], settings)
        self.assertEqual(new["finish_reason"], "finished")
        fetches = self.site.fetches()
        self.assertEqual({p: n for p, n in fetches.items() if n > 1}, {}, "fetched twice")
        # requests in flight when the first crawl stopped were taken for seen
        # and never fetched (scrapy-redis loses them too): at most its
        # concurrency, and a false positive
        self.assertGreaterEqual(len(fetches), self.PAGES - 65)
        self.assertGreater(sum(fetches.values()), before)
        print("\n[scrapy import] %d pages under scrapy-redis's filter, %d fingerprints "
              "imported, %d pages after: none twice" % (before, done["members"],
                                                        sum(fetches.values()) - before))

    def test_a_set_at_the_filters_key_stops_the_crawl_saying_how_to_import(self):
        from scrapy_redis.dupefilter import _Redis

        from bloomkit.errors import ServerError
        from bloomkit.scrapy import BloomDupeFilter

        r = _Redis(self.server)
        r.sadd("legacy:dupefilter", "0" * 40)
        r.close()
        with self.assertRaises(ServerError) as cm:
            BloomDupeFilter.from_spider(FakeSpider("legacy", settings_of(REDIS_URL=self.server)))
        msg = str(cm.exception)
        for words in ("legacy:dupefilter is a set of 1 members", "bloomkit import",
                      "--from-set legacy:dupefilter", "bloomkit.import_set"):
            self.assertIn(words, msg)
        self.assertEqual(redis_keys(self.redis.port, 0, "*"), ["legacy:dupefilter"])

    def test_a_recipes_bitmap_is_never_crawled_around(self):
        from scrapy_redis.dupefilter import _Redis

        from bloomkit.scrapy import BloomDupeFilter

        r = _Redis(self.server)
        r.call(b"SETBIT", b"recipe:bloom1", b"4095", b"1")
        settings = settings_of(REDIS_URL=self.server, BLOOMFILTER_REDIS_KEY="recipe:bloom",
                               BLOOMFILTER_BLOCK_NUMBER=2, BLOOMFILTER_BIT=15)
        with self.assertRaises(ValueError) as cm:
            BloomDupeFilter.from_settings(settings)
        msg = str(cm.exception)
        for words in ("recipe:bloom1, a string of 512 bytes", "cannot be imported",
                      "BLOOMFILTER_REDIS_KEY"):
            self.assertIn(words, msg)
        self.assertEqual(redis_keys(self.redis.port, 0, "*"), ["recipe:bloom1"])
        # without the bitmap, the filter is made at the key
        r.delete("recipe:bloom1")
        r.close()
        df = BloomDupeFilter.from_settings(settings)
        df.close("finished")
        self.assertIn("recipe:bloom", redis_keys(self.redis.port, 0, "*"))

    def test_an_imported_filter_fingerprints_requests_as_scrapy_redis_did(self):
        from scrapy import Request
        from scrapy_redis.dupefilter import RFPDupeFilter, _Redis

        from bloomkit import import_set
        from bloomkit.scrapy import BloomDupeFilter

        seen = [Request("http://a.example/%d" % i) for i in range(100)]
        fp = RFPDupeFilter(None, "")
        r = _Redis(self.server)
        for req in seen:
            r.sadd("old", fp.request_fingerprint(req))
        r.close()
        import_set(self.server + "/new", "old")
        self.assertEqual(redis_keys(self.redis.port, 0, "old"), ["old"])  # left as it was
        df = BloomDupeFilter.from_spider(FakeSpider("s", settings_of(
            REDIS_URL=self.server, SCHEDULER_DUPEFILTER_KEY="new")))
        self.assertIn("input=scrapy-redis", df.bloom.config)
        self.assertTrue(all(df.request_seen(req) for req in seen))
        self.assertFalse(df.request_seen(Request("http://a.example/new")))
        df.close("finished")


if __name__ == "__main__":
    unittest.main()
