/*
 * counting.c - the counting Bloom filter (Fan, Cao, Almeida & Broder, "Summary
 * Cache", IEEE/ACM ToN 8(3), 2000) with 4-bit counters, two per byte.
 *
 * Layout: m counters, counter i in byte i/2, high nibble for even i (Redis
 * BITFIELD u4 order, see common/bits.h). m and k are sized exactly like the
 * standard filter, so the memory is 4x the standard's for the same n and p.
 *
 * Invariants:
 *  - A counter that reaches 15 (BK_COUNTER_MAX) never moves again: once it has
 *    saturated we no longer know how many keys hold it, so decrementing could
 *    reach 0 while a key still needs it (a false negative). Sticky saturation
 *    trades that for a slightly higher false-positive rate; `saturated` counts
 *    such counters.
 *  - A counter never goes below 0: remove decrements the k counters in turn
 *    and, if one is already 0 (the key was never added), puts back every
 *    decrement it made and returns BK_ENOTFOUND, leaving the array exactly as
 *    before. A key whose probes repeat a counter decrements it once per probe,
 *    as add incremented it once per probe, so multiplicity is handled for free.
 *  - nonzero is the number of non-zero counters; keys is adds minus removes.
 *
 * Concurrency: every call may come from any thread. A read-write lock inside
 * the filter serialises writers (add, remove, clear, merge into it) and lets
 * lookups share it, so add's answer is exact (of several threads adding one
 * new key at once, exactly one is told it is new) and a removal's rollback is
 * never seen half done. The price is that counting filters do not scale with
 * writer threads; a 4-bit counter cannot be updated with the word-sized atomic
 * OR the bit arrays use, and a lock per add costs ~20 ns uncontended.
 *
 * Cost: O(k) for add, contains and remove; contains loads all k counters
 * before testing any (the misses overlap, see standard.c).
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t */
#include "counting.h"

#include <pthread.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/bits.h"
#include "../common/sizing.h"

/* The largest value a 4-bit counter holds; reaching it makes it sticky. */
#define BK_COUNTER_MAX 15u

typedef struct bk_counting {
    bk_filter base; /* first: a bk_counting* is a bk_filter* */
    /* The counter array as persistence sees it: m counters, k, block, probes,
     * nbytes = ceil(m / 2), data = the cells, set_bits = non-zero counters,
     * saturated and keys; capacity and fpr are the config's. */
    bk_slice_view v;
    int borrowed;          /* cells belong to a file mapping */
    pthread_rwlock_t lock; /* writers exclusive, lookups shared */
} bk_counting;

_Static_assert(offsetof(bk_counting, base) == 0, "bk_filter must be the first member");

static unsigned cell_get(const bk_counting *c, uint64_t i)
{
    return (c->v.data[i >> 1] >> bk_nibble_shift(i)) & 0xfu;
}

static void cell_set(bk_counting *c, uint64_t i, unsigned v)
{
    const unsigned sh = bk_nibble_shift(i);
    uint8_t *b = &c->v.data[i >> 1];
    *b = (uint8_t)((*b & ~(0xfu << sh)) | (v << sh));
}

/* Increment counter i unless saturated; keep nonzero/saturated exact. */
static void cell_inc(bk_counting *c, uint64_t i)
{
    const unsigned v = cell_get(c, i);
    if (v == BK_COUNTER_MAX)
        return;
    cell_set(c, i, v + 1);
    c->v.set_bits += (v == 0);
    c->v.saturated += (v + 1 == BK_COUNTER_MAX);
}

static int contains_unlocked(const bk_filter *f, const bk_hash *h);

static int add_unlocked(bk_filter *f, const bk_hash *h)
{
    if (f->add_once && contains_unlocked(f, h))
        return 0; /* each key once (bk_set_add_once) */
    bk_counting *c = (bk_counting *)f;
    bk_probes pr = bk_probes_for(h, c->v.m, c->v.block, c->v.probes);
    int was_new = 0;
    for (unsigned i = 0; i < c->v.k; i++) {
        const uint64_t pos = bk_probes_next(&pr);
        was_new |= (cell_get(c, pos) == 0);
        cell_inc(c, pos);
    }
    c->v.keys++;
    return was_new;
}

/* Probes per round of contains: positions first, then every load, then one
 * test (no branch per probe, so the misses overlap; see standard.c). */
#define CNT_ROUND 32

