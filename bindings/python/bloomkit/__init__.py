"""bloomkit: Bloom filters (standard, 4-bit counting with removal, scalable,
time window) and cuckoo filters (removal in a quarter of the memory) from the
bloomkit C library, in memory, mapped from files, or shared through Redis. See
docs/python.md.

    >>> from bloomkit import BloomFilter
    >>> seen = BloomFilter("variant=scalable capacity=100000 fpr=0.0001")
    >>> seen.add("https://example.org/")
    True
    >>> "https://example.org/" in seen
    True
"""
from typing import Any, Dict, Optional

from ._lib import _native
from .errors import (
    BloomkitError,
    ConfigError,
    FileLockedError,
    FilterFullError,
    FilterIOError,
    IncompatibleError,
    NotFoundError,
    ReadOnlyError,
    ServerError,
    UnsupportedError,
)
from .filter import BloomFilter, FileLock, config_text
from .url import canonical_url

__all__ = [
    "BloomFilter",
    "BloomkitError",
    "ConfigError",
    "FileLock",
    "FileLockedError",
    "FilterFullError",
    "FilterIOError",
    "IncompatibleError",
    "NotFoundError",
    "ReadOnlyError",
    "ServerError",
    "UnsupportedError",
    "canonical_url",
    "config_text",
    "import_set",
    "library_version",
    "set_clock",
    "set_threads",
    "variants",
]


from ._version import __version__  # the release, as include/bloomkit.h has it


import_set = BloomFilter.import_set  # bloomkit.import_set(url, set_key, ...)


def library_version() -> str:
    """The version of the bloomkit library in use ("0.1.0")."""
    return _native.library_version()


def variants() -> Dict[str, Dict[str, Any]]:
    """The library's variants, in its registry's order: for each name,
    whether its filters remove keys (``removes``) and grow as keys come
    (``grows``), and the configuration keys it takes (``keys``: RedisBloom's
    structures take no ``fpr`` or ``layout`` of bloomkit's sizing, say):
    ``{"standard": {"removes": False, "grows": False, "keys": [...]}, ...}``."""
    return {name: {"removes": removes, "grows": grows, "keys": keys}
            for name, removes, grows, keys in _native.variants()}


def set_clock(ms: Optional[int]) -> None:
    """The time every window filter of this process reads, fixed at ``ms``
    milliseconds since the epoch until the next call (``None``: the system's
    clock again), for tests and simulations that move time by hand. A window
    never acts on a time earlier than the latest it has seen: a step back
    freezes it (docs/windows.md). Set it while no batch is running."""
    _native.set_clock(ms)


def set_threads(n: int) -> None:
    """Threads that large batches (update, add_many, contains_many) use: 0
    (the default) one per CPU, at most 8; 1 the calling thread alone. Not
    while a batch is running (RuntimeError)."""
    _native.set_threads(n)
