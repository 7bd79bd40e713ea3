/*
 * test_batch.c - bk_add_batch / bk_contains_batch give exactly what single
 * calls give, in order, for every variant: same results (a key repeated in a
 * batch is new only once) and byte-identical filters afterwards.
 */
#include "suites.h"
#include "testutil.h"

#define KEY "key=0f1e2d3c4b5a69788796a5b4c3d2e1f0"

/* Which key of a family each of n adds names: every key twice, at places
 * drawn from the seed (sometimes within one batch). Twice, not a random
 * number of times: a cuckoo filter keeps a copy per add in a key's two
 * buckets, and keys drawn with repeats as many as a Poisson draw gives
 * (nine, say) can want more slots than their buckets share. */
static uint64_t *twice_each(uint64_t *seed, size_t n)
{
    uint64_t *id = malloc(n * sizeof *id);
    ck_assert_ptr_nonnull(id);
    for (size_t i = 0; i < n; i++)
        id[i] = i / 2;
    for (size_t i = n; i > 1; i--) { /* Fisher-Yates */
        const size_t j = (size_t)(tu_next(seed) % i);
        const uint64_t t = id[i - 1];
        id[i - 1] = id[j];
        id[j] = t;
    }
    return id;
}

START_TEST(batches_equal_single_calls)
{
    /* capacity: a chain grows to several slices; a single array fills up */
    char cfgs[16][TU_CFG_MAX];
    const size_t ncfgs = tu_every_variant(cfgs, 16, 6000, 30000, KEY);
    uint64_t seed = tu_seed("batches_equal_single_calls");
    enum { N = 30000 };
    static char keybuf[N][32];
    static const void *keys[N];
    static size_t lens[N];
    static int got[N];
    uint64_t *id = twice_each(&seed, N);
    for (size_t i = 0; i < N; i++) {
        /* every key twice (also within one batch), the empty key often */
        lens[i] = tu_key(keybuf[i], sizeof keybuf[i], "b", id[i]);
        if (i % 997 == 0)
            lens[i] = 0; /* the empty key too */
        keys[i] = keybuf[i];
    }
    free(id);
    const size_t sizes[] = {0, 1, 15, 16, 17, 1000, N};
    for (size_t v = 0; v < ncfgs; v++) {
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

/* bk_add_batch_mt on 1..4 threads gives every key the answer bk_add_batch
 * gives, and leaves a byte-identical filter, for every variant and layout:
 * blocked standard and scalable filters split their adds by block (the
 * chain also through its growth, when batches are applied in order), the
 * others apply hashed keys in order. Keys repeat, also within one batch, so
 * a wrong order would show as a wrong "new". Lookups likewise. */
START_TEST(threaded_batches_equal_one_thread)
{
    enum { N = 100000 }; /* one call past the pipeline's 65,536 keys a run */
    char cfgs[16][TU_CFG_MAX];
    const size_t ncfgs = tu_every_variant(cfgs, 16, 20000, N, KEY);
    static char keybuf[N][32];
    static const void *keys[N];
    static size_t lens[N];
    static int want[N], got[N];
    uint64_t seed = tu_seed("threaded_batches_equal_one_thread");
    uint64_t *id = twice_each(&seed, N);
    for (size_t i = 0; i < N; i++) {
        lens[i] = tu_key(keybuf[i], sizeof keybuf[i], "t", id[i]);
        keys[i] = keybuf[i];
    }
    free(id);
    for (size_t v = 0; v < ncfgs; v++) {
        bk_filter *one = tu_filter(cfgs[v]);
        ck_assert_int_eq(bk_add_batch(one, keys, lens, N, want), BK_OK);
        for (unsigned nt = 1; nt <= 4; nt++) {
            bk_workers *w;
            ck_assert_int_eq(bk_workers_new(nt, &w), BK_OK);
            ck_assert_uint_eq(bk_workers_threads(w), nt);
            bk_filter *f = tu_filter(cfgs[v]);
            /* batches of several sizes, one of them past a call's chunk */
            const size_t sizes[] = {1, 7, 5000, 20000, N};
            size_t done = 0;
            for (size_t s = 0; done < N; s = (s + 1) % 5) {
                const size_t n = sizes[s] < N - done ? sizes[s] : N - done;
                ck_assert_int_eq(bk_add_batch_mt(f, w, keys + done, lens + done, n, got + done),
                                 BK_OK);
                done += n;
            }
            for (size_t i = 0; i < N; i++)
                ck_assert_msg(got[i] == want[i], "%s, %u threads: key %zu got %d, want %d", cfgs[v],
                              nt, i, got[i], want[i]);
            ck_assert_msg(tu_same_filter(one, f), "%s, %u threads: filters differ", cfgs[v], nt);
            ck_assert_int_eq(bk_contains_batch_mt(f, w, keys, lens, N, got), BK_OK);
            for (size_t i = 0; i < N; i++)
                ck_assert_int_eq(got[i], 1);
            bk_free(f);
            bk_workers_free(w);
        }
        bk_free(one);
    }
}
END_TEST

/* A chain that reaches max_bytes part-way through a batch: on every pool
 * size the call fails as bk_add_batch does, at the same key, with the same
 * answers before it, the same code for the rest, and the same filter. */
START_TEST(threaded_batch_failure_equals_one_thread)
{
    const char *cfg = "variant=scalable layout=blocked capacity=2000 max_bytes=32k " KEY;
    enum { N = 40000 };
    static char keybuf[N][32];
    static const void *keys[N];
    static size_t lens[N];
    static int want[N], got[N];
    for (size_t i = 0; i < N; i++) {
        lens[i] = tu_key(keybuf[i], sizeof keybuf[i], "f", i % 30000);
        keys[i] = keybuf[i];
    }
    bk_filter *one = tu_filter(cfg);
    const int rc = bk_add_batch(one, keys, lens, N, want);
    ck_assert_int_lt(rc, 0);
    size_t failed = 0;
    while (want[failed] >= 0)
        failed++;
    ck_assert_msg(failed > 1000 && failed < N, "failed at key %zu", failed);
    for (unsigned nt = 1; nt <= 3; nt++) {
        bk_workers *w;
        ck_assert_int_eq(bk_workers_new(nt, &w), BK_OK);
        bk_filter *f = tu_filter(cfg);
        ck_assert_int_eq(bk_add_batch_mt(f, w, keys, lens, N, got), rc);
        for (size_t i = 0; i < N; i++)
            ck_assert_msg(got[i] == want[i], "%u threads: key %zu got %d, want %d", nt, i, got[i],
                          want[i]);
        ck_assert_msg(tu_same_filter(one, f), "%u threads: filters differ", nt);
        bk_free(f);
        bk_workers_free(w);
    }
    bk_free(one);
}
END_TEST

START_TEST(threaded_batch_arguments_are_checked)
{
    bk_workers *w = (bk_workers *)1;
    ck_assert_int_eq(bk_workers_new(BK_WORKERS_MAX + 1, &w), BK_EINVAL);
    ck_assert_ptr_null(w);
    ck_assert_int_eq(bk_workers_new(2, NULL), BK_EINVAL);
    ck_assert_int_eq(bk_workers_new(0, &w), BK_OK); /* as many as the CPUs */
    ck_assert_uint_ge(bk_workers_cpus(), 1);
    ck_assert_uint_le(bk_workers_cpus(), BK_WORKERS_MAX);
    ck_assert_uint_eq(bk_workers_threads(w), bk_workers_cpus());
    ck_assert_uint_eq(bk_workers_threads(NULL), 1);
    ck_assert_int_eq(bk_workers_help(w), 0); /* no call running */
    ck_assert_int_eq(bk_workers_help(NULL), 0);
    bk_filter *f = tu_filter("layout=blocked capacity=100");
    const void *keys[2] = {"a", NULL};
    size_t lens[2] = {1, 3};
    int res[2] = {-7, -7};
    ck_assert_int_eq(bk_add_batch_mt(NULL, w, keys, lens, 2, res), BK_EINVAL);
    ck_assert_int_eq(bk_add_batch_mt(f, w, keys, lens, 2, res), BK_EINVAL); /* keys[1] */
    ck_assert_int_eq(bk_contains_batch_mt(f, w, keys, lens, 2, res), BK_EINVAL);
    ck_assert_int_eq(res[0], -7);
    ck_assert_int_eq(bk_contains(f, "a", 1), 0); /* nothing applied */
    ck_assert_int_eq(bk_add_batch_mt(f, w, keys, lens, 1, res), BK_OK);
    ck_assert_int_eq(res[0], 1);
    ck_assert_int_eq(bk_add_batch_mt(f, NULL, keys, lens, 1, res), BK_OK); /* one thread */
    ck_assert_int_eq(res[0], 0);
    bk_workers *two;
    ck_assert_int_eq(bk_workers_new(2, &two), BK_OK); /* a pool that never ran a call */
    ck_assert_int_eq(bk_add_batch_mt(f, two, NULL, NULL, 0, NULL), BK_OK);
    ck_assert_int_eq(bk_contains_batch_mt(f, two, NULL, NULL, 0, NULL), BK_OK);
    bk_workers_free(two);
    bk_free(f);
    bk_workers_free(w);
    bk_workers_free(NULL);
}
END_TEST

/* A filter whose caller promised one writer (bk_set_single_writer) adds
 * with plain stores: every answer, the cells and the counts are those of a
 * filter without the promise, one key at a time and in batches on 1..3
 * threads, for every variant. */
START_TEST(single_writer_changes_no_answer)
{
    enum { N = 40000 };
    char cfgs[16][TU_CFG_MAX];
    const size_t ncfgs = tu_every_variant(cfgs, 16, 10000, N, KEY);
    static char keybuf[N][32];
    static const void *keys[N];
    static size_t lens[N];
    static int want[N], got[N];
    uint64_t seed = tu_seed("single_writer_changes_no_answer");
    uint64_t *id = twice_each(&seed, N);
    for (size_t i = 0; i < N; i++) {
        lens[i] = tu_key(keybuf[i], sizeof keybuf[i], "s", id[i]);
        keys[i] = keybuf[i];
    }
    free(id);
    ck_assert_int_eq(bk_set_single_writer(NULL, 1), BK_EINVAL);
    for (size_t v = 0; v < ncfgs; v++) {
        bk_filter *shared = tu_filter(cfgs[v]);
        for (size_t i = 0; i < N; i++)
            want[i] = bk_add(shared, keys[i], lens[i]);
        bk_filter_stats ws, gs;
        ck_assert_int_eq(bk_stats(shared, &ws), BK_OK);
        for (unsigned nt = 0; nt <= 3; nt++) { /* 0: one key at a time */
            bk_filter *one = tu_filter(cfgs[v]);
            ck_assert_int_eq(bk_set_single_writer(one, 1), BK_OK);
            bk_workers *w = NULL;
            if (nt) {
                ck_assert_int_eq(bk_workers_new(nt, &w), BK_OK);
                ck_assert_int_eq(bk_add_batch_mt(one, w, keys, lens, N, got), BK_OK);
            } else {
                for (size_t i = 0; i < N; i++)
                    got[i] = bk_add(one, keys[i], lens[i]);
            }
            for (size_t i = 0; i < N; i++)
                ck_assert_msg(got[i] == want[i], "%s, %u threads: key %zu got %d, want %d", cfgs[v],
                              nt, i, got[i], want[i]);
            ck_assert_msg(tu_same_filter(shared, one), "%s, %u threads: filters differ", cfgs[v],
                          nt);
            ck_assert_int_eq(bk_stats(one, &gs), BK_OK);
            ck_assert_uint_eq(gs.keys, ws.keys);
            ck_assert_uint_eq(gs.set_bits, ws.set_bits);
            bk_filter *ref;
            ck_assert_int_eq(bk_copy(shared, &ref), BK_OK);
            ck_assert_int_eq(bk_set_single_writer(one, 0), BK_OK); /* withdrawn: still exact */
            ck_assert_int_eq(bk_add(one, "after", 5), bk_add(ref, "after", 5));
            ck_assert_msg(tu_same_filter(ref, one), "%s: filters differ after", cfgs[v]);
            bk_free(ref);
            bk_free(one);
            bk_workers_free(w);
        }
        bk_free(shared);
    }
}
END_TEST

Suite *batch_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("batch", "order", &tc);
    tcase_add_test(tc, batches_equal_single_calls);
    tcase_add_test(tc, batch_arguments_are_checked);
    tcase_add_test(tc, threaded_batches_equal_one_thread);
    tcase_add_test(tc, threaded_batch_failure_equals_one_thread);
    tcase_add_test(tc, threaded_batch_arguments_are_checked);
    tcase_add_test(tc, single_writer_changes_no_answer);
    return s;
}
