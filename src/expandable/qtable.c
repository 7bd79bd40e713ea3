/*
 * qtable.c - the expandable filter's quotient table: slots, lookup, insert,
 * the walk over entries, doubling, and the check of a table read from a
 * file. Layout and the invariants: qtable.h.
 */
#include "qtable.h"

#include <math.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/bits.h"
#include "../common/error.h"

uint64_t xp_slack(unsigned q)
{
    const uint64_t s = 16 + (UINT64_C(1) << q) / 16;
    return s < 1024 ? s : 1024;
}

/* --- slots -------------------------------------------------------------- */

/* The 8 bytes at p as a little-endian number, and back. */
static uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static void store64(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, sizeof v);
}

/* The word holding slot i's bits (its first byte's and up to 7 after,
 * fewer at the payload's end). */
static uint64_t word_at(const xp_table *t, uint64_t byte)
{
    const uint64_t left = t->nbytes - byte;
    return left >= 8 ? load64(t->data + byte) : bk_le_get(t->data + byte, (unsigned)left);
}

static uint64_t get(const xp_table *t, uint64_t i)
{
    const uint64_t bit = i * t->w;
    return word_at(t, bit >> 3) >> (bit & 7) & ((UINT64_C(1) << t->w) - 1);
}

/* Set bits of v (no popcnt instruction is assumed: SWAR, as in
 * Hacker's Delight 5-1). */
