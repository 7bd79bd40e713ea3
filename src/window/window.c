/*
 * window.c - a Bloom filter that remembers each key for a time window and
 * then forgets it (variant=window), for crawlers that re-fetch a page once
 * its window has passed.
 *
 * Time is cut into spans of window / G milliseconds, numbered from the Unix
 * epoch: span number s covers [s * span, (s + 1) * span). Each span that
 * receives keys gets a generation: a scalable chain (src/scalable, through
 * its internal header) sized for capacity / G keys at rate fpr / (G + 1).
 * Adds go into the current span's generation; lookups consult every live
 * generation, those numbered now_span - G .. now_span (G + 1 of them), and a
 * generation whose number falls below that is dropped.
 *
 * The guarantee. A key added at time t (an add that reported it new), in
 * span c = floor(t / span), is in a generation consulted until now_span
 * passes c + G, that is until
 * (c + 1 + G) * span > t + window (since (c + 1) * span > t and
 * G * span = window): present at every moment of [t, t + window]. From
 * (c + 1 + G) * span <= t + span + window on it is in no consulted
 * generation: forgotten from t + window + window / G at the latest, reported
 * present after that only at the false-positive rate. A key already present
 * in a live generation is not added again (the add reports 0), so a crawler
 * re-fetches a page a window after the first fetch, not after the last
 * sighting; with refresh=1 a sighting that finds the key only in older
 * generations copies it into the current one (still reporting 0), so it is
 * remembered a window after its last sighting, as a cache would. An add that
 * a false positive answers (0, as in any Bloom filter) changes nothing: the
 * key counts as seen when that older generation's keys were, and is forgotten
 * with them.
 *
 * The bound. A lookup consults at most G + 1 generations, each a chain whose
 * compound rate stays under fpr / (G + 1) however many keys it takes (it
 * grows like any scalable chain), so the lookup's rate stays under
 * 1 - (1 - fpr / (G + 1))^(G + 1) <= fpr whatever the arrival rate.
 *
 * Time is read from bk_now_ms (replaceable for tests) and never acted on
 * backwards by a span or less: the filter keeps the latest time it has seen
 * and uses the later of that and the clock, so a clock that steps back a
 * little freezes the filter's time (keys go on into the current generation,
 * nothing is dropped) until the clock catches up. A clock more than a span
 * behind the newest generation (it stepped back far, or a file or another
 * machine was written under a clock that ran ahead) would freeze it for as
 * long as the error: instead the whole table is re-dated, every generation
 * moved back by the difference so that the newest is the clock's span
 * (redate), and time runs on from there. Numbering spans from the epoch,
 * not from the filter's creation, makes every copy of a filter (files,
 * processes) agree on them.
 *
 * Concurrency: add and contains may run in any number of threads. The table
 * of generations changes only under the write lock (a new span's generation,
 * dropping expired ones); add and contains hold the read lock, and each
 * chain takes concurrent adds itself (see scalable.c), so of several threads
 * adding one new key at once exactly one is told it is new: they all find it
 * absent from the older generations and add it to the same current chain.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t */
#include "window.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/error.h"
#include "../common/sizing.h"
#include "../scalable/scalable.h"

/* A generation's first slice holds 1% more than capacity / G: a slice is full
 * at its capacity give or take a few tenths of a percent, so keys arriving at
 * exactly the stated rate would otherwise spill into a second slice (twice as
 * large) in about half the spans. */
#define HEADROOM 1.01

typedef struct bk_generation {
    int64_t number;   /* the span it covers */
    bk_filter *chain; /* its keys */
} bk_generation;

typedef struct bk_window {
    bk_filter base; /* first: a bk_window* is a bk_filter* */
    bk_config chain_cfg;
    bk_scalable_sizes sizes;                /* every generation's slices, each sized once */
    int64_t span_ms;                        /* window / G, rounded up to a whole ms */
    int64_t live;                           /* G: generations number - G .. number are consulted */
    bk_generation gens[BK_WINDOW_MAX_LIVE]; /* oldest first */
    uint32_t n;                             /* generations held, >= 1 */
    _Atomic int64_t latest;                 /* the latest time seen, ms */
    bk_budget budget;                       /* max_bytes, shared by the generations */
    pthread_rwlock_t lock;                  /* add, contains: read; the table: write */
} bk_window;

_Static_assert(offsetof(bk_window, base) == 0, "bk_filter must be the first member");

static const bk_filter_ops window_ops; /* at the end of this file */

