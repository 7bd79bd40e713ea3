/* scalable.h - the scalable chain's constructor (internal). */
#ifndef BK_SCALABLE_SCALABLE_H
#define BK_SCALABLE_SCALABLE_H

#include "../common/filter_impl.h"

/* bk_filter_create_fn for variant=scalable. */
int bk_scalable_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out);

#endif
