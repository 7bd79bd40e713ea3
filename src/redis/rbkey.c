/*
 * rbkey.c - RedisBloom's keys (types MBbloom-- and MBbloomCF, kept by
 * RedisBloom or by bloomkit's module) as the Lua mode's library meets
 * them: bk_redis_pull copies one into a filter of variant rbchain or
 * rbcuckoo through its SCANDUMP (RedisBloom's layout: the header at
 * iterator 1, then the arrays; bk_chunked_*), and bk_redis_push copies
 * such a filter (hash=murmur) back through LOADCHUNK, so that either
 * server, RedisBloom or bloomkit's module, takes it.
 */
#include <stdio.h>
#include <string.h>

#include "bloomkit_redisbloom.h"
#include "../common/error.h"
#include "modkey.h"

/* "BF" or "CF": the commands of the kind. */
static const char *family(int cuckoo)
{
    return cuckoo ? "CF" : "BF";
}

/* Feed one chunk of RedisBloom's dump into the filter being built (made
 * from the header at iterator 1, within what a file holds). */
static int take_chunk(int cuckoo, bk_filter **f, long long it, const char *data, size_t len)
{
    if (it == 1 && !*f)
        return bk_chunked_new(cuckoo ? BK_VARIANT_RBCUCKOO : BK_VARIANT_RBCHAIN, data, len,
                              BK_RB_FILE, 0, f);
    if (!*f)
        return bk_fail(BK_ESERVER, "the dump does not start with its header");
    return bk_chunked_load(*f, it, data, len);
}

/* long: the dump read chunk by chunk, each step with its own error. */
int bk_rmod_pull_rb(bk_rconn *c, const char *name, int cuckoo, bk_filter **out)
{
    bk_filter *s = NULL;
    long long it = 0;
    int rc = BK_OK;
    char cmd[16];
    snprintf(cmd, sizeof cmd, "%s.SCANDUMP", family(cuckoo));
    for (;;) {
        redisReply *r;
        char at[24];
        snprintf(at, sizeof at, "%lld", it);
        const char *argv[] = {cmd, name, at};
        if ((rc = bk_rconn_call(c, name, strlen(name), &r, 3, argv, NULL)) != BK_OK)
            break;
        const int shaped = r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
                           r->element[0]->type == REDIS_REPLY_INTEGER;
        const long long next = shaped ? r->element[0]->integer : -1;
        if (shaped && next == 0 && !s) /* RedisBloom's empty cuckoo filter: no dump */
            rc = bk_fail(BK_ENOTSUP,
                         "pull: redis filter %s is an empty cuckoo filter, which RedisBloom "
                         "does not dump: add an item first, or make a new one",
                         name);
        else if (shaped && next != 0 && r->element[1]->type == REDIS_REPLY_STRING)
            rc = take_chunk(cuckoo, &s, next, r->element[1]->str, r->element[1]->len);
        else if (!shaped || next != 0)
            rc = bk_fail(BK_ESERVER, "pull: redis filter %s: %s answered %.200s", name, cmd,
                         r->type == REDIS_REPLY_ERROR ? r->str : "a reply of an unexpected shape");
        freeReplyObject(r);
        if (rc != BK_OK || next == 0)
            break;
        it = next;
    }
    if (rc != BK_OK) {
        const char *why = bk_last_error();
        bk_free(s);
        return rc == BK_ESERVER || rc == BK_ENOTSUP || rc == BK_ENOMEM || rc == BK_EIO
                   ? rc
                   : bk_fail(BK_ESERVER, "pull: redis filter %s: its dump is not RedisBloom's: %s",
                             name, why);
    }
    *out = s;
    return BK_OK;
}

/* Send one chunk with LOADCHUNK: BK_OK or an error naming the reply. */
static int send_chunk(bk_rconn *c, const char *name, int cuckoo, long long it, const void *data,
                      size_t len)
{
    char cmd[16], at[24];
    snprintf(cmd, sizeof cmd, "%s.LOADCHUNK", family(cuckoo));
    snprintf(at, sizeof at, "%lld", it);
    const char *argv[] = {cmd, name, at, data};
    const size_t lens[] = {strlen(cmd), strlen(name), strlen(at), len};
    redisReply *r;
    int rc = bk_rconn_call(c, name, strlen(name), &r, 4, argv, lens);
    if (rc != BK_OK)
        return rc;
    if (r->type == REDIS_REPLY_ERROR)
        rc = strstr(r->str, "item exists")
                 ? bk_fail(BK_EINCOMPAT, "redis filter %s already exists; push needs a new name",
                           name)
                 : bk_fail(BK_ESERVER, "push: redis filter %s: %s answered %.200s", name, cmd,
                           r->str);
    freeReplyObject(r);
    return rc;
}

int bk_rmod_push_rb(bk_rconn *c, const char *name, const bk_filter *f)
{
    bk_config cfg;
    uint8_t stack[4096];
    size_t need;
    int rc = bk_get_config(f, &cfg);
    if (rc == BK_OK)
        rc = bk_chunked_header(f, stack, sizeof stack, &need);
    if (rc != BK_OK)
        return rc;
    if (need > sizeof stack)
        return bk_fail(BK_ENOTSUP, "push: a chain of %zu header bytes (more than %zu links)", need,
                       (sizeof stack - 20) / 53);
    const int cuckoo = cfg.variant == BK_VARIANT_RBCUCKOO;
    rc = send_chunk(c, name, cuckoo, 1, stack, need);
    for (long long it = 1; rc == BK_OK;) {
        const uint8_t *data;
        size_t len;
        long long next;
        if ((rc = bk_chunked_next(f, it, &data, &len, &next)) != BK_OK || len == 0)
            break;
        rc = send_chunk(c, name, cuckoo, next, data, len);
        it = next;
    }
    return rc;
}

/* 1 when f holds RedisBloom's data as RedisBloom hashes it (variant
 * rbchain or rbcuckoo, hash=murmur). */
static int rb_data(const bk_filter *f)
{
    bk_config cfg;
    return f && bk_get_config(f, &cfg) == BK_OK && cfg.hash == BK_HASH_MURMUR;
}

int bk_rmod_rb_turn(int is, int what, const bk_filter *f)
{
    return is == BK_RMOD_RBCHAIN || is == BK_RMOD_RBCUCKOO ||
           (is == BK_RMOD_NONE && what == BK_RMOD_PUSH && rb_data(f));
}

int bk_rmod_try_rb(bk_rconn *c, const char *name, int is, int what, unsigned shards,
                   const bk_filter *f, bk_filter **out)
{
    if (is == BK_RMOD_NONE) /* a push: back as RedisBloom's type, which both servers take */
        return shards > 1 ? bk_fail(BK_ENOTSUP,
                                    "push: RedisBloom's filter cannot be split into shards "
                                    "(shards=%u)",
                                    shards)
                          : bk_rmod_push_rb(c, name, f);
    if (what == BK_RMOD_PULL)
        return bk_rmod_pull_rb(c, name, is == BK_RMOD_RBCUCKOO, out);
    if (what == BK_RMOD_DROP)
        return bk_rconn_unlink(c, name);
    return bk_fail(BK_EINCOMPAT,
                   "redis filter %s already exists (RedisBloom's); push needs a new name, or "
                   "the old one dropped first",
                   name);
}
