/*
 * batch.c - the batch calls: bk_add_batch / bk_contains_batch on the
 * caller's thread, and their _mt forms on a pool of workers (bk_workers).
 *
 * One thread: a software pipeline (run_batch) hashes the next group of keys
 * and prefetches its memory before it applies this group, so the hashing
 * overlaps the cache misses. Adds count what they change into a tally that
 * the filter's counts take once a chunk (shard_end), not once a key.
 *
 * Several threads, adds: the batch is cut into chunks of BK_MT_CHUNK keys;
 * for each, every thread hashes a contiguous share of the keys (and notes
 * each key's shard), then, if the variant can split the chunk
 * (shard_begin), every thread applies the keys of its own shard in input
 * order, with the same prefetch pipeline over them. A key's answer depends
 * only on the memory its shard owns, written only by the keys of that shard
 * before it: the answers are those of one thread applying all keys in
 * order, for any number of threads. When the variant cannot split the chunk
 * it runs as a pool of one does: the other threads hash ahead while the
 * caller's thread applies the hashed keys in order (pipe_job), so hashing
 * and applying overlap (classic layout, 2 threads: 73.6 -> 52.2 ns a key).
 * A pool of one (no thread of its own, only helpers) never splits
 * (add_pipelined). Lookups write nothing:
 * each thread runs the one-thread pipeline over its share.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "bloomkit.h"
#include "../common/error.h"
#include "filter_impl.h"
#include "../common/workers.h"

/* How many keys a group of the pipeline holds (how far ahead of the key
 * applied the batch calls hash and prefetch): enough lines in flight to
 * overlap many cache misses, few enough that they fit the core's miss
 * buffers and are still cached when used. A key needs one line per blocked
 * slice and k per classic slice; the pipeline keeps about
 * BK_LINES_IN_FLIGHT lines on their way (measured, docs/history.md). */
#define BK_LINES_IN_FLIGHT 24
#define BK_AHEAD_MAX       16

/* Keys hashed, then applied, per round of a multi-threaded add: the digests
 * (16 bytes each) and shards stay in the cache between the two passes, and a
 * round's two pool jobs are a small part of its time. */
#define BK_MT_CHUNK 32768

/* Keys per chunk of a one-thread add batch (a chain's growth lock is held
 * for one chunk: other adders wait at most that long). */
#define BK_ST_CHUNK 4096

static size_t ahead_of(uint64_t lines)
{
    const uint64_t ahead = lines ? BK_LINES_IN_FLIGHT / lines : BK_AHEAD_MAX;
    return ahead < 1 ? 1 : ahead > BK_AHEAD_MAX ? BK_AHEAD_MAX : (size_t)ahead;
}

/* Keys a prefetched group holds: *first when a classic key's first lines
 * are loaded (lookups), *all when all its lines are (one pass over the
 * slices: a view may cost a scan). */
static void keys_ahead(const bk_filter *f, size_t *first, size_t *all)
{
    uint64_t lines_first = 0, lines_all = 0;
    const uint32_t slices = f->ops->slice_count(f);
    for (uint32_t i = 0; i < slices; i++) {
        bk_slice_view v;
        f->ops->slice_view(f, i, &v);
        lines_all += v.block ? 1 : v.k;
        lines_first += v.block ? 1 : v.k < BK_LOOKUP_LINES ? v.k : BK_LOOKUP_LINES;
    }
    *first = ahead_of(lines_first);
    *all = ahead_of(lines_all);
}

static int run_store_batch(bk_filter *f, const void *const *keys, const size_t *lens, size_t n,
                           int *results, int contains)
{
    bk_hash hs[BK_STORE_CHUNK];
    for (size_t at = 0; at < n; at += BK_STORE_CHUNK) {
        const size_t c = n - at < BK_STORE_CHUNK ? n - at : BK_STORE_CHUNK;
        bk_filter_hash_keys(f, keys + at, lens + at, c, hs);
        const int rc = contains ? f->ops->perf->contains_batch(f, hs, c, results + at)
                                : f->ops->perf->add_batch(f, hs, c, results + at);
        if (rc < 0) {
            for (size_t i = at + c; i < n; i++)
                results[i] = rc; /* not sent */
            return rc;
        }
    }
    return BK_OK;
}

