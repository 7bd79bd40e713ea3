/*
 * optional.c - the calls only some variants answer (bk_count, bk_compact,
 * bk_set_grow_check, RedisBloom's chunked dump, bk_defrag): each reaches
 * its descriptor's (or store's) optional slot (filter_impl.h) under the
 * filter's lock, and answers BK_ENOTSUP for one without it, in this one
 * place.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t */

#include <pthread.h>

#include "bloomkit.h"
#include "bloomkit_redisbloom.h"
#include "../common/error.h"
#include "filter_impl.h"

/* The entry of a call on f: BK_OK with *d its descriptor, or BK_EINVAL (f
 * NULL, or args_ok 0: an argument NULL). */
static int enter(const bk_filter *f, int args_ok, const char *what, const bk_variant_desc **d)
{
    bk_call_begin();
    if (!f || !args_ok)
        return bk_fail(BK_EINVAL, "%s: no filter, or an argument NULL", what);
    *d = bk_variant_for(f->cfg.variant);
    return BK_OK;
}

/* enter's second half, once the slot is known: BK_OK with f's lock taken
 * (the write lock when the call writes), BK_ENOTSUP (has 0: its variant
 * has no such slot), BK_EREADONLY (a write to a read-only mapping). */
static int having(const bk_filter *f, int has, int writes, const char *what)
{
    if (!has)
        return bk_fail(BK_ENOTSUP, "%s: %s filters do not have it", what,
                       bk_variant_name(f->cfg.variant));
    if (writes && f->readonly)
        return bk_fail(BK_EREADONLY, "%s: the filter is mapped read-only", what);
    if (f->rwlock)
        (writes ? pthread_rwlock_wrlock : pthread_rwlock_rdlock)(f->rwlock);
    return BK_OK;
}

/* The end of a call that took the lock in having. */
static int leave(const bk_filter *f, int rc, const char *what)
{
    if (f->rwlock)
        pthread_rwlock_unlock(f->rwlock);
    return rc < 0 ? bk_done(rc, what) : rc;
}

int bk_count(const bk_filter *f, const void *key, size_t len, uint64_t *out)
{
    const bk_variant_desc *d = NULL;
    int rc = enter(f, out && bk_key_valid(key, len), "count", &d);
    if (rc != BK_OK || (rc = having(f, d->count != NULL, 0, "count")) != BK_OK)
        return rc;
    bk_hash h;
    bk_filter_hash(f, key, len, &h);
    *out = d->count(f, &h);
    return leave(f, BK_OK, "count");
}

int bk_compact(bk_filter *f)
{
    const bk_variant_desc *d = NULL;
    int rc = enter(f, 1, "compact", &d);
    if (rc != BK_OK || (rc = having(f, d->compact != NULL, 1, "compact")) != BK_OK)
        return rc;
    return leave(f, d->compact(f), "compact");
}

int bk_defrag(bk_filter *f, uint32_t i, bk_move_fn move, void *arg)
{
    const bk_variant_desc *d = NULL;
    int rc = enter(f, move != NULL, "defrag", &d);
    if (rc != BK_OK)
        return rc;
    /* counted before the lock: a window's count takes it (no other use of f
     * runs meanwhile) */
    const uint32_t n = f->ops->defrag ? f->ops->slice_count(f) : 0;
    if ((rc = having(f, f->ops->defrag != NULL, 1, "defrag")) != BK_OK)
        return rc;
    if (i >= n)
        return leave(f, bk_fail(BK_ERANGE, "defrag: no array %u", i), "defrag");
    f->ops->defrag(f, i, move, arg);
    return leave(f, BK_OK, "defrag");
}

int bk_set_grow_check(bk_filter *f, bk_grow_check_fn check, void *arg)
{
    const bk_variant_desc *d = NULL;
    int rc = enter(f, 1, "set_grow_check", &d);
    if (rc != BK_OK || (rc = having(f, d->host_grow, 0, "set_grow_check")) != BK_OK)
        return rc;
    f->grow_check = check;
    f->grow_arg = check ? arg : NULL;
    return leave(f, BK_OK, "set_grow_check");
}

int bk_chunked_header(const bk_filter *f, void *buf, size_t cap, size_t *len)
{
    const bk_variant_desc *d = NULL;
    int rc = enter(f, len && (buf || !cap), "chunked_header", &d);
    if (rc != BK_OK || (rc = having(f, d->chunked != NULL, 0, "chunked dump")) != BK_OK)
        return rc;
    *len = d->chunked->header(f, buf, cap);
    return leave(f, BK_OK, "chunked_header");
}

int bk_chunked_next(const bk_filter *f, long long it, const uint8_t **data, size_t *len,
                    long long *next)
{
    const bk_variant_desc *d = NULL;
    int rc = enter(f, data && len && next, "chunked_next", &d);
    if (rc != BK_OK || (rc = having(f, d->chunked != NULL, 0, "chunked dump")) != BK_OK)
        return rc;
    d->chunked->next(f, it, data, len, next);
    return leave(f, BK_OK, "chunked_next");
}

int bk_chunked_load(bk_filter *f, long long it, const void *data, size_t len)
{
    const bk_variant_desc *d = NULL;
    int rc = enter(f, data || !len, "chunked_load", &d);
    if (rc != BK_OK || (rc = having(f, d->chunked != NULL, 1, "chunked load")) != BK_OK)
        return rc;
    return leave(f, d->chunked->load(f, it, data, len), "chunked_load");
}

int bk_chunked_new(bk_variant v, const void *header, size_t len, unsigned flags, uint64_t max_bytes,
                   bk_filter **out)
{
    bk_call_begin();
    if (!out || (!header && len))
        return bk_fail(BK_EINVAL, "chunked_new: no header or output");
    const bk_variant_desc *d = bk_variant_for(v);
    if (!d || !d->chunked)
        return bk_fail(BK_ENOTSUP, "chunked_new: %s filters have no chunked dump",
                       bk_variant_name(v) ? bk_variant_name(v) : "unknown");
    if (flags & ~BK_RB_FILE)
        return bk_fail(BK_EINVAL, "chunked_new: unknown flags %#x", flags);
    return bk_done(d->chunked->make(header, len, flags, max_bytes, out), "chunked_new");
}
