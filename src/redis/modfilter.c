/*
 * modfilter.c - a filter kept by bloomkit's Redis module, behind the common
 * vtable: bk_redis_open returns one for a name the module keeps, or makes
 * one when the server has the module (docs/redis.md). The module hashes the
 * keys itself, so adds, lookups and removals send the keys (ops->keys_op):
 * BK.ADD / BK.EXISTS / BK.REMOVE, up to BATCH keys a command, every command
 * of a batch pipelined before the first reply is read. Figures (bk_stats)
 * come from a copy of the image (BF.SCANDUMP), taken by refresh; the views
 * it hands out carry no cells, so the filter counts as remote everywhere.
 */
#include <stdio.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/error.h"
#include "../common/filter_impl.h"
#include "../common/random.h"
#include "modkey.h"

#define BATCH 1000 /* keys a command */

typedef struct bk_mfilter {
    bk_filter base;
    bk_rconn *conn;
    char *name;
    bk_filter *copy; /* the image last read (refresh), or NULL */
    const char **argv;
    size_t *lens;
} bk_mfilter;

static int not_by_digest(void)
{
    return bk_fail(BK_ENOTSUP, "a module filter takes keys, not digests");
}

static int m_add(bk_filter *f, const bk_hash *h)
{
    (void)f;
    (void)h;
    return not_by_digest();
}

static int m_contains(const bk_filter *f, const bk_hash *h)
{
    (void)f;
    (void)h;
    return not_by_digest();
}

static int m_remove(bk_filter *f, const bk_hash *h)
{
    (void)f;
    (void)h;
    return not_by_digest();
}

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

static int m_keys_op(bk_filter *f, int op, const void *const *keys, const size_t *lens, size_t n,
                     int *results)
{
    bk_mfilter *mf = (bk_mfilter *)f;
    const size_t nlen = strlen(mf->name);
    int rc = BK_OK;
    size_t sent = 0; /* keys whose command was appended */
    while (sent < n && rc == BK_OK) {
        const size_t m = n - sent < BATCH ? n - sent : BATCH;
        mf->argv[0] = op_command[op];
        mf->lens[0] = strlen(op_command[op]);
        mf->argv[1] = mf->name;
        mf->lens[1] = nlen;
        for (size_t i = 0; i < m; i++) {
            mf->argv[2 + i] = keys[sent + i] ? keys[sent + i] : "";
            mf->lens[2 + i] = lens[sent + i];
        }
        rc = bk_rconn_append(mf->conn, mf->name, nlen, (int)(m + 2), mf->argv, mf->lens);
        if (rc == BK_OK)
            sent += m;
    }
    int first = rc;
    for (size_t done = 0; done < sent; done += BATCH) {
        const size_t m = sent - done < BATCH ? sent - done : BATCH;
        redisReply *r;
        const int got = bk_rconn_reply(mf->conn, &r);
        if (got != BK_OK) { /* the pipeline broke: these keys' fate is unknown */
            for (size_t i = done; i < n; i++)
                results[i] = got;
            return got;
        }
        if (r->type == REDIS_REPLY_ARRAY && r->elements == m) {
            for (size_t i = 0; i < m; i++) {
                results[done + i] = element_result(mf, op, r->element[i]);
                if (results[done + i] < 0 && first == BK_OK)
                    first = results[done + i];
            }
        } else {
            const int e = element_result(mf, op, r);
            const int code = e < 0 ? e : bk_fail(BK_ESERVER, "redis filter %s: unexpected reply",
                                                 mf->name);
            for (size_t i = 0; i < m; i++)
                results[done + i] = code;
            if (first == BK_OK)
                first = code;
        }
        freeReplyObject(r);
    }
    for (size_t i = sent; i < n; i++)
        results[i] = first;
    return first;
}

static int m_clear(bk_filter *f)
{
    (void)f;
    return bk_fail(BK_ENOTSUP, "a module filter is emptied by deleting its key (bloomkit drop)");
}

static void m_destroy(bk_filter *f)
{
    bk_mfilter *mf = (bk_mfilter *)f;
    const bk_allocator a = f->alloc;
    bk_free(mf->copy);
    bk_rconn_close(mf->conn);
    bk_mem_free(&a, mf->name);
    bk_mem_free(&a, mf->argv);
    bk_mem_free(&a, mf->lens);
    bk_mem_free(&a, mf);
}

