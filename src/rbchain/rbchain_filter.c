/*
 * rbchain_filter.c - RedisBloom's chain as a variant (rbchain): a filter holding a
 * bk_rbchain, so files, mappings, bk_stats, the command, Python and the
 * experiments reach it as they reach any variant.
 *
 * Slices are the links, oldest first: m their bits, k their hashes,
 * capacity their entries, fpr their (tightened) error, keys the items they
 * took, set_bits counted from the bits, gen the link's n2 (the modulus of a
 * power-of-two link; the file keeps it in the slice's generation word). The
 * payload is RedisBloom's bytes as they are (bit x at byte x / 8, mask
 * 1 << (x mod 8)). A link's bits per entry are RedisBloom's function of its
 * error, recomputed when a file is read.
 *
 * Hashing: under hash=murmur the filter's own hash is RedisBloom's pair as
 * the chain's options say (so data RedisBloom wrote answers as it did);
 * under a keyed hash the core's digest (h1, h2) is the pair, and the chain
 * hashes an item given to bloomkit_redisbloom.h's calls the same way.
 *
 * Concurrency: writers exclusive, lookups shared (the lock inside).
 * Growth is RedisBloom's; max_bytes bounds the links' bytes (BK_EFULL).
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t */

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/bits.h"
#include "../core/config.h"
#include "../core/filter_impl.h"
#include "../common/error.h"
#include "rbchain.h"

typedef struct rbc_filter {
    bk_filter base; /* first: an rbc_filter* is a bk_filter* */
    bk_rbchain *c;
    pthread_rwlock_t lock;
} rbc_filter;

_Static_assert(offsetof(rbc_filter, base) == 0, "bk_filter must be the first member");

static bk_rbchain *chain_of(const bk_filter *f)
{
    return ((const rbc_filter *)f)->c;
}

static rb_pair pair_of(const bk_hash *h)
{
    const rb_pair p = {h->h1, h->h2};
    return p;
}

static int add_unlocked(bk_filter *f, const bk_hash *h)
{
    bk_rbchain *c = chain_of(f);
    const rb_pair p = pair_of(h);
    const bk_rb_grow grow = {bk_max_bytes_check, f}; /* within max_bytes */
    return bk_rb_chain_add(c, &p, &grow);
}

static int contains_unlocked(const bk_filter *f, const bk_hash *h)
{
    const rb_pair p = pair_of(h);
    return bk_rb_chain_has(chain_of(f), &p);
}

static int clear_unlocked(bk_filter *f, const bk_hash *unused)
{
    (void)unused;
    bk_rbchain *c = chain_of(f);
    for (uint32_t i = 0; i < c->n; i++) {
        memset(c->links[i].data, 0, (size_t)c->links[i].bytes);
        c->links[i].size = 0;
    }
    c->size = 0;
    return BK_OK;
}

BK_WRITE_LOCKED(rbc_add, add_unlocked)
BK_READ_LOCKED(rbc_contains, contains_unlocked)
BK_CLEAR_LOCKED(rbc_clear, clear_unlocked)

static void rbc_destroy(bk_filter *f)
{
    rbc_filter *r = (rbc_filter *)f;
    const bk_allocator a = f->alloc;
    bk_rbchain_free(r->c);
    pthread_rwlock_destroy(&r->lock);
    bk_mem_free(&a, r);
}

static uint32_t rbc_slice_count(const bk_filter *f)
{
    return chain_of(f)->n;
}

static void rbc_defrag(bk_filter *f, uint32_t i, bk_move_fn move, void *arg)
{
    bk_rbchain *c = chain_of(f);
    bk_rbchain_link *l = &c->links[i];
    l->data = bk_own_move(&c->alloc, l->data, (size_t)l->bytes, c->own[i], move, arg);
}

static void rbc_slice_view(const bk_filter *f, uint32_t i, bk_slice_view *out)
{
    const bk_rbchain_link *l = &chain_of(f)->links[i];
    memset(out, 0, sizeof *out);
    out->m = l->bits;
    out->k = l->hashes;
    out->capacity = l->entries;
    out->fpr = l->error;
    out->set_bits = bk_popcount(l->data, (size_t)l->bytes);
    out->keys = l->size;
    out->data = l->data;
    out->nbytes = l->bytes;
    out->gen = l->n2;
}

