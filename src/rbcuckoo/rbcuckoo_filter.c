/*
 * rbcuckoo_filter.c - RedisBloom's cuckoo filter as a variant (rbcuckoo): a
 * filter holding a bk_rbcuckoo, so files, mappings, bk_stats, the command,
 * Python and the experiments reach it as they reach any variant.
 *
 * Slices are the sub-filters, oldest first: m their slots (buckets times
 * bucket_size, one byte each), k 2 (the buckets a lookup reads), capacity
 * m, fpr the rate of a full one, set_bits the taken slots; sub-filter 0's
 * keys are the filter's items and its gen (the file's generation word) the
 * deletes since the last compaction; the others' are 0. The payload is
 * RedisBloom's slots as they are.
 *
 * Hashing: under hash=murmur the filter's own hash is RedisBloom's
 * MurmurHash64A, seed 0, in h1 (data RedisBloom wrote answers as it did);
 * under a keyed hash the core's h1 is the 64 bits the fingerprint and the
 * buckets come from, and the filter hashes an item given to
 * bloomkit_redisbloom.h's calls the same way.
 *
 * An add stores one more copy of the fingerprint (RedisBloom's CF.ADD):
 * bk_add answers 1 when no copy was there before; with bk_set_add_once a
 * key present changes nothing (CF.ADDNX). Growth is RedisBloom's;
 * max_bytes bounds the sub-filters' bytes (BK_EFULL), and so does
 * expansion 0, with which a full filter refuses adds.
 * Concurrency: writers exclusive, lookups shared (the lock inside).
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t */

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "../common/alloc.h"
#include "../core/config.h"
#include "../core/filter_impl.h"
#include "../common/error.h"
#include "rbcuckoo.h"

typedef struct rcf_filter {
    bk_filter base; /* first: an rcf_filter* is a bk_filter* */
    bk_rbcuckoo *c;
    pthread_rwlock_t lock;
} rcf_filter;

_Static_assert(offsetof(rcf_filter, base) == 0, "bk_filter must be the first member");

static bk_rbcuckoo *cuckoo_of(const bk_filter *f)
{
    return ((const rcf_filter *)f)->c;
}

static int add_unlocked(bk_filter *f, const bk_hash *h)
{
    bk_rbcuckoo *c = cuckoo_of(f);
    const rc_key k = bk_rc_key(h->h1);
    const int had = bk_rc_exists(c, &k);
    if (had && f->add_once)
        return 0;
    const bk_rb_grow grow = {bk_max_bytes_check, f}; /* within max_bytes */
    const int rc = bk_rc_add(c, &k, 0, &grow);
    return rc == 1 ? !had : rc;
}

static int contains_unlocked(const bk_filter *f, const bk_hash *h)
{
    const rc_key k = bk_rc_key(h->h1);
    return bk_rc_exists(cuckoo_of(f), &k);
}

static int remove_unlocked(bk_filter *f, const bk_hash *h)
{
    const rc_key k = bk_rc_key(h->h1);
    return bk_rc_remove(cuckoo_of(f), &k)
               ? BK_OK
               : bk_fail(BK_ENOTFOUND, "remove: the key is not in the filter");
}

static int clear_unlocked(bk_filter *f, const bk_hash *unused)
{
    (void)unused;
    bk_rbcuckoo *c = cuckoo_of(f);
    for (uint32_t i = 0; i < c->filters; i++)
        memset(c->subs[i].slots, 0, (size_t)(c->subs[i].n * c->bucket_size));
    c->items = c->deletes = 0;
    return BK_OK;
}

BK_WRITE_LOCKED(rcf_add, add_unlocked)
BK_WRITE_LOCKED(rcf_remove, remove_unlocked)
BK_CLEAR_LOCKED(rcf_clear, clear_unlocked)
BK_READ_LOCKED(rcf_contains, contains_unlocked)

/* bk_count (CF.COUNT) and bk_compact (CF.COMPACT); the core locks. */
static uint64_t rcf_count(const bk_filter *f, const bk_hash *h)
{
    const rc_key k = bk_rc_key(h->h1);
    return bk_rc_count(cuckoo_of(f), &k);
}

