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

#include "export.h"

#include <stddef.h>
#include <stdint.h>

/* Key as the two little-endian words k0 = key[0..7], k1 = key[8..15]. */
typedef struct bk_sipkey {
    uint64_t k0, k1;
} bk_sipkey;

BK_INTERNAL bk_sipkey bk_sipkey_from_bytes(const uint8_t key[16]);

/* 128-bit SipHash-2-4 / SipHash-1-3: out[0] is the first output word, out[1]
 * the second, as the reference writes them little-endian. msg may be NULL when
 * len is 0. */
void bk_sip24_128_words(const bk_sipkey *key, const void *msg, size_t len, uint64_t out[2]);
void bk_sip13_128_words(const bk_sipkey *key, const void *msg, size_t len, uint64_t out[2]);

/* bk_sip24_128_words (c = 2) or bk_sip13_128_words (c = 1) of msgs[i],
 * lens[i] into out[i] for i < n, several keys per instruction where the CPU
 * allows (siphash_many.c); the same digests on every path. Thread-safe. */
void bk_sip_128_many(const bk_sipkey *key, unsigned c, const void *const *msgs,
                     const size_t *lens, size_t n, uint64_t (*out)[2]);
/* The path bk_sip_128_many takes: "avx512" or "scalar" (BLOOMKIT_SIMD=scalar
 * forces the latter; read once). */
const char *bk_sip_many_path(void);

#endif
