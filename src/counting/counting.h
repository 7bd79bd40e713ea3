/* counting.h - the 4-bit counting filter's constructor (internal).
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

#include "../common/filter_impl.h"

/* bk_filter_create_fn / bk_filter_adopt_fn for variant=counting. */
int bk_counting_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out);
int bk_counting_plan(const bk_config *cfg, bk_plan *out);
int bk_counting_adopt(const bk_config *cfg, const bk_allocator *a, const bk_slice_view *slices,
                      uint32_t n, int borrowed, bk_filter **out);

#endif