void bk_window_chain_config(const bk_config *cfg, bk_config *out)
{
    *out = *cfg;
    out->variant = BK_VARIANT_SCALABLE;
    out->capacity = (uint64_t)ceil((double)cfg->capacity / (double)cfg->generations * HEADROOM);
    out->fpr = cfg->fpr / (double)(cfg->generations + 1);
}

int64_t bk_window_span_ms(const bk_config *cfg)
{
    return (int64_t)((cfg->window_ms + cfg->generations - 1) / cfg->generations); /* >= 1 s / 64 */
}

static int64_t span_of(const bk_window *w, int64_t t)
{
    return t >= 0 ? t / w->span_ms : -((-t + w->span_ms - 1) / w->span_ms);
}

/* The clock, held within +-2^61 ms (73 million years): a clock set beyond
 * that acts at its edge, so that no generation it makes, nor one re-dated
 * to it (at most BK_WINDOW_MAX_LIVE older), falls outside the +-2^62 ms
 * that check_generations accepts. What a filter saves, it loads. */
static int64_t clock_ms(void)
{
    const int64_t limit = INT64_C(1) << 61, t = bk_now_ms();
    return t > limit ? limit : t < -limit ? -limit : t;
}

/* The span the filter is in now: by the later of the clock and the latest
 * time it has seen (so time never runs back here); the clock's own span in
 * *clock. */
static int64_t current_span(const bk_window *wc, int64_t *clock)
{
    bk_window *w = (bk_window *)wc;
    const int64_t now = clock_ms();
    int64_t seen = atomic_load_explicit(&w->latest, memory_order_relaxed);
    while (now > seen && !atomic_compare_exchange_weak_explicit(
                             &w->latest, &seen, now, memory_order_relaxed, memory_order_relaxed))
        ;
    *clock = span_of(w, now);
    return span_of(w, now > seen ? now : seen);
}

/* With the table held (the write lock, or before the filter is shared):
 * when the newest generation lies more than a span ahead of the clock's
 * span, move every generation back by the difference, so that the newest
 * is the clock's span and the filter's time is the clock's again; its keys
 * are then forgotten a window (and a span) from now. The generations keep
 * their order and spacing. Records what it did for bk_stats. */
static void redate(bk_window *w, int64_t clock)
{
    const int64_t newest = w->gens[w->n - 1].number;
    if (newest <= clock + 1)
        return;
    const int64_t by = newest - clock;
    for (uint32_t i = 0; i < w->n; i++)
        w->gens[i].number -= by;
    atomic_store(&w->latest, clock * w->span_ms);
    atomic_store(&w->base.redate_from_ms, newest * w->span_ms);
    atomic_store(&w->base.redate_to_ms, clock * w->span_ms);
}

/* 1 when generation g is consulted in span `now`. */
static int is_live(const bk_window *w, const bk_generation *g, int64_t now)
{
    return g->number >= now - w->live && g->number <= now;
}

static void drop(bk_window *w, uint32_t i)
{
    bk_free(w->gens[i].chain);
    memmove(&w->gens[i], &w->gens[i + 1], (w->n - i - 1) * sizeof *w->gens);
    w->n--;
}

/* Under the write lock: drop the generations that expired by span `now`
 * and make sure the newest is `now`'s. The table is never left empty: when
 * every generation expired, the last becomes `now`'s, emptied (nothing to
 * allocate, so nothing can fail); a new generation that cannot be made
 * (BK_ENOMEM, BK_ERANGE past max_bytes) leaves the table as it was, less
 * what expired. (It used to drop them all first: a failing add then left
 * no generation, and the next call read before the table.) An empty table
 * is a new filter's, before its first generation. */
static int rotate(bk_window *w, int64_t now)
{
    bk_call_begin(); /* a failure here is a failing bk_add's: its detail is fresh (error.h) */
    while (w->n > 1 && w->gens[0].number < now - w->live)
        drop(w, 0);
    if (w->n > 0 && w->gens[w->n - 1].number >= now)
        return BK_OK;
    if (w->n > 0 && w->gens[0].number < now - w->live) { /* the only one, expired */
        bk_filter *last = w->gens[0].chain;
        last->ops->clear(last);
        w->gens[0].number = now;
        return BK_OK;
    }
    bk_filter *chain;
    const int rc =
        bk_scalable_create_in(&w->chain_cfg, &w->base.alloc, &w->budget, &w->sizes, &chain);
    if (rc != BK_OK)
        return rc;
    w->gens[w->n].number = now;
    w->gens[w->n].chain = chain;
    w->n++;
    return BK_OK;
}

