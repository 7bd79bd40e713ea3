"""Where BloomDupeFilter's filter lives and what it is, from a crawl's
settings: bloomkit's own (BLOOMKIT_*), scrapy-redis's (REDIS_URL, REDIS_HOST,
REDIS_PORT, REDIS_PARAMS, SCHEDULER_DUPEFILTER_KEY) and the Redis Bloom
dupefilter recipes' (REDIS_DUP_DB, BLOOMFILTER_REDIS_KEY,
BLOOMFILTER_BLOCK_NUMBER, BLOOMFILTER_HASH_NUMBER, BLOOMFILTER_BIT).

One function, `resolve`, reads them all. A setting it does not know that
names a dupefilter option, and two settings that contradict each other, are a
ValueError naming them: the crawl stops at start instead of running with a
filter other than the one asked for.
"""
from __future__ import annotations

import ipaddress
import math
import os
import re
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple
from urllib.parse import parse_qs, quote, unquote, urlsplit

from ._native import config_preset

# a crawler's seen-URL filter: the library's preset, as `bloomkit dedup` has it
DEFAULT_CONFIG = config_preset("crawler")
STATE_NAME = "bloomkit.bkf"

# scrapy-redis's default key of a spider's dupefilter, and its host and port
SCRAPY_REDIS_KEY = "%(spider)s:dupefilter"
REDIS_HOST = "localhost"
REDIS_PORT = 6379
# the recipes' defaults: 2^30 bits in one block, 6 hashes
RECIPE_BIT = 30
RECIPE_HASHES = 6

# Settings read here, and the prefixes under which any other name is taken
# for a dupefilter option this filter does not know.
KNOWN = {
    "BLOOMKIT_CONFIG", "BLOOMKIT_STATE", "BLOOMKIT_SAVE_EVERY", "BLOOMKIT_REDIS",
    "BLOOMFILTER_REDIS_KEY", "BLOOMFILTER_BLOCK_NUMBER", "BLOOMFILTER_HASH_NUMBER",
    "BLOOMFILTER_BIT", "BLOOMFILTER_BIT_SIZE",
    "DUPEFILTER_CLASS", "DUPEFILTER_DEBUG", "DUPEFILTER_KEY",
    "SCHEDULER_DUPEFILTER_KEY", "SCHEDULER_DUPEFILTER_CLASS",
    "REDIS_DUP_DB", "REDIS_DUPE_DB",
}
DUPEFILTER_PREFIXES = ("BLOOMKIT_", "BLOOMFILTER_", "DUPEFILTER_", "SCHEDULER_DUPEFILTER_",
                       "REDIS_DUP")
WHY_NOT = {
    "BLOOMFILTER_HASH_SEEDS": "bloomkit hashes with keyed SipHash, not seeded hashes: give "
                              "BLOOMFILTER_HASH_NUMBER (the number of seeds) instead",
}
# REDIS_PARAMS entries: applied, or about the client object only (no bearing
# on where the filter is or what it holds)
PARAMS_APPLIED = {"db", "password", "username", "socket_timeout", "socket_connect_timeout"}
PARAMS_CLIENT_ONLY = {"retry_on_timeout", "encoding", "encoding_errors", "decode_responses",
                      "redis_cls", "health_check_interval", "socket_keepalive",
                      "socket_keepalive_options", "max_connections", "client_name"}


@dataclass
class Plan:
    """The filter to open: in Redis at `redis_url`, or local (`state`: a file
    to load and save, or None: memory). `config`: its config text;
    `config_stated`: whether the settings stated it (an existing filter must
    agree with a stated one). `recipe_bitmaps`: where a Bloom dupefilter
    recipe named by the same settings keeps its bitmaps (BLOOMFILTER_REDIS_KEY
    and the block number), which the filter must not be made beside."""
    config: str
    config_stated: bool
    redis_url: Optional[str] = None
    state: Optional[str] = None
    save_every: int = 10000
    debug: bool = False
    recipe_name: Optional[str] = None
    recipe_bitmaps: Tuple[str, ...] = ()