static int rcf_compact(bk_filter *f)
{
    bk_rbcuckoo_compact(cuckoo_of(f), 0);
    return BK_OK;
}

/* RedisBloom's chunked dump of the filter (rbcuckoo_image.c). */
static size_t rcf_chunked_header(const bk_filter *f, void *buf, size_t cap)
{
    return bk_rbcuckoo_header(cuckoo_of(f), buf, cap);
}

static void rcf_chunked_next(const bk_filter *f, long long it, const uint8_t **data, size_t *len,
                             long long *next)
{
    bk_rbcuckoo_chunk(cuckoo_of(f), it, data, len, next);
}

static int rcf_chunked_load(bk_filter *f, long long it, const void *data, size_t len)
{
    return bk_rbcuckoo_load_chunk(cuckoo_of(f), it, data, len);
}

static int rcf_chunked_new(const void *header, size_t len, unsigned flags, uint64_t max_bytes,
                           bk_filter **out)
{
    bk_rbcuckoo *c;
    const int rc = bk_rbcuckoo_header_read(header, len, max_bytes, &c);
    return rc != BK_OK ? rc : bk_filter_of_rbcuckoo(c, flags, out);
}

static void rcf_destroy(bk_filter *f)
{
    rcf_filter *r = (rcf_filter *)f;
    const bk_allocator a = f->alloc;
    bk_rbcuckoo_free(r->c);
    pthread_rwlock_destroy(&r->lock);
    bk_mem_free(&a, r);
}

static uint32_t rcf_slice_count(const bk_filter *f)
{
    return cuckoo_of(f)->filters;
}

/* The rate of a lookup in a sub-filter of buckets of b slots, a share
 * `load` of them taken: 1 - (1 - 1/255)^(2 b load) (a fingerprint is one
 * of 255 values; a lookup reads two buckets). */
static double rate_at(unsigned b, double load)
{
    return -expm1(2.0 * b * load * log1p(-1.0 / 255.0));
}

static void rcf_defrag(bk_filter *f, uint32_t i, bk_move_fn move, void *arg)
{
    bk_rbcuckoo *c = cuckoo_of(f);
    rc_sub *s = &c->subs[i];
    s->slots = bk_own_move(&c->alloc, s->slots, (size_t)(s->n * c->bucket_size), s->own, move, arg);
}

static void rcf_slice_view(const bk_filter *f, uint32_t i, bk_slice_view *out)
{
    const bk_rbcuckoo *c = cuckoo_of(f);
    const rc_sub *s = &c->subs[i];
    memset(out, 0, sizeof *out);
    out->m = s->n * c->bucket_size;
    out->k = 2;
    out->capacity = out->m;
    out->fpr = rate_at(c->bucket_size, 1.0);
    for (uint64_t j = 0; j < out->m; j++)
        out->set_bits += s->slots[j] != 0;
    out->keys = i == 0 ? c->items : 0;
    out->gen = i == 0 ? (int64_t)c->deletes : 0;
    out->data = s->slots;
    out->nbytes = out->m;
}

/* The operations; merge and intersect are NULL: RedisBloom combines no
 * cuckoo filters, and a union of tables is not a table of the union. */
/* clang-format off */
static const bk_filter_ops rbcuckoo_ops = {
    BK_MEMORY_OPS, .add = rcf_add, .contains = rcf_contains, .remove = rcf_remove,
    .clear = rcf_clear, .destroy = rcf_destroy, .slice_count = rcf_slice_count,
    .slice_view = rcf_slice_view, .defrag = rcf_defrag,
};
/* clang-format on */

/* The filter over c (taken: freed on error too): one that keeps within a
 * file (own 0: the variant's filters, growth stopping where a file's slices
 * do), or a RedisBloom value kept with its own limits. */
