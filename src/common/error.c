/*
 * error.c - error texts and names, generated from BK_ERROR_LIST in bloomkit.h
 * so that a new code cannot be added without its message.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bloomkit.h"
#include "error.h"

/* Room for a path and an OS message; longer detail is cut, never overrun. */
#define DETAIL_MAX 512

static _Thread_local char g_detail[DETAIL_MAX];

const char *bk_last_error(void)
{
    return g_detail;
}

int bk_vfail(int code, const char *fmt, va_list ap)
{
    char line[DETAIL_MAX]; /* the arguments may quote the detail itself */
    vsnprintf(line, sizeof line, fmt, ap);
    memcpy(g_detail, line, sizeof line);
    return code;
}

int bk_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bk_vfail(code, fmt, ap);
    va_end(ap);
    return code;
}

int bk_fail_plain(int code, const char *what)
{
    if (!g_detail[0])
        snprintf(g_detail, sizeof g_detail, "%s: %s", what, bk_strerror(code));
    return code;
}

void bk_detail_clear(void)
{
    g_detail[0] = '\0';
}

const char *bk_detail_or(const char *fallback, char *buf, size_t len)
{
    snprintf(buf, len, "%s", g_detail[0] ? g_detail : fallback);
    return buf;
}

const char *bk_strerror(int code)
{
    switch (code) {
#define BK_ERROR_TEXT_(name, value, text)                                                          \
    case value:                                                                                    \
        return text;
        BK_ERROR_LIST(BK_ERROR_TEXT_)
#undef BK_ERROR_TEXT_
    default:
        return "unknown error";
    }
}

const char *bk_err_name(int code)
{
    switch (code) {
#define BK_ERROR_NAME_(name, value, text)                                                          \
    case value:                                                                                    \
        return #name;
        BK_ERROR_LIST(BK_ERROR_NAME_)
#undef BK_ERROR_NAME_
    default:
        return "BK_UNKNOWN";
    }
}

const char *bk_version(void)
{
    return BK_VERSION_STRING;
}

void bk_errorf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bk_vfail(BK_ECONFIG, fmt, ap); /* the same line in bk_last_error() */
    va_end(ap);
    if (err && errlen && err != bk_last_error())
        snprintf(err, errlen, "%s", bk_last_error());
}
