"""BloomDupeFilter: Scrapy's duplicate filter on a bloomkit Bloom filter.

Set it as the crawl's duplicate filter::

    DUPEFILTER_CLASS = "bloomkit.scrapy.BloomDupeFilter"

It works under Scrapy's scheduler and under scrapy-redis's (which builds it
with ``from_spider`` and calls ``request_seen``, ``log`` and ``clear``), and it
reads the settings those users already have. All are optional.

bloomkit's own:

``BLOOMKIT_CONFIG``
    Config text of the filter made for a new crawl (default
    ``variant=expandable capacity=1000000 fpr=0.0001``: one table that grows
    with the crawl, a lookup costing one read however large it gets; through
    Redis, on a server without bloomkit's module, the scalable chain that
    stands for it). Without it, a crawl's existing state file or shared
    filter is taken as it is, whatever an earlier version made it.
``BLOOMKIT_STATE``
    A filter file: loaded when it exists (a BLOOMKIT_CONFIG that states other
    values is an error naming the first one), saved (atomically) when the
    spider closes and every ``BLOOMKIT_SAVE_EVERY`` new requests. Defaults to
    ``JOBDIR/bloomkit.bkf`` when the crawl has a JOBDIR, so a paused crawl
    resumes without fetching again what it fetched before. Without either, and
    without Redis settings, the filter lives in memory for one run.
``BLOOMKIT_SAVE_EVERY``
    New requests between two saves of the state file (default 10000; 0: only
    when the spider closes).
``BLOOMKIT_REDIS``
    A bloomkit Redis URL (``redis://host:port/NAME``): one filter shared by
    every spider and machine that names it; each request is checked and added
    in one atomic step on the server.

scrapy-redis's: ``REDIS_URL`` (``redis://[[user]:password@]host:port[/db]``
or ``unix://``), ``REDIS_HOST`` and ``REDIS_PORT`` (default localhost:6379),
``REDIS_PARAMS`` (``db``, ``password``, ``username``, ``socket_timeout``,
``socket_connect_timeout`` are applied; the redis-py client's own options are
accepted), and ``SCHEDULER_DUPEFILTER_KEY`` (default ``%(spider)s:dupefilter``:
each spider its own filter) or the older ``DUPEFILTER_KEY``. Any of them
shares the filter through that Redis server.

The Redis Bloom dupefilter recipes': ``REDIS_DUP_DB`` (or ``REDIS_DUPE_DB``),
the database; ``BLOOMFILTER_REDIS_KEY``, the filter's name;
``BLOOMFILTER_BIT`` (or ``BLOOMFILTER_BIT_SIZE``) b, ``BLOOMFILTER_HASH_NUMBER``
k and ``BLOOMFILTER_BLOCK_NUMBER`` N: a standard filter of exactly N * 2^b bits
and k hashes (config ``bits`` and ``hashes``; the recipes' defaults b = 30,
k = 6, N = 1 for those not given), split over N Redis keys of 2^b bits
(blocked layout when N > 1, so that a key's probes stay in one of them).

A setting this filter does not read that names a dupefilter option
(``BLOOMKIT_*``, ``BLOOMFILTER_*``, ``DUPEFILTER_*``, ``REDIS_DUP*``), and two
settings that contradict each other (a state file and a Redis filter, two
servers, databases, keys, or a BLOOMKIT_CONFIG that sizes the filter beside
the recipe's pins) stop the crawl at start with a ValueError naming them.

A crawl holds the state file's writer lock (``bloomkit.FileLock``) from start
to close: a second crawl naming the same file stops at start with
FileLockedError instead of overwriting the first one's saves.

Requests are identified by Scrapy's own request fingerprint (the crawler's
``request_fingerprinter``), as RFPDupeFilter does. Filtered requests are logged
like RFPDupeFilter's (the first one, or all with ``DUPEFILTER_DEBUG``) and counted
in the crawl stats as ``dupefilter/filtered``. When the spider closes (or the
filter is cleared at close, as scrapy-redis does without SCHEDULER_PERSIST) the
stats get the filter's figures: ``bloomkit/keys``, ``bloomkit/fill``,
``bloomkit/estimated_fpr`` and ``bloomkit/bytes``.
"""
from __future__ import annotations

import logging
import os
from typing import Optional

from scrapy import signals
from scrapy.dupefilters import BaseDupeFilter
from scrapy.utils.request import referer_str

from .errors import FileLockedError
from .filter import BloomFilter, FileLock
from .scrapy_settings import DEFAULT_CONFIG, STATE_NAME, Plan, resolve  # noqa: F401


def _input_of(bloom: BloomFilter) -> str:
    """The filter's input key (config ``input``): what its keys are."""
    for item in bloom.config.split():
        if item.startswith("input="):
            return item[len("input="):]
    return "raw"


