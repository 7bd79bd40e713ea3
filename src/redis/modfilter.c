/*
 * modfilter.c - a filter kept by bloomkit's Redis module, behind the common
 * vtable: bk_redis_open returns one for a name the module keeps, or makes
 * one when the server has the module (docs/redis.md). The module hashes the
 * keys itself, so adds, lookups and removals send the keys (ops->keys_op):
 * BK.ADD / BK.EXISTS / BK.REMOVE, up to BATCH keys a command, every command
 * of a batch pipelined before the first reply is read. Figures (bk_stats)
 * come from a copy of the image (BF.SCANDUMP), taken by refresh; the views
 * it hands out carry no cells, so the filter counts as remote everywhere.
 *
 * A sharded filter (shards.h) is the same with n module keys: each item
 * goes to the shard its route hash names, the items of a batch grouped by
 * shard (each command one shard's), and its views are every shard's in
 * turn, one group a shard.
 */
#include <stdio.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/error.h"
#include "../core/filter_impl.h"
#include "../common/random.h"
#include "modkey.h"
#include "shards.h"

#define BATCH 1000 /* keys a command */

typedef struct bk_mfilter {
    bk_filter base;
    bk_rconn *conn;
    char *name;         /* the filter's name (its descriptor's, when sharded) */
    unsigned nshards;   /* 1: the module key name itself */
    char **keys;        /* each shard's module key */
    bk_rshards route;   /* sharded: the descriptor (its route key) */
    bk_filter **copies; /* each shard's image last read (refresh), or NULL */
    size_t *first;      /* sharded, during keys_op: where each shard's items begin */
    const char **argv;
    size_t *lens;
} bk_mfilter;

/* A reply element's result for op, or a negative code. */
static int element_result(const bk_mfilter *mf, int op, const redisReply *e)
{
    if (e->type == REDIS_REPLY_INTEGER && (e->integer == 0 || e->integer == 1)) {
        if (op == BK_KEYS_REMOVE)
            return e->integer ? BK_OK : BK_ENOTFOUND;
        return (int)e->integer;
    }
    if (e->type == REDIS_REPLY_ERROR && strstr(e->str, "full"))
        return bk_fail(BK_EFULL, "redis filter %s: %.200s", mf->name, e->str);
    return bk_fail(BK_ESERVER, "redis filter %s: %.200s", mf->name,
                   e->type == REDIS_REPLY_ERROR ? e->str : "a reply of an unexpected shape");
}

static const char *const op_command[] = {"BK.ADD", "BK.EXISTS", "BK.REMOVE"};

/* The end of the command that starts at position p of the shard-major
 * order: BATCH items, or fewer where p's shard ends. */
static size_t chunk_end(const bk_mfilter *mf, size_t p, size_t n, unsigned *shard)
{
    unsigned s = 0;
    size_t end = n;
    if (mf->nshards > 1) {
        while (mf->first[s + 1] <= p)
            s++;
        end = mf->first[s + 1];
    }
    *shard = s;
    return end - p < BATCH ? end : p + BATCH;
}

