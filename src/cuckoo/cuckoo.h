/* cuckoo.h - the cuckoo filter's descriptor (internal).
 *
 * Concurrency guarantee: every operation may be called from any number of
 * threads at once. Writers (add, remove, clear) are serialised by a
 * read-write lock inside the filter and lookups share it: an add and the
 * relocations it makes are one step to every other thread, and add's answer
 * is exact (of threads adding one new key at once exactly one is told it is
 * new). Writers do not scale with threads. Tested under ThreadSanitizer
 * (tests/test_threads.c runs every variant the registry lists). */
#ifndef BK_CUCKOO_CUCKOO_H
#define BK_CUCKOO_CUCKOO_H

#include "../core/filter_impl.h"

#endif
