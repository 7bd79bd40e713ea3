/*
 * qtable.h - the expandable filter's table (internal to src/expandable): a
 * quotient filter (Bender, Farach-Colton, Johnson et al., "Don't thrash:
 * how to cache your hash on flash", VLDB 2012) whose fingerprints shrink
 * by one bit each time the table doubles, as InfiniFilter (Dayan, Bercea,
 * Reviriego and Pagh, SIGMOD 2023) does.
 *
 * A key's digest is read as one string of 128 bits, h1 then h2, most
 * significant first. Its first q bits are its quotient: the home slot of
 * 2^q. The bits after them are its fingerprint. A table of 2^q homes has
 * those slots and `slack` more after them, where the runs of the last homes
 * spill (no wrap-around). Each slot is w = r + 3 bits:
 *   bit 0 occupied      some key's quotient is this slot's index
 *   bit 1 continuation  the slot's entry is not the first of its run
 *   bit 2 shifted       the slot's entry is not in its home
 *   bits 3 .. w-1       the field: the entry's L fingerprint bits at the
 *                       top, then a 1 (the marker), then zeros; 0 = empty
 * so an entry's fingerprint has L = r - 1 - (trailing zeros of the field)
 * bits. Entries of one quotient (a run) sit next to each other, runs in
 * the order of their quotients, as far left as the runs before them allow.
 * Slots are packed little-endian: slot i is bits i*w .. i*w + w - 1 of the
 * payload read as one little-endian number. The payload is whole 64-bit
 * words and one more past the last slot's, all zero beyond it, so any slot
 * is read with one 8-byte load.
 *
 * Doubling: the entry of quotient x with fingerprint b f' (first bit b)
 * becomes the entry of quotient 2x + b with fingerprint f' (its own bits,
 * moved: a lookup of the same key finds it). An entry with no bit left
 * (L = 0, matching every key of its quotient) goes to both 2x and 2x + 1.
 * A lookup of quotient x meets an entry of fingerprint length L with
 * chance 2^-L, so the rate of the table is the sum over entries of
 * 2^-(L + q): a doubling leaves it unchanged (each term's L falls by one as
 * q rises by one), and only adds raise it (xp_rate).
 */
#ifndef BK_EXPANDABLE_QTABLE_H
#define BK_EXPANDABLE_QTABLE_H

#include <stdatomic.h>
#include <stdint.h>

#include "../core/filter_impl.h"

#define XP_META      3u
#define XP_OCC       1u
#define XP_CONT      2u
#define XP_SHIFT     4u
#define XP_FIELD_MAX 54u /* r: a slot (r + 3 bits) and its bit offset fit one 64-bit read */
#define XP_QBITS_MIN 6u
#define XP_QBITS_MAX 50u

typedef struct xp_table {
    uint8_t *data;    /* the slots */
    uint64_t nbytes;  /* ceil(slots * w / 64) * 8 + 8 */
    uint64_t slots;   /* 2^q homes, then the slack */
    unsigned q;       /* quotient bits */
    unsigned r;       /* field bits */
    unsigned w;       /* slot bits: r + 3 */
    uint64_t entries; /* non-empty slots */
    uint64_t ones;    /* set bits of the payload (what a file's census counts) */
    /* entries by fingerprint length L (0 .. r - 1): the rate a lookup meets
     * is the sum of by_len[L] 2^-(L + q) (xp_rate) */
    uint64_t by_len[XP_FIELD_MAX];
} xp_table;

/* The payload bytes of `slots` slots of w bits, and the slots they hold. */
static inline uint64_t xp_bytes(uint64_t slots, unsigned w)
{
    return (slots * w + 63) / 64 * 8 + 8;
}

static inline uint64_t xp_slots_in(uint64_t nbytes, unsigned w)
{
    return nbytes < 8 ? 0 : (nbytes - 8) * 8 / w;
}

/* The bits of a key's digest after its first `from`, `len` of them (1 ..
 * 63), as a number. */
