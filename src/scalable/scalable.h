/* scalable.h - the scalable chain's constructor (internal). */
#ifndef BK_SCALABLE_SCALABLE_H
#define BK_SCALABLE_SCALABLE_H

#include "../common/filter_impl.h"

/* More slices than anyone can allocate: with growth >= 2 slice 63 alone would
 * hold n0 * 2^63 keys. A fixed table keeps the slice pointers still under
 * concurrent readers. */
#define BK_SCALABLE_MAX_SLICES 64

/* bk_filter_create_fn / bk_filter_adopt_fn for variant=scalable. */
int bk_scalable_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out);
int bk_scalable_adopt(const bk_config *cfg, const bk_allocator *a, const bk_slice_view *slices,
                      uint32_t n, int borrowed, bk_filter **out);

#endif
