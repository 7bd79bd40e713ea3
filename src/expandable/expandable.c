/*
 * expandable.c - the expandable filter: one quotient table (qtable.h) that
 * doubles when it is three quarters full, for a count nobody knows. A
 * scalable chain grows by adding arrays, and a key new to the filter is
 * looked for in every one of them (ten at 10^9 keys from a first slice of
 * 10^6); here a lookup reads one home and the slots after it however large
 * the table has grown, and a doubling moves every entry once.
 *
 * The rate bound (Dayan et al.'s InfiniFilter, with the scalable chain's
 * tightening): doubling keeps the table's rate (qtable.h), so only adds
 * raise it. Generation g is the table of q0 + g quotient bits (q0 from the
 * capacity: 2^q0 homes hold it at load XP_LOAD_MAX); it takes at most
 * XP_LOAD_MAX * 2^q adds before it doubles (the first table the capacity,
 * no more: what `capacity` says of every variant, and what BF.INFO's
 * Capacity says of a new key), each of fingerprint length
 *   F(g) = ceil(log2(XP_LOAD_MAX / p_g)),   p_g = fpr (1 - r) r^g,
 * so it adds at most p_g to the rate, and all generations together less
 * than fpr. Fingerprints thus get log2(1/r) bits longer each doubling (r
 * = tightening, 0.85 by default: 0.23 bits), the field holds the newest
 * ones (r = F(g) + 1 bits with the marker), and older entries, one bit
 * shorter a doubling, fit in it.
 *
 * Growth: a table that needs room doubles d times in one go, d the
 * doublings that reach the configuration's growth (2: once; 3 or 4: twice;
 * up to 16: four times), as a chain's next slice holds `growth` times the
 * last; the schedule above is per doubling, so a skipped generation only
 * leaves its share of the rate unused.
 *
 * Invariants:
 *  - An add of a key the table may hold changes nothing (0); otherwise
 *    it puts the key's entry in (1). There is no removal: an entry's
 *    shortened fingerprint may stand for several keys.
 *  - A doubling is all or nothing: the new table is allocated before
 *    anything moves (BK_ENOMEM, BK_EFULL at max_bytes: the filter as it
 *    was); then every entry is moved, which cannot fail. The old payload's
 *    pages are given back as the move passes them (the default allocator's
 *    mapped payloads), so a doubling's peak is about the new table's size,
 *    not one and a half times it.
 *  - The slice view persistence sees: m = payload bits (bytes * 8: whole
 *    64-bit words), k = 1 (a lookup reads one home), set_bits = the payload's set bits (what a
 *    file's census counts), keys = adds that were new, gen = the table's
 *    rate as a double's bits (own word: bk_stats reads it; a file's adopt
 *    recomputes it from the entries).
 *
 * Concurrency: expandable.h.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t */
#include "expandable.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/bits.h"
#include "../common/error.h"
#include "qtable.h"

/* The load at which a table doubles: quotient filter runs stay short (a
 * lookup reads a few slots past its home, most often in its home's cache
 * line) while every table is at least three-eighths full. */
#define XP_LOAD_QUARTERS 3
#define XP_LOAD_MAX      (XP_LOAD_QUARTERS / 4.0)

typedef struct bk_expandable {
    bk_filter base; /* first: a bk_expandable* is a bk_filter* */
    xp_table t;
    unsigned q0;   /* the first table's quotient bits */
    uint64_t keys; /* adds that were new */
    int borrowed;  /* t.data belongs to a file mapping */
    /* A table read from outside, not yet checked whole: the blocks checked
     * (xp_check_at), and t's entries and lengths are what its file said
     * and the adds since; NULL once it is known sound (checked whole, or
     * built here). */
    _Atomic uint64_t *checked;
    pthread_rwlock_t lock;
} bk_expandable;

_Static_assert(offsetof(bk_expandable, base) == 0, "bk_filter must be the first member");

/* --- the schedule ------------------------------------------------------- */

