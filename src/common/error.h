/* error.h - recording the detail behind an error code (internal). */
#ifndef BK_COMMON_ERROR_H
#define BK_COMMON_ERROR_H

#include <stddef.h>

#include "export.h"

/* Store a printf-style detail for bk_last_error() in this thread and return
 * code, so failures read `return bk_fail(BK_ECORRUPT, "bad magic");`. */
BK_INTERNAL int bk_fail(int code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* For a caller that prefixes what a callee says: clear the detail before
 * the call (bk_detail_clear), then bk_detail_or copies into buf (len bytes)
 * the detail the callee left, or `fallback` when it said nothing, so that
 * the caller's bk_fail can quote it. Returns buf. */
void bk_detail_clear(void);
const char *bk_detail_or(const char *fallback, char *buf, size_t len);

#endif
