"""BloomFilter: a bloomkit filter (standard, counting or scalable; in memory,
mapped from a file, or shared in Redis) as a Python object."""
from __future__ import annotations

import ctypes
import datetime
import os
import threading
import warnings
from typing import Iterable, List, Mapping, Optional, Union

from . import _lib
from ._lib import lib
from .errors import ConfigError, error_for, last_detail

Key = Union[bytes, bytearray, memoryview, str]
ConfigLike = Union[str, Mapping[str, object], None]

# Keys per library call in add_many/contains_many: bounds the temporary arrays.
_CHUNK = 65536


def _key(key: Key) -> bytes:
    if isinstance(key, bytes):
        return key
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, (bytearray, memoryview)):
        return bytes(key)
    raise TypeError(f"bloomkit: a key is bytes or str, not {type(key).__name__}")


def config_text(config: ConfigLike) -> str:
    """The config text for `config`: a str as it is, a mapping as key=value
    pairs (bytes keys as 32 hex digits), None as empty (the defaults)."""
    if config is None:
        return ""
    if isinstance(config, str):
        if "\0" in config:  # C would read the text only up to it
            line = config.count("\n", 0, config.index("\0")) + 1
            raise ConfigError(
                _lib.BK_ECONFIG,
                f"config: line {line}: a NUL character at offset {config.index(chr(0))} "
                "(config text holds none)",
            )
        return config
    if isinstance(config, Mapping):
        parts = []
        for k, v in config.items():
            if not isinstance(k, str):
                raise ConfigError(_lib.BK_ECONFIG, f"config: key {k!r} is not a string")
            if isinstance(v, (bytes, bytearray)):
                v = bytes(v).hex()
            text = str(v)
            if not text or any(c.isspace() or c in ",#=" for c in text):
                raise ConfigError(_lib.BK_ECONFIG, f"config: bad value {v!r} for {k}")
            parts.append(f"{k}={text}")
        return " ".join(parts)
    raise TypeError(f"bloomkit: config is a str or a mapping, not {type(config).__name__}")


def config_states(config: str, key: str) -> bool:
    """True when the (valid) config text states a value for key."""
    return lib.bk_config_text_sets(config.encode(), key.encode()) == 1


def _parse(config: ConfigLike) -> _lib.Config:
    cfg = _lib.Config()
    err = ctypes.create_string_buffer(512)
    text = config_text(config)  # checks a mapping's keys and values too
    if isinstance(config, Mapping):
        # each value is one value of one key (bk_config_set), never more text
        lib.bk_config_init(ctypes.byref(cfg))
        # one value at a time, as text reads them whatever their order: the
        # variant first (it decides which keys apply), bits before hashes
        first = {"variant": 0, "bits": 1}
        for k, v in sorted(config.items(), key=lambda kv: first.get(kv[0], 2)):
            value = bytes(v).hex() if isinstance(v, (bytes, bytearray)) else str(v)
            rc = lib.bk_config_set(ctypes.byref(cfg), k.encode(), value.encode(), err, len(err))
            if rc != _lib.BK_OK:
                raise error_for(rc, "config", err.value.decode(errors="replace") or None)
        # what only the whole says (fpr with bits): the same pairs as text
        whole, e = _lib.Config(), _lib.ConfigErr()
        lib.bk_config_init(ctypes.byref(whole))
        rc = lib.bk_config_read(ctypes.byref(whole), text.encode(), ctypes.byref(e))
        if rc != _lib.BK_OK:
            raise _config_error(rc, e)
        return cfg
    lib.bk_config_init(ctypes.byref(cfg))
    e = _lib.ConfigErr()
    rc = lib.bk_config_read(ctypes.byref(cfg), text.encode(), ctypes.byref(e))
    if rc != _lib.BK_OK:
        raise _config_error(rc, e)
    return cfg


def _config_error(rc: int, e: "_lib.ConfigErr") -> Exception:
    exc = error_for(rc, "config", e.message.decode(errors="replace") or None)
    if isinstance(exc, ConfigError):
        exc.key = e.key.decode() or None
        exc.line = e.line or None
    return exc


