/*
 * test_scalable.c - the chain grows past its initial capacity and keeps the
 * compound rate under its target with bounded memory.
 */
#include <math.h>

#include "common/sizing.h"
#include "suites.h"
#include "testutil.h"

/* capacity 1,000 at 1%, one million keys: no false negative, measured rate
 * <= 1%, >= 8 slices, total bits within 2.5x of a filter sized up front. */
START_TEST(grows_a_thousandfold_within_its_bound)
{
    enum { N = 1000000 };
    bk_filter *f = tu_filter("variant=scalable capacity=1000 fpr=0.01");
    char key[32];
    for (uint64_t i = 0; i < N; i++)
        ck_assert_int_ge(bk_add(f, key, tu_key(key, sizeof key, "in", i)), 0);
    for (uint64_t i = 0; i < N; i++)
        ck_assert_msg(bk_contains(f, key, tu_key(key, sizeof key, "in", i)) == 1,
                      "false negative for in:%llu", (unsigned long long)i);
    uint64_t fp = 0;
    fp += tu_count_present(f, "out", 0, N);
    bk_filter_stats st;
    bk_stats(f, &st);
    bk_plan up_front;
    bk_plan_size(N, 0.01, &up_front);
    const double rate = (double)fp / N, ratio = (double)st.bits / (double)up_front.bits;
    fprintf(stderr,
            "[scalable 1e3 -> 1e6] slices %u, bits %llu, up-front %llu, ratio %.3f, measured "
            "rate %.5f, estimated %.5f, keys %llu\n",
            st.slices, (unsigned long long)st.bits, (unsigned long long)up_front.bits, ratio, rate,
            st.est_fpr, (unsigned long long)st.keys);
    ck_assert_double_le(rate, 0.01);
    ck_assert_uint_ge(st.slices, 8);
    ck_assert_double_le(ratio, 2.5);
    ck_assert_uint_le(st.keys, N);
    ck_assert_uint_ge(st.keys, N - N / 100);
    ck_assert_double_le(st.est_fpr, 0.01);
    bk_free(f);
}
END_TEST

/* Slice i is sized for n0 * s^i keys at p0 * (1 - r) * r^i: visible in the
 * total bits of the chain after a known number of slices. */
START_TEST(growth_and_tightening_come_from_config)
{
    const char *cfgs[] = {"variant=scalable capacity=100 fpr=0.01",
                          "variant=scalable capacity=100 fpr=0.01 growth=4 tightening=0.9"};
    const double s_[] = {2, 4}, r_[] = {0.5, 0.9};
    for (int c = 0; c < 2; c++) {
        bk_filter *f = tu_holding(cfgs[c], "g", 0, 20000);
        bk_filter_stats st;
        bk_stats(f, &st);
        uint64_t bits = 0, cap = 0;
        double pass_none = 1;
        for (uint32_t i = 0; i < st.slices; i++) {
            uint64_t m;
            unsigned k;
            const uint64_t ci = (uint64_t)ceil(100 * pow(s_[c], i));
            const double pi = 0.01 * (1 - r_[c]) * pow(r_[c], i);
            ck_assert_int_eq(bk_size_slice(ci, pi, 0, BK_SLICE_HOLDS, &m, &k), BK_OK);
            bits += m;
            cap += ci;
            pass_none *= 1 - pi;
        }
        ck_assert_uint_eq(st.bits, bits);
        ck_assert_uint_eq(st.capacity, cap);
        /* the rate the slices there are reach when full, under the target;
         * the memory a key has cost */
        ck_assert_double_eq_tol(st.rate_bound, 1 - pass_none, 1e-12);
        ck_assert_double_lt(st.rate_bound, 0.01);
        ck_assert_double_eq_tol(st.bits_per_key, 8.0 * (double)st.bytes / (double)st.keys, 1e-9);
        ck_assert_uint_ge(st.capacity, 20000 * 9 / 10);
        bk_free(f);
    }
}
END_TEST

START_TEST(present_keys_are_not_added_again_and_clear_resets)
{
    bk_filter *f = tu_filter("variant=scalable capacity=50 fpr=0.01");
    char key[32];
    for (uint64_t i = 0; i < 1000; i++)
        ck_assert_int_eq(bk_add(f, key, tu_key(key, sizeof key, "p", i)) >= 0, 1);
    bk_filter_stats a, b;
    bk_stats(f, &a);
    ck_assert_uint_gt(a.slices, 2);
    for (uint64_t i = 0; i < 1000; i++)
        ck_assert_int_eq(bk_add(f, key, tu_key(key, sizeof key, "p", i)), 0);
    bk_stats(f, &b);
    ck_assert_uint_eq(a.set_bits, b.set_bits);
    ck_assert_uint_eq(a.keys, b.keys);
    ck_assert_uint_eq(a.slices, b.slices);
    ck_assert_int_eq(bk_clear(f), BK_OK);
    bk_stats(f, &b);
    ck_assert_uint_eq(b.slices, 1);
    ck_assert_uint_eq(b.set_bits, 0);
    ck_assert_int_eq(bk_contains(f, key, tu_key(key, sizeof key, "p", 1)), 0);
    ck_assert_int_eq(bk_add(f, key, tu_key(key, sizeof key, "p", 1)), 1);
    bk_free(f);
}
END_TEST

