/*
 * siphash_many.c - 128-bit SipHash-c-d of many keys at once: eight keys per
 * instruction with AVX-512 (the state words v0..v3 of eight keys in four
 * 512-bit registers), chosen at run time, the scalar code of siphash.c
 * otherwise. The output equals bk_sip24_128_words / bk_sip13_128_words for
 * every key (tests/test_siphash.c compares them over every length and lane).
 *
 * Keys of any length: lane l absorbs its own whole words (a masked gather
 * loads word j of the lanes that have one; the others keep their state),
 * then every lane absorbs its last word (tail bytes and length, built in
 * scalar code so that no byte past a key is read) and the lanes finalise
 * together. A batch is ordered by word count first (a counting sort of the
 * indices), so the eight keys of a group have about the same length and few
 * lanes idle; digests land at their keys' own places.
 *
 * Built with per-function target attributes: the library still builds for
 * generic x86-64 and for other architectures, and a CPU (or valgrind's
 * emulated one) without AVX-512 never reaches an AVX-512 instruction.
 * BLOOMKIT_SIMD=scalar forces the scalar path (tests, benchmarks).
 */
#include "siphash.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BK_SIP_X86 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define BK_SIP_X86 0
#endif

static void scalar_many(const bk_sipkey *key, unsigned c, const void *const *msgs,
                        const size_t *lens, size_t n, uint64_t (*out)[2])
{
    for (size_t i = 0; i < n; i++)
        (c == 1 ? bk_sip13_128_words : bk_sip24_128_words)(key, msgs[i], lens[i], out[i]);
}

#if BK_SIP_X86

/* AVX-512 Foundation, and the operating system saving its registers (XCR0:
 * SSE, AVX, opmask, the upper ZMM halves and ZMM16-31). */
static int cpu_has_avx512f(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
        return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & bit_AVX512F))
        return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    return (lo & 0xe6) == 0xe6;
}

#define AVX512 __attribute__((target("avx512f")))

AVX512 static inline void round8(__m512i *v0, __m512i *v1, __m512i *v2, __m512i *v3)
{
    *v0 = _mm512_add_epi64(*v0, *v1);
    *v1 = _mm512_rol_epi64(*v1, 13);
    *v1 = _mm512_xor_si512(*v1, *v0);
    *v0 = _mm512_rol_epi64(*v0, 32);
    *v2 = _mm512_add_epi64(*v2, *v3);
    *v3 = _mm512_rol_epi64(*v3, 16);
    *v3 = _mm512_xor_si512(*v3, *v2);
    *v0 = _mm512_add_epi64(*v0, *v3);
    *v3 = _mm512_rol_epi64(*v3, 21);
    *v3 = _mm512_xor_si512(*v3, *v0);
    *v2 = _mm512_add_epi64(*v2, *v1);
    *v1 = _mm512_rol_epi64(*v1, 17);
    *v1 = _mm512_xor_si512(*v1, *v2);
    *v2 = _mm512_rol_epi64(*v2, 32);
}

AVX512 static inline void rounds8(unsigned n, __m512i *v0, __m512i *v1, __m512i *v2, __m512i *v3)
{
    for (unsigned i = 0; i < n; i++)
        round8(v0, v1, v2, v3);
}

/* Keys hashed together: eight lanes. Two sets of eight interleaved (two
 * independent chains of instructions) measured no faster: 18.7 against 19.3
 * ns a key, 75-byte URLs in cache; the vector units, not the rounds'
 * latency, are the bound. */
#define SIP_LANES 8

/* The lanes' state, their word counts and where their next words are
 * (offsets from the group's base address). */
typedef struct sip_set {
    __m512i v0, v1, v2, v3, nwords, where, last;
} sip_set;

/* Absorb word j of the lanes of s that have one; the others keep their
 * state. */