def _user_set(settings, name: str) -> bool:
    """True when the crawl (not Scrapy's defaults) gives the setting."""
    if settings.get(name) is None:
        return False
    try:
        from scrapy.settings import SETTINGS_PRIORITIES

        return settings.getpriority(name) > SETTINGS_PRIORITIES["default"]
    except (ImportError, AttributeError, KeyError):
        return True


def _given(settings, *names: str) -> Dict[str, Any]:
    """The named settings the crawl gives, with their values."""
    return {n: settings.get(n) for n in names if _user_set(settings, n)}


def _one(found: Dict[str, Any], what: str, norm=lambda v: v):
    """The one value several settings give for `what` (None: none does);
    a ValueError naming them when they disagree."""
    values = {n: norm(v) for n, v in found.items()}
    if len(set(map(repr, values.values()))) > 1:
        raise ValueError("settings %s contradict each other (%s): give %s once"
                         % (" and ".join(sorted(values)),
                            ", ".join("%s=%r" % (n, found[n]) for n in sorted(found)), what))
    return next(iter(values.values()), None)


def _int(name: str, value, lo: int, hi: int) -> int:
    """value (an int, or a str of ASCII digits: str.isdigit() also takes
    '²', which int() refuses) as an int in lo .. hi."""
    if isinstance(value, bool) or not (
            isinstance(value, int)
            or (isinstance(value, str) and re.fullmatch(r"\s*[0-9]+\s*", value))):
        raise ValueError("%s=%r is not a whole number" % (name, value))
    v = int(value)
    if not lo <= v <= hi:
        raise ValueError("%s=%d is outside %d .. %d" % (name, v, lo, hi))
    return v


def check_unknown(settings) -> None:
    """A ValueError naming every setting the crawl gives that looks like a
    dupefilter option and is not one this filter reads."""
    unknown = []
    for name in settings:
        if name in KNOWN or not name.startswith(DUPEFILTER_PREFIXES):
            continue
        if _user_set(settings, name):
            unknown.append(name)
    if unknown:
        raise ValueError(
            "bloomkit.scrapy.BloomDupeFilter does not read %s: %s" % (
                " and ".join(sorted(unknown)),
                "; ".join(WHY_NOT.get(n, "%s is not a setting of it (a typo?)" % n)
                          for n in sorted(unknown))))