/* 1 when a chain holds nothing a clear would free: one slice, no bit set. */
static int chain_empty(const bk_filter *chain)
{
    if (chain->ops->slice_count(chain) != 1)
        return 0;
    bk_slice_view v;
    chain->ops->slice_view(chain, 0, &v);
    return v.set_bits == 0;
}

/* bk_expire: drop the generations expired by the current span, keeping at
 * least one (the table is never empty): when the last has expired too, it
 * becomes the current span's, emptied (its chain cleared back to one empty
 * slice: nothing to allocate, so nothing can fail). An expired last
 * generation that is already empty is left as it is: nothing is freed, so
 * the call says 0 and changes no byte (a Redis module's replicas, not told
 * of a sweep that freed nothing, keep the same bytes). */
static int win_expire(bk_filter *f)
{
    bk_window *w = (bk_window *)f;
    int64_t clock;
    const int64_t now = current_span(w, &clock);
    int freed = 0;
    pthread_rwlock_wrlock(&w->lock);
    while (w->n > 1 && w->gens[0].number < now - w->live) {
        drop(w, 0);
        freed = 1;
    }
    if (w->gens[0].number < now - w->live && !chain_empty(w->gens[0].chain)) {
        /* the only one, expired */
        bk_filter *chain = w->gens[0].chain;
        chain->ops->clear(chain);
        w->gens[0].number = now;
        freed = 1;
    }
    pthread_rwlock_unlock(&w->lock);
    return freed;
}

/* The newest live generation holding h, counting from the newest: its index,
 * or -1. */
static int64_t find(const bk_window *w, const bk_hash *h, int64_t now)
{
    for (uint32_t i = w->n; i-- > 0;)
        if (is_live(w, &w->gens[i], now) && w->gens[i].chain->ops->contains(w->gens[i].chain, h))
            return i;
    return -1;
}

static int win_contains(const bk_filter *f, const bk_hash *h)
{
    bk_window *w = (bk_window *)f;
    int64_t clock;
    const int64_t now = current_span(w, &clock);
    pthread_rwlock_rdlock(&w->lock);
    const int found = find(w, h, now) >= 0;
    pthread_rwlock_unlock(&w->lock);
    return found;
}

static int win_add(bk_filter *f, const bk_hash *h)
{
    bk_window *w = (bk_window *)f;
    /* The span of this call, taken once: when making a generation takes
     * longer than a span (a slow machine), a call must not chase the clock
     * from one new generation to the next. */
    int64_t clock, now = current_span(w, &clock);
    pthread_rwlock_rdlock(&w->lock);
    while (w->gens[w->n - 1].number < now || w->gens[w->n - 1].number > clock + 1) {
        /* a new span (its generation first), or a clock far behind */
        pthread_rwlock_unlock(&w->lock);
        pthread_rwlock_wrlock(&w->lock);
        current_span(w, &clock); /* the clock now: another call may have re-dated */
        redate(w, clock);
        int64_t c;
        const int64_t fresh = current_span(w, &c);
        if (fresh < now) /* re-dated (here or meanwhile): the span taken before is gone */
            now = fresh;
        const int rc = rotate(w, now);
        pthread_rwlock_unlock(&w->lock);
        if (rc != BK_OK)
            return rc;
        pthread_rwlock_rdlock(&w->lock);
    }
    /* the newest generation takes the key (another call may have made one
     * for a later span meanwhile: then that one) */
    bk_filter *current = w->gens[w->n - 1].chain;
    const int64_t newest = w->gens[w->n - 1].number;
    const int64_t at = find(w, h, newest > now ? newest : now);
    int rc = 0;
    if (at < 0)
        rc = current->ops->add(current, h);
    else if (w->base.cfg.refresh && at != (int64_t)w->n - 1)
        rc = current->ops->add(current, h); /* renewed, which is not new: */
    rc = at >= 0 && rc > 0 ? 0 : rc;
    pthread_rwlock_unlock(&w->lock);
    return rc;
}

/* The table is read under the read lock everywhere outside the write lock's
 * holders (rotate, clear): a concurrent add may move on to a new span and
 * free an expired generation. */
static pthread_rwlock_t *lock_of(const bk_filter *f)
{
    return &((bk_window *)f)->lock;
}

static void win_prefetch(const bk_filter *f, const bk_hash *hs, size_t n, int all)
{
    const bk_window *w = (const bk_window *)f;
    pthread_rwlock_rdlock(lock_of(f));
    for (uint32_t i = 0; i < w->n; i++)
        w->gens[i].chain->ops->perf->prefetch(w->gens[i].chain, hs, n, all);
    pthread_rwlock_unlock(lock_of(f));
}

