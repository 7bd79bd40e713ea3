/*
 * test_standard.c - the classic filter: add/contains semantics, stats, clear,
 * argument checking.
 */
#include <string.h>

#include "suites.h"
#include "testutil.h"

START_TEST(add_reports_new_then_present_and_changes_nothing)
{
    bk_filter *f = tu_filter("variant=standard capacity=1000 fpr=0.01");
    bk_filter_stats a, b;
    ck_assert_int_eq(bk_contains(f, "alpha", 5), 0);
    ck_assert_int_eq(bk_add(f, "alpha", 5), 1);
    ck_assert_int_eq(bk_contains(f, "alpha", 5), 1);
    ck_assert_int_eq(bk_stats(f, &a), BK_OK);
    ck_assert_int_eq(bk_add(f, "alpha", 5), 0);
    ck_assert_int_eq(bk_stats(f, &b), BK_OK);
    ck_assert_uint_eq(a.keys, 1);
    ck_assert_uint_eq(b.keys, 1);
    ck_assert_uint_eq(a.set_bits, b.set_bits);
    ck_assert_uint_ge(a.set_bits, 1);
    ck_assert_uint_le(a.set_bits, a.k);
    bk_free(f);
}
END_TEST

START_TEST(zero_length_key_is_a_key)
{
    bk_filter *f = tu_filter("capacity=100");
    ck_assert_int_eq(bk_contains(f, NULL, 0), 0);
    ck_assert_int_eq(bk_add(f, NULL, 0), 1);
    ck_assert_int_eq(bk_contains(f, "", 0), 1);
    ck_assert_int_eq(bk_add(f, "", 0), 0);
    bk_free(f);
}
END_TEST

START_TEST(bad_arguments_change_nothing)
{
    bk_filter *f = tu_filter("capacity=100");
    bk_filter_stats a, b;
    ck_assert_int_eq(bk_stats(f, &a), BK_OK);
    ck_assert_int_eq(bk_add(NULL, "k", 1), BK_EINVAL);
    ck_assert_int_eq(bk_add(f, NULL, 3), BK_EINVAL);
    ck_assert_int_eq(bk_contains(NULL, "k", 1), BK_EINVAL);
    ck_assert_int_eq(bk_contains(f, NULL, 1), BK_EINVAL);
    ck_assert_int_eq(bk_remove(NULL, "k", 1), BK_EINVAL);
    ck_assert_int_eq(bk_remove(f, NULL, 1), BK_EINVAL);
    ck_assert_int_eq(bk_remove(f, "k", 1), BK_ENOTSUP);
    ck_assert_int_eq(bk_stats(NULL, &a), BK_EINVAL);
    ck_assert_int_eq(bk_stats(f, NULL), BK_EINVAL);
    ck_assert_int_eq(bk_clear(NULL), BK_EINVAL);
    ck_assert_int_eq(bk_get_config(f, NULL), BK_EINVAL);
    ck_assert_int_eq(bk_stats(f, &b), BK_OK);
    ck_assert_uint_eq(b.keys, 0);
    ck_assert_uint_eq(b.set_bits, 0);
    bk_free(NULL);
    bk_free(f);
}
END_TEST

START_TEST(stats_follow_the_sizing_layer)
{
    bk_filter *f = tu_filter("variant=standard capacity=1000000 fpr=0.0001");
    bk_filter_stats st;
    tu_add_keys(f, "s", 0, 100000);
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_str_eq(st.variant, "standard");
    ck_assert_str_eq(st.hash, "siphash24");
    ck_assert_uint_eq(st.bits, 19170117);
    ck_assert_uint_eq(st.bytes, 2396265);
    ck_assert_uint_eq(st.k, 13);
    ck_assert_uint_eq(st.capacity, 1000000);
    ck_assert_uint_eq(st.slices, 1);
    ck_assert_uint_eq(st.saturated, 0);
    ck_assert_uint_le(st.keys, 100000);
    ck_assert_uint_ge(st.keys, 99990);
    ck_assert_double_eq_tol(st.fill, (double)st.set_bits / (double)st.bits, 1e-12);
    ck_assert_double_eq_tol(st.est_cardinality, 100000.0, 1000.0);
    ck_assert_double_lt(st.est_fpr, 1e-8);
    ck_assert_double_gt(st.est_fpr, 0.0);
    bk_free(f);
}
END_TEST

START_TEST(clear_empties_and_keeps_key)
{
    bk_filter *f = tu_filter("capacity=1000");
    bk_config before, after;
    bk_get_config(f, &before);
    bk_add(f, "a", 1);
    ck_assert_int_eq(bk_clear(f), BK_OK);
    ck_assert_int_eq(bk_contains(f, "a", 1), 0);
    bk_filter_stats st;
    bk_stats(f, &st);
    ck_assert_uint_eq(st.set_bits, 0);
    ck_assert_uint_eq(st.keys, 0);
    bk_get_config(f, &after);
    ck_assert(memcmp(&before, &after, sizeof before) == 0);
    ck_assert_int_eq(after.has_key, 1);
    bk_free(f);
}
END_TEST

/* Two filters with the same explicit key answer identically; random keys differ. */
START_TEST(explicit_key_is_reproducible_random_keys_differ)
{
    const char *cfg = "capacity=1000 key=00112233445566778899aabbccddeeff";
    bk_filter *a = tu_filter(cfg), *b = tu_filter(cfg);
    bk_filter *c = tu_filter("capacity=1000"), *d = tu_filter("capacity=1000");
    bk_config ca, cd;
    bk_get_config(c, &ca);
    bk_get_config(d, &cd);
    ck_assert(memcmp(ca.key, cd.key, 16) != 0);
    char key[32];
    for (uint64_t i = 0; i < 500; i++)
        bk_add(a, key, tu_key(key, sizeof key, "r", i));
    for (uint64_t i = 0; i < 500; i++)
        bk_add(b, key, tu_key(key, sizeof key, "r", i));
    for (uint64_t i = 0; i < 20000; i++) {
        const size_t n = tu_key(key, sizeof key, "probe", i);
        ck_assert_int_eq(bk_contains(a, key, n), bk_contains(b, key, n));
    }
    bk_free(a);
    bk_free(b);
    bk_free(c);
    bk_free(d);
}
END_TEST

Suite *standard_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("standard", "basics", &tc);
    tcase_add_test(tc, add_reports_new_then_present_and_changes_nothing);
    tcase_add_test(tc, zero_length_key_is_a_key);
    tcase_add_test(tc, bad_arguments_change_nothing);
    tcase_add_test(tc, stats_follow_the_sizing_layer);
    tcase_add_test(tc, clear_empties_and_keeps_key);
    tcase_add_test(tc, explicit_key_is_reproducible_random_keys_differ);
    return s;
}
