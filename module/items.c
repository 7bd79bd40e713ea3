/*
 * items.c - a command's items against a filter: added or looked up a batch
 * at a time through bloomkit's batch calls (their hashing and prefetching
 * overlap the cache misses of many items), and the replies.
 */
#include <string.h>

#include "module.h"
#include "rb.h"
#include "payload.h"

#define BATCH           1024    /* items hashed and prefetched together */
#define NONSCALING_FULL (-1000) /* results[]: a BF standard filter at its capacity */
#define FEW             64      /* results of a command of this many items or fewer: on the stack */

int *bkm_results(size_t n)
{
    if (n > SIZE_MAX / sizeof(int))
        return NULL;
    return bkm_alloc((n ? n : 1) * sizeof(int));
}

/* Pointers and lengths of items[0..n) (n <= BATCH). */
static void gather(RedisModuleString **items, size_t n, const void **keys, size_t *lens)
{
    for (size_t i = 0; i < n; i++)
        keys[i] = RedisModule_StringPtrLen(items[i], &lens[i]);
}

static int keys_of(bkm_value *v)
{
    if (!v->keys_known) {
        bk_filter_stats st;
        const int rc = bk_stats_held(v->f, &st, sizeof st);
        if (rc != BK_OK)
            return rc;
        v->keys = st.keys;
        v->keys_known = 1;
    }
    return BK_OK;
}

/* One item into a BF standard (non-scaling) filter: full at its capacity. */
static int add_capped(bkm_value *v, RedisModuleString *item)
{
    size_t len;
    const char *p = RedisModule_StringPtrLen(item, &len);
    int rc = keys_of(v);
    if (rc != BK_OK)
        return rc;
    if (v->keys >= v->capacity) {
        rc = bk_contains(v->f, p, len);
        return rc == 1 ? 0 : rc < 0 ? rc : NONSCALING_FULL;
    }
    rc = bk_add(v->f, p, len);
    if (rc == 1)
        v->keys++;
    return rc;
}

/* What result r of an add changes: the key (a new key, or a count) and the
 * known number of keys. */
static void note_added(bkm_value *v, int r, int capped, int *changed)
{
    if (r == 1 || (v->counts && r == 0))
        *changed = 1;
    if (r == 1 && !capped && v->keys_known)
        v->keys++;
}

/* bkm_add_items of more than one item, or into a capped filter: a batch at
 * a time. (Apart from the one-item path: its arrays are 16 KB of stack a
 * call, and its code the server's instruction cache holds for nothing.) */
static __attribute__((noinline)) int add_batches(bkm_value *v, RedisModuleString **items, size_t n,
                                                 int bf, int *results, int *changed)
{
    const int capped = bf && v->capped;
    const void *keys[BATCH];
    size_t lens[BATCH];
    int first = BK_OK;
    for (size_t at = 0; at < n; at += BATCH) {
        const size_t m = n - at < BATCH ? n - at : BATCH;
        if (first != BK_OK) {
            for (size_t i = 0; i < m; i++)
                results[at + i] = first;
            continue;
        }
        if (capped) {
            for (size_t i = 0; i < m && first == BK_OK; i++) {
                const int r = add_capped(v, items[at + i]);
                results[at + i] = r;
                if (r < 0) {
                    first = r;
                    for (size_t j = i + 1; j < m; j++)
                        results[at + j] = r;
                }
            }
        } else if (m == 1) { /* a last item: no batch to overlap it with */
            gather(items + at, 1, keys, lens);
            results[at] = bk_add(v->f, keys[0], lens[0]);
            if (results[at] < 0)
                first = results[at];
        } else {
            gather(items + at, m, keys, lens);
            const int rc = bk_add_batch(v->f, keys, lens, m, results + at);
            if (rc != BK_OK)
                first = rc;
        }
        for (size_t i = 0; i < m; i++)
            note_added(v, results[at + i], capped, changed);
    }
    return first;
}

int bkm_add_items(bkm_value *v, RedisModuleString **items, size_t n, int bf, int *results,
                  int *changed)
{
    int rc = BK_OK;
    if (n == 1 && !(bf && v->capped)) { /* one item (BF.ADD, CF.ADD): no batch */
        size_t len;
        const char *p = RedisModule_StringPtrLen(items[0], &len);
        results[0] = bk_add(v->f, p, len);
        note_added(v, results[0], 0, changed);
        if (results[0] < 0)
            rc = results[0];
    } else {
        rc = add_batches(v, items, n, bf, results, changed);
    }
    if (*changed)
        bkm_value_changed(v);
    return rc;
}

