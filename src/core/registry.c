/*
 * registry.c - the registry of variants: the descriptor each variant declares
 * in its own folder, listed once. The one line to add when a variant is
 * added.
 */
#include "filter_impl.h"
#include "../counting/counting.h"
#include "../cuckoo/cuckoo.h"
#include "../expandable/expandable.h"
#include "../rbchain/bfvariant.h"
#include "../rbcuckoo/cfvariant.h"
#include "../scalable/scalable.h"
#include "../standard/standard.h"
#include "../window/window.h"

static const bk_variant_desc *const registry[] = {
    &bk_standard_desc, &bk_counting_desc, &bk_scalable_desc, &bk_window_desc,
    &bk_cuckoo_desc,   &bk_rbchain_desc,  &bk_rbcuckoo_desc, &bk_expandable_desc,
};

const bk_variant_desc *bk_variant_for(bk_variant v)
{
    for (size_t i = 0; i < sizeof registry / sizeof *registry; i++) /* NOLINT: of pointers */
        if (registry[i]->variant == v)
            return registry[i];
    return NULL;
}

int bk_chain_slice(const bk_config *cfg, uint32_t i, bk_slice_rule rule, bk_slice_view *out,
                   bk_slice_limit *limit)
{
    const bk_variant_desc *d = bk_variant_for(cfg->variant);
    return d && d->chain_slice ? d->chain_slice(cfg, i, rule, out, limit) : BK_ENOTSUP;
}

bk_slice_rule bk_chain_rule(const bk_config *cfg, const bk_slice_view *slices, uint32_t n)
{
    int average = 1, holds = 1;
    for (uint32_t i = 0; i < n && i < 2; i++) {
        bk_slice_view a, h;
        bk_slice_limit l;
        average &= bk_chain_slice(cfg, i, BK_SLICE_AVERAGE, &a, &l) == BK_OK &&
                   bk_same_shape(&slices[i], &a);
        holds &= bk_chain_slice(cfg, i, BK_SLICE_HOLDS, &h, &l) == BK_OK &&
                 bk_same_shape(&slices[i], &h);
    }
    return average && !holds ? BK_SLICE_AVERAGE : BK_SLICE_HOLDS;
}
