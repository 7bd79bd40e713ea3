/*
 * siphash_many.c - 128-bit SipHash-c-d of many keys at once: eight keys per
 * instruction with AVX-512 (the state words v0..v3 of eight keys in four
 * 512-bit registers), four with AVX2, chosen at run time, the scalar code of
 * siphash.c otherwise. The output equals bk_sip24_128_words / bk_sip13_128_words for
 * every key (tests/test_siphash.c compares them over every length and lane).
 *
 * Keys of any length: lane l absorbs its own whole words (a masked gather
 * loads word j of the lanes that have one; the others keep their state; on
 * AVX2 the words every lane has come from plain loads, unmasked), then
 * every lane absorbs its last word (tail bytes and length, built in scalar
 * code so that no byte past a key is read) and the lanes finalise together.
 * A block of keys whose lengths differ by more than a few words is ordered
 * by word count first (a counting sort of the indices), so the keys of a
 * group have about the same length and few lanes idle; digests land at
 * their keys' own places.
 *
 * Built with per-function target attributes: the library still builds for
 * generic x86-64 and for other architectures, and a CPU (or valgrind's
 * emulated one) without AVX-512 or AVX2 never reaches such an instruction.
 * BLOOMKIT_SIMD=scalar|avx2|avx512 forces a path the CPU has (tests,
 * benchmarks).
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
#define AVX2   __attribute__((target("avx2")))

/* AVX2 (leaf 7 EBX bit 5), and the operating system saving the YMM state
 * (XCR0: SSE and AVX). */
static int cpu_has_avx2(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
        return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & bit_AVX2))
        return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    return (lo & 0x6) == 0x6;
}

/* The most lanes of any path. */
#define SIP_LANES_MAX 8

/* What every path's lanes need of their keys: word counts, last words, and
 * the keys' places as offsets from the first key's (a gather's base and
 * indices; mod 2^64, so base + offset is the key's address). */
typedef struct lane_keys {
    uint64_t words[SIP_LANES_MAX], last[SIP_LANES_MAX], off[SIP_LANES_MAX];
    uint64_t most; /* the largest word count */
    uintptr_t base;
} lane_keys;

static inline __attribute__((always_inline)) void
lane_prep(lane_keys *k, unsigned lanes, const uint8_t *const *p, const size_t *len)
{
    k->most = 0;
    k->base = (uintptr_t)p[0];
    for (unsigned l = 0; l < lanes; l++) {
        k->words[l] = len[l] / 8;
        k->most = k->words[l] > k->most ? k->words[l] : k->most;
        k->last[l] = bk_sip_last_word(p[l], len[l]);
        k->off[l] = (uint64_t)((uintptr_t)p[l] - k->base);
    }
}

/* The digests of the lanes into their keys' places (none for SIZE_MAX: a
 * lane filling the last group). */
static inline __attribute__((always_inline)) void lane_store(unsigned lanes, const uint64_t *h1,
                                                             const uint64_t *h2, const size_t *at,
                                                             uint64_t (*out)[2])
{
    for (unsigned l = 0; l < lanes; l++) {
        if (at[l] == SIZE_MAX)
            continue;
        out[at[l]][0] = h1[l];
        out[at[l]][1] = h2[l];
    }
}

/* Hashes one group of keys: p[l], len[l] for lane l; digests into
 * out[at[l]]. One instance per path and round count, so that the rounds
 * unroll. */
typedef void (*lanes_fn)(const bk_sipkey *key, const uint8_t *const *p, const size_t *len,
                         const size_t *at, uint64_t (*out)[2]);

/* --- AVX-512: eight lanes, native 64-bit rotates, masked gathers -------- */

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

/* Eight keys: the lanes absorb their whole words (word j of the lanes that
 * have one, the others keep their state), then each its last word, and
 * finalise together. Two sets of eight interleaved (two independent chains
 * of instructions) measured no faster: 18.7 against 19.3 ns a key, 75-byte
 * URLs in cache; the vector units, not the rounds' latency, are the bound. */
