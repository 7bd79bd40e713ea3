/*
 * hash.c - the one place a key becomes a digest. The algorithm is chosen per
 * filter (config `hash=`); both produce 128 bits so probe derivation is the same.
 */
#include "hash.h"

void bk_hash_key(bk_hash_alg alg, const bk_sipkey *key, const void *msg, size_t len, bk_hash *out)
{
    uint64_t w[2];
    if (alg == BK_HASH_SIPHASH13)
        bk_sip13_128_words(key, msg, len, w);
    else
        bk_sip24_128_words(key, msg, len, w);
    out->h1 = w[0];
    out->h2 = w[1];
}