/* long: a pipeline: send a window, read replies as they come, fill the rest on error. */
static int m_keys_op(bk_filter *f, int op, const void *const *keys, const size_t *lens, size_t n,
                     int *results)
{
    bk_mfilter *mf = (bk_mfilter *)f;
    size_t *order = NULL; /* sharded: the items' indices, shard by shard */
    if (mf->nshards > 1) {
        order = bk_mem_alloc(&f->alloc, (n ? n : 1) * (sizeof *order + sizeof(unsigned)));
        if (!order)
            return bk_fail(BK_ENOMEM, "redis filter %s: out of memory routing %zu keys", mf->name,
                           n);
        unsigned *shard = (unsigned *)(void *)(order + n);
        memset(mf->first, 0, (mf->nshards + 1) * sizeof *mf->first);
        for (size_t i = 0; i < n; i++) {
            shard[i] = bk_rshards_route(&mf->route, keys[i] ? keys[i] : "", lens[i]);
            mf->first[shard[i] + 1]++;
        }
        for (unsigned s = 0; s < mf->nshards; s++)
            mf->first[s + 1] += mf->first[s];
        size_t next[BK_REDIS_SHARDS_MAX];
        memcpy(next, mf->first, mf->nshards * sizeof *next);
        for (size_t i = 0; i < n; i++)
            order[next[shard[i]]++] = i;
    }
    int rc = BK_OK;
    size_t sent = 0; /* positions whose command was appended */
    while (sent < n && rc == BK_OK) {
        unsigned s;
        const size_t end = chunk_end(mf, sent, n, &s);
        mf->argv[0] = op_command[op];
        mf->lens[0] = strlen(op_command[op]);
        mf->argv[1] = mf->keys[s];
        mf->lens[1] = strlen(mf->keys[s]);
        for (size_t p = sent; p < end; p++) {
            const size_t i = order ? order[p] : p;
            mf->argv[2 + p - sent] = keys[i] ? keys[i] : "";
            mf->lens[2 + p - sent] = lens[i];
        }
        rc = bk_rconn_append(mf->conn, mf->keys[s], mf->lens[1], (int)(end - sent + 2), mf->argv,
                             mf->lens);
        if (rc == BK_OK)
            sent = end;
    }
    int first = rc;
    for (size_t done = 0; done < sent;) {
        unsigned s;
        const size_t end = chunk_end(mf, done, n, &s), m = end - done;
        redisReply *r;
        const int got = bk_rconn_reply(mf->conn, &r);
        if (got != BK_OK) { /* the pipeline broke: these keys' fate is unknown */
            for (size_t p = done; p < n; p++)
                results[order ? order[p] : p] = got;
            first = got;
            sent = n;
            break;
        }
        if (r->type == REDIS_REPLY_ARRAY && r->elements == m) {
            for (size_t p = done; p < end; p++) {
                const size_t i = order ? order[p] : p;
                results[i] = element_result(mf, op, r->element[p - done]);
                if (results[i] < 0 && first == BK_OK)
                    first = results[i];
            }
        } else {
            const int e = element_result(mf, op, r);
            const int code =
                e < 0 ? e : bk_fail(BK_ESERVER, "redis filter %s: unexpected reply", mf->name);
            for (size_t p = done; p < end; p++)
                results[order ? order[p] : p] = code;
            if (first == BK_OK)
                first = code;
        }
        freeReplyObject(r);
        done = end;
    }
    for (size_t p = sent; p < n; p++)
        results[order ? order[p] : p] = first;
    bk_mem_free(&f->alloc, order);
    return first;
}

static void m_destroy(bk_filter *f)
{
    bk_mfilter *mf = (bk_mfilter *)f;
    const bk_allocator a = f->alloc;
    for (unsigned s = 0; s < mf->nshards; s++) {
        if (mf->copies)
            bk_free(mf->copies[s]);
        if (mf->keys)
            bk_mem_free(&a, mf->keys[s]);
    }
    bk_rconn_close(mf->conn);
    bk_mem_free(&a, mf->copies);
    bk_mem_free(&a, mf->keys);
    bk_mem_free(&a, mf->first);
    bk_mem_free(&a, mf->name);
    bk_mem_free(&a, mf->argv);
    bk_mem_free(&a, mf->lens);
    bk_mem_free(&a, mf);
}

static uint32_t m_slice_count(const bk_filter *f)
{
    const bk_mfilter *mf = (const bk_mfilter *)f;
    uint32_t n = 0;
    for (unsigned s = 0; s < mf->nshards; s++)
        n += mf->copies[s] ? mf->copies[s]->ops->slice_count(mf->copies[s]) : 1;
    return n;
}

/* The shard of slice i, and i within it (*i). */
static unsigned shard_of_slice(const bk_mfilter *mf, uint32_t *i)
{
    unsigned s = 0;
    for (; s + 1 < mf->nshards; s++) {
        const bk_filter *copy = mf->copies[s];
        const uint32_t here = copy ? copy->ops->slice_count(copy) : 1;
        if (*i < here)
            break;
        *i -= here;
    }
    return s;
}

static uint32_t m_slice_group(const bk_filter *f, uint32_t i)
{
    return shard_of_slice((const bk_mfilter *)f, &i);
}