static int make(const bk_config *cfg, const bk_allocator *a, bk_rbcuckoo *c, int own,
                bk_filter **out)
{
    rcf_filter *r;
    const int rc = bk_filter_new(sizeof *r, offsetof(rcf_filter, lock), &rbcuckoo_ops, cfg, a, &r);
    if (rc != BK_OK) {
        bk_rbcuckoo_free(c);
        return rc;
    }
    r->c = c;
    if (!own) {
        c->payloads = 1;
        c->max_filters =
            BK_SLICES_MAX; /* what a file holds: growth stops there, saves never fail */
    }
    if (cfg->hash != BK_HASH_MURMUR) { /* keyed: the structure's calls take the filter's digest */
        c->hkey = &r->base.hkey;
        c->alg = cfg->hash;
    }
    *out = &r->base;
    return BK_OK;
}

/* CF.RESERVE's parameters of cfg: BK_OK, or BK_ECONFIG for an expansion
 * RedisBloom refuses. */
static int params_of(const bk_config *cfg, bk_rbcuckoo_info *in)
{
    memset(in, 0, sizeof *in);
    in->bucket_size = (unsigned)bk_config_count(cfg, "bucket_size");
    in->max_iterations = (unsigned)bk_config_count(cfg, "iterations");
    const uint64_t e = bk_config_count(cfg, "expansion");
    if (e > 32768)
        return bk_fail(BK_ECONFIG, "expansion: rbcuckoo takes 0 .. 32768 (CF.RESERVE's EXPANSION)");
    in->expansion = (unsigned)e;
    return BK_OK;
}

/* Sub-filter 0's buckets for cfg's capacity: RedisBloom's sizing for its
 * hash (the bytes CF.RESERVE makes), else enough that the capacity fits
 * without growing (bk_rc_size). */
static int buckets_of(const bk_config *cfg, unsigned bucket_size, uint64_t *out)
{
    return bk_rc_size(cfg->capacity, bucket_size, cfg->hash != BK_HASH_MURMUR, out);
}

static int bk_rbcuckoo_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out)
{
    bk_rbcuckoo_info in;
    bk_rbcuckoo *c;
    uint64_t buckets;
    int rc = params_of(cfg, &in);
    if (rc == BK_OK)
        rc = buckets_of(cfg, in.bucket_size, &buckets);
    if (rc == BK_OK)
        rc = bk_rc_new(a, buckets, in.bucket_size, in.max_iterations, in.expansion, cfg->max_bytes,
                       1, &c);
    return rc != BK_OK ? rc : make(cfg, a, c, 0, out);
}

/* Over sub-filters a file holds: whole buckets, and sub-filter 0 first of
 * RedisBloom's sizes (each later one's count is its own). The payloads are
 * taken only once nothing can fail. */
static int bk_rbcuckoo_adopt(const bk_config *cfg, const bk_allocator *a,
                             const bk_slice_view *slices, uint32_t n, int borrowed, bk_filter **out)
{
    bk_rbcuckoo_info in;
    int rc = params_of(cfg, &in);
    if (rc != BK_OK)
        return bk_fail(BK_ECORRUPT, "rbcuckoo: %s", bk_last_error());
    if (n == 0 || n > BK_RBCUCKOO_FILTERS_MAX)
        return bk_fail(BK_ECORRUPT, "rbcuckoo: %u sub-filters", n);
    for (uint32_t i = 0; i < n; i++)
        if (slices[i].k != 2 || slices[i].m % in.bucket_size != 0 || slices[i].gen < 0 ||
            (i > 0 && (slices[i].keys != 0 || slices[i].gen != 0)))
            return bk_fail(BK_ECORRUPT,
                           "rbcuckoo: sub-filter %u (%llu slots, k %u) is not whole buckets of "
                           "%u, or carries counts only sub-filter 0 keeps",
                           i, (unsigned long long)slices[i].m, slices[i].k, in.bucket_size);
    in.buckets = slices[0].m / in.bucket_size;
    in.items = slices[0].keys;
    in.deletes = (uint64_t)slices[0].gen;
    bk_rbcuckoo *c = bk_rc_empty(a, &in);
    if (!c)
        return bk_fail(BK_ENOMEM, "a cuckoo filter");
    for (uint32_t i = 0; i < n && rc == BK_OK; i++)
        rc = bk_rc_take(c, slices[i].m / in.bucket_size, slices[i].data, BK_OWN_NONE);
    if (rc != BK_OK) {
        bk_rbcuckoo_free(c); /* frees no payload: all taken as the mapping's */
        return rc;
    }
    if ((rc = make(cfg, a, c, 0, out)) == BK_OK && !borrowed)
        for (uint32_t i = 0; i < n; i++)
            c->subs[i].own = BK_OWN_PAYLOAD;
    return rc;
}

