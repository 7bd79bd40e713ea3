/*
 * standard.h - the classic Bloom filter's internal interface.
 *
 * A "slice" is one m-bit array with k probes. The standard variant is one
 * slice behind the vtable; the scalable variant chains slices through these
 * functions (and only these), so the bit-array logic exists once.
 *
 * Thread-safety: bk_std_slice_add and bk_std_slice_contains may run
 * concurrently on one slice (bits are set with atomic OR, counters are atomic).
 * init/release/clear must not overlap any other call on the slice.
 */
#ifndef BK_STANDARD_STANDARD_H
#define BK_STANDARD_STANDARD_H

#include <stdatomic.h>
#include <stdint.h>

#include "../core/filter_impl.h"
#include "../common/stripes.h"

typedef struct bk_std_slice {
    /* m bits (1 .. BK_BITS_MAX), k probes, block (bits per block, 0 for
     * classic), probes (BK_PROBES_*), capacity and fpr it was sized for, and
     * nbytes = ceil(m / 8). Its count and data fields are not kept: counts
     * and bits below are the live ones. */
    bk_slice_view shape;
    _Atomic uint8_t *bits; /* bit i: byte i/8, mask 0x80 >> (i % 8) */
    uint64_t nblocks;      /* blocked: m / block, and 64 - log2(block): kept, not */
    unsigned block_shift;  /* derived per key (a division and a loop) */
    int borrowed;          /* bits belong to a file mapping: never freed here */
    bk_stripes counts;     /* set: population count of bits; keys: adds reported new */
} bk_std_slice;

/* Size a slice as cfg says (bk_size_config: pinned bits and hashes, or
 * capacity and fpr, in cfg's layout) and allocate its zeroed bits. BK_OK,
 * BK_ERANGE (too large), BK_ECONFIG (pinned bits not whole blocks),
 * BK_ENOMEM. On error nothing is allocated. */
int bk_std_slice_init(bk_std_slice *s, const bk_config *cfg, const bk_allocator *a);
/* Allocate zeroed bits for a slice of the given shape (m, k, block,
 * capacity, fpr, nbytes; its counts and data are ignored). Same errors. */
int bk_std_slice_init_shape(bk_std_slice *s, const bk_slice_view *shape, const bk_allocator *a);
void bk_std_slice_release(bk_std_slice *s, const bk_allocator *a);
/* Offer s's bits to move (bk_defrag; borrowed bits stay). */
void bk_std_slice_move(bk_std_slice *s, const bk_allocator *a, bk_move_fn move, void *arg);

/* 1 if the key was new: some probed bit was clear and every clear one was
 * set by this call (so of several threads adding one key at once, at most one
 * gets 1); else 0. */
int bk_std_slice_add(bk_std_slice *s, const bk_hash *h);
/* bk_std_slice_add, counting what it changed into *t instead of the
 * slice's counts (bk_std_slice_count gives them a batch's tally at once). */
int bk_std_slice_add_tally(bk_std_slice *s, const bk_hash *h, bk_tally *t);
/* bk_std_slice_add_tally for a caller that keeps every other writer of the
 * memory h writes away (a lock, the block's shard, or a filter's single
 * writer): the same answer with plain loads and stores, no locked
 * instruction (concurrent readers are fine). */
int bk_std_slice_add_owned(bk_std_slice *s, const bk_hash *h, bk_tally *t);
/* bk_std_slice_add for the slice's only writer (bk_set_single_writer): owned,
 * and counted with no locked instruction either. */
int bk_std_slice_add_alone(bk_std_slice *s, const bk_hash *h);
/* Add a tally to the slice's counts (any thread). */
void bk_std_slice_count(bk_std_slice *s, const bk_tally *t);
/* Blocked slices: the block h writes, for adds split across threads. */
uint64_t bk_std_slice_block(const bk_std_slice *s, const bk_hash *h);
/* Prefetch the bytes the probes of hs[0 .. n) touch (a hint; no effect on
 * results). */
void bk_std_slice_prefetch(const bk_std_slice *s, const bk_hash *hs, size_t n, int all);
/* 1 if every probed bit is set. */
int bk_std_slice_contains(const bk_std_slice *s, const bk_hash *h);
void bk_std_slice_clear(bk_std_slice *s);

/* Bits set, and adds reported new (a snapshot under concurrent adds). */
uint64_t bk_std_slice_set(const bk_std_slice *s);
uint64_t bk_std_slice_keys(const bk_std_slice *s);
/* Both at once (one pass over the counters). */
static inline void bk_std_slice_counts(const bk_std_slice *s, uint64_t *set, uint64_t *keys)
{
    bk_stripes_sums(&s->counts, set, keys);
}

/* Take over the payload described by v (shape validated by the caller). */
void bk_std_slice_adopt(bk_std_slice *s, const bk_slice_view *v, int borrowed);
/* Describe s for persistence (data points at s's bits). */
void bk_std_slice_view(const bk_std_slice *s, bk_slice_view *out);
/* dst |= src (BK_BITS_OR) or dst &= src (BK_BITS_AND); BK_EINCOMPAT and no
 * change when m or k differ. Not concurrent with any other call on dst. */
int bk_std_slice_combine(bk_std_slice *dst, const bk_std_slice *src, int op);
/* 1 when m, k, layout and probe derivation are equal. */
int bk_std_slice_same_shape(const bk_std_slice *a, const bk_std_slice *b);

#endif
