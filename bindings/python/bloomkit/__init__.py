"""bloomkit: Bloom filters (standard, 4-bit counting with removal, scalable)
from the bloomkit C library, in memory, mapped from files, or shared through
Redis. See docs/python.md.

    >>> from bloomkit import BloomFilter
    >>> seen = BloomFilter("variant=scalable capacity=100000 fpr=0.0001")
    >>> seen.add("https://example.org/")
    True
    >>> "https://example.org/" in seen
    True
"""
from ._lib import lib as _lib_handle
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
    "library_version",
]


from ._version import __version__  # the release, as include/bloomkit.h has it


def library_version() -> str:
    """The version of the libbloomkit.so in use ("0.1.0")."""
    return _lib_handle.bk_version().decode()
