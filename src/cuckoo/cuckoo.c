/*
 * cuckoo.c - the cuckoo filter (Fan, Andersen, Kaminsky & Mitzenmacher,
 * CoNEXT 2014): a key is an f-bit fingerprint kept in one of its two
 * buckets; a lookup looks in both. Removal takes one copy of the
 * fingerprint out, so the filter deletes keys, in about a quarter of the
 * memory a 4-bit counting filter needs for the same rate (table.c sizes it).
 *
 * Layout and shape: table.h. The slice view persistence and statistics read
 * has m = N b cells (fingerprints) and k = 2 (the buckets a lookup reads).
 *
 * Invariants:
 *  - An add inserts one copy of the key's fingerprint: the filter holds a
 *    multiset, as the counting filter does (a key added twice needs two
 *    removals), so removing a key that was added never takes the last copy
 *    another added key relies on. Its answer is 1 when neither bucket held
 *    the fingerprint before, 0 when one did (maybe present).
 *  - An add that finds no free slot in either bucket relocates fingerprints
 *    to their other buckets, up to CK_MAX_KICKS times; if that finds no
 *    room it undoes every relocation, in reverse, and fails with BK_EFULL:
 *    the table is exactly as before. The choices of slot come from the key's
 *    own digest, so the same adds in the same order give the same table on
 *    every machine (a Redis replica replays them). Why full rather than a
 *    chain of tables: a chain would multiply the rate and the lookups by its
 *    length; the applications that delete keys know how many they keep, and
 *    the scalable variant is the one for an unknown count (docs/history.md).
 *  - Removing a key never added finds a fingerprint only by a false
 *    positive, and then takes another key's copy (as with counting):
 *    remove only keys you added.
 *  - A key whose two buckets hold its fingerprint in every slot (2b copies;
 *    the buckets always differ, table.h) is saturated and sticky, as a counting
 *    filter's counter at 15: adding it again changes nothing (0), removing
 *    it changes nothing (BK_OK), so it stays present and no count of
 *    copies can run out under it. Relocations cannot move such copies (each
 *    one's other bucket is full of them), so the state lasts.
 *  - set_bits counts occupied slots; keys counts adds minus removes: equal.
 *
 * Concurrency: as counting's: a read-write lock inside the filter, writers
 * exclusive, lookups shared.
 *
 * Cost: a lookup reads 2 buckets (2b fingerprints: two cache lines in the
 * blocked layout, up to four in the packed one); an add the same plus its
 * relocations, rare below the design load.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t */
#include "cuckoo.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/bits.h"
#include "../common/error.h"
#include "table.h"

/* Relocations an add tries before it reports the filter full (the paper's
 * 500: past it, an insertion that has not found room rarely will). */
#define CK_MAX_KICKS 500

typedef struct bk_cuckoo {
    bk_filter base; /* first: a bk_cuckoo* is a bk_filter* */
    ck_shape s;
    /* The table as persistence sees it: m = N b cells, k = 2, block (blocked:
     * the cells of a line), set_bits = occupied slots, keys; capacity and fpr
     * are the config's. */
    bk_slice_view v;
    int borrowed;          /* cells belong to a file mapping */
    pthread_rwlock_t lock; /* writers exclusive, lookups shared */
} bk_cuckoo;

_Static_assert(offsetof(bk_cuckoo, base) == 0, "bk_filter must be the first member");

static unsigned slot_get(const bk_cuckoo *c, uint64_t i, unsigned j)
{
    return ck_get(&c->s, c->v.data, c->v.nbytes, ck_bit(&c->s, i, j));
}

static void slot_put(bk_cuckoo *c, uint64_t i, unsigned j, unsigned fp)
{
    ck_put(&c->s, c->v.data, c->v.nbytes, ck_bit(&c->s, i, j), fp);
}

/* A bucket's fingerprints, read once. */
typedef struct bucket {
    uint64_t i;
    unsigned fp[CK_BUCKET_MAX];
} bucket;

static void read_bucket(const bk_cuckoo *c, uint64_t i, bucket *out)
{
    out->i = i;
    ck_read(&c->s, c->v.data, c->v.nbytes, i, out->fp);
}

/* The first slot of bk holding fp (0: an empty one), or -1. */
static int slot_of(const bk_cuckoo *c, const bucket *bk, unsigned fp)
{
    for (unsigned j = 0; j < c->s.b; j++)
        if (bk->fp[j] == fp)
            return (int)j;
    return -1;
}

