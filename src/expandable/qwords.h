/*
 * qwords.h - what both of the expandable filter's tables (qtable.h,
 * rqtable.h) read and write their bits with (internal to src/expandable):
 * little-endian 8-byte loads and stores at any byte, a set-bit count, a
 * doubling's split of a field, its spill bound and its counts.
 */
#ifndef BK_EXPANDABLE_QWORDS_H
#define BK_EXPANDABLE_QWORDS_H

#include <stdint.h>
#include <string.h>

/* The 8 bytes at p as a little-endian number, and back. */
static inline uint64_t xp_load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline void xp_store64(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, sizeof v);
}

/* Set bits of v (no popcnt instruction is assumed: the SWAR count). */
static inline uint64_t xp_ones(uint64_t v)
{
    v -= (v >> 1) & UINT64_C(0x5555555555555555);
    v = (v & UINT64_C(0x3333333333333333)) + ((v >> 2) & UINT64_C(0x3333333333333333));
    v = (v + (v >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    return (v * UINT64_C(0x0101010101010101)) >> 56;
}

/* A field f of r bits with its first fingerprint bit gone, widened to r2
 * bits (r2 >= r); *bit that bit, and *none 1 when f has no bit left (it
 * goes to both halves, unchanged). No branch: which half an entry goes to
 * is a coin toss the processor cannot predict. */
static inline uint64_t xp_split(unsigned r, uint64_t f, unsigned r2, unsigned *bit, unsigned *none)
{
    const uint64_t top = UINT64_C(1) << (r - 1);
    *none = f == top;
    *bit = (f & top) != 0; /* 1 too when none */
    const uint64_t g = *none ? f : (f << 1) & ((top << 1) - 1);
    return g << (r2 - r);
}

/* A lookup's probe field matches an entry's (non-empty) field on the
 * entry's bits. */
static inline int xp_matches(uint64_t field, uint64_t probe)
{
    return ((field ^ probe) >> __builtin_ctzll(field) >> 1) == 0;
}

/* The slots a doubled table needs for the spill past its homes, its last
 * non-empty slot at last - 1 and zero_len entries with no bit left: an
 * entry at slot p lands at 2p + 1 or before, plus one for each entry with
 * no bit left (it goes to both halves). */
static inline uint64_t xp_spill(uint64_t last, uint64_t zero_len)
{
    return 2 * last + 1 + zero_len + 1;
}

/* A doubled table's counts from the old one's (by_len: entries by
 * fingerprint length, n lengths): every entry one bit shorter, and those
 * with none left twice. */
static inline void xp_doubled_counts(const uint64_t *by_len, uint64_t entries, unsigned n,
                                     uint64_t *to_by_len, uint64_t *to_entries)
{
    memset(to_by_len, 0, n * sizeof *to_by_len);
    to_by_len[0] = 2 * by_len[0];
    for (unsigned len = 1; len < n; len++)
        to_by_len[len - 1] += by_len[len];
    *to_entries = entries + by_len[0];
}

#endif
