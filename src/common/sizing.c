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
#include <pthread.h>
#include <string.h>

#include "alloc.h"
#include "bits.h"
#include "error.h"

#define LN2 0.693147180559945309417232121458176568

/* Below this many bits bk_rate_after uses the exact clear-bit chance. */
#define BK_RATE_EXACT_BELOW (UINT64_C(1) << 20)

double bk_rate_after(uint64_t m, unsigned k, uint64_t n)
{
    if (m == 0 || k == 0)
        return 1.0;
    /* A bit stays clear with chance (1 - 1/m)^(kn), which the textbook
     * writes e^(-kn/m): the two differ by a relative (kn/m)/(2m) at most,
     * nothing from 2^20 bits on (where the textbook's form is kept, as users
     * check it), but a lot at tiny m (one bit, one key: 0.632 for a rate of
     * exactly 1), where the exact form is used. 1 - e^(-x) computed as
     * -expm1(-x): exact for the tiny x of large m. */
    const double x = m < BK_RATE_EXACT_BELOW ? -(double)k * (double)n * log1p(-1.0 / (double)m)
                                             : (double)k * (double)n / (double)m;
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

double bk_rate_of_fill_within(uint64_t m, unsigned k, uint64_t set, unsigned block, uint64_t *steps)
{
    if (m == 0)
        return 1.0;
    if (!block)
        return bk_rate_from_fill((double)set / (double)m, k);
    const double n = bk_cardinality_of_fill(m, k, set, block);
    if (!(n < 0x1p63))
        return 1.0;
    return bk_rate_blocked_within(m, k, (uint64_t)llround(n), block, steps);
}

double bk_rate_of_fill(uint64_t m, unsigned k, uint64_t set, unsigned block)
{
    uint64_t steps = BK_RATE_STEPS;
    return bk_rate_of_fill_within(m, k, set, block, &steps);
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

/* The classic k for m bits and n keys: floor or ceil of (m/n) ln 2, whichever
 * gives the lower rate, in 1 .. BK_K_MAX. */
static unsigned classic_k(uint64_t m, uint64_t n)
{
    const double k_opt = fmin((double)m / (double)n * LN2, (double)BK_K_MAX);
    const unsigned lo = k_opt < 1.0 ? 1u : (unsigned)floor(k_opt);
    return lo < BK_K_MAX && bk_rate_after(m, lo + 1, n) < bk_rate_after(m, lo, n) ? lo + 1 : lo;
}

/* Sizing's one check of what it is given (n keys at a rate p), at each
 * entry below: the helpers behind them trust it. BK_EINVAL or BK_OK. */
static int unsizable(uint64_t n, double p)
{
    return n == 0 || !(p > 0.0 && p < 1.0) ? BK_EINVAL : BK_OK;
}

static int size_classic(uint64_t n, double p, uint64_t *m_out, unsigned *k_out)
{
    const double m_real = ceil(-(double)n * log(p) / (LN2 * LN2));
    if (!(m_real <= (double)BK_BITS_MAX))
        return BK_ERANGE;
    const uint64_t m = m_real < 1.0 ? 1 : (uint64_t)m_real;
    *m_out = m;
    *k_out = classic_k(m, n);
    return BK_OK;
}

unsigned bk_block_cells(bk_layout layout, unsigned cell_bits)
{
    return layout == BK_LAYOUT_BLOCKED ? BK_BLOCK_BYTES * 8 / cell_bits : 0;
}

/* The blocked layout (Putze, Sanders & Singler, "Cache-, Hash- and
 * Space-Efficient Bloom Filters", WEA 2007): a key picks one of m/B blocks of
 * B cells, then sets k cells inside it. The number of keys in a block is
 * binomial, ~Poisson(lambda = n B / m). A block holding j keys has taken jk
 * uniform probes; its occupied cells X follow the occupancy distribution,
 * and it passes an absent key's k probes with E[(X/B)^k]. Putze et al. use
 * (E[X]/B)^k instead, which by Jensen's inequality is low: by 4% at k = 13,
 * more at larger k (measured against real filters: tests/test_blocked.c).
 * So the occupancy is followed exactly, as a Markov chain over X (a probe
 * finds a free cell with chance (B - X)/B), once per (B, k): the per-j rates
 * do not depend on m, and the sizing search reuses them. The rate is their
 * Poisson average. Crowded blocks dominate, so a blocked filter needs more
 * bits than a classic one for the same rate. */

/* Keys per block beyond which the loads are taken to concentrate at lambda
 * (the block is then all but full), and the table size that covers it. */
#define BK_LAMBDA_EXACT 1024.0
#define BK_JMAX         1432 /* jmax_for(BK_LAMBDA_EXACT) */

/* The per-load rates of one (B, k), as far as they have been needed, and
 * the occupancy after the last of them: a later need for more keys per
 * block continues from there. rates[j] is the same arithmetic whatever jmax
 * was asked, so a table continued gives the numbers, bit for bit, that one
 * computed afresh would (sizing must not change: a Redis filter's stored m
 * and k are checked against it). */
typedef struct rate_table {
    unsigned block, k; /* 0: the slot is free */
    unsigned done;     /* rates[0 .. done] hold */
    unsigned top;      /* occ[x] == 0 for every x > top: the probes so far */
    double occ[513];
    double rates[BK_JMAX + 1];
} rate_table;

/* Tables kept per process (every filter made sizes with the same few
 * (B, k): blocks of 512 bits or 128 counters, k near the optimum), reused
 * in turn when more are needed; about 16 KB each, touched only when used. */
#define BK_RATE_TABLES 32
static rate_table g_tables[BK_RATE_TABLES];
static unsigned g_next_table;
static pthread_mutex_t g_tables_lock = PTHREAD_MUTEX_INITIALIZER;

/* A table with nothing computed yet. */
static void table_start(rate_table *t, unsigned block, unsigned k)
{
    t->block = block;
    t->k = k;
    t->done = 0;
    t->top = 0;
    for (unsigned x = 0; x <= block; x++)
        t->occ[x] = x == 0;
    t->rates[0] = 0.0;
}

/* Continue t to rates[0 .. jmax]. A step's two chances are taken from
 * tables rather than divided out again, and cells past the probes made so
 * far are skipped (they hold exact zeros). */
static void table_extend(rate_table *t, unsigned jmax)
{
    /* occ[x]: chance that x cells are occupied; a probe keeps x with
     * stay[x] = x / B and moves x - 1 to x with move[x] = (B - x + 1) / B */
    double pw[513], stay[513], move[513];
    const unsigned block = t->block, k = t->k;
    const double b = (double)block;
    for (unsigned x = 0; x <= block; x++) {
        pw[x] = pow((double)x / b, (double)k);
        stay[x] = (double)x / b;
        move[x] = (b - (double)x + 1.0) / b;
    }
    double *occ = t->occ;
    unsigned top = t->top;
    for (unsigned j = t->done + 1; j <= jmax; j++) {
        for (unsigned s = 0; s < k; s++) {
            top += top < block;
            for (unsigned x = top; x > 0; x--) {
                /* a chance below 2^-960 is 0: it adds nothing a double can
                 * hold to any rate, and on its way to 0 through subnormal
                 * numbers each step costs a hundred times more (a crafted
                 * file's k of 1,805 took 10 s to load) */
                const double v = occ[x] * stay[x] + occ[x - 1] * move[x];
                occ[x] = v >= 0x1p-960 ? v : 0.0;
            }
            occ[0] = 0.0;
        }
        double r = 0.0;
        for (unsigned x = 1; x <= top; x++)
            r += occ[x] * pw[x];
        t->rates[j] = r;
    }
    t->top = top;
    t->done = jmax > t->done ? jmax : t->done;
}

/* rates[j] for j = 0 .. jmax (<= BK_JMAX): E[(X/B)^k] after jk probes into
 * B cells; block <= 512. Costs up to B jmax k steps the first time a (B, k)
 * needs them (a blocked filter's sizing: tens of milliseconds), nothing but
 * the copy after: sizing every slice of a growing chain, every generation of
 * a window and every filter a program makes would otherwise compute the
 * same tables again. Thread-safe, and never waits: while another thread
 * holds the tables (or a fork copied their lock held), the rates are
 * computed in a table of the caller's own. */
static void block_rates(unsigned block, unsigned k, unsigned jmax, double *rates)
{
    if (pthread_mutex_trylock(&g_tables_lock) != 0) {
        const bk_allocator a = bk_current_allocator();
        rate_table *own = bk_mem_alloc(&a, sizeof *own);
        if (own) {
            table_start(own, block, k);
            table_extend(own, jmax);
            memcpy(rates, own->rates, ((size_t)jmax + 1) * sizeof *rates);
            bk_mem_free(&a, own);
            return;
        }
        pthread_mutex_lock(&g_tables_lock); /* no memory for a table: wait for the shared ones */
    }
    rate_table *t = NULL;
    for (unsigned i = 0; i < BK_RATE_TABLES && !t; i++)
        if (g_tables[i].block == block && g_tables[i].k == k)
            t = &g_tables[i];
    if (!t) {
        t = &g_tables[g_next_table];
        g_next_table = (g_next_table + 1) % BK_RATE_TABLES;
        table_start(t, block, k);
    }
    if (jmax > t->done)
        table_extend(t, jmax);
    memcpy(rates, t->rates, ((size_t)jmax + 1) * sizeof *rates);
    pthread_mutex_unlock(&g_tables_lock);
}

static double poisson_average(double lambda, const double *rates, unsigned jmax)
{
    const double spread = 12.0 * sqrt(lambda) + 24.0;
    const double j_lo = floor(lambda - spread) < 0.0 ? 0.0 : floor(lambda - spread);
    const double j_hi = fmin(ceil(lambda + spread), (double)jmax);
    double rate = 0.0;
    for (double j = j_lo; j <= j_hi; j++)
        rate += exp(j * log(lambda) - lambda - lgamma(j + 1.0)) * rates[(unsigned)j];
    return rate < 1.0 ? rate : 1.0;
}

static unsigned jmax_for(double lambda)
{
    return (unsigned)ceil(lambda + 12.0 * sqrt(lambda) + 24.0);
}

/* The rate at lambda keys per block from a table of jmax + 1 rates (NULL
 * or too short: computed here, for at most *steps steps of the chain, which
 * it spends; past them, or saturated, the loads are taken to concentrate at
 * lambda: exact enough once the block is all but full, which is where the
 * chain costs most, and the bound a crafted file's figures cannot pass). */
static double rate_at(double lambda, unsigned k, unsigned block, const double *rates, unsigned jmax,
                      uint64_t *steps)
{
    const unsigned need = lambda > BK_LAMBDA_EXACT ? 0 : jmax_for(lambda);
    const uint64_t cost = (uint64_t)need * k * block;
    if (lambda > BK_LAMBDA_EXACT || ((!rates || jmax < need) && cost > *steps))
        return pow(-expm1((double)k * lambda * log1p(-1.0 / (double)block)), (double)k);
    double own[BK_JMAX + 1];
    if (!rates || jmax < need) {
        block_rates(block, k, need, own);
        *steps -= cost;
        rates = own;
        jmax = need;
    }
    return poisson_average(lambda, rates, jmax);
}

double bk_rate_blocked_within(uint64_t m, unsigned k, uint64_t n, unsigned block, uint64_t *steps)
{
    if (m < block || k == 0 || block > 512)
        return 1.0;
    if (n == 0)
        return 0.0;
    return rate_at((double)n * (double)block / (double)m, k, block, NULL, 0, steps);
}

double bk_rate_blocked(uint64_t m, unsigned k, uint64_t n, unsigned block)
{
    uint64_t steps = BK_RATE_STEPS;
    return bk_rate_blocked_within(m, k, n, block, &steps);
}

double bk_rate_for_within(uint64_t m, unsigned k, uint64_t n, unsigned block, uint64_t *steps)
{
    return block ? bk_rate_blocked_within(m, k, n, block, steps) : bk_rate_after(m, k, n);
}

double bk_rate_for(uint64_t m, unsigned k, uint64_t n, unsigned block)
{
    uint64_t steps = BK_RATE_STEPS;
    return bk_rate_for_within(m, k, n, block, &steps);
}

uint64_t bk_set_limit(uint64_t m, unsigned k, unsigned block, double p, uint64_t capacity)
{
    /* one table of per-load rates covers every fill up to twice the
     * capacity's (rate_at computes its own beyond that) */
    double rates[BK_JMAX + 1];
    /* Exact for the shapes sizing makes (k up to 180: at most 1432 x 180 x
     * 512 = 1.3e8 steps for the whole search); past the budget (pinned or
     * crafted shapes: a file's k of 1,805 in 512-cell blocks) a fill's rate
     * is the concentrated-load bound, so no file costs more to load. The
     * same shape gives the same limit however the filter was made, loaded
     * or mapped. */
    uint64_t budget = BK_SET_LIMIT_STEPS;
    const double lambda_hi =
        fmin(2.0 * (double)capacity * (double)block / (double)m, BK_LAMBDA_EXACT);
    unsigned jmax = block && block <= 512 ? jmax_for(lambda_hi) : 0;
    if (jmax && (uint64_t)jmax * k * block > budget)
        jmax = 0; /* rate_at then bounds each fill by itself */
    if (jmax) {
        block_rates(block, k, jmax, rates);
        budget -= (uint64_t)jmax * k * block;
    }
    uint64_t lo = 0, hi = m; /* the rate of `lo` set cells is at most p */
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo + 1) / 2;
        double r;
        if (!block) {
            r = bk_rate_from_fill((double)mid / (double)m, k);
        } else {
            const double n = bk_cardinality_of_fill(m, k, mid, block);
            r = !(n < 0x1p63) ? 1.0
                : n == 0
                    ? 0.0
                    : rate_at(n * block / (double)m, k, block, jmax ? rates : NULL, jmax, &budget);
        }
        if (r <= p)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The fewest blocks with which k probes reach p, or 0 if none up to the
 * limit. Blocks at or past `start` hold at most n / start keys each: one
 * table of per-load rates serves the whole search. */
static uint64_t blocks_for(uint64_t n, double p, unsigned block, unsigned k, uint64_t start)
{
    const uint64_t max = BK_BITS_MAX / block;
    double rates[BK_JMAX + 1];
    uint64_t unbounded = UINT64_MAX; /* sizing is exact, whatever it costs */
    const double lambda_max = fmin((double)n / (double)start, BK_LAMBDA_EXACT);
    const unsigned jmax = jmax_for(lambda_max);
    block_rates(block, k, jmax, rates);
#define RATE(nb) (rate_at((double)n / (double)(nb), k, block, rates, jmax, &unbounded))
    uint64_t lo = start, hi = start;
    while (RATE(hi) > p) {
        if (hi == max)
            return 0;
        lo = hi + 1;
        hi = hi > max / 2 ? max : hi * 2;
    }
    while (lo < hi) { /* the rate falls as blocks are added */
        const uint64_t mid = lo + (hi - lo) / 2;
        if (RATE(mid) <= p)
            hi = mid;
        else
            lo = mid + 1;
    }
#undef RATE
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

/* A scalable chain's slice (Almeida, Baquero, Preguica & Hutchison 2007,
 * section 4): the chain grows when a slice would pass fill 1/2, and a
 * classic slice at fill f passes an absent key with f^k, so k =
 * ceil(log2(1/p)) makes its rate at most (1/2)^k <= p however many keys it
 * took to get there. m = k n / ln 2 brings n keys to fill 1/2 on average
 * (expected fill 1 - e^(-k n / m)): half the slices so sized grow before n
 * (BK_SLICE_AVERAGE, chains made by 0.1.0). BK_SLICE_HOLDS adds the bits
 * that keep n keys under the limit but in a negligible share of runs (see
 * below). At least 2k bits, so an empty slice can take one key without
 * passing 1/2. A blocked slice's rate depends on how keys spread over blocks,
 * not on the fill alone: it is sized by bk_size_for and is full at its
 * capacity in keys or when the rate estimated from its fill passes p (see
 * src/scalable); BK_SLICE_HOLDS adds blocks until the fill of n keys stays
 * under the latter. */
/* The fewest blocks of a blocked slice. The model's rate is an average over
 * how keys fall into blocks; one filter's rate is that of the blocks it got,
 * and with a few dozen blocks one crowded block decides it: measured over 40
 * hash keys, a chain whose first slice had 63 blocks (1,000 keys at 1e-5)
 * exceeded its compound bound in 4 (1.4x to 3.2x), one of 274 blocks or more
 * in none beyond what counting noise explains. 256 blocks is 16 KiB. */
#define BK_SLICE_MIN_BLOCKS 256

/* Standard deviations of the set cells a slice keeps in hand for its
 * capacity: a slice holds its n keys unless the cells n - 1 keys set
 * exceed their mean by this many (a sum of many nearly independent cells,
 * close to normal: a one-sided tail of about 1e-9). */
#define BK_SLICE_SIGMAS 6.0

/* The set cells of an array of m cells (blocks of `block`, 0: classic)
 * after n keys of k probes each, with probes uniform in the key's block:
 * mean and standard deviation. Classic: the occupancy moments of k n balls
 * in m bins. Blocked: the keys per block Poisson (mean n / blocks), the
 * blocks independent (which overstates the spread a little): with
 * A(x) = e^(lambda ((1 - x / B)^k - 1)), a block's clear cells have mean
 * B A(1) and variance B (B - 1) A(2) + B A(1) - B^2 A(1)^2. */
static void set_moments(uint64_t m, unsigned k, uint64_t n, unsigned block, double *mean,
                        double *sd)
{
    if (!block) {
        const double balls = (double)k * (double)n, md = (double)m;
        const double clear = exp(balls * log1p(-1.0 / md)); /* a cell's chance */
        const double lambda = balls / md, e = exp(-lambda); /* for the variance */
        *mean = md * (1.0 - clear);
        *sd = sqrt(fmax(0.0, md * e * (1.0 - (1.0 + lambda) * e)));
        return;
    }
    const uint64_t whole = m / block; /* m is whole blocks */
    const double b = (double)block, blocks = (double)whole;
    const double lambda = (double)n / blocks;
    const double a1 = exp(lambda * expm1((double)k * log1p(-1.0 / b)));
    const double a2 = exp(lambda * expm1((double)k * log1p(-2.0 / b)));
    *mean = (double)m * (1.0 - a1);
    *sd = sqrt(fmax(0.0, blocks * (b * (b - 1.0) * a2 + b * a1 - b * b * a1 * a1)));
}

/* The set cells past which a slice of m cells takes no key (the limit
 * bk_scalable_limit gives it, less the k cells the next key may set). */
static double slice_room(uint64_t m, unsigned k, unsigned block, double p, uint64_t n)
{
    const uint64_t limit = block ? bk_set_limit(m, k, block, p, n) : m / 2;
    return (double)limit - (double)k;
}

/* Grow *m (whole blocks) until n keys fit under the slice's limit in all but
 * a negligible share of runs: the set cells of n - 1 keys, their mean plus
 * BK_SLICE_SIGMAS deviations, at most slice_room. Each step adds the cells
 * the shortfall needs at the slack's slowest growth (a third of a cell per
 * cell added, classic at fill 1/2: 1/2 - e^-x (1 + x) with x = ln 2 gives
 * 0.35), so it ends in a few steps. */
static int add_headroom(uint64_t n, double p, unsigned block, unsigned k, uint64_t *m)
{
    const uint64_t unit = block ? block : 1;
    for (int step = 0; step < 64; step++) {
        double mean, sd;
        set_moments(*m, k, n - 1, block, &mean, &sd);
        const double short_by = mean + BK_SLICE_SIGMAS * sd - slice_room(*m, k, block, p, n);
        if (short_by <= 0.0)
            return BK_OK;
        const double more = ceil(short_by / 0.3 / (double)unit) * (double)unit;
        if (!((double)*m + more <= (double)BK_BITS_MAX))
            return BK_ERANGE;
        *m += (uint64_t)more;
    }
    return BK_OK; /* not reached for shapes sizing makes: the last m only has more room */
}

int bk_size_slice(uint64_t n, double p, unsigned block, bk_slice_rule rule, uint64_t *m_out,
                  unsigned *k_out)
{
    if (block) {
        int rc = bk_size_for(n, p, block, m_out, k_out);
        if (rc == BK_OK && *m_out < (uint64_t)BK_SLICE_MIN_BLOCKS * block)
            *m_out = (uint64_t)BK_SLICE_MIN_BLOCKS * block; /* the same k: a lower rate */
        if (rc == BK_OK && rule == BK_SLICE_HOLDS)
            rc = add_headroom(n, p, block, *k_out, m_out);
        return rc;
    }
    if (unsizable(n, p) != BK_OK)
        return BK_EINVAL;
    unsigned k = (unsigned)fmax(1.0, ceil(-log2(p)));
    while (ldexp(1.0, -(int)k) > p) /* guard the rounding of log2 both ways */
        k++;
    while (k > 1 && ldexp(1.0, -(int)(k - 1)) <= p)
        k--;
    if (k > BK_K_MAX)
        return BK_ERANGE;
    double m_real = ceil((double)k * (double)n / LN2);
    if (m_real < 2.0 * k)
        m_real = 2.0 * k;
    if (!(m_real <= (double)BK_BITS_MAX))
        return BK_ERANGE;
    uint64_t m = (uint64_t)m_real;
    if (rule == BK_SLICE_HOLDS) {
        const int rc = add_headroom(n, p, 0, k, &m);
        if (rc != BK_OK)
            return rc;
    }
    *m_out = m;
    *k_out = k;
    return BK_OK;
}

int bk_size_for(uint64_t n, double p, unsigned block, uint64_t *m_out, unsigned *k_out)
{
    if (unsizable(n, p) != BK_OK)
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

unsigned bk_best_k(uint64_t m, uint64_t n, unsigned block)
{
    const unsigned kc = classic_k(m, n);
    if (!block)
        return kc;
    /* A blocked filter's best k is the classic one or lower, and never more
     * than the cells of a block; the rate is unimodal in k: a ternary
     * search, ties to the smaller k (fewer probes). */
    unsigned lo = 1, hi = kc + 2 < block ? kc + 2 : block;
    while (hi - lo > 2) {
        const unsigned a = lo + (hi - lo) / 3, b = hi - (hi - lo) / 3;
        if (bk_rate_blocked(m, a, n, block) <= bk_rate_blocked(m, b, n, block))
            hi = b;
        else
            lo = a;
    }
    unsigned best = lo;
    double best_rate = bk_rate_blocked(m, lo, n, block);
    for (unsigned k = lo + 1; k <= hi; k++) {
        const double r = bk_rate_blocked(m, k, n, block);
        if (r < best_rate) {
            best = k;
            best_rate = r;
        }
    }
    return best;
}

/* BK_OK when pinned bits are whole blocks, else BK_ECONFIG saying so. */
static int whole_blocks(uint64_t bits, unsigned block)
{
    if (block && bits % block != 0)
        return bk_fail(BK_ECONFIG,
                       "bits: %llu is not a whole number of blocks (layout=blocked keeps a key "
                       "in one 64-byte block of %u cells: give a multiple of %u)",
                       (unsigned long long)bits, block, block);
    return BK_OK;
}

int bk_size_config(const bk_config *cfg, unsigned block, uint64_t *m, unsigned *k)
{
    if (!cfg->bits)
        return bk_size_for(cfg->capacity, cfg->fpr, block, m, k);
    const int rc = whole_blocks(cfg->bits, block);
    if (rc != BK_OK)
        return rc;
    *m = cfg->bits;
    *k = cfg->hashes ? (unsigned)cfg->hashes : bk_best_k(cfg->bits, cfg->capacity, block);
    return BK_OK;
}

int bk_capacity_fit(uint64_t m, double p, unsigned block, uint64_t *n_out)
{
    if (unsizable(m, p) != BK_OK)
        return BK_EINVAL;
    const int rc = whole_blocks(m, block);
    if (rc != BK_OK)
        return rc;
#define FITS(n) (bk_rate_for(m, bk_best_k(m, (n), block), (n), block) <= p)
    if (!FITS(1))
        return BK_ERANGE;
    uint64_t lo = 1, hi = BK_CAPACITY_MAX; /* FITS(lo) */
    if (FITS(hi))
        lo = hi;
    while (lo < hi) { /* the rate rises with the keys */
        const uint64_t mid = lo + (hi - lo + 1) / 2;
        if (FITS(mid))
            lo = mid;
        else
            hi = mid - 1;
    }
#undef FITS
    *n_out = lo;
    return BK_OK;
}

/* *out for an array of m cells and k probes holding capacity keys. */
static void plan_of(uint64_t m, unsigned k, uint64_t capacity, unsigned cell_bits, unsigned block,
                    bk_plan *out)
{
    out->bits = m;
    out->bytes = cell_bits == 4 ? m / 2 + (m % 2 != 0) : bk_bits_to_bytes(m);
    out->k = k;
    out->expected_fpr = bk_rate_for(m, k, capacity, block);
    out->bits_per_key = (double)m * cell_bits / (double)capacity;
}

int bk_plan_fill(uint64_t capacity, double fpr, bk_layout layout, unsigned cell_bits, int slice,
                 bk_plan *out)
{
    const unsigned block = bk_block_cells(layout, cell_bits);
    uint64_t m;
    unsigned k;
    const int rc = slice ? bk_size_slice(capacity, fpr, block, BK_SLICE_HOLDS, &m, &k)
                         : bk_size_for(capacity, fpr, block, &m, &k);
    if (rc == BK_OK)
        plan_of(m, k, capacity, cell_bits, block, out);
    return rc;
}

int bk_plan_array(const bk_config *cfg, unsigned cell_bits, bk_plan *out)
{
    const unsigned block = bk_block_cells(cfg->layout, cell_bits);
    uint64_t m;
    unsigned k;
    const int rc = bk_size_config(cfg, block, &m, &k);
    if (rc == BK_OK)
        plan_of(m, k, cfg->capacity, cell_bits, block, out);
    return rc;
}

int bk_plan_size(uint64_t capacity, double fpr, bk_plan *out)
{
    bk_call_begin();
    if (!out)
        return bk_fail(BK_EINVAL, "plan_size: no result pointer");
    if (capacity == 0 || capacity > BK_CAPACITY_MAX || !(fpr > 0.0 && fpr <= BK_FPR_MAX))
        return bk_fail(BK_EINVAL, "plan_size: capacity must be in 1 .. 2^48 and fpr in (0, 0.5]");
    return bk_done(bk_plan_fill(capacity, fpr, BK_LAYOUT_CLASSIC, 1, 0, out), "plan_size");
}
