/*
 * registry.c - the registry of variants: the descriptor each variant declares
 * in its own folder, listed once. The one line to add when a variant is
 * added.
 */
#include "filter_impl.h"
#include "../counting/counting.h"
#include "../cuckoo/cuckoo.h"
#include "../rbchain/bfvariant.h"
#include "../rbcuckoo/cfvariant.h"
#include "../scalable/scalable.h"
#include "../standard/standard.h"
#include "../window/window.h"

static const bk_variant_desc *const registry[] = {
    &bk_standard_desc, &bk_counting_desc, &bk_scalable_desc, &bk_window_desc,
    &bk_cuckoo_desc,   &bk_rbchain_desc,  &bk_rbcuckoo_desc,
};

const bk_variant_desc *bk_variant_for(bk_variant v)
{
    for (size_t i = 0; i < sizeof registry / sizeof *registry; i++) /* NOLINT: of pointers */
        if (registry[i]->variant == v)
            return registry[i];
    return NULL;
}

int bk_chain_slice(const bk_config *cfg, uint32_t i, bk_slice_view *out, bk_slice_limit *limit)
{
    const bk_variant_desc *d = bk_variant_for(cfg->variant);
    return d && d->chain_slice ? d->chain_slice(cfg, i, out, limit) : BK_ENOTSUP;
}