/* The quotient bits of cfg's first table. */
static unsigned first_qbits(const bk_config *cfg)
{
    unsigned q = XP_QBITS_MIN;
    while (q < XP_QBITS_MAX && ldexp(XP_LOAD_MAX, (int)q) < (double)cfg->capacity)
        q++;
    return q;
}

/* The field bits of a table of q quotient bits (first q0): F(g) + 1. */
static unsigned field_bits(const bk_config *cfg, unsigned q0, unsigned q)
{
    const double r = cfg->tightening, g = (double)(q - q0);
    const double f = ceil(log2(XP_LOAD_MAX) - log2(cfg->fpr) - log2(1.0 - r) - g * log2(r) - 1e-9);
    return f < 1 ? 2u : f >= XP_FIELD_MAX ? XP_FIELD_MAX + 1 : (unsigned)f + 1;
}

/* The entries e's table takes before it grows: the capacity for the first
 * (its homes hold that much at load XP_LOAD_MAX or under), three quarters
 * of the homes for every later one. */
static uint64_t table_capacity(const bk_expandable *e)
{
    const uint64_t most = (UINT64_C(1) << e->t.q >> 2) * XP_LOAD_QUARTERS; /* exact, no float */
    return e->t.q == e->q0 && e->base.cfg.capacity < most ? e->base.cfg.capacity : most;
}

/* Table t's shape for q quotient bits and at least `slots` slots: r, w,
 * nbytes (whole words) and the slots they hold. BK_OK, or BK_EFULL when
 * its fingerprints or quotients would pass what a slot holds (detail). */
static int shape(const bk_config *cfg, unsigned q0, unsigned q, uint64_t slots, xp_table *t)
{
    t->q = q;
    t->r = field_bits(cfg, q0, q);
    if (q > XP_QBITS_MAX || t->r > XP_FIELD_MAX)
        return bk_fail(BK_EFULL,
                       "expandable filter full: a table of 2^%u homes would need %u-bit "
                       "fingerprints for fpr %g with tightening %g (at most %u bits, 2^%u homes)",
                       q, t->r - 1, cfg->fpr, cfg->tightening, XP_FIELD_MAX - 1, XP_QBITS_MAX);
    t->w = t->r + XP_META;
    t->nbytes = xp_bytes(slots, t->w);
    t->slots = xp_slots_in(t->nbytes, t->w);
    if (t->slots >= UINT64_C(2) << q) /* then q would not follow from the size */
        return bk_fail(BK_EFULL, "expandable filter full: its last runs spill past 2^%u slots",
                       q + 1);
    return BK_OK;
}

/* The quotient bits of a table of m payload bits (cfg's, first q0): the
 * one q whose slots (m / w) are at least 2^q and under 2^(q+1) (shape
 * keeps them so). BK_OK or BK_ECORRUPT. */
static int qbits_of(const bk_config *cfg, unsigned q0, uint64_t m, unsigned *q)
{
    for (unsigned c = q0; c <= XP_QBITS_MAX; c++) {
        const uint64_t slots = xp_slots_in(m / 8, field_bits(cfg, q0, c) + XP_META);
        if (slots >= UINT64_C(1) << c && slots < UINT64_C(2) << c) {
            *q = c;
            return BK_OK;
        }
    }
    return bk_fail(BK_ECORRUPT, "expandable: %llu bits are no table its configuration makes",
                   (unsigned long long)m);
}

/* --- operations --------------------------------------------------------- */

typedef struct releaser {
    const bk_allocator *a;
    uint8_t *data;
    uint64_t nbytes, done;
} releaser;

static void release(void *ctx, uint64_t upto)
{
    releaser *r = ctx;
    bk_payload_discard(r->a, r->data, (size_t)r->nbytes, (size_t)r->done, (size_t)upto);
    r->done = upto;
}

/* The doublings of one growth: the least d with 2^d >= growth (1 .. 4). */
static unsigned doublings_of(const bk_config *cfg)
{
    unsigned d = 1;
    while (d < 4 && ldexp(1.0, (int)d) < cfg->growth)
        d++;
    return d;
}

