/*
 * test_alloc.c - fault injection on every allocation (SQLite's habit): fail
 * the N-th allocation for N = 1, 2, ... until the scenario succeeds; every
 * failure must return BK_ENOMEM, leave the filter as it was, and leak nothing.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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

/* An allocator that counts the bytes live: each block carries its size. */
static size_t held_bytes;
static void *sized_alloc(void *opaque, size_t n)
{
    (void)opaque;
    size_t *p = malloc(n + sizeof(max_align_t));
    if (!p)
        return NULL;
    *p = n;
    held_bytes += n;
    return (char *)p + sizeof(max_align_t);
}
static void sized_free(void *opaque, void *q)
{
    (void)opaque;
    if (!q)
        return;
    size_t *p = (size_t *)(void *)((char *)q - sizeof(max_align_t));
    held_bytes -= *p;
    free(p);
}

/* What bk_stats says a filter holds (its arrays, `bytes`, and its own
 * structures, `state_bytes`) is what it took from its allocator: hosts
 * (the Redis module's MEMORY USAGE) add the two. */
START_TEST(stats_count_what_a_filter_holds)
{
    static const char *const variants[] = {"standard", "counting",   "scalable", "window",
                                           "cuckoo",   "expandable", "rbchain",  "rbcuckoo"};
    const char *variant = variants[_i];
    const bk_allocator sized = {sized_alloc, sized_free, NULL};
    ck_assert_int_eq(bk_set_allocator(&sized), BK_OK);
    held_bytes = 0;
    char cfg[128];
    snprintf(cfg, sizeof cfg, "variant=%s capacity=%s fpr=0.01", variant,
             strcmp(variant, "scalable") == 0 || strcmp(variant, "window") == 0 ? "2000"
                                                                                : "100000");
    bk_filter *f = tu_filter(cfg);
    tu_add_keys(f, "h", 0, 20000); /* scalable and window grow slices */
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    const uint64_t counted = st.state_bytes + st.bytes;
    fprintf(stderr, "[alloc %s] held %zu bytes, stats count %llu (%u slices)\n", variant,
            held_bytes, (unsigned long long)counted, st.slices);
    ck_assert_uint_gt(st.state_bytes, 0);
    ck_assert_uint_le(counted, held_bytes);
    /* the rest: alignment (BK_BLOCK_BYTES and a pointer an array) and small tables */
    ck_assert_uint_le(held_bytes, counted + counted / 20 + 200 * (uint64_t)st.slices);
    bk_free(f);
    ck_assert_uint_eq(held_bytes, 0);
    bk_set_allocator(NULL);
}
END_TEST

Suite *alloc_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("alloc", "fault_injection", &tc);
    tcase_add_loop_test(tc, every_allocation_failure_is_reported_and_leaks_nothing, 0, 3);
    tcase_add_test(tc, filter_keeps_its_allocator);
    tcase_add_loop_test(tc, stats_count_what_a_filter_holds, 0, 8);
    return s;
}
