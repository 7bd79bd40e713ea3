/*
 * held.c - what INFO bloomkit says each value type holds: keys and bytes
 * (the bytes MEMORY USAGE reports, key names aside), kept as values are
 * made, change and go, so that INFO costs the same however many keys there
 * are. A bloomkit value remembers what it was counted at (bkm_value_recount);
 * a RedisBloom value is counted when it is made or loaded, by the change a
 * write makes (bkm_held_before / _after), and when it is freed.
 *
 * The bytes are what the server's allocator hands out for the value's
 * arrays, not what they ask for: its size classes round a 1 MiB + 72 bytes
 * request up to 1.25 MiB. MEMORY USAGE and INFO model jemalloc's classes
 * (Redis's and Valkey's default allocator, Debian's build too) when the
 * server's allocator has them (asked at load: one that hands out what is
 * asked is counted so), so they stay near what used_memory grows by. A bloomkit filter's array is
 * its payload plus the library's alignment (BK_BLOCK_BYTES and a pointer); a RedisBloom value's
 * arrays are allocated as they are (its own constructors').
 *
 * A value can be freed on another thread (FLUSHALL ASYNC frees a whole
 * database in the server's background thread): the sums are atomic and the
 * list of changed values has a lock.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#include "module.h"
#include "rb.h"

static struct {
    _Atomic long long keys, bytes;
} held[3]; /* BKM_BLOOMKIT, BKM_RBCHAIN, BKM_RBCUCKOO */

/* the types' names (TYPE answers them) in lower case, without the dashes */
static const char *const names[3] = {"bloomkit0", "mbbloom", "mbbloomcf"};

/* A RedisBloom structure's own state besides its arrays: the library's
 * bk_filter and the variant's fields, a few hundred bytes. */
#define RB_STRUCT 512

/* 1 when the server's allocator has jemalloc's size classes, asked once at
 * load (bkm_alloc_probe); 0: it hands out about what is asked (glibc's
 * malloc, or a sanitizer's that a test preloads), rounded to 16 bytes. */
static int classes = 1;

void bkm_alloc_probe(void)
{
    /* 40 KiB + 1: jemalloc's next class is 48 KiB, an exact allocator's
     * block a few bytes more than asked */
    void *p = RedisModule_TryAlloc(40961);
    if (p) {
        classes = RedisModule_MallocSize(p) >= 49152;
        RedisModule_Free(p);
    }
}

size_t bkm_alloc_class(uint64_t n)
{
    if (n <= 128 || !classes)
        return (size_t)((n + 15) & ~(uint64_t)15);
    unsigned lg = 63;
    while (!((n - 1) >> lg & 1))
        lg--; /* 2^lg < n <= 2^(lg + 1): four classes in that doubling */
    const uint64_t step = (uint64_t)1 << (lg - 2);
    return (size_t)((n + step - 1) & ~(step - 1));
}

static size_t array_class(uint64_t bytes)
{
    return bkm_alloc_class(bytes + BK_BLOCK_BYTES + sizeof(void *));
}

size_t bkm_filter_usage(const bk_filter *f)
{
    bk_filter_stats st; /* held: a loaded table is not checked for it */
    if (bk_stats_held(f, &st, sizeof st) != BK_OK)
        return 0;
    size_t total = bkm_alloc_class(st.state_bytes);
    for (uint32_t i = 0; i < st.slices; i++) {
        bk_slice_stats s;
        if (bk_slice_held(f, i, &s, sizeof s) == BK_OK)
            total += array_class(s.bytes);
    }
    return total;
}

uint32_t bkm_rb_size(bkm_kind kind, const bk_filter *v, uint64_t *bytes, uint64_t *items)
{
    if (kind == BKM_RBCHAIN) {
        bk_rbchain_info in;
        bk_rbchain_info_of(v, &in);
        *bytes = in.bytes;
        *items = in.size;
        return in.links;
    }
    bk_rbcuckoo_info in;
    bk_rbcuckoo_info_of(v, &in);
    *bytes = in.bytes;
    *items = in.items;
    return in.filters;
}

/* The bytes of the arrays from .. n - 1 of RedisBloom value v (a chain's
 * links, a cuckoo filter's sub-filters); *n their count. */
static size_t rb_arrays(bkm_kind kind, const bk_filter *v, uint32_t from, uint32_t *n)
{
    size_t total = 0;
    if (kind == BKM_RBCHAIN) {
        bk_rbchain_info in;
        bk_rbchain_info_of(v, &in);
        *n = in.links;
        for (uint32_t i = from; i < in.links; i++) {
            bk_rbchain_link l;
            if (bk_rbchain_link_of(v, i, &l) == BK_OK)
                total += bkm_alloc_class(l.bytes);
        }
        return total;
    }
    bk_rbcuckoo_info in;
    bk_rbcuckoo_info_of(v, &in);
    *n = in.filters;
    for (uint32_t i = from; i < in.filters; i++) {
        uint8_t *slots;
        uint64_t buckets;
        bk_rbcuckoo_slots(v, i, &slots, &buckets);
        total += bkm_alloc_class(buckets * in.bucket_size);
    }
    return total;
}

/* The bytes of its table of n arrays. */
static size_t rb_table(bkm_kind kind, uint32_t n)
{
    return kind == BKM_RBCHAIN ? bkm_alloc_class((uint64_t)n * sizeof(bk_rbchain_link))
                               : (size_t)n * 16;
}