/* Double the table once: BK_OK, or an error with the filter as it was. */
static int double_once(bk_expandable *e)
{
    const bk_filter *f = &e->base;
    xp_table n;
    memset(&n, 0, sizeof n);
    int rc = shape(&f->cfg, e->q0, e->t.q + 1, xp_double_slots(&e->t), &n);
    if (rc != BK_OK)
        return rc;
    if (f->cfg.max_bytes && n.nbytes > f->cfg.max_bytes)
        return bk_full_error(n.nbytes, f->cfg.max_bytes, e->t.nbytes, 0);
    if (n.nbytes > SIZE_MAX)
        return bk_fail(BK_ERANGE, "expandable: a table of %llu bytes",
                       (unsigned long long)n.nbytes);
    if (!(n.data = bk_payload_alloc(&f->alloc, (size_t)n.nbytes)))
        return BK_ENOMEM;
    releaser r = {&f->alloc, e->t.data, e->t.nbytes, 0};
    xp_double(&e->t, &n, e->borrowed ? NULL : release, &r);
    if (!e->borrowed)
        bk_payload_free(&f->alloc, e->t.data, (size_t)e->t.nbytes);
    e->t = n;
    e->borrowed = 0;
    return BK_OK;
}

/* Check e's table whole when it came from outside and is not yet: its
 * counts are then its own (entries, lengths, ones), and no block needs a
 * check again. BK_OK, or BK_ECORRUPT with the filter as it was. Under the
 * write lock. */
static int check_whole(bk_expandable *e)
{
    if (!e->checked)
        return BK_OK;
    xp_table t = e->t;
    int rc = xp_check(&t);
    if (rc == BK_OK && e->keys > t.entries)
        rc = bk_fail(BK_ECORRUPT, "expandable: %llu keys in %llu entries",
                     (unsigned long long)e->keys, (unsigned long long)t.entries);
    if (rc != BK_OK)
        return rc;
    e->t = t;
    bk_mem_free(&e->base.alloc, (void *)e->checked);
    e->checked = NULL;
    return BK_OK;
}

/* One growth: doublings_of(cfg) doublings. A growth whose last table would
 * pass max_bytes is refused before the first (BK_EFULL, nothing changed);
 * a doubling that fails after one succeeded (BK_ENOMEM) leaves the filter
 * grown that far, every key in it. */
static int grow(bk_expandable *e)
{
    const bk_filter *f = &e->base;
    const unsigned d = doublings_of(&f->cfg);
    const int checked = check_whole(e); /* a doubling reads every slot */
    if (checked != BK_OK)
        return checked;
    if (d > 1 && f->cfg.max_bytes) {
        xp_table last;
        memset(&last, 0, sizeof last);
        const unsigned q = e->t.q + d;
        /* its homes and slack at least: what it spills only adds to it */
        if (shape(&f->cfg, e->q0, q, (UINT64_C(1) << q) + xp_slack(q), &last) == BK_OK &&
            last.nbytes > f->cfg.max_bytes)
            return bk_full_error(last.nbytes, f->cfg.max_bytes, e->t.nbytes, 0);
    }
    for (unsigned i = 0; i < d; i++) {
        const int rc = double_once(e);
        if (rc != BK_OK)
            return rc;
    }
    return BK_OK;
}

static int add_unlocked(bk_filter *f, const bk_hash *h)
{
    bk_expandable *e = (bk_expandable *)f;
    xp_table *t = &e->t;
    /* a table too full, or whose last runs reach its end, grows first
     * (twice at most: a growth at least halves the load and the runs) */
    for (int doublings = 0;; doublings++) {
        const uint64_t x = xp_home(t, h), probe = xp_probe(t, h);
        int rc = e->checked ? xp_check_at(t, e->checked, x) : BK_OK;
        if (rc != BK_OK)
            return rc;
        if (t->entries < table_capacity(e))
            rc = xp_add(t, x, probe, probe | 1); /* every bit it has, and the marker */
        else
            rc = xp_lookup(t, x, probe) ? XP_PRESENT : XP_NO_ROOM;
        if (rc == XP_PRESENT)
            return 0;
        if (rc == XP_ADDED)
            break;
        if (doublings == 2)
            return bk_fail(BK_EFULL, "expandable: no room for a key after two growths");
        if ((rc = grow(e)) != BK_OK)
            return rc;
    }
    e->keys++;
    return 1;
}

