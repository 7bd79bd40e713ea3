/*
 * sizing.h - the formulas, in one place (internal side; the public side is in
 * bloomkit.h: bk_plan_size, bk_rate_after, bk_estimate_cardinality).
 */
#ifndef BK_COMMON_SIZING_H
#define BK_COMMON_SIZING_H

#include <stdint.h>

#include "bloomkit.h"
#include "bloomkit_tools.h"
#include "bloomkit_tools.h"

/* BK_BITS_MAX (bloomkit.h), the largest m (bits or counters) a filter may
 * have: 2^56 is 8 PiB of bits, far beyond any machine, and keeps every byte
 * count well inside uint64_t and (on 64-bit hosts) size_t.
 * BK_K_MAX, the most probes: log2(1/p) for the smallest double rate is about
 * 1075, so sizing never gets near it; it bounds stack buffers, what a file
 * may claim and a pinned `hashes`. */
#define BK_K_MAX BK_HASHES_MAX

/* Cells (bits or counters) per block: 0 for the classic layout, else the
 * cells of cell_bits bits that fill BK_BLOCK_BYTES. */
unsigned bk_block_cells(bk_layout layout, unsigned cell_bits);

/* m and k for n keys at rate p with blocks of `block` cells (0: classic).
 * Blocked m is a multiple of block, the smallest for which some k reaches p
 * by bk_rate_blocked. BK_OK, BK_EINVAL (n == 0, p outside (0, 1)) or
 * BK_ERANGE (m > BK_BITS_MAX). */
int bk_size_for(uint64_t n, double p, unsigned block, uint64_t *m, unsigned *k);

/* How bk_size_slice sizes a chain's slice for its n keys. BK_SLICE_HOLDS
 * (chains made by versions after 0.1.0): with the cells that keep n keys under the
 * slice's limit in all but about 1e-9 of runs, so a chain does not grow
 * before its capacity. BK_SLICE_AVERAGE (0.1.0 and before): n keys reach the limit on
 * average, and half the slices grew before n; kept so that Redis chains
 * made then (whose later slices every client sizes alike) and chains of
 * files made then keep growing as they did. */
typedef enum { BK_SLICE_HOLDS = 0, BK_SLICE_AVERAGE = 1 } bk_slice_rule;

/* m and k of a scalable chain's slice for n keys at rate p (block as
 * bk_size_for). Classic: k = ceil(log2(1/p)) and m = max(ceil(k n / ln 2), 2k),
 * so that n keys bring it to fill 1/2, where its rate (1/2)^k is at most p,
 * then the rule's headroom; blocked: bk_size_for, at least 256 blocks, then
 * the rule's headroom. Same errors as bk_size_for. */
int bk_size_slice(uint64_t n, double p, unsigned block, bk_slice_rule rule, uint64_t *m,
                  unsigned *k);

/* The most set cells an array of m cells (k probes, blocks of `block`, 0 for
 * classic) may have while its rate estimated from the fill
 * (bk_rate_of_fill) is at most p; capacity, the keys it was sized for,
 * bounds the work. A scalable chain's blocked slice stops taking keys
 * there, so what `info` estimates never exceeds the slice's share. */
uint64_t bk_set_limit(uint64_t m, unsigned k, unsigned block, double p, uint64_t capacity);

/* Fill *out for an array of `capacity` keys at rate fpr in layout with cells
 * of cell_bits bits, sized as a standard filter (slice 0) or as a scalable
 * chain's slice (slice 1, bk_size_slice). The variants' plan functions. */
int bk_plan_fill(uint64_t capacity, double fpr, bk_layout layout, unsigned cell_bits, int slice,
                 bk_plan *out);

/* Fill *out for the one array of a standard or counting filter of cfg
 * (cells of cell_bits bits): bk_size_config's m and k. Its errors. */
int bk_plan_array(const bk_config *cfg, unsigned cell_bits, bk_plan *out);

/* m and k of the one array of a standard or counting filter of cfg (valid),
 * with blocks of `block` cells: pinned (bits, and hashes or bk_best_k), or
 * sized from capacity and fpr (bk_size_for). Errors: bk_size_for's, and
 * BK_ECONFIG (with bk_last_error detail) for pinned bits that are not a
 * whole number of blocks. */
int bk_size_config(const bk_config *cfg, unsigned block, uint64_t *m, unsigned *k);

/* The k in 1 .. BK_K_MAX (blocked: .. block) with the lowest expected rate
 * for m cells and n keys (ties: the smaller k). */
unsigned bk_best_k(uint64_t m, uint64_t n, unsigned block);

/* The most keys n (1 .. BK_CAPACITY_MAX) that m cells in blocks of `block`
 * (0: classic) hold at expected rate at most p with the best k for n.
 * BK_EINVAL (m 0, p outside (0, 1)), BK_ECONFIG (m not whole blocks),
 * BK_ERANGE (not even one key). */
int bk_capacity_fit(uint64_t m, double p, unsigned block, uint64_t *n);

/* Expected rate after n keys with blocks of `block` cells; block 0 is
 * bk_rate_after. */
double bk_rate_for(uint64_t m, unsigned k, uint64_t n, unsigned block);

/* Steps of the blocked model's Markov chain (cells x probes) one rate may
 * take: about 4 ms. A rate that would take more is the closed form of a
 * saturated block (bk_rate_blocked), so no figure of a filter, however its
 * file was crafted, costs more. Every real filter's slice takes far fewer
 * (10^6 at 30 probes and 10 keys a block). */
#define BK_RATE_STEPS (UINT64_C(1) << 22)
/* A whole filter's figures share one budget (bk_stats): 4x one rate's. */
#define BK_RATE_STEPS_FILTER (UINT64_C(1) << 24)
/* The steps bk_set_limit may spend on one slice's per-load rates: enough
 * for every shape sizing makes, a bound on what a crafted file can cost. */
#define BK_SET_LIMIT_STEPS (UINT64_C(1) << 27)

/* bk_rate_for, bk_rate_blocked and bk_rate_of_fill spending at most *steps
 * of the chain (less what they spend), for a caller that computes many. */
double bk_rate_for_within(uint64_t m, unsigned k, uint64_t n, unsigned block, uint64_t *steps);
double bk_rate_blocked_within(uint64_t m, unsigned k, uint64_t n, unsigned block, uint64_t *steps);
double bk_rate_of_fill_within(uint64_t m, unsigned k, uint64_t set, unsigned block,
                              uint64_t *steps);

/* Rate of a filter whose fraction `fill` of bits is set: fill^k, the chance
 * that k independent probes all land on set bits. */
double bk_rate_from_fill(double fill, unsigned k);

/* Keys implied by `set` non-zero cells of m, k probes per key, in blocks of
 * `block` cells (0: classic, bk_estimate_cardinality). Blocked: a key's k
 * probes share one block, so they collide among themselves more often and a
 * key sets fewer than k cells; the classic formula would undercount. */
double bk_cardinality_of_fill(uint64_t m, unsigned k, uint64_t set, unsigned block);

/* Rate of an array of m cells, k probes and `set` non-zero cells, in blocks
 * of `block` cells (0: classic, fill^k). Blocked: the rate bk_rate_blocked
 * predicts for the number of keys the fill implies (bk_estimate_cardinality);
 * fill^k would understate it, as crowded blocks pass more often. */
double bk_rate_of_fill(uint64_t m, unsigned k, uint64_t set, unsigned block);

#endif
