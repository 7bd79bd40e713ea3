"""Loading libbloomkit.so and declaring its functions (ctypes).

The library is found, in order, at $BLOOMKIT_LIB (a path to the .so), in the
source tree's build/ directory (bindings/python/../../build, for a checkout
built with `make`), then by the system's loader (an installed libbloomkit.so.0).
ctypes releases the GIL around every call into the library.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path

from ._version import __version__

c_u64 = ctypes.c_uint64
c_size = ctypes.c_size_t
c_int = ctypes.c_int
c_str = ctypes.c_char_p
c_void = ctypes.c_void_p


class Config(ctypes.Structure):
    """struct bk_config (include/bloomkit.h)."""

    _fields_ = [
        ("variant", c_int),
        ("capacity", c_u64),
        ("fpr", ctypes.c_double),
        ("growth", ctypes.c_double),
        ("tightening", ctypes.c_double),
        ("hash", c_int),
        ("layout", c_int),
        ("has_key", c_int),
        ("key", ctypes.c_uint8 * 16),
        ("window_ms", c_u64),
        ("generations", c_u64),
        ("refresh", c_u64),
        ("max_bytes", c_u64),
        ("bits", c_u64),
        ("hashes", c_u64),
        ("struct_size", ctypes.c_uint32),
    ]


class ConfigErr(ctypes.Structure):
    """struct bk_config_error (include/bloomkit.h)."""

    _fields_ = [
        ("line", ctypes.c_uint),
        ("key", ctypes.c_char * 24),
        ("message", ctypes.c_char * 256),
    ]


class Stats(ctypes.Structure):
    """struct bk_filter_stats (include/bloomkit.h)."""

    _fields_ = [
        ("variant", c_str),
        ("hash", c_str),
        ("capacity", c_u64),
        ("fpr", ctypes.c_double),
        ("bits", c_u64),
        ("bytes", c_u64),
        ("k", ctypes.c_uint),
        ("keys", c_u64),
        ("set_bits", c_u64),
        ("fill", ctypes.c_double),
        ("est_cardinality", ctypes.c_double),
        ("est_fpr", ctypes.c_double),
        ("slices", ctypes.c_uint32),
        ("saturated", c_u64),
        ("model_fpr", ctypes.c_double),
        ("redated_from_ms", ctypes.c_int64),
        ("redated_to_ms", ctypes.c_int64),
    ]


def _candidates() -> list[str]:
    env = os.environ.get("BLOOMKIT_LIB")
    if env:
        return [env]  # asked for explicitly: nothing else
    here = Path(__file__).resolve().parent
    out = []
    packaged = here / "libbloomkit.so"  # built into the package by pip (setup.py)
    if packaged.exists():
        out.append(str(packaged))
    tree = here.parent.parent.parent / "build" / "libbloomkit.so"  # a source tree's build
    if tree.exists():
        out.append(str(tree))
    found = ctypes.util.find_library("bloomkit")
    if found:
        out.append(found)
    out.append("libbloomkit.so.0")
    return out


def _version_of(handle: ctypes.CDLL) -> str:
    fn = handle.bk_version
    fn.restype = ctypes.c_char_p
    fn.argtypes = []
    return fn().decode()


def _load() -> ctypes.CDLL:
    """The first candidate that loads and is this package's release: a
    library of another release has other functions and struct layouts, so it
    is refused with both versions named (never half-used)."""
    errors = []
    for path in _candidates():
        try:
            handle = ctypes.CDLL(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
            continue
        try:
            version = _version_of(handle)
        except AttributeError:
            errors.append(f"{path}: not libbloomkit (no bk_version)")
            continue
        if version == __version__:
            return handle
        errors.append(f"{path} is libbloomkit {version}, this package needs {__version__}")
    raise ImportError(
        "bloomkit: cannot load libbloomkit.so " + __version__ + " (pip install "
        "./bindings/python builds it into the package; or build it with `make`, install it "
        "with `make install`, or point BLOOMKIT_LIB at it): " + "; ".join(errors)
    )


lib = _load()


def _load_redis():
    """libbloomkit-redis, the optional part: $BLOOMKIT_REDIS_LIB, beside the
    core library that was loaded, or by the system's loader; None when it is
    not there (then only BloomFilter.redis is unavailable, and says so)."""
    env = os.environ.get("BLOOMKIT_REDIS_LIB")
    core = getattr(lib, "_name", "") or ""
    paths = [env] if env else []
    if not env and os.path.sep in core:
        paths.append(os.path.join(os.path.dirname(core), "libbloomkit-redis.so"))
    if not env:
        paths.append("libbloomkit-redis.so.0")
    for path in paths:
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


redis_lib = _load_redis()

_P = c_void  # bk_filter *
_PP = ctypes.POINTER(c_void)

_SIGNATURES = {
    "bk_strerror": (c_str, [c_int]),
    "bk_err_name": (c_str, [c_int]),
    "bk_last_error": (c_str, []),
    "bk_version": (c_str, []),
    "bk_config_parse": (c_int, [ctypes.POINTER(Config), c_str, ctypes.c_char_p, c_size]),
    "bk_config_parse_over": (c_int, [ctypes.POINTER(Config), c_str, ctypes.c_char_p, c_size]),
    "bk_config_format": (c_int, [ctypes.POINTER(Config), c_int, ctypes.c_char_p, c_size]),
    "bk_config_init": (None, [ctypes.POINTER(Config)]),
    "bk_config_read": (c_int, [ctypes.POINTER(Config), c_str, ctypes.POINTER(ConfigErr)]),
    "bk_config_diff": (c_str, [ctypes.POINTER(Config), ctypes.POINTER(Config)]),
    "bk_config_set": (c_int, [ctypes.POINTER(Config), c_str, c_str, ctypes.c_char_p, c_size]),
    "bk_config_text_sets": (c_int, [c_str, c_str]),
    "bk_new": (c_int, [ctypes.POINTER(Config), _PP]),
    "bk_free": (None, [_P]),
    "bk_add": (c_int, [_P, c_void, c_size]),
    "bk_contains": (c_int, [_P, c_void, c_size]),
    "bk_remove": (c_int, [_P, c_void, c_size]),
    "bk_clear": (c_int, [_P]),
    "bk_add_batch": (c_int, [_P, ctypes.POINTER(c_str), ctypes.POINTER(c_size), c_size,
                             ctypes.POINTER(c_int)]),
    "bk_contains_batch": (c_int, [_P, ctypes.POINTER(c_str), ctypes.POINTER(c_size), c_size,
                                  ctypes.POINTER(c_int)]),
    "bk_stats": (c_int, [_P, ctypes.POINTER(Stats)]),
    "bk_stats_sized": (c_int, [_P, ctypes.POINTER(Stats), c_size]),
    "bk_abi_layout": (c_size, [c_str, c_str]),
    "bk_get_config": (c_int, [_P, ctypes.POINTER(Config)]),
    "bk_save": (c_int, [_P, c_str]),
    "bk_load": (c_int, [c_str, _PP]),
    "bk_save_size": (c_int, [_P, ctypes.POINTER(ctypes.c_uint64)]),
    "bk_save_buffer": (c_int, [_P, ctypes.c_void_p, c_size, ctypes.POINTER(c_size)]),
    "bk_load_buffer": (c_int, [ctypes.c_char_p, c_size, _PP]),
    "bk_merge": (c_int, [_P, _P]),
    "bk_intersect": (c_int, [_P, _P]),
    "bk_open_mmap": (c_int, [c_str, ctypes.c_uint, _PP]),
    "bk_sync": (c_int, [_P]),
    "bk_close": (c_int, [_P]),
    "bk_copy": (c_int, [_P, _PP]),
    "bk_lock_file": (c_int, [c_str, ctypes.c_uint, _PP]),
    "bk_unlock_file": (None, [_P]),
    "bk_url_canonical": (c_int, [ctypes.c_char_p, c_size, ctypes.c_uint, ctypes.c_void_p, c_size,
                                 ctypes.POINTER(c_size)]),
}

_REDIS_SIGNATURES = {
    "bk_redis_open_config": (c_int, [c_str, c_str, ctypes.c_char_p, c_size, _PP]),
}

for _lib, _table in ((lib, _SIGNATURES), (redis_lib, _REDIS_SIGNATURES)):
    if _lib is None:
        continue
    for _name, (_res, _args) in _table.items():
        _fn = getattr(_lib, _name)
        _fn.restype = _res
        _fn.argtypes = _args

def _error_codes():
    """The library's error codes by name (bk_err_name: 0, -1, ... until
    BK_UNKNOWN, its name for a code it does not know), so they are written
    once, in bloomkit.h."""
    codes = {}
    for code in range(0, -1000, -1):
        name = lib.bk_err_name(code).decode()
        if name == "BK_UNKNOWN":
            break
        codes[name] = code
    return codes


ERRORS = _error_codes()
globals().update(ERRORS)  # BK_OK, BK_EINVAL, ... as module attributes

LOCK_NOWAIT = 1

MAP_READONLY = 0
MAP_WRITE = 1
MAP_NOVERIFY = 2


def _check_layout() -> None:
    """The ctypes mirrors must have the library's layout (sizes and every
    field's offset, as bk_abi_layout reports them): a library of another
    release would otherwise be read and written at the wrong places."""
    for struct, name in ((Config, "bk_config"), (Stats, "bk_filter_stats"),
                         (ConfigErr, "bk_config_error")):
        want = lib.bk_abi_layout(name.encode(), None)
        if want != ctypes.sizeof(struct):
            raise ImportError(
                f"bloomkit: the library's {name} has {want} bytes, this binding's "
                f"{ctypes.sizeof(struct)}: the binding and libbloomkit.so come from "
                f"different versions (library {lib.bk_version().decode()})"
            )
        for field, _ in struct._fields_:
            off = lib.bk_abi_layout(name.encode(), field.encode())
            if off != getattr(struct, field).offset:
                raise ImportError(
                    f"bloomkit: {name}.{field} is at offset {off} in the library, "
                    f"{getattr(struct, field).offset} in this binding: different versions"
                )


_check_layout()
