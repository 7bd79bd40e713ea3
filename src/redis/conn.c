/* conn.c - one server or a cluster's masters behind one pipeline (see conn.h). */
#define _POSIX_C_SOURCE 200809L
#include "conn.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "bloomkit_redis.h"
#include "../common/alloc.h"
#include "../common/error.h"

#define SLOTS        16384
#define MAX_NODES    256
#define MAX_REDIRECT 5

typedef struct rnode {
    char host[256]; /* empty for the URL's unix socket */
    int port;
    redisContext *ctx;  /* the pipeline */
    redisContext *side; /* synchronous: redirected commands, never pipelined */
} rnode;

typedef struct qcmd {
    int node;
    char *cmd; /* the formatted command (RESP), kept to resend on MOVED/ASK */
    size_t len;
} qcmd;

struct bk_rconn {
    bk_allocator alloc; /* current at open: every allocation of ours uses it */
    bk_redis_url url;   /* our own copy */
    char where[300];
    int cluster;
    int broken;
    rnode nodes[MAX_NODES];
    int nnodes;
    int16_t slot_node[SLOTS]; /* node serving each slot; -1 unknown */
    qcmd *q;
    size_t qhead, qlen, qcap; /* ring of queued commands */
};

/* ---- slots -------------------------------------------------------------- */

/* CRC16/XMODEM: polynomial 0x1021, initial value 0, no reflection, as the
 * Redis Cluster specification defines the key hash. Written bit by bit from
 * that definition; check value of "123456789" is 0x31C3 (tests). */