AVX512 static inline __attribute__((always_inline)) void lanes8(const bk_sipkey *key, unsigned c,
                                                                unsigned d, const uint8_t *const *p,
                                                                const size_t *len, const size_t *at,
                                                                uint64_t (*out)[2])
{
    lane_keys k;
    lane_prep(&k, 8, p, len);
    __m512i v0 = _mm512_set1_epi64((long long)(key->k0 ^ BK_SIP_C0));
    __m512i v1 = _mm512_set1_epi64((long long)(key->k1 ^ BK_SIP_C1 ^ BK_SIP_128_INIT));
    __m512i v2 = _mm512_set1_epi64((long long)(key->k0 ^ BK_SIP_C2));
    __m512i v3 = _mm512_set1_epi64((long long)(key->k1 ^ BK_SIP_C3));
    const __m512i nwords = _mm512_loadu_si512(k.words), last = _mm512_loadu_si512(k.last);
    __m512i where = _mm512_loadu_si512(k.off);
    for (uint64_t j = 0; j < k.most; j++) {
        const __mmask8 has = _mm512_cmpgt_epu64_mask(nwords, _mm512_set1_epi64((long long)j));
        const __m512i m = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), has, where,
                                                      (const void *)k.base, 1);
        where = _mm512_add_epi64(where, _mm512_set1_epi64(8));
        __m512i n0 = v0, n1 = v1, n2 = v2, n3 = _mm512_xor_si512(v3, m);
        rounds8(c, &n0, &n1, &n2, &n3);
        n0 = _mm512_xor_si512(n0, m);
        v0 = _mm512_mask_mov_epi64(v0, has, n0);
        v1 = _mm512_mask_mov_epi64(v1, has, n1);
        v2 = _mm512_mask_mov_epi64(v2, has, n2);
        v3 = _mm512_mask_mov_epi64(v3, has, n3);
    }
    v3 = _mm512_xor_si512(v3, last);
    rounds8(c, &v0, &v1, &v2, &v3);
    v0 = _mm512_xor_si512(v0, last);
    v2 = _mm512_xor_si512(v2, _mm512_set1_epi64(BK_SIP_128_INIT));
    rounds8(d, &v0, &v1, &v2, &v3);
    uint64_t h1[8], h2[8];
    _mm512_storeu_si512(h1, _mm512_xor_si512(_mm512_xor_si512(v0, v1), _mm512_xor_si512(v2, v3)));
    v1 = _mm512_xor_si512(v1, _mm512_set1_epi64(BK_SIP_128_SECOND));
    rounds8(d, &v0, &v1, &v2, &v3);
    _mm512_storeu_si512(h2, _mm512_xor_si512(_mm512_xor_si512(v0, v1), _mm512_xor_si512(v2, v3)));
    lane_store(8, h1, h2, at, out);
}

AVX512 static void avx512_sip24(const bk_sipkey *key, const uint8_t *const *p, const size_t *len,
                                const size_t *at, uint64_t (*out)[2])
{
    lanes8(key, 2, 4, p, len, at, out);
}

AVX512 static void avx512_sip13(const bk_sipkey *key, const uint8_t *const *p, const size_t *len,
                                const size_t *at, uint64_t (*out)[2])
{
    lanes8(key, 1, 3, p, len, at, out);
}

/* --- AVX2: four lanes; rotates by shifts (by 32: a dword shuffle; by 16: a
 * byte shuffle), gathers under a vector mask ------------------------------ */

#define ROTL4(x, b) _mm256_or_si256(_mm256_slli_epi64((x), (b)), _mm256_srli_epi64((x), 64 - (b)))

AVX2 static inline __attribute__((always_inline)) void round4(__m256i *v0, __m256i *v1, __m256i *v2,
                                                              __m256i *v3)
{
    /* each 64-bit word's bytes moved up by two: a rotate left by 16 */
    const __m256i rot16 = _mm256_setr_epi8(6, 7, 0, 1, 2, 3, 4, 5, 14, 15, 8, 9, 10, 11, 12, 13, 6,
                                           7, 0, 1, 2, 3, 4, 5, 14, 15, 8, 9, 10, 11, 12, 13);
    *v0 = _mm256_add_epi64(*v0, *v1);
    *v1 = ROTL4(*v1, 13);
    *v1 = _mm256_xor_si256(*v1, *v0);
    *v0 = _mm256_shuffle_epi32(*v0, 0xb1);
    *v2 = _mm256_add_epi64(*v2, *v3);
    *v3 = _mm256_shuffle_epi8(*v3, rot16);
    *v3 = _mm256_xor_si256(*v3, *v2);
    *v0 = _mm256_add_epi64(*v0, *v3);
    *v3 = ROTL4(*v3, 21);
    *v3 = _mm256_xor_si256(*v3, *v0);
    *v2 = _mm256_add_epi64(*v2, *v1);
    *v1 = ROTL4(*v1, 17);
    *v1 = _mm256_xor_si256(*v1, *v2);
    *v2 = _mm256_shuffle_epi32(*v2, 0xb1);
}

