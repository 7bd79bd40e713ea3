/*
 * scalable.c - scalable Bloom filter (Almeida, Baquero, Preguica & Hutchison,
 * "Scalable Bloom Filters", Information Processing Letters 101(6), 2007).
 *
 * A chain of standard slices (src/standard's slice interface). Slice i is sized
 * for capacity n0 * s^i at rate p0 * (1 - r) * r^i, so the compound rate
 * 1 - prod(1 - p_i) <= sum p_i = p0 (1 - r) / (1 - r) = p0 however many slices
 * are added. Keys go into the newest slice; before an add, if the newest slice's
 * fill (set bits / m) exceeds 0.5 - the fill of an optimally loaded filter - a
 * new slice is started. A key already present in any slice is not added again,
 * so the slices' fills reflect distinct keys.
 *
 * Concurrency: add and contains may run in any number of threads at once.
 * Slices live in a fixed table of BK_SCALABLE_MAX_SLICES pointers that never
 * moves; `count` is published with release after the slice is fully built and
 * read with acquire, so contains takes no lock and sees only complete slices.
 * Adds hold a read lock (shared among adders) and growth the write lock, so
 * while any add runs the newest slice stays the newest: two threads adding one
 * new key at once both land in that slice, whose add tells at most one of
 * them the key is new (see standard.c), and growth happens once however many
 * writers find the slice full. The read lock costs every add two atomic
 * operations on a shared line; adds scale less well across threads than a
 * standard filter's, which takes no lock.
 *
 * Cost: contains probes the slices newest first: the newest holds about half
 * the keys (growth 2), so a present key is usually found in the first slice
 * probed; an absent key must probe them all (every slice: its k lines, or one
 * line when blocked). The number of slices is logarithmic in the keys. The
 * next slices' lines are prefetched while one is probed, so the misses of
 * successive slices overlap instead of adding up.
 *
 * When a slice is full (Almeida et al., section 4): a classic slice takes a key
 * only while its set bits stay at or under half its bits after the key's k
 * probes (set + k <= m / 2). It was sized (bk_size_slice) with k =
 * ceil(log2(1/p_i)), so its rate fill^k never exceeds (1/2)^k <= p_i, and the
 * compound rate stays under p0 whatever the keys do: the bound holds by
 * construction, not only in expectation. A blocked slice's rate is not a
 * function of its fill (crowded blocks pass more often): it takes keys while
 * it holds fewer than its capacity, at which bk_rate_blocked, by which it was
 * sized, is at most p_i, and while the rate estimated from its fill (what
 * bk_stats reports) stays at most p_i too (bk_set_limit): the count bounds the
 * true rate, the fill bounds the estimate. Concurrent adders may each pass the check before
 * either sets its bits: the overshoot is at most k bits (one key) per
 * concurrent adder.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t */
#include "scalable.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/bits.h"
#include "../common/debug.h"
#include "../common/error.h"
#include "../common/sizing.h"
#include "../standard/standard.h"

typedef struct bk_scalable {
    bk_filter base; /* first: a bk_scalable* is a bk_filter* */
    bk_std_slice *slices[BK_SCALABLE_MAX_SLICES];
    _Atomic uint32_t count;                      /* slices in use, >= 1 */
    bk_slice_limit full[BK_SCALABLE_MAX_SLICES]; /* when slice i is full */
    pthread_rwlock_t lock;                       /* adds: read; growth: write */
    bk_budget own;                               /* max_bytes of a chain on its own */
    bk_budget *budget;        /* own, or the one of the filter this chain is part of (a window) */
    bk_scalable_sizes *sizes; /* that filter's slice sizes, or NULL: sized here */
    bk_slice_rule rule;       /* how its slices are sized here (a chain of 0.1.0 keeps its own) */
} bk_scalable;

_Static_assert(offsetof(bk_scalable, base) == 0, "bk_filter must be the first member");