static uint16_t crc16(const char *s, size_t n)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)((uint16_t)(unsigned char)s[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

unsigned bk_redis_key_slot(const char *key, size_t len)
{
    const char *open = memchr(key, '{', len);
    if (open) {
        const size_t rest = len - (size_t)(open - key) - 1;
        const char *close = memchr(open + 1, '}', rest);
        if (close && close > open + 1)
            return crc16(open + 1, (size_t)(close - open - 1)) & (SLOTS - 1);
    }
    return crc16(key, len) & (SLOTS - 1);
}

/* ---- connecting --------------------------------------------------------- */

static struct timeval tv_of(int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};
    return tv;
}

static int copy_url(const bk_allocator *a, bk_redis_url *dst, const bk_redis_url *src)
{
    *dst = *src;
    dst->alloc = *a;
    dst->host = bk_mem_strdup(a, src->host);
    dst->path = bk_mem_strdup(a, src->path);
    dst->user = bk_mem_strdup(a, src->user);
    dst->password = bk_mem_strdup(a, src->password);
    dst->name = bk_mem_strdup(a, src->name);
    if ((src->host && !dst->host) || (src->path && !dst->path) || (src->user && !dst->user) ||
        (src->password && !dst->password) || (src->name && !dst->name)) {
        bk_redis_url_free(dst);
        return BK_ENOMEM;
    }
    return BK_OK;
}

static const char *node_name(const bk_rconn *c, const rnode *n, char *buf, size_t len)
{
    if (!n->host[0])
        return c->where;
    snprintf(buf, len, "%s:%d", n->host, n->port);
    return buf;
}

/* AUTH, SELECT, PING on a fresh context. */
static int handshake(const bk_rconn *c, redisContext *ctx, const char *where)
{
    redisReply *r = NULL;
    if (c->url.password) {
        r = c->url.user ? redisCommand(ctx, "AUTH %s %s", c->url.user, c->url.password)
                        : redisCommand(ctx, "AUTH %s", c->url.password);
        if (!r)
            return bk_fail(BK_EIO, "redis %s: connection lost during AUTH", where);
        if (r->type == REDIS_REPLY_ERROR) {
            const int rc =
                bk_fail(BK_ESERVER, "redis %s: authentication refused: %.200s", where, r->str);
            freeReplyObject(r);
            return rc;
        }
        freeReplyObject(r);
    }
    if (c->url.db) {
        r = redisCommand(ctx, "SELECT %d", c->url.db);
        if (!r)
            return bk_fail(BK_EIO, "redis %s: connection lost during SELECT", where);
        if (r->type == REDIS_REPLY_ERROR) {
            const int rc = bk_fail(BK_ESERVER, "redis %s: SELECT %d refused: %.200s", where,
                                   c->url.db, r->str);
            freeReplyObject(r);
            return rc;
        }
        freeReplyObject(r);
    }
    /* A server still loading its data set (just restarted) answers
     * -LOADING: not ready yet; wait for it, bounded (then, like a refused
     * connection, the reconnect loop may try again). */
    for (int waited = 0;; waited += BK_LOADING_PAUSE_MS) {
        r = redisCommand(ctx, "PING");
        if (!r || !bk_rconn_loading(r) || waited >= BK_LOADING_WAIT_MS)
            break;
        freeReplyObject(r);
        bk_rconn_pause(BK_LOADING_PAUSE_MS);
    }
    if (!r)
        return bk_fail(BK_EIO, "redis %s: connection lost: %s", where,
                       ctx->errstr[0] ? ctx->errstr : "no reply");
    const int ok = r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0;
    const int loading = bk_rconn_loading(r);
    const int rc = ok        ? BK_OK
                   : loading ? bk_fail(BK_EIO, "redis %s: server is loading its data", where)
                             : bk_fail(BK_ESERVER, "redis %s: PING refused: %.200s", where,
                                       r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    freeReplyObject(r);
    return rc;
}

/* A new, handshaken context to node i. */
static int dial(bk_rconn *c, int i, redisContext **out)
{
    *out = NULL;
    rnode *n = &c->nodes[i];
    char buf[300];
    const char *where = node_name(c, n, buf, sizeof buf);
    const struct timeval ctv = tv_of(c->url.connect_timeout_ms);
    redisContext *ctx = n->host[0] ? redisConnectWithTimeout(n->host, n->port, ctv)
                                   : redisConnectUnixWithTimeout(c->url.path, ctv);
    if (!ctx)
        return bk_fail(BK_ENOMEM, "redis %s: out of memory", where);
    if (ctx->err) {
        const int rc = bk_fail(BK_EIO, "redis %s: cannot connect: %s", where, ctx->errstr);
        redisFree(ctx);
        return rc;
    }
    if (redisSetTimeout(ctx, tv_of(c->url.timeout_ms)) != REDIS_OK) {
        redisFree(ctx);
        return bk_fail(BK_EIO, "redis %s: cannot set the command timeout", where);
    }
    const int rc = handshake(c, ctx, where);
    if (rc != BK_OK) {
        redisFree(ctx);
        return rc;
    }
    *out = ctx;
    return BK_OK;
}

/* Index of the node host:port, added when new; -1 when the table is full. */
static int node_index(bk_rconn *c, const char *host, int port)
{
    for (int i = 0; i < c->nnodes; i++)
        if (c->nodes[i].port == port && strcmp(c->nodes[i].host, host) == 0)
            return i;
    if (c->nnodes == MAX_NODES)
        return -1;
    rnode *n = &c->nodes[c->nnodes];
    memset(n, 0, sizeof *n);
    snprintf(n->host, sizeof n->host, "%s", host);
    n->port = port;
    return c->nnodes++;
}

/* Read the slot map from node 0 (CLUSTER SLOTS). Sets c->cluster. */
static int read_slots(bk_rconn *c)
{
    redisReply *r = redisCommand(c->nodes[0].ctx, "CLUSTER SLOTS");
    if (!r)
        return bk_fail(BK_EIO, "redis %s: connection lost reading the slot map", c->where);
    int rc = BK_OK;
    if (r->type == REDIS_REPLY_ERROR) {
        c->cluster = 0; /* "cluster support disabled": a single server */
        freeReplyObject(r);
        return BK_OK;
    }
    if (r->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(r);
        return bk_fail(BK_ESERVER, "redis %s: CLUSTER SLOTS reply of an unexpected shape",
                       c->where);
    }
    c->cluster = 1;
    for (int s = 0; s < SLOTS; s++)
        c->slot_node[s] = -1;
    for (size_t i = 0; i < r->elements && rc == BK_OK; i++) {
        const redisReply *e = r->element[i];
        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
            e->element[0]->type != REDIS_REPLY_INTEGER ||
            e->element[1]->type != REDIS_REPLY_INTEGER ||
            e->element[2]->type != REDIS_REPLY_ARRAY || e->element[2]->elements < 2 ||
            e->element[2]->element[0]->type != REDIS_REPLY_STRING ||
            e->element[2]->element[1]->type != REDIS_REPLY_INTEGER) {
            rc = bk_fail(BK_ESERVER, "redis %s: CLUSTER SLOTS entry of an unexpected shape",
                         c->where);
            break;
        }
        const long long lo = e->element[0]->integer, hi = e->element[1]->integer;
        const char *host = e->element[2]->element[0]->str;
        const long long port = e->element[2]->element[1]->integer;
        if (lo < 0 || hi >= SLOTS || lo > hi || port < 1 || port > 65535) {
            rc = bk_fail(BK_ESERVER, "redis %s: CLUSTER SLOTS entry out of range", c->where);
            break;
        }
        /* an empty host means "the address you reached me at" */
        const int idx =
            node_index(c, host[0] ? host : (c->url.host ? c->url.host : "127.0.0.1"), (int)port);
        if (idx < 0) {
            rc = bk_fail(BK_ERANGE, "redis %s: more than %d cluster nodes", c->where, MAX_NODES);
            break;
        }
        for (long long s = lo; s <= hi; s++)
            c->slot_node[s] = (int16_t)idx;
    }
    freeReplyObject(r);
    return rc;
}

/* Connect node 0 (the URL's server) and learn whether it is a cluster. */
static int connect_seed(bk_rconn *c)
{
    int rc = dial(c, 0, &c->nodes[0].ctx);
    if (rc == BK_OK)
        rc = read_slots(c);
    if (rc == BK_OK)
        c->broken = 0;
    return rc;
}

int bk_rconn_open(const bk_redis_url *u, bk_rconn **out)
{
    *out = NULL;
    const bk_allocator a = bk_current_allocator();
    bk_rconn *c = bk_mem_calloc(&a, 1, sizeof *c);
    if (!c)
        return BK_ENOMEM;
    c->alloc = a;
    if (copy_url(&a, &c->url, u) != BK_OK) {
        bk_mem_free(&a, c);
        return BK_ENOMEM;
    }
    bk_redis_url_where(&c->url, c->where, sizeof c->where);
    c->nnodes = 1;
    if (u->host)
        snprintf(c->nodes[0].host, sizeof c->nodes[0].host, "%s", u->host);
    c->nodes[0].port = u->port;
    memset(c->slot_node, 0, sizeof c->slot_node);
    const int rc = connect_seed(c);
    if (rc != BK_OK) {
        bk_rconn_close(c);
        return rc;
    }
    *out = c;
    return BK_OK;
}

static void drop_queue(bk_rconn *c)
{
    for (size_t i = 0; i < c->qlen; i++)
        free(c->q[(c->qhead + i) % c->qcap].cmd);
    c->qhead = c->qlen = 0;
}

static void close_all(bk_rconn *c)
{
    for (int i = 0; i < c->nnodes; i++) {
        if (c->nodes[i].ctx)
            redisFree(c->nodes[i].ctx);
        if (c->nodes[i].side)
            redisFree(c->nodes[i].side);
        c->nodes[i].ctx = c->nodes[i].side = NULL;
    }
}

void bk_rconn_close(bk_rconn *c)
{
    if (!c)
        return;
    close_all(c);
    drop_queue(c);
    const bk_allocator a = c->alloc;
    bk_mem_free(&a, c->q);
    bk_redis_url_free(&c->url);
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

int bk_rconn_cluster(const bk_rconn *c)
{
    return c->cluster;
}

int bk_rconn_broken(const bk_rconn *c)
{
    return c->broken;
}

/* Break the pipeline: every connection closed, every queued command lost. */
static int break_all(bk_rconn *c, const char *what, const redisContext *ctx)
{
    const int rc = bk_fail(BK_EIO, "redis %s: connection lost (%s): %s", c->where, what,
                           ctx && ctx->errstr[0] ? ctx->errstr : "closed");
    close_all(c);
    drop_queue(c);
    c->broken = 1;
    return rc;
}

int bk_rconn_loading(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "LOADING", 7) == 0;
}

void bk_rconn_pause(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int bk_rconn_reconnect(bk_rconn *c)
{
    if (!c->broken)
        return BK_OK;
    int rc = bk_fail(BK_EIO, "redis %s: connection lost and retries=0", c->where);
    long wait = 10;
    for (int attempt = 0; attempt < c->url.retries; attempt++) {
        bk_rconn_pause(wait);
        wait = wait * 2 > 1000 ? 1000 : wait * 2;
        close_all(c);
        rc = connect_seed(c);
        if (rc == BK_OK || rc == BK_ESERVER || rc == BK_ENOMEM)
            return rc; /* refused credentials will not get better */
    }
    return rc;
}

/* ---- the pipeline ------------------------------------------------------- */

static int node_for(const bk_rconn *c, const char *key, size_t keylen)
{
    if (!c->cluster)
        return 0;
    const int n = c->slot_node[bk_redis_key_slot(key, keylen)];
    return n < 0 ? 0 : n; /* unknown: ask the seed, which redirects */
}

static int ensure(bk_rconn *c, int i)
{
    if (c->nodes[i].ctx)
        return BK_OK;
    const int rc = dial(c, i, &c->nodes[i].ctx);
    if (rc == BK_EIO) {
        char detail[400];
        snprintf(detail, sizeof detail, "%s", bk_last_error());
        close_all(c);
        drop_queue(c);
        c->broken = 1;
        return bk_fail(BK_EIO, "%s", detail);
    }
    return rc;
}

/* Room for one more queued command: reserved before the command is handed
 * to hiredis, so that running out of memory never leaves a command in flight
 * that the queue does not know about. */
static int queue_reserve(bk_rconn *c)
{
    if (c->qlen < c->qcap)
        return BK_OK;
    const bk_allocator a = c->alloc;
    const size_t cap = c->qcap ? c->qcap * 2 : 64;
    qcmd *q = bk_mem_alloc(&a, cap * sizeof *q);
    if (!q)
        return bk_fail(BK_ENOMEM, "redis %s: out of memory", c->where);
    for (size_t i = 0; i < c->qlen; i++)
        q[i] = c->q[(c->qhead + i) % c->qcap];
    bk_mem_free(&a, c->q);
    c->q = q;
    c->qcap = cap;
    c->qhead = 0;
    return BK_OK;
}

static int append_formatted(bk_rconn *c, int node, char *cmd, size_t len)
{
    if (c->broken) {
        free(cmd);
        return bk_fail(BK_EIO, "redis %s: not connected", c->where);
    }
    int rc = ensure(c, node);
    if (rc == BK_OK)
        rc = queue_reserve(c);
    if (rc != BK_OK) {
        free(cmd);
        return rc;
    }
    if (redisAppendFormattedCommand(c->nodes[node].ctx, cmd, len) != REDIS_OK) {
        free(cmd);
        return c->nodes[node].ctx->err == REDIS_ERR_OOM ? BK_ENOMEM
                                                        : break_all(c, "send", c->nodes[node].ctx);
    }
    c->q[(c->qhead + c->qlen) % c->qcap] = (qcmd){node, cmd, len};
    c->qlen++;
    return BK_OK;
}

int bk_rconn_append(bk_rconn *c, const char *key, size_t keylen, int argc, const char **argv,
                    const size_t *lens)
{
    char *cmd = NULL;
    const int len = redisFormatCommandArgv(&cmd, argc, argv, lens);
    if (len < 0 || !cmd)
        return BK_ENOMEM;
    return append_formatted(c, node_for(c, key, keylen), cmd, (size_t)len);
}

int bk_redis_parse_redirect(const redisReply *r, unsigned *slot, char *host, size_t hostlen,
                            int *port, int *ask)
{
    if (r->type != REDIS_REPLY_ERROR || !r->str)
        return -1;
    *ask = strncmp(r->str, "ASK ", 4) == 0;
    if (!*ask && strncmp(r->str, "MOVED ", 6) != 0)
        return -1;
    const char *p = r->str + (*ask ? 4 : 6);
    const char *space = strchr(p, ' ');
    const char *colon = strrchr(p, ':');
    if (sscanf(p, "%u", slot) != 1 || *slot >= SLOTS || !space || !colon || colon < space ||
        (size_t)(colon - space - 1) >= hostlen)
        return -1;
    memcpy(host, space + 1, (size_t)(colon - space - 1));
    host[colon - space - 1] = '\0';
    char *end;
    const long v = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || v < 1 || v > 65535)
        return -1;
    *port = (int)v;
    return 0;
}

/* The target node of a MOVED or ASK reply (the slot map updated for MOVED);
 * -1 if r is not a redirection. */
static int redirect_target(bk_rconn *c, const redisReply *r, int *ask)
{
    unsigned slot;
    char host[256];
    int port;
    if (bk_redis_parse_redirect(r, &slot, host, sizeof host, &port, ask) != 0)
        return -1;
    const int idx = node_index(c, host[0] ? host : "127.0.0.1", port);
    if (idx >= 0 && !*ask)
        c->slot_node[slot] = (int16_t)idx;
    return idx;
}

/* Send one formatted command synchronously to node i (after ASKING when
 * asked), on the node's side connection, and read its reply. */
static int side_call(bk_rconn *c, int i, const char *cmd, size_t len, int asking, redisReply **out)
{
    rnode *n = &c->nodes[i];
    if (!n->side) {
        const int rc = dial(c, i, &n->side);
        if (rc != BK_OK)
            return rc;
    }
    void *r = NULL;
    if ((asking && redisAppendCommand(n->side, "ASKING") != REDIS_OK) ||
        redisAppendFormattedCommand(n->side, cmd, len) != REDIS_OK)
        goto broken;
    if (asking) {
        if (redisGetReply(n->side, &r) != REDIS_OK || !r)
            goto broken;
        freeReplyObject(r);
    }
    if (redisGetReply(n->side, &r) != REDIS_OK || !r)
        goto broken;
    *out = r;
    return BK_OK;
broken:
    redisFree(n->side);
    n->side = NULL;
    return bk_fail(BK_EIO, "redis %s: connection lost following a redirection", c->where);
}

int bk_rconn_reply(bk_rconn *c, redisReply **out)
{
    *out = NULL;
    if (c->broken || c->qlen == 0)
        return bk_fail(BK_EIO, "redis %s: %s", c->where,
                       c->broken ? "not connected" : "no command waits for a reply");
    qcmd q = c->q[c->qhead];
    redisContext *ctx = c->nodes[q.node].ctx;
    void *r = NULL;
    if (redisGetReply(ctx, &r) != REDIS_OK || !r)
        return break_all(c, "reply", ctx); /* frees q.cmd with the queue */
    c->qhead = (c->qhead + 1) % c->qcap;
    c->qlen--;
    int ask = 0, target;
    for (int hops = 0; (target = redirect_target(c, r, &ask)) >= 0; hops++) {
        freeReplyObject(r);
        r = NULL;
        if (hops == MAX_REDIRECT) {
            free(q.cmd);
            return bk_fail(BK_ESERVER, "redis %s: more than %d redirections for one command",
                           c->where, MAX_REDIRECT);
        }
        redisReply *rr = NULL;
        const int rc = side_call(c, target, q.cmd, q.len, ask, &rr);
        if (rc != BK_OK) {
            free(q.cmd);
            char detail[400];
            snprintf(detail, sizeof detail, "%s", bk_last_error());
            break_all(c, "redirect", NULL);
            return bk_fail(BK_EIO, "%s", detail);
        }
        r = rr;
    }
    free(q.cmd);
    *out = r;
    return BK_OK;
}

/* Queue a copy of a formatted command (the caller keeps cmd, to send it
 * again after a reconnect). */
static int append_copy(bk_rconn *c, int node, const char *cmd, size_t len)
{
    char *copy = malloc(len);
    if (!copy)
        return BK_ENOMEM;
    memcpy(copy, cmd, len);
    return append_formatted(c, node, copy, len);
}

/* One formatted command and its reply, resent after a broken pipeline up to
 * the URL's retries; takes cmd (hiredis-allocated) and frees it. */
static int call_formatted(bk_rconn *c, const char *key, size_t keylen, char *cmd, int len,
                          redisReply **out)
{
    *out = NULL;
    if (len < 0 || !cmd)
        return BK_ENOMEM;
    int rc = BK_OK;
    for (int round = 0, waited = 0;; round++) {
        rc = bk_rconn_reconnect(c);
        if (rc == BK_OK)
            rc = append_copy(c, node_for(c, key, keylen), cmd, (size_t)len);
        if (rc == BK_OK)
            rc = bk_rconn_reply(c, out);
        if (rc == BK_OK && bk_rconn_loading(*out) && waited < BK_LOADING_WAIT_MS) {
            freeReplyObject(*out); /* restarting: ask again (not a round) */
            *out = NULL;
            bk_rconn_pause(BK_LOADING_PAUSE_MS);
            waited += BK_LOADING_PAUSE_MS;
            round--;
            continue;
        }
        if (rc != BK_EIO || round >= c->url.retries)
            break;
    }
    free(cmd);
    return rc;
}

int bk_rconn_call(bk_rconn *c, const char *key, size_t keylen, redisReply **out, int argc,
                  const char **argv, const size_t *lens)
{
    char *cmd = NULL;
    const int len = redisFormatCommandArgv(&cmd, argc, argv, lens);
    return call_formatted(c, key, keylen, cmd, len, out);
}

int bk_rconn_vcallf(bk_rconn *c, const char *key, redisReply **out, const char *fmt, va_list ap)
{
    char *cmd = NULL;
    const int len = redisvFormatCommand(&cmd, fmt, ap);
    return call_formatted(c, key, strlen(key), cmd, len, out);
}

int bk_rconn_callf(bk_rconn *c, const char *key, redisReply **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int rc = bk_rconn_vcallf(c, key, out, fmt, ap);
    va_end(ap);
    return rc;
}

int bk_rconn_all(bk_rconn *c, redisReply **out, const char *fmt, ...)
{
    *out = NULL;
    char *cmd = NULL;
    va_list ap;
    va_start(ap, fmt);
    const int len = redisvFormatCommand(&cmd, fmt, ap);
    va_end(ap);
    if (len < 0 || !cmd)
        return BK_ENOMEM;
    int rc = bk_rconn_reconnect(c);
    int used[MAX_NODES] = {0};
    if (c->cluster) {
        for (int s = 0; s < SLOTS; s++)
            if (c->slot_node[s] >= 0)
                used[c->slot_node[s]] = 1;
    } else {
        used[0] = 1;
    }
    for (int i = 0; i < c->nnodes && rc == BK_OK; i++) {
        if (!used[i])
            continue;
        rc = append_copy(c, i, cmd, (size_t)len);
        if (rc == BK_OK) {
            if (*out)
                freeReplyObject(*out);
            *out = NULL;
            rc = bk_rconn_reply(c, out);
        }
        if (rc == BK_OK && (*out)->type == REDIS_REPLY_ERROR)
            break;
    }
    free(cmd);
    if (rc != BK_OK && *out) {
        freeReplyObject(*out);
        *out = NULL;
    }
    return rc;
}

int bk_rconn_unlink(bk_rconn *c, const char *name)
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

/* TYPE of key into type (as Redis names it: "none", "set", "string", ...). */
int bk_rconn_type(bk_rconn *c, const char *key, char *type, size_t len)
{
    redisReply *r;
    int rc = bk_rconn_callf(c, key, &r, "TYPE %s", key);
    if (rc != BK_OK)
        return rc;
    if (r->type == REDIS_REPLY_STATUS)
        snprintf(type, len, "%s", r->str);
    else
        rc = bk_fail(BK_ESERVER, "TYPE %s: unexpected reply", key);
    freeReplyObject(r);
    return rc;
}

/* An integer reply of `cmd key` (SCARD, STRLEN, LLEN ...), or 0. */
uint64_t bk_rconn_count(bk_rconn *c, const char *cmd, const char *key)
{
    redisReply *r;
    if (bk_rconn_callf(c, key, &r, "%s %s", cmd, key) != BK_OK)
        return 0;
    const uint64_t n = r->type == REDIS_REPLY_INTEGER && r->integer > 0 ? (uint64_t)r->integer : 0;
    freeReplyObject(r);
    return n;
}