AVX2 static inline __attribute__((always_inline)) void rounds4(unsigned n, __m256i *v0, __m256i *v1,
                                                               __m256i *v2, __m256i *v3)
{
#pragma GCC unroll 4
    for (unsigned i = 0; i < n; i++)
        round4(v0, v1, v2, v3);
}

/* The states of four keys' SipHash, lane by lane. */
typedef struct sip4 {
    __m256i v0, v1, v2, v3;
} sip4;

/* One message word m into every lane of s. */
AVX2 static inline __attribute__((always_inline)) void absorb4(unsigned c, __m256i m, sip4 *s)
{
    s->v3 = _mm256_xor_si256(s->v3, m);
    rounds4(c, &s->v0, &s->v1, &s->v2, &s->v3);
    s->v0 = _mm256_xor_si256(s->v0, m);
}

/* Words j and j + 1 of four keys that all have them, lane by lane: two
 * plain 16-byte loads per key, transposed. */
AVX2 static inline __attribute__((always_inline)) void words2(const uint8_t *const *p, uint64_t j,
                                                              __m256i m[2])
{
    const __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(p[0] + 8 * j));
    const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p[1] + 8 * j));
    const __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(p[2] + 8 * j));
    const __m128i g = _mm_loadu_si128((const __m128i *)(const void *)(p[3] + 8 * j));
    m[0] = _mm256_set_m128i(_mm_unpacklo_epi64(e, g), _mm_unpacklo_epi64(a, b));
    m[1] = _mm256_set_m128i(_mm_unpackhi_epi64(e, g), _mm_unpackhi_epi64(a, b));
}

/* Words [j, k->most) of four keys, each lane absorbing those it has (a
 * masked gather; the others keep their state). */
AVX2 static inline __attribute__((always_inline)) void rest4(unsigned c, const lane_keys *k,
                                                             uint64_t j, sip4 *s)
{
    /* word counts are below 2^61: the signed compare is exact */
    const __m256i nwords = _mm256_loadu_si256((const __m256i *)(const void *)k->words);
    __m256i where = _mm256_add_epi64(_mm256_loadu_si256((const __m256i *)(const void *)k->off),
                                     _mm256_set1_epi64x((long long)(8 * j)));
    for (; j < k->most; j++) {
        const __m256i has = _mm256_cmpgt_epi64(nwords, _mm256_set1_epi64x((long long)j));
        const __m256i m = _mm256_mask_i64gather_epi64(_mm256_setzero_si256(),
                                                      (const long long *)k->base, where, has, 1);
        where = _mm256_add_epi64(where, _mm256_set1_epi64x(8));
        sip4 n = *s;
        absorb4(c, m, &n);
        s->v0 = _mm256_blendv_epi8(s->v0, n.v0, has);
        s->v1 = _mm256_blendv_epi8(s->v1, n.v1, has);
        s->v2 = _mm256_blendv_epi8(s->v2, n.v2, has);
        s->v3 = _mm256_blendv_epi8(s->v3, n.v3, has);
    }
}

/* The digest half of every lane of s (h[0..3]). */
AVX2 static inline __attribute__((always_inline)) void digest4(const sip4 *s, uint64_t *h)
{
    _mm256_storeu_si256((__m256i *)(void *)h, _mm256_xor_si256(_mm256_xor_si256(s->v0, s->v1),
                                                               _mm256_xor_si256(s->v2, s->v3)));
}

/* 4 x sets keys (sets 1 or 2), as lanes8 does eight: the words every lane
 * has absorbed without masks from plain loads (a gather per word, and the
 * blends, cost more on the CPUs measured: docs/performance.md), the two
 * sets' rounds side by side (independent chains, so that one set's
 * latency hides under the other's work); only the words some lanes lack
 * are gathered under a mask. The loops over sets and words are unrolled
 * (the pragmas) so that the states stay in registers: gcc otherwise kept
 * them in memory, an absorb's loads and stores on the rounds' path (25.6 ->
 * 22.0 ns a key, 256 URLs in cache, best of 8 alternating runs). */
