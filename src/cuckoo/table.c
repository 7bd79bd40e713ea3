/*
 * table.c - a cuckoo filter's shape from its configuration (Fan, Andersen,
 * Kaminsky & Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom",
 * CoNEXT 2014).
 *
 * A lookup compares the key's fingerprint with the fingerprints in its two
 * buckets, 2 n / N of them on average when the table holds n in N buckets,
 * each a match with chance 1 / (2^f - 1): the rate is
 * 1 - (1 - 1/(2^f - 1))^(2 n / N) (section 4: about 2 b a / 2^f at load a).
 * A table of b-slot buckets fills to a load a(b) before an insertion finds
 * no room within its relocations (section 5.1: 84% for b = 2, 95% for 4,
 * 98% for 8); N is sized so that `capacity` keys load it to LOAD_MARGIN of
 * that, and f is the fewest bits that keep the rate at capacity within fpr.
 * Of b in {2, 4, 8} the one with the fewest bits per key, f / a, wins: 4 at
 * most rates, as the paper finds.
 */
#include "table.h"

#include <math.h>
#include <stdio.h>

#include "../core/config.h"
#include "../common/error.h"

/* The load an insertion reaches, by bucket size: the first failure (with
 * CK_MAX_KICKS relocations, 16-bit fingerprints) came at these loads or
 * above, on tables sized for 10^6 and 10^7 keys (docs/history.md, "The
 * cuckoo filter"; the paper measured 84%, 95% and 98% for 2, 4 and 8). */
static const double load_reached[CK_BUCKET_MAX + 1] = {0,    0.49, 0.85,  0.93, 0.955,
                                                       0.97, 0.98, 0.985, 0.985};
/* The share of that load a table is sized for at its capacity: keys past the
 * capacity still fit (about 5% more), and a small table, whose loads vary
 * more, holds its capacity. */
#define LOAD_MARGIN 0.95
/* Short fingerprints give each bucket few other buckets (2^f - 1): keys that
 * share both buckets and the fingerprint need a slot each, and more than 2b
 * of them cannot be placed. An automatic f is long enough that the table
 * expects fewer than this many such overloaded pairs at its capacity. */
#define OVERLOAD_MAX 1e-3
/* Keys that share both buckets need a slot each too, whatever their
 * fingerprints: a small table has few pairs of buckets, and is given enough
 * of them that the chance of more than 2b keys in one, at its capacity, is
 * below this. */
#define PAIR_OVERLOAD_MAX 1e-7

/* The load a table of b-slot buckets is sized for. */
static double design_load(unsigned b)
{
    return load_reached[b] * LOAD_MARGIN;
}

/* P(X > k) for X ~ Poisson(lambda), summed term by term above k (the tail
 * is far below 1 wherever it is asked: no cancellation). */
static double poisson_above(double lambda, unsigned k)
{
    double term = exp(-lambda), tail = 0.0;
    for (unsigned j = 1; j <= k + 64; j++) {
        term *= lambda / j;
        if (j > k)
            tail += term;
    }
    return tail;
}

/* The chance that one of `pairs` equally likely pairs, given `keys` keys,
 * gets more than `slots` of them (a union bound). */
static double overloaded(double pairs, double keys, unsigned slots)
{
    return pairs * poisson_above(keys / pairs, slots);
}

/* Buckets for `capacity` keys in b-slot buckets, an even number (ck_other
 * pairs even buckets with odd ones): at the design load, and sqrt(capacity)
 * / b more, a share that matters only to small tables, whose loads vary
 * most; and enough that no pair of buckets (N^2 / 4 of them) is likely to
 * be given more keys than its 2b slots. Without the last, one table in
 * 10^4 sized for 10 to 40 keys was full before its capacity. */
static double buckets_for(uint64_t capacity, unsigned b)
{
    double n = ceil((double)capacity / (b * design_load(b))) + ceil(sqrt((double)capacity) / b);
    n += fmod(n, 2.0);
    while (overloaded(n * n / 4, (double)capacity, 2 * b) > PAIR_OVERLOAD_MAX)
        n = 2 * ceil(n * 0.55); /* 10% more, even */
    return n;
}

