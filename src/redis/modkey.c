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

int bk_rmod_is(bk_rconn *c, const char *name)
{
    redisReply *r;
    const int rc = bk_rconn_callf(c, name, &r, "TYPE %s", name);
    if (rc != BK_OK)
        return rc;
    const int is = r->type != REDIS_REPLY_STATUS       ? BK_RMOD_OTHER
                   : strcmp(r->str, BK_RMOD_TYPE) == 0 ? BK_RMOD_MODULE
                   : strcmp(r->str, "none") == 0       ? BK_RMOD_NONE
                                                       : BK_RMOD_OTHER;
    freeReplyObject(r);
    return is;
}

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
        if (next < 0 || (unsigned long long)next != (unsigned long long)len + n) {
            freeReplyObject(r);
            rc = bk_fail(BK_ESERVER, "pull: redis filter %s: BF.SCANDUMP's chunks do not follow "
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

int bk_rmod_drop(bk_rconn *c, const char *name)
{
    redisReply *r;
    const int rc = bk_rconn_callf(c, name, &r, "UNLINK %s", name);
    if (rc != BK_OK)
        return rc;
    const int err = r->type == REDIS_REPLY_ERROR
                        ? bk_fail(BK_ESERVER, "drop: redis filter %s: %.200s", name, r->str)
                        : BK_OK;
    freeReplyObject(r);
    return err;
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

int bk_rmod_try(const char *url, int what, bk_filter **out)
{
    bk_rconn *c;
    char *name;
    int rc = connect_url(url, &c, &name);
    if (rc != BK_OK)
        return rc == BK_EINVAL ? BK_RMOD_NOT : rc; /* a bad URL: the caller's own path says so */
    rc = bk_rmod_is(c, name);
    if (rc == BK_RMOD_MODULE)
        rc = what == BK_RMOD_PULL ? bk_rmod_pull(c, name, out) : bk_rmod_drop(c, name);
    else if (rc >= 0)
        rc = BK_RMOD_NOT;
    const bk_allocator a = bk_current_allocator();
    bk_mem_free(&a, name);
    bk_rconn_close(c);
    return rc;
}