static int contains_unlocked(const bk_filter *f, const bk_hash *h)
{
    const bk_expandable *e = (const bk_expandable *)f;
    const uint64_t x = xp_home(&e->t, h);
    const int rc = e->checked ? xp_check_at(&e->t, e->checked, x) : BK_OK;
    return rc != BK_OK ? rc : xp_lookup(&e->t, x, xp_probe(&e->t, h));
}

static int clear_unlocked(bk_filter *f, const bk_hash *unused)
{
    (void)unused;
    bk_expandable *e = (bk_expandable *)f;
    memset(e->t.data, 0, (size_t)e->t.nbytes);
    e->t.entries = e->t.ones = e->keys = 0;
    memset(e->t.by_len, 0, sizeof e->t.by_len);
    bk_mem_free(&f->alloc, (void *)e->checked); /* an empty table is sound */
    e->checked = NULL;
    return BK_OK;
}

BK_WRITE_LOCKED(op_add, add_unlocked)
BK_CLEAR_LOCKED(op_clear, clear_unlocked)
BK_READ_LOCKED(op_contains, contains_unlocked)

/* Start loading the lines a key's add or lookup reads into every cache
 * level: its home slot's 8 bytes (which cross into the next line one time
 * in eight: that line missed, a third of an add's samples, 10^8 URLs) and
 * the slots up to XP_BACK before it, where the walk back to its cluster's
 * start goes (a fifth of that walk's samples on a line not loaded). A
 * temporal hint: bk_prefetch_w's non-temporal one left the line in L1
 * only, and most were gone by the time of the add. */
#define XP_BACK 8

static void load_home(const xp_table *t, const bk_hash *h)
{
    const uint64_t x = xp_home(t, h), back = x < XP_BACK ? x : XP_BACK;
    const uint8_t *p = t->data + (x * t->w >> 3);
    __builtin_prefetch(t->data + ((x - back) * t->w >> 3), 1, 3);
    __builtin_prefetch(p, 1, 3);
    __builtin_prefetch(p + 7, 1, 3);
    __asm__ volatile(""); /* kept: see bk_prefetch_w */
}

/* Each key's home, so the misses of a batch overlap. Reads t while a
 * writer may double it: the hint's address may be stale, never followed. */
static void xp_prefetch(const bk_filter *f, const bk_hash *hs, size_t n, int all)
{
    (void)all;
    bk_expandable *e = (bk_expandable *)(uintptr_t)f;
    pthread_rwlock_rdlock(&e->lock);
    for (size_t k = 0; k < n; k++)
        load_home(&e->t, &hs[k]);
    pthread_rwlock_unlock(&e->lock);
}

/* A batch under one lock (the write lock for adds, the read lock for
 * lookups): BK_STORE_CHUNK keys at most (src/core/batch.c); after an
 * error, every key from the failing one on has its code. XP_GROUP keys
 * at a time, the lines of the group XP_GROUPS_AHEAD groups on loaded
 * before this one is applied. The loads go out together, not one a key: a
 * load that misses the TLB holds up the instructions after it until its
 * page walk ends, and a key's work between two lone loads is too long for
 * the core to reach the next one, so each walk was waited for alone (10^9
 * URLs, a 2.7 GB table: 31% of the run's samples on that load; 316 -> 300
 * CPU s once grouped, with the step's other changes; a loop of random
 * reads into a 2.8 GB array with a key's work between them: 70 ns a read
 * more than into 64 MB alone, 20 when 16 go together). One, two or four
 * groups ahead: the same at 10^8. */