/* Capacity and rate of slice i, from the paper's geometric series. */
static int slice_params(const bk_config *cfg, uint32_t i, uint64_t *cap, double *fpr)
{
    const double c = ceil((double)cfg->capacity * pow(cfg->growth, (double)i));
    const double p = cfg->fpr * (1.0 - cfg->tightening) * pow(cfg->tightening, (double)i);
    if (!(c <= (double)BK_BITS_MAX) || !(p > 0.0))
        return BK_ERANGE;
    *cap = (uint64_t)c;
    *fpr = p;
    return BK_OK;
}

bk_slice_limit bk_scalable_limit(const bk_slice_view *v)
{
    bk_slice_limit l;
    l.set = v->block ? bk_set_limit(v->m, v->k, v->block, v->fpr, v->capacity) : v->m / 2;
    l.keys = v->block ? v->capacity : UINT64_MAX;
    return l;
}

/* 1 when a key may go into s without passing its limit. */
static int has_room(const bk_std_slice *s, const bk_slice_limit *l)
{
    BK_ASSERT(l->set <= s->shape.m); /* a limit is at most the slice's cells */
    uint64_t set, keys;
    bk_std_slice_counts(s, &set, &keys);
    return set + s->shape.k <= l->set && keys < l->keys;
}

int bk_scalable_slice_shape(const bk_config *cfg, uint32_t i, bk_slice_rule rule,
                            bk_slice_view *out)
{
    if (i >= BK_SCALABLE_MAX_SLICES)
        return BK_ERANGE;
    uint64_t cap, m;
    double fpr;
    unsigned k;
    const unsigned block = bk_block_cells(cfg->layout, 1);
    int rc = slice_params(cfg, i, &cap, &fpr);
    if (rc == BK_OK)
        rc = bk_size_slice(cap, fpr, block, rule, &m, &k);
    if (rc != BK_OK)
        return rc;
    memset(out, 0, sizeof *out);
    out->m = m;
    out->k = k;
    out->block = block;
    out->capacity = cap;
    out->fpr = fpr;
    out->nbytes = bk_bits_to_bytes(m);
    return BK_OK;
}

static int size_slice(const bk_config *cfg, uint32_t i, bk_slice_rule rule, bk_slice_size *out)
{
    const int rc = bk_scalable_slice_shape(cfg, i, rule, &out->shape);
    if (rc == BK_OK)
        out->limit = bk_scalable_limit(&out->shape);
    return rc;
}

int bk_scalable_sizes_init(bk_scalable_sizes *z, const bk_config *cfg)
{
    z->cfg = *cfg;
    atomic_init(&z->ready, 0);
    const int rc = size_slice(cfg, 0, BK_SLICE_HOLDS, &z->slice[0]);
    if (rc != BK_OK)
        return rc;
    atomic_init(&z->ready, 1);
    return pthread_mutex_init(&z->lock, NULL) == 0 ? BK_OK : BK_ESYS;
}

void bk_scalable_sizes_free(bk_scalable_sizes *z)
{
    pthread_mutex_destroy(&z->lock);
}

/* Slice i of z's chains, sized now if no chain needed it before. */
static int sizes_get(bk_scalable_sizes *z, uint32_t i, const bk_slice_size **out)
{
    int rc = BK_OK;
    if (i >= atomic_load_explicit(&z->ready, memory_order_acquire)) {
        pthread_mutex_lock(&z->lock);
        for (uint32_t j = atomic_load_explicit(&z->ready, memory_order_relaxed);
             j <= i && rc == BK_OK; j++)
            if ((rc = size_slice(&z->cfg, j, BK_SLICE_HOLDS, &z->slice[j])) == BK_OK)
                atomic_store_explicit(&z->ready, j + 1, memory_order_release);
        pthread_mutex_unlock(&z->lock);
    }
    *out = &z->slice[i];
    return rc;
}

