/*
 * registry.c - the registry of variants: the descriptor each variant
 * declares in its own folder (bk_<name>_desc), listed by BK_VARIANT_LIST
 * (bloomkit.h), the one line a new variant adds outside its folder.
 */
#include "filter_impl.h"

/* By number: registry[v] is variant v's (NULL where no variant has the
 * number). */
static const bk_variant_desc *const registry[] = {
#define BK_DESC_AT_(NAME, name, number) [number] = &bk_##name##_desc,
    BK_VARIANT_LIST(BK_DESC_AT_)
#undef BK_DESC_AT_
};
/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
static const unsigned nregistry = sizeof registry / sizeof *registry;

const bk_variant_desc *bk_variant_for(bk_variant v)
{
    return (unsigned)v < nregistry ? registry[v] : NULL;
}

unsigned bk_variant_count(void)
{
    return nregistry;
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
