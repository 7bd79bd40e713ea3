"""Exceptions raised by bloomkit: one base class, each also the built-in
exception a Python caller expects (ValueError for bad configuration, OSError
for I/O, KeyError for removing an absent key, ...). Every one carries the
library's error code (``code``), its name (``name``, "BK_EIO") and message."""
from __future__ import annotations

from . import _lib
from . import _native  # (after _lib, whose import checks the release)


class BloomkitError(Exception):
    """Base of every bloomkit error. ``code`` is the library's (negative) code."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.name = _native.err_name(code)


class ConfigError(BloomkitError, ValueError):
    """An invalid configuration or argument (BK_ECONFIG, BK_EINVAL, BK_ERANGE).
    For a bad config text, ``key`` names the key at fault (None for a syntax
    error) and ``line`` its line (1-based), from the library's structured
    error: no need to read the message."""

    key = None
    line = None


class IncompatibleError(BloomkitError, ValueError):
    """Filters or a shared filter's parameters do not agree (BK_EINCOMPAT)."""


class NotFoundError(BloomkitError, KeyError):
    """remove() of a key the filter does not hold (BK_ENOTFOUND)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class UnsupportedError(BloomkitError, TypeError):
    """The variant cannot do this (remove on standard or scalable: BK_ENOTSUP)."""


class FilterIOError(BloomkitError, OSError):
    """Reading or writing a file failed (BK_EIO, BK_ESYS), or it is corrupt
    (BK_ECORRUPT)."""


class ReadOnlyError(BloomkitError, PermissionError):
    """A write to a filter mapped read-only (BK_EREADONLY)."""


class FileLockedError(BloomkitError, BlockingIOError):
    """Another process is writing the file (BK_EBUSY, from FileLock with
    ``wait=False``); the message names its pid."""


class FilterFullError(BloomkitError):
    """The filter has no room for the key (BK_EFULL): growing would pass its
    max_bytes, or a cuckoo filter's buckets are full. The add changed
    nothing, lookups still work; the message says which."""


class ServerError(BloomkitError, ConnectionError):
    """The Redis server refused the request or answered oddly (BK_ESERVER)."""


_CLASSES = {
    _lib.ERRORS["BK_EINVAL"]: ConfigError,
    _lib.ERRORS["BK_ECONFIG"]: ConfigError,
    _lib.ERRORS["BK_ERANGE"]: ConfigError,
    _lib.ERRORS["BK_EINCOMPAT"]: IncompatibleError,
    _lib.ERRORS["BK_ENOTFOUND"]: NotFoundError,
    _lib.ERRORS["BK_ENOTSUP"]: UnsupportedError,
    _lib.ERRORS["BK_EIO"]: FilterIOError,
    _lib.ERRORS["BK_ESYS"]: FilterIOError,
    _lib.ERRORS["BK_ECORRUPT"]: FilterIOError,
    _lib.ERRORS["BK_EREADONLY"]: ReadOnlyError,
    _lib.ERRORS["BK_ESERVER"]: ServerError,
    _lib.ERRORS["BK_EBUSY"]: FileLockedError,
    _lib.ERRORS["BK_EFULL"]: FilterFullError,
}


def error_for(code: int, what: str, detail: str | None = None) -> Exception:
    """The exception for library code `code` raised by operation `what`.
    `detail` is the library's detail text (bk_last_error or an error buffer),
    used only when the call is documented to set it."""
    text = _native.strerror(code)
    if detail and detail.startswith(what + ": "):
        detail = detail[len(what) + 2:]  # the library named the operation already: once
    message = f"{what}: {detail}" if detail else f"{what}: {text}"
    if code == _lib.ERRORS["BK_ENOMEM"]:
        return MemoryError(message)
    return _CLASSES.get(code, BloomkitError)(code, message)


_native._set_error_factory(error_for)  # the extension raises through it
