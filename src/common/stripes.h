/*
 * stripes.h - counters that many threads bump without sharing a cache line
 * (internal).
 *
 * A filter's set-bit and key counts change on every add. One shared atomic
 * counter makes its cache line travel between cores on every add, which cost
 * more than the add itself with two threads (measured: 2 threads 0.8x the rate
 * of 1). Instead each thread adds into one of BK_STRIPES cache-line-sized
 * stripes, picked once per thread, and readers sum the stripes; the sum is
 * exact once writers are quiet, and never torn per stripe.
 */
#ifndef BK_COMMON_STRIPES_H
#define BK_COMMON_STRIPES_H

#include <stdatomic.h>
#include <stdint.h>

#define BK_STRIPES 8
#define BK_LINE    64

typedef struct bk_stripe {
    _Atomic uint64_t set;  /* cells that went from 0 to non-zero */
    _Atomic uint64_t keys; /* adds reported new */
    unsigned char pad[BK_LINE - 2 * sizeof(uint64_t)];
} bk_stripe;

/* Room for BK_STRIPES line-aligned stripes inside a struct that itself may
 * be only 16-byte aligned; bk_stripes_init finds the aligned start. */
typedef struct bk_stripes {
    bk_stripe *s;
    unsigned char mem[BK_STRIPES * sizeof(bk_stripe) + BK_LINE];
} bk_stripes;

/* This thread's stripe, 0 .. BK_STRIPES-1 (threads take them in turn). */
unsigned bk_thread_stripe(void);

/* Point st at its aligned stripes and set the totals to set and keys. The
 * bk_stripes must not be copied afterwards (st->s points into it). */
void bk_stripes_init(bk_stripes *st, uint64_t set, uint64_t keys);

static inline void bk_stripes_add(bk_stripes *st, uint64_t set, uint64_t keys)
{
    bk_stripe *mine = &st->s[bk_thread_stripe()];
    if (set)
        atomic_fetch_add_explicit(&mine->set, set, memory_order_relaxed);
    if (keys)
        atomic_fetch_add_explicit(&mine->keys, keys, memory_order_relaxed);
}

/* bk_stripes_add for a caller with no other writer of st (a filter's single
 * writer): a plain load and store, no locked instruction, and always the
 * first stripe (with no other writer, no line to keep apart; no lookup of
 * the thread's). */
static inline void bk_stripes_add_alone(bk_stripes *st, uint64_t set, uint64_t keys)
{
    bk_stripe *mine = &st->s[0];
    atomic_store_explicit(&mine->set, atomic_load_explicit(&mine->set, memory_order_relaxed) + set,
                          memory_order_relaxed);
    atomic_store_explicit(&mine->keys,
                          atomic_load_explicit(&mine->keys, memory_order_relaxed) + keys,
                          memory_order_relaxed);
}

/* Both totals in one pass over the stripes (a line each). */
static inline void bk_stripes_sums(const bk_stripes *st, uint64_t *set, uint64_t *keys)
{
    uint64_t a = 0, b = 0;
    for (unsigned i = 0; i < BK_STRIPES; i++) {
        a += atomic_load_explicit(&st->s[i].set, memory_order_relaxed);
        b += atomic_load_explicit(&st->s[i].keys, memory_order_relaxed);
    }
    *set = a;
    *keys = b;
}

uint64_t bk_stripes_set(const bk_stripes *st);
uint64_t bk_stripes_keys(const bk_stripes *st);

#endif
