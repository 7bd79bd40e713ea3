"""A stand-in for scrapy-redis (not packaged by Debian) with what the
migration tests use of it: its duplicate filter, scrapy_redis.dupefilter,
which keeps a request fingerprint per request in a Redis set. Written from
scrapy-redis's documented behaviour; a real scrapy-redis installed on the
machine is shadowed only for these tests (this folder comes first on
sys.path)."""
