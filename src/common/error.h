/* error.h - recording the detail behind an error code (internal). */
#ifndef BK_COMMON_ERROR_H
#define BK_COMMON_ERROR_H

#include <stdarg.h>
#include <stddef.h>

/* Store a printf-style detail for bk_last_error() in this thread and return
 * code, so failures read `return bk_fail(BK_ECORRUPT, "bad magic");`. */
int bk_fail(int code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* bk_fail with a va_list. */
int bk_vfail(int code, const char *fmt, va_list ap);

/* A configuration error (BK_ECONFIG) said both ways: the detail for
 * bk_last_error(), and a copy into the caller's buffer err (errlen bytes;
 * nothing when err is NULL or errlen is 0). */
void bk_errorf(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* For a caller that prefixes what a callee says: clear the detail before
 * the call (bk_detail_clear), then bk_detail_or copies into buf (len bytes)
 * the detail the callee left, or `fallback` when it said nothing, so that
 * the caller's bk_fail can quote it. Returns buf. */
void bk_detail_clear(void);
const char *bk_detail_or(const char *fallback, char *buf, size_t len);

/* The error model's two steps (the rule is bloomkit.h's, at bk_last_error).
 * A public call that may fail begins with bk_call_begin(), so that no older
 * detail survives it, and leaves through bk_done(rc, what): rc, and when rc
 * is negative and nothing in the call said why, the detail "<what>: <the
 * code's text>". A call too hot for the first step (bk_add, bk_contains,
 * bk_remove) sets the detail where each failure starts instead: its argument
 * checks say why, and the rare paths that may fail deeper (a chain's growth,
 * a window's turn, a server) clear the detail when they start. */
#define bk_call_begin() bk_detail_clear()
int bk_fail_plain(int code, const char *what);
static inline int bk_done(int rc, const char *what)
{
    return rc < 0 ? bk_fail_plain(rc, what) : rc;
}

#endif
