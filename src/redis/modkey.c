/*
 * modkey.c - filters kept by bloomkit's Redis module (module/, docs/redis.md)
 * as the Lua mode's library meets them: a name that holds one (TYPE
 * "bloomkit0") is reported by bk_redis_open as a module filter rather than
 * misread; bk_redis_pull copies it out through BF.SCANDUMP (its image in the
 * file format, loaded with every check of bk_load_buffer), bk_redis_drop
 * deletes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/error.h"
#include "modkey.h"
#include "shards.h"

#define PUSH_CHUNK ((size_t)16 << 20) /* bytes a BF.LOADCHUNK */

int bk_rmod_is(bk_rconn *c, const char *name)
{
    redisReply *r;
    int rc = bk_rconn_callf(c, name, &r, "TYPE %s", name);
    if (rc != BK_OK)
        return rc;
    const int is = r->type != REDIS_REPLY_STATUS       ? BK_RMOD_OTHER
                   : strcmp(r->str, BK_RMOD_TYPE) == 0 ? BK_RMOD_MODULE
                   : strcmp(r->str, "none") == 0       ? BK_RMOD_NONE
                   : strcmp(r->str, "string") == 0     ? BK_RMOD_SHARDS
                   : strcmp(r->str, "MBbloom--") == 0  ? BK_RMOD_RBCHAIN
                   : strcmp(r->str, "MBbloomCF") == 0  ? BK_RMOD_RBCUCKOO
                                                       : BK_RMOD_OTHER;
    freeReplyObject(r);
    if (is != BK_RMOD_SHARDS)
        return is;
    /* a string: a shard descriptor, or someone else's */
    const char *argv[] = {"GETRANGE", name, "0", "63"};
    if ((rc = bk_rconn_call(c, name, strlen(name), &r, 4, argv, NULL)) != BK_OK)
        return rc;
    const int shards = r->type == REDIS_REPLY_STRING && bk_rshards_is(r->str, r->len);
    freeReplyObject(r);
    return shards ? BK_RMOD_SHARDS : BK_RMOD_OTHER;
}

int bk_rmod_push(bk_rconn *c, const char *name, const bk_filter *f)
{
    const bk_allocator a = bk_current_allocator();
    uint64_t size;
    int rc = bk_save_size(f, &size);
    if (rc != BK_OK)
        return rc;
    if (size > SIZE_MAX)
        return bk_fail(BK_ERANGE, "push: a %llu-byte image does not fit this machine's memory",
                       (unsigned long long)size);
    uint8_t *image = bk_mem_alloc(&a, size ? (size_t)size : 1);
    size_t len = 0;
    if (!image)
        return bk_fail(BK_ENOMEM, "push: out of memory for a %llu-byte image",
                       (unsigned long long)size);
    rc = bk_save_buffer(f, image, (size_t)size, &len);
    for (size_t off = 0; rc == BK_OK && off < len;) {
        const size_t n = len - off < PUSH_CHUNK ? len - off : PUSH_CHUNK;
        char it[24];
        snprintf(it, sizeof it, "%zu", off + n);
        const char *argv[] = {"BF.LOADCHUNK", name, it, (const char *)image + off};
        const size_t lens[] = {12, strlen(name), strlen(it), n};
        redisReply *r;
        /* a resent chunk is harmless: the first one restarts the load, a
         * later one the module refuses as out of order (an error here) */
        if ((rc = bk_rconn_call(c, name, strlen(name), &r, 4, argv, lens)) != BK_OK)
            break;
        if (r->type == REDIS_REPLY_ERROR)
            rc = strstr(r->str, "item exists")
                     ? bk_fail(BK_EINCOMPAT,
                               "redis filter %s already exists; push needs a new "
                               "name",
                               name)
                     : bk_fail(BK_ESERVER, "push: redis filter %s: BF.LOADCHUNK answered %.200s",
                               name, r->str);
        freeReplyObject(r);
        off += n;
    }
    bk_mem_free(&a, image);
    return rc;
}

/* long: the image read chunk by chunk, each step with its own error. */
int bk_rmod_pull(bk_rconn *c, const char *name, bk_filter **out)
{
    const bk_allocator a = bk_current_allocator();
    uint8_t *image = NULL;
    size_t len = 0, cap = 0;
    long long iter = 0;
    int rc = BK_OK;
    for (;;) {
        redisReply *r;
        char it[24];
        snprintf(it, sizeof it, "%lld", iter);
        const char *argv[] = {"BF.SCANDUMP", name, it};
        if ((rc = bk_rconn_call(c, name, strlen(name), &r, 3, argv, NULL)) != BK_OK)
            break;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_INTEGER ||
            r->element[1]->type != REDIS_REPLY_STRING) {
            rc = bk_fail(BK_ESERVER, "pull: redis filter %s: BF.SCANDUMP answered %.200s", name,
                         r->type == REDIS_REPLY_ERROR ? r->str : "a reply of an unexpected shape");
            freeReplyObject(r);
            break;
        }
        const long long next = r->element[0]->integer;
        const size_t n = r->element[1]->len;
        if (next == 0) {
            freeReplyObject(r);
            break;
        }
        const uint64_t end = (uint64_t)next & ((UINT64_C(1) << BK_SCANDUMP_OFFSET_BITS) - 1);
        if (next < 0 || end != (uint64_t)len + n) {
            freeReplyObject(r);
            rc = bk_fail(BK_ESERVER,
                         "pull: redis filter %s: BF.SCANDUMP's chunks do not follow "
                         "each other",
                         name);
            break;
        }
        if (len + n > cap) {
            size_t want = cap ? cap : (size_t)1 << 20;
            while (want < len + n)
                want *= 2;
            uint8_t *grown = bk_mem_alloc(&a, want);
            if (!grown) {
                freeReplyObject(r);
                rc = bk_fail(BK_ENOMEM, "pull: out of memory for %zu bytes", want);
                break;
            }
            if (image)
                memcpy(grown, image, len);
            bk_mem_free(&a, image);
            image = grown;
            cap = want;
        }
        memcpy(image + len, r->element[1]->str, n);
        len += n;
        iter = next;
        freeReplyObject(r);
    }
    if (rc == BK_OK)
        rc = bk_load_buffer(image, len, out);
    bk_mem_free(&a, image);
    return rc;
}

