/*
 * run_tests.c - runs every suite. Select with Check's own variables:
 * CK_RUN_SUITE=counting, CK_RUN_CASE=..., CK_FORK=no, CK_VERBOSITY=verbose.
 *
 * Every random draw of a run comes from one seed, BK_TEST_SEED (drawn from
 * the clock when not given), set here before any test process is forked and
 * printed; after the run each failure is printed with the command that
 * replays it: the seed, its suite and its case.
 *
 * The suites that hash keys in batches (siphash, hash, batch) then run again
 * on every other multi-key hash path this CPU has (BLOOMKIT_SIMD=avx2, scalar:
 * src/common/siphash_many.c), so that each build of the suites checks every
 * path the machine can take. BK_TEST_FAST=1 (make check-fast) runs the rest
 * once, on the default path, without the suites that start servers.
 * BK_TEST_SHARD=i/n runs every n-th suite from the i-th (0-based) only, so
 * that n processes together run them all, side by side (make check-fast
 * runs two: Check runs one test at a time).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/siphash.h"
#include "leaks.h"
#include "suites.h"

typedef Suite *(*suite_fn)(void);

#define BK_SUITE_ENTRY_(name) name##_suite,
static const suite_fn all_suites[] = {BK_SUITES(BK_SUITE_ENTRY_)};
#undef BK_SUITE_ENTRY_
#define BK_SUITE_NAME_(name) #name,
static const char *const suite_names[] = {BK_SUITES(BK_SUITE_NAME_)};
#undef BK_SUITE_NAME_

/* The suites that start servers (redis-server, a cluster): left out of
 * `make check-fast` (BK_TEST_FAST=1), the contributor's loop. */
static int starts_servers(const char *name)
{
    return strcmp(name, "lua") == 0 || strcmp(name, "import") == 0;
}

/* This process's share (BK_TEST_SHARD=k/n): suites k, k + n, ...; and
 * the other hash paths' runs in share 0 only. Unset: everything. */
static unsigned long shard_k, shard_n = 1;

static void read_shard(void)
{
    const char *env = getenv("BK_TEST_SHARD");
    if (!env || !*env)
        return;
    char *end;
    shard_k = strtoul(env, &end, 10);
    shard_n = *end == '/' ? strtoul(end + 1, &end, 10) : 0;
    if (*end || shard_n == 0 || shard_k >= shard_n) {
        fprintf(stderr, "tests: BK_TEST_SHARD=%s is not k/n with k < n; running every suite\n",
                env);
        shard_k = 0;
        shard_n = 1;
    }
}

static int in_shard(size_t i)
{
    return i % shard_n == shard_k;
}

/* The run's seed: BK_TEST_SEED as given, or one drawn and exported. */
static unsigned long long run_seed(void)
{
    const char *env = getenv("BK_TEST_SEED");
    if (env && *env)
        return strtoull(env, NULL, 0);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    const unsigned long long seed =
        ((unsigned long long)ts.tv_sec * 1000000007ULL ^ (unsigned long long)ts.tv_nsec ^
         (unsigned long long)getpid() << 32) &
        0xffffffffffffULL; /* short enough to type */
    char text[32];
    snprintf(text, sizeof text, "%llu", seed);
    setenv("BK_TEST_SEED", text, 1);
    return seed;
}

/* "CK_RUN_SUITE=NAME " for a failure in tests/test_NAME.c, which holds
 * suite NAME; "" for one in a shared helper (its case name selects it). */
static const char *suite_of(const char *file, char *buf, size_t len)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    buf[0] = '\0';
    if (strncmp(base, "test_", 5) == 0)
        snprintf(buf, len, "CK_RUN_SUITE=%.*s ", (int)strcspn(base + 5, "."), base + 5);
    return buf;
}

/* Runs sr; prints each failure with the command that replays it (simd: the
 * BLOOMKIT_SIMD the run had, or NULL). Returns the number of failures. */
static int run(SRunner *sr, unsigned long long seed, const char *simd, const char *argv0)
{
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    TestResult **results = failed ? srunner_failures(sr) : NULL;
    for (int i = 0; i < failed && results; i++) {
        char suite[64];
        fprintf(stderr, "replay %s:%d: %s%s%sBK_TEST_SEED=%llu %sCK_RUN_CASE=%s %s\n",
                tr_lfile(results[i]), tr_lno(results[i]), simd ? "BLOOMKIT_SIMD=" : "",
                simd ? simd : "", simd ? " " : "", seed,
                suite_of(tr_lfile(results[i]), suite, sizeof suite), tr_tcname(results[i]), argv0);
    }
    free(results);
    srunner_free(sr);
    return failed;
}

/* The batch-hashing suites on every path but the one the first run took;
 * nothing when CK_RUN_SUITE names another suite. */
static int other_paths(unsigned long long seed, const char *argv0)
{
    const char *only = getenv("CK_RUN_SUITE");
    if (only && strcmp(only, "siphash") != 0 && strcmp(only, "hash") != 0 &&
        strcmp(only, "batch") != 0)
        return 0;
    const char *paths[8];
    const size_t n = bk_sip_many_paths(paths, 8);
    const char *first = bk_sip_many_path();
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(paths[i], first) == 0)
            continue;
        fprintf(stderr, "tests: siphash, hash and batch again on BLOOMKIT_SIMD=%s\n", paths[i]);
        setenv("BLOOMKIT_SIMD", paths[i], 1);
        bk_sip_many_rechoose();
        SRunner *sr = srunner_create(siphash_suite());
        srunner_add_suite(sr, hash_suite());
        srunner_add_suite(sr, batch_suite());
        failed += run(sr, seed, paths[i], argv0);
    }
    return failed;
}

int main(int argc, char **argv)
{
    (void)argc;
    const unsigned long long seed = run_seed();
    fprintf(stderr, "tests: seed %llu (BK_TEST_SEED=%llu replays this run)\n", seed, seed);
    tu_leaks_off(); /* each test turns it on for itself (tu_tcase) */
    read_shard();
    const char *fast = getenv("BK_TEST_FAST");
    const int quick = fast && strcmp(fast, "1") == 0;
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < sizeof all_suites / sizeof *all_suites; i++)
        if ((!quick || !starts_servers(suite_names[i])) && in_shard(i))
            srunner_add_suite(sr, all_suites[i]());
    int failed = run(sr, seed, getenv("BLOOMKIT_SIMD"), argv[0]);
    fprintf(stderr, "tests: multi-key hash path %s\n", bk_sip_many_path());
    if (quick)
        fprintf(stderr, "tests: BK_TEST_FAST=1: no server suites (lua, import), no other hash "
                        "path; make check runs them\n");
    else if (shard_k == 0)
        failed += other_paths(seed, argv[0]);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