AVX512 static inline __attribute__((always_inline)) void absorb8(sip_set *s, unsigned c, uint64_t j,
                                                                 uintptr_t base)
{
    const __mmask8 has = _mm512_cmpgt_epu64_mask(s->nwords, _mm512_set1_epi64((long long)j));
    const __m512i m =
        _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), has, s->where, (const void *)base, 1);
    s->where = _mm512_add_epi64(s->where, _mm512_set1_epi64(8));
    __m512i n0 = s->v0, n1 = s->v1, n2 = s->v2, n3 = _mm512_xor_si512(s->v3, m);
    rounds8(c, &n0, &n1, &n2, &n3);
    n0 = _mm512_xor_si512(n0, m);
    s->v0 = _mm512_mask_mov_epi64(s->v0, has, n0);
    s->v1 = _mm512_mask_mov_epi64(s->v1, has, n1);
    s->v2 = _mm512_mask_mov_epi64(s->v2, has, n2);
    s->v3 = _mm512_mask_mov_epi64(s->v3, has, n3);
}

/* The last word, then the two halves of the 128-bit output. */
AVX512 static inline __attribute__((always_inline)) void finish8(sip_set *s, unsigned c, unsigned d,
                                                                 uint64_t h1[8], uint64_t h2[8])
{
    s->v3 = _mm512_xor_si512(s->v3, s->last);
    rounds8(c, &s->v0, &s->v1, &s->v2, &s->v3);
    s->v0 = _mm512_xor_si512(s->v0, s->last);
    s->v2 = _mm512_xor_si512(s->v2, _mm512_set1_epi64(BK_SIP_128_INIT));
    rounds8(d, &s->v0, &s->v1, &s->v2, &s->v3);
    _mm512_storeu_si512(
        h1, _mm512_xor_si512(_mm512_xor_si512(s->v0, s->v1), _mm512_xor_si512(s->v2, s->v3)));
    s->v1 = _mm512_xor_si512(s->v1, _mm512_set1_epi64(BK_SIP_128_SECOND));
    rounds8(d, &s->v0, &s->v1, &s->v2, &s->v3);
    _mm512_storeu_si512(
        h2, _mm512_xor_si512(_mm512_xor_si512(s->v0, s->v1), _mm512_xor_si512(s->v2, s->v3)));
}

/* SIP_LANES keys: p[l], len[l] for lane l; digests into out[at[l]] (none
 * for SIZE_MAX). Inlined into an instance per round count, so that the
 * rounds unroll. */
AVX512 static inline __attribute__((always_inline)) void
sip128_lanes(const bk_sipkey *key, unsigned c, unsigned d, const uint8_t *const p[SIP_LANES],
             const size_t len[SIP_LANES], const size_t at[SIP_LANES], uint64_t (*out)[2])
{
    uint64_t last[SIP_LANES], words[SIP_LANES], off[SIP_LANES];
    uint64_t most = 0;
    const uintptr_t base = (uintptr_t)p[0];
    for (unsigned l = 0; l < SIP_LANES; l++) {
        words[l] = len[l] / 8;
        most = words[l] > most ? words[l] : most;
        last[l] = bk_sip_last_word(p[l], len[l]);
        off[l] = (uint64_t)((uintptr_t)p[l] - base); /* mod 2^64: base + off is p[l] */
    }
    sip_set set = {
        .v0 = _mm512_set1_epi64((long long)(key->k0 ^ BK_SIP_C0)),
        .v1 = _mm512_set1_epi64((long long)(key->k1 ^ BK_SIP_C1 ^ BK_SIP_128_INIT)),
        .v2 = _mm512_set1_epi64((long long)(key->k0 ^ BK_SIP_C2)),
        .v3 = _mm512_set1_epi64((long long)(key->k1 ^ BK_SIP_C3)),
        .nwords = _mm512_loadu_si512(words),
        .where = _mm512_loadu_si512(off),
        .last = _mm512_loadu_si512(last),
    };
    for (uint64_t j = 0; j < most; j++)
        absorb8(&set, c, j, base);
    uint64_t h1[SIP_LANES], h2[SIP_LANES];
    finish8(&set, c, d, h1, h2);
    for (unsigned l = 0; l < SIP_LANES; l++) {
        if (at[l] == SIZE_MAX)
            continue; /* a lane filling the last group */
        out[at[l]][0] = h1[l];
        out[at[l]][1] = h2[l];
    }
}

/* Word counts told apart by the sort; longer keys share the last bucket
 * (their lanes then idle more, nothing else). Keys sorted per block. */
#define SIP_BUCKETS 32
#define SIP_BLOCK   256