/* How many slots of bk hold fp. */
static unsigned count(const bk_cuckoo *c, const bucket *bk, unsigned fp)
{
    unsigned n = 0;
    for (unsigned j = 0; j < c->s.b; j++)
        n += bk->fp[j] == fp;
    return n;
}

/* The slot of bucket i holding fp, or -1. */
static int find(const bk_cuckoo *c, uint64_t i, unsigned fp)
{
    bucket bk;
    read_bucket(c, i, &bk);
    return slot_of(c, &bk, fp);
}

/* Put fp into a free slot of bucket i: 1, or 0 when it has none. */
static int put_free(bk_cuckoo *c, uint64_t i, unsigned fp)
{
    const int j = find(c, i, 0);
    if (j < 0)
        return 0;
    slot_put(c, i, (unsigned)j, fp);
    return 1;
}

/* xorshift64*: the relocations' choices, drawn from the key's digest. */
static uint64_t next_choice(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * UINT64_C(0x2545f4914f6cdd1d);
}

/* Insert fp into one of its buckets b1, b2 (both full): by relocations,
 * BK_OK, or BK_EFULL with the table as it was. */
static int relocate(bk_cuckoo *c, const bk_hash *h, uint64_t i1, uint64_t i2, unsigned fp)
{
    struct {
        uint64_t bucket;
        unsigned slot, old;
    } path[CK_MAX_KICKS];
    uint64_t x = h->h1 ^ h->h2 ^ UINT64_C(0x6b69636b73), i = h->h2 & 1 ? i2 : i1;
    unsigned carry = fp;
    for (unsigned n = 0; n < CK_MAX_KICKS; n++) {
        const unsigned j = (unsigned)(next_choice(&x) >> 32) % c->s.b;
        path[n].bucket = i;
        path[n].slot = j;
        path[n].old = slot_get(c, i, j);
        slot_put(c, i, j, carry);
        carry = path[n].old;
        i = ck_other(&c->s, i, carry);
        if (put_free(c, i, carry))
            return BK_OK;
    }
    for (unsigned n = CK_MAX_KICKS; n-- > 0;) /* in reverse: exactly the table before */
        slot_put(c, path[n].bucket, path[n].slot, path[n].old);
    return bk_fail(BK_EFULL,
                   "cuckoo filter full: %llu of %llu slots taken (%.1f%%) and %d relocations "
                   "found no free one (a key added %u times without removal fills its buckets); "
                   "nothing was changed",
                   (unsigned long long)c->v.set_bits, (unsigned long long)c->v.m,
                   100.0 * (double)c->v.set_bits / (double)c->v.m, CK_MAX_KICKS, 2 * c->s.b);
}

static int add_unlocked(bk_filter *f, const bk_hash *h)
{
    bk_cuckoo *c = (bk_cuckoo *)f;
    const unsigned fp = ck_fingerprint_of(&c->s, h);
    bucket b1, b2;
    read_bucket(c, ck_bucket_of(&c->s, h), &b1);
    read_bucket(c, ck_other(&c->s, b1.i, fp), &b2);
    const unsigned n1 = count(c, &b1, fp), n2 = count(c, &b2, fp);
    if ((n1 == c->s.b && n2 == c->s.b) || (f->add_once && n1 + n2))
        return 0; /* saturated (sticky: no copy more, none less), or held once */
    const int free1 = slot_of(c, &b1, 0), free2 = free1 < 0 ? slot_of(c, &b2, 0) : -1;
    if (free1 >= 0)
        slot_put(c, b1.i, (unsigned)free1, fp);
    else if (free2 >= 0)
        slot_put(c, b2.i, (unsigned)free2, fp);
    else {
        const int rc = relocate(c, h, b1.i, b2.i, fp);
        if (rc != BK_OK)
            return rc;
    }
    c->v.set_bits++;
    c->v.keys++;
    return n1 + n2 == 0;
}

static int contains_unlocked(const bk_filter *f, const bk_hash *h)
{
    const bk_cuckoo *c = (const bk_cuckoo *)f;
    const uint64_t i1 = ck_bucket_of(&c->s, h);
    const unsigned fp = ck_fingerprint_of(&c->s, h);
    return find(c, i1, fp) >= 0 || find(c, ck_other(&c->s, i1, fp), fp) >= 0;
}