#define XP_GROUP        ((size_t)16)
#define XP_GROUPS_AHEAD ((size_t)2)

static int apply_batch(bk_expandable *e, const bk_hash *hs, size_t n, int *results, int adds)
{
    int rc = BK_OK;
    (adds ? pthread_rwlock_wrlock : pthread_rwlock_rdlock)(&e->lock);
    for (size_t i = 0; i < n && i < XP_GROUP * XP_GROUPS_AHEAD; i++)
        load_home(&e->t, &hs[i]);
    for (size_t at = 0; at < n && rc == BK_OK; at += XP_GROUP) {
        const size_t from = at + XP_GROUP * XP_GROUPS_AHEAD;
        for (size_t i = from; i < n && i < from + XP_GROUP; i++)
            load_home(&e->t, &hs[i]);
        for (size_t i = at; i < n && i < at + XP_GROUP; i++) {
            results[i] =
                adds ? add_unlocked(&e->base, &hs[i]) : contains_unlocked(&e->base, &hs[i]);
            if (results[i] < 0) { /* this key's code for it and every key after */
                rc = results[i];
                for (size_t r = i + 1; r < n; r++)
                    results[r] = rc;
                break;
            }
        }
    }
    pthread_rwlock_unlock(&e->lock);
    return rc;
}

static int xp_add_batch(bk_filter *f, const bk_hash *hs, size_t n, int *results)
{
    return apply_batch((bk_expandable *)f, hs, n, results, 1);
}

static int xp_contains_batch(const bk_filter *f, const bk_hash *hs, size_t n, int *results)
{
    return apply_batch((bk_expandable *)(uintptr_t)f, hs, n, results, 0);
}

/* bk_stats' figures (the rate from every entry's length, the entries) of a
 * table read from outside: its whole check, once. */
static int xp_refresh(const bk_filter *f)
{
    bk_expandable *e = (bk_expandable *)(uintptr_t)f;
    pthread_rwlock_rdlock(&e->lock);
    const int sound = !e->checked; /* most often: no write lock needed */
    pthread_rwlock_unlock(&e->lock);
    if (sound)
        return BK_OK;
    pthread_rwlock_wrlock(&e->lock);
    const int rc = check_whole(e);
    pthread_rwlock_unlock(&e->lock);
    return rc;
}

/* Its struct, and while its table is not yet checked whole the map of the
 * blocks checked. */
static uint64_t xp_state_bytes(const bk_filter *f)
{
    bk_expandable *e = (bk_expandable *)(uintptr_t)f;
    pthread_rwlock_rdlock(&e->lock);
    const uint64_t words = e->checked ? xp_map_words(&e->t) : 0;
    pthread_rwlock_unlock(&e->lock);
    return f->state_size + words * 8;
}

static void xp_destroy(bk_filter *f)
{
    bk_expandable *e = (bk_expandable *)f;
    bk_mem_free(&f->alloc, (void *)e->checked);
    bk_filter_free_array(f, e->t.data, e->t.nbytes, e->borrowed);
}

static void xp_defrag(bk_filter *f, uint32_t i, bk_move_fn move, void *arg)
{
    (void)i;
    bk_expandable *e = (bk_expandable *)f;
    e->t.data = bk_own_move(&f->alloc, e->t.data, (size_t)e->t.nbytes,
                            e->borrowed ? BK_OWN_NONE : BK_OWN_PAYLOAD, move, arg);
}

static void xp_slice_view(const bk_filter *f, uint32_t i, bk_slice_view *out)
{
    (void)i;
    const bk_expandable *e = (const bk_expandable *)f;
    memset(out, 0, sizeof *out);
    out->m = e->t.nbytes * 8;
    out->k = 1;
    out->capacity = f->cfg.capacity;
    out->fpr = f->cfg.fpr;
    out->set_bits = e->t.ones;
    out->keys = e->keys;
    out->data = e->t.data;
    out->nbytes = e->t.nbytes;
    const double rate = xp_rate(&e->t);
    memcpy(&out->gen, &rate, sizeof out->gen);
}