/* max_bytes: growth that would pass it fails with BK_EFULL naming it and
 * changes nothing; lookups go on; a file keeps the ceiling. */
START_TEST(max_bytes_stops_growth_and_changes_nothing)
{
    bk_filter *f = tu_filter("variant=scalable capacity=1000 fpr=0.01 max_bytes=16k");
    char key[32];
    uint64_t n = 0;
    int rc;
    while ((rc = bk_add(f, key, tu_key(key, sizeof key, "g", n))) >= 0)
        n++;
    ck_assert_int_eq(rc, BK_EFULL);
    ck_assert_msg(strstr(bk_last_error(), "max_bytes=16384") != NULL, "%s", bk_last_error());
    bk_filter_stats a, b;
    ck_assert_int_eq(bk_stats(f, &a), BK_OK);
    ck_assert_uint_le(a.bytes, 16384);
    ck_assert_uint_gt(n, 1000);
    ck_assert_int_eq(bk_add(f, key, tu_key(key, sizeof key, "g", n)), BK_EFULL);
    ck_assert_int_eq(bk_stats(f, &b), BK_OK);
    ck_assert_uint_eq(a.keys, b.keys);
    ck_assert_uint_eq(a.set_bits, b.set_bits);
    ck_assert_uint_eq(a.slices, b.slices);
    ck_assert_uint_eq(tu_count_present(f, "g", 0, n), n); /* lookups work */
    char *dir = tu_tmpdir(), *path = tu_path(dir, "full.bkf");
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    bk_filter *g = NULL;
    ck_assert_int_eq(bk_load(path, &g), BK_OK);
    bk_config c;
    ck_assert_int_eq(bk_get_config(g, &c), BK_OK);
    ck_assert_uint_eq(c.max_bytes, 16384);
    ck_assert_int_eq(bk_add(g, key, tu_key(key, sizeof key, "g", n)), BK_EFULL);
    ck_assert(tu_same_filter(f, g));
    tu_free_all(f, g);
    free(path);
    tu_rmtree(dir);
    /* only the growing variants take it */
    char err[200];
    ck_assert_int_eq(bk_config_parse(&c, "variant=standard max_bytes=1M", err, sizeof err),
                     BK_ECONFIG);
    ck_assert_ptr_nonnull(strstr(err, "max_bytes"));
    ck_assert_int_eq(bk_config_parse(&c, "variant=window max_bytes=3G", err, sizeof err), BK_OK);
    ck_assert_uint_eq(c.max_bytes, UINT64_C(3) << 30);
    ck_assert_int_eq(bk_config_parse(&c, "variant=scalable max_bytes=1T", err, sizeof err),
                     BK_ECONFIG);
}
END_TEST

/* A chain holds the keys its first slice was made for without growing, at
 * every rate and in both layouts (a slice sized for n keys to reach its
 * limit on average grew before n in half the runs: 23 of these 48 before
 * the headroom), and the headroom costs little once the slice is large. */
START_TEST(capacity_holds_without_growing)
{
    static const char *const layouts[] = {"classic", "blocked"};
    static const uint64_t caps[] = {1, 10, 1000, 20000};
    static const double rates[] = {0.1, 0.01, 1e-4, 1e-7};
    char key[32];
    for (int l = 0; l < 2; l++)
        for (size_t c = 0; c < sizeof caps / sizeof *caps; c++)
            for (size_t r = 0; r < sizeof rates / sizeof *rates; r++) {
                bk_filter *f = tu_filterf("variant=scalable layout=%s capacity=%llu fpr=%g",
                                          layouts[l], (unsigned long long)caps[c], rates[r]);
                for (uint64_t i = 0; i < caps[c]; i++)
                    ck_assert_int_ge(bk_add(f, key, tu_key(key, sizeof key, "cap", i)), 0);
                bk_filter_stats st;
                ck_assert_int_eq(bk_stats(f, &st), BK_OK);
                ck_assert_msg(st.slices == 1, "%s capacity %llu fpr %g: %u slices", layouts[l],
                              (unsigned long long)caps[c], rates[r], (unsigned)st.slices);
                uint64_t m;
                unsigned k;
                ck_assert_int_eq(bk_size_slice(caps[c], rates[r] / 2, 0, BK_SLICE_AVERAGE, &m, &k),
                                 BK_OK);
                if (l == 0 && caps[c] >= 20000) /* mean + 6 sd of the fill: about 1% here */
                    ck_assert_uint_le(st.bits, m + m / 33);
                bk_free(f);
            }
}
END_TEST

Suite *scalable_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("scalable", "growth", &tc);
    tcase_add_test(tc, max_bytes_stops_growth_and_changes_nothing);
    tcase_add_test(tc, grows_a_thousandfold_within_its_bound);
    tcase_add_test(tc, growth_and_tightening_come_from_config);
    tcase_add_test(tc, present_keys_are_not_added_again_and_clear_resets);
    tcase_add_test(tc, capacity_holds_without_growing);
    return s;
}