/* Every generation goes; the current span's starts empty (a window filter
 * always holds at least one generation, so it always has a slice to save). */
static int win_clear(bk_filter *f)
{
    bk_window *w = (bk_window *)f;
    pthread_rwlock_wrlock(&w->lock);
    while (w->n > 1)
        drop(w, 0);
    const int rc = w->gens[0].chain->ops->clear(w->gens[0].chain);
    int64_t clock;
    w->gens[0].number = current_span(w, &clock);
    pthread_rwlock_unlock(&w->lock);
    return rc;
}

static void win_destroy(bk_filter *f)
{
    bk_window *w = (bk_window *)f;
    const bk_allocator a = f->alloc;
    while (w->n > 0)
        drop(w, w->n - 1);
    bk_scalable_sizes_free(&w->sizes);
    pthread_rwlock_destroy(&w->lock);
    bk_mem_free(&a, w);
}

static uint32_t win_slice_count(const bk_filter *f)
{
    const bk_window *w = (const bk_window *)f;
    uint32_t n = 0;
    pthread_rwlock_rdlock(lock_of(f));
    for (uint32_t i = 0; i < w->n; i++)
        n += w->gens[i].chain->ops->slice_count(w->gens[i].chain);
    pthread_rwlock_unlock(lock_of(f));
    return n;
}

/* Its own struct and every generation's chain's. */
static uint64_t win_state_bytes(const bk_filter *f)
{
    const bk_window *w = (const bk_window *)f;
    uint64_t n = f->state_size;
    pthread_rwlock_rdlock(lock_of(f));
    for (uint32_t i = 0; i < w->n; i++)
        n += bk_state_bytes(w->gens[i].chain);
    pthread_rwlock_unlock(lock_of(f));
    return n;
}

/* Slice i counted over the generations, oldest first, each naming its
 * generation. (If an add moved on to a new span since the count was taken,
 * a view past the end is empty.) */
static void win_slice_view(const bk_filter *f, uint32_t i, bk_slice_view *out)
{
    const bk_window *w = (const bk_window *)f;
    memset(out, 0, sizeof *out);
    pthread_rwlock_rdlock(lock_of(f));
    for (uint32_t g = 0; g < w->n; g++) {
        const bk_filter *c = w->gens[g].chain;
        const uint32_t n = c->ops->slice_count(c);
        if (i < n) {
            c->ops->slice_view(c, i, out);
            out->gen = w->gens[g].number;
            out->span = w->span_ms;
            break;
        }
        i -= n;
    }
    pthread_rwlock_unlock(lock_of(f));
}

/* Slice i counted over the generations, as win_slice_view counts it; under
 * the window's write lock (bk_defrag), so without taking it. */
static void win_defrag(bk_filter *f, uint32_t i, bk_move_fn move, void *arg)
{
    const bk_window *w = (const bk_window *)f;
    for (uint32_t g = 0; g < w->n; g++) {
        bk_filter *c = w->gens[g].chain;
        const uint32_t n = c->ops->slice_count(c);
        if (i < n) {
            c->ops->defrag(c, i, move, arg);
            return;
        }
        i -= n;
    }
}

/* Generation by generation, when both hold the same generations of the same
 * shapes (the union of two filters that saw the same spans). */
static int win_merge(bk_filter *dst, const bk_filter *src)
{
    bk_window *d = (bk_window *)dst;
    const bk_window *s = (const bk_window *)src;
    if (d->span_ms != s->span_ms)
        return bk_fail(BK_EINCOMPAT,
                       "the windows' spans differ (%lld ms vs %lld ms: window / generations)",
                       (long long)d->span_ms, (long long)s->span_ms);
    for (uint32_t i = 0; i < d->n || i < s->n; i++)
        if (i >= d->n || i >= s->n || d->gens[i].number != s->gens[i].number)
            return bk_fail(BK_EINCOMPAT,
                           "the windows hold different generations (%u from span %lld vs %u from "
                           "span %lld): only filters that saw the same spans merge",
                           d->n, (long long)d->gens[0].number, s->n, (long long)s->gens[0].number);
    for (uint32_t i = 0; i < d->n; i++) { /* shapes first: nothing changes on a mismatch */
        const bk_filter *a = d->gens[i].chain, *b = s->gens[i].chain;
        if (a->ops->slice_count(a) != b->ops->slice_count(b))
            return BK_EINCOMPAT;
        for (uint32_t j = 0; j < a->ops->slice_count(a); j++) {
            bk_slice_view va, vb;
            a->ops->slice_view(a, j, &va);
            b->ops->slice_view(b, j, &vb);
            if (!bk_same_shape(&va, &vb))
                return BK_EINCOMPAT;
        }
    }
    for (uint32_t i = 0; i < d->n; i++)
        d->gens[i].chain->ops->merge(d->gens[i].chain, s->gens[i].chain);
    return BK_OK;
}

