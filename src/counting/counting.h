/* counting.h - the 4-bit counting filter's constructor (internal). */
#ifndef BK_COUNTING_COUNTING_H
#define BK_COUNTING_COUNTING_H

#include "../common/filter_impl.h"

/* bk_filter_create_fn for variant=counting. */
int bk_counting_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out);

/* The counter array of a counting filter (read-only view, owned by f) and its
 * size in bytes; NULL if f is not a counting filter. */
const uint8_t *bk_counting_cells(const bk_filter *f, uint64_t *nbytes);

#endif