/* The operations; remove, merge and intersect are NULL: links are bit
 * arrays, and RedisBloom combines no chains. */
/* clang-format off */
static const bk_filter_ops rbchain_ops = {
    BK_MEMORY_OPS, .add = rbc_add, .contains = rbc_contains, .clear = rbc_clear,
    .destroy = rbc_destroy, .slice_count = rbc_slice_count, .slice_view = rbc_slice_view,
    .defrag = rbc_defrag,
};
/* clang-format on */

/* The filter over chain c (taken: freed on error too): one that keeps
 * within a file (own 0: the variant's filters, growth stopping where a
 * file's slices do), or a RedisBloom value kept with its own limits. */
static int make(const bk_config *cfg, const bk_allocator *a, bk_rbchain *c, int own,
                bk_filter **out)
{
    rbc_filter *r;
    const int rc = bk_filter_new(sizeof *r, offsetof(rbc_filter, lock), &rbchain_ops, cfg, a, &r);
    if (rc != BK_OK) {
        bk_rbchain_free(c);
        return rc;
    }
    r->c = c;
    if (!own) {
        c->payloads = 1;
        c->max_links = BK_SLICES_MAX; /* what a file holds: growth stops there, saves never fail */
    }
    if (cfg->hash != BK_HASH_MURMUR) { /* keyed: the structure's calls take the filter's digest */
        c->hkey = &r->base.hkey;
        c->alg = cfg->hash;
    }
    *out = &r->base;
    return BK_OK;
}

static uint32_t options_of(const bk_config *cfg)
{
    return (uint32_t)bk_config_count(cfg, "chain_options");
}

/* Link 0 of a chain of cfg: BF.RESERVE's (its error halved unless
 * nonscaling). */
static int first_link(const bk_config *cfg, bk_rbchain_link *l)
{
    const uint32_t options = options_of(cfg);
    return bk_rb_link_size(l, cfg->capacity,
                           (options & BK_RBCHAIN_NO_SCALING) ? cfg->fpr : cfg->fpr * 0.5, options);
}

static int bk_rbchain_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out)
{
    const uint64_t growth = bk_config_count(cfg, "expansion");
    if (growth == 0)
        return bk_fail(BK_ECONFIG, "expansion: rbchain needs 1 or more (BF.RESERVE's EXPANSION)");
    bk_rbchain_link l;
    int rc = first_link(cfg, &l);
    if (rc != BK_OK)
        return rc;
    if (cfg->max_bytes && l.bytes > cfg->max_bytes)
        return bk_full_arrays(l.bytes, cfg->max_bytes);
    bk_rbchain *c = bk_rb_chain_empty(a, 0, options_of(cfg), (uint32_t)growth);
    if (!c)
        return bk_fail(BK_ENOMEM, "a chain");
    c->payloads = 1;
    if ((rc = bk_rb_chain_push(c, &l)) != BK_OK) {
        bk_rbchain_free(c);
        return rc;
    }
    return make(cfg, a, c, 0, out);
}

/* The link a slice view describes (data not set). */
static void link_of_view(const bk_slice_view *v, bk_rbchain_link *l)
{
    memset(l, 0, sizeof *l);
    l->entries = v->capacity;
    l->error = v->fpr;
    l->hashes = v->k;
    l->bpe = bk_rb_bpe(v->fpr);
    l->bits = v->m;
    l->bytes = v->nbytes;
    l->n2 = v->gen >= 0 && v->gen <= 64 ? (unsigned)v->gen : 64; /* 64: refused */
    l->size = v->keys;
}

/* Over links a file holds: each must pass RedisBloom's own check. The
 * payloads are taken only once nothing can fail. */