def _redis_url(settings, name: str, block_bytes: Optional[int]) -> str:
    """bloomkit's URL of the filter NAME on the server the scrapy-redis and
    recipe settings name."""
    host = port = scheme = user = password = socket = None
    db_found: Dict[str, Any] = {}
    pw_found: Dict[str, Any] = {}
    options: Dict[str, Any] = {}
    url = settings.get("REDIS_URL") if _user_set(settings, "REDIS_URL") else None
    if url:
        u = urlsplit(url)
        scheme = u.scheme
        try:
            u.port
        except ValueError:
            raise ValueError("REDIS_URL=%r: its port is not a number in 1 .. 65535" % url) \
                from None
        if scheme not in ("redis", "unix"):
            raise ValueError("REDIS_URL=%r: bloomkit connects to redis:// and unix:// (a %s:// "
                             "server needs TLS, which its client does not speak)" % (url, scheme))
        if scheme == "redis":
            host, port = u.hostname, u.port
            if u.path.strip("/"):
                db_found["REDIS_URL (path)"] = u.path.strip("/")
        else:
            socket = u.path
        user = unquote(u.username) if u.username else None
        if u.password:
            pw_found["REDIS_URL"] = unquote(u.password)
        for k, v in parse_qs(u.query).items():
            if k == "db":
                db_found["REDIS_URL (db=)"] = v[-1]
            elif k == "password":
                pw_found["REDIS_URL (password=)"] = v[-1]
            elif k in ("socket_timeout", "socket_connect_timeout"):
                options[k] = (v[-1], "REDIS_URL (%s=)" % k)
            else:
                raise ValueError("REDIS_URL=%r: option %s is not one bloomkit can apply "
                                 "(db, password, socket_timeout, socket_connect_timeout)"
                                 % (url, k))
    given = _given(settings, "REDIS_HOST", "REDIS_PORT")
    if url and given:
        if ("REDIS_HOST" in given and str(given["REDIS_HOST"]) != str(host)) or (
                "REDIS_PORT" in given
                and _int("REDIS_PORT", given["REDIS_PORT"], 1, 65535) != (port or REDIS_PORT)):
            raise ValueError("settings REDIS_URL and %s contradict each other (REDIS_URL=%r, %s): "
                             "give the server once" % (" and ".join(sorted(given)), url,
                                                       ", ".join("%s=%r" % kv for kv in
                                                                 sorted(given.items()))))
    if not url:
        host = _host(given.get("REDIS_HOST", REDIS_HOST))
        port = _int("REDIS_PORT", given["REDIS_PORT"], 1, 65535) if "REDIS_PORT" in given \
            else REDIS_PORT
        scheme = "redis"
    params = settings.getdict("REDIS_PARAMS") if _user_set(settings, "REDIS_PARAMS") else {}
    for k, v in params.items():
        if k == "db":
            db_found["REDIS_PARAMS['db']"] = v
        elif k == "password":
            pw_found["REDIS_PARAMS['password']"] = v
        elif k == "username":
            user = str(v)
        elif k in ("socket_timeout", "socket_connect_timeout"):
            options.setdefault(k, (v, "REDIS_PARAMS['%s']" % k))
        elif k not in PARAMS_CLIENT_ONLY:
            raise ValueError("REDIS_PARAMS['%s'] is not a parameter bloomkit can apply (it "
                             "applies %s; %s concern only the redis-py client)"
                             % (k, ", ".join(sorted(PARAMS_APPLIED)),
                                ", ".join(sorted(PARAMS_CLIENT_ONLY))))
    db_found.update(_given(settings, "REDIS_DUP_DB", "REDIS_DUPE_DB"))
    db = _one(db_found, "the database", lambda v: str(v).strip())
    password = _one(pw_found, "the password", str)
    query: Dict[str, object] = {"name": name} if scheme == "unix" else {}
    if db is not None:
        query["db"] = _int("the database", db, 0, 65535)
    for k, opt in (("socket_timeout", "timeout"), ("socket_connect_timeout", "connect_timeout")):
        value, where = options.get(k, (None, k))
        if value is not None:
            try:
                seconds = float(value)
            except (TypeError, ValueError):
                raise ValueError("%s=%r is not a number of seconds" % (where, value)) from None
            if not (math.isfinite(seconds) and 0.001 <= seconds <= 3600):
                raise ValueError("%s=%r: bloomkit waits 0.001 .. 3600 seconds (a timeout of 0, "
                                 "below 0 or infinite is not one it can apply)" % (where, value))
            query[opt] = int(round(seconds * 1000))
    if block_bytes:
        query["block_bytes"] = block_bytes
    cred = ""
    if password is not None or user:
        cred = "%s:%s@" % (quote(user or "", safe=""), quote(password or "", safe=""))
    q = "&".join("%s=%s" % (k, quote(str(v), safe="")) for k, v in query.items())
    if scheme == "unix":
        return "unix://%s%s?%s" % (cred, socket, q)
    hostpart = "[%s]" % host if ":" in str(host) else str(host)
    return "redis://%s%s:%d/%s%s" % (cred, hostpart, port or REDIS_PORT, quote(name, safe=":"),
                                     "?" + q if q else "")