/* Its number of arrays (O(1)). */
static uint32_t rb_count(bkm_kind kind, const bk_filter *v)
{
    uint64_t bytes, items;
    return bkm_rb_size(kind, v, &bytes, &items);
}

size_t bkm_rb_usage(bkm_kind kind, const bk_filter *v)
{
    uint32_t n;
    const size_t arrays = rb_arrays(kind, v, 0, &n);
    return RB_STRUCT + rb_table(kind, n) + arrays;
}

void bkm_held_add(bkm_kind kind, long long keys, long long bytes)
{
    if (kind < BKM_BLOOMKIT || kind > BKM_RBCUCKOO)
        return;
    atomic_fetch_add_explicit(&held[kind - BKM_BLOOMKIT].keys, keys, memory_order_relaxed);
    atomic_fetch_add_explicit(&held[kind - BKM_BLOOMKIT].bytes, bytes, memory_order_relaxed);
}

size_t bkm_value_usage(const bkm_value *v)
{
    return bkm_alloc_class(sizeof *v) + bkm_filter_usage(v->f) +
           (v->dump ? bkm_alloc_class(v->dump_len) : 0);
}

/* bloomkit values changed since INFO last counted them */
static bkm_value *dirty;
static pthread_mutex_t dirty_lock = PTHREAD_MUTEX_INITIALIZER;

void bkm_value_recount(bkm_value *v)
{
    const size_t now = bkm_value_usage(v);
    bkm_held_add(BKM_BLOOMKIT, 0, (long long)now - (long long)v->counted);
    v->counted = now;
}

void bkm_value_dirty(bkm_value *v)
{
    /* listed already: nothing to take the lock for (only the main thread
     * lists a value, and the background thread unlists only values no key
     * holds any more, which no write reaches) */
    if (v->changed.in)
        return;
    pthread_mutex_lock(&dirty_lock);
    bkm_list_add(&dirty, v, offsetof(bkm_value, changed));
    pthread_mutex_unlock(&dirty_lock);
}

void bkm_value_uncount(bkm_value *v)
{
    pthread_mutex_lock(&dirty_lock); /* after INFO's recount of it, if one runs */
    bkm_list_remove(&dirty, v, offsetof(bkm_value, changed));
    const long long counted = (long long)v->counted;
    pthread_mutex_unlock(&dirty_lock);
    bkm_held_add(BKM_BLOOMKIT, -1, -counted);
}

/* The kind of an open key holding one of RedisBloom's types, else BKM_OTHER. */
static bkm_kind rb_kind(RedisModuleKey *key)
{
    if (RedisModule_KeyType(key) != REDISMODULE_KEYTYPE_MODULE)
        return BKM_OTHER;
    const RedisModuleType *t = RedisModule_ModuleTypeGetType(key);
    return t == bkm_rbchain_type ? BKM_RBCHAIN : t == bkm_rbcuckoo_type ? BKM_RBCUCKOO : BKM_OTHER;
}

long long bkm_held_before(RedisModuleKey *key, int all)
{
    const bkm_kind k = rb_kind(key);
    if (k != BKM_RBCHAIN && k != BKM_RBCUCKOO)
        return -1;
    const bk_filter *v = RedisModule_ModuleTypeGetValue(key);
    return all ? (long long)bkm_rb_usage(k, v) : (long long)rb_count(k, v);
}

void bkm_held_after(RedisModuleKey *key, long long before, int all)
{
    const bkm_kind k = rb_kind(key);
    if (before < 0 || (k != BKM_RBCHAIN && k != BKM_RBCUCKOO))
        return;
    const bk_filter *v = RedisModule_ModuleTypeGetValue(key);
    if (all) {
        bkm_held_add(k, 0, (long long)bkm_rb_usage(k, v) - before);
        return;
    }
    /* adds only append arrays: count the new ones (none: nothing to do) */
    const uint32_t was = (uint32_t)before;
    if (rb_count(k, v) == was)
        return;
    uint32_t n;
    const size_t added = rb_arrays(k, v, was, &n);
    bkm_held_add(k, 0, (long long)(added + rb_table(k, n)) - (long long)rb_table(k, was));
}

void bkm_held_info(RedisModuleInfoCtx *ctx, int for_crash_report)
{
    if (!for_crash_report) { /* what changed since the last INFO: each counted once */
        pthread_mutex_lock(&dirty_lock);
        while (dirty) {
            bkm_value *v = dirty;
            bkm_list_remove(&dirty, v, offsetof(bkm_value, changed));
            bkm_value_recount(v);
        }
        pthread_mutex_unlock(&dirty_lock);
    }
    for (int i = 0; i < 3; i++) {
        char field[32];
        const long long keys = atomic_load_explicit(&held[i].keys, memory_order_relaxed),
                        bytes = atomic_load_explicit(&held[i].bytes, memory_order_relaxed);
        snprintf(field, sizeof field, "%s_keys", names[i]);
        RedisModule_InfoAddFieldULongLong(ctx, field, (unsigned long long)(keys > 0 ? keys : 0));
        snprintf(field, sizeof field, "%s_bytes", names[i]);
        RedisModule_InfoAddFieldULongLong(ctx, field, (unsigned long long)(bytes > 0 ? bytes : 0));
    }
}