static int bk_rbchain_adopt(const bk_config *cfg, const bk_allocator *a,
                            const bk_slice_view *slices, uint32_t n, int borrowed, bk_filter **out)
{
    uint64_t size = 0;
    bk_rbchain_link l;
    for (uint32_t i = 0; i < n; i++) {
        link_of_view(&slices[i], &l);
        if (bk_rb_link_check(&l, i) != BK_OK)
            return bk_fail(BK_ECORRUPT, "rbchain: %s", bk_last_error());
        size += l.size;
    }
    bk_rbchain *c =
        bk_rb_chain_empty(a, size, options_of(cfg), (uint32_t)bk_config_count(cfg, "expansion"));
    if (!c)
        return bk_fail(BK_ENOMEM, "a chain");
    for (uint32_t i = 0; i < n; i++) {
        link_of_view(&slices[i], &l);
        if (bk_rb_chain_take(c, &l, slices[i].data, BK_OWN_NONE) != BK_OK) {
            bk_rbchain_free(c); /* frees no payload: all taken as the mapping's */
            return bk_fail(BK_ENOMEM, "a chain of %u links", n);
        }
    }
    const int rc = make(cfg, a, c, 0, out);
    if (rc == BK_OK && !borrowed)
        memset(c->own, BK_OWN_PAYLOAD, n);
    return rc;
}

/* Link 0's figures at its capacity. */
static int bk_rbchain_plan(const bk_config *cfg, bk_plan *out)
{
    bk_rbchain_link l;
    const int rc = first_link(cfg, &l);
    if (rc != BK_OK)
        return rc;
    out->bits = l.bits;
    out->bytes = l.bytes;
    out->k = l.hashes;
    out->expected_fpr = bk_rate_after(l.bits, l.hashes, l.entries);
    out->bits_per_key = 8.0 * (double)l.bytes / (double)(l.entries ? l.entries : 1);
    return BK_OK;
}

static bk_cells rbchain_cells(const bk_config *cfg)
{
    return bk_bloom_cells(cfg, 1, 0);
}

/* The registry's line: a Bloom chain that grows (RedisBloom's own links
 * bound it by memory, not by count; a file holds up to its slice limit). */
/* The configuration keys it takes (src/core/config.c has what each means). */
static const bk_variant_key rbchain_keys[] = {
    {"fpr", NULL, "RedisBloom's error rate"},
    {"max_bytes", NULL, NULL},
    {"expansion", NULL, "each link holds this many times the last (EXPANSION)"},
    {"chain_options", NULL, NULL},
    {NULL, NULL, NULL},
};

/* hash=murmur: RedisBloom's pair, of 64-bit hashes when the options say so
 * (FORCE64), else of 32-bit ones. */
static bk_murmur_form murmur_form(const bk_config *cfg)
{
    return bk_rb_murmur_form(options_of(cfg));
}

/* RedisBloom's chunked dump of the chain (rbchain_image.c). */
static size_t rbc_chunked_header(const bk_filter *f, void *buf, size_t cap)
{
    return bk_rbchain_header(chain_of(f), buf, cap);
}

static void rbc_chunked_next(const bk_filter *f, long long it, const uint8_t **data, size_t *len,
                             long long *next)
{
    bk_rbchain_chunk(chain_of(f), it, data, len, next);
}

static int rbc_chunked_load(bk_filter *f, long long it, const void *data, size_t len)
{
    return bk_rbchain_load_chunk(((rbc_filter *)f)->c, it, data, len);
}

static int rbc_chunked_new(const void *header, size_t len, unsigned flags, uint64_t max_bytes,
                           bk_filter **out)
{
    bk_rbchain *c;
    const int rc = bk_rbchain_header_read(header, len, max_bytes, &c);
    return rc != BK_OK ? rc : bk_filter_of_rbchain(c, flags, out);
}

static const bk_chunked_ops rbchain_chunked = {rbc_chunked_header, rbc_chunked_next,
                                               rbc_chunked_load, rbc_chunked_new};

const bk_variant_desc bk_rbchain_desc = {
    BK_DESC_NAMED(RBCHAIN, rbchain, "rbchain (RedisBloom's scalable chain, bit for bit)"),
    .murmur = murmur_form,
    .estimate = bk_bloom_estimate,
    .max_slices = BK_SLICES_MAX,
    .own_words = 1,
    .host_grow = 1,
    .chunked = &rbchain_chunked,
};

/* The chain of f into *c for a call reading it: BK_OK, BK_EINVAL (f or
 * out NULL), BK_ENOTSUP (f not of this variant). */