/* Make slice i, sized by sf->sizes (or here, for a chain on its own). */
static int add_slice(bk_scalable *sf, uint32_t i)
{
    if (i >= BK_SCALABLE_MAX_SLICES)
        return BK_ERANGE;
    bk_slice_size own;
    const bk_slice_size *sized = &own;
    int rc =
        sf->sizes ? sizes_get(sf->sizes, i, &sized) : size_slice(&sf->base.cfg, i, sf->rule, &own);
    if (rc != BK_OK)
        return rc;
    bk_slice_view shape = sized->shape;
    if (i > 0) /* a chain keeps one probe derivation (older files: BK_PROBES_DH) */
        shape.probes = sf->slices[0]->shape.probes;
    if ((rc = bk_budget_take(sf->budget, shape.nbytes)) != BK_OK)
        return rc;
    bk_std_slice *s = bk_mem_alloc(&sf->base.alloc, sizeof *s);
    rc = s ? bk_std_slice_init_shape(s, &shape, &sf->base.alloc) : BK_ENOMEM;
    if (rc != BK_OK) {
        bk_mem_free(&sf->base.alloc, s);
        bk_budget_give(sf->budget, shape.nbytes);
        return rc;
    }
    sf->slices[i] = s;
    sf->full[i] = sized->limit;
    atomic_store_explicit(&sf->count, i + 1, memory_order_release);
    return BK_OK;
}

static uint32_t slice_count(const bk_scalable *sf)
{
    return atomic_load_explicit(&((bk_scalable *)sf)->count, memory_order_acquire);
}

/* Start slice n if slice n-1 is still the newest (nobody grew the chain
 * meanwhile) and is full. Takes the write lock: no add is running. */
static int grow(bk_scalable *sf, uint32_t n)
{
    bk_call_begin(); /* a failure here is a failing bk_add's: its detail is fresh (error.h) */
    pthread_rwlock_wrlock(&sf->lock);
    int rc = BK_OK;
    if (slice_count(sf) == n && !has_room(sf->slices[n - 1], &sf->full[n - 1]))
        rc = add_slice(sf, n);
    pthread_rwlock_unlock(&sf->lock);
    return rc;
}

/* Newest first, with the next slices' lines prefetched while one is probed:
 * all of them when blocked (one line each), one slice ahead when classic (k
 * lines each: more would overflow the core's miss queue; measured, see
 * docs/history.md). The slice probed first is not prefetched: its loads
 * start at once, and an absent key stops after a probe or two of its k, so
 * loading all k lines only took memory bandwidth (a 20 MB slice's BF.EXISTS
 * spent 9% of the server's time computing and issuing those prefetches). */
static int scl_contains(const bk_filter *f, const bk_hash *h)
{
    const bk_scalable *sf = (const bk_scalable *)f;
    const uint32_t n = slice_count(sf);
    const uint32_t ahead = sf->base.cfg.layout == BK_LAYOUT_BLOCKED ? n : 1;
    uint32_t prefetched = n - 1; /* slices [prefetched, n - 1) have been prefetched */
    for (uint32_t i = n; i-- > 0;) {
        const uint32_t upto = i >= ahead ? i - ahead : 0;
        while (prefetched > upto)
            bk_std_slice_prefetch(sf->slices[--prefetched], h, 1, 0);
        if (bk_std_slice_contains(sf->slices[i], h))
            return 1;
    }
    return 0;
}

/* Every slice is probed by a lookup of an absent key (and by add, which
 * checks them all first): prefetch them all. */
static void scl_prefetch(const bk_filter *f, const bk_hash *hs, size_t n, int all)
{
    const bk_scalable *sf = (const bk_scalable *)f;
    const uint32_t count = slice_count(sf);
    for (uint32_t i = count; i-- > 0;) /* an add looks the older slices up */
        bk_std_slice_prefetch(sf->slices[i], hs, n, all && i == count - 1);
}

/* The shared lock keeps growth away from adds in flight; a single writer
 * (bk_set_single_writer) has none in flight but its own, so it takes no
 * lock and adds with plain stores. */