static inline uint64_t xp_bits(const bk_hash *h, unsigned from, unsigned len)
{
    const uint64_t hi =
        from < 64 ? h->h1 << from | (from ? h->h2 >> (64 - from) : 0) : h->h2 << (from - 64);
    return hi >> (64 - len);
}

/* The home of a key in t. */
static inline uint64_t xp_home(const xp_table *t, const bk_hash *h)
{
    return h->h1 >> (64 - t->q);
}

/* A key's longest fingerprint, r - 1 bits, and a 0 below it: what a
 * lookup compares entries with, and with the 0 made 1 (the marker) the
 * entry an add puts in. */
static inline uint64_t xp_probe(const xp_table *t, const bk_hash *h)
{
    return xp_bits(h, t->q, t->r - 1) << 1;
}

/* The slots a table of q quotient bits has past its homes. */
uint64_t xp_slack(unsigned q);

/* The rate a lookup of t meets. */
double xp_rate(const xp_table *t);

/* 1 when a key whose probe field is `probe` may be in t (its home x). */
int xp_lookup(const xp_table *t, uint64_t x, uint64_t probe);

/* Add a key of home x, probe field `probe` and field `field` (its longest
 * fingerprint), walking its run once: XP_PRESENT when it may be there
 * already (nothing changed), XP_ADDED, or XP_NO_ROOM when no slot is free
 * before the end of the table (nothing changed). */
#define XP_PRESENT 1
#define XP_ADDED   0
#define XP_NO_ROOM (-1)
int xp_add(xp_table *t, uint64_t x, uint64_t probe, uint64_t field);

/* The slots a doubled t needs: its homes and slack, and room for whatever
 * its last runs spill past them. An entry at slot p of t lands at slot
 * 2p + 1 or before, plus one for each entry with no bit left (which goes
 * to both halves): in the layout, the entry k of a sorted order sits at
 * max over j <= k of (q_j + k - j), and doubling maps q_j to at most
 * 2 q_j + 1 while keeping each run's entries in its place in the order. */
uint64_t xp_double_slots(const xp_table *t);

/* Fill `to` (q = t->q + 1, r >= t->r, slots from xp_double_slots, data
 * zeroed, nbytes set) with t's entries doubled. release(ctx, upto), when
 * not NULL, is told as the reading passes whole bytes of t's payload that
 * it will not read again. */
void xp_double(const xp_table *t, xp_table *to, void (*release)(void *ctx, uint64_t upto),
               void *ctx);

/* Check a table read from outside: every slot's bits consistent (runs
 * where their quotients say, fields within r bits, nothing past the last
 * slot), and count its entries, ones and load into t. BK_OK or
 * BK_ECORRUPT (detail set). long: one pass over the table. */
int xp_check(xp_table *t);

/* Of xp_check, only that no bit is set past the last slot (O(1)). */
int xp_check_tail(const xp_table *t);

/* The check of slots from .. to-1 (from a cluster's start to one's end)
 * slot by slot, each run's home found by walking the occupied bits: what
 * xp_check and xp_check_at fall back on to name the slot and the rule
 * once their one-pass check finds a rule broken (the same verdict, one
 * mispredicted branch after another: several times slower). BK_OK or
 * BK_ECORRUPT (detail set). Reads t only. */
int xp_explain(const xp_table *t, uint64_t from, uint64_t to);

/* A table read from outside is checked lazily, a block of slots at a time,
 * before a lookup or add first reads it: the blocks of t; the words of its
 * `checked` map (xp_map_words: a bit a block checked sound, in words of
 * 64, then as many words, a bit a block found broken); and the check of
 * the block holding home x (every cluster that covers one of its slots,
 * whole): BK_OK at once when its sound bit is set, BK_ECORRUPT at once
 * when its broken bit is (a crafted cluster is walked once, not once a
 * lookup), else the check, which sets one of them. Reads t only;
 * concurrent callers may check one block twice. */
uint64_t xp_blocks(const xp_table *t);
uint64_t xp_map_words(const xp_table *t);
int xp_check_at(const xp_table *t, _Atomic uint64_t *checked, uint64_t x);

#endif