static void m_slice_view(const bk_filter *f, uint32_t i, bk_slice_view *out)
{
    const bk_mfilter *mf = (const bk_mfilter *)f;
    const bk_filter *copy = mf->copies[shard_of_slice(mf, &i)];
    memset(out, 0, sizeof *out);
    if (copy)
        copy->ops->slice_view(copy, i, out);
    out->data = NULL; /* remote: its cells are on the server */
    if (!copy) {
        out->m = 1; /* before any refresh: an empty shape, never divided by zero */
        out->k = 1;
    }
}

static int m_refresh(const bk_filter *f)
{
    bk_mfilter *mf = (bk_mfilter *)f;
    for (unsigned s = 0; s < mf->nshards; s++) {
        bk_filter *copy;
        const int rc = bk_rmod_pull(mf->conn, mf->keys[s], &copy);
        if (rc != BK_OK)
            return rc;
        bk_free(mf->copies[s]);
        mf->copies[s] = copy;
    }
    return BK_OK;
}

/* A store that takes keys (keys_op) has no digest operations (add,
 * contains, remove: NULL); whether it removes is its variant's. It has no
 * clear either: a module filter is emptied by deleting its key (drop). */
static const bk_filter_ops mod_ops = {
    .version = BK_FILTER_OPS_VERSION,
    .store = BK_STORE_REMOTE,
    .destroy = m_destroy,
    .slice_count = m_slice_count,
    .slice_view = m_slice_view,
    .refresh = m_refresh,
    .keys_op = m_keys_op,
    .slice_group = m_slice_group,
};

/* The config of the module filter name: BK.INFO's config text (no hash key;
 * has_key 0). */
static int read_config(bk_rconn *c, const char *name, bk_config *cfg)
{
    redisReply *r;
    int rc = bk_rconn_callf(c, name, &r, "BK.INFO %s", name);
    if (rc != BK_OK)
        return rc;
    if (r->type == REDIS_REPLY_ERROR && strcmp(r->str, "ERR not found") == 0)
        rc = bk_fail(BK_ENOTFOUND, "redis filter %s does not exist", name);
    else
        rc = bk_fail(BK_ESERVER, "redis filter %s: BK.INFO answered %.200s", name,
                     r->type == REDIS_REPLY_ERROR ? r->str : "a reply of an unexpected shape");
    if (r->type == REDIS_REPLY_ARRAY) { /* RESP2: a map is a flat array */
        for (size_t i = 0; i + 1 < r->elements; i += 2) {
            const redisReply *k = r->element[i], *v = r->element[i + 1];
            if ((k->type == REDIS_REPLY_STATUS || k->type == REDIS_REPLY_STRING) &&
                strcmp(k->str, "config") == 0 && v->type == REDIS_REPLY_STRING) {
                char err[256];
                bk_config_init(cfg);
                rc = bk_config_parse(cfg, v->str, err, sizeof err) == BK_OK
                         ? BK_OK
                         : bk_fail(BK_ESERVER, "redis filter %s: its config: %s", name, err);
            }
        }
    }
    freeReplyObject(r);
    return rc;
}

/* BK.CREATE name with cfg (its hash key included): 1 made, 0 the name was
 * taken meanwhile, or an error. */
static int create(bk_rconn *c, const char *name, const bk_config *cfg)
{
    char text[2048];
    const int n = bk_config_format(cfg, 1, text, sizeof text);
    if (n < 0 || n >= (int)sizeof text)
        return bk_fail(BK_ECONFIG, "redis filter %s: config text too long", name);
    redisReply *r;
    const char *argv[] = {"BK.CREATE", name, text};
    int rc = bk_rconn_call(c, name, strlen(name), &r, 3, argv, NULL);
    if (rc != BK_OK)
        return rc;
    if (r->type == REDIS_REPLY_STATUS)
        rc = 1;
    else if (r->type == REDIS_REPLY_ERROR && strstr(r->str, "item exists"))
        rc = 0;
    else
        rc = bk_fail(BK_ESERVER, "redis filter %s: BK.CREATE answered %.200s", name,
                     r->type == REDIS_REPLY_ERROR ? r->str : "a reply of an unexpected shape");
    freeReplyObject(r);
    return rc;
}

/* What the opener asked (want; or text over have; or nothing) against the
 * filter's config have: BK_OK or BK_EINCOMPAT naming the difference. */
