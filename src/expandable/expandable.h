/* expandable.h - the expandable filter's descriptor (internal).
 *
 * Concurrency guarantee: as the cuckoo filter's. Every operation may be
 * called from any number of threads at once: writers (add, and the
 * doubling an add makes) are serialised by a read-write lock inside the
 * filter and lookups share it, so a doubling is one step to every other
 * thread and add's answer is exact. Tested under ThreadSanitizer
 * (tests/test_threads.c runs every variant the registry lists). */
#ifndef BK_EXPANDABLE_EXPANDABLE_H
#define BK_EXPANDABLE_EXPANDABLE_H

#include "../core/filter_impl.h"

#endif