static int scl_add(bk_filter *f, const bk_hash *h)
{
    bk_scalable *sf = (bk_scalable *)f;
    const int alone = f->single_writer;
    for (;;) {
        if (!alone)
            pthread_rwlock_rdlock(&sf->lock);
        const uint32_t n = slice_count(sf);
        bk_std_slice *newest = sf->slices[n - 1];
        const int room = has_room(newest, &sf->full[n - 1]);
        /* A chain of one slice with room needs no lookup first: the add
         * answers 0 for a key whose bits it finds all set, and its loads
         * start at once instead of after the lookup's first miss (a
         * reserved filter that holds its capacity is such a chain); a
         * longer chain is looked up newest first, where a present key most
         * likely is. */
        if ((n > 1 || !room) && scl_contains(f, h)) {
            if (!alone)
                pthread_rwlock_unlock(&sf->lock);
            return 0;
        }
        if (room) {
            if (alone)
                return bk_std_slice_add_alone(newest, h);
            const int rc = bk_std_slice_add(newest, h);
            pthread_rwlock_unlock(&sf->lock);
            return rc;
        }
        if (!alone)
            pthread_rwlock_unlock(&sf->lock);
        const int rc = grow(sf, n); /* then check again: the key may have arrived */
        if (rc != BK_OK)
            return rc;
    }
}

/* A split batch (bk_add_batch_mt, or bk_add_batch a chunk at a time) holds
 * the growth lock, so no other add runs and the chain keeps its slices; it
 * is split when the newest slice is blocked and has room for all n keys: had
 * they been added one by one, none would have found it full (each add sets
 * at most k bits and counts one key), so none grows the chain, and each
 * key's answer depends on the older slices (read only) and its block of the
 * newest. The lock is only tried: while other threads add, the batch takes
 * the shared path instead of waiting for them (and making them wait). */
static int scl_shard_begin(bk_filter *f, size_t n)
{
    bk_scalable *sf = (bk_scalable *)f;
    if (pthread_rwlock_trywrlock(&sf->lock) != 0)
        return 0;
    const uint32_t c = slice_count(sf);
    const bk_std_slice *s = sf->slices[c - 1];
    const bk_slice_limit *l = &sf->full[c - 1];
    uint64_t set, keys;
    bk_std_slice_counts(s, &set, &keys);
    if (s->shape.block && n <= l->keys && keys <= l->keys - n && set <= l->set &&
        n <= (l->set - set) / s->shape.k)
        return 1;
    pthread_rwlock_unlock(&sf->lock);
    return 0;
}

static uint64_t scl_shard_of(const bk_filter *f, const bk_hash *h)
{
    const bk_scalable *sf = (const bk_scalable *)f;
    return bk_std_slice_block(sf->slices[slice_count(sf) - 1], h);
}

/* Under the growth lock no other add runs, and each key's block of the
 * newest slice has one writer: its shard's thread. The batch has prefetched
 * every slice; the newest is not looked up first, as add does, since the
 * add itself answers 0 for a key all of whose bits it finds set there. */
static int scl_shard_add(bk_filter *f, const bk_hash *h, bk_tally *t)
{
    bk_scalable *sf = (bk_scalable *)f;
    const uint32_t n = slice_count(sf);
    for (uint32_t i = n - 1; i-- > 0;)
        if (bk_std_slice_contains(sf->slices[i], h))
            return 0;
    return bk_std_slice_add_owned(sf->slices[n - 1], h, t);
}

static void scl_shard_end(bk_filter *f, const bk_tally *t)
{
    bk_scalable *sf = (bk_scalable *)f;
    bk_std_slice_count(sf->slices[slice_count(sf) - 1], t);
    pthread_rwlock_unlock(&sf->lock);
}

static void free_slices_from(bk_scalable *sf, uint32_t first)
{
    const uint32_t n = slice_count(sf);
    for (uint32_t i = first; i < n; i++) {
        bk_budget_give(sf->budget, sf->slices[i]->shape.nbytes);
        bk_std_slice_release(sf->slices[i], &sf->base.alloc);
        bk_mem_free(&sf->base.alloc, sf->slices[i]);
        sf->slices[i] = NULL;
    }
}

static int scl_clear(bk_filter *f)
{
    bk_scalable *sf = (bk_scalable *)f;
    free_slices_from(sf, 1);
    atomic_store(&sf->count, 1);
    bk_std_slice_clear(sf->slices[0]);
    return BK_OK;
}

