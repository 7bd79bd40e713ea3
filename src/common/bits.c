/*
 * bits.c - whole-array bit operations: population count (loading a file,
 * merging) and OR/AND of two arrays. Word at a time through memcpy, so any
 * alignment is fine and the compiler emits plain 64-bit loads.
 */
#include "bits.h"

#include <string.h>

static inline unsigned popcount64(uint64_t x)
{
    return (unsigned)__builtin_popcountll(x);
}

/* Whole-array loops get a POPCNT build on x86-64, chosen when the library
 * loads; other machines use the portable build (libgcc's bit trick). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BK_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define BK_POPCNT_CLONES
#endif

BK_POPCNT_CLONES uint64_t bk_popcount(const uint8_t *p, size_t n)
{
    uint64_t total = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        total += popcount64(w);
    }
    for (; i < n; i++)
        total += popcount64(p[i]);
    return total;
}

BK_POPCNT_CLONES uint64_t bk_bits_combine(uint8_t *dst, const uint8_t *src, size_t n, int op)
{
    uint64_t total = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t a, b;
        memcpy(&a, dst + i, 8);
        memcpy(&b, src + i, 8);
        a = op == BK_BITS_AND ? a & b : a | b;
        memcpy(dst + i, &a, 8);
        total += popcount64(a);
    }
    for (; i < n; i++) {
        dst[i] = (uint8_t)(op == BK_BITS_AND ? dst[i] & src[i] : dst[i] | src[i]);
        total += popcount64(dst[i]);
    }
    return total;
}

void bk_nibble_census(const uint8_t *p, size_t n, uint64_t *nonzero, uint64_t *saturated)
{
    uint64_t nz = 0, sat = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned hi = p[i] >> 4, lo = p[i] & 0xfu;
        nz += (hi != 0) + (lo != 0);
        sat += (hi == 0xfu) + (lo == 0xfu);
    }
    *nonzero = nz;
    *saturated = sat;
}