AVX2 static inline __attribute__((always_inline)) void
lanes4(const bk_sipkey *key, unsigned c, unsigned d, unsigned sets, const uint8_t *const *p,
       const size_t *len, const size_t *at, uint64_t (*out)[2])
{
    lane_keys k[2];
    sip4 s[2];
    uint64_t least = UINT64_MAX, j = 0;
#pragma GCC unroll 2
    for (unsigned g = 0; g < sets; g++) {
        lane_prep(&k[g], 4, p + (size_t)4 * g, len + (size_t)4 * g);
        s[g].v0 = _mm256_set1_epi64x((long long)(key->k0 ^ BK_SIP_C0));
        s[g].v1 = _mm256_set1_epi64x((long long)(key->k1 ^ BK_SIP_C1 ^ BK_SIP_128_INIT));
        s[g].v2 = _mm256_set1_epi64x((long long)(key->k0 ^ BK_SIP_C2));
        s[g].v3 = _mm256_set1_epi64x((long long)(key->k1 ^ BK_SIP_C3));
        for (unsigned l = 0; l < 4; l++)
            least = k[g].words[l] < least ? k[g].words[l] : least;
    }
    for (; j + 2 <= least; j += 2) {
        __m256i m[2][2];
#pragma GCC unroll 2
        for (unsigned g = 0; g < sets; g++)
            words2(p + (size_t)4 * g, j, m[g]);
#pragma GCC unroll 2
        for (unsigned w = 0; w < 2; w++)
#pragma GCC unroll 2
            for (unsigned g = 0; g < sets; g++)
                absorb4(c, m[g][w], &s[g]);
    }
    uint64_t h1[8], h2[8];
#pragma GCC unroll 2
    for (unsigned g = 0; g < sets; g++) {
        rest4(c, &k[g], j, &s[g]);
        absorb4(c, _mm256_loadu_si256((const __m256i *)(const void *)k[g].last), &s[g]);
        s[g].v2 = _mm256_xor_si256(s[g].v2, _mm256_set1_epi64x(BK_SIP_128_INIT));
    }
#pragma GCC unroll 2
    for (unsigned g = 0; g < sets; g++) {
        rounds4(d, &s[g].v0, &s[g].v1, &s[g].v2, &s[g].v3);
        digest4(&s[g], h1 + (size_t)4 * g);
        s[g].v1 = _mm256_xor_si256(s[g].v1, _mm256_set1_epi64x(BK_SIP_128_SECOND));
    }
#pragma GCC unroll 2
    for (unsigned g = 0; g < sets; g++) {
        rounds4(d, &s[g].v0, &s[g].v1, &s[g].v2, &s[g].v3);
        digest4(&s[g], h2 + (size_t)4 * g);
    }
    lane_store(4 * sets, h1, h2, at, out);
}

/* One lanes_fn per round count and set count, so that each unrolls. */
#define AVX2_LANES(name, c, d, sets)                                                               \
    AVX2 static void name(const bk_sipkey *key, const uint8_t *const *p, const size_t *len,        \
                          const size_t *at, uint64_t(*out)[2])                                     \
    {                                                                                              \
        lanes4(key, c, d, sets, p, len, at, out);                                                  \
    }
AVX2_LANES(avx2_sip24, 2, 4, 2)
AVX2_LANES(avx2_sip13, 1, 3, 2)
AVX2_LANES(avx2_sip24_one, 2, 4, 1)
AVX2_LANES(avx2_sip13_one, 1, 3, 1)

/* --- every path: keys grouped by length ---------------------------------- */

/* Word counts told apart by the sort; longer keys share the last bucket
 * (their lanes then idle more, nothing else). Keys sorted per block. */
#define SIP_BUCKETS 32
#define SIP_BLOCK   256

static unsigned bucket(size_t len)
{
    const size_t w = len / 8;
    return w < SIP_BUCKETS ? (unsigned)w : SIP_BUCKETS - 1;
}

/* Keys whose word counts differ by at most this many are hashed in their
 * own order: a group's lanes then idle for a few words, which costs less
 * than sorting them (URLs of 59-83 bytes: 24.8 against 29.5 ns a key). */
#define SIP_SPREAD 4

/* A block of at most SIP_BLOCK keys in groups of `lanes` of about the same
 * length, each group through hash: in input order when the lengths are
 * close, else in the order of a counting sort of their word counts (stable:
 * equal lengths keep their order). */
