/*
 * bloom_estimate.c - what a Bloom array's cells say (bk_bloom_estimate): the
 * per-slice figures of every variant whose slices are bit or counter arrays
 * probed k times. A variant of another kind gives its own estimate in its
 * descriptor.
 */
#include "filter_impl.h"
#include "../common/sizing.h"

void bk_bloom_estimate(const bk_config *cfg, const bk_slice_view *v, uint64_t *steps,
                       bk_slice_estimate *out)
{
    uint64_t own = BK_RATE_STEPS;
    if (!steps)
        steps = &own;
    out->keys = bk_cardinality_of_fill(v->m, v->k, v->set_bits, v->block);
    out->rate = bk_rate_of_fill_within(v->m, v->k, v->set_bits, v->block, steps);
    out->model = bk_rate_for_within(v->m, v->k, v->keys, v->block, steps);
    /* pinned bits: the rate they, k and the capacity give */
    out->sized = cfg->bits ? bk_rate_for(v->m, v->k, v->capacity, v->block) : v->fpr;
}
