"""A scheduler that drives the duplicate filter exactly as scrapy-redis's
Scheduler does (its documented protocol: the filter class is DUPEFILTER_CLASS,
built with from_spider(spider) when the spider opens; request_seen, then log
for a duplicate; clear() at close unless SCHEDULER_PERSIST, and at open with
SCHEDULER_FLUSH_ON_START; open() and close() of the filter never called),
with the request queue in memory: the tests have no scrapy-redis package.
With SCHEDULER_QUEUE_FILE (the tests' own) the queue's URLs persist there
across crawls when SCHEDULER_PERSIST, as scrapy-redis's queue persists in
Redis: requests once seen and not yet fetched are fetched by the next crawl."""
import json
import os
from collections import deque

from scrapy import Request

from scrapy.utils.misc import load_object


class Scheduler:
    def __init__(self, crawler):
        self.crawler = crawler
        settings = crawler.settings
        self.persist = settings.getbool("SCHEDULER_PERSIST")
        self.flush_on_start = settings.getbool("SCHEDULER_FLUSH_ON_START")
        self.dupefilter_cls = settings.get("DUPEFILTER_CLASS")
        self.queue_file = settings.get("SCHEDULER_QUEUE_FILE")
        self.queue = deque()
        self.df = None
        self.spider = None

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def open(self, spider):
        self.spider = spider
        self.df = load_object(self.dupefilter_cls).from_spider(spider)
        if self.flush_on_start:
            self.df.clear()
        if self.queue_file and os.path.exists(self.queue_file):
            with open(self.queue_file, encoding="utf-8") as f:
                self.queue.extend(Request(u, callback=spider.parse, dont_filter=True)
                                  for u in json.load(f))
            os.remove(self.queue_file)

    def close(self, reason):
        if not self.persist:
            self.df.clear()
        elif self.queue_file:
            with open(self.queue_file, "w", encoding="utf-8") as f:
                json.dump([r.url for r in self.queue], f)

    def enqueue_request(self, request):
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        self.queue.append(request)
        return True

    def next_request(self):
        return self.queue.popleft() if self.queue else None

    def has_pending_requests(self):
        return len(self.queue) > 0

    def __len__(self):
        return len(self.queue)
