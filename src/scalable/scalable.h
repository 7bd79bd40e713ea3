/* scalable.h - the scalable chain's constructor (internal). Its concurrency
 * rules (lock-free lookups, adds under a shared lock, growth exclusive, exact
 * answers under races) are explained once, in scalable.c's opening comment;
 * tested under ThreadSanitizer (tests/test_threads.c). */
#ifndef BK_SCALABLE_SCALABLE_H
#define BK_SCALABLE_SCALABLE_H

#include "../common/export.h"

#include "../common/filter_impl.h"

/* More slices than anyone can allocate: with growth >= 2 slice 63 alone would
 * hold n0 * 2^63 keys. A fixed table keeps the slice pointers still under
 * concurrent readers. */
#define BK_SCALABLE_MAX_SLICES 64

/* bk_filter_create_fn / bk_filter_adopt_fn for variant=scalable. */
int bk_scalable_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out);
int bk_scalable_adopt(const bk_config *cfg, const bk_allocator *a, const bk_slice_view *slices,
                      uint32_t n, int borrowed, bk_filter **out);
int bk_scalable_plan(const bk_config *cfg, bk_plan *out);

/* When a slice is full: it takes a key only while its set cells plus the
 * key's k stay at or under `set` and its keys are under `keys`; otherwise
 * the chain grows. Classic: half its bits (then its rate (1/2)^k <= its
 * share); blocked: its capacity in keys (then bk_rate_blocked <= its share)
 * and the set cells whose estimated rate reaches its share (bk_set_limit).
 * One rule for every store of a chain (src/redis passes it to its script). */
typedef struct bk_slice_limit {
    uint64_t set;
    uint64_t keys;
} bk_slice_limit;

/* A chain's first slice, sized once for a filter that makes chains of one
 * configuration over and over (a window's generations, one a span): sizing
 * a blocked slice and its limit costs milliseconds, far more than
 * allocating it. Immutable once made, so any thread may read it. */
typedef struct bk_scalable_first {
    bk_slice_view shape; /* data NULL, counts 0 */
    bk_slice_limit limit;
} bk_scalable_first;

/* Size slice 0 of chains configured by cfg. BK_OK or BK_ERANGE. */
int bk_scalable_first_init(const bk_config *cfg, bk_scalable_first *out);

/* create and adopt for a chain that is part of another filter: its slices'
 * bytes drawn on budget (window's generations share the window's
 * max_bytes: growth past it is BK_EFULL) instead of a budget of its own (of
 * cfg->max_bytes), and its first slice as `first` says (NULL: sized here),
 * the adopted slices of that shape taking its limit. */
int bk_scalable_create_in(const bk_config *cfg, const bk_allocator *a, bk_budget *budget,
                          const bk_scalable_first *first, bk_filter **out);
int bk_scalable_adopt_in(const bk_config *cfg, const bk_allocator *a, bk_budget *budget,
                         const bk_scalable_first *first, const bk_slice_view *slices, uint32_t n,
                         int borrowed, bk_filter **out);

/* Hand the payloads of a chain adopted as borrowed over to it: from now on
 * destroying the chain frees them (with its allocator). Lets a filter made
 * of several chains adopt them all as borrowed, so a failure half-way
 * leaves every payload with its caller, and take them over only once
 * nothing can fail. */
void bk_scalable_own(bk_filter *chain);

/* The shape slice i of a chain configured by cfg gets (m, k, block,
 * capacity, fpr, nbytes; counts and data zero; sized by bk_size_slice). Lets
 * another store of the same chain (src/redis) lay out slices exactly as this
 * variant does. BK_OK or BK_ERANGE. */
BK_INTERNAL int bk_scalable_slice_shape(const bk_config *cfg, uint32_t i, bk_slice_view *out);

/* The limit of a slice of shape v (bk_slice_limit, above). */
BK_INTERNAL bk_slice_limit bk_scalable_limit(const bk_slice_view *v);

#endif
