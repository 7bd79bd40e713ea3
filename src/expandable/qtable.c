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
#include "qwords.h"

uint64_t xp_slack(unsigned q)
{
    const uint64_t s = 16 + (UINT64_C(1) << q) / 16;
    return s < 1024 ? s : 1024;
}

/* --- slots -------------------------------------------------------------- */

/* The bits of the payload from bit `bit` on, the first slot's low bits
 * lowest: what a walk tests its metadata bits in (a slot's position
 * moving by w a step, not multiplied out each time). */
static uint64_t bits_at(const xp_table *t, uint64_t bit)
{
    return xp_load64(t->data + (bit >> 3)) >> (bit & 7);
}

/* Slot i. */
static uint64_t get(const xp_table *t, uint64_t i)
{
    return bits_at(t, i * t->w) & ((UINT64_C(1) << t->w) - 1);
}

static void put(xp_table *t, uint64_t i, uint64_t v)
{
    const uint64_t bit = i * t->w;
    uint8_t *p = t->data + (bit >> 3);
    const unsigned sh = (unsigned)(bit & 7);
    const uint64_t mask = ((UINT64_C(1) << t->w) - 1) << sh, word = xp_load64(p);
    t->ones += xp_ones(v) - xp_ones(word & mask);
    xp_store64(p, (word & ~mask) | v << sh);
}

/* Slot i = v, its set bits counted by the caller. */
static void set_slot(xp_table *t, uint64_t i, uint64_t v)
{
    const uint64_t bit = i * t->w;
    uint8_t *p = t->data + (bit >> 3);
    const unsigned sh = (unsigned)(bit & 7);
    const uint64_t mask = ((UINT64_C(1) << t->w) - 1) << sh;
    xp_store64(p, (xp_load64(p) & ~mask) | v << sh);
}

/* OR v into slot i (a doubling's writes: into zeroed memory), through the
 * one or two aligned words that hold it: a write's load then reads
 * exactly what the write before stored, which the store buffer forwards
 * (an unaligned load overlapping an unaligned store waits for it). */
