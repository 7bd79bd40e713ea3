/*
 * filter.c - the public filter API: validate, hash the key once, dispatch.
 *
 * The only place a missing vtable operation becomes BK_ENOTSUP and a read-only
 * (mapped) filter refuses mutation. Variants receive a digest, never key bytes.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "bloomkit.h"
#include "bloomkit_tools.h"
#include "../common/alloc.h"
#include "config.h"
#include "../common/error.h"
#include "filter_impl.h"
#include "../common/random.h"
#include "../common/sizing.h"

#ifdef BK_CHECK_CPPFLAGS /* make check-flags: CPPFLAGS reached this compile */
BK_API const int bk_cppflags_seen = 1;
#endif

/* The largest capacity whose filter d makes within c->max_bytes at its
 * start (a binary search on d's own sizing, which grows with the
 * capacity); 0 when none does. */
static uint64_t capacity_that_fits(const bk_config *c, const bk_variant_desc *d)
{
    bk_config t = *c;
    uint64_t lo = 0, hi = c->capacity; /* lo fits (or is 0), hi does not */
    while (hi - lo > 1) {
        t.capacity = lo + (hi - lo) / 2;
        const uint64_t need = d->first_bytes(&t);
        if (need && need <= c->max_bytes)
            lo = t.capacity;
        else
            hi = t.capacity;
    }
    return lo;
}

/* BK_ECONFIG: max_bytes cannot hold the `need` bytes of c's filter at its
 * start; the message says what would. */
static int refuse_max_bytes(const bk_config *c, const bk_variant_desc *d, uint64_t need)
{
    const uint64_t fit = capacity_that_fits(c, d);
    bk_detail_clear();
    if (!fit)
        return bk_fail(BK_ECONFIG,
                       "max_bytes=%llu is less than the %llu bytes the filter's first slice "
                       "needs (capacity=%llu, fpr=%g): give max_bytes of at least %llu",
                       (unsigned long long)c->max_bytes, (unsigned long long)need,
                       (unsigned long long)c->capacity, c->fpr, (unsigned long long)need);
    return bk_fail(BK_ECONFIG,
                   "max_bytes=%llu is less than the %llu bytes the filter's first slice "
                   "needs (capacity=%llu, fpr=%g): give max_bytes of at least %llu, or a "
                   "capacity of at most %llu (or a larger fpr)",
                   (unsigned long long)c->max_bytes, (unsigned long long)need,
                   (unsigned long long)c->capacity, c->fpr, (unsigned long long)need,
                   (unsigned long long)fit);
}

int bk_new(const bk_config *cfg, bk_filter **out)
{
    bk_call_begin();
    if (!out)
        return bk_fail(BK_EINVAL, "new: no result pointer");
    *out = NULL;
    bk_config c;
    if (cfg)
        c = *cfg;
    else
        bk_config_init(&c);
    if (bk_config_validate(&c, NULL, 0) != BK_OK)
        return BK_ECONFIG; /* validate said which key, and why */
    const bk_variant_desc *d = bk_variant_for(c.variant);
    if (c.max_bytes && d->first_bytes) {
        const uint64_t need = d->first_bytes(&c);
        if (need > c.max_bytes)
            return refuse_max_bytes(&c, d, need);
    }
    if (!c.has_key) {
        const int rc = bk_random_bytes(c.key, sizeof c.key);
        if (rc != BK_OK)
            return bk_done(rc, "new: drawing a hash key");
        c.has_key = 1;
    }
    const bk_allocator a = bk_current_allocator();
    const int rc = d->create(&c, &a, out);
    return bk_done(rc, "new");
}

