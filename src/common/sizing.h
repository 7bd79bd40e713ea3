/*
 * sizing.h - the formulas, in one place (internal side; the public side is in
 * bloomkit.h: bk_plan_size, bk_rate_after, bk_estimate_cardinality).
 */
#ifndef BK_COMMON_SIZING_H
#define BK_COMMON_SIZING_H

#include <stdint.h>

#include "bloomkit.h"

/* The largest m (bits or counters) a filter may have: 2^56 is 8 PiB of bits,
 * far beyond any machine, and keeps every byte count well inside uint64_t and
 * (on 64-bit hosts) size_t. */
#define BK_BITS_MAX (UINT64_C(1) << 56)

/* m and k for n keys at rate p; BK_OK, BK_EINVAL (n == 0, p outside (0, 1)) or
 * BK_ERANGE (m > BK_BITS_MAX). */
int bk_size_for(uint64_t n, double p, uint64_t *m, unsigned *k);

/* Rate of a filter whose fraction `fill` of bits is set: fill^k, the chance
 * that k independent probes all land on set bits. */
double bk_rate_from_fill(double fill, unsigned k);

#endif