static void or_slot(xp_table *t, uint64_t i, uint64_t v)
{
    const uint64_t bit = i * t->w;
    uint8_t *p = t->data + (bit >> 6) * 8;
    const unsigned sh = (unsigned)(bit & 63);
    xp_store64(p, xp_load64(p) | v << sh);
    /* the bits past the first word, none when it holds the slot (the
     * padding word is there when it is the last) */
    xp_store64(p + 8, xp_load64(p + 8) | (v >> 1) >> (63 - sh));
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

/* The slot where the run of quotient x starts, or would start were x
 * occupied (then the runs before it end there). Slot x is not empty. */
static uint64_t run_start(const xp_table *t, uint64_t x)
{
    const unsigned w = t->w;
    uint64_t b = x, bbit = x * w;
    while (b > 0 && (bits_at(t, bbit) & XP_SHIFT)) {
        b--;
        bbit -= w;
    }
    uint64_t s = b, sbit = bbit;
    while (b != x) { /* one run a quotient occupied from b up to x */
        do {
            s++;
            sbit += w;
        } while (s < t->slots && (bits_at(t, sbit) & XP_CONT));
        do {
            b++;
            bbit += w;
        } while (b != x && !(bits_at(t, bbit) & XP_OCC));
    }
    return s;
}

double xp_rate(const xp_table *t)
{
    double rate = 0;
    for (unsigned len = 0; len < XP_FIELD_MAX; len++)
        rate += ldexp((double)t->by_len[len], -(int)(len + t->q));
    return rate;
}

int xp_lookup(const xp_table *t, uint64_t x, uint64_t probe)
{
    if (!(get(t, x) & XP_OCC))
        return 0;
    uint64_t s = run_start(t, x);
    do {
        if (xp_matches(field_of(get(t, s)), probe))
            return 1;
    } while (++s < t->slots && (get(t, s) & XP_CONT));
    return 0;
}

/* The slots a shift reads before it writes any. */
#define XP_SHIFT_RUN 32

/* Move the entries of slots pos .. e-1 one slot right (slot e empty),
 * their occupied bits staying where they are and each moved one marked
 * shifted; slot pos keeps its old bits. Returns how many of slots pos+1 ..
 * e-1 were shifted before (the caller's count of set bits: each moved
 * entry gains a shifted bit unless it had one). Slots are read a stretch
 * at a time before any of the stretch is written: a slot read right
 * after its neighbour's store overlaps that store's bytes, which the
 * store buffer cannot forward (a stall a slot). */
static uint64_t shift_right(xp_table *t, uint64_t pos, uint64_t e)
{
    uint64_t v[XP_SHIFT_RUN + 1], shifted_before = 0;
    for (uint64_t hi = e; hi > pos;) {
        const uint64_t lo = hi - pos > XP_SHIFT_RUN ? hi - XP_SHIFT_RUN : pos;
        for (uint64_t i = lo; i <= hi; i++)
            v[i - lo] = get(t, i);
        for (uint64_t i = hi; i > lo; i--) {
            const uint64_t from = v[i - 1 - lo];
            shifted_before += i - 1 > pos && (from & XP_SHIFT);
            set_slot(t, i, (from & ~(uint64_t)XP_OCC) | XP_SHIFT | (v[i - lo] & XP_OCC));
        }
        hi = lo;
    }
    return shifted_before;
}

int xp_add(xp_table *t, uint64_t x, uint64_t probe, uint64_t field)
{
    const uint64_t vx = get(t, x);
    if (!field_of(vx)) { /* the home is free: a run of one, in place */
        put(t, x, field << XP_META | XP_OCC);
    } else {
        const int had = (vx & XP_OCC) != 0;
        uint64_t pos = run_start(t, x);
        if (had) { /* look through x's run; a new entry goes at its end */
            do
                if (xp_matches(field_of(get(t, pos)), probe))
                    return XP_PRESENT;
            while (++pos < t->slots && (get(t, pos) & XP_CONT));
        }
        uint64_t e = pos;
        while (e < t->slots && field_of(get(t, e)))
            e++;
        if (e >= t->slots)
            return XP_NO_ROOM;
        const uint64_t old = get(t, pos);
        if (e > pos)
            t->ones +=
                xp_ones(old & ~(uint64_t)(XP_OCC | XP_SHIFT)) + (e - pos) - shift_right(t, pos, e);
        put(t, pos, field << XP_META | (had ? XP_CONT : 0) | XP_SHIFT | (old & XP_OCC));
        put(t, x, get(t, x) | XP_OCC);
    }
    t->entries++;
    t->by_len[length_of(t, field)]++;
    return XP_ADDED;
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

/* A doubling's writer: entries come in order of their new quotients and
 * go as far left as the ones before them allow. */
typedef struct appender {
    xp_table *t;
    uint64_t next;   /* the first slot free after the last entry */
    uint64_t last_x; /* the last entry's quotient (UINT64_MAX: none yet) */
} appender;

static void append(appender *a, uint64_t x, uint64_t field)
{
    const uint64_t pos = x > a->next ? x : a->next;
    const int more = x == a->last_x; /* not its run's first */
    uint64_t v = field << XP_META | (more ? XP_CONT : 0);
    if (pos == x) { /* at home */
        v |= XP_OCC;
    } else {
        v |= XP_SHIFT;
        if (!more) /* the home's occupied bit, once a run */
            or_slot(a->t, x, XP_OCC);
    }
    or_slot(a->t, pos, v);
    a->last_x = x;
    a->next = pos + 1;
}

/* The entries of a run a doubling holds while it reads the run: those
 * for the lower half are written when the run ends or the buffer fills,
 * those for the upper half when it ends (a longer run's are read again). */
#define XP_RUN_BUF 64

/* One run being doubled: its old quotient, first slot, and its entries
 * for each half, in order. */
typedef struct run_buf {
    uint64_t x, start, nlo, nhi;
    uint64_t lo[XP_RUN_BUF], hi[XP_RUN_BUF];
} run_buf;

/* Append the n entries of arr (fields of to's width) to quotient x. */
static void append_all(appender *a, uint64_t x, const uint64_t *arr, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        append(a, x, arr[i]);
}

/* The end of run b (at slot e): its held entries to each half, or, for a
 * run longer than the buffer, its upper half's entries read again. */
static void end_run(const xp_table *t, run_buf *b, uint64_t e, appender *a, unsigned r2)
{
    append_all(a, 2 * b->x, b->lo, b->nlo);
    if (b->nhi <= XP_RUN_BUF) {
        append_all(a, 2 * b->x + 1, b->hi, b->nhi);
        return;
    }
    for (uint64_t i = b->start; i < e; i++) {
        unsigned bit, none;
        const uint64_t f = xp_split(t->r, field_of(get(t, i)), r2, &bit, &none);
        if (bit)
            append(a, 2 * b->x + 1, f);
    }
}

uint64_t xp_double_slots(const xp_table *t)
{
    uint64_t last = t->slots;
    while (last > 0 && !field_of(get(t, last - 1)))
        last--;
    const uint64_t homes = UINT64_C(2) << t->q, slack = xp_slack(t->q + 1);
    const uint64_t spill = xp_spill(last, t->by_len[0]);
    return spill > homes + slack ? spill : homes + slack;
}

/* long: one pass over the old table, slot by slot, its runs' entries
 * split between the halves as they come, and the pages it has read given
 * back on the way. */
void xp_double(const xp_table *t, xp_table *to, void (*release)(void *ctx, uint64_t upto),
               void *ctx)
{
    appender a = {to, 0, UINT64_MAX};
    run_buf b;
    b.x = b.start = b.nlo = b.nhi = 0;
    int in_run = 0;
    uint64_t x = 0, released = 0;
    const uint64_t step = BK_HUGE_PAGE;
    const unsigned r2 = to->r;
    const uint64_t mask = (UINT64_C(1) << t->w) - 1;
    for (uint64_t i = 0, at = 0; i < t->slots; i++, at += t->w) { /* at: slot i's first bit */
        const uint64_t v = bits_at(t, at) & mask, f = field_of(v);
        if (in_run && (!f || !(v & XP_CONT))) { /* the run before ends here */
            end_run(t, &b, i, &a, r2);
            in_run = 0;
        }
        if (!f)
            continue;
        if (!in_run) { /* a run starts: its quotient */
            x = quotient_at(t, i, v, x);
            b.x = x;
            b.start = i;
            b.nlo = b.nhi = 0;
            in_run = 1;
            /* bytes before slot x's are read no more (a later run's
             * quotient is read from slots after x) */
            const uint64_t done = x * t->w / 8;
            if (release && done >= released + step) {
                released = done / step * step;
                release(ctx, released);
            }
        }
        unsigned bit, none;
        const uint64_t g = xp_split(t->r, f, r2, &bit, &none);
        b.lo[b.nlo] = g; /* kept when it goes to the lower half */
        b.nlo += (bit ^ 1u) | none;
        if (b.nlo == XP_RUN_BUF) { /* the lower half's entries come first: out now */
            append_all(&a, 2 * x, b.lo, b.nlo);
            b.nlo = 0;
        }
        if (b.nhi < XP_RUN_BUF)
            b.hi[b.nhi] = g;
        b.nhi += bit;
    }
    if (in_run)
        end_run(t, &b, t->slots, &a, r2);
    xp_doubled_counts(t->by_len, t->entries, XP_FIELD_MAX, to->by_len, &to->entries);
    to->ones = bk_popcount(to->data, (size_t)to->nbytes); /* the machine's popcount */
}

/* --- checking a table from outside -------------------------------------- */

int xp_explain(const xp_table *t, uint64_t from, uint64_t to)
{
    const uint64_t homes = UINT64_C(1) << t->q;
    uint64_t runs = 0, occupied = 0, x = from, prev = 0;
    for (uint64_t i = from; i < to; i++) {
        const uint64_t v = get(t, i), f = field_of(v);
        if ((v & XP_OCC) && i >= homes)
            return bk_fail(BK_ECORRUPT, "expandable: slot %llu is past the homes but occupied",
                           (unsigned long long)i);
        occupied += v & XP_OCC;
        const int first = i == from || !field_of(prev);
        prev = v;
        if (!f) {
            if (v & (XP_CONT | XP_SHIFT))
                return bk_fail(BK_ECORRUPT, "expandable: empty slot %llu has run bits",
                               (unsigned long long)i);
            if (v & XP_OCC)
                return bk_fail(BK_ECORRUPT, "expandable: occupied home %llu is empty",
                               (unsigned long long)i);
            continue;
        }
        if (first && (v & (XP_SHIFT | XP_CONT)))
            return bk_fail(BK_ECORRUPT, "expandable: slot %llu starts a cluster but is shifted",
                           (unsigned long long)i);
        if (!(v & XP_SHIFT) && ((v & XP_CONT) || !(v & XP_OCC)))
            return bk_fail(BK_ECORRUPT, "expandable: slot %llu is at home but not a run's first",
                           (unsigned long long)i);
        if (!(v & XP_CONT)) {
            runs++;
            x = quotient_at(t, i, v, x);
            if (x >= homes || x > i || x < from || ((v & XP_SHIFT) && x == i) ||
                !(get(t, x) & XP_OCC))
                return bk_fail(BK_ECORRUPT, "expandable: the run at slot %llu has no home",
                               (unsigned long long)i);
        }
    }
    if (runs != occupied)
        return bk_fail(BK_ECORRUPT, "expandable: %llu runs for %llu occupied homes",
                       (unsigned long long)runs, (unsigned long long)occupied);
    return BK_OK;
}

/* A slot's state for the one-pass check: its three run bits (XP_OCC,
 * XP_CONT, XP_SHIFT), 8 when its field is not empty, 16 when the slot
 * before it (in the range) is not; and what each state asks of a sound
 * table: XP_BAD when its bits break a rule alone (an empty slot with run
 * bits, a cluster's first shifted or a continuation, an entry at home
 * that is not its run's first), XP_NO_WAIT when no home may be waiting
 * for its run there (an empty slot, an unshifted run's first), XP_WAIT
 * when one must be (a shifted run's first: its home is before it). */
#define XP_BAD        1u
#define XP_NO_WAIT    2u
#define XP_WAIT       4u
#define XP_S_OCC(i)   ((i)&1u)
#define XP_S_CONT(i)  ((i) >> 1 & 1u)
#define XP_S_SHIFT(i) ((i) >> 2 & 1u)
#define XP_S_FULL(i)  ((i) >> 3 & 1u)
#define XP_S_PREV(i)  ((i) >> 4 & 1u)
#define XP_S_START(i) (XP_S_FULL(i) & !XP_S_CONT(i))
#define XP_RULE(i)                                                                                 \
    ((((!XP_S_FULL(i) & (((i)&7u) != 0)) |                                                         \
       (XP_S_FULL(i) & !XP_S_PREV(i) & (XP_S_CONT(i) | XP_S_SHIFT(i))) |                           \
       (XP_S_FULL(i) & !XP_S_SHIFT(i) & (XP_S_CONT(i) | !XP_S_OCC(i))))                            \
          ? XP_BAD                                                                                 \
          : 0u) |                                                                                  \
     ((!XP_S_FULL(i) | (XP_S_START(i) & !XP_S_SHIFT(i))) ? XP_NO_WAIT : 0u) |                      \
     ((XP_S_START(i) & XP_S_SHIFT(i)) ? XP_WAIT : 0u))
#define XP_RULE4(i)   XP_RULE(i), XP_RULE((i) + 1), XP_RULE((i) + 2), XP_RULE((i) + 3)
#define XP_RULE16(i)  XP_RULE4(i), XP_RULE4((i) + 4), XP_RULE4((i) + 8), XP_RULE4((i) + 12)
#define XP_DELTA(i)   ((int8_t)(XP_S_OCC(i) - XP_S_START(i))) /* homes waiting, after it */
#define XP_DELTA4(i)  XP_DELTA(i), XP_DELTA((i) + 1), XP_DELTA((i) + 2), XP_DELTA((i) + 3)
#define XP_DELTA16(i) XP_DELTA4(i), XP_DELTA4((i) + 4), XP_DELTA4((i) + 8), XP_DELTA4((i) + 12)

static const uint8_t xp_rules[32] = {XP_RULE16(0), XP_RULE16(16)};
static const int8_t xp_deltas[32] = {XP_DELTA16(0), XP_DELTA16(16)};

/* Check slots from .. to-1 as xp_explain does, in one pass with no branch
 * a slot (xp_explain's rules mispredict several times a slot: 7 ns a slot,
 * most of `bloomkit info`'s 0.93 s on a 352 MB table). A run's home is matched by
 * count, not found by a walk: in a cluster the j-th run belongs to the
 * j-th occupied home, so with `wait` the occupied homes before a slot less
 * the runs that start before it, each state's XP_NO_WAIT or XP_WAIT says
 * what wait must be, and the cluster's end (an empty slot, or the range's)
 * finds every home's run met. The same verdict as xp_explain, which is
 * asked for the detail when a rule fails. With `count`, t's entries and
 * lengths are counted too (only when sound). BK_OK or BK_ECORRUPT (detail
 * set). */
__attribute__((always_inline)) static inline int check_pass(xp_table *t, uint64_t from, uint64_t to,
                                                            int count)
{
    const uint64_t homes = UINT64_C(1) << t->q, mask = (UINT64_C(1) << t->w) - 1;
    const uint64_t top = UINT64_C(1) << (t->r - 1); /* an empty slot's length: 0 */
    /* lengths counted four ways, by slot: entries of one length next to
     * each other do not wait on each other's stores */
    uint64_t hist[4][XP_FIELD_MAX];
    if (count)
        memset(hist, 0, sizeof hist);
    uint64_t bad = 0, wait = 0, prev = 0, entries = 0;
    for (uint64_t i = from, at = from * t->w; i < to; i++, at += t->w) {
        const uint64_t v = bits_at(t, at) & mask, f = field_of(v), full = f != 0;
        const unsigned state = (unsigned)(v & 7) | (unsigned)full << 3 | (unsigned)prev << 4;
        /* wait = 0: a slot that asks for a home waiting breaks its rule */
        bad |= xp_rules[state] & (XP_BAD | XP_NO_WAIT << (wait == 0));
        wait += (uint64_t)(int64_t)xp_deltas[state];
        prev = full;
        if (count) {
            entries += full;
            hist[i & 3][length_of(t, f | top)] += full;
        }
    }
    bad |= wait != 0;
    for (uint64_t i = from > homes ? from : homes; i < to; i++) /* the slack: no home */
        bad |= get(t, i) & XP_OCC;
    if (bad) {
        const int rc = xp_explain(t, from, to);
        return rc != BK_OK ? rc
                           : bk_fail(BK_ECORRUPT, "expandable: slots %llu to %llu break a run rule",
                                     (unsigned long long)from, (unsigned long long)to);
    }
    if (count) {
        t->entries += entries;
        for (unsigned len = 0; len < XP_FIELD_MAX; len++)
            t->by_len[len] += hist[0][len] + hist[1][len] + hist[2][len] + hist[3][len];
    }
    return BK_OK;
}

/* check_pass, made twice: with the counts and without (a block's check) */
static int check_range(xp_table *t, uint64_t from, uint64_t to, int count)
{
    return count ? check_pass(t, from, to, 1) : check_pass(t, from, to, 0);
}

int xp_check_tail(const xp_table *t)
{
    for (uint64_t bit = t->slots * t->w; bit < t->nbytes * 8; bit++) /* past the last slot */
        if (t->data[bit / 8] >> (bit % 8) & 1)
            return bk_fail(BK_ECORRUPT, "expandable: bits set past the last slot");
    return BK_OK;
}

int xp_check(xp_table *t)
{
    t->entries = 0;
    memset(t->by_len, 0, sizeof t->by_len);
    int rc = check_range(t, 0, t->slots, 1);
    if (rc == BK_OK)
        rc = xp_check_tail(t);
    if (rc == BK_OK)
        t->ones = bk_popcount(t->data, (size_t)t->nbytes);
    return rc;
}

/* The slots a block check covers: a run's walk back and forward stays in
 * its cluster, and a cluster is checked whole from the block where it
 * starts or the block its start's cluster covers. */
#define XP_CHECK_BLOCK ((uint64_t)4096)

uint64_t xp_blocks(const xp_table *t)
{
    return (t->slots + XP_CHECK_BLOCK - 1) / XP_CHECK_BLOCK;
}

uint64_t xp_map_words(const xp_table *t)
{
    return 2 * ((xp_blocks(t) + 63) / 64);
}

int xp_check_at(const xp_table *t, _Atomic uint64_t *checked, uint64_t x)
{
    const uint64_t b = x / XP_CHECK_BLOCK, bit = UINT64_C(1) << (b % 64);
    _Atomic uint64_t *broken = checked + xp_map_words(t) / 2;
    if (atomic_load_explicit(&checked[b / 64], memory_order_acquire) & bit)
        return BK_OK;
    if (atomic_load_explicit(&broken[b / 64], memory_order_acquire) & bit)
        return bk_fail(BK_ECORRUPT, "expandable: slots %llu to %llu failed their check",
                       (unsigned long long)(b * XP_CHECK_BLOCK),
                       (unsigned long long)((b + 1) * XP_CHECK_BLOCK - 1));
    /* from the start of the cluster that holds the block's first slot to
     * the end of the one that holds its last */
    uint64_t from = b * XP_CHECK_BLOCK, to = from + XP_CHECK_BLOCK;
    while (from > 0 && field_of(get(t, from - 1)))
        from--;
    if (to > t->slots)
        to = t->slots;
    while (to < t->slots && field_of(get(t, to)))
        to++;
    /* reads only: t is shared with other lookups */
    const int rc = check_range((xp_table *)(uintptr_t)t, from, to, 0);
    if (rc != BK_OK) {
        atomic_fetch_or_explicit(&broken[b / 64], bit, memory_order_release);
        return rc;
    }
    atomic_fetch_or_explicit(&checked[b / 64], bit, memory_order_release);
    /* and every block inside the clusters checked (a long cluster is
     * checked once, not once for each block it spans) */
    for (uint64_t c = (from + XP_CHECK_BLOCK - 1) / XP_CHECK_BLOCK; (c + 1) * XP_CHECK_BLOCK <= to;
         c++)
        atomic_fetch_or_explicit(&checked[c / 64], UINT64_C(1) << (c % 64), memory_order_release);
    return BK_OK;
}