int bk_filter_new(size_t size, size_t lock, const bk_filter_ops *ops, const bk_config *cfg,
                  const bk_allocator *a, void *out)
{
    /* a table of a version this build does not know would be misread */
    if (ops->version < 1 || ops->version > BK_FILTER_OPS_VERSION ||
        (ops->perf && (ops->perf->version < 1 || ops->perf->version > BK_FILTER_PERF_VERSION)))
        return BK_EINVAL;
    bk_filter *f = bk_mem_calloc(a, 1, size);
    if (!f)
        return BK_ENOMEM;
    if (lock && pthread_rwlock_init((pthread_rwlock_t *)(void *)((char *)f + lock), NULL) != 0) {
        bk_mem_free(a, f);
        return BK_ESYS;
    }
    bk_filter_base_init(f, ops, cfg, a);
    f->state_size = size;
    const bk_variant_desc *d = bk_variant_for(cfg->variant);
    if (cfg->hash == BK_HASH_MURMUR && d && d->murmur)
        f->hkey.murmur = (uint8_t)d->murmur(cfg); /* the digest's form is the variant's */
    f->rwlock = lock ? (char *)f + lock : NULL;
    memcpy(out, &f, sizeof f); /* NOLINT: out is the address of the caller's pointer */
    return BK_OK;
}

int bk_write_locked(bk_filter *f, int (*op)(bk_filter *, const bk_hash *), const bk_hash *h)
{
    pthread_rwlock_t *lock = f->rwlock;
    pthread_rwlock_wrlock(lock);
    const int rc = op(f, h);
    pthread_rwlock_unlock(lock);
    return rc;
}

int bk_read_locked(const bk_filter *f, int (*op)(const bk_filter *, const bk_hash *),
                   const bk_hash *h)
{
    pthread_rwlock_t *lock = f->rwlock;
    pthread_rwlock_rdlock(lock);
    const int rc = op(f, h);
    pthread_rwlock_unlock(lock);
    return rc;
}

void bk_filter_free_array(bk_filter *f, void *data, uint64_t nbytes, int borrowed)
{
    const bk_allocator a = f->alloc;
    if (!borrowed)
        bk_payload_free(&a, data, (size_t)nbytes);
    if (f->rwlock)
        pthread_rwlock_destroy(f->rwlock);
    bk_mem_free(&a, f);
}

int bk_max_bytes_check(void *filter, uint64_t used, uint64_t next)
{
    const bk_filter *f = filter;
    const int host = f->grow_check ? f->grow_check(f->grow_arg, used, next) : 0;
    if (host != 0) /* a refusal is an error code, whatever the host returned */
        return host < 0 ? host : bk_fail(BK_EFULL, "growth refused by the host's check");
    const uint64_t max = f->cfg.max_bytes;
    return max && (next == 0 || next > max - used) ? bk_full_error(used + next, max, used, 0) : 0;
}

int bk_full_error(uint64_t after, uint64_t max, uint64_t used, uint32_t max_arrays)
{
    if (max_arrays)
        return bk_fail(BK_EFULL, "filter full: %u slices, the most a file can hold", max_arrays);
    return bk_fail(BK_EFULL,
                   "filter full: growing to %llu bytes would pass max_bytes=%llu (%llu in use)",
                   (unsigned long long)after, (unsigned long long)max, (unsigned long long)used);
}

int bk_budget_take(bk_budget *b, uint64_t n)
{
    const uint32_t arrays = atomic_fetch_add_explicit(&b->arrays, 1, memory_order_relaxed) + 1;
    if (b->max_arrays && arrays > b->max_arrays) {
        atomic_fetch_sub_explicit(&b->arrays, 1, memory_order_relaxed);
        return bk_full_error(0, 0, 0, b->max_arrays);
    }
    uint64_t used = atomic_load_explicit(&b->used, memory_order_relaxed);
    do {
        if (b->max && (used + n > b->max || used + n < used)) {
            atomic_fetch_sub_explicit(&b->arrays, 1, memory_order_relaxed);
            return bk_full_error(used + n, b->max, used, 0);
        }
    } while (!atomic_compare_exchange_weak_explicit(&b->used, &used, used + n, memory_order_relaxed,
                                                    memory_order_relaxed));
    return BK_OK;
}