class BloomFilter:
    """A Bloom filter of bloomkit: ``add`` says whether a key is new, ``in``
    whether it may have been added (false positives at the configured rate,
    never a false negative).

    ``BloomFilter(config)`` makes a new in-memory filter from config text
    (``"variant=scalable capacity=1000000 fpr=0.0001"``) or a mapping of the
    same keys (``{"variant": "counting", "capacity": 10**6}``); see
    docs/python.md for the keys. Keys are bytes or str (encoded as UTF-8).

    Errors raise subclasses of :class:`bloomkit.BloomkitError` that are also
    the built-in exception expected: ValueError (bad config), OSError (files,
    Redis), KeyError (removing an absent key), TypeError (an operation the
    variant lacks), MemoryError.

    Threads: calls release the GIL while in the library. A local filter may
    be used from several threads at once (adds are exact under races); a
    Redis filter has one connection, so its calls are serialized by a lock.
    Do not ``close()`` a filter another thread is still using.
    """

    __slots__ = ("_f", "_lock", "_remote", "__weakref__")

    def __init__(self, config: ConfigLike = None) -> None:
        cfg = _parse(config)
        handle = ctypes.c_void_p()
        rc = lib.bk_new(ctypes.byref(cfg), ctypes.byref(handle))
        if rc != _lib.BK_OK:
            raise error_for(rc, "BloomFilter")
        self._adopt(handle, remote=False)

    def _adopt(self, handle: ctypes.c_void_p, remote: bool) -> None:
        self._f = handle
        self._remote = remote
        self._lock: Optional[threading.Lock] = threading.Lock() if remote else None

    @classmethod
    def _wrap(cls, handle: ctypes.c_void_p, remote: bool = False) -> "BloomFilter":
        obj = cls.__new__(cls)
        obj._adopt(handle, remote)
        return obj

    @classmethod
    def _opened(cls, handle: ctypes.c_void_p, where: str, remote: bool = False) -> "BloomFilter":
        """_wrap for a filter read from elsewhere (a file, bytes, a server):
        a window whose generations lay in this clock's future was re-dated
        on the way in, which a RuntimeWarning says (docs/windows.md)."""
        obj = cls._wrap(handle, remote)
        st = obj.stats()
        if st["redated_from_ms"]:
            def when(ms):
                return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
            ahead = datetime.timedelta(milliseconds=st["redated_from_ms"] - st["redated_to_ms"])
            warnings.warn(
                f"bloomkit: {where}: its newest generation starts at "
                f"{when(st['redated_from_ms']):%Y-%m-%d %H:%M:%S} UTC, {ahead} after this "
                f"clock's ({when(st['redated_to_ms']):%Y-%m-%d %H:%M:%S} UTC): re-dated to now, "
                "so its keys are forgotten a window from now (docs/windows.md)",
                RuntimeWarning, stacklevel=3)
        return obj

    # ---- constructors ------------------------------------------------------

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "BloomFilter":
        """Read a filter file (written by :meth:`save` or the bloomkit command)
        into memory. Raises OSError (FilterIOError) when it is missing,
        unreadable or corrupt."""
        handle = ctypes.c_void_p()
        rc = lib.bk_load(os.fsencode(path), ctypes.byref(handle))
        if rc != _lib.BK_OK:
            raise error_for(rc, f"load {os.fsdecode(path)}", last_detail())
        return cls._opened(handle, os.fsdecode(path))

    @classmethod
    def from_bytes(cls, data: Union[bytes, bytearray, memoryview]) -> "BloomFilter":
        """A filter from bytes in the file format (:meth:`to_bytes`, or a filter
        file's contents), with every check :meth:`load` makes. Raises OSError
        (FilterIOError) when the bytes are not a whole, intact filter."""
        raw = bytes(data)
        handle = ctypes.c_void_p()
        rc = lib.bk_load_buffer(raw, len(raw), ctypes.byref(handle))
        if rc != _lib.BK_OK:
            raise error_for(rc, "from_bytes", last_detail())
        return cls._opened(handle, "from_bytes")

    @classmethod
    def open_mmap(
        cls, path: Union[str, os.PathLike], writable: bool = False, verify: bool = True
    ) -> "BloomFilter":
        """Map a filter file instead of reading it (no heap; the pages stay in
        the page cache). Read-only unless `writable`: then adds go to the file
        and :meth:`sync` (or :meth:`close`) makes it consistent. `verify=False`
        skips the checksum pass (O(1) open)."""
        flags = (_lib.MAP_WRITE if writable else _lib.MAP_READONLY) | (
            0 if verify else _lib.MAP_NOVERIFY
        )
        handle = ctypes.c_void_p()
        rc = lib.bk_open_mmap(os.fsencode(path), flags, ctypes.byref(handle))
        if rc != _lib.BK_OK:
            raise error_for(rc, f"open_mmap {os.fsdecode(path)}", last_detail())
        return cls._opened(handle, os.fsdecode(path))

    @classmethod
    def redis(cls, url: str, config: ConfigLike = None) -> "BloomFilter":
        """Open (or create) the shared filter at a Redis URL
        (``redis://[user:password@]host:port/NAME`` or
        ``unix:///path/to/socket?name=NAME``). A new filter is made from
        `config`; an existing one is adopted, and must agree with every value
        `config` states (IncompatibleError, a ValueError, names the first
        difference). Server down or refusing: ServerError / FilterIOError
        (OSError)."""
        err = ctypes.create_string_buffer(512)
        handle = ctypes.c_void_p()
        text = config_text(config)
        if _lib.redis_lib is None:
            raise ImportError(
                "bloomkit: Redis support is the optional library libbloomkit-redis.so, "
                "which is not there (build it with `make`, install it, or point "
                "BLOOMKIT_REDIS_LIB at it)"
            )
        rc = _lib.redis_lib.bk_redis_open_config(
            url.encode(), text.encode() if text else None, err, len(err), ctypes.byref(handle)
        )
        if rc != _lib.BK_OK:
            raise error_for(rc, "redis", err.value.decode(errors="replace") or last_detail())
        return cls._opened(handle, url, remote=True)

    # ---- keys ----------------------------------------------------------------

    def _handle(self) -> ctypes.c_void_p:
        f = self._f
        if f is None:
            raise ValueError("bloomkit: the filter is closed")
        return f

    def _call(self, fn, *args) -> int:
        if self._lock is None:
            return fn(self._handle(), *args)
        with self._lock:
            return fn(self._handle(), *args)

    def _check(self, rc: int, what: str) -> int:
        if rc < 0:  # the detail of a remote store, and of a ceiling (it names the limit)
            detail = self._remote or rc == _lib.BK_EFULL
            raise error_for(rc, what, last_detail() if detail else None)
        return rc

    def add(self, key: Key) -> bool:
        """Add `key`; True when it was new (not already in the filter)."""
        k = _key(key)
        return self._check(self._call(lib.bk_add, k, len(k)), "add") == 1

    def __contains__(self, key: Key) -> bool:
        k = _key(key)
        return self._check(self._call(lib.bk_contains, k, len(k)), "contains") == 1

    def contains(self, key: Key) -> bool:
        """Same as ``key in filter``."""
        return key in self

    def remove(self, key: Key) -> None:
        """Remove one occurrence of `key` (counting filters only). Raises
        NotFoundError (a KeyError) when the filter does not hold it, and
        UnsupportedError (a TypeError) for standard and scalable filters."""
        k = _key(key)
        rc = self._call(lib.bk_remove, k, len(k))
        if rc < 0:
            raise error_for(rc, f"remove {key!r}", last_detail() if self._remote else None)

    def _batch(self, fn, keys: Iterable[Key], what: str) -> List[bool]:
        out: List[bool] = []
        chunk: List[bytes] = []
        it = iter(keys)
        while True:
            chunk.clear()
            for key in it:
                chunk.append(_key(key))
                if len(chunk) == _CHUNK:
                    break
            if not chunk:
                return out
            n = len(chunk)
            ptrs = (ctypes.c_char_p * n)(*chunk)
            lens = (ctypes.c_size_t * n)(*map(len, chunk))
            res = (ctypes.c_int * n)()
            rc = self._call(fn, ptrs, lens, n, res)
            if rc < 0:
                raise error_for(rc, what, last_detail() if self._remote else None)
            out.extend(r == 1 for r in res)

    def add_many(self, keys: Iterable[Key]) -> List[bool]:
        """Add every key (in order, one library batch per 65,536 keys, the GIL
        released meanwhile); for each, True when it was new. A key repeated in
        `keys` is new only the first time."""
        return self._batch(lib.bk_add_batch, keys, "add_many")

    def contains_many(self, keys: Iterable[Key]) -> List[bool]:
        """``[key in self for key in keys]``, as batches."""
        return self._batch(lib.bk_contains_batch, keys, "contains_many")

    # ---- figures and state ----------------------------------------------------

    def stats(self) -> dict:
        """The filter's figures: variant, hash, capacity, fpr, bits, bytes, k,
        keys (adds that were new; counting: minus removes), set_bits, fill,
        est_cardinality, est_fpr, slices, saturated, model_fpr, and for a
        window redated_from_ms and redated_to_ms (0 unless its generations
        were found in this clock's future and moved back: docs/windows.md)."""
        st = _lib.Stats()
        self._check(
            self._call(lib.bk_stats_sized, ctypes.byref(st), ctypes.sizeof(st)), "stats"
        )
        out = {name: getattr(st, name) for name, _ in _lib.Stats._fields_}
        out["variant"] = st.variant.decode()
        out["hash"] = st.hash.decode()
        return out

    def __bool__(self) -> bool:
        """Always True: a filter is a filter, empty or not (without this,
        ``if f:`` would call ``len()``, a network round trip for a Redis
        filter, and treat an empty filter as false)."""
        return True

    def __len__(self) -> int:
        """Keys added (adds that reported new; counting: minus removes).
        Reads the filter's counts: for a Redis filter that is a round trip to
        the server (HGETALL of its metadata), not a free attribute."""
        return int(self.stats()["keys"])

    @property
    def config(self) -> str:
        """The configuration as config text (without the hash key)."""
        cfg = _lib.Config()
        self._check(self._call(lib.bk_get_config, ctypes.byref(cfg)), "config")
        buf = ctypes.create_string_buffer(512)
        lib.bk_config_format(ctypes.byref(cfg), 0, buf, len(buf))
        return buf.value.decode()

    def differs_from(self, config: ConfigLike) -> Optional[str]:
        """The first configuration value that `config` states and this filter
        does not have ("fpr", "variant", ...; the key only when stated), or
        None when they agree. Raises ConfigError for a bad `config`."""
        have = _lib.Config()
        self._check(self._call(lib.bk_get_config, ctypes.byref(have)), "config")
        want = _lib.Config()
        ctypes.pointer(want)[0] = have
        want.has_key = 0  # the key counts only when `config` states one
        e = _lib.ConfigErr()
        rc = lib.bk_config_read(ctypes.byref(want), config_text(config).encode(), ctypes.byref(e))
        if rc != _lib.BK_OK:
            raise _config_error(rc, e)
        diff = lib.bk_config_diff(ctypes.byref(want), ctypes.byref(have))
        return diff.decode() if diff else None

    def clear(self) -> None:
        """Empty the filter, keeping its configuration and hash key."""
        self._check(self._call(lib.bk_clear), "clear")

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Write the filter to `path` atomically (a crash leaves the old file or
        the new one, never a mix); mode 0600. Raises OSError on failure."""
        rc = self._call(lib.bk_save, os.fsencode(path))
        if rc < 0:
            raise error_for(rc, f"save {os.fsdecode(path)}", last_detail())

    def to_bytes(self) -> bytes:
        """The filter in the file format: the same bytes :meth:`save` writes
        (:meth:`from_bytes` reads them back). A shared (Redis) filter: TypeError
        (pull it first)."""
        if self._remote:
            raise TypeError("bloomkit: a shared (Redis) filter has no bytes here; pull it")
        while True:
            size = ctypes.c_uint64()
            self._check(self._call(lib.bk_save_size, ctypes.byref(size)), "to_bytes")
            buf = ctypes.create_string_buffer(size.value)
            written = ctypes.c_size_t()
            rc = self._call(lib.bk_save_buffer, buf, size.value, ctypes.byref(written))
            if rc != _lib.BK_ERANGE:  # a chain that grew meanwhile: ask again
                break
        if rc < 0:
            raise error_for(rc, "to_bytes", last_detail())
        return buf.raw[: written.value]

    def merge(self, other: "BloomFilter") -> None:
        """Add every key of `other` (the union), in place. Both must have the
        same variant, size, hash and key (copies of one filter, for example):
        ValueError (BK_EINCOMPAT) naming what differs otherwise."""
        self._combine(lib.bk_merge, other, "merge")

    def intersect(self, other: "BloomFilter") -> None:
        """Keep only the bits `other` has too, in place (standard filters with
        the same size, hash and key): a key added to both stays present; a key
        of only one may still read present. ValueError naming what differs."""
        self._combine(lib.bk_intersect, other, "intersect")

    def _combine(self, fn, other: "BloomFilter", what: str) -> None:
        if not isinstance(other, BloomFilter):
            raise TypeError(f"bloomkit: {what} takes a BloomFilter")
        rc = self._call(fn, other._handle())
        if rc < 0:
            raise error_for(rc, what, last_detail())

    def sync(self) -> None:
        """Flush a filter opened with ``open_mmap(writable=True)``."""
        rc = self._call(lib.bk_sync)
        if rc < 0:
            raise error_for(rc, "sync", last_detail())

    def close(self) -> None:
        """Free the filter (a writable mapping is synced, then unmapped; a Redis
        one disconnects and leaves its data on the server). Idempotent. Raises
        OSError when the final sync of a writable mapping fails, for example
        because another writer replaced the file (the filter is freed all the
        same)."""
        f, self._f = self._f, None
        if f is None:
            return
        rc = lib.bk_close(f)
        if rc < 0:
            raise error_for(rc, "close", last_detail())

    def copy(self) -> "BloomFilter":
        """A new in-memory filter equal to this one (cells, counts, hash key).
        A shared (Redis) filter cannot be copied this way: TypeError."""
        if self._remote:
            raise TypeError("bloomkit: a shared (Redis) filter cannot be copied; pull it")
        handle = ctypes.c_void_p()
        rc = self._call(lib.bk_copy, ctypes.byref(handle))
        if rc < 0:
            raise error_for(rc, "copy", last_detail())
        return type(self)._wrap(handle)

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

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        if self._f is None:
            return "<bloomkit.BloomFilter closed>"
        return f"<bloomkit.BloomFilter {self.config}>"


class FileLock:
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

    __slots__ = ("_l", "path")

    def __init__(self, path: Union[str, os.PathLike], wait: bool = True) -> None:
        self._l = None
        self.path = os.fsdecode(path)
        handle = ctypes.c_void_p()
        rc = lib.bk_lock_file(
            os.fsencode(path), 0 if wait else _lib.LOCK_NOWAIT, ctypes.byref(handle)
        )
        if rc != _lib.BK_OK:
            raise error_for(rc, f"lock {self.path}", last_detail())
        self._l = handle

    def release(self) -> None:
        """Release the lock; idempotent."""
        lock, self._l = self._l, None
        if lock is not None:
            lib.bk_unlock_file(lock)

    def __enter__(self) -> "FileLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def __del__(self) -> None:
        self.release()

    def __copy__(self):
        raise TypeError("bloomkit: a FileLock cannot be copied (it is held once)")

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __reduce__(self):
        return self.__copy__()
