/* suites.h - every Check suite, one per module; main.c runs them all. */
#ifndef BK_SUITES_H
#define BK_SUITES_H

#include <check.h>

Suite *siphash_suite(void);
Suite *hash_suite(void);
Suite *sizing_suite(void);
Suite *config_suite(void);
Suite *standard_suite(void);
Suite *counting_suite(void);
Suite *scalable_suite(void);
Suite *contract_suite(void);
Suite *alloc_suite(void);
Suite *threads_suite(void);
Suite *io_suite(void);
Suite *mmap_suite(void);
Suite *crash_suite(void);
Suite *merge_suite(void);
Suite *golden_suite(void);
Suite *cli_suite(void);
Suite *batch_suite(void);
Suite *blocked_suite(void);
Suite *redis_suite(void);
Suite *props_suite(void);
Suite *faults_suite(void);
Suite *experiment_suite(void);
Suite *bound_suite(void);
Suite *writers_suite(void);
Suite *window_suite(void);
Suite *pinned_suite(void);
Suite *url_suite(void);

#endif