/* The operations grouped by role. remove, merge and intersect are NULL: a
 * shortened fingerprint may stand for several keys, and two tables'
 * entries are not a table of both. expire is NULL: it keeps no time. */
/* clang-format off */
static const bk_filter_perf expandable_perf = {
    BK_PERF_TABLE, .prefetch = xp_prefetch, .add_batch = xp_add_batch,
    .contains_batch = xp_contains_batch,
};
static const bk_filter_ops expandable_ops = {
    BK_MEMORY_OPS, .add = op_add, .contains = op_contains, .clear = op_clear,
    .destroy = xp_destroy, .slice_count = bk_one_slice, .slice_view = xp_slice_view,
    .refresh = xp_refresh, .state_bytes = xp_state_bytes,
    .defrag = xp_defrag, .perf = &expandable_perf,
};
/* clang-format on */

/* --- construction ------------------------------------------------------- */

static int make(const bk_config *cfg, const bk_allocator *a, const xp_table *t, uint64_t keys,
                int borrowed, bk_filter **out)
{
    bk_expandable *e;
    const int rc =
        bk_filter_new(sizeof *e, offsetof(bk_expandable, lock), &expandable_ops, cfg, a, &e);
    if (rc != BK_OK)
        return rc;
    e->t = *t;
    e->q0 = first_qbits(cfg);
    e->keys = keys;
    e->borrowed = borrowed;
    *out = &e->base;
    return BK_OK;
}

/* The first table of cfg (data NULL). */
static int first_table(const bk_config *cfg, xp_table *t)
{
    memset(t, 0, sizeof *t);
    const unsigned q0 = first_qbits(cfg);
    const int rc = shape(cfg, q0, q0, (UINT64_C(1) << q0) + xp_slack(q0), t);
    if (rc != BK_OK) /* the first table too: the configuration asks too much */
        return bk_fail(BK_ERANGE, "%s", bk_last_error());
    return BK_OK;
}

static uint64_t expandable_first_bytes(const bk_config *cfg)
{
    xp_table t;
    return first_table(cfg, &t) == BK_OK ? t.nbytes : 0;
}

static int bk_expandable_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out)
{
    xp_table t;
    int rc = first_table(cfg, &t);
    if (rc != BK_OK)
        return rc;
    if (cfg->max_bytes && t.nbytes > cfg->max_bytes)
        return bk_full_error(t.nbytes, cfg->max_bytes, 0, 0);
    if (t.nbytes > SIZE_MAX)
        return BK_ERANGE;
    if (!(t.data = bk_payload_alloc(a, (size_t)t.nbytes)))
        return BK_ENOMEM;
    if ((rc = make(cfg, a, &t, 0, 0, out)) != BK_OK)
        bk_payload_free(a, t.data, (size_t)t.nbytes);
    return rc;
}

/* Over a table a file holds: its quotient bits at least the first table's,
 * its bytes whole words holding at least its homes, nothing past its last
 * slot. Its slots are checked lazily (`checked`): a block before a lookup
 * or add first reads it, the whole table before a doubling or bk_stats
 * (which also checks no more keys than entries), so opening costs what
 * opening any file of its size costs, and no answer comes from a slot not
 * checked. Until then its entries are its keys (when it next grows: the
 * adds of its generation), its set bits the file's (the census checked
 * them). */
