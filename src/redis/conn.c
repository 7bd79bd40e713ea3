/* conn.c - a hiredis connection with bounded reconnects (see conn.h). */
#define _POSIX_C_SOURCE 200809L
#include "conn.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "bloomkit.h"
#include "../common/alloc.h"
#include "../common/error.h"

struct bk_rconn {
    redisContext *ctx; /* NULL while broken */
    bk_redis_url url;  /* our own copy */
    char where[300];
};

static struct timeval tv_of(int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    return tv;
}

static char *dup_str(const char *s)
{
    if (!s)
        return NULL;
    const bk_allocator a = bk_current_allocator();
    const size_t n = strlen(s) + 1;
    char *d = bk_mem_alloc(&a, n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static int copy_url(bk_redis_url *dst, const bk_redis_url *src)
{
    *dst = *src;
    dst->host = dup_str(src->host);
    dst->path = dup_str(src->path);
    dst->user = dup_str(src->user);
    dst->password = dup_str(src->password);
    dst->name = dup_str(src->name);
    if ((src->host && !dst->host) || (src->path && !dst->path) || (src->user && !dst->user) ||
        (src->password && !dst->password) || (src->name && !dst->name)) {
        bk_redis_url_free(dst);
        return BK_ENOMEM;
    }
    return BK_OK;
}

/* AUTH and SELECT on a fresh context. */
static int handshake(bk_rconn *c)
{
    redisReply *r = NULL;
    if (c->url.password) {
        if (c->url.user)
            r = redisCommand(c->ctx, "AUTH %s %s", c->url.user, c->url.password);
        else
            r = redisCommand(c->ctx, "AUTH %s", c->url.password);
        if (!r)
            return bk_fail(BK_EIO, "redis %s: connection lost during AUTH", c->where);
        if (r->type == REDIS_REPLY_ERROR) {
            const int rc =
                bk_fail(BK_ESERVER, "redis %s: authentication refused: %.200s", c->where, r->str);
            freeReplyObject(r);
            return rc;
        }
        freeReplyObject(r);
    }
    if (c->url.db) {
        r = redisCommand(c->ctx, "SELECT %d", c->url.db);
        if (!r)
            return bk_fail(BK_EIO, "redis %s: connection lost during SELECT", c->where);
        if (r->type == REDIS_REPLY_ERROR) {
            const int rc = bk_fail(BK_ESERVER, "redis %s: SELECT %d refused: %.200s", c->where,
                                   c->url.db, r->str);
            freeReplyObject(r);
            return rc;
        }
        freeReplyObject(r);
    }
    /* A probe that also rejects servers speaking something else. */
    r = redisCommand(c->ctx, "PING");
    if (!r)
        return bk_fail(BK_EIO, "redis %s: connection lost: %s", c->where,
                       c->ctx->errstr[0] ? c->ctx->errstr : "no reply");
    const int ok = (r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0);
    /* A server still loading its data set answers -LOADING: not ready yet,
     * like a refused connection, so the reconnect loop tries again. */
    const int loading = r->type == REDIS_REPLY_ERROR && strncmp(r->str, "LOADING", 7) == 0;
    const int rc = ok        ? BK_OK
                   : loading ? bk_fail(BK_EIO, "redis %s: server is loading its data", c->where)
                             : bk_fail(BK_ESERVER, "redis %s: PING refused: %.200s", c->where,
                                       r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    freeReplyObject(r);
    return rc;
}

static int connect_once(bk_rconn *c)
{
    const struct timeval ctv = tv_of(c->url.connect_timeout_ms);
    redisContext *ctx = c->url.path ? redisConnectUnixWithTimeout(c->url.path, ctv)
                                    : redisConnectWithTimeout(c->url.host, c->url.port, ctv);
    if (!ctx)
        return bk_fail(BK_ENOMEM, "redis %s: out of memory", c->where);
    if (ctx->err) {
        const int rc = bk_fail(BK_EIO, "redis %s: cannot connect: %s", c->where, ctx->errstr);
        redisFree(ctx);
        return rc;
    }
    if (redisSetTimeout(ctx, tv_of(c->url.timeout_ms)) != REDIS_OK) {
        redisFree(ctx);
        return bk_fail(BK_EIO, "redis %s: cannot set the command timeout", c->where);
    }
    c->ctx = ctx;
    const int rc = handshake(c);
    if (rc != BK_OK) {
        redisFree(c->ctx);
        c->ctx = NULL;
    }
    return rc;
}

int bk_rconn_open(const bk_redis_url *u, bk_rconn **out)
{
    *out = NULL;
    const bk_allocator a = bk_current_allocator();
    bk_rconn *c = bk_mem_calloc(&a, 1, sizeof *c);
    if (!c)
        return BK_ENOMEM;
    if (copy_url(&c->url, u) != BK_OK) {
        bk_mem_free(&a, c);
        return BK_ENOMEM;
    }
    bk_redis_url_where(&c->url, c->where, sizeof c->where);
    const int rc = connect_once(c);
    if (rc != BK_OK) {
        bk_rconn_close(c);
        return rc;
    }
    *out = c;
    return BK_OK;
}

void bk_rconn_close(bk_rconn *c)
{
    if (!c)
        return;
    if (c->ctx)
        redisFree(c->ctx);
    bk_redis_url_free(&c->url);
    const bk_allocator a = bk_current_allocator();
    bk_mem_free(&a, c);
}

const bk_redis_url *bk_rconn_url(const bk_rconn *c)
{
    return &c->url;
}

const char *bk_rconn_where(const bk_rconn *c)
{
    return c->where;
}

int bk_rconn_broken(const bk_rconn *c)
{
    return c->ctx == NULL;
}

static int break_conn(bk_rconn *c, const char *what)
{
    const int rc = bk_fail(BK_EIO, "redis %s: connection lost (%s): %s", c->where, what,
                           c->ctx && c->ctx->errstr[0] ? c->ctx->errstr : "closed");
    if (c->ctx)
        redisFree(c->ctx);
    c->ctx = NULL;
    return rc;
}

int bk_rconn_append(bk_rconn *c, int argc, const char **argv, const size_t *lens)
{
    if (!c->ctx)
        return bk_fail(BK_EIO, "redis %s: not connected", c->where);
    if (redisAppendCommandArgv(c->ctx, argc, argv, lens) != REDIS_OK)
        return c->ctx->err == REDIS_ERR_OOM ? BK_ENOMEM : break_conn(c, "send");
    return BK_OK;
}

int bk_rconn_reply(bk_rconn *c, redisReply **out)
{
    *out = NULL;
    if (!c->ctx)
        return bk_fail(BK_EIO, "redis %s: not connected", c->where);
    void *r = NULL;
    if (redisGetReply(c->ctx, &r) != REDIS_OK || !r)
        return break_conn(c, "reply");
    *out = r;
    return BK_OK;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int bk_rconn_reconnect(bk_rconn *c)
{
    if (c->ctx)
        return BK_OK;
    int rc = bk_fail(BK_EIO, "redis %s: connection lost and retries=0", c->where);
    long wait = 10;
    for (int attempt = 0; attempt < c->url.retries; attempt++) {
        sleep_ms(wait);
        wait = wait * 2 > 1000 ? 1000 : wait * 2;
        rc = connect_once(c);
        if (rc == BK_OK || rc == BK_ESERVER || rc == BK_ENOMEM)
            return rc; /* refused credentials will not get better */
    }
    return rc;
}

int bk_rconn_call(bk_rconn *c, redisReply **out, int argc, const char **argv, const size_t *lens)
{
    *out = NULL;
    for (int round = 0;; round++) {
        int rc = bk_rconn_reconnect(c);
        if (rc == BK_OK)
            rc = bk_rconn_append(c, argc, argv, lens);
        if (rc == BK_OK)
            rc = bk_rconn_reply(c, out);
        if (rc != BK_EIO || round >= c->url.retries)
            return rc;
    }
}

int bk_rconn_callf(bk_rconn *c, redisReply **out, const char *fmt, ...)
{
    *out = NULL;
    for (int round = 0;; round++) {
        int rc = bk_rconn_reconnect(c);
        if (rc == BK_OK) {
            va_list ap;
            va_start(ap, fmt);
            const int st = redisvAppendCommand(c->ctx, fmt, ap);
            va_end(ap);
            rc = st == REDIS_OK ? BK_OK : break_conn(c, "send");
        }
        if (rc == BK_OK)
            rc = bk_rconn_reply(c, out);
        if (rc != BK_EIO || round >= c->url.retries)
            return rc;
    }
}
