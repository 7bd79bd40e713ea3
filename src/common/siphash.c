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

/* The initialisation constants of the specification (ASCII of
 * "somepseudorandomlygeneratedbytes", read big-endian in four words). */
#define SIP_C0 UINT64_C(0x736f6d6570736575)
#define SIP_C1 UINT64_C(0x646f72616e646f6d)
#define SIP_C2 UINT64_C(0x6c7967656e657261)
#define SIP_C3 UINT64_C(0x7465646279746573)
/* Domain separation of the 128-bit mode. */
#define SIP_128_INIT   0xee
#define SIP_128_SECOND 0xdd

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
    for (unsigned i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

typedef struct sip_state {
    uint64_t v0, v1, v2, v3;
} sip_state;

static inline void sip_round(sip_state *s)
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

static inline void sip_rounds(sip_state *s, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sip_round(s);
}

/* Initialise, absorb the whole message, and leave the state ready for
 * finalisation. wide selects the 128-bit mode's initialisation. */
static inline sip_state sip_absorb(const bk_sipkey *key, unsigned c, int wide, const uint8_t *in,
                                   size_t len)
{
    sip_state s = {key->k0 ^ SIP_C0, key->k1 ^ SIP_C1, key->k0 ^ SIP_C2, key->k1 ^ SIP_C3};
    if (wide)
        s.v1 ^= SIP_128_INIT;

    const size_t whole = len - (len % 8);
    for (size_t off = 0; off < whole; off += 8) {
        const uint64_t m = load_le64(in + off);
        s.v3 ^= m;
        sip_rounds(&s, c);
        s.v0 ^= m;
    }
    /* Last word: the 0..7 tail bytes, and len mod 256 in the top byte. */
    uint8_t tail[8] = {0};
    if (len % 8)
        memcpy(tail, in + whole, len % 8);
    uint64_t b = load_le64(tail) | (uint64_t)(len & 0xff) << 56;
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

static inline uint64_t sip64(const bk_sipkey *key, unsigned c, unsigned d, const void *msg,
                             size_t len)
{
    sip_state s = sip_absorb(key, c, 0, (const uint8_t *)msg, len);
    s.v2 ^= 0xff;
    sip_rounds(&s, d);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

static inline void sip128(const bk_sipkey *key, unsigned c, unsigned d, const void *msg, size_t len,
                          uint64_t out[2])
{
    sip_state s = sip_absorb(key, c, 1, (const uint8_t *)msg, len);
    s.v2 ^= SIP_128_INIT;
    sip_rounds(&s, d);
    out[0] = s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
    s.v1 ^= SIP_128_SECOND;
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

void bk_siphash24_128(const uint8_t key[16], const void *msg, size_t len, uint8_t out[16])
{
    const bk_sipkey k = bk_sipkey_from_bytes(key);
    uint64_t w[2];
    bk_sip24_128_words(&k, msg, len, w);
    store_le64(out, w[0]);
    store_le64(out + 8, w[1]);
}

void bk_siphash13_128(const uint8_t key[16], const void *msg, size_t len, uint8_t out[16])
{
    const bk_sipkey k = bk_sipkey_from_bytes(key);
    uint64_t w[2];
    bk_sip13_128_words(&k, msg, len, w);
    store_le64(out, w[0]);
    store_le64(out + 8, w[1]);
}