void bk_budget_give(bk_budget *b, uint64_t n)
{
    atomic_fetch_sub_explicit(&b->used, n, memory_order_relaxed);
    atomic_fetch_sub_explicit(&b->arrays, 1, memory_order_relaxed);
}

void bk_budget_count(bk_budget *b, uint64_t n)
{
    atomic_fetch_add_explicit(&b->used, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&b->arrays, 1, memory_order_relaxed);
}

/* Destroy f, then let whoever attached its mapping release it (src/io: the
 * payloads lived there). The core knows a mapping by these hooks only. */
static void release(bk_filter *f)
{
    bk_mapping *map = f->mapping;
    const bk_backing_ops *backing = f->backing;
    f->ops->destroy(f);
    if (map && backing)
        backing->release(map);
}

/* A writable mapping's sync (its owner's hook): BK_OK when there is none. */
static int sync_backing(bk_filter *f)
{
    return f->mapping && f->backing && !f->readonly ? f->backing->sync(f) : BK_OK;
}

void bk_free(bk_filter *f)
{
    if (!f)
        return;
    sync_backing(f); /* like fclose: best effort; bk_close reports its error */
    release(f);
}

int bk_close(bk_filter *f)
{
    if (!f)
        return BK_OK;
    const int rc = sync_backing(f); /* sync says why */
    release(f);
    return rc;
}

/* The checks of every one-key call (what: "add", ...), each failure with
 * its detail (the error model's first step for these hot calls, error.h):
 * BK_OK, BK_EINVAL, or BK_EREADONLY when the call writes and f is read-only.
 * A remote store's call clears the detail: its failures start deep. */
static int key_check(const bk_filter *f, const void *key, size_t len, int writes, const char *what)
{
    if (!f)
        return bk_fail(BK_EINVAL, "%s: no filter", what);
    if (!bk_key_valid(key, len))
        return bk_fail(BK_EINVAL, "%s: the key is NULL with length %zu", what, len);
    if (writes && f->readonly)
        return bk_fail(BK_EREADONLY, "%s: the filter is mapped read-only", what);
    if (f->ops->store != BK_STORE_MEMORY)
        bk_call_begin();
    return BK_OK;
}

/* One checked key to operation op (BK_KEYS_ADD, _CONTAINS or _REMOVE): sent
 * to a store that takes keys (ops->keys_op), or hashed once and its digest
 * given to the variant. Its result, or what failed (with bk_done's detail
 * when nothing deeper said why). */
static inline int one_key(bk_filter *f, int op, const void *key, size_t len, const char *what)
{
    int rc;
    if (f->ops->keys_op) {
        int result;
        rc = f->ops->keys_op(f, op, &key, &len, 1, &result);
        rc = rc < 0 ? rc : result;
    } else {
        bk_hash h;
        bk_filter_hash(f, key, len, &h);
        rc = op == BK_KEYS_ADD        ? f->ops->add(f, &h)
             : op == BK_KEYS_CONTAINS ? f->ops->contains(f, &h)
                                      : f->ops->remove(f, &h);
    }
    return rc < 0 ? bk_done(rc, what) : rc;
}

int bk_add(bk_filter *f, const void *key, size_t len)
{
    const int rc = key_check(f, key, len, 1, "add");
    return rc != BK_OK ? rc : one_key(f, BK_KEYS_ADD, key, len, "add");
}

int bk_set_single_writer(bk_filter *f, int on)
{
    if (!f)
        return bk_fail(BK_EINVAL, "set_single_writer: no filter");
    f->single_writer = on != 0;
    return BK_OK;
}

int bk_touch(bk_filter *f)
{
    bk_call_begin();
    if (!f)
        return bk_fail(BK_EINVAL, "touch: no filter");
    if (!bk_cells_in_memory(f))
        return BK_OK;
    const size_t page = 4096; /* the smallest page there is: every page is met */
    for (uint32_t i = 0; i < f->ops->slice_count(f); i++) {
        bk_slice_view v;
        f->ops->slice_view(f, i, &v);
        volatile uint8_t *p = v.data;
        for (uint64_t at = 0; at < v.nbytes; at += page) {
            const uint8_t b = p[at];
            if (!f->mapping) /* a mapped file's pages are the file's: read, never dirtied */
                p[at] = b;   /* a write: the page is the filter's own now, not the zero page */
        }
    }
    return BK_OK;
}

