"""canonical_url: the spelling of a URL that bloomkit's --canonical-urls
decides on (the C library's bk_url_canonical; rules in docs/urls.md)."""
from typing import Union, overload

from . import _native  # (after _lib, whose import checks the release)


@overload
def canonical_url(url: str, keep_query_order: bool = False) -> str: ...
@overload
def canonical_url(url: bytes, keep_query_order: bool = False) -> bytes: ...


def canonical_url(url: Union[str, bytes], keep_query_order: bool = False) -> Union[str, bytes]:
    """The canonical form of `url`: scheme and host lower-cased, default port,
    fragment and dot segments removed, an empty path as "/", escapes
    normalised (unreserved characters decoded, hex upper-cased, spaces and
    non-ASCII in path and query percent-encoded as UTF-8; a host as given),
    and the query's parameters sorted unless `keep_query_order`. Text that is
    not an absolute URL with an authority ("scheme://...") comes back as it
    is: never an error. str in, str out (UTF-8; undecodable bytes of a str
    from surrogateescape round-trip), bytes in, bytes out. Thread-safe."""
    if isinstance(url, str):
        raw = url.encode("utf-8", "surrogateescape")
    elif isinstance(url, (bytes, bytearray, memoryview)):
        raw = bytes(url)
    else:
        raise TypeError(f"bloomkit: a URL is str or bytes, not {type(url).__name__}")
    flags = _native.URL_KEEP_QUERY_ORDER if keep_query_order else 0
    result = _native.canonical_url(raw, flags)
    return result.decode("utf-8", "surrogateescape") if isinstance(url, str) else result
