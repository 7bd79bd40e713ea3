/*
 * siphash.h - keyed SipHash-c-d in 64- and 128-bit output modes (internal).
 *
 * The public entry points (bk_siphash24 ...) serialise to bytes; filters want
 * the two 64-bit words of the 128-bit digest directly, which
 * bk_sip24_128_words() and bk_sip13_128_words() give without a round trip
 * through memory.
 */
#ifndef BK_COMMON_SIPHASH_H
#define BK_COMMON_SIPHASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The initialisation constants of the specification (ASCII of
 * "somepseudorandomlygeneratedbytes", read big-endian in four words), and
 * the 128-bit mode's domain separation (0xee into v1 at initialisation and
 * into v2 before the first finalisation, 0xdd into v1 before the second). */
#define BK_SIP_C0         UINT64_C(0x736f6d6570736575)
#define BK_SIP_C1         UINT64_C(0x646f72616e646f6d)
#define BK_SIP_C2         UINT64_C(0x6c7967656e657261)
#define BK_SIP_C3         UINT64_C(0x7465646279746573)
#define BK_SIP_128_INIT   0xee
#define BK_SIP_128_SECOND 0xdd

/* A message's last word: its 0..7 tail bytes (little-endian) and len mod 256
 * in the top byte. A message of 8 bytes or more gives its tail by one load
 * of its last 8 bytes: no byte past the message is read, and no memcpy of
 * variable length (a library call) is on the path of every key. in may be
 * NULL when len is 0. */
static inline uint64_t bk_sip_last_word(const uint8_t *in, size_t len)
{
    const unsigned r = (unsigned)(len % 8);
    uint64_t b = (uint64_t)(len & 0xff) << 56;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (len >= 8) {
        uint64_t x;
        memcpy(&x, in + len - 8, 8);
        return r ? b | x >> (64 - 8 * r) : b;
    }
#endif
    for (unsigned i = 0; i < r; i++)
        b |= (uint64_t)in[len - r + i] << (8 * i);
    return b;
}

/* Key as the two little-endian words k0 = key[0..7], k1 = key[8..15]. */
typedef struct bk_sipkey {
    uint64_t k0, k1;
} bk_sipkey;

bk_sipkey bk_sipkey_from_bytes(const uint8_t key[16]);

/* 128-bit SipHash-2-4 / SipHash-1-3: out[0] is the first output word, out[1]
 * the second, as the reference writes them little-endian. msg may be NULL when
 * len is 0. */
void bk_sip24_128_words(const bk_sipkey *key, const void *msg, size_t len, uint64_t out[2]);
void bk_sip13_128_words(const bk_sipkey *key, const void *msg, size_t len, uint64_t out[2]);

/* bk_sip24_128_words (c = 2) or bk_sip13_128_words (c = 1) of msgs[i],
 * lens[i] into out[i] for i < n, several keys per instruction where the CPU
 * allows (siphash_many.c); the same digests on every path. Thread-safe. */
void bk_sip_128_many(const bk_sipkey *key, unsigned c, const void *const *msgs, const size_t *lens,
                     size_t n, uint64_t (*out)[2]);
/* The path bk_sip_128_many takes: "avx512", "avx2" or "scalar", the fastest
 * the CPU has unless BLOOMKIT_SIMD names another it has (read once, at the
 * first call). */
const char *bk_sip_many_path(void);
/* The paths this CPU has, fastest first, into names[0 .. cap); returns how
 * many. For tests and benchmarks. */
size_t bk_sip_many_paths(const char **names, size_t cap);
/* Reads BLOOMKIT_SIMD again and takes the path it names (tests: a run over
 * every path). Not concurrent with hashing. */
void bk_sip_many_rechoose(void);

#endif
