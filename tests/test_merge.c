/*
 * test_merge.c - union and intersection: no false negative after a merge,
 * merged standard and counting filters equal one built from both key sets,
 * and every incompatibility is refused without changing anything.
 */
#include "suites.h"
#include "testutil.h"

#define KEY "key=00112233445566778899aabbccddeeff"

/* No false negative among keys from .. to-1 of family. */
static void all_present(const bk_filter *f, const char *family, uint64_t from, uint64_t to)
{
    ck_assert_uint_eq(tu_count_present(f, family, from, to), to - from);
}

START_TEST(merge_equals_filter_built_from_both_sets)
{
    const char *cfgs[] = {"variant=standard capacity=20000 " KEY,
                          "variant=counting capacity=20000 " KEY};
    for (int v = 0; v < 2; v++) {
        /* overlapping sets */
        bk_filter *a = tu_holding(cfgs[v], "x", 0, 6000),
                  *b = tu_holding(cfgs[v], "x", 4000, 10000),
                  *both = tu_holding(cfgs[v], "x", 0, 6000);
        tu_add_keys(both, "x", 4000, 10000);
        ck_assert_int_eq(bk_merge(a, b), BK_OK);
        all_present(a, "x", 0, 10000);
        ck_assert_msg(tu_same_filter(a, both), "%s merge differs from the union build",
                      v ? "counting" : "standard");
        tu_free_all(a, b, both);
    }
}
END_TEST

START_TEST(counting_merge_saturates_and_removes)
{
    bk_filter *a = tu_filter("variant=counting capacity=1000 " KEY);
    bk_filter *b = tu_filter("variant=counting capacity=1000 " KEY);
    for (int i = 0; i < 10; i++) {
        bk_add(a, "hot", 3);
        bk_add(b, "hot", 3);
    }
    bk_add(b, "once", 4);
    ck_assert_int_eq(bk_merge(a, b), BK_OK);
    bk_filter_stats st;
    bk_stats(a, &st);
    ck_assert_uint_ge(st.saturated, 1);
    ck_assert_int_eq(bk_remove(a, "once", 4), BK_OK);
    ck_assert_int_eq(bk_contains(a, "hot", 3), 1);
    ck_assert_int_eq(bk_merge(a, a), BK_OK); /* a multiset plus itself */
    ck_assert_int_eq(bk_contains(a, "hot", 3), 1);
    tu_free_all(a, b);
}
END_TEST

START_TEST(scalable_merge_slice_by_slice)
{
    const char *cfg = "variant=scalable capacity=1000 fpr=0.01 " KEY;
    /* both hold two slices */
    bk_filter *a = tu_holding(cfg, "p", 0, 1500), *b = tu_holding(cfg, "q", 0, 1500);
    bk_filter_stats sa, sb;
    bk_stats(a, &sa);
    bk_stats(b, &sb);
    ck_assert_uint_eq(sa.slices, 2);
    ck_assert_uint_eq(sb.slices, 2);
    ck_assert_int_eq(bk_merge(a, b), BK_OK);
    all_present(a, "p", 0, 1500);
    all_present(a, "q", 0, 1500);
    /* Different shapes: refused. */
    bk_filter *c = tu_holding(cfg, "r", 0, 10);
    ck_assert_int_eq(bk_merge(a, c), BK_EINCOMPAT);
    tu_free_all(a, b, c);
}
END_TEST

/* Each incompatible pair: BK_EINCOMPAT (or ENOTSUP), dst byte-identical. */
START_TEST(incompatible_merges_change_nothing)
{
    bk_filter *dst = tu_holding("variant=standard capacity=5000 " KEY, "d", 0, 1000);
    bk_filter *copy = tu_holding("variant=standard capacity=5000 " KEY, "d", 0, 1000);
    bk_filter *others[] = {
        tu_filter("variant=standard capacity=5000"),                     /* other key */
        tu_filter("variant=standard capacity=6000 " KEY),                /* other size */
        tu_filter("variant=counting capacity=5000 " KEY),                /* other variant */
        tu_filter("variant=standard capacity=5000 hash=siphash13 " KEY), /* other hash */
        tu_filter("variant=standard capacity=5000 fpr=0.001 " KEY),      /* other k */
    };
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        tu_add_keys(others[i], "o", 0, 100);
        ck_assert_int_eq(bk_merge(dst, others[i]), BK_EINCOMPAT);
        ck_assert_int_eq(bk_intersect(dst, others[i]), BK_EINCOMPAT);
        ck_assert_msg(bk_last_error()[0], "no detail for case %zu", i);
        ck_assert_msg(tu_same_filter(dst, copy), "case %zu changed dst", i);
        bk_free(others[i]);
    }
    ck_assert_int_eq(bk_merge(NULL, dst), BK_EINVAL);
    ck_assert_int_eq(bk_merge(dst, NULL), BK_EINVAL);
    bk_filter *c1 = tu_filter("variant=counting capacity=100 " KEY);
    bk_filter *c2 = tu_filter("variant=counting capacity=100 " KEY);
    ck_assert_int_eq(bk_intersect(c1, c2), BK_ENOTSUP);
    tu_free_all(c1, c2, dst, copy);
}
END_TEST

