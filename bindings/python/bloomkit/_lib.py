"""The C extension (bloomkit._native, bindings/python/src) and the check that
it is this package's release.

pip builds the extension with the library linked in (one release, always);
Debian's python3-bloomkit links it against the packaged libbloomkit.so.0, so
the library in use may be another release than the one the extension was
built with: then the import fails, with both versions named, instead of a
half-working binding.
"""
from __future__ import annotations

from ._version import __version__

try:
    from . import _native
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError(
        f"bloomkit: its C extension bloomkit._native cannot be loaded ({e}): install the "
        "package with `pip install ./bindings/python`, or build a source tree with `make` "
        "and put its build/python on PYTHONPATH"
    ) from e


def check_release(library: str, built: str, package: str) -> None:
    """ImportError unless the library in use, the one the extension was
    compiled against and the Python package are one release."""
    if library != package:
        raise ImportError(
            f"bloomkit: the library in use is libbloomkit {library}, this package needs "
            f"{package}: install libbloomkit0 {package} (or reinstall the package)"
        )
    if built != package:
        raise ImportError(
            f"bloomkit: the extension was built against libbloomkit {built}, this package "
            f"needs {package}: rebuild it"
        )


check_release(_native.library_version(), _native.BUILT_VERSION, __version__)

ERRORS = dict(_native.ERRORS)  # the library's codes by name: BK_OK, BK_EIO, ...
globals().update(ERRORS)

MAP_READONLY = 0
MAP_WRITE = _native.MAP_WRITE
MAP_NOVERIFY = _native.MAP_NOVERIFY
