/*
 * variants.c - the registry of variants: how to build each one empty (bk_new)
 * or over existing payloads (src/io), and the shape of its payload. The one
 * table to extend when a variant is added.
 */
#include "common/filter_impl.h"
#include "counting/counting.h"
#include "scalable/scalable.h"
#include "standard/standard.h"
#include "window/window.h"

static const bk_variant_impl impls[] = {
    [BK_VARIANT_STANDARD] = {bk_standard_create, bk_standard_adopt, bk_standard_plan, 1, 1, 0},
    [BK_VARIANT_COUNTING] = {bk_counting_create, bk_counting_adopt, bk_counting_plan, 1, 4, 1},
    [BK_VARIANT_SCALABLE] = {bk_scalable_create, bk_scalable_adopt, bk_scalable_plan,
                             BK_SCALABLE_MAX_SLICES, 1, 0},
    [BK_VARIANT_WINDOW] = {bk_window_create, bk_window_adopt, bk_window_plan, BK_WINDOW_MAX_SLICES,
                           1, 0},
};

const bk_variant_impl *bk_variant_impl_for(bk_variant v)
{
    return (unsigned)v < sizeof impls / sizeof *impls && impls[v].create ? &impls[v] : NULL;
}
