/*
 * rqtable.c - the rank-and-select table: blocks, finding a run by rank
 * and select, lookup, insert and doubling. Layout and invariants:
 * rqtable.h.
 */
#include "rqtable.h"

#include "qwords.h"

_Static_assert(RQ_SLOTS == 16 || RQ_SLOTS == 32 || RQ_SLOTS == 64,
               "RQ_SLOTS: 16, 32 or 64 (RQ_SHIFT knows no other)");

/* --- blocks -------------------------------------------------------------- */

static uint8_t *block_at(const rq_table *t, uint64_t b)
{
    return t->data + b * rq_block_bytes(t->r);
}

static uint64_t occ_word(const rq_table *t, uint64_t b)
{
    return xp_load64(block_at(t, b)) & RQ_WORD;
}

static uint64_t end_word(const rq_table *t, uint64_t b)
{
    return xp_load64(block_at(t, b) + RQ_END) & RQ_WORD;
}

static uint64_t offset_of(const rq_table *t, uint64_t b)
{
    const uint8_t *p = block_at(t, b) + RQ_OFF;
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
}

static void set_offset(rq_table *t, uint64_t b, uint64_t v)
{
    uint8_t *p = block_at(t, b) + RQ_OFF;
    for (unsigned i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Slot s's bit of its block's word at byte `at` (0: occupied, RQ_END:
 * runend). */
static int bit_of(const rq_table *t, unsigned at, uint64_t s)
{
    return (int)(xp_load64(block_at(t, s >> RQ_SHIFT) + at) >> (s & RQ_MASK) & 1);
}

static void set_bit_to(rq_table *t, unsigned at, uint64_t s, int v)
{
    uint8_t *p = block_at(t, s >> RQ_SHIFT) + at;
    const uint64_t m = UINT64_C(1) << (s & RQ_MASK);
    xp_store64(p, v ? xp_load64(p) | m : xp_load64(p) & ~m);
}

/* The n bits (n <= 56) at bit `at` of p, and those bits = v. */
static uint64_t get_bits(const uint8_t *p, uint64_t at, unsigned n)
{
    return xp_load64(p + (at >> 3)) >> (at & 7) & ((UINT64_C(1) << n) - 1);
}

static void put_bits(uint8_t *p, uint64_t at, unsigned n, uint64_t v)
{
    uint8_t *q = p + (at >> 3);
    const unsigned sh = (unsigned)(at & 7);
    const uint64_t mask = ((UINT64_C(1) << n) - 1) << sh;
    xp_store64(q, (xp_load64(q) & ~mask) | v << sh);
}

/* The field of slot s, and slot s's field = v. */
static uint64_t field(const rq_table *t, uint64_t s)
{
    return get_bits(block_at(t, s >> RQ_SHIFT) + RQ_HEAD, (s & RQ_MASK) * t->r, t->r);
}

static void set_field(rq_table *t, uint64_t s, uint64_t v)
{
    put_bits(block_at(t, s >> RQ_SHIFT) + RQ_HEAD, (s & RQ_MASK) * t->r, t->r, v);
}

/* The position of the (k+1)-th set bit of w (k < its set bits): each
 * byte's count, their running sums in one multiply, the byte holding it
 * found by comparing all eight sums with k at once, then that byte's bits. */
static unsigned select64(uint64_t w, uint64_t k)
{
    const uint64_t l8 = UINT64_C(0x0101010101010101), h8 = UINT64_C(0x8080808080808080);
    uint64_t s = w - ((w >> 1) & UINT64_C(0x5555555555555555));
    s = (s & UINT64_C(0x3333333333333333)) + ((s >> 2) & UINT64_C(0x3333333333333333));
    s = ((s + (s >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f)) * l8; /* byte i: bits of bytes 0 .. i */
    const unsigned at = (unsigned)xp_ones((((k * l8) | h8) - s) & h8) * 8;
    uint64_t rest = k - ((s << 8) >> at & 0xff), byte = w >> at & 0xff;
    for (; rest; rest--)
        byte &= byte - 1;
    return at + (unsigned)__builtin_ctzll(byte);
}

/* run_end's answer when the run ends are not where a sound table has them
 * (a slot past every slot, t->slots included: a run may end at the last). */
#define RQ_BROKEN UINT64_MAX

/* The first slot after the runs of homes up to x: the slot after x's run
 * when x is occupied (t->slots when it ends at the last slot), else where
 * its run would start (x, or the slot after the runs before it); or
 * RQ_BROKEN. */
static uint64_t run_end(const rq_table *t, uint64_t x)
{
    const uint64_t b = x >> RQ_SHIFT;
    uint64_t k = xp_ones(occ_word(t, b) & (~UINT64_C(0) >> (63 - (x & RQ_MASK))));
    const uint64_t from = (b << RQ_SHIFT) + offset_of(t, b);
    if (k == 0)
        return from > x ? from : x;
    uint64_t c = from >> RQ_SHIFT;
    if (c >= t->blocks)
        return RQ_BROKEN;
    uint64_t w = end_word(t, c) & (~UINT64_C(0) << (from & RQ_MASK));
    for (uint64_t n; (n = xp_ones(w)) < k;) {
        k -= n;
        if (++c >= t->blocks)
            return RQ_BROKEN;
        w = end_word(t, c);
    }
    const uint64_t end = (c << RQ_SHIFT) + select64(w, k - 1) + 1;
    return end > x ? end : x; /* x's own run, when x is occupied, ends at x or after */
}

/* Whether an entry of x's run (ending before slot e) matches probe; 0
 * when e says the run has no slot (not so in a sound table). */
static int run_matches(const rq_table *t, uint64_t x, uint64_t e, uint64_t probe)
{
    if (e <= x)
        return 0;
    for (uint64_t s = e - 1;; s--) {
        if (xp_matches(field(t, s), probe))
            return 1;
        if (s == x || bit_of(t, RQ_END, s - 1))
            return 0;
    }
}

int rq_lookup(const rq_table *t, uint64_t x, uint64_t probe)
{
    if (!bit_of(t, 0, x))
        return 0;
    const uint64_t e = run_end(t, x);
    return e != RQ_BROKEN && run_matches(t, x, e, probe);
}

/* --- insert ------------------------------------------------------------- */

/* Bits from .. to-1 of p moved `by` bits up, 56 at a time from the top
 * (each read before any write reaches it); the bits below from + by keep
 * their old values. */
static void move_bits_up(uint8_t *p, uint64_t from, uint64_t to, unsigned by)
{
    for (uint64_t hi = to; hi > from;) {
        const unsigned n = hi - from > 56 ? 56u : (unsigned)(hi - from);
        hi -= n;
        put_bits(p, hi + by, n, get_bits(p, hi, n));
    }
}

/* Move the fields and run ends of slots pos .. e-1 one slot right (slot e
 * empty; slot pos keeps its own): block by block from e's down, a block's
 * fields as one string of bits and its run ends as one word, its first
 * slot taking the last of the block before. */
static void shift_right(rq_table *t, uint64_t pos, uint64_t e)
{
    const unsigned r = t->r;
    for (uint64_t c = e >> RQ_SHIFT; e > pos; c--) {
        uint8_t *blk = block_at(t, c);
        const uint64_t base = c << RQ_SHIFT;
        /* the slots of this block that take their neighbour's: lo .. hi */
        const unsigned lo = pos + 1 >= base ? (unsigned)(pos + 1 - base) : 0;
        const unsigned hi = e - base < RQ_SLOTS ? (unsigned)(e - base) : RQ_SLOTS - 1;
        /* the run ends first: the 8 bytes stored with them may reach the
         * first fields (blocks under 64 slots), read before these move */
        const uint8_t *prev = lo == 0 ? block_at(t, c - 1) : NULL;
        const uint64_t ends = xp_load64(blk + RQ_END);
        const uint64_t moved = ends << 1 | (prev ? xp_load64(prev + RQ_END) >> RQ_MASK & 1 : 0);
        const uint64_t mask = (~UINT64_C(0) >> (63 - hi)) & (~UINT64_C(0) << lo);
        xp_store64(blk + RQ_END, (ends & ~mask) | (moved & mask));
        if (hi > 0)
            move_bits_up(blk + RQ_HEAD, (uint64_t)(lo > 0 ? lo - 1 : 0) * r, (uint64_t)hi * r, r);
        if (prev) /* slot 0 takes the last slot of the block before */
            put_bits(blk + RQ_HEAD, 0, r, get_bits(prev + RQ_HEAD, RQ_MASK * r, r));
        if (pos + 1 >= base)
            break;
    }
}

/* The first empty slot from s on, or t->slots. */
static uint64_t first_empty(const rq_table *t, uint64_t s)
{
    for (; s < t->slots; s = (s | RQ_MASK) + 1) {
        const uint8_t *f = block_at(t, s >> RQ_SHIFT) + RQ_HEAD;
        for (uint64_t j = s & RQ_MASK; j < RQ_SLOTS; j++)
            if (!get_bits(f, j * t->r, t->r))
                return (s & ~RQ_MASK) + j;
    }
    return t->slots;
}

int rq_add(rq_table *t, uint64_t x, uint64_t probe, uint64_t f)
{
    const int had = bit_of(t, 0, x);
    const uint64_t pos = run_end(t, x);
    if (pos == RQ_BROKEN)
        return XP_NO_ROOM;
    if (had && run_matches(t, x, pos, probe))
        return XP_PRESENT;
    if (pos >= t->slots) /* x's run ends at the last slot */
        return XP_NO_ROOM;
    const uint64_t e = first_empty(t, pos);
    if (e >= t->slots)
        return XP_NO_ROOM;
    /* the blocks from x's next to e's: their first slots now hold one
     * more entry of a home before them */
    for (uint64_t b = (x >> RQ_SHIFT) + 1; b <= e >> RQ_SHIFT; b++)
        if (offset_of(t, b) >= UINT32_MAX)
            return XP_NO_ROOM;
    for (uint64_t b = (x >> RQ_SHIFT) + 1; b <= e >> RQ_SHIFT; b++)
        set_offset(t, b, offset_of(t, b) + 1);
    shift_right(t, pos, e);
    set_field(t, pos, f);
    set_bit_to(t, RQ_END, pos, 1);
    if (had) /* x's run went on to pos - 1 */
        set_bit_to(t, RQ_END, pos - 1, 0);
    set_bit_to(t, 0, x, 1);
    t->entries++;
    t->by_len[t->r - 1 - (unsigned)__builtin_ctzll(f)]++;
    return XP_ADDED;
}

/* --- doubling ------------------------------------------------------------ */

uint64_t rq_double_blocks(const rq_table *t)
{
    uint64_t last = t->slots;
    while (last > 0 && !field(t, last - 1))
        last--;
    const uint64_t homes = UINT64_C(2) << t->q;
    const uint64_t spill = xp_spill(last, t->by_len[0]);
    const uint64_t slots = spill > homes + RQ_SLOTS ? spill : homes + RQ_SLOTS;
    return (slots + RQ_MASK) >> RQ_SHIFT;
}

/* A doubling's writer: entries come in order of their new homes and go as
 * far left as the ones before them allow. */
typedef struct rq_appender {
    rq_table *t;
    uint64_t next;   /* the first slot after the last entry */
    uint64_t last_x; /* the last entry's home (UINT64_MAX: none yet) */
} rq_appender;

static void rq_append(rq_appender *a, uint64_t x, uint64_t f)
{
    rq_table *t = a->t;
    const uint64_t pos = x > a->next ? x : a->next;
    set_field(t, pos, f);
    if (x == a->last_x)
        set_bit_to(t, RQ_END, pos - 1, 0);
    else
        set_bit_to(t, 0, x, 1);
    set_bit_to(t, RQ_END, pos, 1);
    /* the blocks after x's, up to pos's: their first slots, up to pos, hold
     * x's run */
    for (uint64_t b = (x >> RQ_SHIFT) + 1; b <= pos >> RQ_SHIFT; b++)
        set_offset(t, b, pos + 1 - (b << RQ_SHIFT));
    a->last_x = x;
    a->next = pos + 1;
}

/* The entries of x's run (slots from .. to-1) for one half (bit): to 2x +
 * bit, in their order. */
static void append_half(rq_appender *a, const rq_table *t, uint64_t x, uint64_t from, uint64_t to,
                        unsigned half)
{
    for (uint64_t s = from; s < to; s++) {
        unsigned bit, none;
        const uint64_t g = xp_split(t->r, field(t, s), a->t->r, &bit, &none);
        if (bit == half || none)
            rq_append(a, 2 * x + half, g);
    }
}

void rq_double(const rq_table *t, rq_table *to)
{
    rq_appender a = {to, 0, UINT64_MAX};
    uint64_t free_from = 0; /* the first slot after the last run */
    const uint64_t homes_blocks = (UINT64_C(1) << t->q) >> RQ_SHIFT;
    for (uint64_t b = 0; b < homes_blocks; b++) {
        for (uint64_t w = occ_word(t, b); w; w &= w - 1) {
            const uint64_t x = (b << RQ_SHIFT) + (unsigned)__builtin_ctzll(w);
            const uint64_t start = x > free_from ? x : free_from;
            uint64_t end = start;
            while (end + 1 < t->slots && !bit_of(t, RQ_END, end))
                end++;
            append_half(&a, t, x, start, end + 1, 0);
            append_half(&a, t, x, start, end + 1, 1);
            free_from = end + 1;
        }
    }
    xp_doubled_counts(t->by_len, t->entries, XP_FIELD_MAX, to->by_len, &to->entries);
}
