"""BloomFilter: a bloomkit filter (any variant: standard, counting, scalable,
window, cuckoo, expandable, RedisBloom's rbchain and rbcuckoo; in memory,
mapped from a file, or shared in Redis) as a Python object. The calls run in
the C extension (bloomkit._native, bindings/python/src); this module adds
what is Python's: configurations as text, mappings or keywords,
the constructors, the set operators, pickling."""
from __future__ import annotations

import datetime
import os
import warnings
from typing import Callable, Dict, Mapping, Optional, Union

from . import _lib
from . import _native  # (after _lib, whose import checks the release)
from .errors import ConfigError, IncompatibleError

Key = Union[bytes, bytearray, memoryview, str]
ConfigLike = Union[str, Mapping[str, object], None]
PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]


def config_text(config: ConfigLike) -> str:
    """The config text for `config`: a str as it is, a mapping as key=value
    pairs (bytes keys as 32 hex digits), None as empty (the defaults)."""
    if config is None:
        return ""
    if isinstance(config, str):
        if "\0" in config:  # C would read the text only up to it
            line = config.count("\n", 0, config.index("\0")) + 1
            raise ConfigError(
                _lib.ERRORS["BK_ECONFIG"],
                f"config: line {line}: a NUL character at offset {config.index(chr(0))} "
                "(config text holds none)",
            )
        return config
    if isinstance(config, Mapping):
        parts = []
        for k, v in config.items():
            if not isinstance(k, str):
                raise ConfigError(_lib.ERRORS["BK_ECONFIG"], f"config: key {k!r} is not a string")
            text = _value_text(k, v)
            parts.append(f"{k}={text}")
        return " ".join(parts)
    raise TypeError(f"bloomkit: config is a str or a mapping, not {type(config).__name__}")


def _value_text(key: str, value: object) -> str:
    """One value of one key as config text: never more than one value."""
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).hex()
    text = str(value)
    if not text or "\0" in text or any(c.isspace() or c in ",#=" for c in text):
        raise ConfigError(_lib.ERRORS["BK_ECONFIG"], f"config: bad value {value!r} for {key}")
    return text


def config_states(config: str, key: str) -> bool:
    """True when the (valid) config text states a value for key."""
    return _native.config_text_sets(config, key)


def _parse(config: ConfigLike, keywords: Optional[Mapping[str, object]] = None) -> "_native.Config":
    """A Config from config text or a mapping, with `keywords` (values of
    single keys) over it, built by the library's builder: each value checked
    once, the whole once; a key both in `config` and among the keywords is
    an error, never a silent choice."""
    text = config_text(config)  # checks a mapping's keys and values too
    pairs = []
    if isinstance(config, Mapping):
        # each value is one value of one key, never more text
        pairs = [(k, _value_text(k, v)) for k, v in config.items()]
        text = ""
    pairs += [(k, _value_text(k, v)) for k, v in (keywords or {}).items()]
    return _native.config_build(text, pairs)


