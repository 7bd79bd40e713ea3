/*
 * export.h - BK_INTERNAL: an internal function that bloomkit's own optional
 * library, libbloomkit-redis, calls across the shared-library boundary.
 * Exported from libbloomkit.so like the public API (only bk_* names leave
 * it: `make check-exports`), but declared only under src/: not part of the
 * API and with no stability promise. The optional library is built from the
 * same release and requires that exact version (bloomkit-redis.pc).
 */
#ifndef BK_COMMON_EXPORT_H
#define BK_COMMON_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define BK_INTERNAL __attribute__((visibility("default")))
#else
#define BK_INTERNAL
#endif

#endif
