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

double bk_estimate_cardinality(uint64_t m, unsigned k, uint64_t set_bits)
{
    if (m == 0 || k == 0)
        return 0.0;
    if (set_bits >= m)
        return INFINITY;
    return -((double)m / (double)k) * log1p(-(double)set_bits / (double)m);
}

int bk_size_for(uint64_t n, double p, uint64_t *m_out, unsigned *k_out)
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

int bk_plan_size(uint64_t capacity, double fpr, bk_plan *out)
{
    if (!out || capacity == 0 || capacity > BK_CAPACITY_MAX || !(fpr > 0.0 && fpr <= BK_FPR_MAX))
        return BK_EINVAL;
    uint64_t m;
    unsigned k;
    const int rc = bk_size_for(capacity, fpr, &m, &k);
    if (rc != BK_OK)
        return rc;
    out->bits = m;
    out->bytes = bk_bits_to_bytes(m);
    out->k = k;
    out->expected_fpr = bk_rate_after(m, k, capacity);
    out->bits_per_key = (double)m / (double)capacity;
    return BK_OK;
}