static int remove_unlocked(bk_filter *f, const bk_hash *h)
{
    bk_cuckoo *c = (bk_cuckoo *)f;
    const unsigned fp = ck_fingerprint_of(&c->s, h);
    bucket b[2];
    read_bucket(c, ck_bucket_of(&c->s, h), &b[0]);
    read_bucket(c, ck_other(&c->s, b[0].i, fp), &b[1]);
    if (count(c, &b[0], fp) == c->s.b && count(c, &b[1], fp) == c->s.b)
        return BK_OK; /* saturated: sticky, its copies are no longer counted */
    for (int which = 0; which < 2; which++) {
        const int j = slot_of(c, &b[which], fp);
        if (j >= 0) {
            slot_put(c, b[which].i, (unsigned)j, 0);
            c->v.set_bits--;
            c->v.keys -= c->v.keys > 0;
            return BK_OK;
        }
    }
    return bk_fail(BK_ENOTFOUND, "remove: the key is not in the filter");
}

static int clear_unlocked(bk_filter *f, const bk_hash *unused)
{
    (void)unused;
    bk_cuckoo *c = (bk_cuckoo *)f;
    memset(c->v.data, 0, (size_t)c->v.nbytes);
    c->v.set_bits = c->v.keys = 0;
    return BK_OK;
}

/* --- the locked entry points ------------------------------------------- */

BK_WRITE_LOCKED(ck_add, add_unlocked)
BK_WRITE_LOCKED(ck_remove, remove_unlocked)
BK_CLEAR_LOCKED(ck_clear, clear_unlocked)
BK_READ_LOCKED(ck_contains, contains_unlocked)

/* Both buckets of each key, so their misses overlap. */
static void ck_prefetch(const bk_filter *f, const bk_hash *hs, size_t n, int all)
{
    (void)all; /* a lookup reads both buckets too */
    const bk_cuckoo *c = (const bk_cuckoo *)f;
    for (size_t k = 0; k < n; k++) {
        const uint64_t i1 = ck_bucket_of(&c->s, &hs[k]);
        const uint64_t i2 = ck_other(&c->s, i1, ck_fingerprint_of(&c->s, &hs[k]));
        bk_prefetch_w(c->v.data + (ck_bit(&c->s, i1, 0) >> 3));
        bk_prefetch_w(c->v.data + (ck_bit(&c->s, i2, 0) >> 3));
    }
}

static void ck_destroy(bk_filter *f)
{
    bk_cuckoo *c = (bk_cuckoo *)f;
    bk_filter_free_array(f, c->v.data, c->v.nbytes, c->borrowed);
}

static void ck_slice_view(const bk_filter *f, uint32_t i, bk_slice_view *out)
{
    (void)i;
    *out = ((const bk_cuckoo *)f)->v;
}

static void ck_defrag(bk_filter *f, uint32_t i, bk_move_fn move, void *arg)
{
    (void)i;
    bk_cuckoo *c = (bk_cuckoo *)f;
    c->v.data = bk_own_move(&f->alloc, c->v.data, (size_t)c->v.nbytes,
                            c->borrowed ? BK_OWN_NONE : BK_OWN_PAYLOAD, move, arg);
}

/* The operations grouped by role. merge and intersect are NULL: the union
 * of two tables is not a table of the union (each key would have to be
 * inserted again, which may fail), and a minimum of fingerprints is no
 * intersection. expire is NULL: the filter keeps no time. */
/* clang-format off */
static const bk_filter_perf cuckoo_perf = {
    BK_PERF_TABLE, .prefetch = ck_prefetch,
};
static const bk_filter_ops cuckoo_ops = {
    BK_MEMORY_OPS, .add = ck_add, .contains = ck_contains, .remove = ck_remove, .clear = ck_clear,
    .destroy = ck_destroy, .slice_count = bk_one_slice, .slice_view = ck_slice_view,
    .defrag = ck_defrag, .perf = &cuckoo_perf,
};
/* clang-format on */

/* A filter of cfg (resolved) over the table v describes (taken over;
 * borrowed data belongs to a mapping). The one setup of both constructors. */
static int make(const bk_config *cfg, const ck_shape *s, const bk_allocator *a,
                const bk_slice_view *v, int borrowed, bk_filter **out)
{
    bk_cuckoo *c;
    const int rc = bk_filter_new(sizeof *c, offsetof(bk_cuckoo, lock), &cuckoo_ops, cfg, a, &c);
    if (rc != BK_OK)
        return rc;
    c->s = *s;
    c->v = *v;
    c->v.capacity = cfg->capacity;
    c->v.fpr = cfg->fpr;
    c->borrowed = borrowed;
    *out = &c->base;
    return BK_OK;
}