static uint32_t m_slice_count(const bk_filter *f)
{
    const bk_mfilter *mf = (const bk_mfilter *)f;
    return mf->copy ? mf->copy->ops->slice_count(mf->copy) : 1;
}

static void m_slice_view(const bk_filter *f, uint32_t i, bk_slice_view *out)
{
    const bk_mfilter *mf = (const bk_mfilter *)f;
    memset(out, 0, sizeof *out);
    if (mf->copy)
        mf->copy->ops->slice_view(mf->copy, i, out);
    out->data = NULL; /* remote: its cells are on the server */
    if (!mf->copy) {
        out->m = 1; /* before any refresh: an empty shape, never divided by zero */
        out->k = 1;
    }
}

static int m_refresh(const bk_filter *f)
{
    bk_mfilter *mf = (bk_mfilter *)f;
    bk_filter *copy;
    const int rc = bk_rmod_pull(mf->conn, mf->name, &copy);
    if (rc != BK_OK)
        return rc;
    bk_free(mf->copy);
    mf->copy = copy;
    return BK_OK;
}

#define MFILTER_OPS(var, rm)                                                                       \
    {                                                                                              \
        .name = var, .add = m_add, .contains = m_contains, .remove = rm, .clear = m_clear,         \
        .destroy = m_destroy, .slice_count = m_slice_count, .slice_view = m_slice_view,            \
        .refresh = m_refresh, .keys_op = m_keys_op,                                                \
    }

static const bk_filter_ops mod_ops[] = {
    [BK_VARIANT_STANDARD] = MFILTER_OPS("standard", NULL),
    [BK_VARIANT_COUNTING] = MFILTER_OPS("counting", m_remove),
    [BK_VARIANT_SCALABLE] = MFILTER_OPS("scalable", NULL),
    [BK_VARIANT_WINDOW] = MFILTER_OPS("window", NULL),
};

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

/* The config of the module filter name: BK.INFO's config text (no hash key;
 * has_key 0). */
static int read_config(bk_rconn *c, const char *name, bk_config *cfg)
{
    redisReply *r;
    int rc = bk_rconn_callf(c, name, &r, "BK.INFO %s", name);
    if (rc != BK_OK)
        return rc;
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

int bk_rmod_open(bk_rconn *c, const char *name, const bk_config *want, const char *text,
                 int strict, int exists, bk_filter **out)
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
    if ((rc = read_config(c, name, &have)) != BK_OK)
        return rc;
    bk_config asked = *want;
    if (text) {
        char err[256];
        asked = have;
        if (bk_config_parse_over(&asked, text, err, sizeof err) != BK_OK)
            return bk_fail(BK_ECONFIG, "redis open: %s", err);
    }
    if (text || strict) {
        asked.has_key = 0; /* the module keeps its hash key to itself */
        if (!asked.max_bytes)
            asked.max_bytes = have.max_bytes; /* the module's MAX_BYTES caps growth */
        const char *d = bk_config_diff(&asked, &have);
        if (d) {
            char h[400], a[400];
            bk_config_format(&have, 0, h, sizeof h);
            bk_config_format(&asked, 0, a, sizeof a);
            return bk_fail(BK_EINCOMPAT,
                           "redis filter %s exists with another %s (it has: %s; asked: %s)", name,
                           d, h, a);
        }
    }
    if ((unsigned)have.variant >= sizeof mod_ops / sizeof *mod_ops || !mod_ops[have.variant].name)
        return bk_fail(BK_ESERVER, "redis filter %s: unknown variant", name);
    const bk_allocator a = bk_current_allocator();
    bk_mfilter *mf;
    if ((rc = bk_filter_new(sizeof *mf, 0, &mod_ops[have.variant], &have, &a, &mf)) != BK_OK)
        return rc;
    mf->conn = c;
    mf->name = bk_mem_strdup(&a, name);
    mf->argv = bk_mem_alloc(&a, (BATCH + 2) * sizeof *mf->argv);
    mf->lens = bk_mem_alloc(&a, (BATCH + 2) * sizeof *mf->lens);
    if (!mf->name || !mf->argv || !mf->lens) {
        mf->conn = NULL; /* the caller closes it */
        m_destroy(&mf->base);
        return bk_fail(BK_ENOMEM, "redis open: out of memory");
    }
    *out = &mf->base;
    return BK_OK;
}
