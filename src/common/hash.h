/*
 * hash.h - one digest per key, and the probes derived from it (internal).
 *
 * Every key is hashed exactly once into a 128-bit keyed SipHash digest (h1, h2).
 * A 64-bit probe value x is mapped to [0, m) by multiply-shift, (x * m) >> 64
 * (D. Lemire, "A fast alternative to the modulo reduction", 2016): it uses the
 * high bits of x, needs no division, and is exact for any m < 2^64, including
 * m > 2^32.
 *
 * Classic probes (BK_PROBES_LCG, every filter made since file format 2):
 * x_0 = h1, x_{i+1} = a x_i + (h2 | 1) mod 2^64 (MMIX's multiplier, the key's
 * own odd increment), probe i = reduce(x_i, m). Two keys share every probe
 * only when their 128-bit digests nearly agree, so the measured rate is the
 * model's fill^k at any m (measured: docs/history.md, "Probes").
 *
 * BK_PROBES_DH, kept for filters of file format 1 and Redis metadata format 2:
 * probe i = reduce(h1 + i*h2 + (i^3 - i)/6 mod 2^64) (enhanced double hashing,
 * Dillinger & Manolios, FMCAD 2004). Reduced by multiply-shift the cubic term
 * is lost in the low bits, so for small m it acts as plain double hashing:
 * keys whose h1, h2 agree in their top log2(m) bits collide on every probe,
 * and steps near m/j revisit few bits. At m = 1,600, k = 11 it measured 1.35x
 * the model's rate; it is never used for new filters.
 */
#ifndef BK_COMMON_HASH_H
#define BK_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "bloomkit.h"
#include "debug.h"
#include "siphash.h"

typedef struct bk_hash {
    uint64_t h1, h2;
} bk_hash;

/* A filter's 16-byte key as each hash takes it: SipHash's two words, and
 * XXH3's secret (XXH3_generateSecret of the key: the size XXH3 uses by
 * default), derived once when the filter is made. */
#define BK_XXH3_SECRET 192
typedef struct bk_hashkey {
    bk_sipkey sip;
    uint8_t secret[BK_XXH3_SECRET];
    uint8_t murmur; /* hash=murmur: the form (bk_murmur_form) its variant takes */
} bk_hashkey;

/* The forms of RedisBloom's unkeyed MurmurHash digest (hash=murmur): a
 * chain's pair of 64-bit hashes (MurmurHash64A under BK_MURMUR_CHAIN_SEED,
 * then under that), the oldest chains' pair of 32-bit ones (MurmurHash2
 * under BK_MURMUR2_CHAIN_SEED, then under that), or a cuckoo filter's one
 * 64-bit hash (seed 0; h2 = 0). Which one a filter takes, its variant says
 * (bk_variant_desc.murmur); every one is computed here, none by a variant. */
typedef enum { BK_MURMUR_PAIR64 = 0, BK_MURMUR_PAIR32 = 1, BK_MURMUR_ONE64 = 2 } bk_murmur_form;

/* Derive every form of the key (murmur: BK_MURMUR_PAIR64 until set). */
void bk_hashkey_init(bk_hashkey *k, const uint8_t key[16]);

/* The digest of msg[0..len) in MurmurHash form `form`. Thread-safe. */
void bk_hash_murmur(bk_murmur_form form, const void *msg, size_t len, bk_hash *out);

/* Hash msg[0..len) with the given algorithm and key. msg may be NULL if len is 0.
 * BK_HASH_MURMUR takes of the key only its form (bk_hash_murmur). */
void bk_hash_key(bk_hash_alg alg, const bk_hashkey *key, const void *msg, size_t len, bk_hash *out);
/* bk_hash_key of msgs[i], lens[i] into out[i] for i < n: SipHash several
 * keys per instruction where the CPU allows (siphash_many.c), the same
 * digests as one at a time. */
void bk_hash_keys(bk_hash_alg alg, const bk_hashkey *key, const void *const *msgs,
                  const size_t *lens, size_t n, bk_hash *out);

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

/*
 * The probe positions of one key in an array of m cells, for either layout.
 * Classic (block 0): as the scheme says (above).
 * Blocked (block B cells, a power of two, m a multiple of B): the key's block
 * is reduce(h1, m / B), and probe i is that block's first cell plus the top
 * log2(B) bits of x_i, where x_0 = h2 and x_{i+1} = a x_i + c (mod 2^64), the
 * MMIX linear congruential generator. Double hashing is no good inside a
 * block: its offsets there are (a + i b) mod B, which for a b sharing factors
 * with B cycle through few cells (b = 0 puts every probe on one bit), and we
 * measured 4.5x the model's rate with it. The generator's top bits are
 * uniform and independent enough that the Poisson model of sizing.c holds
 * (tests/test_blocked.c measures it).
 */
typedef struct bk_probes {
    uint64_t x, step; /* classic: probe state and step (LCG: increment); blocked: LCG state */
    uint64_t i;       /* BK_PROBES_DH: the probe number */
    uint64_t base;    /* first cell of the key's block; 0 for classic */
    uint64_t range;   /* m for classic */
    unsigned shift;   /* blocked: 64 - log2(B); 0 for classic */
    int dh;           /* classic with BK_PROBES_DH */
} bk_probes;

#define BK_LCG_MUL UINT64_C(6364136223846793005)
#define BK_LCG_ADD UINT64_C(1442695040888963407)

static inline unsigned bk_log2_u32(unsigned v)
{
    unsigned r = 0;
    while (v > 1) {
        v >>= 1;
        r++;
    }
    return r;
}

/* Probe derivations of the classic layout (the blocked one has one). */
#define BK_PROBES_LCG 0 /* current */
#define BK_PROBES_DH  1 /* format-1 files, Redis metadata format 2 */

static inline bk_probes bk_probes_for(const bk_hash *h, uint64_t m, unsigned block, unsigned scheme)
{
    bk_probes p;
    p.i = 0;
    p.dh = block == 0 && scheme == BK_PROBES_DH;
    if (block) {
        p.x = h->h2;
        p.step = 0;
        p.base = bk_reduce(h->h1, m / block) * block;
        p.range = block;
        p.shift = 64 - bk_log2_u32(block);
    } else {
        p.x = h->h1;
        p.step = scheme == BK_PROBES_DH ? h->h2 : h->h2 | 1;
        p.base = 0;
        p.range = m;
        p.shift = 0;
    }
    return p;
}

/* bk_probes_next of a classic p (shift 0) whose dh is the argument: a loop
 * over a key's probes that passes a constant has no branch per probe. */
static inline uint64_t bk_probes_next_classic(bk_probes *p, int dh)
{
    const uint64_t v = p->x;
    BK_ASSERT(p->range > 0 && p->shift == 0 && p->dh == dh);
    if (dh) {
        p->i++;
        p->x += p->step;
        p->step += p->i;
    } else {
        p->x = v * BK_LCG_MUL + p->step;
    }
    return bk_reduce(v, p->range);
}

static inline uint64_t bk_probes_next(bk_probes *p)
{
    const uint64_t v = p->x;
    BK_ASSERT(p->range > 0);
    if (p->shift) {
        p->x = v * BK_LCG_MUL + BK_LCG_ADD;
        return p->base + (v >> p->shift);
    }
    return bk_probes_next_classic(p, p->dh);
}

/* The next n probes of p into out[0..n): positions gathered before any is
 * loaded, so their cache misses overlap. */
static inline void bk_probes_take(bk_probes *p, uint64_t *out, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        out[i] = bk_probes_next(p);
}

#endif
