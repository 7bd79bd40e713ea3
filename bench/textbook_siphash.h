/* textbook_siphash.h - SipHash-c-d (128-bit output) written from the paper
 * the way portable C SipHash is usually written: byte-assembled
 * little-endian loads, a round macro, the tail through a switch. No bloomkit
 * code: bench_hash.c measures bloomkit's SipHash against it, and
 * bench_filter.c uses it (or libsodium's, the faster of the two) as the
 * floor of hashing the keys. */
#ifndef BK_BENCH_TEXTBOOK_SIPHASH_H
#define BK_BENCH_TEXTBOOK_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define TB_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define TB_LE64(p)                                                                                 \
    (((uint64_t)((p)[0])) | ((uint64_t)((p)[1]) << 8) | ((uint64_t)((p)[2]) << 16) |               \
     ((uint64_t)((p)[3]) << 24) | ((uint64_t)((p)[4]) << 32) | ((uint64_t)((p)[5]) << 40) |        \
     ((uint64_t)((p)[6]) << 48) | ((uint64_t)((p)[7]) << 56))
#define TB_ROUND                                                                                   \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = TB_ROTL(v1, 13);                                                                      \
        v1 ^= v0;                                                                                  \
        v0 = TB_ROTL(v0, 32);                                                                      \
        v2 += v3;                                                                                  \
        v3 = TB_ROTL(v3, 16);                                                                      \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = TB_ROTL(v3, 21);                                                                      \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = TB_ROTL(v1, 17);                                                                      \
        v1 ^= v2;                                                                                  \
        v2 = TB_ROTL(v2, 32);                                                                      \
    } while (0)

/* 128-bit SipHash-c-d, the straightforward way. */
static inline void textbook128(int c, int d, const uint8_t key[16], const uint8_t *in, size_t len,
                               uint64_t out[2])
{
    const uint64_t k0 = TB_LE64(key), k1 = TB_LE64(key + 8);
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1 ^ 0xee;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
    const uint8_t *end = in + len - (len % 8);
    uint64_t b = (uint64_t)len << 56;
    for (; in != end; in += 8) {
        const uint64_t m = TB_LE64(in);
        v3 ^= m;
        for (int i = 0; i < c; i++)
            TB_ROUND;
        v0 ^= m;
    }
    switch (len & 7) {
    case 7:
        b |= (uint64_t)in[6] << 48; /* fall through */
    case 6:
        b |= (uint64_t)in[5] << 40; /* fall through */
    case 5:
        b |= (uint64_t)in[4] << 32; /* fall through */
    case 4:
        b |= (uint64_t)in[3] << 24; /* fall through */
    case 3:
        b |= (uint64_t)in[2] << 16; /* fall through */
    case 2:
        b |= (uint64_t)in[1] << 8; /* fall through */
    case 1:
        b |= (uint64_t)in[0];
        break;
    default:
        break;
    }
    v3 ^= b;
    for (int i = 0; i < c; i++)
        TB_ROUND;
    v0 ^= b;
    v2 ^= 0xee;
    for (int i = 0; i < d; i++)
        TB_ROUND;
    out[0] = v0 ^ v1 ^ v2 ^ v3;
    v1 ^= 0xdd;
    for (int i = 0; i < d; i++)
        TB_ROUND;
    out[1] = v0 ^ v1 ^ v2 ^ v3;
}

#endif