static int contains_unlocked(const bk_filter *f, const bk_hash *h)
{
    const bk_counting *c = (const bk_counting *)f;
    bk_probes pr = bk_probes_for(h, c->v.m, c->v.block, c->v.probes);
    for (unsigned done = 0; done < c->v.k; done += CNT_ROUND) {
        const unsigned n = c->v.k - done < CNT_ROUND ? c->v.k - done : CNT_ROUND;
        uint64_t pos[CNT_ROUND];
        bk_probes_take(&pr, pos, n);
        unsigned hit = 1;
        for (unsigned i = 0; i < n; i++)
            hit &= cell_get(c, pos[i]) != 0;
        if (!hit)
            return 0;
    }
    return 1;
}

static void cnt_prefetch(const bk_filter *f, const bk_hash *hs, size_t n, int all)
{
    const bk_counting *c = (const bk_counting *)f;
    for (size_t i = 0; i < n; i++) {
        bk_probes pr = bk_probes_for(&hs[i], c->v.m, c->v.block, c->v.probes);
        if (c->v.block) { /* one cache line (payloads are 64-byte aligned) */
            bk_prefetch_w(&c->v.data[pr.base >> 1]);
            continue;
        }
        const unsigned lines = all || c->v.k < BK_LOOKUP_LINES ? c->v.k : BK_LOOKUP_LINES;
        for (unsigned j = 0; j < lines; j++)
            bk_prefetch_w(&c->v.data[bk_probes_next(&pr) >> 1]);
    }
}

/* Undo the decrements of probes 0 .. done-1 (saturated ones were skipped and
 * are still 15; every decremented one is now <= 14, so "not 15" finds them). */
static void undo_decrements(bk_counting *c, const bk_hash *h, unsigned done)
{
    bk_probes pr = bk_probes_for(h, c->v.m, c->v.block, c->v.probes);
    for (unsigned i = 0; i < done; i++) {
        const uint64_t pos = bk_probes_next(&pr);
        if (cell_get(c, pos) != BK_COUNTER_MAX)
            cell_inc(c, pos);
    }
}

static int remove_unlocked(bk_filter *f, const bk_hash *h)
{
    bk_counting *c = (bk_counting *)f;
    bk_probes pr = bk_probes_for(h, c->v.m, c->v.block, c->v.probes);
    for (unsigned i = 0; i < c->v.k; i++) {
        const uint64_t pos = bk_probes_next(&pr);
        const unsigned v = cell_get(c, pos);
        if (v == 0) {
            undo_decrements(c, h, i);
            return BK_ENOTFOUND;
        }
        if (v == BK_COUNTER_MAX)
            continue; /* sticky */
        cell_set(c, pos, v - 1);
        c->v.set_bits -= (v == 1);
    }
    c->v.keys -= (c->v.keys > 0);
    return BK_OK;
}

static int clear_unlocked(bk_filter *f, const bk_hash *unused)
{
    (void)unused;
    bk_counting *c = (bk_counting *)f;
    memset(c->v.data, 0, (size_t)c->v.nbytes);
    c->v.set_bits = c->v.saturated = c->v.keys = 0;
    return BK_OK;
}

static void cnt_destroy(bk_filter *f)
{
    bk_counting *c = (bk_counting *)f;
    bk_filter_free_array(f, c->v.data, c->v.nbytes, c->borrowed);
}

static void cnt_slice_view(const bk_filter *f, uint32_t i, bk_slice_view *out)
{
    (void)i;
    *out = ((const bk_counting *)f)->v;
}

static void cnt_defrag(bk_filter *f, uint32_t i, bk_move_fn move, void *arg)
{
    (void)i;
    bk_counting *c = (bk_counting *)f;
    c->v.data = bk_own_move(&f->alloc, c->v.data, (size_t)c->v.nbytes,
                            c->borrowed ? BK_OWN_NONE : BK_OWN_PAYLOAD, move, arg);
}

/* Counter-wise saturating sum: the same counters as adding both key
 * multisets into one filter (a sum >= 15 is what 15 sticky increments give). */
