/*
 * table.h - a cuckoo filter's table (internal to src/cuckoo): its shape,
 * chosen from the configuration (table.c), and how a key's fingerprint and
 * buckets come from its digest, and where a fingerprint sits in the
 * payload.
 *
 * The table is N buckets of b fingerprints of f bits, packed most
 * significant bit first (as Redis's BITFIELD uN reads them) in bucket
 * order; in the blocked layout each 64-byte line holds whole buckets (as
 * many as fit) and zero padding, so no bucket straddles two lines. A zero
 * fingerprint is an empty slot: fingerprints are 1 .. 2^f - 1.
 */
#ifndef BK_CUCKOO_TABLE_H
#define BK_CUCKOO_TABLE_H

#include <stdint.h>
#include <string.h>

#include "../core/filter_impl.h"

#define CK_FINGERPRINT_MAX 32
#define CK_BUCKET_MAX      8

/* A table's shape. */
typedef struct ck_shape {
    unsigned f;        /* bits of a fingerprint */
    unsigned b;        /* fingerprints per bucket */
    uint64_t buckets;  /* N */
    unsigned per_line; /* blocked: buckets per 64-byte line; 0: classic (packed) */
} ck_shape;

/* cfg's shape (cfg resolved, valid): f and b from its keys, N from the
 * capacity and the load a table of b-slot buckets reaches. BK_OK or
 * BK_ERANGE (more cells than BK_BITS_MAX; detail set). */
int ck_shape_of(const bk_config *cfg, ck_shape *out);

/* Choose what cfg leaves to the filter: bucket (0) and fingerprint (0), the
 * shape of the fewest bits per key whose rate at capacity is at most fpr.
 * BK_OK or BK_ECONFIG (no fingerprint of at most 32 bits reaches fpr;
 * detail set). */
int ck_resolve(bk_config *cfg);

/* The rate of a lookup when the table holds on average `load` fingerprints
 * per bucket: each fingerprint in the key's two buckets matches with
 * chance 1 / (2^f - 1) (Fan et al. 2014, section 4). */
double ck_rate(unsigned f, double load);

/* The payload's cells: m = N b fingerprints of f bits, in lines of
 * per_line * b when blocked. */
bk_cells ck_cells(const ck_shape *s);

/* Bytes of the payload: whole lines when blocked, else the bits of N b
 * fingerprints. */
uint64_t ck_bytes(const ck_shape *s);

/* Where a key lands: its first bucket, and its fingerprint in 1 .. 2^f - 1
 * (independent halves of the digest). */
static inline uint64_t ck_bucket_of(const ck_shape *s, const bk_hash *h)
{
    return bk_reduce(h->h1, s->buckets);
}

static inline unsigned ck_fingerprint_of(const ck_shape *s, const bk_hash *h)
{
    const uint64_t top = (UINT64_C(1) << s->f) - 1; /* f <= 32: the product fits */
    return 1 + (unsigned)(((h->h2 >> 32) * top) >> 32);
}

/* The other bucket of fingerprint fp in bucket i: (H(fp) - i) mod N, so
 * that the other bucket of the other bucket is i again (the partial-key
 * cuckoo hashing of Fan et al., for any even N rather than a power of two).
 * H(fp) is odd and N even, so the two buckets differ in parity and are
 * never one: every key has 2b slots. */
static inline uint64_t ck_other(const ck_shape *s, uint64_t i, unsigned fp)
{
    uint64_t x = fp * UINT64_C(0x9e3779b97f4a7c15); /* splitmix64's finaliser */
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    const uint64_t hf = bk_reduce(x ^ (x >> 31), s->buckets) | 1;
    return hf >= i ? hf - i : hf + s->buckets - i;
}

/* The bit where slot j of bucket i starts. */
static inline uint64_t ck_bit(const ck_shape *s, uint64_t i, unsigned j)
{
    if (!s->per_line)
        return (i * s->b + j) * s->f;
    return i / s->per_line * (BK_BLOCK_BYTES * 8) + ((i % s->per_line) * s->b + j) * s->f;
}

/* The 8 bytes at p as a big-endian word; only `avail` of them may be read
 * (the end of the payload: the rest read as zero). */
static inline uint64_t ck_load(const uint8_t *p, uint64_t avail)
{
    uint64_t v = 0;
    if (avail >= 8) {
        memcpy(&v, p, 8);
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        return __builtin_bswap64(v);
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        return v;
#else
        const uint8_t *b = (const uint8_t *)&v;
        v = 0;
        for (int i = 0; i < 8; i++)
            v = v << 8 | p[i];
        (void)b;
        return v;
#endif
    }
    for (uint64_t i = 0; i < 8; i++)
        v = v << 8 | (i < avail ? p[i] : 0);
    return v;
}

static inline void ck_store(uint8_t *p, uint64_t avail, uint64_t v)
{
    uint8_t w[8];
    for (int i = 7; i >= 0; i--, v >>= 8)
        w[i] = (uint8_t)v;
    memcpy(p, w, avail < 8 ? (size_t)avail : 8);
}

/* The fingerprint at bit `at` of payload data[0..nbytes). */
static inline unsigned ck_get(const ck_shape *s, const uint8_t *data, uint64_t nbytes, uint64_t at)
{
    const uint64_t w = ck_load(data + (at >> 3), nbytes - (at >> 3));
    return (unsigned)((w << (at & 7)) >> (64 - s->f));
}

/* The b fingerprints of bucket i into fp[0 .. b). */
static inline void ck_read(const ck_shape *s, const uint8_t *data, uint64_t nbytes, uint64_t i,
                           unsigned *fp)
{
    const uint64_t at = ck_bit(s, i, 0);
    for (unsigned j = 0; j < s->b; j++)
        fp[j] = ck_get(s, data, nbytes, at + (uint64_t)j * s->f);
}

static inline void ck_put(const ck_shape *s, uint8_t *data, uint64_t nbytes, uint64_t at,
                          unsigned fp)
{
    const uint64_t avail = nbytes - (at >> 3);
    const unsigned shift = 64 - s->f - (unsigned)(at & 7);
    const uint64_t mask = ((UINT64_C(1) << s->f) - 1) << shift;
    const uint64_t w = ck_load(data + (at >> 3), avail);
    ck_store(data + (at >> 3), avail, (w & ~mask) | (uint64_t)fp << shift);
}

#endif
