"""scrapy-redis's RFPDupeFilter as the migration tests need it: built with
from_spider(spider) (REDIS_URL, SCHEDULER_DUPEFILTER_KEY with %(spider)s,
default "%(spider)s:dupefilter"), request_seen adds the request's
fingerprint to the set at the key (SADD: seen when it was there), the
fingerprint being the SHA-1, in hex, of the request's method, canonical URL
and body as sorted JSON, as scrapy-redis's releases since 0.8 make it (no
headers: not Scrapy's own fingerprint)."""
import hashlib
import json
import socket
from urllib.parse import urlparse

from scrapy.dupefilters import BaseDupeFilter
from w3lib.url import canonicalize_url


class _Redis:
    """Just SADD and DEL over RESP: the tests need no Redis client package."""

    def __init__(self, url: str):
        u = urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port or 6379), timeout=30)
        self.f = self.sock.makefile("rb")
        if u.path.strip("/"):
            self.call(b"SELECT", u.path.strip("/").encode())

    def call(self, *args: bytes):
        msg = b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)
        self.sock.sendall(msg)
        line = self.f.readline()
        if line[:1] == b"-":
            raise RuntimeError(line[1:].strip().decode())
        return int(line[1:]) if line[:1] == b":" else line[1:].strip()

    def close(self) -> None:
        self.f.close()
        self.sock.close()

    def sadd(self, key: str, member: str) -> int:
        return self.call(b"SADD", key.encode(), member.encode())

    def delete(self, key: str) -> int:
        return self.call(b"DEL", key.encode())


class RFPDupeFilter(BaseDupeFilter):
    def __init__(self, server, key, debug=False):
        self.server = server
        self.key = key
        self.debug = debug

    @classmethod
    def from_spider(cls, spider):
        settings = spider.settings
        key = settings.get("SCHEDULER_DUPEFILTER_KEY", "%(spider)s:dupefilter")
        return cls(_Redis(settings.get("REDIS_URL")), key % {"spider": spider.name})

    def request_seen(self, request) -> bool:
        return self.server.sadd(self.key, self.request_fingerprint(request)) == 0

    def request_fingerprint(self, request) -> str:
        data = {
            "method": request.method if isinstance(request.method, str)
            else request.method.decode(),
            "url": canonicalize_url(request.url),
            "body": (request.body or b"").hex(),
        }
        return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()

    def clear(self) -> None:
        self.server.delete(self.key)

    def log(self, request, spider) -> None:
        spider.crawler.stats.inc_value("dupefilter/filtered", spider=spider)