static int new_window(const bk_config *cfg, const bk_allocator *a, bk_window **out)
{
    bk_window *w;
    int rc = bk_filter_new(sizeof *w, offsetof(bk_window, lock), &window_ops, cfg, a, &w);
    if (rc != BK_OK)
        return rc;
    bk_window_chain_config(cfg, &w->chain_cfg);
    if ((rc = bk_scalable_sizes_init(&w->sizes, &w->chain_cfg)) != BK_OK) {
        pthread_rwlock_destroy(&w->lock);
        bk_mem_free(a, w);
        return rc;
    }
    w->span_ms = bk_window_span_ms(cfg);
    w->live = (int64_t)cfg->generations;
    atomic_init(&w->latest, INT64_MIN);
    w->budget.max = cfg->max_bytes;
    w->budget.max_arrays = BK_WINDOW_MAX_SLICES; /* what a file holds: growth past it is full */
    *out = w;
    return BK_OK;
}

/* A window takes its first generation's first slice when made. */
static uint64_t win_first_bytes(const bk_config *cfg)
{
    bk_config chain;
    bk_window_chain_config(cfg, &chain);
    return bk_scalable_first_bytes(&chain);
}

static int bk_window_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out)
{
    bk_window *w;
    int rc = new_window(cfg, a, &w);
    int64_t clock;
    if (rc == BK_OK && (rc = rotate(w, current_span(w, &clock))) != BK_OK)
        win_destroy(&w->base);
    if (rc == BK_OK)
        *out = &w->base;
    return rc;
}

/* The generations of n slices (oldest first, each naming its generation):
 * in order, at most BK_WINDOW_MAX_LIVE of them, and numbers whose spans
 * start far from overflow (2^62 ms: a hundred million years). Checked
 * before anything is adopted. */
static int check_generations(const bk_window *w, const bk_slice_view *slices, uint32_t n)
{
    const int64_t gen_max = (INT64_C(1) << 62) / w->span_ms;
    uint32_t gens = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i > 0 && slices[i].gen == slices[i - 1].gen)
            continue;
        if (++gens > BK_WINDOW_MAX_LIVE || (i > 0 && slices[i].gen < slices[i - 1].gen) ||
            slices[i].gen > gen_max || slices[i].gen < -gen_max)
            return bk_fail(BK_ECORRUPT, "window: generation %lld out of order or out of range",
                           (long long)slices[i].gen);
    }
    return n ? BK_OK : bk_fail(BK_ECORRUPT, "window: no generation");
}

/* Every chain is adopted as borrowed and takes its payloads over only once
 * nothing can fail any more: an error leaves them all with the caller, as
 * bk_filter_adopt_fn promises, however far it got. Nothing is allocated
 * after that: when every generation expired while stored, the newest is
 * emptied and becomes the current span's (win_clear) instead of being
 * replaced by a new one. */
static int bk_window_adopt(const bk_config *cfg, const bk_allocator *a, const bk_slice_view *slices,
                           uint32_t n, int borrowed, bk_filter **out)
{
    bk_window *w;
    int rc = new_window(cfg, a, &w);
    if (rc != BK_OK)
        return rc;
    if ((rc = check_generations(w, slices, n)) != BK_OK) {
        win_destroy(&w->base);
        return rc;
    }
    for (uint32_t i = 0; i < n && rc == BK_OK;) {
        uint32_t j = i + 1; /* slices i .. j-1: one generation */
        while (j < n && slices[j].gen == slices[i].gen)
            j++;
        bk_filter *chain;
        rc = bk_scalable_adopt_in(&w->chain_cfg, a, &w->budget, &w->sizes, &slices[i], j - i, 1,
                                  &chain);
        if (rc == BK_OK) {
            w->gens[w->n].number = slices[i].gen;
            w->gens[w->n].chain = chain;
            w->n++;
        }
        i = j;
    }
    if (rc != BK_OK) {
        win_destroy(&w->base); /* every chain borrowed: no payload is freed */
        return rc;
    }
    for (uint32_t g = 0; g < w->n && !borrowed; g++)
        bk_scalable_own(w->gens[g].chain);
    int64_t clock;
    const int64_t now = current_span(w, &clock);
    redate(w, clock); /* a table from a clock far ahead starts at this clock's time */
    /* the filter's time starts no earlier than its newest generation: a file
     * from a machine whose clock ran a little ahead is not in this one's
     * future */
    const int64_t newest = w->gens[w->n - 1].number;
    if (newest > now)
        atomic_store(&w->latest, newest * w->span_ms);
    const int64_t at = newest > now ? newest : now;
    if (!borrowed) { /* what expired while stored goes now (a mapping's stays, unconsulted) */
        while (w->n > 1 && w->gens[0].number < at - w->live)
            drop(w, 0);
        if (w->gens[0].number < at - w->live) /* all of it expired */
            win_clear(&w->base);
    }
    *out = &w->base;
    return BK_OK;
}

