/*
 * test_threads.c - concurrent bk_add / bk_contains on standard and scalable
 * filters: writers add disjoint keys and immediately re-check them, readers
 * check keys added before the threads started; no false negative anywhere.
 * Run under ThreadSanitizer by `make check-tsan`.
 */
#include <pthread.h>

#include "suites.h"
#include "testutil.h"

enum { WRITERS = 4, READERS = 2, PER_WRITER = 50000, PRELOADED = 20000 };

typedef struct job {
    bk_filter *f;
    int id;
    uint64_t misses; /* false negatives seen */
    uint64_t errors;
} job;

static void *writer(void *arg)
{
    job *j = arg;
    char key[48];
    for (uint64_t i = 0; i < PER_WRITER; i++) {
        char family[16];
        snprintf(family, sizeof family, "w%d", j->id);
        const size_t len = tu_key(key, sizeof key, family, i);
        if (bk_add(j->f, key, len) < 0)
            j->errors++;
        if (bk_contains(j->f, key, len) != 1)
            j->misses++;
    }
    return NULL;
}

static void *reader(void *arg)
{
    job *j = arg;
    char key[48];
    for (int round = 0; round < 5; round++)
        for (uint64_t i = 0; i < PRELOADED; i++)
            if (bk_contains(j->f, key, tu_key(key, sizeof key, "pre", i)) != 1)
                j->misses++;
    return NULL;
}

static void stress(const char *cfg)
{
    bk_filter *f = tu_filter(cfg);
    char key[48];
    for (uint64_t i = 0; i < PRELOADED; i++)
        bk_add(f, key, tu_key(key, sizeof key, "pre", i));
    pthread_t t[WRITERS + READERS];
    job jobs[WRITERS + READERS];
    for (int i = 0; i < WRITERS + READERS; i++) {
        jobs[i] = (job){f, i, 0, 0};
        ck_assert_int_eq(pthread_create(&t[i], NULL, i < WRITERS ? writer : reader, &jobs[i]), 0);
    }
    for (int i = 0; i < WRITERS + READERS; i++) {
        pthread_join(t[i], NULL);
        ck_assert_uint_eq(jobs[i].misses, 0);
        ck_assert_uint_eq(jobs[i].errors, 0);
    }
    /* After the join every key of every writer is present. */
    for (int w = 0; w < WRITERS; w++) {
        char family[16];
        snprintf(family, sizeof family, "w%d", w);
        for (uint64_t i = 0; i < PER_WRITER; i++)
            ck_assert_int_eq(bk_contains(f, key, tu_key(key, sizeof key, family, i)), 1);
    }
    bk_filter_stats st;
    bk_stats(f, &st);
    fprintf(stderr, "[threads %s] keys %llu, slices %u, fill %.3f\n", cfg,
            (unsigned long long)st.keys, st.slices, st.fill);
    ck_assert_uint_le(st.keys, PRELOADED + WRITERS * PER_WRITER);
    ck_assert_uint_ge(st.keys, (PRELOADED + WRITERS * PER_WRITER) * 98 / 100);
    bk_free(f);
}

START_TEST(standard_concurrent_add_contains)
{
    stress("variant=standard capacity=300000 fpr=0.01");
}
END_TEST

/* Small first slice: the writers grow the chain while readers read it. */
START_TEST(scalable_concurrent_growth)
{
    stress("variant=scalable capacity=1000 fpr=0.01");
}
END_TEST

Suite *threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("stress");
    tcase_set_timeout(tc, BK_TEST_TIMEOUT);
    tcase_add_test(tc, standard_concurrent_add_contains);
    tcase_add_test(tc, scalable_concurrent_growth);
    suite_add_tcase(s, tc);
    return s;
}