static void scl_destroy(bk_filter *f)
{
    bk_scalable *sf = (bk_scalable *)f;
    const bk_allocator a = f->alloc;
    free_slices_from(sf, 0);
    pthread_rwlock_destroy(&sf->lock);
    bk_mem_free(&a, sf);
}

static uint32_t scl_slice_count(const bk_filter *f)
{
    return slice_count((const bk_scalable *)f);
}

static void scl_slice_view(const bk_filter *f, uint32_t i, bk_slice_view *out)
{
    bk_std_slice_view(((const bk_scalable *)f)->slices[i], out);
}

static void scl_defrag(bk_filter *f, uint32_t i, bk_move_fn move, void *arg)
{
    bk_std_slice_move(((bk_scalable *)f)->slices[i], &f->alloc, move, arg);
}

/* Slice by slice, only when both chains have the same number of slices of the
 * same shapes (then they were built from one config and grew alike). */
static int scl_merge(bk_filter *dst, const bk_filter *src)
{
    bk_scalable *d = (bk_scalable *)dst;
    const bk_scalable *s = (const bk_scalable *)src;
    const uint32_t n = slice_count(d);
    if (slice_count(s) != n)
        return BK_EINCOMPAT;
    for (uint32_t i = 0; i < n; i++)
        if (!bk_std_slice_same_shape(d->slices[i], s->slices[i]))
            return BK_EINCOMPAT;
    for (uint32_t i = 0; i < n; i++)
        bk_std_slice_combine(d->slices[i], s->slices[i], BK_BITS_OR);
    return BK_OK;
}

/* The operations grouped by role, as in a SQLite methods table. remove is NULL: slices are bit
 * arrays; intersect is NULL: the chain's slices hold disjoint key sets. */
/* clang-format off */
static const bk_filter_perf scalable_perf = {
    BK_PERF_TABLE, .prefetch = scl_prefetch, .shard_begin = scl_shard_begin,
    .shard_of = scl_shard_of, .shard_add = scl_shard_add, .shard_end = scl_shard_end,
};
static const bk_filter_ops scalable_ops = {
    BK_MEMORY_OPS, .add = scl_add, .contains = scl_contains, .clear = scl_clear,
    .merge = scl_merge, .destroy = scl_destroy, .slice_count = scl_slice_count,
    .slice_view = scl_slice_view, .defrag = scl_defrag, .perf = &scalable_perf,
};
/* clang-format on */

/* An empty chain (no slices yet), drawing on budget (NULL: its own, of
 * cfg->max_bytes). */
static int new_chain(const bk_config *cfg, const bk_allocator *a, bk_budget *budget,
                     bk_scalable_sizes *sizes, bk_scalable **out)
{
    bk_scalable *sf;
    const int rc =
        bk_filter_new(sizeof *sf, offsetof(bk_scalable, lock), &scalable_ops, cfg, a, &sf);
    if (rc == BK_OK) {
        atomic_init(&sf->count, 0);
        sf->own.max = cfg->max_bytes;
        sf->budget = budget ? budget : &sf->own;
        sf->sizes = sizes;
        sf->rule = BK_SLICE_HOLDS;
        *out = sf;
    }
    return rc;
}

int bk_scalable_create_in(const bk_config *cfg, const bk_allocator *a, bk_budget *budget,
                          bk_scalable_sizes *sizes, bk_filter **out)
{
    bk_scalable *sf;
    int rc = new_chain(cfg, a, budget, sizes, &sf);
    if (rc != BK_OK)
        return rc;
    rc = add_slice(sf, 0);
    if (rc != BK_OK) {
        scl_destroy(&sf->base);
        return rc;
    }
    *out = &sf->base;
    return BK_OK;
}

uint64_t bk_scalable_first_bytes(const bk_config *cfg)
{
    bk_slice_size s;
    return size_slice(cfg, 0, BK_SLICE_HOLDS, &s) == BK_OK ? s.shape.nbytes : 0;
}

static int bk_scalable_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out)
{
    return bk_scalable_create_in(cfg, a, NULL, NULL, out);
}