int bk_set_add_once(bk_filter *f, int on)
{
    if (!f)
        return bk_fail(BK_EINVAL, "set_add_once: no filter");
    if (on && f->ops->store != BK_STORE_MEMORY)
        return bk_fail(BK_ENOTSUP,
                       "set_add_once: a filter kept in Redis adds as its server does (pull it "
                       "for a local copy)");
    f->add_once = on != 0;
    return BK_OK;
}

int bk_contains(const bk_filter *f, const void *key, size_t len)
{
    const int rc = key_check(f, key, len, 0, "contains");
    /* contains never writes: the cast only lets the three calls share one_key */
    return rc != BK_OK ? rc : one_key((bk_filter *)f, BK_KEYS_CONTAINS, key, len, "contains");
}

/* BK_ENOTSUP before BK_EREADONLY: a variant that cannot remove says so
 * whatever the filter's mode. BK_ENOTFOUND (a key that was not there) is
 * an answer more than a failure, but it is negative, so it says so too. */
int bk_remove(bk_filter *f, const void *key, size_t len)
{
    int rc = key_check(f, key, len, 0, "remove");
    if (rc != BK_OK)
        return rc;
    /* a store that takes keys removes when its variant does (it has no
     * digest operations: filter_impl.h) */
    if (f->ops->keys_op ? !bk_variant_removes(f->cfg.variant) : !f->ops->remove) {
        char can[128] = ""; /* the registry's variants that remove: "counting or cuckoo" */
        size_t at = 0;
        int n = 0, total = 0;
        for (int v = 0; bk_variant_name((bk_variant)v); v++)
            total += bk_variant_removes((bk_variant)v);
        for (int v = 0; bk_variant_name((bk_variant)v) && at < sizeof can; v++)
            if (bk_variant_removes((bk_variant)v))
                at += (size_t)snprintf(can + at, sizeof can - at, "%s%s",
                                       n++ == 0     ? ""
                                       : n == total ? " or "
                                                    : ", ",
                                       bk_variant_name((bk_variant)v));
        return bk_fail(BK_ENOTSUP, "remove: %s filters cannot remove keys (only %s filters can)",
                       bk_variant_name(f->cfg.variant), can);
    }
    if (f->readonly)
        return bk_fail(BK_EREADONLY, "remove: the filter is mapped read-only");
    rc = one_key(f, BK_KEYS_REMOVE, key, len, "remove");
    return rc == BK_ENOTFOUND
               ? bk_fail(rc, "remove: the key was not in the filter (nothing changed)")
               : rc;
}

/* The checks of a call that changes the whole filter. */
static int whole_check(const bk_filter *f, const char *what)
{
    bk_call_begin();
    if (!f)
        return bk_fail(BK_EINVAL, "%s: no filter", what);
    if (f->readonly)
        return bk_fail(BK_EREADONLY, "%s: the filter is mapped read-only", what);
    return BK_OK;
}

int bk_clear(bk_filter *f)
{
    const int rc = whole_check(f, "clear");
    if (rc != BK_OK)
        return rc;
    if (!f->ops->clear) /* a store kept elsewhere that cannot be emptied in place */
        return bk_fail(BK_ENOTSUP, "clear: this filter is kept elsewhere and cannot be emptied "
                                   "in place (drop it: bk_redis_drop)");
    return bk_done(f->ops->clear(f), "clear");
}

int bk_expire(bk_filter *f)
{
    const int rc = whole_check(f, "expire");
    return rc != BK_OK ? rc : f->ops->expire ? bk_done(f->ops->expire(f), "expire") : 0;
}

/* Every struct and field that crosses the ABI, for bk_abi_layout. */
#define ABI_TYPE(type)                                                                             \
    {                                                                                              \
#type, NULL, sizeof(type)                                                                  \
    }