class BloomFilter(_native.Filter):
    """A Bloom filter of bloomkit: ``add`` says whether a key is new, ``in``
    whether it may have been added (false positives at the configured rate,
    never a false negative).

    ``BloomFilter(config)`` makes a new in-memory filter from config text
    (``"variant=scalable capacity=1000000 fpr=0.0001"``) or a mapping of the
    same keys (``{"variant": "counting", "capacity": 10**6}``), and keywords
    give single keys beside it: ``BloomFilter(capacity=10**6, fpr=0.001)``.
    With ``path=``, the filter lives in that file, mapped from disk, made
    when absent (``BloomFilter(capacity=10**6, fpr=0.001, path="seen.bkf")``);
    see docs/python.md for every key. Keys are bytes, bytearray, memoryview
    or str (encoded as UTF-8).

    Errors raise subclasses of :class:`bloomkit.BloomkitError` that are also
    the built-in exception expected: ValueError (bad config), OSError (files,
    Redis), KeyError (removing an absent key), TypeError (an operation the
    variant lacks), MemoryError.

    Threads: batches (update, add_many, contains_many, remove_many), files
    and Redis calls release the GIL. A filter may be used from several
    threads at once (adds are exact under races: of threads adding one new
    key, exactly one is told it is new); calls that change the whole filter
    (clear, merge, close, ...) wait for the calls running on it, and a Redis
    filter's calls take turns on its one connection.
    """

    __slots__ = ()

    def __new__(
        cls,
        config: ConfigLike = None,
        *,
        capacity: Optional[int] = None,
        fpr: Optional[float] = None,
        variant: Optional[str] = None,
        path: Optional[PathLike] = None,
        **options: object,
    ) -> "BloomFilter":
        keywords: Dict[str, object] = {
            k: v for k, v in (("capacity", capacity), ("fpr", fpr), ("variant", variant))
            if v is not None}
        keywords.update(options)
        cfg = _parse(config, keywords)
        if path is None:
            return cls._new(cfg)
        obj = cls._open_path(path, cfg)
        try:
            stated = {**(config if isinstance(config, Mapping) else {}), **keywords}
            differ = obj.differs_from(stated) or (
                obj.differs_from(config) if isinstance(config, str) else None)
        except BaseException:
            obj.close()
            raise
        if differ:
            obj.close()
            raise IncompatibleError(
                _lib.ERRORS["BK_EINCOMPAT"],
                f"{os.fsdecode(path)}: the filter in the file has another {differ} than "
                "the one given (open it with no configuration to use it as it is)",
            )
        return obj

    def __init__(self, *args: object, **kwargs: object) -> None:
        """(Everything is done by __new__; this lets subclasses call
        ``super().__init__(...)`` with the same arguments.)"""

    @classmethod
    def _opened(cls, obj: "BloomFilter", where: str) -> "BloomFilter":
        """A filter read from elsewhere (a file, bytes, a server): a window
        whose generations lay in this clock's future was re-dated on the way
        in, which a RuntimeWarning says (docs/windows.md). Only a window
        keeps time: another variant's figures are not read (an expandable
        file's would check every slot)."""
        if "variant=window" not in obj.config.split():
            return obj
        st = obj.stats()
        moved, to = int(st["redated_from_ms"]), int(st["redated_to_ms"])
        if moved:
            def when(ms: int) -> datetime.datetime:
                return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
            ahead = datetime.timedelta(milliseconds=moved - to)
            warnings.warn(
                f"bloomkit: {where}: its newest generation starts at "
                f"{when(moved):%Y-%m-%d %H:%M:%S} UTC, {ahead} after this "
                f"clock's ({when(to):%Y-%m-%d %H:%M:%S} UTC): re-dated to now, "
                "so its keys are forgotten a window from now (docs/windows.md)",
                RuntimeWarning, stacklevel=3)
        return obj

    # ---- constructors ------------------------------------------------------

    @classmethod
    def load(cls, path: PathLike) -> "BloomFilter":
        """Read a filter file (written by :meth:`save` or the bloomkit command)
        into memory. Raises OSError (FilterIOError) when it is missing,
        unreadable or corrupt."""
        return cls._opened(cls._load(path), os.fsdecode(path))

    @classmethod
    def from_bytes(cls, data: Union[bytes, bytearray, memoryview]) -> "BloomFilter":
        """A filter from bytes in the file format (:meth:`to_bytes`, or a filter
        file's contents), with every check :meth:`load` makes. Raises OSError
        (FilterIOError) when the bytes are not a whole, intact filter."""
        if isinstance(data, str) or data is None:
            raise TypeError(f"bloomkit: from_bytes takes bytes, not {type(data).__name__}")
        return cls._opened(cls._from_bytes(data), "from_bytes")

    @classmethod
    def open_mmap(cls, path: PathLike, writable: bool = False, verify: bool = True) -> "BloomFilter":
        """Map a filter file instead of reading it (no heap; the pages stay in
        the page cache). Read-only unless `writable`: then adds go to the file
        and :meth:`sync` (or :meth:`close`) makes it consistent. `verify=False`
        skips the checksum pass (O(1) open). A writer should hold the file's
        :class:`FileLock` meanwhile (``BloomFilter(path=...)`` does)."""
        flags = (_lib.MAP_WRITE if writable else _lib.MAP_READONLY) | (
            0 if verify else _lib.MAP_NOVERIFY
        )
        where = os.fsdecode(path)
        return cls._opened(cls._open_mmap(path, flags, where), where)

    @classmethod
    def redis(cls, url: str, config: ConfigLike = None) -> "BloomFilter":
        """Open (or create) the shared filter at a Redis URL
        (``redis://[user:password@]host:port/NAME`` or
        ``unix:///path/to/socket?name=NAME``). A new filter is made from
        `config`; an existing one is adopted, and must agree with every value
        `config` states (IncompatibleError, a ValueError, names the first
        difference). Server down or refusing: ServerError / FilterIOError
        (OSError)."""
        text = config_text(config)
        return cls._opened(cls._redis(url, text or None), url)

    @classmethod
    def pull(cls, url: str) -> "BloomFilter":
        """A local, in-memory copy of the shared filter at a Redis URL: the
        same configuration, hash key, cells and counts (writers should pause
        meanwhile). NotFoundError when there is none."""
        return cls._opened(cls._pull(url), url)

    @staticmethod
    def drop(url: str) -> None:
        """Delete the shared filter at a Redis URL (every key it has there,
        nothing else); nothing happens when there is none."""
        BloomFilter._drop(url)

    @staticmethod
    def import_set(url: str, set_key: str, config: ConfigLike = None,
                   progress: Optional[Callable[[int, int], object]] = None) -> Dict[str, object]:
        """Add the members of the Redis set `set_key` (on the URL's server)
        to the shared filter at `url`: a crawl moves from scrapy-redis's
        duplicate filter to bloomkit's without fetching again what it
        fetched (docs/python.md, "Moving a scrapy-redis crawl over"). A new
        filter is made of `config` over ``variant=expandable fpr=0.0001
        input=scrapy-redis`` (on a server without bloomkit's module, the
        scalable chain that stands for it) and a capacity of the set's
        size; an existing
        one is used as it is. Under ``input=scrapy-redis`` each member must
        be a request fingerprint (40 hex digits; ServerError otherwise, and
        nothing is written); ``input=raw`` adds members as they are. When
        `set_key` is the filter's own name, the set is first renamed, kept
        (the name is returned), and a second call resumes from it.
        `progress(done, total)` is called every thousand members; an
        exception it raises (or Ctrl-C) stops the import, keeping what was
        added. Returns ``{"members": read, "added": new to the filter,
        "kept": the kept set's name or None}``."""
        text = config_text(config)
        members, added, kept = BloomFilter._import_set(url, set_key, text or None, progress)
        return {"members": members, "added": added, "kept": kept or None}

    # ---- configuration -------------------------------------------------------

    def __bool__(self) -> bool:
        """Always True: a filter is a filter, empty or not (without this,
        ``if f:`` would call ``len()``, a network round trip for a Redis
        filter, and treat an empty filter as false)."""
        return True

    def __len__(self) -> int:
        """Keys added (adds that reported new; counting: minus removes).
        Reads the filter's counts: for a Redis filter that is a round trip to
        the server, not a free attribute."""
        return int(self.stats()["keys"])

    @property
    def config(self) -> str:
        """The configuration as config text (without the hash key)."""
        return self._config().format()

    def differs_from(self, config: ConfigLike) -> Optional[str]:
        """The first configuration value that `config` states and this filter
        does not have ("fpr", "variant", ...; the key only when stated), or
        None when they agree. Raises ConfigError for a bad `config`."""
        have = self._config()
        want = have.copy()
        want.forget_key()  # the key counts only when `config` states one
        want.read(config_text(config))
        return want.diff(have)

    # ---- set operators ---------------------------------------------------------

    def union(self, *others: "BloomFilter") -> "BloomFilter":
        """A new filter holding every key of this one and of `others` (which
        must be compatible: IncompatibleError names what differs)."""
        return self._combined(others, BloomFilter.merge)

    def intersection(self, *others: "BloomFilter") -> "BloomFilter":
        """A new filter with only the bits this one and every one of `others`
        have (standard filters): a key added to all stays present."""
        return self._combined(others, BloomFilter.intersect)

    def _combined(self, others, op) -> "BloomFilter":
        # One consistent snapshot of each operand: self's is copied once, and
        # used again where self is also an operand (f | f while another
        # thread adds to f: a second look at f may find a slice more).
        # Every other operand is read under its lock by op.
        out = self.copy()
        again = out.copy() if any(other is self for other in others) else None
        try:
            for other in others:
                op(out, again if other is self else other)
        except BaseException:
            out.close()
            raise
        finally:
            if again is not None:
                again.close()
        return out

    def __or__(self, other: object) -> "BloomFilter":
        if not isinstance(other, BloomFilter):
            return NotImplemented
        return self.union(other)

    def __and__(self, other: object) -> "BloomFilter":
        if not isinstance(other, BloomFilter):
            return NotImplemented
        return self.intersection(other)

    def __ior__(self, other: object) -> "BloomFilter":
        if not isinstance(other, BloomFilter):
            return NotImplemented
        self.merge(other)
        return self

    def __iand__(self, other: object) -> "BloomFilter":
        if not isinstance(other, BloomFilter):
            return NotImplemented
        self.intersect(other)
        return self

    # ---- Python's protocols -------------------------------------------------------

    def __copy__(self) -> "BloomFilter":
        return self.copy()

    def __deepcopy__(self, memo) -> "BloomFilter":
        return self.copy()

    def __reduce__(self):
        # pickled as its bytes in the file format, hash key included: a pickle
        # holds the key as a saved file does (docs/security.md)
        return (type(self).from_bytes, (self.to_bytes(),))

    def __enter__(self) -> "BloomFilter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return "<bloomkit.BloomFilter closed>"
        return f"<bloomkit.BloomFilter {self.config}>"


class FileLock(_native.FileLock):
    """The writer's lock of a filter file (bk_lock_file): one process at a
    time may load, change and save it. Hold it around the whole
    read-modify-write, in every writer (the bloomkit command and the Scrapy
    filter take it too)::

        with FileLock("seen.bkf"):
            f = BloomFilter.load("seen.bkf")
            f.add_many(urls)
            f.save("seen.bkf")

    ``wait=False`` raises FileLockedError (a BlockingIOError naming the
    holder's pid) instead of waiting. A second FileLock on the same path in
    this process waits too, like another process would. The lock lives in
    ``.NAME.lock`` beside the file and is released by :meth:`release`, by
    leaving the ``with`` block, or when the process exits."""

    __slots__ = ("path",)

    def __init__(self, path: PathLike, wait: bool = True) -> None:
        super().__init__(path, wait)
        self.path = os.fsdecode(path)

    def __enter__(self) -> "FileLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def __copy__(self):
        raise TypeError("bloomkit: a FileLock cannot be copied (it is held once)")

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __reduce__(self):
        return self.__copy__()

