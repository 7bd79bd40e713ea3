/*
 * test_contract.c - the same properties for every variant, through the public
 * API and so through the vtable: no false negative, measured false-positive
 * rate on 10^6 absent keys within the statistical bound of the expected rate,
 * and the add/contains contract.
 */
#include <math.h>
#include <string.h>

#include "common/alloc.h"
#include "core/filter_impl.h"
#include "suites.h"
#include "testutil.h"

/* Insert n keys at rate p, probe 10^6 disjoint keys; returns the measured rate
 * and fills *st. Fails on any false negative. */
static double measure(const char *variant, uint64_t n, double p, bk_filter_stats *st)
{
    char key[40];
    bk_filter *f = tu_filterf("variant=%s capacity=%llu fpr=%g", variant, (unsigned long long)n, p);
    for (uint64_t i = 0; i < n; i++)
        ck_assert_int_ge(bk_add(f, key, tu_key(key, sizeof key, "member", i)), 0);
    for (uint64_t i = 0; i < n; i++)
        ck_assert_msg(bk_contains(f, key, tu_key(key, sizeof key, "member", i)) == 1,
                      "%s: false negative for member:%llu", variant, (unsigned long long)i);
    const uint64_t probes = 1000000;
    uint64_t fp = 0;
    fp += tu_count_present(f, "absent", 0, probes);
    bk_stats(f, st);
    bk_free(f);
    return (double)fp / (double)probes;
}

/* At capacity, the measured rate is within 5 standard deviations of the rate
 * the filter's own fill predicts, and below 1.25 p (p the fpr asked, or for
 * a variant that takes none, the rate its plan gives). */
START_TEST(false_positive_rate_within_bound)
{
    const unsigned nv = tu_nvariants();
    const char *variant = tu_variant((unsigned)_i % nv);
    double p = (unsigned)_i < nv ? 0.01 : 0.001;
    if (!bk_config_key_applies((bk_variant)((unsigned)_i % nv), "fpr")) {
        /* a rate fixed by its shape (rbcuckoo's bucket_size): the one its
         * plan promises at capacity */
        bk_config c;
        bk_plan plan;
        char text[64];
        snprintf(text, sizeof text, "variant=%s capacity=100000", variant);
        ck_assert_int_eq(bk_config_parse(&c, text, NULL, 0), BK_OK);
        ck_assert_int_eq(bk_plan_config(&c, &plan), BK_OK);
        p = plan.expected_fpr;
    }
    bk_filter_stats st;
    const double rate = measure(variant, 100000, p, &st);
    const double sigma = sqrt(st.est_fpr * (1 - st.est_fpr) / 1e6);
    fprintf(stderr,
            "[fpr %s p=%g] measured %.6f, predicted from fill %.6f (sigma %.6f), bound %.6f\n",
            variant, p, rate, st.est_fpr, sigma, 1.25 * p);
    ck_assert_double_le(rate, 1.25 * p);
    ck_assert_double_le(fabs(rate - st.est_fpr), 5 * sigma + 1e-6);
    /* Integer k and ceil(m) keep the rate at capacity within a few % of p. */
    ck_assert_double_le(st.est_fpr, 1.05 * p);
}
END_TEST

/* Four times past capacity, standard degrades as theory says (exactly as its
 * fill predicts, and within 5% of the closed form, which approximates
 * (1 - 1/m)^(kn) by e^(-kn/m)); scalable keeps its bound. */
START_TEST(overfilled_standard_follows_theory_scalable_holds)
{
    const char *cfgs[] = {"variant=standard capacity=10000 fpr=0.01",
                          "variant=scalable capacity=10000 fpr=0.01"};
    for (int v = 0; v < 2; v++) {
        bk_filter *f = tu_holding(cfgs[v], "over", 0, 40000);
        char key[40];
        bk_filter_stats st;
        bk_stats(f, &st);
        uint64_t fp = 0;
        const double probes = 200000.0;
        for (uint64_t i = 0; i < (uint64_t)probes; i++)
            fp += (uint64_t)bk_contains(f, key, tu_key(key, sizeof key, "x", i));
        const double rate = (double)fp / probes;
        const double theory = bk_rate_after(st.bits, st.k, 40000);
        fprintf(stderr, "[overfill 4x %s] measured %.4f, from fill %.4f, closed form %.4f\n",
                st.variant, rate, st.est_fpr, theory);
        ck_assert_double_le(fabs(rate - st.est_fpr),
                            5 * sqrt(st.est_fpr * (1 - st.est_fpr) / probes) + 1e-6);
        if (v == 0)
            ck_assert_double_le(fabs(rate - theory), 0.05 * theory);
        else
            ck_assert_double_le(rate, 0.01);
        bk_free(f);
    }
}
END_TEST

START_TEST(add_contract_all_variants)
{
    for (unsigned v = 0; v < tu_nvariants(); v++) {
        bk_filter *f = tu_filterf("variant=%s capacity=1000", tu_variant(v));
        ck_assert_int_eq(bk_add(f, "k", 1), 1);
        ck_assert_int_eq(bk_add(f, "k", 1), 0);
        ck_assert_int_eq(bk_add(f, "", 0), 1);
        ck_assert_int_eq(bk_contains(f, NULL, 0), 1);
        ck_assert_int_eq(bk_add(f, NULL, 1), BK_EINVAL);
        bk_filter_stats st;
        bk_stats(f, &st);
        /* a variant that removes keeps a multiset: it counts the re-add */
        ck_assert_uint_eq(st.keys, bk_variant_removes((bk_variant)v) ? 3 : 2);
        ck_assert_str_eq(st.variant, tu_variant(v));
        bk_free(f);
    }
}
END_TEST

