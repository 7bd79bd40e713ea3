/*
 * hash.h - one digest per key, and the probes derived from it (internal).
 *
 * Every key is hashed exactly once into a 128-bit keyed SipHash digest (h1, h2).
 * Probe i is h1 + i*h2 + (i^3 - i)/6 (mod 2^64): enhanced double hashing,
 * P. C. Dillinger and P. Manolios, "Bloom Filters in Probabilistic
 * Verification" (FMCAD 2004), which avoids the probe collisions of plain double
 * hashing when h2 is a multiple of a factor of m. The cubic term is kept
 * incrementally: x += y; y += i.
 *
 * A 64-bit probe value x is mapped to [0, m) by multiply-shift, (x * m) >> 64
 * (D. Lemire, "A fast alternative to the modulo reduction", 2016): it uses the
 * high bits of x, needs no division, and is exact for any m < 2^64, including
 * m > 2^32.
 */
#ifndef BK_COMMON_HASH_H
#define BK_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "bloomkit.h"
#include "siphash.h"

typedef struct bk_hash {
    uint64_t h1, h2;
} bk_hash;

/* Hash msg[0..len) with the given algorithm and key. msg may be NULL if len is 0. */
void bk_hash_key(bk_hash_alg alg, const bk_sipkey *key, const void *msg, size_t len, bk_hash *out);

/* High 64 bits of the 128-bit product a*b. */
static inline uint64_t bk_mulhi64(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
    __extension__ typedef unsigned __int128 bk_u128;
    return (uint64_t)(((bk_u128)a * b) >> 64);
#else
    const uint64_t a_lo = (uint32_t)a, a_hi = a >> 32, b_lo = (uint32_t)b, b_hi = b >> 32;
    const uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi;
    const uint64_t cross = (lo_lo >> 32) + (uint32_t)hi_lo + lo_hi;
    return a_hi * b_hi + (hi_lo >> 32) + (cross >> 32);
#endif
}

/* Map a uniform 64-bit value to [0, m). Requires m > 0. */
static inline uint64_t bk_reduce(uint64_t x, uint64_t m)
{
    return bk_mulhi64(x, m);
}

/* Iterator over the probes of one digest. */
typedef struct bk_probe_iter {
    uint64_t x, y, i;
} bk_probe_iter;

static inline bk_probe_iter bk_probes_begin(const bk_hash *h)
{
    bk_probe_iter it = {h->h1, h->h2, 0};
    return it;
}

/* The next probe's raw 64-bit value: h1 + i*h2 + (i^3 - i)/6 for i = 0, 1, ... */
static inline uint64_t bk_probe_next_raw(bk_probe_iter *it)
{
    const uint64_t v = it->x;
    it->i++;
    it->x += it->y;
    it->y += it->i;
    return v;
}

/* The next probe position in [0, m). */
static inline uint64_t bk_probe_next(bk_probe_iter *it, uint64_t m)
{
    return bk_reduce(bk_probe_next_raw(it), m);
}

/*
 * The probe positions of one key in an array of m cells, for either layout.
 * Classic (block 0): probe i is reduce(h1 + i h2 + (i^3 - i)/6, m).
 * Blocked (block B cells, m a multiple of B): the key's block is
 * reduce(h1, m / B), and probe i is that block's first cell plus
 * reduce(x_i, B), the top log2(B) bits of an enhanced-double-hashing sequence
 * seeded with h2 and a remix of h1 (so the offsets do not repeat the block
 * choice's bits). Both are base + reduce(x_i, range): one code path.
 */
typedef struct bk_probes {
    bk_probe_iter it;
    uint64_t base;  /* first cell of the key's block; 0 for classic */
    uint64_t range; /* m for classic, B for blocked */
} bk_probes;

static inline bk_probes bk_probes_for(const bk_hash *h, uint64_t m, unsigned block)
{
    bk_probes p;
    if (block) {
        const bk_hash seed = {h->h2, h->h1 * UINT64_C(0x9e3779b97f4a7c15)};
        p.it = bk_probes_begin(&seed);
        p.base = bk_reduce(h->h1, m / block) * block;
        p.range = block;
    } else {
        p.it = bk_probes_begin(h);
        p.base = 0;
        p.range = m;
    }
    return p;
}

static inline uint64_t bk_probes_next(bk_probes *p)
{
    return p->base + bk_reduce(bk_probe_next_raw(&p->it), p->range);
}

#endif
