/*
 * test_batch.c - bk_add_batch / bk_contains_batch give exactly what single
 * calls give, in order, for every variant: same results (a key repeated in a
 * batch is new only once) and byte-identical filters afterwards.
 */
#include "suites.h"
#include "testutil.h"

#define KEY "key=0f1e2d3c4b5a69788796a5b4c3d2e1f0"

START_TEST(batches_equal_single_calls)
{
    const char *cfgs[] = {"variant=standard capacity=20000 " KEY,
                          "variant=counting capacity=20000 " KEY,
                          "variant=scalable capacity=2000 " KEY};
    uint64_t seed = tu_seed("batches_equal_single_calls");
    enum { N = 30000 };
    static char keybuf[N][32];
    static const void *keys[N];
    static size_t lens[N];
    static int got[N];
    for (size_t i = 0; i < N; i++) {
        /* Keys drawn from a smaller range: repeats, also within one batch. */
        lens[i] = tu_key(keybuf[i], sizeof keybuf[i], "b", tu_next(&seed) % 20000);
        if (i % 997 == 0)
            lens[i] = 0; /* the empty key too */
        keys[i] = keybuf[i];
    }
    const size_t sizes[] = {0, 1, 15, 16, 17, 1000, N};
    for (int v = 0; v < 3; v++) {
        bk_filter *single = tu_filter(cfgs[v]), *batch = tu_filter(cfgs[v]);
        size_t done = 0;
        for (size_t s = 0; done < N; s = (s + 1) % (sizeof sizes / sizeof *sizes)) {
            const size_t n = sizes[s] < N - done ? sizes[s] : N - done;
            ck_assert_int_eq(bk_add_batch(batch, keys + done, lens + done, n, got + done), BK_OK);
            for (size_t i = done; i < done + n; i++)
                ck_assert_msg(got[i] == bk_add(single, keys[i], lens[i]), "%s: add result %zu",
                              cfgs[v], i);
            done += n;
        }
        ck_assert_msg(tu_same_filter(single, batch), "%s: filters differ", cfgs[v]);
        ck_assert_int_eq(bk_contains_batch(batch, keys, lens, N, got), BK_OK);
        for (size_t i = 0; i < N; i++)
            ck_assert_int_eq(got[i], 1);
        char other[N / 10][32];
        const void *okeys[N / 10];
        size_t olens[N / 10];
        for (size_t i = 0; i < N / 10; i++) {
            olens[i] = tu_key(other[i], sizeof other[i], "absent", i);
            okeys[i] = other[i];
        }
        ck_assert_int_eq(bk_contains_batch(batch, okeys, olens, N / 10, got), BK_OK);
        for (size_t i = 0; i < N / 10; i++)
            ck_assert_int_eq(got[i], bk_contains(single, okeys[i], olens[i]));
        bk_free(single);
        bk_free(batch);
    }
}
END_TEST

START_TEST(batch_arguments_are_checked)
{
    bk_filter *f = tu_filter("capacity=100");
    const void *keys[2] = {"a", NULL};
    size_t lens[2] = {1, 3};
    int res[2] = {-7, -7};
    ck_assert_int_eq(bk_add_batch(NULL, keys, lens, 2, res), BK_EINVAL);
    ck_assert_int_eq(bk_add_batch(f, NULL, lens, 2, res), BK_EINVAL);
    ck_assert_int_eq(bk_add_batch(f, keys, NULL, 2, res), BK_EINVAL);
    ck_assert_int_eq(bk_add_batch(f, keys, lens, 2, NULL), BK_EINVAL);
    ck_assert_int_eq(bk_add_batch(f, keys, lens, 2, res), BK_EINVAL); /* keys[1] NULL, len 3 */
    ck_assert_int_eq(bk_contains(f, "a", 1), 0);                      /* nothing applied */
    ck_assert_int_eq(res[0], -7);
    ck_assert_int_eq(bk_contains_batch(NULL, keys, lens, 1, res), BK_EINVAL);
    ck_assert_int_eq(bk_add_batch(f, NULL, NULL, 0, NULL), BK_OK);
    ck_assert_int_eq(bk_add_batch(f, keys, lens, 1, res), BK_OK);
    ck_assert_int_eq(res[0], 1);
    bk_free(f);
}
END_TEST

Suite *batch_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("batch", "order", &tc);
    tcase_add_test(tc, batches_equal_single_calls);
    tcase_add_test(tc, batch_arguments_are_checked);
    return s;
}