/* Sub-filter 0's figures, holding capacity keys (or as many as it has
 * slots). */
static int bk_rbcuckoo_plan(const bk_config *cfg, bk_plan *out)
{
    bk_rbcuckoo_info in;
    uint64_t buckets;
    int rc = params_of(cfg, &in);
    if (rc == BK_OK)
        rc = buckets_of(cfg, in.bucket_size, &buckets);
    if (rc != BK_OK)
        return rc;
    const uint64_t m = buckets * in.bucket_size;
    const double load = (double)cfg->capacity / (double)m;
    out->bits = m;
    out->bytes = m;
    out->k = 2;
    out->expected_fpr = rate_at(in.bucket_size, load < 1 ? load : 1);
    out->bits_per_key = 8.0 * (double)m / (double)cfg->capacity;
    return BK_OK;
}

/* A sub-filter's figures: its taken slots are its keys, and the rate is a
 * lookup's at that load. */
static void rcf_estimate(const bk_config *cfg, const bk_slice_view *v, uint64_t *steps,
                         bk_slice_estimate *out)
{
    (void)steps;
    const unsigned b = (unsigned)bk_config_count(cfg, "bucket_size");
    const double load = v->m ? (double)v->set_bits / (double)v->m : 1.0;
    out->keys = (double)v->set_bits;
    out->rate = rate_at(b, load);
    out->model = out->rate;
    out->sized = v->fpr;
}

static bk_cells rbcuckoo_cells(const bk_config *cfg)
{
    (void)cfg;
    const bk_cells c = {8, 0, 0}; /* one-byte fingerprints, 0 an empty slot */
    return c;
}

/* The registry's line: a chain of tables that grows (by RedisBloom's
 * expansion; a file holds up to its slice limit). */
/* The configuration keys it takes (src/core/config.c has what each means). */
static const bk_variant_key rbcuckoo_keys[] = {
    {"max_bytes", NULL, NULL},
    {"expansion", "1",
     "each sub-filter has this many times the last's buckets, rounded up to a power of two, 0 "
     "never grows"},
    {"bucket_size", NULL, NULL},
    {"iterations", NULL, NULL},
    {NULL, NULL, NULL},
};

/* hash=murmur: RedisBloom's one 64-bit hash. */
static bk_murmur_form murmur_form(const bk_config *cfg)
{
    (void)cfg;
    return BK_MURMUR_ONE64;
}

static const bk_chunked_ops rbcuckoo_chunked = {rcf_chunked_header, rcf_chunked_next,
                                                rcf_chunked_load, rcf_chunked_new};

const bk_variant_desc bk_rbcuckoo_desc = {
    BK_DESC_NAMED(RBCUCKOO, rbcuckoo, "rbcuckoo (RedisBloom's cuckoo filter, bit for bit)"),
    .murmur = murmur_form,
    .estimate = rcf_estimate,
    .max_slices = BK_SLICES_MAX,
    .own_words = 1,
    .host_grow = 1,
    .count = rcf_count,
    .compact = rcf_compact,
    .chunked = &rbcuckoo_chunked,
};

/* The filter of f into *c for a call reading it: BK_OK, BK_EINVAL (f or
 * out NULL), BK_ENOTSUP (f not of this variant). */
