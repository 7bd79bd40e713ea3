/*
 * standard.c - the classic Bloom filter: an m-bit array and k probes per key.
 *
 * Layout: bit i lives in byte i/8 under mask 0x80 >> (i % 8) (Redis's bit
 * order, see common/bits.h). Invariants: a bit once set is never cleared except
 * by clear(); set_bits equals the population count of the array, because a bit
 * is counted only by the thread whose atomic OR turned it from 0 to 1.
 *
 * Concurrency: add ORs bits in with relaxed atomics, after a plain relaxed load
 * shows the bit clear (so re-adding a present key costs no locked instruction);
 * contains only loads. A key whose add has returned is visible to every later
 * contains in any thread that synchronises with the adder; concurrent add and
 * contains of the same key may see it either way, as with any set.
 *
 * Cost: add and contains are O(k) probes, one cache miss each in a large array.
 * contains stops at the first clear bit, so absent keys cost ~2 probes on average.
 */
#include "standard.h"

#include <string.h>

#include "../common/alloc.h"
#include "../common/bits.h"
#include "../common/sizing.h"

int bk_std_slice_init(bk_std_slice *s, uint64_t capacity, double fpr, const bk_allocator *a)
{
    uint64_t m;
    unsigned k;
    const int rc = bk_size_for(capacity, fpr, &m, &k);
    if (rc != BK_OK)
        return rc;
    const uint64_t nbytes = bk_bits_to_bytes(m);
    if (nbytes > SIZE_MAX)
        return BK_ERANGE;
    _Atomic uint8_t *bits = bk_payload_alloc(a, (size_t)nbytes);
    if (!bits)
        return BK_ENOMEM;
    s->m = m;
    s->k = k;
    s->capacity = capacity;
    s->fpr = fpr;
    s->nbytes = nbytes;
    s->bits = bits;
    atomic_init(&s->set_bits, 0);
    atomic_init(&s->keys, 0);
    s->borrowed = 0;
    return BK_OK;
}

void bk_std_slice_adopt(bk_std_slice *s, const bk_slice_view *v, int borrowed)
{
    s->m = v->m;
    s->k = v->k;
    s->capacity = v->capacity;
    s->fpr = v->fpr;
    s->nbytes = v->nbytes;
    s->bits = (_Atomic uint8_t *)v->data;
    atomic_init(&s->set_bits, v->set_bits);
    atomic_init(&s->keys, v->keys);
    s->borrowed = borrowed;
}

void bk_std_slice_view(const bk_std_slice *s, bk_slice_view *out)
{
    out->m = s->m;
    out->k = s->k;
    out->capacity = s->capacity;
    out->fpr = s->fpr;
    out->set_bits = atomic_load_explicit(&s->set_bits, memory_order_relaxed);
    out->keys = atomic_load_explicit(&s->keys, memory_order_relaxed);
    out->saturated = 0;
    out->data = (uint8_t *)s->bits;
    out->nbytes = s->nbytes;
}

int bk_std_slice_same_shape(const bk_std_slice *a, const bk_std_slice *b)
{
    return a->m == b->m && a->k == b->k;
}

int bk_std_slice_combine(bk_std_slice *dst, const bk_std_slice *src, int op)
{
    if (!bk_std_slice_same_shape(dst, src))
        return BK_EINCOMPAT;
    const uint64_t set =
        bk_bits_combine((uint8_t *)dst->bits, (const uint8_t *)src->bits, (size_t)dst->nbytes, op);
    atomic_store(&dst->set_bits, set);
    const uint64_t dk = atomic_load(&dst->keys), sk = atomic_load(&src->keys);
    /* keys: adds reported new on either side (union), or at most the smaller
     * side (intersection): the figures bk_stats documents. */
    atomic_store(&dst->keys, op == BK_BITS_OR ? dk + sk : (dk < sk ? dk : sk));
    return BK_OK;
}

void bk_std_slice_release(bk_std_slice *s, const bk_allocator *a)
{
    if (!s->borrowed)
        bk_payload_free(a, (void *)s->bits, (size_t)s->nbytes);
    s->bits = NULL;
}

/* Probes handled per round of add: positions are computed and their bytes
 * loaded together (independent loads, so their cache misses overlap), and
 * only then are the clear bits set with atomic OR. A locked RMW waits for its
 * cache line, so interleaving load and OR per probe would pay every miss in
 * turn. 32 covers every k of a rate down to 2^-32 in one round. */
#define BK_STD_PROBE_BATCH 32

int bk_std_slice_add(bk_std_slice *s, const bk_hash *h)
{
    bk_probe_iter it = bk_probes_begin(h);
    uint64_t changed = 0;
    for (unsigned done = 0; done < s->k; done += BK_STD_PROBE_BATCH) {
        const unsigned n = s->k - done < BK_STD_PROBE_BATCH ? s->k - done : BK_STD_PROBE_BATCH;
        uint64_t byte_at[BK_STD_PROBE_BATCH];
        uint8_t mask[BK_STD_PROBE_BATCH], seen[BK_STD_PROBE_BATCH];
        for (unsigned i = 0; i < n; i++) {
            const uint64_t bit = bk_probe_next(&it, s->m);
            byte_at[i] = bk_bit_byte(bit);
            mask[i] = bk_bit_mask(bit);
        }
        for (unsigned i = 0; i < n; i++)
            seen[i] = atomic_load_explicit(&s->bits[byte_at[i]], memory_order_relaxed);
        for (unsigned i = 0; i < n; i++) {
            if (seen[i] & mask[i])
                continue; /* already set: no locked instruction */
            const uint8_t old =
                atomic_fetch_or_explicit(&s->bits[byte_at[i]], mask[i], memory_order_relaxed);
            changed += !(old & mask[i]);
        }
    }
    if (changed == 0)
        return 0;
    atomic_fetch_add_explicit(&s->set_bits, changed, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->keys, 1, memory_order_relaxed);
    return 1;
}

