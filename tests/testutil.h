/*
 * testutil.h - helpers shared by the Check suites: a seeded PRNG (seed printed
 * so a failure can be replayed with BK_TEST_SEED=...), key generators, and a
 * filter constructor that fails the test on error.
 */
#ifndef BK_TESTUTIL_H
#define BK_TESTUTIL_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bloomkit.h"

/* Generous per-test limit: the statistical tests insert ~10^6 keys, several
 * times slower under sanitizers. */
#define BK_TEST_TIMEOUT 600

/* splitmix64 (Steele, Lea & Flood 2014): tiny, good enough for test data. */
static inline uint64_t tu_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Seed from BK_TEST_SEED, else from the clock; printed with the test's name. */
static inline uint64_t tu_seed(const char *what)
{
    const char *env = getenv("BK_TEST_SEED");
    const uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ (uint64_t)clock();
    fprintf(stderr, "[%s] seed %llu (replay with BK_TEST_SEED=%llu)\n", what,
            (unsigned long long)seed, (unsigned long long)seed);
    return seed;
}

/* Key number i of a family: "<family>:<i>". Distinct families never collide. */
static inline size_t tu_key(char *buf, size_t cap, const char *family, uint64_t i)
{
    const int n = snprintf(buf, cap, "%s:%llu", family, (unsigned long long)i);
    return n < 0 ? 0 : (size_t)n;
}

/* A filter from config text, failing the test on any error. */
static inline bk_filter *tu_filter(const char *text)
{
    bk_config cfg;
    char err[256];
    const int rc = bk_config_parse(&cfg, text, err, sizeof err);
    ck_assert_msg(rc == BK_OK, "config '%s': %s", text, err);
    bk_filter *f = NULL;
    const int nrc = bk_new(&cfg, &f);
    ck_assert_msg(nrc == BK_OK, "bk_new(%s): %s", text, bk_strerror(nrc));
    return f;
}

#endif