int bk_scalable_adopt_in(const bk_config *cfg, const bk_allocator *a, bk_budget *budget,
                         bk_scalable_sizes *sizes, const bk_slice_view *slices, uint32_t n,
                         int borrowed, bk_filter **out)
{
    if (n < 1 || n > BK_SCALABLE_MAX_SLICES)
        return BK_EINVAL;
    bk_scalable *sf;
    int rc = new_chain(cfg, a, budget, sizes, &sf);
    if (rc != BK_OK)
        return rc;
    if (!sizes)
        sf->rule = bk_chain_rule(cfg, slices, n); /* a chain of 0.1.0 grows as it did */
    /* Allocate every slice header first, so a failure takes no payload. */
    for (uint32_t i = 0; i < n; i++) {
        sf->slices[i] = bk_mem_alloc(a, sizeof *sf->slices[i]);
        if (!sf->slices[i]) {
            for (uint32_t j = 0; j < i; j++)
                bk_mem_free(a, sf->slices[j]);
            pthread_rwlock_destroy(&sf->lock);
            bk_mem_free(a, sf);
            return BK_ENOMEM;
        }
    }
    for (uint32_t i = 0; i < n; i++) { /* what it holds counts, even past max_bytes */
        bk_std_slice_adopt(sf->slices[i], &slices[i], borrowed);
        const bk_slice_size *z = NULL; /* the size a chain of sizes gives slice i */
        if (!sizes || sizes_get(sizes, i, &z) != BK_OK || !bk_same_shape(&slices[i], &z->shape) ||
            slices[i].capacity != z->shape.capacity || slices[i].fpr != z->shape.fpr)
            z = NULL;
        sf->full[i] = z ? z->limit : bk_scalable_limit(&slices[i]);
        bk_budget_count(sf->budget, slices[i].nbytes);
    }
    atomic_store(&sf->count, n);
    *out = &sf->base;
    return BK_OK;
}

static int bk_scalable_adopt(const bk_config *cfg, const bk_allocator *a,
                             const bk_slice_view *slices, uint32_t n, int borrowed, bk_filter **out)
{
    return bk_scalable_adopt_in(cfg, a, NULL, NULL, slices, n, borrowed, out);
}

void bk_scalable_own(bk_filter *chain)
{
    bk_scalable *sf = (bk_scalable *)chain;
    for (uint32_t i = 0; i < slice_count(sf); i++)
        sf->slices[i]->borrowed = 0;
}

/* The first slice: capacity n0, rate fpr * (1 - tightening). */
static int bk_scalable_plan(const bk_config *cfg, bk_plan *out)
{
    return bk_plan_fill(cfg->capacity, cfg->fpr * (1.0 - cfg->tightening), cfg->layout, 1, 1, out);
}

/* Its payload's cells: bits, in 64-byte blocks when blocked. */
static bk_cells scalable_cells(const bk_config *cfg)
{
    return bk_bloom_cells(cfg, 1, 0);
}

/* The descriptor's chain_slice: slice i's shape and limit. */
static int scl_chain_slice(const bk_config *cfg, uint32_t i, bk_slice_rule rule, bk_slice_view *out,
                           bk_slice_limit *limit)
{
    const int rc = bk_scalable_slice_shape(cfg, i, rule, out);
    if (rc == BK_OK)
        *limit = bk_scalable_limit(out);
    return rc;
}

/* The configuration keys it takes (src/core/config.c has what each means). */
static const bk_variant_key scalable_keys[] = {
    {"capacity", NULL, "of the first slice"},
    {"fpr", NULL, NULL},
    {"growth", NULL, NULL},
    {"tightening", NULL, NULL},
    {"layout", NULL, NULL},
    {"max_bytes", NULL, NULL},
    {NULL, NULL, NULL},
};

const bk_variant_desc bk_scalable_desc = {
    BK_DESC_NAMED(SCALABLE, scalable, "scalable (grows)"),
    .estimate = bk_bloom_estimate,
    .max_slices = BK_SCALABLE_MAX_SLICES,
    .chain_slice = scl_chain_slice,
    .first_bytes = bk_scalable_first_bytes,
};
