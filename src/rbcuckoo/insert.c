/*
 * insert.c - lookups, counts and inserts of RedisBloom's cuckoo filter
 * (FORMATS.md 4.2 - 4.4): first fit newest sub-filter first, then
 * evictions in the newest only, undone in reverse when they find no room,
 * then a new sub-filter when expansion allows.
 */
#include "rbcuckoo.h"

#include "../common/error.h"

/* Slots of bucket j of s holding fp. */
static unsigned in_bucket(const bk_rbcuckoo *c, const rc_sub *s, uint64_t j, unsigned fp)
{
    const uint8_t *b = bk_rc_bucket(c, s, j);
    unsigned n = 0;
    for (unsigned v = 0; v < c->bucket_size; v++)
        n += b[v] == fp;
    return n;
}

int bk_rbcuckoo_exists(const bk_rbcuckoo *c, const void *item, size_t len)
{
    if (!c || (!item && len))
        return 0;
    const rc_key k = bk_rc_key_of(c, item, len);
    return bk_rc_exists(c, &k);
}

int bk_rc_exists(const bk_rbcuckoo *c, const rc_key *k)
{
    for (uint32_t i = 0; i < c->filters; i++) {
        const rc_sub *s = &c->subs[i];
        if (in_bucket(c, s, bk_rc_index(s, k->i1), k->fp) ||
            in_bucket(c, s, bk_rc_index(s, k->i2), k->fp))
            return 1;
    }
    return 0;
}

uint64_t bk_rbcuckoo_count(const bk_rbcuckoo *c, const void *item, size_t len)
{
    if (!c || (!item && len))
        return 0;
    const rc_key k = bk_rc_key_of(c, item, len);
    return bk_rc_count(c, &k);
}

uint64_t bk_rc_count(const bk_rbcuckoo *c, const rc_key *k)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < c->filters; i++) {
        const rc_sub *s = &c->subs[i];
        n += in_bucket(c, s, bk_rc_index(s, k->i1), k->fp) +
             in_bucket(c, s, bk_rc_index(s, k->i2), k->fp);
    }
    return n;
}

/* Put fp into the first empty slot of bucket j of s: 1, or 0 when full. */
static int put_free(const bk_rbcuckoo *c, const rc_sub *s, uint64_t j, unsigned fp)
{
    uint8_t *b = bk_rc_bucket(c, s, j);
    for (unsigned v = 0; v < c->bucket_size; v++)
        if (b[v] == 0) {
            b[v] = (uint8_t)fp;
            return 1;
        }
    return 0;
}

static void swap(uint8_t *slot, unsigned *cur)
{
    const unsigned t = *slot;
    *slot = (uint8_t)*cur;
    *cur = t;
}

/* The slot a keyed filter's walk evicts at kick t of the item whose first
 * index is seed: drawn from (seed, t) alone, so the walk can be undone in
 * reverse and a replica replaying the insert makes the same moves. */
static unsigned kick_slot(uint64_t seed, unsigned t, unsigned b)
{
    uint64_t z = seed + (uint64_t)(t + 1) * UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return (unsigned)(((z ^ (z >> 31)) >> 32) % b);
}

/* Evictions in the newest sub-filter: 1 when fp found a place; else 0
 * with every move undone, the sub-filter exactly as before. RedisBloom's
 * walk starts at i1 and takes slots 0, 1, .. in turn; with two slots a
 * bucket it cycles and fails at 29-75% of the slots. A keyed filter's
 * (ours alone to choose) starts at either bucket and takes a slot drawn
 * for each kick, and fills 85-89% of two-slot buckets (docs/design.md). */
static int evict(const bk_rbcuckoo *c, const rc_key *k)
{
    const rc_sub *s = &c->subs[c->filters - 1];
    const unsigned b = c->bucket_size;
    const int keyed = c->hkey != NULL;
    unsigned cur = k->fp, v = 0;
    uint64_t j = bk_rc_index(s, keyed && (k->i1 >> 63) ? k->i2 : k->i1);
    for (unsigned t = 0; t < c->max_iterations; t++) {
        if (keyed)
            v = kick_slot(k->i1, t, b);
        swap(bk_rc_bucket(c, s, j) + v, &cur);
        j = bk_rc_index(s, j ^ (cur * RC_MUL));
        if (put_free(c, s, j, cur))
            return 1;
        v = (v + 1) % b;
    }
    for (unsigned t = c->max_iterations; t-- > 0;) {
        v = keyed ? kick_slot(k->i1, t, b) : (v + b - 1) % b;
        j = bk_rc_index(s, j ^ (cur * RC_MUL));
        swap(bk_rc_bucket(c, s, j) + v, &cur);
    }
    return 0;
}

/* First fit in any sub-filter, newest first: 1 placed, or 0. */
static int first_fit(const bk_rbcuckoo *c, const rc_key *k)
{
    for (uint32_t i = c->filters; i-- > 0;) {
        const rc_sub *s = &c->subs[i];
        if (put_free(c, s, bk_rc_index(s, k->i1), k->fp) ||
            put_free(c, s, bk_rc_index(s, k->i2), k->fp))
            return 1;
    }
    return 0;
}

/* The most sub-filters c may have. */
static uint32_t filters_max(const bk_rbcuckoo *c)
{
    return c->max_filters ? c->max_filters : BK_RBCUCKOO_FILTERS_MAX;
}

uint64_t bk_rbcuckoo_next_bytes(const bk_rbcuckoo *c)
{
    uint64_t n;
    if (c->expansion == 0 || c->filters >= filters_max(c))
        return 0;
    bk_call_begin();
    return bk_rc_buckets_at(c->buckets, c->expansion, c->filters, &n) == BK_OK ? n * c->bucket_size
                                                                               : 0;
}

int bk_rbcuckoo_add(bk_rbcuckoo *c, const void *item, size_t len, unsigned flags,
                    const bk_rb_grow *grow)
{
    bk_call_begin();
    if (!c || (!item && len))
        return bk_fail(BK_EINVAL, "rbcuckoo_add: no filter or item");
    const rc_key k = bk_rc_key_of(c, item, len);
    return bk_rc_add(c, &k, flags, grow);
}

int bk_rc_add(bk_rbcuckoo *c, const rc_key *k, unsigned flags, const bk_rb_grow *grow)
{
    if ((flags & BK_RB_NX) && bk_rc_exists(c, k))
        return 0;
    for (;;) {
        if (first_fit(c, k) || evict(c, k)) {
            c->items++;
            return 1;
        }
        if (c->expansion == 0)
            return bk_fail(BK_EFULL, "the cuckoo filter is full and does not expand");
        if (c->filters >= filters_max(c))
            return bk_fail(BK_EFULL,
                           "the cuckoo filter is full at %u sub-filters, the most %s holds: "
                           "make it with a larger capacity or expansion",
                           c->filters,
                           c->max_filters ? "a bloomkit file or key" : "RedisBloom's encoding");
        if (grow && grow->check) {
            bk_rbcuckoo_info in;
            bk_rc_info(c, &in);
            const int refused = grow->check(grow->arg, in.bytes, bk_rbcuckoo_next_bytes(c));
            if (refused != 0)
                return refused;
        }
        uint64_t n;
        if (bk_rc_buckets_at(c->buckets, c->expansion, c->filters, &n) != BK_OK)
            return bk_fail(BK_ENOMEM, "a sub-filter past the %u-th", c->filters);
        const int rc = bk_rc_push(c, n);
        if (rc != BK_OK)
            return rc;
    }
}
