/*
 * test_alloc.c - fault injection on every allocation (SQLite's habit): fail
 * the N-th allocation for N = 1, 2, ... until the scenario succeeds; every
 * failure must return BK_ENOMEM, leave the filter as it was, and leak nothing.
 */
#include <stdlib.h>

#include "suites.h"
#include "testutil.h"

/* Create a filter and add enough keys that scalable grows several times.
 * Returns 1 if an allocation failure was met (and handled), 0 if it ran clean. */
static int scenario(const char *variant)
{
    char cfg[96], key[32];
    snprintf(cfg, sizeof cfg, "variant=%s capacity=16 fpr=0.01", variant);
    bk_config c;
    ck_assert_int_eq(bk_config_parse(&c, cfg, NULL, 0), BK_OK);
    bk_filter *f = (bk_filter *)&c;
    const int rc = bk_new(&c, &f);
    if (rc != BK_OK) {
        ck_assert_int_eq(rc, BK_ENOMEM);
        ck_assert_ptr_null(f);
        ck_assert_int_eq(tu_alloc.live, 0);
        return 1;
    }
    int failed = 0;
    for (uint64_t i = 0; i < 400 && !failed; i++) {
        const size_t len = tu_key(key, sizeof key, "fi", i);
        bk_filter_stats before, after;
        bk_stats(f, &before);
        const int arc = bk_add(f, key, len);
        if (arc < 0) {
            ck_assert_int_eq(arc, BK_ENOMEM);
            bk_stats(f, &after);
            ck_assert_uint_eq(before.set_bits, after.set_bits);
            ck_assert_uint_eq(before.keys, after.keys);
            ck_assert_uint_eq(before.slices, after.slices);
            failed = 1;
        }
    }
    bk_free(f);
    ck_assert_int_eq(tu_alloc.live, 0);
    return failed;
}

START_TEST(every_allocation_failure_is_reported_and_leaks_nothing)
{
    const char *variant = _i == 0 ? "standard" : _i == 1 ? "counting" : "scalable";
    long n = 1;
    for (; n < 10000; n++) {
        const bk_allocator failing = tu_failing_allocator(n);
        ck_assert_int_eq(bk_set_allocator(&failing), BK_OK);
        if (!scenario(variant))
            break;
    }
    fprintf(stderr, "[alloc %s] %ld allocation points failed in turn, then a clean run of %ld\n",
            variant, n - 1, tu_alloc.calls);
    ck_assert_int_gt(n, 1);
    ck_assert_int_lt(n, 10000);
    if (_i == 2)
        ck_assert_int_gt(n, 4); /* scalable allocated slices while adding */
    bk_set_allocator(NULL);
}
END_TEST

/* A filter frees with the allocator it was created with. */
START_TEST(filter_keeps_its_allocator)
{
    const bk_allocator failing = tu_failing_allocator(-1);
    ck_assert_int_eq(bk_set_allocator(&failing), BK_OK);
    bk_filter *f = tu_filter("variant=scalable capacity=10");
    ck_assert_int_gt(tu_alloc.live, 0);
    ck_assert_int_eq(bk_set_allocator(NULL), BK_OK);
    tu_add_keys(f, "a", 0, 200);
    bk_free(f);
    ck_assert_int_eq(tu_alloc.live, 0);
    const bk_allocator half = {tu_failing_alloc, NULL, NULL};
    ck_assert_int_eq(bk_set_allocator(&half), BK_EINVAL);
}
END_TEST

Suite *alloc_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("alloc", "fault_injection", &tc);
    tcase_add_loop_test(tc, every_allocation_failure_is_reported_and_leaks_nothing, 0, 3);
    tcase_add_test(tc, filter_keeps_its_allocator);
    return s;
}
