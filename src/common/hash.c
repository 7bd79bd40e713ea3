/*
 * hash.c - the one place a key becomes a digest. The algorithm is chosen per
 * filter (config `hash=`); each produces 128 bits so probe derivation is the
 * same. XXH3 is called through Debian's libxxhash.
 */
#include "hash.h"

#include "bloomkit_tools.h"
#include "murmur.h"

#define XXH_STATIC_LINKING_ONLY /* XXH3_generateSecret */
#include <xxhash.h>

_Static_assert(BK_XXH3_SECRET >= XXH3_SECRET_SIZE_MIN, "XXH3's secret is too short");

void bk_hashkey_init(bk_hashkey *k, const uint8_t key[16])
{
    k->sip = bk_sipkey_from_bytes(key);
    /* cannot fail: a buffer of at least XXH3_SECRET_SIZE_MIN and a seed */
    (void)XXH3_generateSecret(k->secret, sizeof k->secret, key, 16);
    k->murmur = BK_MURMUR_PAIR64;
}

void bk_hash_murmur(bk_murmur_form form, const void *msg, size_t len, bk_hash *out)
{
    if (form == BK_MURMUR_PAIR32) {
        const uint32_t a = bk_murmur2(msg, len, BK_MURMUR2_CHAIN_SEED);
        out->h1 = a;
        out->h2 = bk_murmur2(msg, len, a);
    } else if (form == BK_MURMUR_ONE64) {
        out->h1 = bk_murmur64a(msg, len, 0);
        out->h2 = 0;
    } else {
        out->h1 = bk_murmur64a(msg, len, BK_MURMUR_CHAIN_SEED);
        out->h2 = bk_murmur64a(msg, len, out->h1);
    }
}

void bk_hash_key(bk_hash_alg alg, const bk_hashkey *key, const void *msg, size_t len, bk_hash *out)
{
    if (alg == BK_HASH_XXH3) {
        static const uint8_t none = 0; /* XXH3 reads no byte of an empty message */
        const XXH128_hash_t x =
            XXH3_128bits_withSecret(len ? msg : &none, len, key->secret, sizeof key->secret);
        out->h1 = x.low64;
        out->h2 = x.high64;
        return;
    }
    if (alg == BK_HASH_MURMUR) { /* RedisBloom's: unkeyed, in its variant's form */
        bk_hash_murmur((bk_murmur_form)key->murmur, msg, len, out);
        return;
    }
    uint64_t w[2];
    if (alg == BK_HASH_SIPHASH13)
        bk_sip13_128_words(&key->sip, msg, len, w);
    else
        bk_sip24_128_words(&key->sip, msg, len, w);
    out->h1 = w[0];
    out->h2 = w[1];
}

const char *bk_simd_path(void)
{
    return bk_sip_many_path();
}

/* Keys per call of the multi-key SipHash (its digests staged on the stack). */
#define BK_HASH_STAGE 256
/* Keys ahead whose bytes are prefetched when hashing one at a time. */
#define BK_HASH_AHEAD 8

void bk_hash_keys(bk_hash_alg alg, const bk_hashkey *key, const void *const *msgs,
                  const size_t *lens, size_t n, bk_hash *out)
{
    if (alg == BK_HASH_XXH3 || alg == BK_HASH_MURMUR || n < 8) {
        /* XXH3 one key at a time: its 16-byte steps multiply 64 by 64 bits
         * into 128, which neither AVX2 nor AVX-512F does, so lanes would not
         * pay. A caller's keys may lie anywhere in memory (a Python list's
         * strings): the bytes of the keys ahead are fetched meanwhile
         * (scattered URLs 4x faster, keys end to end no slower:
         * docs/performance.md). */
        for (size_t i = 0; i < n; i++) {
            if (i + BK_HASH_AHEAD < n && lens[i + BK_HASH_AHEAD]) {
                const char *m = msgs[i + BK_HASH_AHEAD];
                __builtin_prefetch(m);
                __builtin_prefetch(m + lens[i + BK_HASH_AHEAD] - 1);
            }
            bk_hash_key(alg, key, msgs[i], lens[i], &out[i]);
        }
        return;
    }
    uint64_t w[BK_HASH_STAGE][2];
    for (size_t at = 0; at < n; at += BK_HASH_STAGE) {
        const size_t c = n - at < BK_HASH_STAGE ? n - at : BK_HASH_STAGE;
        bk_sip_128_many(&key->sip, alg == BK_HASH_SIPHASH13 ? 1 : 2, msgs + at, lens + at, c, w);
        for (size_t i = 0; i < c; i++) {
            out[at + i].h1 = w[i][0];
            out[at + i].h2 = w[i][1];
        }
    }
}
