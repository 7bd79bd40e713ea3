/* counting.h - the 4-bit counting filter's constructor (internal). */
#ifndef BK_COUNTING_COUNTING_H
#define BK_COUNTING_COUNTING_H

#include "../common/filter_impl.h"

/* bk_filter_create_fn / bk_filter_adopt_fn for variant=counting. */
int bk_counting_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out);
int bk_counting_adopt(const bk_config *cfg, const bk_allocator *a, const bk_slice_view *slices,
                      uint32_t n, int borrowed, bk_filter **out);

#endif
