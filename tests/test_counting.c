/*
 * test_counting.c - 4-bit counters: exact undo of add by remove, sticky
 * saturation, no underflow, no false negative after mass removal.
 */
#include <stdlib.h>
#include <string.h>

#include "core/filter_impl.h"
#include "suites.h"
#include "testutil.h"

/* A private copy of the counter array, to compare states byte for byte. */
static const uint8_t *cells_of(const bk_filter *f, uint64_t *n)
{
    bk_slice_view v;
    ck_assert_int_eq(f->cfg.variant, BK_VARIANT_COUNTING);
    f->ops->slice_view(f, 0, &v);
    *n = v.nbytes;
    return v.data;
}

static uint8_t *snapshot(const bk_filter *f, uint64_t *n)
{
    const uint8_t *cells = cells_of(f, n);
    uint8_t *copy = malloc(*n);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, cells, *n);
    return copy;
}

/* A counting filter for 10000 keys holding 5000 of family, and a copy of its
 * counters in *before (*n bytes). */
static bk_filter *filled(const char *family, uint8_t **before, uint64_t *n)
{
    bk_filter *f = tu_holding("variant=counting capacity=10000 fpr=0.01", family, 0, 5000);
    *before = snapshot(f, n);
    return f;
}

static int same_as(const bk_filter *f, const uint8_t *snap, uint64_t n)
{
    uint64_t m;
    const uint8_t *cells = cells_of(f, &m);
    return m == n && memcmp(cells, snap, n) == 0;
}

START_TEST(memory_is_four_times_standard)
{
    bk_filter *c = tu_filter("variant=counting capacity=100000 fpr=0.001");
    bk_filter *s = tu_filter("variant=standard capacity=100000 fpr=0.001");
    bk_filter_stats cs, ss;
    bk_stats(c, &cs);
    bk_stats(s, &ss);
    ck_assert_uint_eq(cs.bits, ss.bits);
    ck_assert_uint_eq(cs.k, ss.k);
    ck_assert_uint_le(cs.bytes, 4 * ss.bytes);
    ck_assert_uint_ge(cs.bytes, 4 * ss.bytes - 4);
    bk_free(c);
    bk_free(s);
}
END_TEST

START_TEST(add_then_remove_restores_every_counter)
{
    uint64_t n;
    uint8_t *before;
    bk_filter *f = filled("base", &before, &n);
    char key[32];
    bk_filter_stats sa, sb;
    bk_stats(f, &sa);
    for (uint64_t i = 0; i < 300; i++) {
        const size_t len = tu_key(key, sizeof key, "extra", i);
        bk_add(f, key, len);
        ck_assert_int_eq(bk_remove(f, key, len), BK_OK);
        ck_assert_msg(same_as(f, before, n), "counters differ after add+remove of %s", key);
    }
    bk_stats(f, &sb);
    ck_assert_uint_eq(sa.keys, sb.keys);
    ck_assert_uint_eq(sa.set_bits, sb.set_bits);
    free(before);
    bk_free(f);
}
END_TEST

START_TEST(saturated_counters_are_sticky)
{
    bk_filter *f = tu_holding("variant=counting capacity=1000 fpr=0.01", "other", 0, 500);
    /* a hot key the filter does not hold yet: a false positive among the
     * 500 (its key is the seed's) would make its first add answer 0 */
    char hot[32];
    size_t hot_len = 0;
    for (unsigned j = 0; hot_len == 0 || bk_contains(f, hot, hot_len); j++)
        hot_len = (size_t)snprintf(hot, sizeof hot, "hot%u", j);
    for (int i = 0; i < 20; i++)
        ck_assert_int_eq(bk_add(f, hot, hot_len), i == 0 ? 1 : 0);
    bk_filter_stats st;
    bk_stats(f, &st);
    ck_assert_uint_ge(st.saturated, 1);
    for (int i = 0; i < 20; i++)
        ck_assert_int_eq(bk_remove(f, hot, hot_len), BK_OK);
    ck_assert_int_eq(bk_contains(f, hot, hot_len), 1); /* sticky: still present */
    ck_assert_uint_eq(tu_count_present(f, "other", 0, 500), 500);
    bk_stats(f, &st);
    ck_assert_uint_ge(st.saturated, 1);
    bk_free(f);
}
END_TEST

START_TEST(removing_an_absent_key_changes_nothing)
{
    uint64_t n;
    uint8_t *before;
    bk_filter *f = filled("in", &before, &n);
    char key[32];
    int refused = 0;
    for (uint64_t i = 0; i < 2000; i++) {
        const size_t len = tu_key(key, sizeof key, "never", i);
        if (bk_contains(f, key, len))
            continue; /* a false positive: removal would be allowed */
        ck_assert_int_eq(bk_remove(f, key, len), BK_ENOTFOUND);
        ck_assert_msg(same_as(f, before, n), "refused removal of %s changed counters", key);
        refused++;
    }
    ck_assert_int_gt(refused, 1900);
    /* Removing a key twice after adding it once: the second is refused. */
    bk_filter *g = tu_filter("variant=counting capacity=1000");
    bk_add(g, "once", 4);
    ck_assert_int_eq(bk_remove(g, "once", 4), BK_OK);
    ck_assert_int_eq(bk_remove(g, "once", 4), BK_ENOTFOUND);
    bk_filter_stats st;
    bk_stats(g, &st);
    ck_assert_uint_eq(st.set_bits, 0);
    ck_assert_uint_eq(st.keys, 0);
    free(before);
    bk_free(f);
    bk_free(g);
}
END_TEST

START_TEST(mass_removal_leaves_no_false_negative)
{
    uint64_t seed = tu_seed("mass_removal_leaves_no_false_negative");
    enum { N = 100000 };
    bk_filter *f = tu_filter("variant=counting capacity=100000 fpr=0.01");
    char key[32];
    for (uint64_t i = 0; i < N; i++)
        ck_assert_int_ge(bk_add(f, key, tu_key(key, sizeof key, "k", i)), 0);
    /* Remove a random half: a Fisher-Yates prefix of a permutation. */
    uint32_t *perm = malloc(N * sizeof *perm);
    ck_assert_ptr_nonnull(perm);
    for (uint32_t i = 0; i < N; i++)
        perm[i] = i;
    for (uint32_t i = 0; i < N / 2; i++) {
        const uint32_t j = i + (uint32_t)(tu_next(&seed) % (N - i));
        const uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
        ck_assert_int_eq(bk_remove(f, key, tu_key(key, sizeof key, "k", perm[i])), BK_OK);
    }
    for (uint32_t i = N / 2; i < N; i++)
        ck_assert_msg(bk_contains(f, key, tu_key(key, sizeof key, "k", perm[i])) == 1,
                      "kept key %u reported absent", perm[i]);
    bk_filter_stats st;
    bk_stats(f, &st);
    ck_assert_uint_eq(st.keys, N / 2);
    free(perm);
    bk_free(f);
}
END_TEST

START_TEST(add_counts_a_multiset)
{
    bk_filter *f = tu_filter("variant=counting capacity=1000");
    tu_assert_multiset(f, "dup");
    bk_free(f);
}
END_TEST

Suite *counting_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("counting", "counters", &tc);
    tcase_add_test(tc, memory_is_four_times_standard);
    tcase_add_test(tc, add_then_remove_restores_every_counter);
    tcase_add_test(tc, saturated_counters_are_sticky);
    tcase_add_test(tc, removing_an_absent_key_changes_nothing);
    tcase_add_test(tc, mass_removal_leaves_no_false_negative);
    tcase_add_test(tc, add_counts_a_multiset);
    return s;
}