/* The whole window at its stated rate: G + 1 generations (G spans and the
 * current one), each its chain's first slice, and the compound rate of
 * looking a key up in all of them. */
static int bk_window_plan(const bk_config *cfg, bk_plan *out)
{
    bk_config c;
    bk_window_chain_config(cfg, &c);
    bk_plan one;
    const int rc = bk_scalable_desc.plan(&c, &one);
    if (rc != BK_OK)
        return rc;
    const double live = (double)(cfg->generations + 1);
    out->bits = one.bits * (cfg->generations + 1);
    out->bytes = one.bytes * (cfg->generations + 1);
    out->k = one.k;
    out->expected_fpr = 1.0 - pow(1.0 - one.expected_fpr, live);
    out->bits_per_key = 8.0 * (double)out->bytes / (double)cfg->capacity;
    return BK_OK;
}

/* The operations grouped by role, as in a SQLite methods table; remove and intersect are NULL
 * (generations are bit arrays, and two filters' generations hold different spans' keys). */
/* clang-format off */
static const bk_filter_perf window_perf = {
    BK_PERF_TABLE, .prefetch = win_prefetch,
};
static const bk_filter_ops window_ops = {
    BK_MEMORY_OPS, .add = win_add, .contains = win_contains, .clear = win_clear,
    .merge = win_merge, .destroy = win_destroy, .slice_count = win_slice_count,
    .slice_view = win_slice_view, .expire = win_expire, .state_bytes = win_state_bytes,
    .defrag = win_defrag, .perf = &window_perf,
};
/* clang-format on */

/* bk_stats reports what was asked: the capacity of one window, not the sum of
 * its generations'. */
static uint64_t win_capacity(const bk_filter *f, uint64_t slices_sum)
{
    (void)slices_sum;
    return f->cfg.capacity;
}

/* Its payload's cells: bits, in 64-byte blocks when blocked. */
static bk_cells window_cells(const bk_config *cfg)
{
    return bk_bloom_cells(cfg, 1, 0);
}

/* The descriptor's chain_slice: slice i of a generation's chain, with the
 * span of its generation. */
static int win_chain_slice(const bk_config *cfg, uint32_t i, bk_slice_rule rule, bk_slice_view *out,
                           bk_slice_limit *limit)
{
    bk_config chain;
    bk_window_chain_config(cfg, &chain);
    const int rc = bk_scalable_slice_shape(&chain, i, rule, out);
    if (rc == BK_OK) {
        *limit = bk_scalable_limit(out);
        out->span = bk_window_span_ms(cfg);
    }
    return rc;
}

/* The configuration keys it takes (src/core/config.c has what each means). */
static const bk_variant_key window_keys[] = {
    {"capacity", NULL, "per window"}, {"fpr", NULL, NULL},
    {"growth", NULL, NULL},           {"tightening", "0.3", NULL},
    {"layout", NULL, NULL},           {"window", NULL, NULL},
    {"generations", NULL, NULL},      {"refresh", NULL, NULL},
    {"max_bytes", NULL, NULL},        {NULL, NULL, NULL},
};

const bk_variant_desc bk_window_desc = {
    BK_DESC_NAMED(WINDOW, window, "window (forgets keys after a time)"),
    .figures = "redated_from_ms redated_to_ms",
    .estimate = bk_bloom_estimate,
    .max_slices = BK_WINDOW_MAX_SLICES,
    .capacity = win_capacity,
    .chain_slice = win_chain_slice,
    .first_bytes = win_first_bytes,
};