#define ABI_FIELD(type, field)                                                                     \
    {                                                                                              \
#type, #field, offsetof(type, field)                                                       \
    }
static const struct abi_entry {
    const char *type, *field;
    size_t value;
} abi[] = {
    ABI_TYPE(bk_config),
    ABI_FIELD(bk_config, variant),
    ABI_FIELD(bk_config, capacity),
    ABI_FIELD(bk_config, fpr),
    ABI_FIELD(bk_config, growth),
    ABI_FIELD(bk_config, tightening),
    ABI_FIELD(bk_config, hash),
    ABI_FIELD(bk_config, layout),
    ABI_FIELD(bk_config, has_key),
    ABI_FIELD(bk_config, key),
    ABI_FIELD(bk_config, window_ms),
    ABI_FIELD(bk_config, generations),
    ABI_FIELD(bk_config, refresh),
    ABI_FIELD(bk_config, max_bytes),
    ABI_FIELD(bk_config, bits),
    ABI_FIELD(bk_config, hashes),
    ABI_FIELD(bk_config, more),
    ABI_FIELD(bk_config, struct_size),
    ABI_TYPE(bk_filter_stats),
    ABI_FIELD(bk_filter_stats, variant),
    ABI_FIELD(bk_filter_stats, hash),
    ABI_FIELD(bk_filter_stats, capacity),
    ABI_FIELD(bk_filter_stats, fpr),
    ABI_FIELD(bk_filter_stats, bits),
    ABI_FIELD(bk_filter_stats, bytes),
    ABI_FIELD(bk_filter_stats, k),
    ABI_FIELD(bk_filter_stats, keys),
    ABI_FIELD(bk_filter_stats, set_bits),
    ABI_FIELD(bk_filter_stats, fill),
    ABI_FIELD(bk_filter_stats, est_cardinality),
    ABI_FIELD(bk_filter_stats, est_fpr),
    ABI_FIELD(bk_filter_stats, slices),
    ABI_FIELD(bk_filter_stats, saturated),
    ABI_FIELD(bk_filter_stats, model_fpr),
    ABI_FIELD(bk_filter_stats, redated_from_ms),
    ABI_FIELD(bk_filter_stats, redated_to_ms),
    ABI_TYPE(bk_slice_stats),
    ABI_FIELD(bk_slice_stats, bits),
    ABI_FIELD(bk_slice_stats, bytes),
    ABI_FIELD(bk_slice_stats, k),
    ABI_FIELD(bk_slice_stats, capacity),
    ABI_FIELD(bk_slice_stats, fpr),
    ABI_FIELD(bk_slice_stats, keys),
    ABI_FIELD(bk_slice_stats, set_bits),
    ABI_FIELD(bk_slice_stats, fill),
    ABI_FIELD(bk_slice_stats, est_fpr),
    ABI_FIELD(bk_slice_stats, span_start_ms),
    ABI_FIELD(bk_slice_stats, span_end_ms),
    ABI_TYPE(bk_config_error),
    ABI_FIELD(bk_config_error, line),
    ABI_FIELD(bk_config_error, key),
    ABI_FIELD(bk_config_error, message),
    ABI_TYPE(bk_plan),
    ABI_FIELD(bk_plan, bits),
    ABI_FIELD(bk_plan, bytes),
    ABI_FIELD(bk_plan, k),
    ABI_FIELD(bk_plan, expected_fpr),
    ABI_FIELD(bk_plan, bits_per_key),
};

size_t bk_abi_layout(const char *type, const char *field)
{
    for (size_t i = 0; type && i < sizeof abi / sizeof *abi; i++)
        if (strcmp(abi[i].type, type) == 0 &&
            (field ? abi[i].field && strcmp(abi[i].field, field) == 0 : !abi[i].field))
            return abi[i].value;
    return (size_t)-1;
}