static int check_asked(const char *name, const bk_config *want, const char *text, int strict,
                       const bk_config *have)
{
    if (!text && !strict)
        return BK_OK;
    bk_config asked = *want;
    if (text) {
        char err[256];
        asked = *have;
        if (bk_config_parse_over(&asked, text, err, sizeof err) != BK_OK)
            return bk_fail(BK_ECONFIG, "redis open: %s", err);
    }
    asked.has_key = 0; /* the module keeps its hash key to itself */
    if (!asked.max_bytes)
        asked.max_bytes = have->max_bytes; /* the module's MAX_BYTES caps growth */
    const char *d = bk_config_diff(&asked, have);
    if (!d)
        return BK_OK;
    char h[400], a[400];
    bk_config_format(have, 0, h, sizeof h);
    bk_config_format(&asked, 0, a, sizeof a);
    return bk_fail(BK_EINCOMPAT, "redis filter %s exists with another %s (it has: %s; asked: %s)",
                   name, d, h, a);
}

/* The filter over c (taken over on success): cfg its configuration, d its
 * descriptor (NULL: one module key, name). */
static int make(bk_rconn *c, const char *name, const bk_config *cfg, const bk_rshards *d,
                bk_filter **out)
{
    if (!bk_variant_name(cfg->variant))
        return bk_fail(BK_ESERVER, "redis filter %s: unknown variant", name);
    const bk_allocator a = bk_current_allocator();
    bk_mfilter *mf;
    int rc = bk_filter_new(sizeof *mf, 0, &mod_ops, cfg, &a, &mf);
    if (rc != BK_OK)
        return rc;
    mf->nshards = d ? d->n : 1;
    if (d)
        mf->route = *d;
    mf->name = bk_mem_strdup(&a, name);
    mf->argv = bk_mem_alloc(&a, (BATCH + 2) * sizeof *mf->argv);
    mf->lens = bk_mem_alloc(&a, (BATCH + 2) * sizeof *mf->lens);
    mf->first = bk_mem_alloc(&a, (mf->nshards + 1) * sizeof *mf->first);
    mf->keys = bk_mem_calloc(&a, mf->nshards, sizeof *mf->keys);
    mf->copies = bk_mem_calloc(&a, mf->nshards, sizeof *mf->copies); /* NOLINT: of pointers */
    rc =
        mf->name && mf->argv && mf->lens && mf->first && mf->keys && mf->copies ? BK_OK : BK_ENOMEM;
    unsigned tags[BK_REDIS_SHARDS_MAX];
    if (d)
        bk_rshards_tags(d->n, tags);
    for (unsigned s = 0; rc == BK_OK && s < mf->nshards; s++) {
        char key[BK_REDIS_KEY_MAX];
        if (d)
            bk_rshards_key(name, s, d->n, tags, key, sizeof key);
        else
            snprintf(key, sizeof key, "%s", name);
        if (!(mf->keys[s] = bk_mem_strdup(&a, key)))
            rc = BK_ENOMEM;
    }
    if (rc != BK_OK) {
        m_destroy(&mf->base); /* c is not closed: mf->conn is still NULL */
        return bk_fail(BK_ENOMEM, "redis open: out of memory");
    }
    mf->conn = c;
    *out = &mf->base;
    return BK_OK;
}

int bk_rmod_open(bk_rconn *c, const char *name, const bk_config *want, const char *text, int strict,
                 int exists, bk_filter **out)
{
    bk_config have;
    int rc = BK_OK;
    if (!exists) {
        bk_config cfg = *want;
        if (!cfg.has_key && (rc = bk_random_bytes(cfg.key, sizeof cfg.key)) == BK_OK)
            cfg.has_key = 1;
        if (rc == BK_OK && (rc = create(c, name, &cfg)) < 0)
            return rc;
    }
    if ((rc = read_config(c, name, &have)) != BK_OK ||
        (rc = check_asked(name, want, text, strict, &have)) != BK_OK)
        return rc;
    return make(c, name, &have, NULL, out);
}

/* A descriptor another opener is making: wait (bounded) until its maker
 * marks it ready. */
