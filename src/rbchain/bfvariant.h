/* bfvariant.h - RedisBloom's chain as the variant rbchain: its descriptor,
 * as the registry (src/core/registry.c) lists it (internal). */
#ifndef BK_RBCHAIN_BFVARIANT_H
#define BK_RBCHAIN_BFVARIANT_H

#include "../core/filter_impl.h"

extern const bk_variant_desc bk_rbchain_desc;

#endif
