/*
 * error.c - error texts and names, generated from BK_ERROR_LIST in bloomkit.h
 * so that a new code cannot be added without its message.
 */
#include "bloomkit.h"

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
