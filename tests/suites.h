/* suites.h - every Check suite, one per module, listed once: run_tests.c runs
 * them all, in this order. A suite `name` is `Suite *name_suite(void)`, in
 * tests/test_name.c. */
#ifndef BK_SUITES_H
#define BK_SUITES_H

#include <check.h>

/* clang-format off */
#define BK_SUITES(X) \
    X(siphash) \
    X(hash) \
    X(sizing) \
    X(config) \
    X(standard) \
    X(counting) \
    X(scalable) \
    X(contract) \
    X(alloc) \
    X(threads) \
    X(io) \
    X(mmap) \
    X(crash) \
    X(merge) \
    X(golden) \
    X(cli) \
    X(batch) \
    X(blocked) \
    X(lua) \
    X(import) \
    X(props) \
    X(faults) \
    X(experiment) \
    X(bound) \
    X(writers) \
    X(window) \
    X(cuckoo) \
    X(expandable) \
    X(pinned) \
    X(url) \
    X(redisbloom) \
    X(rbfilter) \
    X(errors)

/* clang-format on */

#define BK_SUITE_DECLARE_(name) Suite *name##_suite(void);
BK_SUITES(BK_SUITE_DECLARE_)
#undef BK_SUITE_DECLARE_

#endif
