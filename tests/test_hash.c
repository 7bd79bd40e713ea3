/*
 * test_hash.c - probe derivation: the LCG probes of new filters and the
 * enhanced double hashing of older files, range reduction correct beyond
 * 2^32, and a real filter with m > 2^33 bits.
 */
#include <math.h>

#define XXH_STATIC_LINKING_ONLY /* XXH3_generateSecret */
#include <xxhash.h>

#include "common/alloc.h"
#include "common/hash.h"
#include "standard/standard.h"
#include "suites.h"
#include "testutil.h"

/* Classic probe i of a new filter is reduce(x_i, m) with x_0 = h1 and
 * x_{i+1} = a x_i + (h2 | 1); of a format-1 file reduce(h1 + i*h2 +
 * (i^3 - i)/6 mod 2^64, m) (Dillinger & Manolios); blocked probes stay in
 * the key's block of 512 cells whatever the scheme. */
START_TEST(probes_follow_their_derivation)
{
    uint64_t st = tu_seed("probes_follow_their_derivation");
    for (int trial = 0; trial < 1000; trial++) {
        const bk_hash h = {tu_next(&st), tu_next(&st)};
        const uint64_t m = tu_next(&st) >> (trial % 60) | 1;
        bk_probes p = bk_probes_for(&h, m, 0, BK_PROBES_DH);
        for (uint64_t i = 0; i < 64; i++) {
            const uint64_t want = h.h1 + i * h.h2 + (i * i * i - i) / 6;
            ck_assert_uint_eq(bk_probes_next(&p), bk_reduce(want, m));
        }
        bk_probes l = bk_probes_for(&h, m, 0, BK_PROBES_LCG);
        uint64_t x = h.h1;
        for (uint64_t i = 0; i < 64; i++) {
            ck_assert_uint_eq(bk_probes_next(&l), bk_reduce(x, m));
            x = x * UINT64_C(6364136223846793005) + (h.h2 | 1);
        }
        const uint64_t mb = (m / 512 + 1) * 512;
        bk_probes q = bk_probes_for(&h, mb, 512, trial & 1);
        const uint64_t first = bk_reduce(h.h1, mb / 512) * 512;
        for (int i = 0; i < 64; i++) {
            const uint64_t pos = bk_probes_next(&q);
            ck_assert_uint_ge(pos, first);
            ck_assert_uint_lt(pos, first + 512);
        }
    }
}
END_TEST

START_TEST(reduce_is_multiply_shift)
{
    ck_assert_uint_eq(bk_reduce(0, 1000), 0);
    ck_assert_uint_eq(bk_reduce(UINT64_MAX, 1000), 999);
    ck_assert_uint_eq(bk_reduce(UINT64_C(1) << 63, 1000), 500);
    ck_assert_uint_eq(bk_reduce(UINT64_C(1) << 63, (UINT64_C(1) << 33) + 1), UINT64_C(1) << 32);
    ck_assert_uint_eq(bk_mulhi64(UINT64_MAX, UINT64_MAX), UINT64_MAX - 1);
}
END_TEST

/* m = 2^33 + 1: every probe is < m, and both halves (below and above 2^32 *
 * 2) get their share, so nothing is truncated to 32 bits. */
START_TEST(probes_cover_m_beyond_2_pow_33)
{
    const uint64_t m = (UINT64_C(1) << 33) + 1;
    bk_hashkey key;
    const uint8_t kb[16] = {0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01,
                            0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe};
    bk_hashkey_init(&key, kb);
    uint64_t low = 0, high = 0, above_2_32 = 0;
    char buf[64];
    for (uint64_t n = 0; n < 100000; n++) {
        bk_hash h;
        bk_hash_key(BK_HASH_SIPHASH24, &key, buf, tu_key(buf, sizeof buf, "url", n), &h);
        bk_probes it = bk_probes_for(&h, m, 0, BK_PROBES_LCG);
        for (int i = 0; i < 7; i++) {
            const uint64_t p = bk_probes_next(&it);
            ck_assert_uint_lt(p, m);
            if (p < m / 2)
                low++;
            else
                high++;
            above_2_32 += p >= (UINT64_C(1) << 32);
        }
    }
    fprintf(stderr, "[probes m=2^33+1] low half %llu, high half %llu, above 2^32 %llu\n",
            (unsigned long long)low, (unsigned long long)high, (unsigned long long)above_2_32);
    const double frac = (double)high / (double)(low + high);
    ck_assert_msg(fabs(frac - 0.5) < 0.01, "high-half fraction %.4f", frac);
    ck_assert_uint_gt(above_2_32, (low + high) / 2);
}
END_TEST

