"""Real crawls with Scrapy (Debian's python3-scrapy) and BloomDupeFilter
against a local 2,000-page site whose links form cycles and repeats. The
server's access log is the judge: which page was fetched how often."""
import importlib.util
import os
import shutil
import time
import unittest

from helpers import RedisServer, Site, crawl, finish, have_redis, release, scratch

PAGES = 2000
# Large enough that a false positive among 2,000 pages is unlikely (about
# 2000^2/2 * 1e-6 / capacity-share: far below one), and fixed, so the
# runs repeat exactly.
CONFIG = "variant=scalable capacity=100000 fpr=0.000001 key=0f0e0d0c0b0a09080706050403020100"


@unittest.skipUnless(importlib.util.find_spec("scrapy"), "Scrapy is not installed (python3-scrapy)")
class CrawlTest(unittest.TestCase):
    def setUp(self):
        self.dir = scratch()
        self.site = Site(self.dir, PAGES)

    def tearDown(self):
        self.site.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def assert_each_page_once(self, fetches, missing_allowed=0):
        twice = {p: n for p, n in fetches.items() if n > 1}
        self.assertEqual(twice, {}, "pages fetched more than once")
        missing = PAGES - len(fetches)
        self.assertLessEqual(missing, missing_allowed)
        return missing

    def test_every_page_fetched_exactly_once(self):
        stats = crawl(self.dir, "one", [self.site.url(0)], {"BLOOMKIT_CONFIG": CONFIG})
        fetches = self.site.fetches()
        self.assert_each_page_once(fetches)
        self.assertEqual(stats["finish_reason"], "finished")
        # 5 links per page, each page fetched once: all the others filtered
        self.assertEqual(stats["dupefilter/filtered"], PAGES * 5 - (PAGES - 1))
        # and the filter's figures, put in the stats at close
        self.assertEqual(stats["bloomkit/keys"], PAGES)
        self.assertLess(stats["bloomkit/estimated_fpr"], 1e-6)
        self.assertGreater(stats["bloomkit/bytes"], 0)
        print("\n[scrapy crawl] %d pages fetched once each, %d duplicate requests filtered"
              % (len(fetches), stats["dupefilter/filtered"]))

    def test_a_window_refetches_pages_once_it_has_passed(self):
        """variant=window in the crawl's state: a second crawl inside the
        window fetches nothing again; one after it fetches every page once
        more. The crawls read a clock the test sets (crawl.py --now), so how
        long a crawl takes on this machine does not matter: the first runs
        at T, the second at T + 14 s (inside the 15 s window), the third at
        T + 17 s (pages are forgotten 15 to 16 s after their fetch)."""
        self.site.stop()
        self.site = Site(self.dir, 300)
        jobdir = os.path.join(self.dir, "job")
        config = "variant=window window=15s generations=15 capacity=100000 fpr=0.000001"
        settings = {"BLOOMKIT_CONFIG": config, "JOBDIR": jobdir}
        t0 = int(time.time() * 1000)
        first = crawl(self.dir, "w1", [self.site.url(0)], settings, now_ms=t0)
        self.assertEqual(first["finish_reason"], "finished")
        self.assertEqual(len(self.site.fetches()), 300)
        again = crawl(self.dir, "w2", [self.site.url(0)], settings, now_ms=t0 + 14000)
        self.assertEqual(sum(self.site.fetches().values()), 300, "refetched inside the window")
        self.assertEqual(again.get("downloader/request_count", 0), 0)
        third = crawl(self.dir, "w3", [self.site.url(0)], settings, now_ms=t0 + 17000)
        self.assertEqual(third["finish_reason"], "finished")
        fetches = self.site.fetches()
        self.assertEqual(set(fetches.values()), {2}, "every page fetched again, once")
        print("\n[scrapy window] 300 pages: crawl 1 fetched all, crawl 2 (14 s later by the "
              "test's clock, inside the 15 s window) none, crawl 3 (17 s) all again")

    def test_paused_crawl_resumes_without_refetching(self):
        jobdir = os.path.join(self.dir, "job")
        first = crawl(self.dir, "first", [self.site.url(0)],
                      {"BLOOMKIT_CONFIG": CONFIG, "JOBDIR": jobdir, "CLOSESPIDER_PAGECOUNT": PAGES // 2})
        self.assertEqual(first["finish_reason"], "closespider_pagecount")
        self.assertTrue(os.path.exists(os.path.join(jobdir, "bloomkit.bkf")))
        half = sum(self.site.fetches().values())
        self.assertLess(half, PAGES)
        second = crawl(self.dir, "second", [self.site.url(0)],
                       {"BLOOMKIT_CONFIG": CONFIG, "JOBDIR": jobdir})
        self.assertEqual(second["finish_reason"], "finished")
        fetches = self.site.fetches()
        self.assert_each_page_once(fetches)
        print("\n[scrapy resume] %d pages in the first run, %d in the second, none twice"
              % (half, sum(fetches.values()) - half))

    @unittest.skipUnless(have_redis(), "no redis-server, or a binding built without hiredis")
    def test_two_spiders_share_one_filter_through_redis(self):
        redis = RedisServer(self.dir)
        try:
            settings = {"BLOOMKIT_CONFIG": CONFIG, "BLOOMKIT_REDIS": redis.url("crawl")}
            # both start at once, from 50 pages each at opposite ends of the site
            go = os.path.join(self.dir, "go")
            a = crawl(self.dir, "a", [self.site.url(i) for i in range(50)], settings,
                      background=True, barrier=go)
            b = crawl(self.dir, "b", [self.site.url(PAGES // 2 + i) for i in range(50)], settings,
                      background=True, barrier=go)
            release(go, [a, b])
            sa = finish(a, a.stats_path, self.dir, "a")
            sb = finish(b, b.stats_path, self.dir, "b")
        finally:
            redis.stop()
        fetches = self.site.fetches()
        # a page no spider fetched was taken for seen (a false positive), or
        # its download failed (retries are off): the crawl stats count those
        failed = sa.get("downloader/exception_count", 0) + sb.get("downloader/exception_count", 0)
        missing = PAGES - len(fetches)
        self.assertLessEqual(missing - failed, 2,
                             "%d pages never fetched, %d downloads failed: %s / %s"
                             % (missing, failed, sa, sb))
        false_positives = self.assert_each_page_once(fetches, missing_allowed=missing)
        na = sa.get("downloader/response_count", 0)
        nb = sb.get("downloader/response_count", 0)
        self.assertGreater(na, 0)
        self.assertGreater(nb, 0)
        self.assertEqual(na + nb, len(fetches))
        print("\n[scrapy redis] spider A %d pages, spider B %d, union %d of %d, none twice, "
              "%d lost to false positives, %d to failed downloads"
              % (na, nb, len(fetches), PAGES, false_positives - failed, failed))


@unittest.skipUnless(importlib.util.find_spec("scrapy"), "Scrapy is not installed (python3-scrapy)")
class DupeFilterSettingsTest(unittest.TestCase):
    """BloomDupeFilter.from_settings without a crawl: where the state goes."""

    def setUp(self):
        self.dir = scratch()

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def make(self, **settings):
        from scrapy.settings import Settings

        from bloomkit.scrapy import BloomDupeFilter

        return BloomDupeFilter.from_settings(Settings(settings))

    def test_state_defaults_into_jobdir_and_is_reloaded(self):
        from scrapy import Request

        job = os.path.join(self.dir, "job")
        os.mkdir(job)
        f = self.make(JOBDIR=job, BLOOMKIT_CONFIG=CONFIG)
        self.assertEqual(f.state, os.path.join(job, "bloomkit.bkf"))
        self.assertFalse(f.request_seen(Request("http://a.example/1")))
        self.assertTrue(f.request_seen(Request("http://a.example/1")))
        f.close("finished")
        g = self.make(JOBDIR=job)  # adopts the file's configuration
        self.assertTrue(g.request_seen(Request("http://a.example/1")))
        self.assertFalse(g.request_seen(Request("http://a.example/2")))
        g.close("finished")
        with self.assertRaises(ValueError) as cm:
            self.make(JOBDIR=job, BLOOMKIT_CONFIG="variant=counting")
        self.assertIn("variant", str(cm.exception))

    def test_without_jobdir_or_state_the_filter_is_in_memory(self):
        f = self.make()
        self.assertIsNone(f.state)
        self.assertEqual(f.bloom.stats()["variant"], "expandable")  # the default: one table
        f.close("finished")
        self.assertEqual(os.listdir(self.dir), [])

    def test_a_state_of_the_earlier_default_loads_and_answers_as_before(self):
        from scrapy import Request

        import bloomkit

        # what an earlier version saved for a crawl with the default (a chain)
        f = self.make()
        fp = f.request_fingerprint(Request("http://a.example/1"))
        f.close("finished")
        state = os.path.join(self.dir, "old.bkf")
        old = bloomkit.BloomFilter("variant=scalable capacity=1000000 fpr=0.0001")
        old.add(fp)
        old.save(state)
        old.close()
        g = self.make(BLOOMKIT_STATE=state)
        self.assertEqual(g.bloom.stats()["variant"], "scalable")  # taken as it is
        self.assertTrue(g.request_seen(Request("http://a.example/1")))
        self.assertFalse(g.request_seen(Request("http://a.example/2")))
        g.close("finished")

    @unittest.skipUnless(have_redis(), "no redis-server, or a binding built without hiredis")
    def test_the_default_through_redis_without_the_module_is_a_chain(self):
        import bloomkit

        redis = RedisServer(self.dir)
        try:
            f = self.make(BLOOMKIT_REDIS=redis.url("crawl"))
            self.assertEqual(f.bloom.stats()["variant"], "scalable")  # the Lua mode's
            f.close("finished")
            # an earlier crawl's shared filter (any configuration) is taken as it is
            bloomkit.BloomFilter.redis(redis.url("older"), "variant=standard capacity=5000")
            g = self.make(BLOOMKIT_REDIS=redis.url("older"))
            self.assertEqual(g.bloom.stats()["variant"], "standard")
            g.close("finished")
        finally:
            redis.stop()


if __name__ == "__main__":
    unittest.main()
