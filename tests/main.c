/*
 * main.c - runs every suite. Select with Check's own variables:
 * CK_RUN_SUITE=counting, CK_RUN_CASE=..., CK_FORK=no, CK_VERBOSITY=verbose.
 */
#include <stdlib.h>

#include "suites.h"

typedef Suite *(*suite_fn)(void);

#define BK_SUITE_ENTRY_(name) name##_suite,
static const suite_fn all_suites[] = {BK_SUITES(BK_SUITE_ENTRY_)};
#undef BK_SUITE_ENTRY_

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