def _host(host) -> str:
    """REDIS_HOST as given, when it is a host name or an IP address: the
    port, a password or a path belong to other settings (or REDIS_URL), and
    would otherwise make another URL than the one meant."""
    h = str(host).strip()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    try:
        return str(ipaddress.ip_address(h))
    except ValueError:
        pass
    if not re.fullmatch(r"[A-Za-z0-9_]([A-Za-z0-9_.-]{0,252})", h):
        raise ValueError("REDIS_HOST=%r is not a host name or an IP address: give the port as "
                         "REDIS_PORT, a password in REDIS_PARAMS, or the whole server as "
                         "REDIS_URL" % (host,))
    return h


def _recipe_pins(settings) -> Optional[tuple]:
    """(bits, hashes, blocks) from BLOOMFILTER_BIT / _BIT_SIZE, _HASH_NUMBER
    and _BLOCK_NUMBER (the recipes' defaults for those not given), or None
    when none is given."""
    bit = _one(_given(settings, "BLOOMFILTER_BIT", "BLOOMFILTER_BIT_SIZE"), "the bit exponent",
               lambda v: str(v).strip())
    hashes = settings.get("BLOOMFILTER_HASH_NUMBER") \
        if _user_set(settings, "BLOOMFILTER_HASH_NUMBER") else None
    blocks = settings.get("BLOOMFILTER_BLOCK_NUMBER") \
        if _user_set(settings, "BLOOMFILTER_BLOCK_NUMBER") else None
    if bit is None and hashes is None and blocks is None:
        return None
    bit = _int("BLOOMFILTER_BIT", bit, 9, 32) if bit is not None else RECIPE_BIT
    hashes = _int("BLOOMFILTER_HASH_NUMBER", hashes, 1, 2048) if hashes is not None \
        else RECIPE_HASHES
    blocks = _int("BLOOMFILTER_BLOCK_NUMBER", blocks, 1, 4096) if blocks is not None else 1
    return (1 << bit) * blocks, hashes, blocks


def _stated_keys(config: str, keys) -> list:
    from .filter import config_states

    return [k for k in keys if config_states(config, k)]


def _fill_key(setting: str, value, spider_name: Optional[str]) -> str:
    """A key setting with %(spider)s filled in (when the spider's name is
    known); any other placeholder, or a stray %, names the setting."""
    text = str(value)
    try:
        text % {"spider": "x"}  # every placeholder checked, with or without a name
    except (KeyError, ValueError, TypeError) as e:
        raise ValueError("%s=%r: %s is not a placeholder bloomkit fills (only %%(spider)s; "
                         "write %%%% for a %%)" % (setting, text, e)) from None
    return text % {"spider": spider_name} if spider_name is not None and "%(" in text else text