/* How the pipeline applies one key: as contains, add or shard_add (which
 * counts into the tally; the others leave it alone). */
typedef int (*apply_fn)(bk_filter *f, const bk_hash *h, bk_tally *t);

static int contains_one(bk_filter *f, const bk_hash *h, bk_tally *t)
{
    (void)t;
    return f->ops->contains(f, h);
}

static int add_one(bk_filter *f, const bk_hash *h, bk_tally *t)
{
    (void)t;
    return f->ops->add(f, h);
}

/* Arguments common to every batch call (what: "add_batch", ...), checked
 * up front so that nothing is applied: BK_EINVAL when malformed, or
 * BK_EREADONLY when the call writes and f is read-only, each with its
 * detail. The error model's first step (common/error.h). */
static int check_args(const bk_filter *f, const void *const *keys, const size_t *lens, size_t n,
                      const int *results, int writes, const char *what)
{
    bk_call_begin();
    if (!f)
        return bk_fail(BK_EINVAL, "%s: no filter", what);
    if (n && (!keys || !lens || !results))
        return bk_fail(BK_EINVAL, "%s: %zu keys, but no key, length or result array", what, n);
    for (size_t i = 0; i < n; i++)
        if (!bk_key_valid(keys[i], lens[i]))
            return bk_fail(BK_EINVAL, "%s: key %zu is NULL with length %zu", what, i, lens[i]);
    if (writes && f->readonly)
        return bk_fail(BK_EREADONLY, "%s: the filter is mapped read-only", what);
    return BK_OK;
}

/* A store's own batch path, when it has one for this operation. */
static int has_store_batch(const bk_filter *f, int contains)
{
    return contains ? BK_PERF(f, contains_batch) != NULL : BK_PERF(f, add_batch) != NULL;
}

/* Keys hashed at a time by the one-thread pipeline, before their groups are
 * prefetched and applied: enough for the multi-key hash to fill its lanes
 * with keys of about the same length (common/siphash_many.c). */
#define BK_HASH_RUN 256

/* Keys a thread takes at a time when hashing (a group), and shards per
 * thread when applying: work is claimed, not dealt, so a thread the system
 * preempts (the command's reader shares the cores) delays the others by one
 * claim at most. */
#define BK_MT_GROUP      256
#define BK_MT_SHARDS_PER 4
#define BK_MT_SHARDS_MAX 1024

/* One chunk of a multi-threaded call, shared by the threads of one job. */
typedef struct mt_chunk {
    bk_filter *f;
    const void *const *keys;
    const size_t *lens;
    size_t n;
    int *results;
    bk_hash *hs; /* n digests */
    int split;   /* the variant splits this chunk: order and start are made */
    /* Each group's keys sorted by shard: group g's keys of shard s are
     * g * BK_MT_GROUP + order[g * BK_MT_GROUP + p] for p in
     * [start[g * (nshards + 1) + s], start[g * (nshards + 1) + s + 1]), in
     * input order. */
    uint16_t *order, *start;
    unsigned nshards;
    size_t ahead;           /* keys a group holds (lookups: sized for their first lines) */
    size_t ahead_all;       /* lookups: keys a group holds when every line is loaded */
    _Atomic size_t claimed; /* groups (hashing), shards (applying) or keys (lookups) taken */
    _Atomic uint64_t tally_set, tally_keys; /* applying: the threads' tallies, summed */
} mt_chunk;

/* The hashed keys of a chunk applied in order on the caller's thread, a
 * prefetched group at a time, through `one`. Lookups start by loading a
 * classic key's first lines only (an absent key needs no more), in groups
 * sized for that; while most keys so far were present, the next group is
 * loaded whole and sized for all k lines (measured, 2 * 10^6 lookups in a
 * 20 MB classic filter, pairs of runs: absent 159-268 -> 70-156 ns a key,
 * present 181-305 before and 219-286 after, within the runs' noise). */