class _ScrapyRedisFingerprinter:
    """Requests fingerprinted as scrapy-redis's RFPDupeFilter does (its own
    method, whatever its version), each 40-hex fingerprint held as its 20
    bytes as ``bloomkit import`` adds them: for a filter imported from
    scrapy-redis's set (``input=scrapy-redis``)."""

    def __init__(self) -> None:
        try:
            from scrapy_redis.dupefilter import RFPDupeFilter
        except ImportError:
            raise ValueError(
                "the filter holds scrapy-redis's request fingerprints (input=scrapy-redis: "
                "imported from its set), and scrapy-redis is not installed here: install it, "
                "so that requests are fingerprinted as the set's were") from None
        self._df = RFPDupeFilter(None, "")  # only its request_fingerprint is used

    def fingerprint(self, request) -> bytes:
        fp = self._df.request_fingerprint(request)
        if isinstance(fp, bytes):
            fp = fp.decode("ascii", "replace")
        if len(fp) != 40:
            raise ValueError("scrapy-redis fingerprinted %r as %r, not 40 hex digits"
                             % (request, fp))
        return bytes.fromhex(fp)


def _fingerprinter_for(bloom: BloomFilter, crawler_fingerprinter):
    """The fingerprinter the filter's keys were made with: scrapy-redis's
    for a filter imported from its set, else the crawler's (Scrapy's)."""
    if _input_of(bloom) == "scrapy-redis":
        return _ScrapyRedisFingerprinter()
    return crawler_fingerprinter


def _refuse_recipe_bitmaps(plan: Plan) -> None:
    """A Bloom dupefilter recipe's bitmaps at the settings' key, and no
    bloomkit filter there yet: stop, rather than crawl again beside them."""
    url, name = plan.redis_url, plan.recipe_name
    if not plan.recipe_bitmaps or url is None or name is None:
        return
    if BloomFilter._key_type(url, name)[0] != "none":
        return  # bloomkit's filter (or something it reports on opening) is there
    for key in plan.recipe_bitmaps:
        kind, size = BloomFilter._key_type(url, key)
        if kind == "none":
            continue
        raise ValueError(
            "BLOOMFILTER_REDIS_KEY: Redis holds %s, a %s of %d %s: the bitmap of a Bloom "
            "dupefilter recipe, whose crawl it remembers. Its bits cannot be imported into "
            "bloomkit (they were set by another hashing), so bloomkit does not start a filter "
            "beside it that knows none of those requests. Finish that crawl with the recipe, "
            "or accept fetching again what it fetched: delete %s (and its other blocks), or "
            "give bloomkit another BLOOMFILTER_REDIS_KEY"
            % (key, kind, size, "bytes" if kind == "string" else "entries", key))