static int cuckoo_in(const bk_filter *f, const void *out, const char *what, bk_rbcuckoo **c)
{
    bk_call_begin();
    if (!f || !out)
        return bk_fail(BK_EINVAL, "%s: no filter or output", what);
    if (f->ops != &rbcuckoo_ops)
        return bk_fail(BK_ENOTSUP, "%s: a %s filter, not rbcuckoo", what,
                       bk_variant_name(f->cfg.variant));
    *c = cuckoo_of(f);
    return BK_OK;
}

int bk_rbcuckoo_info_of(const bk_filter *f, bk_rbcuckoo_info *out)
{
    bk_rbcuckoo *c = NULL;
    const int rc = cuckoo_in(f, out, "rbcuckoo_info_of", &c);
    if (rc == BK_OK)
        bk_rc_info(c, out);
    return rc;
}

int bk_rbcuckoo_slots(const bk_filter *f, uint32_t i, uint8_t **data, uint64_t *buckets)
{
    bk_rbcuckoo *c = NULL;
    const int rc = cuckoo_in(f, data && buckets ? data : NULL, "rbcuckoo_slots", &c);
    if (rc != BK_OK)
        return rc;
    return bk_rc_sub(c, i, data, buckets) == BK_OK
               ? BK_OK
               : bk_fail(BK_ERANGE, "rbcuckoo_slots: no sub-filter %u", i);
}

bk_rbcuckoo *bk_filter_rbcuckoo(bk_filter *f)
{
    return f && f->ops == &rbcuckoo_ops ? ((rcf_filter *)f)->c : NULL;
}

int bk_filter_of_rbcuckoo(bk_rbcuckoo *c, unsigned flags, bk_filter **out)
{
    bk_call_begin();
    if (!c || !out) {
        bk_rbcuckoo_free(c);
        return bk_fail(BK_EINVAL, "filter_of_rbcuckoo: no filter or output");
    }
    const char *const keys[] = {"bucket_size", "iterations", "expansion"};
    const uint64_t values[] = {c->bucket_size, c->max_iterations, c->expansion};
    const int file = (flags & BK_RB_FILE) != 0;
    if (file && c->filters > BK_SLICES_MAX) {
        const uint32_t n = c->filters;
        bk_rbcuckoo_free(c);
        return bk_fail(BK_ENOTSUP, "%u sub-filters, more than a bloomkit file holds (%u)", n,
                       (unsigned)BK_SLICES_MAX);
    }
    bk_config cfg;
    /* capacity: sub-filter 0's slots, which CF.RESERVE's sizing maps back to its buckets */
    int rc = bk_config_stated(&cfg, BK_VARIANT_RBCUCKOO, BK_HASH_MURMUR,
                              c->buckets * c->bucket_size, 0.01, keys, values, 3, file);
    if (rc != BK_OK) {
        bk_rbcuckoo_free(c);
        return rc;
    }
    const bk_allocator a = c->alloc;
    return make(&cfg, &a, c, !file, out);
}

int bk_filter_rbcuckoo_new(uint64_t capacity, unsigned bucket_size, unsigned max_iterations,
                           unsigned expansion, uint64_t max_bytes, bk_filter **out)
{
    bk_rbcuckoo *c;
    if (!out)
        return bk_fail(BK_EINVAL, "filter_rbcuckoo_new: no output");
    const int rc = bk_rbcuckoo_new(capacity, bucket_size, max_iterations, expansion, max_bytes, &c);
    return rc != BK_OK ? rc : bk_filter_of_rbcuckoo(c, 0, out);
}

int bk_filter_rbcuckoo_from(const bk_rbcuckoo_info *info, const uint64_t *counts, unsigned flags,
                            uint64_t max_bytes, bk_filter **out)
{
    bk_rbcuckoo *c;
    if (flags & ~(BK_RB_STRICT | BK_RB_FILE))
        return bk_fail(BK_EINVAL, "filter_rbcuckoo_from: unknown flags %#x", flags);
    const int rc = bk_rbcuckoo_from(info, counts, flags & BK_RB_STRICT, max_bytes, &c);
    return rc != BK_OK ? rc : bk_filter_of_rbcuckoo(c, flags & BK_RB_FILE, out);
}