static int apply_in_order(const mt_chunk *c, apply_fn one, bk_tally *t)
{
    bk_filter *f = c->f;
    void (*prefetch)(const bk_filter *, const bk_hash *, size_t, int) = BK_PERF(f, prefetch);
    const int adds = one != contains_one;
    size_t present = 0, group = c->ahead;
    int all = adds;
    if (prefetch)
        prefetch(f, c->hs, c->n < group ? c->n : group, all);
    for (size_t at = 0, next; at < c->n; at = next) {
        next = at + group; /* the next group, prefetched first */
        if (!adds) {       /* as the keys so far go */
            all = present * 2 > at;
            group = all && c->ahead_all ? c->ahead_all : c->ahead;
        }
        if (next < c->n && prefetch)
            prefetch(f, &c->hs[next], c->n - next < group ? c->n - next : group, all);
        for (size_t i = at; i < next && i < c->n; i++) {
            const int rc = one(f, &c->hs[i], t);
            if (rc < 0) {
                for (size_t r = i; r < c->n; r++)
                    c->results[r] = rc;
                return rc;
            }
            c->results[i] = rc;
            present += rc == 1;
        }
    }
    return BK_OK;
}

/* The one-thread pipeline: keys are hashed BK_HASH_RUN at a time, then
 * applied in order (apply_in_order), so the results equal those of single
 * calls. Arguments already checked. */
static int run_batch(bk_filter *f, const void *const *keys, const size_t *lens, size_t n,
                     int *results, apply_fn one, bk_tally *t)
{
    bk_hash hs[BK_HASH_RUN];
    size_t first, ahead_all;
    keys_ahead(f, &first, &ahead_all);
    const size_t ahead = one == contains_one ? first : ahead_all;
    for (size_t lo = 0; lo < n; lo += BK_HASH_RUN) {
        const mt_chunk run = {.f = f,
                              .hs = hs,
                              .results = results + lo,
                              .ahead = ahead,
                              .ahead_all = ahead_all,
                              .n = n - lo < BK_HASH_RUN ? n - lo : BK_HASH_RUN};
        bk_filter_hash_keys(f, keys + lo, lens + lo, run.n, hs);
        const int rc = apply_in_order(&run, one, t);
        if (rc < 0) {
            for (size_t r = lo + run.n; r < n; r++)
                results[r] = rc; /* not applied */
            return rc;
        }
    }
    return BK_OK;
}

/* Apply the keys of c in input order through `run`: in the variant's split
 * mode when it has one for them (a chain then takes its growth lock once
 * instead of its shared lock once a key, adds with no locked instruction,
 * and its counts take the tally once), else one thread-safe add per key.
 * Same answers either way. */
static int apply_split_or_not(const mt_chunk *c, int (*run)(const mt_chunk *, apply_fn, bk_tally *))
{
    bk_filter *f = c->f;
    if (!BK_PERF(f, shard_begin) || !f->ops->perf->shard_begin(f, c->n))
        return run(c, add_one, NULL);
    bk_tally t = {0, 0};
    const int rc = run(c, f->ops->perf->shard_add, &t);
    f->ops->perf->shard_end(f, &t);
    return rc;
}

/* run_batch over a chunk's keys (hashing as it goes). */
static int run_batch_chunk(const mt_chunk *c, apply_fn one, bk_tally *t)
{
    return run_batch(c->f, c->keys, c->lens, c->n, c->results, one, t);
}

/* Adds on one thread, a chunk of BK_ST_CHUNK keys at a time, each through
 * the split mode when the variant has one for it. */
static int add_in_order(bk_filter *f, const void *const *keys, const size_t *lens, size_t n,
                        int *results)
{
    for (size_t at = 0; at < n; at += BK_ST_CHUNK) {
        const mt_chunk part = {.f = f,
                               .keys = keys + at,
                               .lens = lens + at,
                               .n = n - at < BK_ST_CHUNK ? n - at : BK_ST_CHUNK,
                               .results = results + at};
        const int rc = apply_split_or_not(&part, run_batch_chunk);
        if (rc < 0) {
            for (size_t r = at + part.n; r < n; r++)
                results[r] = rc; /* not applied */
            return rc;
        }
    }
    return BK_OK;
}

/* bk_add_batch after its checks. */
static int add_checked(bk_filter *f, const void *const *keys, const size_t *lens, size_t n,
                       int *results)
{
    if (f->ops->keys_op)
        return f->ops->keys_op(f, BK_KEYS_ADD, keys, lens, n, results);
    if (has_store_batch(f, 0))
        return run_store_batch(f, keys, lens, n, results, 0);
    return add_in_order(f, keys, lens, n, results);
}

