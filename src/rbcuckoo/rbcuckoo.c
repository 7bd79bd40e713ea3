/*
 * rbcuckoo.c - RedisBloom's cuckoo filter: its sizing (FORMATS.md 4.1),
 * making one (CF.RESERVE, or from stored fields), its figures, freeing it.
 * Sub-filter i has buckets * expansion^i buckets of bucket_size one-byte
 * fingerprints; the requested capacity is not kept.
 */
#include "rbcuckoo.h"

#include <math.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/error.h"

rc_key bk_rc_key_of(const bk_rbcuckoo *c, const void *item, size_t len)
{
    bk_hash h;
    if (c->hkey) /* a filter's: its digest */
        bk_hash_key(c->alg, c->hkey, item, len, &h);
    else /* RedisBloom's own value: its one hash */
        bk_hash_murmur(BK_MURMUR_ONE64, item, len, &h);
    return bk_rc_key(h.h1);
}

rc_key bk_rc_key(uint64_t h)
{
    rc_key k;
    k.fp = (unsigned)(h % 255 + 1);
    k.i1 = h;
    k.i2 = h ^ (k.fp * RC_MUL);
    return k;
}

static uint64_t next_pow2(uint64_t v)
{
    if (v == 0)
        return 0;
    uint64_t p = 1;
    while (p < v && p <= UINT64_MAX / 2)
        p <<= 1;
    return p < v ? 0 : p;
}

uint64_t bk_rc_buckets_for(uint64_t capacity, unsigned bucket_size)
{
    uint64_t buckets = next_pow2(capacity / bucket_size);
    if (buckets == 0 && capacity / bucket_size == 0)
        buckets = 1;
    return buckets > BK_RBCUCKOO_BUCKETS_MAX ? 0 : buckets;
}

/* The load (items / slots) under which a keyed filter's walk (insert.c)
 * placed every item in all of thousands of runs a bucket size, with 8-bit
 * fingerprints, power-of-two bucket counts of 512 and up and 500 kicks:
 * measured failure loads were 0.85-0.89 for 2 slots, 0.95-0.97 for 4;
 * one slot a bucket fails now and then at any load (docs/design.md). */
static double held_load(unsigned bucket_size)
{
    static const double load[] = {0, 0.25, 0.80, 0.90, 0.93};
    return bucket_size < sizeof load / sizeof *load ? load[bucket_size] : 0.95;
}

uint64_t bk_rc_buckets_holding(uint64_t capacity, unsigned bucket_size)
{
    /* at 256 buckets or fewer, fingerprints with fp * RC_MUL = 0 mod n
     * have one bucket, not two: 512 at least */
    const double want = ceil((double)capacity / ((double)bucket_size * held_load(bucket_size)));
    if (!(want <= (double)BK_RBCUCKOO_BUCKETS_MAX))
        return 0;
    const uint64_t buckets = next_pow2((uint64_t)want);
    return buckets < RC_MIN_HELD ? RC_MIN_HELD : buckets > BK_RBCUCKOO_BUCKETS_MAX ? 0 : buckets;
}

int bk_rc_size(uint64_t capacity, unsigned bucket_size, int hold, uint64_t *out)
{
    if (bucket_size < 1)
        return bk_fail(BK_EINVAL, "a cuckoo filter of bucket size 0");
    *out = hold ? bk_rc_buckets_holding(capacity, bucket_size)
                : bk_rc_buckets_for(capacity, bucket_size);
    return *out ? BK_OK
                : bk_fail(BK_ERANGE, "a cuckoo filter of capacity %llu",
                          (unsigned long long)capacity);
}

int bk_rc_buckets_at(uint64_t buckets, unsigned expansion, uint32_t i, uint64_t *out)
{
    const double n = (double)buckets * pow((double)expansion, (double)i);
    if (!(n >= 1) || n > (double)BK_RBCUCKOO_BUCKETS_MAX)
        return bk_fail(BK_ERANGE, "sub-filter %u would have %g buckets", i, n);
    *out = (uint64_t)n;
    return BK_OK;
}

int bk_rc_push(bk_rbcuckoo *c, uint64_t n)
{
    if (n > SIZE_MAX / 2 / c->bucket_size)
        return bk_fail(BK_ENOMEM, "a sub-filter of %llu buckets", (unsigned long long)n);
    const size_t bytes = (size_t)n * c->bucket_size;
    const int own = c->payloads ? BK_OWN_PAYLOAD : BK_OWN_MEM;
    uint8_t *slots = own == BK_OWN_PAYLOAD ? bk_payload_alloc(&c->alloc, bytes)
                                           : bk_mem_zeroed(&c->alloc, 1, bytes);
    if (!slots) /* alloc.h: neither aborts */
        return bk_fail(BK_ENOMEM, "a sub-filter of %llu buckets", (unsigned long long)n);
    const int rc = bk_rc_take(c, n, slots, own);
    if (rc != BK_OK)
        bk_own_free(&c->alloc, slots, bytes, own);
    return rc;
}

