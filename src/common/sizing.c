/*
 * sizing.c - Bloom filter sizing and estimation.
 *
 * For n keys, m bits and k probes, the probability that a given bit is still 0
 * after n insertions is (1 - 1/m)^(kn) ~ e^(-kn/m), so the false-positive rate
 * is (1 - e^(-kn/m))^k (B. H. Bloom, CACM 13(7), 1970; the standard
 * approximation, e.g. Broder & Mitzenmacher, "Network Applications of Bloom
 * Filters", 2004, eq. 1). Minimising over k gives k = (m/n) ln 2 and
 * m = -n ln p / (ln 2)^2. k must be an integer: we take floor or ceil of the
 * optimum, whichever gives the lower rate for this m and n.
 * The cardinality estimate inverts the expected fill X/m = 1 - e^(-kn/m):
 * n* = -(m/k) ln(1 - X/m) (Swamidass & Baldi, J. Chem. Inf. Model. 47(3), 2007).
 */
#include "sizing.h"

#include <math.h>

#include "bits.h"
#include "config.h"

#define LN2 0.693147180559945309417232121458176568

double bk_rate_after(uint64_t m, unsigned k, uint64_t n)
{
    if (m == 0 || k == 0)
        return 1.0;
    /* 1 - e^(-x) computed as -expm1(-x): exact for the tiny x of large m. */
    const double x = (double)k * (double)n / (double)m;
    return pow(-expm1(-x), (double)k);
}

double bk_rate_from_fill(double fill, unsigned k)
{
    if (fill <= 0.0)
        return 0.0;
    if (fill >= 1.0)
        return 1.0;
    return pow(fill, (double)k);
}

double bk_rate_of_fill(uint64_t m, unsigned k, uint64_t set, unsigned block)
{
    if (m == 0)
        return 1.0;
    if (!block)
        return bk_rate_from_fill((double)set / (double)m, k);
    const double n = bk_cardinality_of_fill(m, k, set, block);
    if (!(n < 0x1p63))
        return 1.0;
    return bk_rate_blocked(m, k, (uint64_t)llround(n), block);
}

double bk_estimate_cardinality(uint64_t m, unsigned k, uint64_t set_bits)
{
    if (m == 0 || k == 0)
        return 0.0;
    if (set_bits >= m)
        return INFINITY;
    return -((double)m / (double)k) * log1p(-(double)set_bits / (double)m);
}

double bk_cardinality_of_fill(uint64_t m, unsigned k, uint64_t set, unsigned block)
{
    if (!block || block >= m)
        return bk_estimate_cardinality(m, k, set);
    if (k == 0)
        return 0.0;
    if (set >= m)
        return INFINITY;
    /* A key lands in a given block with chance B/m and then sets a given cell
     * of it with chance 1 - (1 - 1/B)^k: a cell is clear after n keys with
     * chance (1 - (B/m)(1 - (1 - 1/B)^k))^n. Solve for n at the observed fill. */
    const double b = (double)block;
    const double per_key = b / (double)m * -expm1((double)k * log1p(-1.0 / b));
    return log1p(-(double)set / (double)m) / log1p(-per_key);
}

static int size_classic(uint64_t n, double p, uint64_t *m_out, unsigned *k_out)
{
    if (n == 0 || !(p > 0.0 && p < 1.0))
        return BK_EINVAL;
    const double m_real = ceil(-(double)n * log(p) / (LN2 * LN2));
    if (!(m_real <= (double)BK_BITS_MAX))
        return BK_ERANGE;
    const uint64_t m = m_real < 1.0 ? 1 : (uint64_t)m_real;

    const double k_opt = (double)m / (double)n * LN2;
    unsigned k_lo = k_opt < 1.0 ? 1u : (unsigned)floor(k_opt);
    const unsigned k_hi = k_lo + 1;
    if (bk_rate_after(m, k_hi, n) < bk_rate_after(m, k_lo, n))
        k_lo = k_hi;
    *m_out = m;
    *k_out = k_lo;
    return BK_OK;
}

unsigned bk_block_cells(bk_layout layout, unsigned cell_bits)
{
    return layout == BK_LAYOUT_BLOCKED ? BK_BLOCK_BYTES * 8 / cell_bits : 0;
}

/* The blocked layout (Putze, Sanders & Singler, "Cache-, Hash- and
 * Space-Efficient Bloom Filters", WEA 2007): a key picks one of m/B blocks of
 * B cells, then sets k cells inside it. The number of keys in a block is
 * binomial, ~Poisson(lambda = n B / m); a block holding j keys passes an
 * absent key's k probes with (1 - (1 - 1/B)^(jk))^k. The rate is that
 * averaged over j. Crowded blocks dominate, so a blocked filter needs more
 * bits than a classic one for the same rate. */
