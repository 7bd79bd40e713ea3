/*
 * store.c - the core's side of store.h: a filter's slices, configuration
 * and allocator for the file layer, a variant's shape and its constructor
 * over payloads, and the mapping io attaches with its hooks.
 */
#include "bloomkit.h"
#include "../common/error.h"
#include "filter_impl.h"

int bk_variant_shape_of(const bk_config *cfg, bk_variant_shape *out)
{
    const bk_variant_desc *d = bk_variant_for(cfg->variant);
    if (!d)
        return bk_fail(BK_ECORRUPT, "variant %d has no code here", (int)cfg->variant);
    out->cells = d->cells(cfg);
    out->max_slices = d->max_slices;
    out->keeps_time = d->ops->expire != NULL;
    out->own_words = d->own_words;
    return BK_OK;
}

int bk_variant_adopt(const bk_config *cfg, const bk_allocator *a, const bk_slice_view *slices,
                     uint32_t n, int borrowed, bk_filter **out)
{
    const bk_variant_desc *d = bk_variant_for(cfg->variant);
    if (!d)
        return bk_fail(BK_ECORRUPT, "variant %d has no code here", (int)cfg->variant);
    return d->adopt(cfg, a, slices, n, borrowed, out);
}

uint32_t bk_filter_slices(const bk_filter *f)
{
    return f->ops->slice_count(f);
}

void bk_filter_slice(const bk_filter *f, uint32_t i, bk_slice_view *out)
{
    f->ops->slice_view(f, i, out);
}

const bk_config *bk_filter_config(const bk_filter *f)
{
    return &f->cfg;
}

bk_allocator bk_filter_allocator(const bk_filter *f)
{
    return f->alloc;
}

int bk_filter_in_memory(const bk_filter *f)
{
    return bk_cells_in_memory(f);
}

void bk_filter_settle(const bk_filter *f)
{
    if (f->ops->refresh && bk_cells_in_memory(f) && f->ops->refresh(f) != BK_OK)
        bk_detail_clear(); /* not this save's error */
}

void bk_filter_attach(bk_filter *f, bk_mapping *map, const bk_backing_ops *ops, int writable)
{
    f->mapping = map;
    f->backing = ops;
    f->readonly = !writable;
}

bk_mapping *bk_filter_mapping(const bk_filter *f)
{
    return f->mapping;
}
