/*
 * leaks.h - LeakSanitizer sees the tests' allocations, not Check's.
 *
 * Check keeps a few blocks of its own in each forked test child until it
 * exits; LeakSanitizer reported them as leaks, and matching them against
 * tests/lsan.supp made it start a symbolizer in every test process (0.2 s a
 * test, a minute a sanitizer run). Instead the runner turns leak tracking off
 * (tu_leaks_off in main, inherited by every child) and each test case's first
 * checked fixture turns it on for the test alone (tu_tcase): what a test or
 * the library allocates is tracked, Check's blocks are not. Without
 * LeakSanitizer both are no-ops.
 */
#ifndef BK_TESTS_LEAKS_H
#define BK_TESTS_LEAKS_H

#if defined(__SANITIZE_ADDRESS__)
#define TU_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_LSAN 1
#endif
#endif

#ifdef TU_LSAN
#include <sanitizer/lsan_interface.h>
static inline void tu_leaks_on(void)
{
    __lsan_enable();
}
static inline void tu_leaks_off(void)
{
    __lsan_disable();
}
#else
static inline void tu_leaks_on(void) {}
static inline void tu_leaks_off(void) {}
#endif

#endif
