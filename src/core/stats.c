/*
 * stats.c - a filter's figures (bk_stats, bk_slice_info; the _held pair:
 * those at hand, no cell read): sums over its slice views, and each slice's
 * estimates by its variant's own model (the descriptor's estimate), so no
 * Bloom formula is applied to a variant that is not a Bloom filter.
 */
#include <math.h>
#include <string.h>

#include "bloomkit.h"
#include "../common/error.h"
#include "filter_impl.h"
#include "../common/sizing.h"

/* The first steps of the calls (what: "stats", ...): their checks, and,
 * unless held (the figures at hand only), bringing the views up to date (a
 * remote store's read, a loaded table's whole check). */
static int begin(const bk_filter *f, const void *out, size_t size, int held, const char *what)
{
    bk_call_begin();
    if (!f || !out || size == 0)
        return bk_fail(BK_EINVAL, "%s: no filter, no result pointer or a size of 0", what);
    if (held && !bk_cells_in_memory(f))
        return bk_fail(BK_ENOTSUP, "%s: a filter in Redis has its figures there (bk_stats)", what);
    return f->ops->refresh && !held ? bk_done(f->ops->refresh(f), what) : BK_OK;
}

/* Copy the known prefix of a stats struct into the caller's, of its own
 * size (its sizeof, from the header it was compiled with), zeros after. */
static void copy_sized(void *out, size_t size, const void *st, size_t have)
{
    memcpy(out, st, size < have ? size : have);
    if (size > have)
        memset((char *)out + have, 0, size - have);
}

/* The three compound rates a filter reports (estimated from the fill,
 * modelled from the keys, sized: when every slice is full), each averaged
 * over the groups a key meets one of. Within a group the sums of
 * log(1 - rate_i), exact for tiny rates; then 1 - prod(1 - rate_i). */
enum { EST, MODEL, SIZED, RATES };
typedef struct compound {
    double log_none[RATES]; /* the current group's */
    double sum[RATES];      /* of the closed groups' rates */
    uint32_t groups;
} compound;

static void close_group(compound *c)
{
    /* 0 - expm1(x), not -expm1(x): an empty filter's rate is 0, not -0 */
    for (int r = 0; r < RATES; r++) {
        if (c->groups)
            c->sum[r] += 0.0 - expm1(c->log_none[r]);
        c->log_none[r] = 0.0;
    }
}

static double mean_rate(const compound *c, int r)
{
    return c->groups ? c->sum[r] / c->groups : 0.0;
}

/* Every figure comes from the slice views: sums over slices, the newest
 * slice's k, and the compound rates (struct compound); held: those read
 * from the cells 0. */
static int stats(const bk_filter *f, bk_filter_stats *out, size_t size, int held)
{
    const int rc = begin(f, out, size, held, held ? "stats_held" : "stats");
    if (rc != BK_OK)
        return rc;
    const bk_variant_desc *d = bk_variant_for(f->cfg.variant);
    bk_filter_stats full, *st = &full;
    memset(st, 0, sizeof *st);
    st->variant = bk_variant_name(f->cfg.variant);
    st->hash = bk_hash_name(f->cfg.hash);
    const uint32_t n = f->ops->slice_count(f);
    compound c;
    memset(&c, 0, sizeof c);
    uint64_t steps = BK_RATE_STEPS_FILTER; /* every slice's rates together */
    for (uint32_t i = 0; i < n; i++) {
        bk_slice_view v;
        f->ops->slice_view(f, i, &v);
        const uint32_t group = f->ops->slice_group ? f->ops->slice_group(f, i) : 0;
        if (i == 0 || group != c.groups - 1) { /* a key meets one group */
            close_group(&c);
            c.groups++;
        }
        bk_slice_estimate e;
        d->estimate(&f->cfg, &v, &steps, &e);
        st->capacity += v.capacity;
        st->bits += v.m;
        st->bytes += v.nbytes;
        st->keys += v.keys;
        st->set_bits += v.set_bits;
        st->saturated += v.saturated;
        st->est_cardinality += e.keys;
        c.log_none[EST] += log1p(-e.rate);
        c.log_none[MODEL] += log1p(-e.model);
        c.log_none[SIZED] += log1p(-(e.sized < 1 ? e.sized : 1 - 1e-16));
        st->k = v.k;
        st->fpr = f->cfg.bits ? e.sized : f->cfg.fpr;
    }
    close_group(&c);
    st->slices = n;
    if (d->capacity)
        st->capacity = d->capacity(f, st->capacity);
    st->redated_from_ms = atomic_load(&f->redate_from_ms);
    st->redated_to_ms = atomic_load(&f->redate_to_ms);
    st->fill = (double)st->set_bits / (double)st->bits;
    st->est_fpr = mean_rate(&c, EST);
    st->model_fpr = mean_rate(&c, MODEL);
    st->rate_bound = mean_rate(&c, SIZED);
    st->state_bytes = bk_state_bytes(f);
    st->bits_per_key = st->keys ? 8.0 * (double)st->bytes / (double)st->keys : 0.0;
    if (held) {
        st->set_bits = st->saturated = 0;
        st->fill = st->est_cardinality = st->est_fpr = st->model_fpr = 0.0;
    }
    copy_sized(out, size, st, sizeof *st);
    return BK_OK;
}

static int slice_info(const bk_filter *f, uint32_t i, bk_slice_stats *out, size_t size, int held)
{
    const char *what = held ? "slice_held" : "slice_info";
    const int rc = begin(f, out, size, held, what);
    if (rc != BK_OK)
        return rc;
    const uint32_t n = f->ops->slice_count(f);
    if (i >= n)
        return bk_fail(BK_EINVAL, "%s: no slice %u: the filter has %u", what, (unsigned)i,
                       (unsigned)n);
    bk_slice_view v;
    f->ops->slice_view(f, i, &v);
    bk_slice_estimate e;
    bk_variant_for(f->cfg.variant)->estimate(&f->cfg, &v, NULL, &e);
    bk_slice_stats st;
    memset(&st, 0, sizeof st);
    st.bits = v.m;
    st.bytes = v.nbytes;
    st.k = v.k;
    st.capacity = v.capacity;
    st.fpr = e.sized;
    st.keys = v.keys;
    if (!held) {
        st.set_bits = v.set_bits;
        st.fill = (double)v.set_bits / (double)v.m;
        st.est_fpr = e.rate;
    }
    st.span_start_ms = v.gen * v.span;
    st.span_end_ms = v.span ? (v.gen + 1) * v.span : 0;
    copy_sized(out, size, &st, sizeof st);
    return BK_OK;
}

int bk_stats(const bk_filter *f, bk_filter_stats *st)
{
    return stats(f, st, sizeof *st, 0);
}

int bk_stats_sized(const bk_filter *f, bk_filter_stats *st, size_t size)
{
    return stats(f, st, size, 0);
}

int bk_stats_held(const bk_filter *f, bk_filter_stats *st, size_t size)
{
    return stats(f, st, size, 1);
}

int bk_slice_info(const bk_filter *f, uint32_t i, bk_slice_stats *out, size_t size)
{
    return slice_info(f, i, out, size, 0);
}

int bk_slice_held(const bk_filter *f, uint32_t i, bk_slice_stats *out, size_t size)
{
    return slice_info(f, i, out, size, 1);
}