int bk_rc_take(bk_rbcuckoo *c, uint64_t n, uint8_t *slots, int own)
{
    if (c->filters == c->cap) {
        const uint32_t cap = c->cap ? c->cap * 2 : 4;
        rc_sub *subs = bk_mem_zeroed(&c->alloc, cap, sizeof *subs);
        if (!subs)
            return bk_fail(BK_ENOMEM, "room for %u sub-filters", cap);
        if (c->filters)
            memcpy(subs, c->subs, c->filters * sizeof *subs);
        bk_mem_free(&c->alloc, c->subs);
        c->subs = subs;
        c->cap = cap;
    }
    c->subs[c->filters].n = n;
    c->subs[c->filters].slots = slots;
    c->subs[c->filters].own = own;
    c->filters++;
    return BK_OK;
}

void bk_rc_pop(bk_rbcuckoo *c)
{
    c->filters--;
    const rc_sub *s = &c->subs[c->filters];
    bk_own_free(&c->alloc, s->slots, (size_t)(s->n * c->bucket_size), s->own);
    c->subs[c->filters].slots = NULL;
}

void bk_rbcuckoo_free(bk_rbcuckoo *c)
{
    if (!c)
        return;
    while (c->filters)
        bk_rc_pop(c);
    bk_mem_free(&c->alloc, c->subs);
    bk_mem_free(&c->alloc, c);
}

/* What CF.LOADCHUNK's header check refuses, beyond what every load does. */
static int strict_check(const bk_rbcuckoo_info *in)
{
    if (in->bucket_size > 255)
        return bk_fail(BK_EINVAL, "a bucket size of %u (1 .. 255)", in->bucket_size);
    if (in->buckets & (in->buckets - 1))
        return bk_fail(BK_EINVAL, "%llu buckets: not a power of two",
                       (unsigned long long)in->buckets);
    if (in->max_iterations == 0)
        return bk_fail(BK_EINVAL, "0 iterations");
    if (in->expansion == 0 && in->filters > 1)
        return bk_fail(BK_EINVAL, "%u sub-filters with expansion 0", in->filters);
    return BK_OK;
}

/* The sub-filters' bytes: BK_OK, or an error of bk_rc_buckets_at /
 * BK_EINVAL for a count of 0 or past the most, or (strict) one that is not
 * buckets * expansion^i: the size CF.LOADCHUNK's header gives it, so that
 * a value a loader takes is one an AOF rewrite's chunks carry whole. */
static int total_bytes(const bk_rbcuckoo_info *in, const uint64_t *counts, int strict,
                       uint64_t *out)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < in->filters; i++) {
        uint64_t n = counts ? counts[i] : 0, want = 0;
        if ((!counts || strict) && bk_rc_buckets_at(in->buckets, in->expansion, i, &want) != BK_OK)
            return BK_EINVAL;
        if (!counts)
            n = want;
        else if (n == 0 || n > BK_RBCUCKOO_BUCKETS_MAX || (strict && n != want))
            return bk_fail(BK_EINVAL, "sub-filter %u of %llu buckets", i, (unsigned long long)n);
        const uint64_t b = n * in->bucket_size; /* < 2^56 * 2^16 */
        sum = b > UINT64_MAX - sum ? UINT64_MAX : sum + b;
    }
    *out = sum;
    return BK_OK;
}

bk_rbcuckoo *bk_rc_empty(const bk_allocator *a, const bk_rbcuckoo_info *in)
{
    bk_rbcuckoo *c = bk_mem_zeroed(a, 1, sizeof *c);
    if (!c)
        return NULL;
    c->alloc = *a;
    c->buckets = in->buckets;
    c->items = in->items;
    c->deletes = in->deletes;
    c->bucket_size = in->bucket_size;
    c->max_iterations = in->max_iterations;
    c->expansion = in->expansion;
    return c;
}

int bk_rbcuckoo_from(const bk_rbcuckoo_info *in, const uint64_t *counts, unsigned flags,
                     uint64_t max_bytes, bk_rbcuckoo **out)
{
    bk_call_begin();
    if (!in || !out)
        return bk_fail(BK_EINVAL, "rbcuckoo_from: no fields or output");
    const bk_allocator a = bk_current_allocator();
    return bk_rc_from(&a, in, counts, flags, max_bytes, 0, out);
}

