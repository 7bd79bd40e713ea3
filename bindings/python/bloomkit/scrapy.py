"""BloomDupeFilter: Scrapy's duplicate filter on a bloomkit Bloom filter.

Set it as the crawl's duplicate filter::

    DUPEFILTER_CLASS = "bloomkit.scrapy.BloomDupeFilter"

Settings (all optional):

``BLOOMKIT_CONFIG``
    Config text of the filter made for a new crawl (default
    ``variant=scalable capacity=1000000 fpr=0.0001``: it grows with the crawl).
``BLOOMKIT_STATE``
    A filter file: loaded when it exists (a BLOOMKIT_CONFIG that states other
    values is an error naming the first one), saved (atomically) when the
    spider closes and every ``BLOOMKIT_SAVE_EVERY`` new requests. Defaults to
    ``JOBDIR/bloomkit.bkf`` when the crawl has a JOBDIR, so a paused crawl
    resumes without fetching again what it fetched before. Without either, the
    filter lives in memory for one run.
``BLOOMKIT_SAVE_EVERY``
    New requests between two saves of the state file (default 10000; 0: only
    when the spider closes).
``BLOOMKIT_REDIS``
    A Redis URL (``redis://host:port/NAME``): one filter shared by every spider
    and machine that names it; each request is checked and added in one atomic
    step on the server. Takes the place of BLOOMKIT_STATE (Redis keeps it).

A crawl holds the state file's writer lock (``bloomkit.FileLock``) from start
to close: a second crawl naming the same file stops at start with
FileLockedError instead of overwriting the first one's saves.

Requests are identified by Scrapy's own request fingerprint (the crawler's
``request_fingerprinter``), as RFPDupeFilter does. Filtered requests are logged
like RFPDupeFilter's (the first one, or all with ``DUPEFILTER_DEBUG``) and counted
in the crawl stats as ``dupefilter/filtered``.
"""
from __future__ import annotations

import logging
import os
from typing import Optional

from scrapy.dupefilters import BaseDupeFilter
from scrapy.utils.job import job_dir
from scrapy.utils.request import referer_str

from .errors import FileLockedError
from .filter import BloomFilter, FileLock

DEFAULT_CONFIG = "variant=scalable capacity=1000000 fpr=0.0001"
STATE_NAME = "bloomkit.bkf"


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

    def request_fingerprint(self, request) -> bytes:
        if self.fingerprinter is None:
            from scrapy.utils.request import fingerprint

            return fingerprint(request)
        return self.fingerprinter.fingerprint(request)

    @classmethod
    def from_settings(cls, settings, *, fingerprinter=None) -> "BloomDupeFilter":
        config = settings.get("BLOOMKIT_CONFIG") or DEFAULT_CONFIG
        redis_url = settings.get("BLOOMKIT_REDIS")
        state = settings.get("BLOOMKIT_STATE")
        if not state and not redis_url:
            jobdir = job_dir(settings)
            if jobdir:
                state = os.path.join(jobdir, STATE_NAME)
        file_lock = None
        if redis_url:
            bloom = BloomFilter.redis(redis_url, config)
            state = None
        else:
            if state:
                # the state's writer lock, for the whole crawl: a second crawl
                # on the same file would overwrite this one's saves
                try:
                    file_lock = FileLock(state, wait=False)
                except FileLockedError as e:
                    raise FileLockedError(
                        e.code,
                        "BLOOMKIT_STATE %s is in use by another crawl (%s); give each "
                        "crawl its own state file, or share one filter through "
                        "BLOOMKIT_REDIS" % (state, e),
                    ) from None
            try:
                bloom = cls._open_state(state, config, settings.get("BLOOMKIT_CONFIG"))
            except BaseException:
                if file_lock:
                    file_lock.release()
                raise
        return cls(
            bloom,
            state=state,
            save_every=settings.getint("BLOOMKIT_SAVE_EVERY", 10000),
            debug=settings.getbool("DUPEFILTER_DEBUG"),
            fingerprinter=fingerprinter,
            file_lock=file_lock,
        )

    @staticmethod
    def _open_state(state: Optional[str], config: str, stated: Optional[str]) -> BloomFilter:
        if not state or not os.path.exists(state):
            return BloomFilter(config)
        bloom = BloomFilter.load(state)
        diff = bloom.differs_from(stated) if stated else None
        if diff:
            bloom.close()
            raise ValueError(
                "BLOOMKIT_STATE %s holds a filter with another %s than BLOOMKIT_CONFIG "
                "states; remove the file for a new crawl, or drop the setting to adopt "
                "the file's" % (state, diff)
            )
        return bloom

    @classmethod
    def from_crawler(cls, crawler) -> "BloomDupeFilter":
        return cls.from_settings(
            crawler.settings, fingerprinter=getattr(crawler, "request_fingerprinter", None)
        )

    def request_seen(self, request) -> bool:
        """True when the request was seen before (or is a false positive, at the
        configured rate); otherwise it is added and False is returned."""
        if not self.bloom.add(self.request_fingerprint(request)):
            return True
        if self.state and self.save_every > 0:
            self._since_save += 1
            if self._since_save >= self.save_every:
                self.save()
        return False

    def save(self) -> None:
        """Write the state file now (atomically)."""
        if self.state:
            self.bloom.save(self.state)
            self._since_save = 0

    def close(self, reason: str) -> None:
        try:
            self.save()
        finally:
            try:
                self.bloom.close()
            finally:
                if self._file_lock:
                    self._file_lock.release()

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
