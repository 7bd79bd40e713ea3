/*
 * exp_measure.c - what an experiment measures of a filter at a checkpoint:
 * the probes' false positives with their Wilson interval, the time they
 * took, and the filter's figures (experiment.h). Under the runs of
 * cmd_experiment.c and exp_time.c alike.
 */
#define _DEFAULT_SOURCE
#include <math.h>
#include <time.h>

#include "experiment.h"

double exp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

void exp_wilson(uint64_t x, uint64_t n, double *lo, double *hi)
{
    const double z = 1.959963984540054, p = (double)x / (double)n, nn = (double)n;
    const double den = 1 + z * z / nn, mid = (p + z * z / (2 * nn)) / den;
    const double half = z * sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / den;
    *lo = x == 0 || mid - half < 0 ? 0 : mid - half; /* exactly 0, not rounding noise */
    *hi = mid + half > 1 ? 1 : mid + half;
}

void exp_measure_row(bk_filter *f, const exp_keys *probes, exp_row *r)
{
    const double t1 = exp_now_ns();
    uint64_t fp = 0;
    for (size_t i = 0; i < probes->n; i++)
        fp += bk_contains(f, probes->bytes + probes->off[i], probes->off[i + 1] - probes->off[i]) ==
              1;
    const double t2 = exp_now_ns();
    bk_filter_stats st;
    bk_stats(f, &st);
    r->probes = probes->n;
    r->false_pos = fp;
    r->fpr = probes->n ? (double)fp / (double)probes->n : 0;
    exp_wilson(fp, probes->n ? probes->n : 1, &r->lo, &r->hi);
    r->model = st.model_fpr;
    r->bytes = st.bytes;
    r->bits_per_key = r->keys ? 8.0 * (double)st.bytes / (double)r->keys : 0;
    r->slices = st.slices;
    r->saturated = st.saturated;
    r->ns_lookup = probes->n ? (t2 - t1) / (double)probes->n : 0;
}
