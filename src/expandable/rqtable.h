/*
 * rqtable.h - the expandable filter's rank-and-select table (internal to
 * src/expandable): the same entries as qtable.h's table (a key's home is
 * its first q digest bits, its field its fingerprint with a marker, the
 * same doubling), laid out as Pandey, Bender, Johnson and Patro's
 * rank-and-select quotient filter ("A General-Purpose Counting Filter",
 * SIGMOD 2017) lays its slots out, so a run is found by counting bits in
 * two words, not by walking slots.
 *
 * Slots come in blocks of S = RQ_SLOTS (32; 64 and 16 build too). A block
 * is RQ_HEAD bytes, then its S fields of r bits packed little-endian (slot
 * j at bits j*r .. j*r + r - 1 of the field bytes read as one
 * little-endian number):
 *   S/8 bytes   occupied  bit j: some key's home is the block's slot j
 *   S/8 bytes   runend    bit j: slot j holds the last entry of a run
 *   4 bytes     offset    how many of the block's first slots hold
 *                         entries of homes before the block (the slots up
 *                         to the last run end of such a home; 0 when none
 *                         reaches the block)
 * Runs sit in the order of their homes, each as far left as its home and
 * the runs before it allow, and an entry's field is never 0 (the marker),
 * so a slot is empty exactly when its field is 0. The run of home x ends
 * at the k-th run end counted from slot S*b + offset(b), b = x / S, k the
 * occupied bits of block b up to x: one popcount and one select, however
 * long the cluster. The table has 2^q homes and whole blocks of slack
 * after them for the last runs' spill, then 8 bytes of padding (zero), so
 * any field is read with one 8-byte load. The block size trades memory (3
 * bits a slot of counts at 32, 2.5 at 64, 4 at 16) against the lines a
 * lookup reads (a block's counts and its home's field: 164 bytes apart at
 * most at 64 slots and r = 18, 84 at 32); bench_table measures each
 * (docs/performance.md). A doubling writes offsets it takes to be under
 * 2^32 (a cluster of 2^32 slots), as every add keeps them.
 *
 * Internal, not yet the filter's table: its measurement against qtable.h's
 * (bench/bench_table.c) decides (docs/design.md, "expandable").
 */
#ifndef BK_EXPANDABLE_RQTABLE_H
#define BK_EXPANDABLE_RQTABLE_H

#include <stdint.h>

#include "qtable.h"

/* Slots a block (above); -DRQ_SLOTS=64u or 16u builds the others. */
#ifndef RQ_SLOTS
#define RQ_SLOTS 32u
#endif
#define RQ_SHIFT (RQ_SLOTS == 64u ? 6u : RQ_SLOTS == 32u ? 5u : 4u)
#define RQ_MASK  ((uint64_t)RQ_SLOTS - 1)
#define RQ_END   (RQ_SLOTS / 8)     /* the runend word's byte */
#define RQ_OFF   (RQ_SLOTS / 4)     /* the offset's */
#define RQ_HEAD  (RQ_SLOTS / 4 + 4) /* a block's occupied, runend and offset bytes */
/* a block's slots as bits of a word */
#define RQ_WORD (~UINT64_C(0) >> (64 - RQ_SLOTS))

typedef struct rq_table {
    uint8_t *data;    /* the blocks, then 8 bytes of padding */
    uint64_t nbytes;  /* blocks * rq_block_bytes(r) + 8 */
    uint64_t blocks;  /* homes / RQ_SLOTS and the slack's */
    uint64_t slots;   /* blocks * RQ_SLOTS */
    unsigned q;       /* quotient bits (2^q >= RQ_SLOTS: whole blocks of homes) */
    unsigned r;       /* field bits (2 .. XP_FIELD_MAX) */
    uint64_t entries; /* non-empty slots */
    uint64_t by_len[XP_FIELD_MAX];
} rq_table;

static inline uint64_t rq_block_bytes(unsigned r)
{
    return RQ_HEAD + RQ_SLOTS / 8 * (uint64_t)r;
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
 * ends in the marker): XP_PRESENT when an entry of x matches it (nothing
 * changed), XP_ADDED, or XP_NO_ROOM when no slot is free before the
 * table's end or an offset would pass 2^32 - 1 (nothing changed). The
 * same answers as xp_add on a table of the same entries. */
int rq_add(rq_table *t, uint64_t x, uint64_t probe, uint64_t field);

/* The blocks a doubled t needs: xp_double_slots' bound (an entry at slot
 * p lands at 2p + 1 or before, plus one for each entry with no bit left)
 * and one block past the homes at least. */
uint64_t rq_double_blocks(const rq_table *t);

/* Fill `to` (q = t->q + 1, r >= t->r, blocks from rq_double_blocks, data
 * zeroed, nbytes set) with t's entries doubled as xp_double doubles them.
 * long: one pass over t. */
void rq_double(const rq_table *t, rq_table *to);

#endif