static unsigned bucket(size_t len)
{
    const size_t w = len / 8;
    return w < SIP_BUCKETS ? (unsigned)w : SIP_BUCKETS - 1;
}

/* A block of keys in groups of eight of about the same length (a counting
 * sort of their word counts), through sip128_lanes. */
AVX512 static inline __attribute__((always_inline)) void
avx512_block(const bk_sipkey *key, unsigned c, const void *const *msgs, const size_t *lens,
             size_t n, uint64_t (*out)[2])
{
    uint16_t start[SIP_BUCKETS + 1] = {0}, order[SIP_BLOCK];
    for (size_t i = 0; i < n; i++)
        start[bucket(lens[i]) + 1]++;
    for (unsigned b = 0; b < SIP_BUCKETS; b++)
        start[b + 1] = (uint16_t)(start[b + 1] + start[b]);
    for (size_t i = 0; i < n; i++)
        order[start[bucket(lens[i])]++] = (uint16_t)i;
    const unsigned d = c == 1 ? 3 : 4;
    for (size_t g = 0; g < n; g += SIP_LANES) {
        /* the next group's keys, first and last lines: the sort took the
         * keys out of the order a hardware prefetcher follows */
        for (size_t j = g + SIP_LANES; j < g + (size_t)2 * SIP_LANES && j < n; j++) {
            const uint8_t *m = msgs[order[j]];
            if (lens[order[j]]) {
                __builtin_prefetch(m);
                __builtin_prefetch(m + lens[order[j]] - 1);
            }
        }
        const uint8_t *p[SIP_LANES];
        size_t len[SIP_LANES], at[SIP_LANES];
        for (unsigned l = 0; l < SIP_LANES; l++) {
            /* lanes past the end hash the group's first key again, unstored */
            const size_t i = order[g + l < n ? g + l : g];
            /* an empty key has no bytes: any readable address will do */
            p[l] = lens[i] ? (const uint8_t *)msgs[i] : (const uint8_t *)key;
            len[l] = lens[i];
            at[l] = g + l < n ? i : SIZE_MAX;
        }
        sip128_lanes(key, c, d, p, len, at, out);
    }
}

AVX512 static void avx512_sip24(const bk_sipkey *key, const void *const *msgs, const size_t *lens,
                                size_t n, uint64_t (*out)[2])
{
    avx512_block(key, 2, msgs, lens, n, out);
}

AVX512 static void avx512_sip13(const bk_sipkey *key, const void *const *msgs, const size_t *lens,
                                size_t n, uint64_t (*out)[2])
{
    avx512_block(key, 1, msgs, lens, n, out);
}

static void avx512_many(const bk_sipkey *key, unsigned c, const void *const *msgs,
                        const size_t *lens, size_t n, uint64_t (*out)[2])
{
    for (size_t at = 0; at < n; at += SIP_BLOCK) {
        const size_t b = n - at < SIP_BLOCK ? n - at : SIP_BLOCK;
        (c == 1 ? avx512_sip13 : avx512_sip24)(key, msgs + at, lens + at, b, out + at);
    }
}
#endif

/* The path, chosen once: 0 scalar, 1 AVX-512. Threads that race to choose
 * choose alike. */
static _Atomic int chosen = -1;

static int path(void)
{
    int k = atomic_load_explicit(&chosen, memory_order_relaxed);
    if (k >= 0)
        return k;
    k = 0;
#if BK_SIP_X86
    const char *want = getenv("BLOOMKIT_SIMD");
    if (!(want && strcmp(want, "scalar") == 0))
        k = cpu_has_avx512f();
#endif
    atomic_store_explicit(&chosen, k, memory_order_relaxed);
    return k;
}

const char *bk_sip_many_path(void)
{
    return path() ? "avx512" : "scalar";
}

void bk_sip_128_many(const bk_sipkey *key, unsigned c, const void *const *msgs, const size_t *lens,
                     size_t n, uint64_t (*out)[2])
{
#if BK_SIP_X86
    if (n >= 8 && path() == 1) {
        avx512_many(key, c, msgs, lens, n, out);
        return;
    }
#endif
    scalar_many(key, c, msgs, lens, n, out);
}