class BloomDupeFilter(BaseDupeFilter):
    """Scrapy duplicate filter backed by a bloomkit filter (see the module)."""

    def __init__(
        self,
        bloom: BloomFilter,
        state: Optional[str] = None,
        save_every: int = 10000,
        debug: bool = False,
        fingerprinter=None,
        file_lock: Optional[FileLock] = None,
        stats=None,
    ) -> None:
        self.bloom = bloom
        self.state = state
        self.save_every = save_every
        self.debug = debug
        self.logdupes = True
        self.logger = logging.getLogger(__name__)
        self._since_save = 0
        self.fingerprinter = fingerprinter  # None (no crawler): Scrapy's default
        self._file_lock = file_lock  # held from open to close when there is a state
        self.stats = stats  # the crawl's stats collector, when built from a crawler
        self._unreported = False  # requests seen since the figures went to the stats
        self._closed = False

    def request_fingerprint(self, request) -> bytes:
        if self.fingerprinter is None:
            from scrapy.utils.request import fingerprint

            return fingerprint(request)
        return self.fingerprinter.fingerprint(request)

    @classmethod
    def from_settings(cls, settings, *, fingerprinter=None, spider_name=None,
                      crawler=None) -> "BloomDupeFilter":
        plan = resolve(settings, spider_name)
        file_lock = None
        if plan.redis_url:
            _refuse_recipe_bitmaps(plan)
            if plan.config_stated:
                bloom = BloomFilter.redis(plan.redis_url, plan.config)
            else:  # the default: any filter already there (an earlier crawl's) as it is
                bloom = BloomFilter._opened(
                    BloomFilter._redis(plan.redis_url, plan.config, True), plan.redis_url)
        else:
            if plan.state:
                # the state's writer lock, for the whole crawl: a second crawl
                # on the same file would overwrite this one's saves
                try:
                    file_lock = FileLock(plan.state, wait=False)
                except FileLockedError as e:
                    raise FileLockedError(
                        e.code,
                        "BLOOMKIT_STATE %s is in use by another crawl (%s); give each "
                        "crawl its own state file, or share one filter through "
                        "BLOOMKIT_REDIS" % (plan.state, e),
                    ) from None
            try:
                bloom = cls._open_state(plan)
            except BaseException:
                if file_lock:
                    file_lock.release()
                raise
        try:
            fingerprinter = _fingerprinter_for(bloom, fingerprinter)
        except BaseException:
            bloom.close()
            if file_lock:
                file_lock.release()
            raise
        df = cls(
            bloom,
            state=plan.state,
            save_every=plan.save_every,
            debug=plan.debug,
            fingerprinter=fingerprinter,
            file_lock=file_lock,
            stats=getattr(crawler, "stats", None),
        )
        if crawler is not None and getattr(crawler, "signals", None) is not None:
            # scrapy-redis's scheduler never calls close(): the spider's end does
            crawler.signals.connect(df._spider_closed, signal=signals.spider_closed)
        return df

    @staticmethod
    def _open_state(plan: Plan) -> BloomFilter:
        """The crawl's filter, in this process's memory: holding each
        fingerprint once (a counting or cuckoo filter would otherwise keep a
        count or a copy per duplicate request)."""
        if not plan.state or not os.path.exists(plan.state):
            bloom = BloomFilter(plan.config)
            bloom.set_add_once(True)
            return bloom
        bloom = BloomFilter.load(plan.state)
        bloom.set_add_once(True)
        diff = bloom.differs_from(plan.config) if plan.config_stated else None
        if diff:
            bloom.close()
            raise ValueError(
                "BLOOMKIT_STATE %s holds a filter with another %s than the settings "
                "state; remove the file for a new crawl, or drop the setting to adopt "
                "the file's" % (plan.state, diff)
            )
        return bloom

    @classmethod
    def from_crawler(cls, crawler) -> "BloomDupeFilter":
        spider = getattr(crawler, "spider", None)
        return cls.from_settings(
            crawler.settings,
            fingerprinter=getattr(crawler, "request_fingerprinter", None),
            spider_name=getattr(spider, "name", None),
            crawler=crawler,
        )

    @classmethod
    def from_spider(cls, spider) -> "BloomDupeFilter":
        """The constructor scrapy-redis's scheduler calls: the spider's
        settings, with its name for SCHEDULER_DUPEFILTER_KEY's %(spider)s."""
        crawler = getattr(spider, "crawler", None)
        return cls.from_settings(
            spider.settings,
            fingerprinter=getattr(crawler, "request_fingerprinter", None),
            spider_name=spider.name,
            crawler=crawler,
        )

    def open(self) -> None:
        """Scrapy's scheduler calls it when the spider opens; the filter is
        ready from construction, so there is nothing to do."""

    def request_seen(self, request) -> bool:
        """True when the request was seen before (or is a false positive, at the
        configured rate); otherwise it is added and False is returned."""
        self._unreported = True
        if not self.bloom.add(self.request_fingerprint(request)):
            return True
        if self.state and self.save_every > 0:
            self._since_save += 1
            if self._since_save >= self.save_every:
                self.save()
        return False

    def report(self) -> None:
        """Put the filter's figures in the crawl stats (when built from a
        crawler): bloomkit/keys, bloomkit/fill, bloomkit/estimated_fpr,
        bloomkit/bytes."""
        if self.stats is None:
            return
        st = self.bloom.stats()
        for name, value in (("keys", st["keys"]), ("fill", st["fill"]),
                            ("estimated_fpr", st["est_fpr"]), ("bytes", st["bytes"])):
            self.stats.set_value("bloomkit/" + name, value)
        self._unreported = False

    def clear(self) -> None:
        """Forget every request (scrapy-redis calls it at close without
        SCHEDULER_PERSIST, and at open with SCHEDULER_FLUSH_ON_START); the
        figures of what it held first go to the stats."""
        if self._unreported:
            self.report()
        self.bloom.clear()

    def save(self) -> None:
        """Write the state file now (atomically)."""
        if self.state:
            self.bloom.save(self.state)
            self._since_save = 0

    def close(self, reason: str) -> None:
        """Report, save the state, release the filter and the file's lock.
        Once; later calls do nothing."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._unreported or (self.stats is not None
                                    and self.stats.get_value("bloomkit/keys") is None):
                self.report()
            self.save()
        finally:
            try:
                self.bloom.close()
            finally:
                if self._file_lock:
                    self._file_lock.release()

    def _spider_closed(self, spider, reason) -> None:
        self.close(reason)

    def log(self, request, spider) -> None:
        if self.debug:
            msg = "Filtered duplicate request: %(request)s (referer: %(referer)s)"
            args = {"request": request, "referer": referer_str(request)}
            self.logger.debug(msg, args, extra={"spider": spider})
        elif self.logdupes:
            msg = (
                "Filtered duplicate request: %(request)s"
                " - no more duplicates will be shown"
                " (see DUPEFILTER_DEBUG to show all duplicates)"
            )
            self.logger.debug(msg, {"request": request}, extra={"spider": spider})
            self.logdupes = False
        spider.crawler.stats.inc_value("dupefilter/filtered", spider=spider)