int bk_get_config(const bk_filter *f, bk_config *cfg)
{
    if (!f || !cfg)
        return bk_fail(BK_EINVAL, "get_config: no filter or no result pointer");
    *cfg = f->cfg;
    return BK_OK;
}

int bk_get_setting(const bk_filter *f, const char *key, char *buf, size_t buflen)
{
    if (!f)
        return bk_fail(BK_EINVAL, "get_setting: no filter");
    return bk_config_get(&f->cfg, key, buf, buflen);
}

/* The entry of a call on a configuration: BK_OK, or BK_EINVAL for a NULL
 * cfg or result (`what` names the call) or a cfg that is not valid (the
 * detail says which key, and why). */
static int config_call(const char *what, const bk_config *cfg, const void *out)
{
    bk_call_begin();
    if (!cfg || !out)
        return bk_fail(BK_EINVAL, "%s: no config or no result pointer", what);
    return bk_config_validate(cfg, NULL, 0) != BK_OK ? BK_EINVAL : BK_OK;
}

int bk_plan_config(const bk_config *cfg, bk_plan *out)
{
    if (config_call("plan", cfg, out) != BK_OK)
        return BK_EINVAL;
    return bk_done(bk_variant_for(cfg->variant)->plan(cfg, out), "plan");
}

int bk_plan_capacity(const bk_config *cfg, uint64_t *capacity, bk_plan *out)
{
    if (config_call("plan_capacity", cfg, capacity ? out : NULL) != BK_OK)
        return BK_EINVAL;
    if (!cfg->bits)
        return bk_fail(BK_EINVAL, "plan_capacity: the config pins no bits (bits=...)");
    const bk_cells cells = bk_variant_for(cfg->variant)->cells(cfg);
    const unsigned cell_bits = cells.bits, block = cells.block;
    bk_config fit = *cfg;
    fit.hashes = 0; /* the best k for the keys found */
    int rc = bk_capacity_fit(cfg->bits, cfg->fpr, block, &fit.capacity);
    if (rc == BK_OK)
        rc = bk_plan_array(&fit, cell_bits, out);
    if (rc == BK_OK)
        *capacity = fit.capacity;
    return bk_done(rc, "plan_capacity");
}

int bk_variant_removes(bk_variant v)
{
    const bk_variant_desc *d = bk_variant_for(v);
    return d && bk_desc_removes(d);
}

int bk_variant_grows(bk_variant v)
{
    const bk_variant_desc *d = bk_variant_for(v);
    return d && (d->max_slices > 1 || d->grows);
}

int bk_config_resolve(const bk_config *cfg, bk_config *out)
{
    if (config_call("config_resolve", cfg, out) != BK_OK)
        return BK_EINVAL;
    bk_config c = *cfg;
    const bk_variant_desc *d = bk_variant_for(c.variant);
    const int rc = d->resolve ? d->resolve(&c) : BK_OK;
    if (rc == BK_OK)
        *out = c;
    return bk_done(rc, "config_resolve");
}

int bk_copy(const bk_filter *f, bk_filter **out)
{
    bk_call_begin();
    if (out)
        *out = NULL;
    if (!f || !out)
        return bk_fail(BK_EINVAL, "copy: no filter or no result pointer");
    if (!bk_cells_in_memory(f))
        return bk_fail(BK_ENOTSUP, "copy: the filter lives on a server; bk_redis_pull makes a "
                                   "local copy");
    const bk_allocator a = bk_current_allocator();
    const uint32_t n = f->ops->slice_count(f);
    bk_slice_view *v = bk_mem_alloc(&a, n * sizeof *v);
    if (!v)
        return bk_fail(BK_ENOMEM, "copy: out of memory");
    uint32_t made = 0;
    int rc = BK_OK;
    for (; made < n; made++) {
        f->ops->slice_view(f, made, &v[made]);
        uint8_t *p =
            v[made].nbytes <= SIZE_MAX ? bk_payload_alloc(&a, (size_t)v[made].nbytes) : NULL;
        if (!p) {
            rc = bk_fail(BK_ENOMEM, "copy: out of memory for %llu bytes",
                         (unsigned long long)v[made].nbytes);
            break;
        }
        memcpy(p, v[made].data, (size_t)v[made].nbytes);
        v[made].data = p;
    }
    if (rc == BK_OK)
        rc = bk_variant_for(f->cfg.variant)->adopt(&f->cfg, &a, v, n, 0, out);
    if (rc != BK_OK)
        for (uint32_t i = 0; i < made; i++)
            bk_payload_free(&a, v[i].data, (size_t)v[i].nbytes);
    bk_mem_free(&a, v);
    return bk_done(rc, "copy");
}