int bk_add_batch(bk_filter *f, const void *const *keys, const size_t *lens, size_t n, int *results)
{
    const int rc = check_args(f, keys, lens, n, results, 1, "add_batch");
    return rc != BK_OK ? rc : bk_done(add_checked(f, keys, lens, n, results), "add_batch");
}

/* bk_contains_batch after its checks. contains never writes: the casts only
 * let both calls share the paths. */
static int contains_checked(const bk_filter *f, const void *const *keys, const size_t *lens,
                            size_t n, int *results)
{
    if (f->ops->keys_op)
        return f->ops->keys_op((bk_filter *)f, BK_KEYS_CONTAINS, keys, lens, n, results);
    if (has_store_batch(f, 1))
        return run_store_batch((bk_filter *)f, keys, lens, n, results, 1);
    return run_batch((bk_filter *)f, keys, lens, n, results, contains_one, NULL);
}

int bk_contains_batch(const bk_filter *f, const void *const *keys, const size_t *lens, size_t n,
                      int *results)
{
    const int rc = check_args(f, keys, lens, n, results, 0, "contains_batch");
    return rc != BK_OK ? rc
                       : bk_done(contains_checked(f, keys, lens, n, results), "contains_batch");
}

/* The shard, of nshards, of the keys whose writes shard_of names `name`: a
 * multiplicative hash of the name scaled to nshards (no division). */
static unsigned shard_for(uint64_t name, unsigned nshards)
{
    const uint64_t mixed = (name * UINT64_C(0x9E3779B97F4A7C15)) >> 32;
    return (unsigned)((mixed * nshards) >> 32);
}

/* Hash group g and, when split, sort its keys by shard (a counting sort,
 * stable: input order within each shard). */
static void hash_group(const mt_chunk *c, size_t g)
{
    const size_t lo = g * BK_MT_GROUP;
    const size_t hi = c->n - lo < BK_MT_GROUP ? c->n : lo + BK_MT_GROUP;
    bk_filter_hash_keys(c->f, c->keys + lo, c->lens + lo, hi - lo, c->hs + lo);
    if (!c->split)
        return;
    uint16_t sh[BK_MT_GROUP] = {0}; /* (512 bytes a group: zeroed so that no reader need
                                     * prove the two loops cover the same keys) */
    uint16_t *start = c->start + g * (c->nshards + 1);
    memset(start, 0, (c->nshards + 1) * sizeof *start);
    for (size_t i = lo; i < hi; i++) {
        sh[i - lo] = (uint16_t)shard_for(c->f->ops->perf->shard_of(c->f, &c->hs[i]), c->nshards);
        start[sh[i - lo] + 1]++;
    }
    for (unsigned s = 0; s < c->nshards; s++)
        start[s + 1] = (uint16_t)(start[s + 1] + start[s]);
    uint16_t fill[BK_MT_SHARDS_MAX];
    memcpy(fill, start, c->nshards * sizeof *fill);
    for (size_t i = lo; i < hi; i++)
        c->order[lo + fill[sh[i - lo]]++] = (uint16_t)(i - lo);
}

static int hash_job(void *ctx, unsigned t, unsigned nt)
{
    (void)t;
    (void)nt;
    mt_chunk *c = ctx;
    const size_t groups = (c->n + BK_MT_GROUP - 1) / BK_MT_GROUP;
    for (int took = 0;; took = 1) {
        const size_t g = atomic_fetch_add_explicit(&c->claimed, 1, memory_order_relaxed);
        if (g >= groups)
            return took;
        hash_group(c, g);
    }
}

/* Where a thread is in shard s's keys: group g of the chunk next, and keys
 * [p, end) of the order array left in the current one. */
typedef struct shard_cursor {
    unsigned s;
    size_t g, p, end;
} shard_cursor;

/* The next (up to) c->ahead keys of the cursor's shard, in input order:
 * their digests copied into hs and their indices into at, the memory they
 * touch prefetched with one call. Returns how many. */
