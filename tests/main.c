/*
 * main.c - runs every suite. Select with Check's own variables:
 * CK_RUN_SUITE=counting, CK_RUN_CASE=..., CK_FORK=no, CK_VERBOSITY=verbose.
 */
#include <stdlib.h>

#include "suites.h"

typedef Suite *(*suite_fn)(void);

/* clang-format off */
static const suite_fn all_suites[] = {
    siphash_suite,
    hash_suite,
    sizing_suite,
    config_suite,
    standard_suite,
    counting_suite,
    scalable_suite,
    contract_suite,
    alloc_suite,
    threads_suite,
    io_suite,
    mmap_suite,
    crash_suite,
    merge_suite,
    golden_suite,
    cli_suite,
    batch_suite,
    blocked_suite,
    redis_suite,
    props_suite,
    faults_suite,
    experiment_suite,
    bound_suite,
    writers_suite,
    window_suite,
    pinned_suite,
    url_suite,
};
/* clang-format on */

int main(void)
{
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < sizeof all_suites / sizeof *all_suites; i++)
        srunner_add_suite(sr, all_suites[i]());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