/* The pairs of buckets and fingerprint that a table of n buckets of b
 * slots, f-bit fingerprints, at its design load (n b a keys), expects to be
 * given more than 2b keys: there are n (2^f - 1) / 2 of them. */
static double fingerprints_overloaded(unsigned f, unsigned b, double n)
{
    return overloaded(n * (ldexp(1.0, (int)f) - 1.0) / 2.0, n * b * design_load(b), 2 * b);
}

double ck_rate(unsigned f, double load)
{
    if (load <= 0.0)
        return 0.0;
    return -expm1(2.0 * load * log1p(-1.0 / (ldexp(1.0, (int)f) - 1.0)));
}

/* The fewest fingerprint bits whose rate at the design load of b is at most
 * fpr, and that leave a table for `capacity` keys too few overloaded pairs;
 * 0 when 32 are not enough for the rate. */
static unsigned bits_for(unsigned b, double fpr, uint64_t capacity)
{
    unsigned f = 1;
    while (f <= CK_FINGERPRINT_MAX && ck_rate(f, b * design_load(b)) > fpr)
        f++;
    if (f > CK_FINGERPRINT_MAX)
        return 0;
    const double n = buckets_for(capacity, b); /* the same for every f */
    while (f < CK_FINGERPRINT_MAX && fingerprints_overloaded(f, b, n) > OVERLOAD_MAX)
        f++;
    return f;
}

int ck_resolve(bk_config *cfg)
{
    unsigned b = (unsigned)bk_config_count(cfg, "bucket"),
             f = (unsigned)bk_config_count(cfg, "fingerprint");
    if (!b) { /* the fewest bits per key of 2, 4 and 8 */
        double best = INFINITY;
        for (unsigned c = 2; c <= CK_BUCKET_MAX; c *= 2) {
            const unsigned fc = f ? f : bits_for(c, cfg->fpr, cfg->capacity);
            if (fc && fc / design_load(c) < best) {
                best = fc / design_load(c);
                b = c;
            }
        }
        b = b ? b : 4; /* no f reaches fpr: say so below, for the paper's b */
    }
    if (!f && !(f = bits_for(b, cfg->fpr, cfg->capacity)))
        return bk_fail(BK_ECONFIG,
                       "cuckoo: fpr=%g is below what fingerprints of 32 bits give (%.3g at "
                       "bucket=%u): use a Bloom variant",
                       cfg->fpr, ck_rate(CK_FINGERPRINT_MAX, b * design_load(b)), b);
    bk_config_put(cfg, "bucket", b);
    bk_config_put(cfg, "fingerprint", f);
    return BK_OK;
}

int ck_shape_of(const bk_config *cfg, ck_shape *out)
{
    bk_config c = *cfg;
    int rc = ck_resolve(&c);
    if (rc != BK_OK)
        return rc;
    out->f = (unsigned)bk_config_count(&c, "fingerprint");
    out->b = (unsigned)bk_config_count(&c, "bucket");
    const double n = buckets_for(c.capacity, out->b);
    if (n * out->b > (double)BK_BITS_MAX)
        return bk_fail(BK_ERANGE, "cuckoo: %.0f buckets of %u are more than %llu cells", n, out->b,
                       (unsigned long long)BK_BITS_MAX);
    out->per_line = c.layout == BK_LAYOUT_BLOCKED ? BK_BLOCK_BYTES * 8 / (out->b * out->f) : 0;
    /* blocked: whole lines (their buckets are there anyway), an even number
     * of buckets */
    const uint64_t unit = !out->per_line      ? 2
                          : out->per_line % 2 ? 2 * out->per_line
                                              : out->per_line;
    out->buckets = ((uint64_t)n + unit - 1) / unit * unit;
    return BK_OK;
}

bk_cells ck_cells(const ck_shape *s)
{
    const bk_cells c = {s->f, s->per_line * s->b, 0}; /* fingerprints: never "saturated" */
    return c;
}

uint64_t ck_bytes(const ck_shape *s)
{
    return s->per_line ? (s->buckets + s->per_line - 1) / s->per_line * BK_BLOCK_BYTES
                       : (s->buckets * s->b * s->f + 7) / 8;
}