int bk_rc_from(const bk_allocator *a, const bk_rbcuckoo_info *in, const uint64_t *counts,
               unsigned flags, uint64_t max_bytes, int payloads, bk_rbcuckoo **out)
{
    if (in->filters == 0 || in->filters > BK_RBCUCKOO_FILTERS_MAX || in->buckets == 0 ||
        in->buckets > BK_RBCUCKOO_BUCKETS_MAX || in->bucket_size == 0)
        return bk_fail(BK_EINVAL, "%u sub-filters of %llu buckets of %u slots", in->filters,
                       (unsigned long long)in->buckets, in->bucket_size);
    int rc = (flags & BK_RB_STRICT) ? strict_check(in) : BK_OK;
    uint64_t bytes = 0;
    if (rc == BK_OK)
        rc = total_bytes(in, counts, (flags & BK_RB_STRICT) != 0, &bytes);
    if (rc != BK_OK)
        return rc;
    if (max_bytes && bytes > max_bytes)
        return bk_full_arrays(bytes, max_bytes);
    bk_rbcuckoo *c = bk_rc_empty(a, in);
    if (!c)
        return bk_fail(BK_ENOMEM, "a cuckoo filter");
    c->payloads = payloads;
    for (uint32_t i = 0; i < in->filters && rc == BK_OK; i++) {
        uint64_t n = counts ? counts[i] : 0;
        if (!counts)
            rc = bk_rc_buckets_at(in->buckets, in->expansion, i, &n);
        else if (n == 0 || n > BK_RBCUCKOO_BUCKETS_MAX)
            rc = bk_fail(BK_EINVAL, "sub-filter %u of %llu buckets", i, (unsigned long long)n);
        if (rc == BK_OK)
            rc = bk_rc_push(c, n);
        else if (rc == BK_ERANGE)
            rc = BK_EINVAL;
    }
    if (rc != BK_OK) {
        bk_rbcuckoo_free(c);
        return rc;
    }
    *out = c;
    return BK_OK;
}

int bk_rbcuckoo_new(uint64_t capacity, unsigned bucket_size, unsigned max_iterations,
                    unsigned expansion, uint64_t max_bytes, bk_rbcuckoo **out)
{
    bk_call_begin();
    const bk_allocator a = bk_current_allocator();
    uint64_t buckets;
    const int rc = bk_rc_size(capacity, bucket_size, 0, &buckets);
    return rc != BK_OK
               ? rc
               : bk_rc_new(&a, buckets, bucket_size, max_iterations, expansion, max_bytes, 0, out);
}

int bk_rc_new(const bk_allocator *a, uint64_t buckets, unsigned bucket_size,
              unsigned max_iterations, unsigned expansion, uint64_t max_bytes, int payloads,
              bk_rbcuckoo **out)
{
    if (!out || bucket_size < 1 || bucket_size > 255 || max_iterations < 1 ||
        max_iterations > 65535 || expansion > 32768)
        return bk_fail(BK_EINVAL, "a cuckoo filter of bucket size %u, %u iterations, expansion %u",
                       bucket_size, max_iterations, expansion);
    const bk_rbcuckoo_info in = {.buckets = buckets,
                                 .filters = 1,
                                 .bucket_size = bucket_size,
                                 .max_iterations = max_iterations,
                                 .expansion = (unsigned)next_pow2(expansion)};
    const int rc = bk_rc_from(a, &in, NULL, 0, max_bytes, payloads, out);
    return rc == BK_EINVAL ? BK_ERANGE : rc;
}

void bk_rc_info(const bk_rbcuckoo *c, bk_rbcuckoo_info *out)
{
    memset(out, 0, sizeof *out);
    out->buckets = c->buckets;
    out->items = c->items;
    out->deletes = c->deletes;
    out->filters = c->filters;
    out->bucket_size = c->bucket_size;
    out->max_iterations = c->max_iterations;
    out->expansion = c->expansion;
    for (uint32_t i = 0; i < c->filters; i++)
        out->bytes += c->subs[i].n * c->bucket_size;
}

int bk_rc_sub(const bk_rbcuckoo *c, uint32_t i, uint8_t **data, uint64_t *buckets)
{
    if (!c || i >= c->filters)
        return BK_ERANGE;
    *data = c->subs[i].slots;
    *buckets = c->subs[i].n;
    return BK_OK;
}