/* Shared checks of merge and intersect: same variant, hash and key; the
 * variant then checks its slice shapes. */
int bk_equal(const bk_filter *a, const bk_filter *b)
{
    bk_call_begin();
    if (!a || !b)
        return bk_fail(BK_EINVAL, "equal: NULL filter");
    if (!bk_cells_in_memory(a) || !bk_cells_in_memory(b))
        return bk_fail(BK_ENOTSUP, "equal: a filter in Redis cannot be compared here; pull it "
                                   "into a local filter first (bk_redis_pull)");
    if (a == b)
        return 1;
    if (a->ops != b->ops || bk_config_diff(&a->cfg, &b->cfg) != NULL ||
        memcmp(a->cfg.key, b->cfg.key, sizeof a->cfg.key) != 0)
        return 0;
    const uint32_t n = a->ops->slice_count(a);
    if (n != b->ops->slice_count(b))
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        bk_slice_view va, vb;
        a->ops->slice_view(a, i, &va);
        b->ops->slice_view(b, i, &vb);
        /* (a window's span is its configuration's, compared above) */
        if (!bk_same_shape(&va, &vb) || va.nbytes != vb.nbytes || va.gen != vb.gen ||
            memcmp(va.data, vb.data, (size_t)va.nbytes) != 0)
            return 0;
    }
    return 1;
}

static int combine(bk_filter *dst, const bk_filter *src, int intersect)
{
    const char *what = intersect ? "intersect" : "merge";
    bk_call_begin();
    if (!dst || !src)
        return bk_fail(BK_EINVAL, "%s: NULL filter", what);
    if (dst->readonly)
        return bk_fail(BK_EREADONLY, "%s: destination is mapped read-only", what);
    if (!bk_cells_in_memory(dst) || !bk_cells_in_memory(src))
        return bk_fail(BK_ENOTSUP,
                       "%s: a filter in Redis cannot be combined here; pull it "
                       "into a local filter first (bk_redis_pull)",
                       what);
    if (dst->cfg.variant != src->cfg.variant)
        return bk_fail(BK_EINCOMPAT, "%s: variants differ (%s vs %s)", what,
                       bk_variant_name(dst->cfg.variant), bk_variant_name(src->cfg.variant));
    if (dst->cfg.hash != src->cfg.hash)
        return bk_fail(BK_EINCOMPAT, "%s: hash algorithms differ", what);
    if (memcmp(dst->cfg.key, src->cfg.key, sizeof dst->cfg.key) != 0)
        return bk_fail(BK_EINCOMPAT, "%s: hash keys differ", what);
    int (*op)(bk_filter *, const bk_filter *) = intersect ? dst->ops->intersect : dst->ops->merge;
    if (!op)
        return bk_fail(BK_ENOTSUP, "%s: not defined for %s filters", what,
                       bk_variant_name(dst->cfg.variant));
    bk_detail_clear(); /* the variant may say why */
    const int rc = op(dst, src);
    char why[256];
    return rc != BK_EINCOMPAT
               ? bk_done(rc, what)
               : bk_fail(rc, "%s: %s", what,
                         bk_detail_or("sizes differ (bits, probes or slices)", why, sizeof why));
}

int bk_merge(bk_filter *dst, const bk_filter *src)
{
    return combine(dst, src, 0);
}

int bk_intersect(bk_filter *dst, const bk_filter *src)
{
    return combine(dst, src, 1);
}