static __attribute__((noinline)) int contains_batches(const bkm_value *v, RedisModuleString **items,
                                                      size_t n, int *results)
{
    const void *keys[BATCH];
    size_t lens[BATCH];
    for (size_t at = 0; at < n; at += BATCH) {
        const size_t m = n - at < BATCH ? n - at : BATCH;
        gather(items + at, m, keys, lens);
        if (m == 1) { /* one item: no batch to overlap it with */
            results[at] = bk_contains(v->f, keys[0], lens[0]);
            if (results[at] < 0)
                return results[at];
            continue;
        }
        const int rc = bk_contains_batch(v->f, keys, lens, m, results + at);
        if (rc != BK_OK)
            return rc;
    }
    return BK_OK;
}

int bkm_contains_items(const bkm_value *v, RedisModuleString **items, size_t n, int *results)
{
    if (n != 1) /* (one item, BF.EXISTS and CF.EXISTS: as add's) */
        return contains_batches(v, items, n, results);
    size_t len;
    const char *p = RedisModule_StringPtrLen(items[0], &len);
    results[0] = bk_contains(v->f, p, len);
    return results[0] < 0 ? results[0] : BK_OK;
}

static void reply_one(RedisModuleCtx *ctx, int r, int bf)
{
    if (r >= 0 && bf)
        bkm_reply_bool(ctx, r); /* RedisBloom's: true/false in RESP3 */
    else if (r >= 0)
        RedisModule_ReplyWithLongLong(ctx, r);
    else if (r == NONSCALING_FULL)
        RedisModule_ReplyWithError(ctx, "ERR non scaling filter is full");
    else if (r == BK_EFULL && bf)
        RedisModule_ReplyWithError(ctx, "ERR filter is full: it reached the module's MAX_BYTES");
    else
        bkm_reply_code(ctx, r);
}

void bkm_reply_results(RedisModuleCtx *ctx, const int *results, size_t n, int array, int bf)
{
    if (!array) {
        reply_one(ctx, results[0], bf);
        return;
    }
    RedisModule_ReplyWithArray(ctx, (long)n);
    for (size_t i = 0; i < n; i++)
        reply_one(ctx, results[i], bf);
}

int bkm_add_command(RedisModuleCtx *ctx, RedisModuleKey *key, bkm_value *v,
                    RedisModuleString **argv, int argc, int first, int array, int bf,
                    const char *event)
{
    const size_t n = (size_t)(argc - first);
    int few[FEW], *results = n <= FEW ? few : bkm_results(n);
    if (!results) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    }
    int changed = 0;
    bkm_add_items(v, argv + first, n, bf, results, &changed);
    bkm_reply_results(ctx, results, n, array, bf);
    if (results != few)
        bkm_free(results);
    if (changed) {
        bkm_replicate_write(ctx, v, argv, argc);
        RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, event, argv[1]);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

int bkm_exists_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int array, int bf)
{
    bkm_value *v;
    RedisModuleKey *key;
    if (bkm_open(ctx, argv[1], REDISMODULE_READ, &key, &v) != 0)
        return REDISMODULE_OK;
    return bkm_exists_open(ctx, key, v, argv, argc, array, bf);
}

int bkm_exists_open(RedisModuleCtx *ctx, RedisModuleKey *key, const bkm_value *v,
                    RedisModuleString **argv, int argc, int array, int bf)
{
    if (v && v->window)
        bkm_time_begin(ctx); /* only a window's answer depends on the time */
    const size_t n = (size_t)(argc - 2);
    int few[FEW], *results = n <= FEW ? few : bkm_results(n);
    if (!results) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    }
    int rc = BK_OK;
    if (v)
        rc = bkm_contains_items(v, argv + 2, n, results);
    else
        memset(results, 0, n * sizeof *results); /* a missing filter holds nothing */
    if (rc != BK_OK)
        bkm_reply_code(ctx, rc);
    else
        bkm_reply_results(ctx, results, n, array, bf);
    if (results != few)
        bkm_free(results);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}