static size_t gather_shard(const mt_chunk *c, shard_cursor *k, bk_hash *hs, size_t *at)
{
    const size_t groups = (c->n + BK_MT_GROUP - 1) / BK_MT_GROUP;
    size_t got = 0;
    while (got < c->ahead) {
        while (k->p == k->end && k->g < groups) { /* the next group with keys of s */
            const uint16_t *start = c->start + k->g * (c->nshards + 1);
            k->p = k->g * BK_MT_GROUP + start[k->s];
            k->end = k->g * BK_MT_GROUP + start[k->s + 1];
            k->g++;
        }
        if (k->p == k->end)
            break;
        const size_t i = (k->p / BK_MT_GROUP) * BK_MT_GROUP + c->order[k->p];
        k->p++;
        at[got] = i;
        hs[got++] = c->hs[i];
    }
    if (got && BK_PERF(c->f, prefetch))
        c->f->ops->perf->prefetch(c->f, hs, got, 1);
    return got;
}

/* The keys of shard s in input order, through the one-thread pipeline's
 * groups: the next group gathered and prefetched, then this one applied. */
static void apply_shard(const mt_chunk *c, unsigned s, bk_tally *t)
{
    bk_hash hs[2][BK_AHEAD_MAX];
    size_t at[2][BK_AHEAD_MAX], got[2];
    shard_cursor k = {s, 0, 0, 0};
    unsigned cur = 0;
    got[0] = gather_shard(c, &k, hs[0], at[0]);
    while (got[cur]) {
        got[cur ^ 1] = gather_shard(c, &k, hs[cur ^ 1], at[cur ^ 1]);
        for (size_t i = 0; i < got[cur]; i++)
            c->results[at[cur][i]] = c->f->ops->perf->shard_add(c->f, &hs[cur][i], t);
        cur ^= 1;
    }
}

static int apply_job(void *ctx, unsigned t, unsigned nt)
{
    (void)t;
    (void)nt;
    mt_chunk *c = ctx;
    bk_tally tally = {0, 0};
    int took = 0;
    for (;; took = 1) {
        const size_t s = atomic_fetch_add_explicit(&c->claimed, 1, memory_order_relaxed);
        if (s >= c->nshards)
            break;
        apply_shard(c, (unsigned)s, &tally);
    }
    /* relaxed: the caller reads the sums after the job, which the pool's
     * hand-back orders */
    atomic_fetch_add_explicit(&c->tally_set, tally.set, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->tally_keys, tally.keys, memory_order_relaxed);
    return took;
}

/* --- a pool of one and its helpers: hashing runs ahead of applying --------
 *
 * A pool of one has no thread of its own: its calls run on the caller and
 * on whoever calls bk_workers_help (the command's reader). Splitting by
 * shard would pay a sort and hand every digest to another core for one more
 * thread only (measured: 19% more CPU than one thread). Instead the helpers
 * hash the batch's groups in order, as far ahead as they get, and the
 * caller applies the hashed keys in input order a chunk at a time, as
 * bk_add_batch does (a chain's split mode on one shard: no locked
 * instruction); while a chunk's groups are not all hashed, the caller hashes
 * the next unclaimed group itself. */
#define BK_PIPE_GROUPS 16 /* groups per chunk applied (4,096 keys) */

typedef struct pipe_batch {
    mt_chunk c;           /* the whole batch; claimed counts groups */
    atomic_uchar *hashed; /* per group, set (release) once its digests are made */
    int rc;               /* the caller's */
} pipe_batch;

/* Hash the next unclaimed group: 0 when none is left. */
static int hash_one(pipe_batch *p)
{
    const size_t groups = (p->c.n + BK_MT_GROUP - 1) / BK_MT_GROUP;
    const size_t g = atomic_fetch_add_explicit(&p->c.claimed, 1, memory_order_relaxed);
    if (g >= groups)
        return 0;
    hash_group(&p->c, g);
    atomic_store_explicit(&p->hashed[g], 1, memory_order_release);
    return 1;
}

/* Apply chunk [lo, lo + n) of the batch's hashed keys in order, through the
 * variant's split mode when it has one for the chunk. */
static int apply_chunk(const pipe_batch *p, size_t lo, size_t n)
{
    const mt_chunk part = {
        .f = p->c.f, .hs = p->c.hs + lo, .results = p->c.results + lo, .n = n, .ahead = p->c.ahead};
    return apply_split_or_not(&part, apply_in_order);
}

