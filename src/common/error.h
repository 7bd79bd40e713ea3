/* error.h - recording the detail behind an error code (internal). */
#ifndef BK_COMMON_ERROR_H
#define BK_COMMON_ERROR_H

#include "export.h"

/* Store a printf-style detail for bk_last_error() in this thread and return
 * code, so failures read `return bk_fail(BK_ECORRUPT, "bad magic");`. */
BK_INTERNAL int bk_fail(int code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