static int await_ready(bk_rconn *c, const char *name, bk_rshards *d)
{
    for (int tries = 0; !d->ready; tries++) {
        if (tries == 1000) /* 10 s: making even 1,024 shards takes far less */
            return bk_fail(BK_ESERVER,
                           "redis filter %s is still being made by another process, or its "
                           "maker stopped before it made every shard: drop it (bloomkit drop "
                           "--redis URL) and create it again",
                           name);
        bk_rconn_pause(10);
        const int rc = bk_rshards_read(c, name, d);
        if (rc != BK_OK)
            return rc;
    }
    return BK_OK;
}

/* long: the descriptor's two phases (write or wait, then check every shard). */
int bk_rmod_open_sharded(bk_rconn *c, const char *name, const bk_config *want, const char *text,
                         int strict, int exists, unsigned shards, bk_filter **out)
{
    bk_rshards d;
    bk_config have, one;
    char err[256];
    int rc = BK_OK, maker = 0;
    if (!exists) { /* the descriptor: of several creators, one writes it */
        bk_config cfg = *want;
        if (!cfg.has_key)
            rc = bk_random_bytes(cfg.key, sizeof cfg.key);
        cfg.has_key = 1;
        memset(&d, 0, sizeof d);
        d.n = shards;
        if (rc == BK_OK)
            rc = bk_random_bytes(d.route, sizeof d.route);
        if (rc == BK_OK)
            rc = bk_rshards_shard_config(&cfg, shards, &one);
        const int n = bk_config_format(&cfg, 1, d.config, sizeof d.config);
        if (rc == BK_OK && (n < 0 || n >= (int)sizeof d.config))
            rc = bk_fail(BK_ECONFIG, "redis filter %s: config text too long", name);
        if (rc == BK_OK && (rc = bk_rshards_create(c, name, &d)) > 0) {
            maker = 1;
            rc = BK_OK;
        }
    } else {
        rc = bk_rshards_read(c, name, &d);
    }
    if (rc == BK_OK && !maker)
        rc = await_ready(c, name, &d);
    if (rc != BK_OK)
        return rc;
    if (shards && shards != d.n)
        return bk_fail(BK_EINCOMPAT,
                       "redis filter %s was made with shards=%u; the URL asks shards=%u (drop the "
                       "option to adopt the filter's)",
                       name, d.n, shards);
    bk_config_init(&have);
    if (bk_config_parse(&have, d.config, err, sizeof err) != BK_OK)
        return bk_fail(BK_ESERVER, "redis filter %s: its shard descriptor's config: %s", name, err);
    if ((rc = bk_rshards_shard_config(&have, d.n, &one)) != BK_OK)
        return rc;
    /* every shard: made by the descriptor's maker alone, then holding what
     * the descriptor says; for every other opener a missing one was lost */
    unsigned tags[BK_REDIS_SHARDS_MAX];
    bk_rshards_tags(d.n, tags);
    for (unsigned s = 0; s < d.n; s++) {
        char key[BK_REDIS_KEY_MAX];
        bk_config got;
        bk_rshards_key(name, s, d.n, tags, key, sizeof key);
        if (maker && (rc = create(c, key, &one)) < 0)
            return rc;
        if ((rc = read_config(c, key, &got)) == BK_ENOTFOUND)
            return bk_fail(BK_ENOTFOUND,
                           "redis filter %s: its shard %s (%u of %u) is missing (deleted, evicted "
                           "or flushed): the keys it held are lost; nothing was written (bloomkit "
                           "drop --redis URL removes what is left)",
                           name, key, s + 1, d.n);
        if (rc != BK_OK)
            return rc;
        bk_config expect = one;
        expect.has_key = 0;
        if (!expect.max_bytes)
            expect.max_bytes = got.max_bytes;
        const char *diff = bk_config_diff(&expect, &got);
        if (diff)
            return bk_fail(BK_ESERVER,
                           "redis filter %s: its shard %s holds a filter of another %s than its "
                           "descriptor says",
                           name, key, diff);
    }
    if (maker && (rc = bk_rshards_ready(c, name, &d)) != BK_OK)
        return rc;
    have.has_key = 0; /* as a module filter's own: the key stays on the server */
    if ((rc = check_asked(name, want, text, strict, &have)) != BK_OK)
        return rc;
    return make(c, name, &have, &d, out);
}