/* A real slice of m > 2^33 bits (1 GiB; calloc'd pages are touched lazily):
 * keys are found, and their bits land in both halves. */
START_TEST(slice_larger_than_2_pow_33_bits)
{
    const bk_allocator a = bk_current_allocator();
    bk_std_slice s;
    bk_config cfg;
    ck_assert_int_eq(bk_config_parse(&cfg, "capacity=900000000 fpr=0.01", NULL, 0), BK_OK);
    ck_assert_int_eq(bk_std_slice_init(&s, &cfg, &a), BK_OK);
    ck_assert_uint_gt(s.shape.m, UINT64_C(1) << 33);
    bk_hashkey key;
    const uint8_t kb[16] = {1, 0, 0, 0, 0, 0, 0, 0, 2};
    bk_hashkey_init(&key, kb);
    char buf[64];
    uint64_t high = 0;
    for (uint64_t n = 0; n < 20000; n++) {
        bk_hash h;
        bk_hash_key(BK_HASH_SIPHASH24, &key, buf, tu_key(buf, sizeof buf, "big", n), &h);
        ck_assert_int_eq(bk_std_slice_add(&s, &h), 1);
        bk_probes it = bk_probes_for(&h, s.shape.m, 0, s.shape.probes);
        for (unsigned i = 0; i < s.shape.k; i++)
            high += bk_probes_next(&it) >= s.shape.m / 2;
    }
    for (uint64_t n = 0; n < 20000; n++) {
        bk_hash h;
        bk_hash_key(BK_HASH_SIPHASH24, &key, buf, tu_key(buf, sizeof buf, "big", n), &h);
        ck_assert_int_eq(bk_std_slice_contains(&s, &h), 1);
    }
    ck_assert_uint_gt(high, 20000 * s.shape.k / 3);
    ck_assert_uint_gt(bk_stripes_set(&s.counts), 20000 * (uint64_t)s.shape.k * 99 / 100);
    bk_std_slice_release(&s, &a);
}
END_TEST

/* hash=xxh3: the digest is libxxhash's XXH3-128 of the key bytes with the
 * secret XXH3_generateSecret makes from the filter's key (the two halves as
 * h1, h2); every key byte changes it, and it is not SipHash's. */
START_TEST(xxh3_digest_is_keyed_by_the_filter_key)
{
    uint8_t kb[16], secret[BK_XXH3_SECRET], msg[100];
    for (int i = 0; i < 16; i++)
        kb[i] = (uint8_t)(i * 29 + 3);
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (uint8_t)(i * 7 + 1);
    ck_assert_int_eq(XXH3_generateSecret(secret, sizeof secret, kb, 16), XXH_OK);
    bk_hashkey key;
    bk_hashkey_init(&key, kb);
    for (size_t len = 0; len <= sizeof msg; len++) {
        bk_hash h, s;
        bk_hash_key(BK_HASH_XXH3, &key, msg, len, &h);
        const XXH128_hash_t want = XXH3_128bits_withSecret(msg, len, secret, sizeof secret);
        ck_assert_uint_eq(h.h1, want.low64);
        ck_assert_uint_eq(h.h2, want.high64);
        bk_hash_key(BK_HASH_SIPHASH24, &key, msg, len, &s);
        ck_assert(s.h1 != h.h1 || s.h2 != h.h2);
    }
    bk_hash base;
    bk_hash_key(BK_HASH_XXH3, &key, "bloomkit", 8, &base);
    for (int i = 0; i < 16; i++) {
        kb[i] ^= 1;
        bk_hashkey other;
        bk_hashkey_init(&other, kb);
        bk_hash h;
        bk_hash_key(BK_HASH_XXH3, &other, "bloomkit", 8, &h);
        ck_assert_msg(h.h1 != base.h1 && h.h2 != base.h2, "key byte %d does not matter", i);
        kb[i] ^= 1;
    }
}
END_TEST

Suite *hash_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("hash", "probes", &tc);
    tcase_add_test(tc, probes_follow_their_derivation);
    tcase_add_test(tc, xxh3_digest_is_keyed_by_the_filter_key);
    tcase_add_test(tc, reduce_is_multiply_shift);
    tcase_add_test(tc, probes_cover_m_beyond_2_pow_33);
    tcase_add_test(tc, slice_larger_than_2_pow_33_bits);
    return s;
}