static int pipe_job(void *ctx, unsigned t, unsigned nt)
{
    (void)nt;
    pipe_batch *p = ctx;
    if (t != 0) { /* a helper */
        int took = 0;
        while (hash_one(p))
            took = 1;
        return took;
    }
    const size_t groups = (p->c.n + BK_MT_GROUP - 1) / BK_MT_GROUP;
    for (size_t g0 = 0; g0 < groups; g0 += BK_PIPE_GROUPS) {
        const size_t g1 = groups - g0 < BK_PIPE_GROUPS ? groups : g0 + BK_PIPE_GROUPS;
        unsigned steps = 0;
        for (size_t g = g0; g < g1; g++)
            while (!atomic_load_explicit(&p->hashed[g], memory_order_acquire))
                if (!hash_one(p))
                    bk_wait_step(&steps); /* a helper is making it */
        const size_t lo = g0 * BK_MT_GROUP;
        const size_t hi = g1 * BK_MT_GROUP < p->c.n ? g1 * BK_MT_GROUP : p->c.n;
        if ((p->rc = apply_chunk(p, lo, hi - lo)) < 0) {
            for (size_t i = hi; i < p->c.n; i++)
                p->c.results[i] = p->rc; /* not applied */
            atomic_store_explicit(&p->c.claimed, groups, memory_order_relaxed);
            break;
        }
    }
    return 1;
}

/* Keys per pipeline run: bounds the scratch (16 bytes a key) whatever n. */
#define BK_PIPE_MAX 65536

static int add_pipelined(bk_filter *f, bk_workers *w, const void *const *keys, const size_t *lens,
                         size_t n, int *results)
{
    const size_t per = n < BK_PIPE_MAX ? n : BK_PIPE_MAX;
    const size_t most = (per + BK_MT_GROUP - 1) / BK_MT_GROUP;
    bk_workers_lock(w);
    uint8_t *scratch = bk_workers_scratch(w, per * sizeof(bk_hash) + most);
    if (!scratch) {
        bk_workers_unlock(w);
        return bk_fail(BK_ENOMEM, "add_batch_mt: no memory for the digests of %zu keys", per);
    }
    size_t first, ahead;
    keys_ahead(f, &first, &ahead);
    pipe_batch p = {.c = {.f = f, .hs = (bk_hash *)(void *)scratch, .ahead = ahead},
                    .hashed = (atomic_uchar *)(scratch + per * sizeof(bk_hash)),
                    .rc = BK_OK};
    for (size_t at = 0; at < n && p.rc >= 0; at += per) {
        p.c.keys = keys + at;
        p.c.lens = lens + at;
        p.c.results = results + at;
        p.c.n = n - at < per ? n - at : per;
        atomic_init(&p.c.claimed, 0);
        for (size_t g = 0; g < most; g++)
            atomic_init(&p.hashed[g], 0);
        bk_workers_run(w, pipe_job, &p);
        if (p.rc < 0)
            for (size_t i = at + p.c.n; i < n; i++)
                results[i] = p.rc; /* not applied */
    }
    bk_workers_unlock(w);
    return p.rc;
}

