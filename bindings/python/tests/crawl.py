"""Run one Scrapy crawl of the test site with BloomDupeFilter.

usage: python3 crawl.py STATS_JSON START_URL [START_URL...] [-s NAME=VALUE ...]
                       [--barrier PATH] [--now MS]
Writes the crawl's stats (JSON) to STATS_JSON when it ends. With --now, every
window filter of the crawl reads that time (ms since the epoch: the test's
clock, bloomkit.set_clock) instead of the system's. With --barrier,
the spider creates PATH.ready-PID when it is about to send its first request
and waits until PATH exists (the test creates it once every crawler is ready).
"""
import json
import os
import sys
import time

import scrapy
from scrapy.crawler import CrawlerProcess


class SiteSpider(scrapy.Spider):
    name = "site"

    def __init__(self, starts=(), barrier=None, **kw):
        super().__init__(**kw)
        self.starts = list(starts)
        self.barrier = barrier

    def start_requests(self):
        if self.barrier:  # start together with the other crawlers of the test
            open(self.barrier + ".ready-%d" % os.getpid(), "w").close()
            while not os.path.exists(self.barrier):
                time.sleep(0.005)
        # filtered like any other request (Scrapy's default is dont_filter=True
        # for start URLs): a resumed or second crawler must not fetch them again
        for url in self.starts:
            yield scrapy.Request(url, callback=self.parse, dont_filter=False)

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)


def main() -> None:
    out, rest = sys.argv[1], sys.argv[2:]
    starts, barrier, settings = [], None, {
        "DUPEFILTER_CLASS": "bloomkit.scrapy.BloomDupeFilter",
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "COOKIES_ENABLED": False,
        "RETRY_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 64,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }
    i = 0
    while i < len(rest):
        if rest[i] == "--barrier":
            barrier = rest[i + 1]
            i += 2
        elif rest[i] == "--now":
            import bloomkit
            bloomkit.set_clock(int(rest[i + 1]))
            i += 2
        elif rest[i] == "-s":
            name, value = rest[i + 1].split("=", 1)
            settings[name] = value
            i += 2
        else:
            starts.append(rest[i])
            i += 1
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SiteSpider)
    process.crawl(crawler, starts=starts, barrier=barrier)
    process.start()
    stats = {k: (v if isinstance(v, (int, float, str)) else str(v))
             for k, v in crawler.stats.get_stats().items()}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(stats, f)


if __name__ == "__main__":
    main()
