/* scalable.h - the scalable chain's descriptor and constructors (internal). Its concurrency
 * rules (lock-free lookups, adds under a shared lock, growth exclusive, exact
 * answers under races) are explained once, in scalable.c's opening comment;
 * tested under ThreadSanitizer (tests/test_threads.c). */
#ifndef BK_SCALABLE_SCALABLE_H
#define BK_SCALABLE_SCALABLE_H

#include <pthread.h>
#include <stdatomic.h>

#include "../core/filter_impl.h"

/* More slices than anyone can allocate: with growth >= 2 slice 63 alone would
 * hold n0 * 2^63 keys. A fixed table keeps the slice pointers still under
 * concurrent readers. */
#define BK_SCALABLE_MAX_SLICES 64

/* One slice's shape and limit, as a chain of a configuration sizes it. */
typedef struct bk_slice_size {
    bk_slice_view shape; /* data NULL, counts 0 */
    bk_slice_limit limit;
} bk_slice_size;

/* The slices of chains of one configuration, each sized once, for a filter
 * that makes such chains over and over (a window's generations, one a
 * span, each growing like the last): sizing a blocked slice and its limit
 * costs milliseconds, far more than allocating it. Slice i is sized on
 * first use (under the mutex, slices in order) and never changes after:
 * readers take it lock-free once `ready` says it is there. */
typedef struct bk_scalable_sizes {
    bk_config cfg;          /* the chains' configuration */
    pthread_mutex_t lock;   /* sizing more */
    _Atomic uint32_t ready; /* slices 0 .. ready - 1 are sized */
    bk_slice_size slice[BK_SCALABLE_MAX_SLICES];
} bk_scalable_sizes;

/* Set up *z for chains configured by cfg, slice 0 sized at once (so a
 * configuration that cannot be sized fails here). BK_OK, BK_ERANGE,
 * BK_ESYS; bk_scalable_sizes_free releases it. */
int bk_scalable_sizes_init(bk_scalable_sizes *z, const bk_config *cfg);
void bk_scalable_sizes_free(bk_scalable_sizes *z);

/* The payload bytes of a chain of cfg's first slice (what a chain takes
 * when made); 0 when cfg cannot be sized. The descriptor's first_bytes. */
uint64_t bk_scalable_first_bytes(const bk_config *cfg);

/* create and adopt for a chain that is part of another filter: its slices'
 * bytes drawn on budget (window's generations share the window's
 * max_bytes: growth past it is BK_EFULL) instead of a budget of its own (of
 * cfg->max_bytes), and its slices sized by `sizes` (NULL: each sized
 * itself), the adopted ones of a shape it knows taking its limit. sizes
 * must outlive the chain. */
int bk_scalable_create_in(const bk_config *cfg, const bk_allocator *a, bk_budget *budget,
                          bk_scalable_sizes *sizes, bk_filter **out);
int bk_scalable_adopt_in(const bk_config *cfg, const bk_allocator *a, bk_budget *budget,
                         bk_scalable_sizes *sizes, const bk_slice_view *slices, uint32_t n,
                         int borrowed, bk_filter **out);

/* Hand the payloads of a chain adopted as borrowed over to it: from now on
 * destroying the chain frees them (with its allocator). Lets a filter made
 * of several chains adopt them all as borrowed, so a failure half-way
 * leaves every payload with its caller, and take them over only once
 * nothing can fail. */
void bk_scalable_own(bk_filter *chain);

/* The shape slice i of a chain configured by cfg gets (m, k, block,
 * capacity, fpr, nbytes; counts and data zero; sized by bk_size_slice by
 * `rule`): the descriptor's chain_slice, and a window's generations. BK_OK
 * or BK_ERANGE. */
int bk_scalable_slice_shape(const bk_config *cfg, uint32_t i, bk_slice_rule rule,
                            bk_slice_view *out);

/* The limit of a slice of shape v (bk_slice_limit, above). */
bk_slice_limit bk_scalable_limit(const bk_slice_view *v);

#endif
