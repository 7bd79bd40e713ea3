/*
 * murmur.c - MurmurHash64A and MurmurHash2 (murmur.h), step by step as the
 * algorithm is published: every product wraps at the word's width.
 */
#include "murmur.h"

#include "bits.h"

uint64_t bk_murmur64a(const void *data, size_t len, uint64_t seed)
{
    const uint64_t m = UINT64_C(0xc6a4a7935bd1e995);
    const uint8_t *p = data;
    uint64_t h = seed ^ ((uint64_t)len * m);
    for (size_t blocks = len / 8; blocks > 0; blocks--, p += 8) {
        uint64_t k = bk_le_get(p, 8);
        k *= m;
        k ^= k >> 47;
        k *= m;
        h ^= k;
        h *= m;
    }
    if (len % 8) {
        h ^= bk_le_get(p, (unsigned)(len % 8));
        h *= m;
    }
    h ^= h >> 47;
    h *= m;
    h ^= h >> 47;
    return h;
}

uint32_t bk_murmur2(const void *data, size_t len, uint32_t seed)
{
    const uint32_t m = UINT32_C(0x5bd1e995);
    const uint8_t *p = data;
    uint32_t h = seed ^ (uint32_t)len;
    for (size_t blocks = len / 4; blocks > 0; blocks--, p += 4) {
        uint32_t k = (uint32_t)bk_le_get(p, 4);
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
    }
    if (len % 4) {
        h ^= (uint32_t)bk_le_get(p, (unsigned)(len % 4));
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}