static uint64_t ones(uint64_t v)
{
    v -= (v >> 1) & UINT64_C(0x5555555555555555);
    v = (v & UINT64_C(0x3333333333333333)) + ((v >> 2) & UINT64_C(0x3333333333333333));
    v = (v + (v >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    return (v * UINT64_C(0x0101010101010101)) >> 56;
}

static void put(xp_table *t, uint64_t i, uint64_t v)
{
    const uint64_t bit = i * t->w, byte = bit >> 3, left = t->nbytes - byte;
    const unsigned sh = (unsigned)(bit & 7);
    const uint64_t mask = ((UINT64_C(1) << t->w) - 1) << sh;
    const uint64_t word = word_at(t, byte), now = (word & ~mask) | v << sh;
    t->ones += ones(v) - ones(word & mask);
    if (left >= 8)
        store64(t->data + byte, now);
    else
        bk_le_put(t->data + byte, now, (unsigned)left);
}

static uint64_t field_of(uint64_t v)
{
    return v >> XP_META;
}

/* The fingerprint length of a non-empty field. */
static unsigned length_of(const xp_table *t, uint64_t field)
{
    return t->r - 1 - (unsigned)__builtin_ctzll(field);
}

/* A lookup's probe field matches an entry's field on the entry's bits. */
static int matches(uint64_t field, uint64_t probe)
{
    return ((field ^ probe) >> __builtin_ctzll(field) >> 1) == 0;
}

/* The slot where the run of quotient x starts, or would start were x
 * occupied (then the runs before it end there). Slot x is not empty. */
static uint64_t run_start(const xp_table *t, uint64_t x)
{
    uint64_t b = x;
    while (b > 0 && (get(t, b) & XP_SHIFT))
        b--;
    uint64_t s = b;
    while (b != x) { /* one run a quotient occupied from b up to x */
        do
            s++;
        while (s < t->slots && (get(t, s) & XP_CONT));
        do
            b++;
        while (b != x && !(get(t, b) & XP_OCC));
    }
    return s;
}

int xp_lookup(const xp_table *t, uint64_t x, uint64_t probe)
{
    if (!(get(t, x) & XP_OCC))
        return 0;
    uint64_t s = run_start(t, x);
    do {
        const uint64_t f = field_of(get(t, s));
        if (f && matches(f, probe))
            return 1;
    } while (++s < t->slots && (get(t, s) & XP_CONT));
    return 0;
}

int xp_insert(xp_table *t, uint64_t x, uint64_t field)
{
    const uint64_t vx = get(t, x);
    if (!field_of(vx)) { /* the home is free: a run of one, in place */
        put(t, x, field << XP_META | XP_OCC);
    } else {
        const int had = (vx & XP_OCC) != 0;
        uint64_t pos = run_start(t, x);
        if (had) /* at the end of x's run */
            while (++pos < t->slots && (get(t, pos) & XP_CONT))
                ;
        uint64_t e = pos;
        while (e < t->slots && field_of(get(t, e)))
            e++;
        if (e >= t->slots)
            return 0;
        for (uint64_t i = e; i > pos; i--) { /* one slot right; occupied bits stay */
            const uint64_t from = get(t, i - 1), to = get(t, i);
            put(t, i, (from & ~(uint64_t)XP_OCC) | XP_SHIFT | (to & XP_OCC));
        }
        const uint64_t old = get(t, pos);
        put(t, pos, field << XP_META | (had ? XP_CONT : 0) | XP_SHIFT | (old & XP_OCC));
        put(t, x, get(t, x) | XP_OCC);
    }
    t->entries++;
    t->load += ldexp(1.0, -(int)(length_of(t, field) + t->q));
    return 1;
}

/* --- walking and doubling ----------------------------------------------- */

/* The quotient of the entry at slot i (non-empty), given the quotient of
 * the last entry before it in its cluster. */
static uint64_t quotient_at(const xp_table *t, uint64_t i, uint64_t v, uint64_t last)
{
    if (!(v & XP_SHIFT))
        return i; /* at home: a cluster starts */
    if (v & XP_CONT)
        return last;
    uint64_t x = last;
    do
        x++;
    while (x < i && !(get(t, x) & XP_OCC));
    return x;
}

void xp_each(const xp_table *t, void (*fn)(void *ctx, uint64_t x, uint64_t field), void *ctx)
{
    uint64_t x = 0;
    for (uint64_t i = 0; i < t->slots; i++) {
        const uint64_t v = get(t, i);
        if (!field_of(v))
            continue;
        x = quotient_at(t, i, v, x);
        fn(ctx, x, field_of(v));
    }
}

/* A doubling's writer: entries come in order of their new quotients. */
typedef struct appender {
    xp_table *t;     /* NULL: only count where they would go */
    uint64_t next;   /* the first slot free after the last entry */
    uint64_t last_x; /* the last entry's quotient (UINT64_MAX: none yet) */
    uint64_t end;    /* the slot past the last entry */
} appender;

static void append(appender *a, uint64_t x, uint64_t field, unsigned len, unsigned q)
{
    const uint64_t pos = x > a->next ? x : a->next;
    if (a->t) {
        xp_table *t = a->t;
        put(t, pos,
            field << XP_META | (x == a->last_x ? XP_CONT : 0) | (pos != x ? XP_SHIFT : 0) |
                (get(t, pos) & XP_OCC));
        put(t, x, get(t, x) | XP_OCC);
        t->entries++;
        t->load += ldexp(1.0, -(int)(len + q));
    }
    a->last_x = x;
    a->next = pos + 1;
    a->end = pos + 1;
}

/* The run of quotient x in slots [s, e) of t, doubled into a: first the
 * entries whose next bit is 0, then those whose next bit is 1; an entry
 * with no bit left goes to both. */
static void double_run(const xp_table *t, uint64_t x, uint64_t s, uint64_t e, appender *a,
                       unsigned r2)
{
    for (uint64_t b = 0; b < 2; b++)
        for (uint64_t i = s; i < e; i++) {
            const uint64_t f = field_of(get(t, i));
            const unsigned len = length_of(t, f);
            if (len && (f >> (t->r - 1)) != b)
                continue;
            /* len bits left: drop the first (the new quotient's last) */
            const uint64_t rest = len ? (f << 1) & ((UINT64_C(1) << t->r) - 1) : f;
            append(a, 2 * x + b, rest << (r2 - t->r), len ? len - 1 : 0, t->q + 1);
        }
}

/* Double t's entries into a, telling release how far the reading got. */
static void double_into(const xp_table *t, appender *a, unsigned r2,
                        void (*release)(void *ctx, uint64_t upto), void *ctx)
{
    uint64_t x = 0, released = 0;
    const uint64_t step = BK_HUGE_PAGE;
    for (uint64_t i = 0; i < t->slots;) {
        const uint64_t v = get(t, i);
        if (!field_of(v)) {
            i++;
            continue;
        }
        x = quotient_at(t, i, v, x);
        uint64_t e = i + 1;
        while (e < t->slots && (get(t, e) & XP_CONT))
            e++;
        double_run(t, x, i, e, a, r2);
        i = e;
        /* bytes before slot x's are read no more (a later run's quotient
         * is read from slots after x) */
        const uint64_t done = x * t->w / 8;
        if (release && done >= released + step) {
            released = done / step * step;
            release(ctx, released);
        }
    }
}

uint64_t xp_double_slots(const xp_table *t)
{
    appender a = {NULL, 0, UINT64_MAX, 0};
    double_into(t, &a, t->r, NULL, NULL);
    const uint64_t homes = UINT64_C(2) << t->q, slack = xp_slack(t->q + 1);
    return a.end > homes ? a.end + slack : homes + slack;
}

void xp_double(const xp_table *t, xp_table *to, void (*release)(void *ctx, uint64_t upto),
               void *ctx)
{
    appender a = {to, 0, UINT64_MAX, 0};
    to->entries = to->ones = 0;
    to->load = 0;
    double_into(t, &a, to->r, release, ctx);
}

/* --- checking a table from outside -------------------------------------- */

int xp_check(xp_table *t)
{
    const uint64_t homes = UINT64_C(1) << t->q;
    t->entries = 0;
    t->load = 0;
    uint64_t runs = 0, occupied = 0, x = 0;
    for (uint64_t i = 0; i < t->slots; i++) {
        const uint64_t v = get(t, i), f = field_of(v);
        if ((v & XP_OCC) && i >= homes)
            return bk_fail(BK_ECORRUPT, "expandable: slot %llu is past the homes but occupied",
                           (unsigned long long)i);
        occupied += v & XP_OCC;
        if (!f) {
            if (v & (XP_CONT | XP_SHIFT))
                return bk_fail(BK_ECORRUPT, "expandable: empty slot %llu has run bits",
                               (unsigned long long)i);
            if (v & XP_OCC)
                return bk_fail(BK_ECORRUPT, "expandable: occupied home %llu is empty",
                               (unsigned long long)i);
            continue;
        }
        const int first = i == 0 || !field_of(get(t, i - 1));
        if (first && (v & (XP_SHIFT | XP_CONT)))
            return bk_fail(BK_ECORRUPT, "expandable: slot %llu starts a cluster but is shifted",
                           (unsigned long long)i);
        if (!(v & XP_SHIFT) && ((v & XP_CONT) || !(v & XP_OCC)))
            return bk_fail(BK_ECORRUPT, "expandable: slot %llu is at home but not a run's first",
                           (unsigned long long)i);
        if (!(v & XP_CONT)) {
            runs++;
            x = quotient_at(t, i, v, x);
            if (x >= homes || x > i || ((v & XP_SHIFT) && x == i) || !(get(t, x) & XP_OCC))
                return bk_fail(BK_ECORRUPT, "expandable: the run at slot %llu has no home",
                               (unsigned long long)i);
        }
        t->entries++;
        t->load += ldexp(1.0, -(int)(length_of(t, f) + t->q));
    }
    if (runs != occupied)
        return bk_fail(BK_ECORRUPT, "expandable: %llu runs for %llu occupied homes",
                       (unsigned long long)runs, (unsigned long long)occupied);
    if (t->slots * t->w % 8) { /* the last byte's bits past the last slot */
        const unsigned used = (unsigned)(t->slots * t->w % 8);
        if (t->data[t->nbytes - 1] >> used)
            return bk_fail(BK_ECORRUPT, "expandable: bits set past the last slot");
    }
    t->ones = bk_popcount(t->data, (size_t)t->nbytes);
    return BK_OK;
}
