/* cfvariant.h - RedisBloom's cuckoo filter as the variant rbcuckoo: its
 * descriptor, as the registry (src/core/registry.c) lists it (internal). */
#ifndef BK_RBCUCKOO_CFVARIANT_H
#define BK_RBCUCKOO_CFVARIANT_H

#include "../core/filter_impl.h"

extern const bk_variant_desc bk_rbcuckoo_desc;

#endif