static int bk_cuckoo_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out)
{
    bk_config c = *cfg;
    ck_shape s;
    int rc = ck_resolve(&c);
    if (rc != BK_OK || (rc = ck_shape_of(&c, &s)) != BK_OK)
        return rc;
    bk_slice_view v;
    memset(&v, 0, sizeof v);
    v.m = s.buckets * s.b;
    v.k = 2;
    v.block = ck_cells(&s).block;
    v.nbytes = ck_bytes(&s);
    if (v.nbytes > SIZE_MAX)
        return BK_ERANGE;
    if (!(v.data = bk_payload_alloc(a, (size_t)v.nbytes)))
        return BK_ENOMEM;
    rc = make(&c, &s, a, &v, 0, out);
    if (rc != BK_OK)
        bk_payload_free(a, v.data, (size_t)v.nbytes);
    return rc;
}

/* Over a table a file holds: its shape must be the configuration's. */
static int bk_cuckoo_adopt(const bk_config *cfg, const bk_allocator *a, const bk_slice_view *slices,
                           uint32_t n, int borrowed, bk_filter **out)
{
    bk_config c = *cfg;
    ck_shape s;
    int rc = ck_resolve(&c);
    if (rc != BK_OK || (rc = ck_shape_of(&c, &s)) != BK_OK)
        return rc;
    const bk_slice_view *v = &slices[0];
    if (n != 1 || v->k != 2 || v->m != s.buckets * s.b || v->block != ck_cells(&s).block)
        return bk_fail(BK_ECORRUPT,
                       "cuckoo: a table of %llu cells, k %u, is not the %llu buckets of %u that "
                       "its configuration gives",
                       (unsigned long long)v->m, v->k, (unsigned long long)s.buckets, s.b);
    return make(&c, &s, a, v, borrowed, out);
}

static bk_cells cuckoo_cells(const bk_config *cfg)
{
    ck_shape s;
    if (ck_shape_of(cfg, &s) != BK_OK) /* a config that cannot be made has no payload */
        memset(&s, 0, sizeof s), s.f = 1;
    return ck_cells(&s);
}

/* The table's figures at capacity: cells, bytes, k = 2, the rate. */
static int bk_cuckoo_plan(const bk_config *cfg, bk_plan *out)
{
    ck_shape s;
    const int rc = ck_shape_of(cfg, &s);
    if (rc != BK_OK)
        return rc;
    const uint64_t m = s.buckets * s.b;
    out->bits = m;
    out->bytes = ck_bytes(&s);
    out->k = 2;
    out->expected_fpr = ck_rate(s.f, (double)cfg->capacity / (double)s.buckets);
    out->bits_per_key = 8.0 * (double)out->bytes / (double)cfg->capacity;
    return BK_OK;
}

/* A table's figures: its fingerprints are its keys, and the rate is the
 * model's at the fingerprints it holds. */
static void bk_cuckoo_estimate(const bk_config *cfg, const bk_slice_view *v, uint64_t *steps,
                               bk_slice_estimate *out)
{
    (void)steps;
    ck_shape s;
    const int ok = ck_shape_of(cfg, &s) == BK_OK && s.buckets;
    out->keys = (double)v->set_bits;
    out->rate = ok ? ck_rate(s.f, (double)v->set_bits / (double)s.buckets) : 1.0;
    out->model = ok ? ck_rate(s.f, (double)v->keys / (double)s.buckets) : 1.0;
    out->sized = v->fpr;
}

/* The configuration keys it takes (src/core/config.c has what each means). */
static const bk_variant_key cuckoo_keys[] = {
    {"fpr", NULL, NULL},    {"growth", NULL, NULL},      {"tightening", NULL, NULL},
    {"layout", NULL, NULL}, {"fingerprint", NULL, NULL}, {"bucket", NULL, NULL},
    {NULL, NULL, NULL},
};

const bk_variant_desc bk_cuckoo_desc = {
    BK_DESC_NAMED(CUCKOO, cuckoo, "cuckoo (removal in a quarter of counting's memory)"),
    .estimate = bk_cuckoo_estimate,
    .max_slices = 1,
    .resolve = ck_resolve,
};
