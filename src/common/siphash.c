/*
 * siphash.c - SipHash, written from the specification: J.-P. Aumasson and
 * D. J. Bernstein, "SipHash: a fast short-input PRF" (INDOCRYPT 2012), section 2,
 * plus the 128-bit output mode of the reference implementation (0xee xored into
 * v1 at initialisation and into v2 before the first finalisation, 0xdd into v1
 * before the second).
 *
 * State: four 64-bit words v0..v3 initialised from the key and the constants
 * "somepseudorandomlygeneratedbytes". The message is read as little-endian
 * 64-bit words m_i; each passes through c SipRounds; the last word carries the
 * tail bytes and (len mod 256) in its top byte. d SipRounds finalise.
 *
 * The round counts are parameters of one static inline core; the public
 * functions pass constants so the compiler unrolls each instance. Proven against
 * the reference vectors in tests/data (tests/test_siphash.c).
 */
#include "siphash.h"

#include <string.h>

#include "bloomkit.h"

static inline uint64_t rotl64(uint64_t x, unsigned b)
{
    return (x << b) | (x >> (64 - b));
}

static inline uint64_t load_le64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

static inline void store_le64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, 8); /* one store; gcc mangles the byte-wise form below */
    return;
#endif
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    p[4] = (uint8_t)(v >> 32);
    p[5] = (uint8_t)(v >> 40);
    p[6] = (uint8_t)(v >> 48);
    p[7] = (uint8_t)(v >> 56);
}

/* The round counts must reach sip_rounds() as constants, so every helper
 * taking them is inlined into its instance (left to itself, gcc outlines
 * sip_absorb with the counts as run-time arguments, a branch per round). */
#if defined(__GNUC__) || defined(__clang__)
#define SIP_INLINE static inline __attribute__((always_inline))
#else
#define SIP_INLINE static inline
#endif

typedef struct sip_state {
    uint64_t v0, v1, v2, v3;
} sip_state;

SIP_INLINE void sip_round(sip_state *s)
{
    s->v0 += s->v1;
    s->v1 = rotl64(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = rotl64(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = rotl64(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = rotl64(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = rotl64(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = rotl64(s->v2, 32);
}

/* n SipRounds, n in 1..4. Written out rather than looped: every caller passes
 * a constant, the switch folds away, and the rounds run straight through
 * (at -O2 a counted loop here stays a loop, a branch per round). */
SIP_INLINE void sip_rounds(sip_state *s, unsigned n)
{
    switch (n) {
    case 4:
        sip_round(s); /* fall through */
    case 3:
        sip_round(s); /* fall through */
    case 2:
        sip_round(s); /* fall through */
    default:
        sip_round(s);
    }
}

/* Initialise, absorb the whole message, and leave the state ready for
 * finalisation. wide selects the 128-bit mode's initialisation. */
SIP_INLINE sip_state sip_absorb(const bk_sipkey *key, unsigned c, int wide, const uint8_t *in,
                                size_t len)
{
    sip_state s = {key->k0 ^ BK_SIP_C0, key->k1 ^ BK_SIP_C1, key->k0 ^ BK_SIP_C2,
                   key->k1 ^ BK_SIP_C3};
    if (wide)
        s.v1 ^= BK_SIP_128_INIT;

    const size_t whole = len - (len % 8);
    for (size_t off = 0; off < whole; off += 8) {
        const uint64_t m = load_le64(in + off);
        s.v3 ^= m;
        sip_rounds(&s, c);
        s.v0 ^= m;
    }
    const uint64_t b = bk_sip_last_word(in, len);
    s.v3 ^= b;
    sip_rounds(&s, c);
    s.v0 ^= b;
    return s;
}

bk_sipkey bk_sipkey_from_bytes(const uint8_t key[16])
{
    bk_sipkey k = {load_le64(key), load_le64(key + 8)};
    return k;
}

SIP_INLINE uint64_t sip64(const bk_sipkey *key, unsigned c, unsigned d, const void *msg, size_t len)
{
    sip_state s = sip_absorb(key, c, 0, (const uint8_t *)msg, len);
    s.v2 ^= 0xff;
    sip_rounds(&s, d);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

SIP_INLINE void sip128(const bk_sipkey *key, unsigned c, unsigned d, const void *msg, size_t len,
                       uint64_t out[2])
{
    sip_state s = sip_absorb(key, c, 1, (const uint8_t *)msg, len);
    s.v2 ^= BK_SIP_128_INIT;
    sip_rounds(&s, d);
    out[0] = s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
    s.v1 ^= BK_SIP_128_SECOND;
    sip_rounds(&s, d);
    out[1] = s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

/* The round counts are compile-time constants in each instance below, so the
 * loops in sip_rounds() unroll. */
void bk_sip24_128_words(const bk_sipkey *key, const void *msg, size_t len, uint64_t out[2])
{
    sip128(key, 2, 4, msg, len, out);
}

void bk_sip13_128_words(const bk_sipkey *key, const void *msg, size_t len, uint64_t out[2])
{
    sip128(key, 1, 3, msg, len, out);
}

/* --- public byte-oriented wrappers -------------------------------------- */

void bk_siphash24(const uint8_t key[16], const void *msg, size_t len, uint8_t out[8])
{
    const bk_sipkey k = bk_sipkey_from_bytes(key);
    store_le64(out, sip64(&k, 2, 4, msg, len));
}

void bk_siphash13(const uint8_t key[16], const void *msg, size_t len, uint8_t out[8])
{
    const bk_sipkey k = bk_sipkey_from_bytes(key);
    store_le64(out, sip64(&k, 1, 3, msg, len));
}

/* The 128-bit wrappers inline the core rather than call the word functions:
 * the call through a stack copy of the key and digest cost about 7 ns a key. */
SIP_INLINE void sip128_bytes(const uint8_t key[16], unsigned c, unsigned d, const void *msg,
                             size_t len, uint8_t out[16])
{
    const bk_sipkey k = bk_sipkey_from_bytes(key);
    uint64_t w[2];
    sip128(&k, c, d, msg, len, w);
    store_le64(out, w[0]);
    store_le64(out + 8, w[1]);
}

void bk_siphash24_128(const uint8_t key[16], const void *msg, size_t len, uint8_t out[16])
{
    sip128_bytes(key, 2, 4, msg, len, out);
}

void bk_siphash13_128(const uint8_t key[16], const void *msg, size_t len, uint8_t out[16])
{
    sip128_bytes(key, 1, 3, msg, len, out);
}