static int merge_unlocked(bk_filter *dst, const bk_filter *src)
{
    bk_counting *d = (bk_counting *)dst;
    const bk_counting *s = (const bk_counting *)src;
    if (d->v.m != s->v.m || d->v.k != s->v.k || d->v.block != s->v.block ||
        d->v.probes != s->v.probes)
        return BK_EINCOMPAT;
    for (uint64_t i = 0; i < d->v.nbytes; i++) {
        const unsigned a = d->v.data[i], b = s->v.data[i];
        unsigned hi = (a >> 4) + (b >> 4), lo = (a & 0xfu) + (b & 0xfu);
        hi = hi > BK_COUNTER_MAX ? BK_COUNTER_MAX : hi;
        lo = lo > BK_COUNTER_MAX ? BK_COUNTER_MAX : lo;
        d->v.data[i] = (uint8_t)(hi << 4 | lo);
    }
    bk_nibble_census(d->v.data, (size_t)d->v.nbytes, &d->v.set_bits, &d->v.saturated);
    d->v.keys += s->v.keys;
    return BK_OK;
}

/* --- the locked entry points ------------------------------------------- */

BK_WRITE_LOCKED(cnt_add, add_unlocked)
BK_WRITE_LOCKED(cnt_remove, remove_unlocked)
BK_READ_LOCKED(cnt_contains, contains_unlocked)

/* dst's lock only: src must not be written meanwhile (as for bk_save). Taking
 * both would deadlock two merges in opposite directions. */
static int cnt_merge(bk_filter *dst, const bk_filter *src)
{
    pthread_rwlock_t *lock = dst->rwlock;
    pthread_rwlock_wrlock(lock);
    const int rc = merge_unlocked(dst, src);
    pthread_rwlock_unlock(lock);
    return rc;
}

BK_CLEAR_LOCKED(cnt_clear, clear_unlocked)

/* The operations grouped by role, as in a SQLite methods table. intersect is NULL: a minimum of
 * counters is not the counters of the common keys. */
/* clang-format off */
static const bk_filter_perf counting_perf = {
    BK_PERF_TABLE, .prefetch = cnt_prefetch,
};
static const bk_filter_ops counting_ops = {
    BK_MEMORY_OPS, .add = cnt_add, .contains = cnt_contains, .remove = cnt_remove,
    .clear = cnt_clear, .merge = cnt_merge, .destroy = cnt_destroy, .slice_count = bk_one_slice,
    .slice_view = cnt_slice_view, .defrag = cnt_defrag, .perf = &counting_perf,
};
/* clang-format on */

/* A counting filter over the array v describes (shape, counts and data,
 * which it takes over; borrowed data belongs to a mapping). The one setup of
 * both constructors. */
static int make(const bk_config *cfg, const bk_allocator *a, const bk_slice_view *v, int borrowed,
                bk_filter **out)
{
    bk_counting *c;
    const int rc = bk_filter_new(sizeof *c, offsetof(bk_counting, lock), &counting_ops, cfg, a, &c);
    if (rc != BK_OK)
        return rc;
    c->v = *v;
    c->v.capacity = cfg->capacity;
    c->v.fpr = cfg->fpr;
    c->borrowed = borrowed;
    *out = &c->base;
    return BK_OK;
}

static int bk_counting_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out)
{
    bk_slice_view v;
    memset(&v, 0, sizeof v); /* empty, BK_PROBES_LCG */
    v.block = bk_block_cells(cfg->layout, 4);
    int rc = bk_size_config(cfg, v.block, &v.m, &v.k);
    if (rc != BK_OK)
        return rc;
    v.nbytes = v.m / 2 + (v.m % 2);
    if (v.nbytes > SIZE_MAX)
        return BK_ERANGE;
    if (!(v.data = bk_payload_alloc(a, (size_t)v.nbytes)))
        return BK_ENOMEM;
    rc = make(cfg, a, &v, 0, out);
    if (rc != BK_OK)
        bk_payload_free(a, v.data, (size_t)v.nbytes);
    return rc;
}

static int bk_counting_adopt(const bk_config *cfg, const bk_allocator *a,
                             const bk_slice_view *slices, uint32_t n, int borrowed, bk_filter **out)
{
    return n == 1 ? make(cfg, a, &slices[0], borrowed, out) : BK_EINVAL;
}

static int bk_counting_plan(const bk_config *cfg, bk_plan *out)
{
    return bk_plan_array(cfg, 4, out);
}

/* Its payload's cells: 4-bit counters, in 64-byte blocks when blocked. */
static bk_cells counting_cells(const bk_config *cfg)
{
    return bk_bloom_cells(cfg, 4, 1);
}

/* The configuration keys it takes: a Bloom array's. */
#define counting_keys bk_bloom_keys

const bk_variant_desc bk_counting_desc = {
    BK_DESC_NAMED(COUNTING, counting, "counting (4-bit counters, removal)"),
    .figures = "saturated",
    .estimate = bk_bloom_estimate,
    .max_slices = 1,
};
