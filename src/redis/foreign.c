/*
 * foreign.c - what a name holds when it is someone else's data: its type
 * and size (bk_redis_key_type, bloomkit_redis.h), and the error that says
 * so, and what to do, to an opener that met it (bk_redis_foreign).
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bloomkit_redis.h"

#include "../common/error.h"
#include "conn.h"
#include "foreign.h"
#include "redis_url.h"

int bk_redis_key_type(const char *url, const char *key, char *type, size_t typelen, uint64_t *size)
{
    bk_call_begin();
    if (!url || !key || !type || !typelen || !size)
        return bk_fail(BK_EINVAL, "redis_key_type: no url, key or output");
    type[0] = '\0';
    *size = 0;
    bk_redis_url u;
    int rc = bk_redis_url_parse(url, &u);
    if (rc != BK_OK)
        return bk_done(rc, "redis_key_type");
    bk_rconn *c = NULL;
    rc = bk_rconn_open(&u, &c);
    if (rc == BK_OK)
        rc = bk_rconn_type(c, key, type, typelen);
    static const char *const sizes[][2] = {{"string", "STRLEN"},
                                           {"set", "SCARD"},
                                           {"hash", "HLEN"},
                                           {"list", "LLEN"},
                                           {"zset", "ZCARD"}};
    for (size_t i = 0; rc == BK_OK && i < sizeof sizes / sizeof *sizes; i++)
        if (strcmp(type, sizes[i][0]) == 0)
            *size = bk_rconn_count(c, sizes[i][1], key);
    bk_rconn_close(c);
    bk_redis_url_free(&u);
    return bk_done(rc, "redis_key_type");
}

int bk_redis_foreign(bk_rconn *c, const char *name)
{
    char type[32] = "";
    const int rc = bk_rconn_type(c, name, type, sizeof type);
    if (rc != BK_OK)
        return rc;
    if (strcmp(type, "set") == 0)
        return bk_fail(BK_ESERVER,
                       "redis filter %s: the key %s is a set of %" PRIu64
                       " members, not a bloomkit filter (scrapy-redis keeps its request "
                       "fingerprints so); nothing was changed. To move its crawl over, import "
                       "it: bloomkit import --redis URL --from-set %s (Python: "
                       "bloomkit.import_set(url, \"%s\")), then crawl on with bloomkit's filter",
                       name, name, bk_rconn_count(c, "SCARD", name), name, name);
    if (strcmp(type, "string") == 0)
        return bk_fail(BK_ESERVER,
                       "redis filter %s: the key %s is a string of %" PRIu64
                       " bytes, not a bloomkit filter (the bitmap of another Bloom filter?); "
                       "nothing was changed. Its bits cannot be imported: they were set by "
                       "another hashing than bloomkit's. Give bloomkit's filter another name, or "
                       "delete the key once nothing uses it",
                       name, name, bk_rconn_count(c, "STRLEN", name));
    return bk_fail(BK_ESERVER,
                   "redis filter %s: the key %s is a %s, not a bloomkit filter; nothing was "
                   "changed: give bloomkit's filter another name",
                   name, name, type);
}