/* long: the split into shards and the two ways to apply them, kept side by side. */
int bk_add_batch_mt(bk_filter *f, bk_workers *w, const void *const *keys, const size_t *lens,
                    size_t n, int *results)
{
    const unsigned nt = bk_workers_threads(w);
    if (!w || (f && (has_store_batch(f, 0) || f->ops->keys_op)))
        return bk_add_batch(f, keys, lens, n, results);
    int rc = check_args(f, keys, lens, n, results, 1, "add_batch_mt");
    if (rc != BK_OK || n == 0)
        return rc;
    if (nt < 2)
        return bk_done(add_pipelined(f, w, keys, lens, n, results), "add_batch_mt");
    const size_t per = n < BK_MT_CHUNK ? n : BK_MT_CHUNK;
    const size_t groups = (per + BK_MT_GROUP - 1) / BK_MT_GROUP;
    const unsigned nshards =
        nt * BK_MT_SHARDS_PER < BK_MT_SHARDS_MAX ? nt * BK_MT_SHARDS_PER : BK_MT_SHARDS_MAX;
    const int can_split = BK_PERF(f, shard_begin) != NULL;
    bk_workers_lock(w);
    uint8_t *scratch =
        bk_workers_scratch(w, per * (sizeof(bk_hash) + sizeof(uint16_t)) +
                                  groups * (nshards + 1) * sizeof(uint16_t) + groups);
    if (!scratch) {
        bk_workers_unlock(w);
        return bk_fail(BK_ENOMEM, "add_batch_mt: no memory for the digests of %zu keys", per);
    }
    size_t first, ahead;
    keys_ahead(f, &first, &ahead);
    mt_chunk c = {.f = f, .hs = (bk_hash *)(void *)scratch, .ahead = ahead, .nshards = nshards};
    c.order = (uint16_t *)(void *)(scratch + per * sizeof(bk_hash));
    c.start = c.order + per;
    atomic_uchar *hashed = (atomic_uchar *)(void *)(c.start + groups * (nshards + 1));
    for (size_t at = 0; at < n && rc == BK_OK; at += per) {
        c.keys = keys + at;
        c.lens = lens + at;
        c.results = results + at;
        c.n = n - at < per ? n - at : per;
        /* Decided before the digests are made: a split needs the shards. */
        c.split = can_split && f->ops->perf->shard_begin(f, c.n);
        atomic_store_explicit(&c.claimed, 0, memory_order_relaxed);
        if (!c.split) {
            /* No split: the other threads hash ahead while this one applies
             * the hashed keys in order (as a pool of one with helpers), so
             * hashing and applying overlap instead of following each other. */
            pipe_batch p = {.c = {.f = f,
                                  .keys = c.keys,
                                  .lens = c.lens,
                                  .n = c.n,
                                  .results = c.results,
                                  .hs = c.hs,
                                  .ahead = c.ahead},
                            .hashed = hashed,
                            .rc = BK_OK};
            atomic_init(&p.c.claimed, 0);
            for (size_t g = 0; g < (c.n + BK_MT_GROUP - 1) / BK_MT_GROUP; g++)
                atomic_init(&hashed[g], 0);
            bk_workers_run(w, pipe_job, &p);
            if ((rc = p.rc) < 0)
                for (size_t r = at + c.n; r < n; r++)
                    results[r] = rc; /* not applied */
            continue;
        }
        bk_workers_run(w, hash_job, &c);
        atomic_store_explicit(&c.claimed, 0, memory_order_relaxed);
        atomic_store_explicit(&c.tally_set, 0, memory_order_relaxed);
        atomic_store_explicit(&c.tally_keys, 0, memory_order_relaxed);
        bk_workers_run(w, apply_job, &c);
        const bk_tally t = {atomic_load_explicit(&c.tally_set, memory_order_relaxed),
                            atomic_load_explicit(&c.tally_keys, memory_order_relaxed)};
        f->ops->perf->shard_end(f, &t);
    }
    bk_workers_unlock(w);
    return bk_done(rc, "add_batch_mt");
}

/* Lookups claimed BK_MT_CHUNK / 16 keys at a time (c->claimed counts keys),
 * each run through the one-thread pipeline; an mt_chunk with no digests. */
static int lookup_job(void *ctx, unsigned t, unsigned nt)
{
    (void)t;
    (void)nt;
    mt_chunk *l = ctx;
    const size_t claim = BK_MT_CHUNK / 16;
    for (int took = 0;; took = 1) {
        const size_t lo = atomic_fetch_add_explicit(&l->claimed, claim, memory_order_relaxed);
        if (lo >= l->n)
            return took;
        const size_t cnt = l->n - lo < claim ? l->n - lo : claim;
        /* contains cannot fail on a filter without a store batch path */
        (void)run_batch(l->f, l->keys + lo, l->lens + lo, cnt, l->results + lo, contains_one, NULL);
    }
}

int bk_contains_batch_mt(const bk_filter *f, bk_workers *w, const void *const *keys,
                         const size_t *lens, size_t n, int *results)
{
    if (!w || (f && (has_store_batch(f, 1) || f->ops->keys_op)))
        return bk_contains_batch(f, keys, lens, n, results);
    const int rc = check_args(f, keys, lens, n, results, 0, "contains_batch_mt");
    if (rc != BK_OK)
        return rc;
    mt_chunk l = {.f = (bk_filter *)f, .keys = keys, .lens = lens, .n = n, .results = results};
    bk_workers_lock(w);
    bk_workers_run(w, lookup_job, &l);
    bk_workers_unlock(w);
    return BK_OK;
}