int bk_rmod_available(bk_rconn *c, const char *name)
{
    redisReply *r;
    const int rc = bk_rconn_callf(c, name, &r, "COMMAND INFO BK.CREATE");
    if (rc != BK_OK)
        return rc;
    const int has = r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
                    r->element[0]->type == REDIS_REPLY_ARRAY;
    freeReplyObject(r);
    return has;
}

/* Connect for one of the calls below: the URL's name and connection. */
static int connect_url(const char *url, bk_rconn **c, char **name)
{
    bk_redis_url u;
    int rc = bk_redis_url_parse(url, &u);
    if (rc != BK_OK)
        return rc;
    const bk_allocator a = bk_current_allocator();
    *name = bk_mem_strdup(&a, u.name);
    rc = *name ? bk_rconn_open(&u, c) : BK_ENOMEM;
    bk_redis_url_free(&u);
    if (rc != BK_OK) {
        bk_mem_free(&a, *name);
        *name = NULL;
    }
    return rc;
}

/* Drop a sharded filter: every shard, then its descriptor (a drop cut
 * short can be run again). */
static int drop_sharded(bk_rconn *c, const char *name)
{
    bk_rshards d;
    unsigned tags[BK_REDIS_SHARDS_MAX];
    int rc = bk_rshards_read(c, name, &d);
    if (rc == BK_OK)
        bk_rshards_tags(d.n, tags);
    for (unsigned s = 0; rc == BK_OK && s < d.n; s++) {
        char key[BK_REDIS_KEY_MAX];
        bk_rshards_key(name, s, d.n, tags, key, sizeof key);
        rc = bk_rconn_unlink(c, key);
    }
    return rc == BK_OK ? bk_rconn_unlink(c, name) : rc == BK_ENOTFOUND ? BK_OK : rc;
}

int bk_rmod_try(const char *url, int what, const bk_filter *f, bk_filter **out)
{
    bk_rconn *c;
    char *name;
    int rc = connect_url(url, &c, &name);
    if (rc != BK_OK)
        return rc == BK_EINVAL ? BK_RMOD_NOT : rc; /* a bad URL: the caller's own path says so */
    const unsigned shards = (unsigned)bk_rconn_url(c)->shards;
    rc = bk_rmod_is(c, name);
    if (bk_rmod_rb_turn(rc, what, f)) {
        rc = bk_rmod_try_rb(c, name, rc, what, shards, f, out);
    } else if (rc == BK_RMOD_NONE && what == BK_RMOD_PUSH) { /* new: the module's when there */
        rc = bk_rmod_available(c, name);
        if (rc >= 0 && shards > 1)
            rc = bk_fail(BK_ENOTSUP,
                         "push: a filter's cells cannot be split into shards by key; open %s "
                         "with shards=%u and add the keys",
                         name, shards);
        else if (rc == 1)
            rc = bk_rmod_push(c, name, f);
        else if (rc == 0)
            rc = BK_RMOD_NOT;
    } else if (rc == BK_RMOD_MODULE || rc == BK_RMOD_SHARDS) {
        const int sharded = rc == BK_RMOD_SHARDS;
        if (what == BK_RMOD_PUSH)
            rc = bk_fail(
                BK_EINCOMPAT,
                "redis filter %s already exists (kept by bloomkit's Redis module); "
                "push needs a new name, or the old one dropped first (bloomkit drop --redis URL)",
                name);
        else if (what == BK_RMOD_DROP)
            rc = sharded ? drop_sharded(c, name) : bk_rconn_unlink(c, name);
        else if (sharded)
            rc = bk_fail(BK_ENOTSUP,
                         "pull: redis filter %s is split into shards (shards=N), each its own "
                         "filter: there is no one filter to copy",
                         name);
        else
            rc = bk_rmod_pull(c, name, out);
    } else if (rc >= 0) {
        rc = BK_RMOD_NOT;
    }
    const bk_allocator a = bk_current_allocator();
    bk_mem_free(&a, name);
    bk_rconn_close(c);
    return rc;
}