static void lanes_block(const bk_sipkey *key, unsigned lanes, lanes_fn hash,
                        const void *const *msgs, const size_t *lens, size_t n, uint64_t (*out)[2])
{
    uint16_t order[SIP_BLOCK];
    size_t least = SIZE_MAX, most = 0;
    for (size_t i = 0; i < n; i++) {
        least = lens[i] < least ? lens[i] : least;
        most = lens[i] > most ? lens[i] : most;
        order[i] = (uint16_t)i;
    }
    if (n && most / 8 - least / 8 > SIP_SPREAD) {
        uint16_t start[SIP_BUCKETS + 1] = {0};
        for (size_t i = 0; i < n; i++)
            start[bucket(lens[i]) + 1]++;
        for (unsigned b = 0; b < SIP_BUCKETS; b++)
            start[b + 1] = (uint16_t)(start[b + 1] + start[b]);
        for (size_t i = 0; i < n; i++)
            order[start[bucket(lens[i])]++] = (uint16_t)i;
    }
    for (size_t g = 0; g < n; g += lanes) {
        /* the next group's keys, first and last lines: the sort took the
         * keys out of the order a hardware prefetcher follows */
        for (size_t j = g + lanes; j < g + (size_t)2 * lanes && j < n; j++) {
            const uint8_t *m = msgs[order[j]];
            if (lens[order[j]]) {
                __builtin_prefetch(m);
                __builtin_prefetch(m + lens[order[j]] - 1);
            }
        }
        const uint8_t *p[SIP_LANES_MAX];
        size_t len[SIP_LANES_MAX], at[SIP_LANES_MAX];
        for (unsigned l = 0; l < lanes; l++) {
            /* lanes past the end hash the group's first key again, unstored */
            const size_t i = order[g + l < n ? g + l : g];
            /* an empty key has no bytes: any readable address will do */
            p[l] = lens[i] ? (const uint8_t *)msgs[i] : (const uint8_t *)key;
            len[l] = lens[i];
            at[l] = g + l < n ? i : SIZE_MAX;
        }
        hash(key, p, len, at, out);
    }
}

static void lanes_many(const bk_sipkey *key, unsigned lanes, lanes_fn hash, const void *const *msgs,
                       const size_t *lens, size_t n, uint64_t (*out)[2])
{
    for (size_t at = 0; at < n; at += SIP_BLOCK) {
        const size_t b = n - at < SIP_BLOCK ? n - at : SIP_BLOCK;
        lanes_block(key, lanes, hash, msgs + at, lens + at, b, out + at);
    }
}
#endif

/* The paths, slowest first. */
enum { PATH_SCALAR, PATH_AVX2, PATH_AVX512, PATHS };
static const char *const path_names[PATHS] = {"scalar", "avx2", "avx512"};

static int cpu_has(int p)
{
#if BK_SIP_X86
    return p == PATH_SCALAR || (p == PATH_AVX2 && cpu_has_avx2()) ||
           (p == PATH_AVX512 && cpu_has_avx512f());
#else
    return p == PATH_SCALAR;
#endif
}

/* BLOOMKIT_SIMD's path when the CPU has it; else (unset, an unknown name, a
 * path this CPU lacks) the fastest this CPU has below it, the fastest of all
 * when unset or unknown. */
static int choose(void)
{
    const char *want = getenv("BLOOMKIT_SIMD");
    int p = PATHS - 1;
    for (int i = 0; want && i < PATHS; i++)
        if (strcmp(want, path_names[i]) == 0)
            p = i;
    while (!cpu_has(p))
        p--;
    return p;
}

/* The path, chosen once; threads that race to choose choose alike. */
static _Atomic int chosen = -1;

static int path(void)
{
    int k = atomic_load_explicit(&chosen, memory_order_relaxed);
    if (k < 0) {
        k = choose();
        atomic_store_explicit(&chosen, k, memory_order_relaxed);
    }
    return k;
}

const char *bk_sip_many_path(void)
{
    return path_names[path()];
}

size_t bk_sip_many_paths(const char **names, size_t cap)
{
    size_t n = 0;
    for (int p = PATHS - 1; p >= 0; p--)
        if (cpu_has(p) && n < cap)
            names[n++] = path_names[p];
    return n;
}

void bk_sip_many_rechoose(void)
{
    atomic_store_explicit(&chosen, choose(), memory_order_relaxed);
}

void bk_sip_128_many(const bk_sipkey *key, unsigned c, const void *const *msgs, const size_t *lens,
                     size_t n, uint64_t (*out)[2])
{
#if BK_SIP_X86
    const int p = path();
    if (p == PATH_AVX512 && n >= 8) {
        lanes_many(key, 8, c == 1 ? avx512_sip13 : avx512_sip24, msgs, lens, n, out);
        return;
    }
    if (p == PATH_AVX2 && n >= 8) {
        lanes_many(key, 8, c == 1 ? avx2_sip13 : avx2_sip24, msgs, lens, n, out);
        return;
    }
    if (p == PATH_AVX2 && n >= 4) {
        lanes_many(key, 4, c == 1 ? avx2_sip13_one : avx2_sip24_one, msgs, lens, n, out);
        return;
    }
#endif
    scalar_many(key, c, msgs, lens, n, out);
}