/* bk_stats_held and bk_slice_held give bk_stats' and bk_slice_info's
 * figures of the shape and the counts kept, and 0 for those read from the
 * cells, on every variant, a chain grown to several slices included. */
START_TEST(held_figures_are_the_stats_own_all_variants)
{
    for (unsigned v = 0; v < tu_nvariants(); v++) {
        const uint64_t keys = 3000;
        bk_filter *f = tu_filterf("variant=%s capacity=%llu fpr=0.01", tu_variant(v),
                                  (unsigned long long)tu_capacity_for(v, 500, keys));
        tu_add_keys(f, "h", 0, keys);
        bk_filter_stats st, held;
        memset(&held, 0xa5, sizeof held);
        ck_assert_int_eq(bk_stats(f, &st), BK_OK);
        ck_assert_int_eq(bk_stats_held(f, &held, sizeof held), BK_OK);
        ck_assert_uint_gt(held.keys, 0);
        ck_assert_uint_gt(st.set_bits, 0);
        /* bk_stats' own, with the figures read from the cells 0 (both
         * structs copied whole from a zeroed one: padding included) */
        st.set_bits = st.saturated = 0;
        st.fill = st.est_cardinality = st.est_fpr = st.model_fpr = 0.0;
        ck_assert_msg(memcmp(&st, &held, sizeof st) == 0, "%s: held figures differ", tu_variant(v));
        for (uint32_t i = 0; i < st.slices; i++) {
            bk_slice_stats s, h;
            memset(&h, 0xa5, sizeof h);
            ck_assert_int_eq(bk_slice_info(f, i, &s, sizeof s), BK_OK);
            ck_assert_int_eq(bk_slice_held(f, i, &h, sizeof h), BK_OK);
            s.set_bits = 0;
            s.fill = s.est_fpr = 0.0;
            ck_assert_msg(memcmp(&s, &h, sizeof s) == 0, "%s: slice %u's held figures differ",
                          tu_variant(v), (unsigned)i);
        }
        bk_slice_stats h;
        ck_assert_int_eq(bk_slice_held(f, st.slices, &h, sizeof h), BK_EINVAL);
        bk_free(f);
    }
}
END_TEST

/* hash=siphash13 and hash=xxh3 make working filters with their own digests:
 * no false negative, the rate within its bound. */
START_TEST(other_hashes_make_working_filters)
{
    static const char *const hashes[] = {"siphash13", "xxh3"};
    const char *hash = hashes[(unsigned)_i / tu_nvariants()];
    const unsigned v = (unsigned)_i % tu_nvariants();
    {
        bk_filter *f =
            tu_filterf("variant=%s capacity=20000 fpr=0.01 hash=%s", tu_variant(v), hash);
        tu_add_keys(f, "h", 0, 20000);
        ck_assert_uint_eq(tu_count_present(f, "h", 0, 20000), 20000);
        uint64_t fp = 0;
        fp += tu_count_present(f, "n", 0, 100000);
        ck_assert_uint_le(fp, 1250);
        bk_filter_stats st;
        bk_stats(f, &st);
        ck_assert_str_eq(st.hash, hash);
        bk_free(f);
    }
}
END_TEST

/* The vtable's versions: bk_filter_new takes a table of the version this
 * build reads (and an optional perf table of its own), and refuses a table
 * of a version it does not know, which it would misread. */
START_TEST(tables_of_unknown_versions_are_refused)
{
    const bk_allocator a = bk_current_allocator();
    bk_config c;
    bk_config_init(&c);
    const bk_filter_perf perf_now = {.version = BK_FILTER_PERF_VERSION};
    const bk_filter_perf perf_later = {.version = BK_FILTER_PERF_VERSION + 1};
    const bk_filter_ops now = {.version = BK_FILTER_OPS_VERSION, .perf = &perf_now};
    const bk_filter_ops later = {.version = BK_FILTER_OPS_VERSION + 1};
    const bk_filter_ops none = {.version = 0};
    const bk_filter_ops now_perf_later = {.version = BK_FILTER_OPS_VERSION, .perf = &perf_later};
    bk_filter *f = NULL;
    ck_assert_int_eq(bk_filter_new(sizeof *f, 0, &now, &c, &a, &f), BK_OK);
    ck_assert_ptr_eq(f->ops, &now);
    bk_mem_free(&a, f);
    f = NULL;
    ck_assert_int_eq(bk_filter_new(sizeof *f, 0, &later, &c, &a, &f), BK_EINVAL);
    ck_assert_int_eq(bk_filter_new(sizeof *f, 0, &none, &c, &a, &f), BK_EINVAL);
    ck_assert_int_eq(bk_filter_new(sizeof *f, 0, &now_perf_later, &c, &a, &f), BK_EINVAL);
    ck_assert_ptr_null(f);
}
END_TEST

Suite *contract_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("contract", "all_variants", &tc);
    tcase_add_loop_test(tc, false_positive_rate_within_bound, 0, 2 * (int)tu_nvariants());
    tcase_add_test(tc, overfilled_standard_follows_theory_scalable_holds);
    tcase_add_test(tc, add_contract_all_variants);
    tcase_add_test(tc, held_figures_are_the_stats_own_all_variants);
    tcase_add_test(tc, tables_of_unknown_versions_are_refused);
    tcase_add_loop_test(tc, other_hashes_make_working_filters, 0, 2 * (int)tu_nvariants());
    return s;
}