START_TEST(intersect_keeps_common_keys)
{
    const char *cfg = "variant=standard capacity=20000 " KEY;
    bk_filter *a = tu_holding(cfg, "x", 0, 6000), *b = tu_holding(cfg, "x", 4000, 10000);
    ck_assert_int_eq(bk_intersect(a, b), BK_OK);
    all_present(a, "x", 4000, 6000);
    char key[32];
    uint64_t gone = 0;
    for (uint64_t i = 0; i < 4000; i++)
        gone += bk_contains(a, key, tu_key(key, sizeof key, "x", i)) == 0;
    ck_assert_uint_gt(gone, 3900); /* keys of one side only mostly vanish */
    tu_free_all(a, b);
}
END_TEST

START_TEST(equal_compares_configuration_and_cells)
{
    const char *cfgs[] = {"variant=standard capacity=2000 " KEY,
                          "variant=counting capacity=2000 " KEY,
                          "variant=scalable capacity=500 " KEY};
    for (int v = 0; v < 3; v++) {
        bk_filter *a = tu_holding(cfgs[v], "x", 0, 3000), *b = tu_holding(cfgs[v], "x", 0, 3000);
        ck_assert_int_eq(bk_equal(a, b), 1);
        ck_assert_int_eq(bk_equal(a, a), 1);
        bk_filter *c = NULL;
        ck_assert_int_eq(bk_copy(a, &c), BK_OK);
        ck_assert_int_eq(bk_equal(a, c), 1);
        /* saved and loaded, and mapped: the same filter */
        char path[] = "/tmp/bk_equal_XXXXXX";
        const int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        bk_filter *l = NULL, *m = NULL;
        ck_assert_int_eq(bk_save(a, path), BK_OK);
        ck_assert_int_eq(bk_load(path, &l), BK_OK);
        ck_assert_int_eq(bk_open_mmap(path, BK_MAP_READONLY, &m), BK_OK);
        ck_assert_int_eq(bk_equal(a, l), 1);
        ck_assert_int_eq(bk_equal(m, a), 1);
        tu_free_all(l, m);
        unlink(path);
        tu_add_keys(c, "y", 0, 1);
        ck_assert_int_eq(bk_equal(a, c), 0); /* one key more */
        ck_assert_int_eq(bk_equal(c, a), 0);
        tu_free_all(b, c);
        /* the same keys under another hash key: other cells */
        b = tu_holding(v == 0   ? "variant=standard capacity=2000"
                       : v == 1 ? "variant=counting capacity=2000"
                                : "variant=scalable capacity=500",
                       "x", 0, 3000);
        ck_assert_int_eq(bk_equal(a, b), 0);
        tu_free_all(a, b);
    }
    /* same cells, other rate: not equal */
    bk_filter *a = tu_filter("capacity=100 fpr=0.01 " KEY),
              *b = tu_filter("capacity=100 fpr=0.02 " KEY);
    ck_assert_int_eq(bk_equal(a, b), 0);
    ck_assert_int_eq(bk_equal(a, NULL), BK_EINVAL);
    ck_assert_int_eq(bk_equal(NULL, b), BK_EINVAL);
    tu_free_all(a, b);
}
END_TEST

Suite *merge_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("merge", "union", &tc);
    tcase_add_test(tc, merge_equals_filter_built_from_both_sets);
    tcase_add_test(tc, counting_merge_saturates_and_removes);
    tcase_add_test(tc, scalable_merge_slice_by_slice);
    tcase_add_test(tc, incompatible_merges_change_nothing);
    tcase_add_test(tc, intersect_keeps_common_keys);
    tcase_add_test(tc, equal_compares_configuration_and_cells);
    return s;
}