static int chain_in(const bk_filter *f, const void *out, const char *what, const bk_rbchain **c)
{
    bk_call_begin();
    if (!f || !out)
        return bk_fail(BK_EINVAL, "%s: no filter or output", what);
    if (f->ops != &rbchain_ops)
        return bk_fail(BK_ENOTSUP, "%s: a %s filter, not rbchain", what,
                       bk_variant_name(f->cfg.variant));
    *c = chain_of(f);
    return BK_OK;
}

int bk_rbchain_info_of(const bk_filter *f, bk_rbchain_info *out)
{
    const bk_rbchain *c = NULL;
    const int rc = chain_in(f, out, "rbchain_info_of", &c);
    if (rc == BK_OK)
        bk_rb_chain_info(c, out);
    return rc;
}

int bk_rbchain_link_of(const bk_filter *f, uint32_t i, bk_rbchain_link *out)
{
    const bk_rbchain *c = NULL;
    const int rc = chain_in(f, out, "rbchain_link_of", &c);
    if (rc != BK_OK)
        return rc;
    return bk_rb_chain_link(c, i, out) == BK_OK
               ? BK_OK
               : bk_fail(BK_ERANGE, "rbchain_link_of: no link %u", i);
}

bk_rbchain *bk_filter_rbchain(bk_filter *f)
{
    return f && f->ops == &rbchain_ops ? ((rbc_filter *)f)->c : NULL;
}

int bk_filter_of_rbchain(bk_rbchain *c, unsigned flags, bk_filter **out)
{
    bk_call_begin();
    if (!c || !out) {
        bk_rbchain_free(c);
        return bk_fail(BK_EINVAL, "filter_of_rbchain: no chain or output");
    }
    const bk_rbchain_link *l = &c->links[0];
    const double fpr = (c->options & BK_RBCHAIN_NO_SCALING) ? l->error : l->error * 2;
    const int file = (flags & BK_RB_FILE) != 0;
    const char *const keys[] = {"expansion", "chain_options"};
    /* a value RedisBloom loaded may carry option bits no configuration
     * states: kept in the chain; the filter's hash reads only FORCE64 */
    const uint64_t values[] = {c->growth, file ? c->options : c->options & BK_RBCHAIN_OPTIONS};
    if (file && c->n > BK_SLICES_MAX) {
        const uint32_t n = c->n;
        bk_rbchain_free(c);
        return bk_fail(BK_ENOTSUP, "%u links, more than a bloomkit file holds (%u)", n,
                       (unsigned)BK_SLICES_MAX);
    }
    bk_config cfg;
    int rc = bk_config_stated(&cfg, BK_VARIANT_RBCHAIN, BK_HASH_MURMUR, l->entries, fpr, keys,
                              values, 2, file);
    if (rc != BK_OK) {
        bk_rbchain_free(c);
        return rc;
    }
    const bk_allocator a = c->alloc;
    return make(&cfg, &a, c, !file, out);
}

int bk_filter_rbchain_new(uint64_t capacity, double error, uint32_t growth, int nonscaling,
                          uint64_t max_bytes, bk_filter **out)
{
    bk_rbchain *c;
    if (!out)
        return bk_fail(BK_EINVAL, "filter_rbchain_new: no output");
    const int rc = bk_rbchain_new(capacity, error, growth, nonscaling, max_bytes, &c);
    return rc != BK_OK ? rc : bk_filter_of_rbchain(c, 0, out);
}

int bk_filter_rbchain_from(const bk_rbchain_info *info, const bk_rbchain_link *links, uint32_t n,
                           unsigned flags, uint64_t max_bytes, bk_filter **out)
{
    bk_rbchain *c;
    if (flags & ~(BK_RB_STRICT | BK_RB_FILE))
        return bk_fail(BK_EINVAL, "filter_rbchain_from: unknown flags %#x", flags);
    const int rc = bk_rbchain_from(info, links, n, flags & BK_RB_STRICT, max_bytes, &c);
    return rc != BK_OK ? rc : bk_filter_of_rbchain(c, flags & BK_RB_FILE, out);
}