def resolve(settings, spider_name: Optional[str] = None) -> Plan:
    """The Plan the settings describe (see the module), or a ValueError
    naming the settings at fault."""
    check_unknown(settings)
    stated = settings.get("BLOOMKIT_CONFIG") if _user_set(settings, "BLOOMKIT_CONFIG") else None
    config = stated or DEFAULT_CONFIG
    pins = _recipe_pins(settings)
    if pins:
        bits, hashes, blocks = pins
        pinned = [n for n in ("BLOOMFILTER_BIT", "BLOOMFILTER_BIT_SIZE",
                              "BLOOMFILTER_HASH_NUMBER", "BLOOMFILTER_BLOCK_NUMBER")
                  if _user_set(settings, n)]
        if stated:
            clash = _stated_keys(stated, ("variant", "capacity", "fpr", "bits", "hashes", "layout"))
            if clash:
                raise ValueError("settings BLOOMKIT_CONFIG (%s) and %s contradict each other: "
                                 "the recipe's settings pin the filter's bits and hashes; give "
                                 "one or the other" % (", ".join(clash), " and ".join(pinned)))
        # several blocks: one Redis key each, whole 64-byte blocks (blocked)
        config = "%s variant=standard bits=%d hashes=%d layout=%s" % (
            stated or "", bits, hashes, "blocked" if blocks > 1 else "classic")
    else:
        blocks = None
    redis_given = _given(settings, "REDIS_URL", "REDIS_HOST", "REDIS_PORT", "REDIS_PARAMS",
                         "REDIS_DUP_DB", "REDIS_DUPE_DB")
    key_given = _given(settings, "BLOOMFILTER_REDIS_KEY", "SCHEDULER_DUPEFILTER_KEY",
                       "DUPEFILTER_KEY")
    bloomkit_redis = settings.get("BLOOMKIT_REDIS") if _user_set(settings, "BLOOMKIT_REDIS") \
        else None
    state = settings.get("BLOOMKIT_STATE") if _user_set(settings, "BLOOMKIT_STATE") else None
    save_every = settings.get("BLOOMKIT_SAVE_EVERY") \
        if _user_set(settings, "BLOOMKIT_SAVE_EVERY") else None
    plan = Plan(config=config, config_stated=bool(stated) or bool(pins),
                save_every=10000 if save_every is None
                else _int("BLOOMKIT_SAVE_EVERY", save_every, 0, 2 ** 62),
                debug=settings.getbool("DUPEFILTER_DEBUG"))
    dupefilter_redis = {n: v for n, v in redis_given.items() if n.startswith("REDIS_DUP")}
    if bloomkit_redis and (key_given or dupefilter_redis or (pins and blocks and blocks > 1)):
        names = sorted(list(key_given) + list(dupefilter_redis)
                       + (["BLOOMFILTER_BLOCK_NUMBER"] if blocks and blocks > 1 else []))
        raise ValueError("settings BLOOMKIT_REDIS and %s contradict each other: both say where "
                         "the shared filter lives; give one" % " and ".join(names))
    shared = bool(bloomkit_redis or redis_given or key_given)
    if shared and state:
        raise ValueError("settings BLOOMKIT_STATE and %s contradict each other: a filter shared "
                         "through Redis is kept by Redis, not in a file; give one"
                         % " and ".join(sorted(["BLOOMKIT_REDIS"] if bloomkit_redis
                                               else list(redis_given) + list(key_given))))
    if shared and _user_set(settings, "BLOOMKIT_SAVE_EVERY"):
        raise ValueError("BLOOMKIT_SAVE_EVERY applies to a BLOOMKIT_STATE file; a filter shared "
                         "through Redis is saved by Redis")
    if bloomkit_redis:
        plan.redis_url = bloomkit_redis
    elif shared:
        keys = {n: _fill_key(n, v, spider_name) for n, v in key_given.items()}
        name = _one(keys, "the filter's Redis key") if keys else SCRAPY_REDIS_KEY
        if "%(spider)s" in name:
            if spider_name is None:
                raise ValueError("the dupefilter's Redis key %r needs the spider's name, which "
                                 "from_settings does not have: let Scrapy build the filter "
                                 "(from_crawler, from_spider) or give BLOOMFILTER_REDIS_KEY"
                                 % name)
            name = name % {"spider": spider_name}
        if not re.fullmatch(r"[!-~]{1,200}", name) or re.search(r"[{}%]", name):
            raise ValueError("the dupefilter's Redis key %r: bloomkit names are 1-200 printable "
                             "characters without spaces, braces or %%" % name)
        block_bytes = (bits // blocks) // 8 if pins and blocks > 1 else None
        plan.redis_url = _redis_url(settings, name, block_bytes)
        if "BLOOMFILTER_REDIS_KEY" in keys:
            # the recipes keep block i's bits at KEY + str(i)
            plan.recipe_name = name
            plan.recipe_bitmaps = tuple("%s%d" % (name, i) for i in range(blocks or 1))
    else:
        if not state:
            from scrapy.utils.job import job_dir

            jobdir = job_dir(settings)
            if jobdir:
                state = os.path.join(jobdir, STATE_NAME)
        plan.state = state
    return plan
