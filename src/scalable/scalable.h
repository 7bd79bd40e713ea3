/* scalable.h - the scalable chain's constructor (internal).
 *
 * Concurrency guarantee: add and contains may be called from any number of
 * threads at once (lookups take no lock; adds share a read lock, growth takes
 * it exclusively). Growth happens once however many adders find the newest
 * slice full, and no key is lost to a slice being added. add's answer is
 * exact: its check of every slice and its add to the newest happen under one
 * read lock, so the newest slice cannot change in between, and two threads
 * adding one new key at once land in the same slice, whose add tells at most
 * one of them the key is new. clear, merge and free need exclusive use. Tested under
 * ThreadSanitizer (tests/test_threads.c). */
#ifndef BK_SCALABLE_SCALABLE_H
#define BK_SCALABLE_SCALABLE_H

#include "../common/filter_impl.h"

/* More slices than anyone can allocate: with growth >= 2 slice 63 alone would
 * hold n0 * 2^63 keys. A fixed table keeps the slice pointers still under
 * concurrent readers. */
#define BK_SCALABLE_MAX_SLICES 64

/* bk_filter_create_fn / bk_filter_adopt_fn for variant=scalable. */
int bk_scalable_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out);
int bk_scalable_adopt(const bk_config *cfg, const bk_allocator *a, const bk_slice_view *slices,
                      uint32_t n, int borrowed, bk_filter **out);

/* The shape slice i of a chain configured by cfg gets (m, k, block,
 * capacity, fpr, nbytes; counts and data zero) and the fill past which it is
 * full and the chain grows. Lets another store of the same chain (src/redis)
 * lay out slices exactly as this variant does. BK_OK or BK_ERANGE. */
int bk_scalable_slice_shape(const bk_config *cfg, uint32_t i, bk_slice_view *out,
                            double *grow_fill);

#endif