void bk_std_slice_prefetch(const bk_std_slice *s, const bk_hash *h)
{
    bk_probe_iter it = bk_probes_begin(h);
    for (unsigned i = 0; i < s->k; i++)
        __builtin_prefetch((const void *)&s->bits[bk_bit_byte(bk_probe_next(&it, s->m))], 1, 0);
}

int bk_std_slice_contains(const bk_std_slice *s, const bk_hash *h)
{
    bk_probe_iter it = bk_probes_begin(h);
    for (unsigned i = 0; i < s->k; i++) {
        const uint64_t bit = bk_probe_next(&it, s->m);
        if (!(atomic_load_explicit(&s->bits[bk_bit_byte(bit)], memory_order_relaxed) &
              bk_bit_mask(bit)))
            return 0;
    }
    return 1;
}

void bk_std_slice_clear(bk_std_slice *s)
{
    memset((void *)s->bits, 0, (size_t)s->nbytes);
    atomic_store(&s->set_bits, 0);
    atomic_store(&s->keys, 0);
}

double bk_std_slice_fill(const bk_std_slice *s)
{
    return (double)atomic_load_explicit(&s->set_bits, memory_order_relaxed) / (double)s->m;
}

/* --- the standard variant: one slice behind the vtable ------------------- */

typedef struct bk_standard {
    bk_filter base; /* first: a bk_standard* is a bk_filter* */
    bk_std_slice slice;
} bk_standard;

_Static_assert(offsetof(bk_standard, base) == 0, "bk_filter must be the first member");

static int std_add(bk_filter *f, const bk_hash *h)
{
    return bk_std_slice_add(&((bk_standard *)f)->slice, h);
}

static int std_contains(const bk_filter *f, const bk_hash *h)
{
    return bk_std_slice_contains(&((const bk_standard *)f)->slice, h);
}

static void std_clear(bk_filter *f)
{
    bk_std_slice_clear(&((bk_standard *)f)->slice);
}

static void std_destroy(bk_filter *f)
{
    bk_standard *sf = (bk_standard *)f;
    const bk_allocator a = f->alloc;
    bk_std_slice_release(&sf->slice, &a);
    bk_mem_free(&a, sf);
}

static uint32_t std_slice_count(const bk_filter *f)
{
    (void)f;
    return 1;
}

static void std_slice_view(const bk_filter *f, uint32_t i, bk_slice_view *out)
{
    (void)i;
    bk_std_slice_view(&((const bk_standard *)f)->slice, out);
}

static void std_prefetch(const bk_filter *f, const bk_hash *h)
{
    bk_std_slice_prefetch(&((const bk_standard *)f)->slice, h);
}

static int std_merge(bk_filter *dst, const bk_filter *src)
{
    return bk_std_slice_combine(&((bk_standard *)dst)->slice, &((const bk_standard *)src)->slice,
                                BK_BITS_OR);
}

static int std_intersect(bk_filter *dst, const bk_filter *src)
{
    return bk_std_slice_combine(&((bk_standard *)dst)->slice, &((const bk_standard *)src)->slice,
                                BK_BITS_AND);
}

static const bk_filter_ops standard_ops = {
    .version = BK_FILTER_OPS_VERSION,
    .name = "standard",
    .add = std_add,
    .contains = std_contains,
    .remove = NULL, /* a bit array cannot forget a key */
    .clear = std_clear,
    .destroy = std_destroy,
    .slice_count = std_slice_count,
    .slice_view = std_slice_view,
    .merge = std_merge,
    .intersect = std_intersect,
    .prefetch = std_prefetch,
};

int bk_standard_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out)
{
    bk_standard *sf = bk_mem_alloc(a, sizeof *sf);
    if (!sf)
        return BK_ENOMEM;
    const int rc = bk_std_slice_init(&sf->slice, cfg->capacity, cfg->fpr, a);
    if (rc != BK_OK) {
        bk_mem_free(a, sf);
        return rc;
    }
    bk_filter_base_init(&sf->base, &standard_ops, cfg, a);
    *out = &sf->base;
    return BK_OK;
}

int bk_standard_adopt(const bk_config *cfg, const bk_allocator *a, const bk_slice_view *slices,
                      uint32_t n, int borrowed, bk_filter **out)
{
    if (n != 1)
        return BK_EINVAL;
    bk_standard *sf = bk_mem_alloc(a, sizeof *sf);
    if (!sf)
        return BK_ENOMEM;
    bk_std_slice_adopt(&sf->slice, &slices[0], borrowed);
    bk_filter_base_init(&sf->base, &standard_ops, cfg, a);
    *out = &sf->base;
    return BK_OK;
}
