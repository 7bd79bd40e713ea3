/*
 * murmur.h - Austin Appleby's MurmurHash2 (32-bit) and MurmurHash64A, as
 * RedisBloom hashes with them (internal). Written from the published
 * algorithm (../shared/redisbloom/FORMATS.md section 3.1 restates it): they
 * are unkeyed and not collision-resistant, so only the RedisBloom-compatible
 * structures (src/rbchain, src/rbcuckoo) use them, to answer exactly as
 * RedisBloom does; every other filter hashes with a keyed SipHash.
 * Blocks are read little-endian whatever the host's order.
 */
#ifndef BK_COMMON_MURMUR_H
#define BK_COMMON_MURMUR_H

#include <stddef.h>
#include <stdint.h>

/* The seeds RedisBloom's chains hash with: MurmurHash64A's first (its own
 * multiplier), MurmurHash2's first (the 32-bit pair of the oldest chains);
 * each pair's second hash is seeded with its first. */
#define BK_MURMUR_CHAIN_SEED  UINT64_C(0xc6a4a7935bd1e995)
#define BK_MURMUR2_CHAIN_SEED UINT32_C(0x9747b28c)

/* MurmurHash64A of data[0 .. len) with seed (data may be NULL when len is
 * 0). Thread-safe. */
uint64_t bk_murmur64a(const void *data, size_t len, uint64_t seed);

/* MurmurHash2, 32-bit, of data[0 .. len) with seed. Thread-safe. */
uint32_t bk_murmur2(const void *data, size_t len, uint32_t seed);

#endif
