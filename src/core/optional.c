/*
 * optional.c - the calls only some variants answer (bk_count, bk_compact,
 * bk_set_grow_check, RedisBloom's chunked dump): each reaches its
 * descriptor's optional slot (filter_impl.h) under the filter's lock, and
 * answers BK_ENOTSUP for a variant without it, in this one place.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t */

#include <pthread.h>

#include "bloomkit.h"
#include "bloomkit_redisbloom.h"
#include "../common/error.h"
#include "filter_impl.h"

/* The descriptor of f when it has slot (non-zero), else NULL after
 * bk_fail(BK_ENOTSUP) naming the call. */
static const bk_variant_desc *having(const bk_filter *f, int has, const char *what)
{
    if (has)
        return bk_variant_for(f->cfg.variant);
    bk_fail(BK_ENOTSUP, "%s: %s filters do not have it", what, bk_variant_name(f->cfg.variant));
    return NULL;
}

#define DESC(f) bk_variant_for((f)->cfg.variant)

static void lock(const bk_filter *f, int write)
{
    if (f->rwlock)
        (write ? pthread_rwlock_wrlock : pthread_rwlock_rdlock)(f->rwlock);
}

static void unlock(const bk_filter *f)
{
    if (f->rwlock)
        pthread_rwlock_unlock(f->rwlock);
}

int bk_count(const bk_filter *f, const void *key, size_t len, uint64_t *out)
{
    bk_call_begin();
    if (!f || !out || !bk_key_valid(key, len))
        return bk_fail(BK_EINVAL, "count: no filter, output or key");
    const bk_variant_desc *d = having(f, DESC(f)->count != NULL, "count");
    if (!d)
        return BK_ENOTSUP;
    bk_hash h;
    bk_filter_hash(f, key, len, &h);
    lock(f, 0);
    *out = d->count(f, &h);
    unlock(f);
    return BK_OK;
}

int bk_compact(bk_filter *f)
{
    bk_call_begin();
    if (!f)
        return bk_fail(BK_EINVAL, "compact: no filter");
    const bk_variant_desc *d = having(f, DESC(f)->compact != NULL, "compact");
    if (!d)
        return BK_ENOTSUP;
    if (f->readonly)
        return bk_fail(BK_EREADONLY, "compact: the filter is mapped read-only");
    lock(f, 1);
    const int rc = d->compact(f);
    unlock(f);
    return bk_done(rc, "compact");
}

int bk_set_grow_check(bk_filter *f, bk_grow_check_fn check, void *arg)
{
    bk_call_begin();
    if (!f)
        return bk_fail(BK_EINVAL, "set_grow_check: no filter");
    if (!having(f, DESC(f)->host_grow, "set_grow_check"))
        return BK_ENOTSUP;
    f->grow_check = check;
    f->grow_arg = check ? arg : NULL;
    return BK_OK;
}

int bk_chunked_header(const bk_filter *f, void *buf, size_t cap, size_t *len)
{
    bk_call_begin();
    if (!f || !len || (!buf && cap))
        return bk_fail(BK_EINVAL, "chunked_header: no filter, buffer or length");
    const bk_variant_desc *d = having(f, DESC(f)->chunked_header != NULL, "chunked dump");
    if (!d)
        return BK_ENOTSUP;
    lock(f, 0);
    *len = d->chunked_header(f, buf, cap);
    unlock(f);
    return BK_OK;
}

int bk_chunked_next(const bk_filter *f, long long it, const uint8_t **data, size_t *len,
                    long long *next)
{
    bk_call_begin();
    if (!f || !data || !len || !next)
        return bk_fail(BK_EINVAL, "chunked_next: no filter or output");
    const bk_variant_desc *d = having(f, DESC(f)->chunked_next != NULL, "chunked dump");
    if (!d)
        return BK_ENOTSUP;
    lock(f, 0);
    d->chunked_next(f, it, data, len, next);
    unlock(f);
    return BK_OK;
}

int bk_chunked_load(bk_filter *f, long long it, const void *data, size_t len)
{
    bk_call_begin();
    if (!f || (!data && len))
        return bk_fail(BK_EINVAL, "chunked_load: no filter or chunk");
    const bk_variant_desc *d = having(f, DESC(f)->chunked_load != NULL, "chunked load");
    if (!d)
        return BK_ENOTSUP;
    if (f->readonly)
        return bk_fail(BK_EREADONLY, "chunked_load: the filter is mapped read-only");
    lock(f, 1);
    const int rc = d->chunked_load(f, it, data, len);
    unlock(f);
    return bk_done(rc, "chunked_load");
}

int bk_chunked_new(bk_variant v, const void *header, size_t len, unsigned flags, uint64_t max_bytes,
                   bk_filter **out)
{
    bk_call_begin();
    if (!out || (!header && len))
        return bk_fail(BK_EINVAL, "chunked_new: no header or output");
    const bk_variant_desc *d = bk_variant_for(v);
    if (!d || !d->chunked_new)
        return bk_fail(BK_ENOTSUP, "chunked_new: %s filters have no chunked dump",
                       bk_variant_name(v) ? bk_variant_name(v) : "unknown");
    if (flags & ~BK_RB_FILE)
        return bk_fail(BK_EINVAL, "chunked_new: unknown flags %#x", flags);
    return bk_done(d->chunked_new(header, len, flags, max_bytes, out), "chunked_new");
}