static int bk_expandable_adopt(const bk_config *cfg, const bk_allocator *a,
                               const bk_slice_view *slices, uint32_t n, int borrowed,
                               bk_filter **out)
{
    const bk_slice_view *v = &slices[0];
    const unsigned q0 = first_qbits(cfg);
    if (n != 1 || v->k != 1 || v->m % 64 || v->nbytes != v->m / 8)
        return bk_fail(BK_ECORRUPT,
                       "expandable: %u tables, k %u, of %llu bits: not one table of whole 64-bit "
                       "words read once a lookup",
                       n, v->k, (unsigned long long)v->m);
    xp_table t;
    memset(&t, 0, sizeof t);
    unsigned q = 0;
    int rc = qbits_of(cfg, q0, v->m, &q);
    if (rc != BK_OK || (rc = shape(cfg, q0, q, 0, &t)) != BK_OK)
        return bk_fail(BK_ECORRUPT, "%s", bk_last_error());
    t.nbytes = v->nbytes;
    t.slots = xp_slots_in(t.nbytes, t.w);
    t.data = v->data;
    if (t.slots < UINT64_C(1) << t.q)
        return bk_fail(BK_ECORRUPT, "expandable: %llu slots for 2^%u homes",
                       (unsigned long long)t.slots, t.q);
    if ((rc = xp_check_tail(&t)) != BK_OK)
        return rc;
    if (v->keys > t.slots) /* each key new to it took an entry, one a slot */
        return bk_fail(BK_ECORRUPT, "expandable: %llu keys in %llu slots",
                       (unsigned long long)v->keys, (unsigned long long)t.slots);
    t.entries = v->keys;
    t.ones = v->set_bits;
    _Atomic uint64_t *checked = bk_mem_calloc(a, (size_t)xp_map_words(&t), 8);
    if (!checked)
        return BK_ENOMEM;
    if ((rc = make(cfg, a, &t, v->keys, borrowed, out)) != BK_OK) {
        bk_mem_free(a, (void *)checked);
        return rc;
    }
    ((bk_expandable *)*out)->checked = checked;
    return BK_OK;
}

static bk_cells expandable_cells(const bk_config *cfg)
{
    (void)cfg;
    const bk_cells c = {1, 0, 0}; /* the census counts the payload's bits */
    return c;
}

/* The first table's figures: its bits and bytes, one home read a lookup,
 * and the rate when it holds the capacity. */
static int bk_expandable_plan(const bk_config *cfg, bk_plan *out)
{
    xp_table t;
    const int rc = first_table(cfg, &t);
    if (rc != BK_OK)
        return rc;
    out->bits = t.nbytes * 8;
    out->bytes = t.nbytes;
    out->k = 1;
    out->expected_fpr = ldexp((double)cfg->capacity, -(int)(t.q + t.r - 1));
    out->bits_per_key = 8.0 * (double)t.nbytes / (double)cfg->capacity;
    return BK_OK;
}

/* The table's figures: its keys are the adds counted, and its rate the one
 * it carries (the sum over entries). */
static void bk_expandable_estimate(const bk_config *cfg, const bk_slice_view *v, uint64_t *steps,
                                   bk_slice_estimate *out)
{
    (void)cfg;
    (void)steps;
    double load;
    memcpy(&load, &v->gen, sizeof load);
    out->keys = (double)v->keys;
    out->rate = isfinite(load) && load >= 0 ? load : 1.0;
    out->model = out->rate;
    out->sized = v->fpr;
}

/* What it holds before it grows (table_capacity). */
static uint64_t expandable_capacity(const bk_filter *f, uint64_t slices_sum)
{
    (void)slices_sum;
    const bk_expandable *e = (const bk_expandable *)f;
    return table_capacity(e);
}

/* The configuration keys it takes (src/core/config.c has what each means). */
static const bk_variant_key expandable_keys[] = {
    {"fpr", NULL, NULL},
    {"growth", NULL, "each growth multiplies the homes by this, rounded up to a power of two"},
    {"tightening", "0.85", "each doubling's adds"},
    {"max_bytes", NULL, NULL},
    {NULL, NULL, NULL},
};

const bk_variant_desc bk_expandable_desc = {
    BK_DESC_NAMED(EXPANDABLE, expandable,
                  "expandable (grows by doubling one table: one lookup whatever its size)"),
    .estimate = bk_expandable_estimate,
    .capacity = expandable_capacity,
    .max_slices = 1,
    .own_words = 1,
    .grows = 1,
    .first_bytes = expandable_first_bytes,
};
