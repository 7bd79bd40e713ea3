/*
 * none.c - the Redis part built without hiredis (make HIREDIS=0, which the
 * Makefile chooses when hiredis's headers are missing): the library's
 * functions, each failing with BK_ENOTSUP and saying why, so that the
 * command, the Python binding and programs link and run unchanged, and only
 * what needs Redis refuses.
 */
#include <stddef.h>
#include <string.h>

#include "bloomkit_redis.h"

#include "../../common/error.h"

static int none(const char *what)
{
    return bk_fail(BK_ENOTSUP,
                   "%s: this bloomkit was built without hiredis, so it cannot reach Redis "
                   "(install hiredis's development files, libhiredis-dev on Debian, and "
                   "rebuild)",
                   what);
}

int bk_redis_open(const char *url, const bk_config *cfg, bk_filter **out)
{
    (void)url;
    (void)cfg;
    if (out)
        *out = NULL;
    return none("redis_open");
}

int bk_redis_open_existing(const char *url, bk_filter **out)
{
    (void)url;
    if (out)
        *out = NULL;
    return none("redis_open_existing");
}

int bk_redis_open_config(const char *url, const char *config_text, char *err, size_t errlen,
                         bk_filter **out)
{
    (void)url;
    (void)config_text;
    if (out)
        *out = NULL;
    const int rc = none("redis_open_config");
    if (err && errlen)
        bk_detail_or("", err, errlen);
    return rc;
}

int bk_redis_push(const bk_filter *f, const char *url)
{
    (void)f;
    (void)url;
    return none("redis_push");
}

int bk_redis_pull(const char *url, bk_filter **out)
{
    (void)url;
    if (out)
        *out = NULL;
    return none("redis_pull");
}

int bk_redis_drop(const char *url)
{
    (void)url;
    return none("redis_drop");
}

int bk_redis_import_set(const char *url, const char *set_key, const char *config_text,
                        bk_progress_fn progress, void *arg, bk_redis_import_stats *st)
{
    (void)url;
    (void)set_key;
    (void)config_text;
    (void)progress;
    (void)arg;
    if (st)
        memset(st, 0, sizeof *st);
    return none("redis_import_set");
}

int bk_redis_key_type(const char *url, const char *key, char *type, size_t typelen, uint64_t *size)
{
    (void)url;
    (void)key;
    if (type && typelen)
        type[0] = '\0';
    if (size)
        *size = 0;
    return none("redis_key_type");
}
