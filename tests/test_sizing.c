/*
 * test_sizing.c - m, k, rates and cardinality against the closed forms.
 */
#include <math.h>

#include "common/sizing.h"
#include "suites.h"
#include "testutil.h"

static double closed_form_rate(double bits_per_key, unsigned k)
{
    return pow(1.0 - exp(-(double)k / bits_per_key), (double)k);
}

START_TEST(worked_example_one_million_at_1e_4)
{
    bk_plan p;
    ck_assert_int_eq(bk_plan_size(1000000, 0.0001, &p), BK_OK);
    ck_assert_uint_eq(p.bits, 19170117);
    ck_assert_uint_eq(p.bytes, 2396265);
    ck_assert_uint_eq(p.k, 13);
    /* An integer k puts the rate a hair off p: (1 - e^(-13/19.17))^13 = 1.0013e-4. */
    ck_assert_double_eq_tol(p.expected_fpr, 1.0013e-4, 0.00005e-4);
}
END_TEST

START_TEST(rate_table_matches_closed_form)
{
    const uint64_t n = 1000000;
    for (unsigned ratio = 10; ratio <= 32; ratio++)
        for (unsigned k = 5; k <= 24; k++) {
            const double got = bk_rate_after((uint64_t)ratio * n, k, n);
            const double want = closed_form_rate(ratio, k);
            ck_assert_msg(fabs(got - want) <= 1e-12 * want, "m/n=%u k=%u: %g vs %g", ratio, k, got,
                          want);
        }
    /* The two figures quoted in the design notes, to three significant digits. */
    ck_assert_double_eq_tol(bk_rate_after(20 * n, 10, n), 8.89e-05, 0.005e-05);
    ck_assert_double_eq_tol(bk_rate_after(32 * n, 24, n), 2.17e-07, 0.005e-07);
    /* Tiny m: the exact (1 - (1 - 1/m)^(kn))^k, where the asymptotic form is
     * off (one bit, one key: certain, not 1 - 1/e) */
    ck_assert_double_eq(bk_rate_after(1, 1, 1), 1.0);
    ck_assert_double_eq_tol(bk_rate_after(2, 1, 1), 0.5, 1e-15);
    ck_assert_double_eq_tol(bk_rate_after(4, 2, 1), pow(1.0 - pow(0.75, 2.0), 2.0), 1e-15);
    for (uint64_t m = 1000; m < (UINT64_C(1) << 22); m *= 4) { /* both sides of 2^20 */
        const double exact = pow(1.0 - pow(1.0 - 1.0 / (double)m, 7.0 * (double)(m / 10)), 7.0);
        ck_assert_msg(fabs(bk_rate_after(m, 7, m / 10) - exact) <= 1e-4 * exact, "m=%llu",
                      (unsigned long long)m);
    }
}
END_TEST

/* k is floor or ceil of (m/n) ln 2, whichever rate is lower, and m is the
 * ceiling of the formula. */
START_TEST(k_is_the_better_neighbour_of_the_optimum)
{
    const double ps[] = {0.5, 0.1, 0.01, 0.001, 1e-4, 1e-6, 1e-9};
    const uint64_t ns[] = {1, 7, 1000, 123457, 1000000, UINT64_C(1) << 40};
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)
        for (size_t j = 0; j < sizeof ns / sizeof *ns; j++) {
            uint64_t m;
            unsigned k;
            ck_assert_int_eq(bk_size_for(ns[j], ps[i], 0, &m, &k), BK_OK);
            const double m_real = -(double)ns[j] * log(ps[i]) / (log(2) * log(2));
            ck_assert_double_le(m_real, (double)m);
            ck_assert_double_gt(m_real + 1.0 + 1e-9 * m_real, (double)m);
            const double kopt = (double)m / (double)ns[j] * log(2);
            ck_assert(k >= 1);
            ck_assert(k == (unsigned)floor(kopt) || k == (unsigned)floor(kopt) + 1 || k == 1);
            const double r = bk_rate_after(m, k, ns[j]);
            if (k > 1)
                ck_assert_double_le(r, bk_rate_after(m, k - 1, ns[j]));
            ck_assert_double_le(r, bk_rate_after(m, k + 1, ns[j]));
        }
}
END_TEST

START_TEST(plan_rejects_out_of_range)
{
    bk_plan p;
    ck_assert_int_eq(bk_plan_size(0, 0.01, &p), BK_EINVAL);
    ck_assert_int_eq(bk_plan_size(BK_CAPACITY_MAX + 1, 0.01, &p), BK_EINVAL);
    ck_assert_int_eq(bk_plan_size(1000, 0.0, &p), BK_EINVAL);
    ck_assert_int_eq(bk_plan_size(1000, 0.6, &p), BK_EINVAL);
    ck_assert_int_eq(bk_plan_size(1000, NAN, &p), BK_EINVAL);
    ck_assert_int_eq(bk_plan_size(1000, 0.01, NULL), BK_EINVAL);
    /* 2^48 keys at 1e-300 needs ~2^58 bits: refused as out of range, not wrapped. */
    ck_assert_int_eq(bk_plan_size(BK_CAPACITY_MAX, 1e-300, &p), BK_ERANGE);
    ck_assert_int_eq(bk_plan_size(BK_CAPACITY_MAX, 0.01, &p), BK_OK);
    ck_assert_uint_gt(p.bits, UINT64_C(1) << 51);
}
END_TEST

/* n* = -(m/k) ln(1 - X/m) inverts the expected fill exactly. */
START_TEST(cardinality_inverts_expected_fill)
{
    const uint64_t m = 9585059;
    const unsigned k = 7;
    for (uint64_t n = 1000; n <= 2000000; n *= 3) {
        const double x = (double)m * -expm1(-(double)k * (double)n / (double)m);
        const double est = bk_estimate_cardinality(m, k, (uint64_t)llround(x));
        ck_assert_msg(fabs(est - (double)n) <= 1e-4 * (double)n + 1.0, "n=%llu est=%f",
                      (unsigned long long)n, est);
    }
    ck_assert(isinf(bk_estimate_cardinality(m, k, m)));
    ck_assert_double_eq(bk_estimate_cardinality(m, k, 0), 0.0);
    ck_assert_double_eq(bk_estimate_cardinality(0, k, 0), 0.0);
}
END_TEST

START_TEST(rate_from_fill_edges)
{
    ck_assert_double_eq(bk_rate_from_fill(0.0, 5), 0.0);
    ck_assert_double_eq(bk_rate_from_fill(1.0, 5), 1.0);
    ck_assert_double_eq_tol(bk_rate_from_fill(0.5, 10), 1.0 / 1024, 1e-15);
    ck_assert_double_eq(bk_rate_after(0, 3, 10), 1.0);
}
END_TEST

Suite *sizing_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("sizing", "formulas", &tc);
    tcase_add_test(tc, worked_example_one_million_at_1e_4);
    tcase_add_test(tc, rate_table_matches_closed_form);
    tcase_add_test(tc, k_is_the_better_neighbour_of_the_optimum);
    tcase_add_test(tc, plan_rejects_out_of_range);
    tcase_add_test(tc, cardinality_inverts_expected_fill);
    tcase_add_test(tc, rate_from_fill_edges);
    return s;
}
