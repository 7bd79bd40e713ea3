/*
 * rqtable.h - the expandable filter's rank-and-select table (internal to
 * src/expandable): the same entries as qtable.h's table (a key's home is
 * its first q digest bits, its field its fingerprint with a marker, the
 * same doubling), laid out as Pandey, Bender, Johnson and Patro's
 * rank-and-select quotient filter ("A General-Purpose Counting Filter",
 * SIGMOD 2017) lays its slots out, so a run is found by counting bits in
 * two words, not by walking slots.
 *
 * Slots come in blocks of 64. A block is RQ_HEAD bytes, then its 64
 * fields of r bits packed little-endian (slot j at bits j*r .. j*r + r - 1
 * of the field bytes read as one little-endian number):
 *   bytes 0-7    occupied  bit j: some key's home is the block's slot j
 *   bytes 8-15   runend    bit j: slot j holds the last entry of a run
 *   bytes 16-19  offset    how many of the block's first slots hold
 *                          entries of homes before the block (the slots
 *                          up to the last run end of such a home; 0 when
 *                          none reaches the block)
 * Runs sit in the order of their homes, each as far left as its home and
 * the runs before it allow, and an entry's field is never 0 (the marker),
 * so a slot is empty exactly when its field is 0. The run of home x ends
 * at the k-th run end counted from slot 64b + offset(b), b = x / 64, k the
 * occupied bits of block b up to x: one popcount and one select, however
 * long the cluster. The table has 2^q homes and whole blocks of slack
 * after them for the last runs' spill, then 8 bytes of padding (zero), so
 * any field is read with one 8-byte load.
 *
 * Internal, not yet the filter's table: its measurement against qtable.h's
 * (bench/bench_table.c) decides (docs/design.md, "expandable").
 */
#ifndef BK_EXPANDABLE_RQTABLE_H
#define BK_EXPANDABLE_RQTABLE_H

#include <stdint.h>

#include "qtable.h"

#define RQ_HEAD 20u /* a block's occupied, runend and offset bytes */

typedef struct rq_table {
    uint8_t *data;    /* the blocks, then 8 bytes of padding */
    uint64_t nbytes;  /* blocks * rq_block_bytes(r) + 8 */
    uint64_t blocks;  /* homes / 64 and the slack's */
    uint64_t slots;   /* blocks * 64 */
    unsigned q;       /* quotient bits (q >= 6: whole blocks of homes) */
    unsigned r;       /* field bits (2 .. XP_FIELD_MAX) */
    uint64_t entries; /* non-empty slots */
    uint64_t by_len[XP_FIELD_MAX];
} rq_table;

static inline uint64_t rq_block_bytes(unsigned r)
{
    return RQ_HEAD + 8 * (uint64_t)r;
}

/* The payload bytes of `blocks` blocks of r-bit fields. */
static inline uint64_t rq_bytes(uint64_t blocks, unsigned r)
{
    return blocks * rq_block_bytes(r) + 8;
}

/* 1 when a key whose probe field is `probe` (qtable.h's xp_probe) may be
 * in t (its home x < 2^q). Reads t only. */
int rq_lookup(const rq_table *t, uint64_t x, uint64_t probe);

/* Add a key of home x, probe field `probe` and field `field` (not 0: it
 * ends in the marker): XP_PRESENT
 * when an entry of x matches it (nothing changed), XP_ADDED, or XP_NO_ROOM
 * when no slot is free before the table's end (nothing changed). The same
 * answers as xp_add on a table of the same entries. */
int rq_add(rq_table *t, uint64_t x, uint64_t probe, uint64_t field);

/* The blocks a doubled t needs: the same bound as xp_double_slots. */
uint64_t rq_double_blocks(const rq_table *t);

/* Fill `to` (q = t->q + 1, r >= t->r, blocks from rq_double_blocks, data
 * zeroed, nbytes set) with t's entries doubled as xp_double doubles them.
 * long: one pass over t. */
void rq_double(const rq_table *t, rq_table *to);

#endif