double bk_rate_blocked(uint64_t m, unsigned k, uint64_t n, unsigned block)
{
    if (m < block || k == 0)
        return 1.0;
    if (n == 0)
        return 0.0;
    const double lambda = (double)n * (double)block / (double)m;
    const double miss = log1p(-1.0 / (double)block); /* ln(1 - 1/B) */
    if (lambda > 1e5)                                /* the block loads concentrate at lambda */
        return pow(-expm1((double)k * lambda * miss), (double)k);
    const double spread = 12.0 * sqrt(lambda) + 24.0;
    const double j_lo = floor(lambda - spread) < 0.0 ? 0.0 : floor(lambda - spread);
    const double j_hi = ceil(lambda + spread);
    double rate = 0.0;
    for (double j = j_lo; j <= j_hi; j++) {
        const double pmf = exp(j * log(lambda) - lambda - lgamma(j + 1.0));
        rate += pmf * pow(-expm1(j * (double)k * miss), (double)k);
    }
    return rate < 1.0 ? rate : 1.0;
}

double bk_rate_for(uint64_t m, unsigned k, uint64_t n, unsigned block)
{
    return block ? bk_rate_blocked(m, k, n, block) : bk_rate_after(m, k, n);
}

/* The fewest blocks with which k probes reach p, or 0 if none up to the limit. */
static uint64_t blocks_for(uint64_t n, double p, unsigned block, unsigned k, uint64_t start)
{
    const uint64_t max = BK_BITS_MAX / block;
    uint64_t lo = start, hi = start;
    while (bk_rate_blocked(hi * block, k, n, block) > p) {
        if (hi == max)
            return 0;
        lo = hi + 1;
        hi = hi > max / 2 ? max : hi * 2;
    }
    while (lo < hi) { /* the rate falls as blocks are added */
        const uint64_t mid = lo + (hi - lo) / 2;
        if (bk_rate_blocked(mid * block, k, n, block) <= p)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Search k around the classic optimum (a blocked filter's best k is the same
 * or a little lower) for the smallest m. */
static int size_blocked(uint64_t n, double p, unsigned block, uint64_t *m_out, unsigned *k_out)
{
    uint64_t m_c;
    unsigned k_c;
    const int rc = size_classic(n, p, &m_c, &k_c);
    if (rc != BK_OK)
        return rc;
    const uint64_t start = m_c / block + (m_c % block != 0);
    uint64_t best = 0;
    unsigned best_k = 0;
    for (unsigned k = k_c > 4 ? k_c - 4 : 1; k <= k_c + 2; k++) {
        const uint64_t nb = blocks_for(n, p, block, k, start);
        if (nb && (!best || nb < best)) {
            best = nb;
            best_k = k;
        }
    }
    if (!best)
        return BK_ERANGE;
    *m_out = best * block;
    *k_out = best_k;
    return BK_OK;
}

int bk_size_for(uint64_t n, double p, unsigned block, uint64_t *m_out, unsigned *k_out)
{
    if (n == 0 || !(p > 0.0 && p < 1.0))
        return BK_EINVAL;
    uint64_t m;
    unsigned k;
    const int rc = block ? size_blocked(n, p, block, &m, &k) : size_classic(n, p, &m, &k);
    if (rc != BK_OK)
        return rc;
    if (k > BK_K_MAX)
        return BK_ERANGE;
    *m_out = m;
    *k_out = k;
    return BK_OK;
}

static int fill_plan(uint64_t capacity, double fpr, bk_layout layout, unsigned cell_bits,
                     bk_plan *out)
{
    const unsigned block = bk_block_cells(layout, cell_bits);
    uint64_t m;
    unsigned k;
    const int rc = bk_size_for(capacity, fpr, block, &m, &k);
    if (rc != BK_OK)
        return rc;
    out->bits = m;
    out->bytes = cell_bits == 4 ? m / 2 + (m % 2 != 0) : bk_bits_to_bytes(m);
    out->k = k;
    out->expected_fpr = bk_rate_for(m, k, capacity, block);
    out->bits_per_key = (double)m * cell_bits / (double)capacity;
    return BK_OK;
}

int bk_plan_size(uint64_t capacity, double fpr, bk_plan *out)
{
    if (!out || capacity == 0 || capacity > BK_CAPACITY_MAX || !(fpr > 0.0 && fpr <= BK_FPR_MAX))
        return BK_EINVAL;
    return fill_plan(capacity, fpr, BK_LAYOUT_CLASSIC, 1, out);
}

int bk_plan_config(const bk_config *cfg, bk_plan *out)
{
    if (!cfg || !out || bk_config_validate(cfg, NULL, 0) != BK_OK)
        return BK_EINVAL;
    double fpr = cfg->fpr;
    if (cfg->variant == BK_VARIANT_SCALABLE)
        fpr *= 1.0 - cfg->tightening; /* the first slice's share of the rate */
    return fill_plan(cfg->capacity, fpr, cfg->layout, cfg->variant == BK_VARIANT_COUNTING ? 4 : 1,
                     out);
}
