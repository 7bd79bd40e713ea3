/* counting.h - the 4-bit counting filter's descriptor (internal).
 *
 * Concurrency guarantee: every operation may be called from any number of
 * threads at once. Writers (add, remove, clear, merge into) are serialised by
 * a read-write lock inside the filter, lookups share it: add's answer is exact
 * (of threads adding one new key at once exactly one is told it is new), a
 * removal is atomic (its rollback on BK_ENOTFOUND is never seen half done),
 * and counters never move by a lost update. Writers do not scale with threads.
 * Tested under ThreadSanitizer (tests/test_threads.c). */
#ifndef BK_COUNTING_COUNTING_H
#define BK_COUNTING_COUNTING_H

#include "../core/filter_impl.h"

#endif
