/*
 * filter_impl.h - what a variant provides (internal): its operations table
 * (bk_filter_ops) with an optional table of performance hooks
 * (bk_filter_perf), its descriptor (bk_variant_desc: number, constructors,
 * planning, statistics), and the base struct every filter embeds first.
 *
 * Modelled on SQLite's sqlite3_io_methods, versioned as it is: a table says
 * its version, and a slot added later is read only from tables that have it.
 * Besides the variants, the Redis client (src/redis) builds its own tables
 * and hands them to bk_filter_new, which refuses a version it does not know.
 * Every object starts with a pointer to its methods, so a pointer to a
 * variant's struct is a pointer to bk_filter.
 * An operation a variant does not have is a NULL pointer, turned into
 * BK_ENOTSUP in one place (src/core/filter.c), never a stub in each variant.
 *
 * Methods receive the key's digest, computed once by src/core/filter.c; they never
 * see the key bytes.
 */
#ifndef BK_CORE_FILTER_IMPL_H
#define BK_CORE_FILTER_IMPL_H

#include <stdatomic.h>
#include <stddef.h>

#include "bloomkit.h"
#include "bloomkit_tools.h"
#include "../common/hash.h"
#include "../common/siphash.h"
#include "../common/sizing.h"
#include "store.h"

/* Keys hashed per call of a store's own batch path: src/redis pipelines
 * them, one round trip per chunk. */
#define BK_STORE_CHUNK 512

/* What adds changed, gathered by a batch and given to the filter's counts
 * once (shard_add / shard_end below) instead of one locked add per key:
 * bits set, and keys reported new. */
typedef struct bk_tally {
    uint64_t set, keys;
} bk_tally;

/* The version of the tables below this build reads and writes. A slot
 * added later goes at the end of its table with the next version number; the
 * core reads it only from a table whose version says it has it (as SQLite
 * reads xFetch only from sqlite3_io_methods of iVersion 3), so a table filled
 * in before the slot existed keeps working. */
#define BK_FILTER_OPS_VERSION  1
#define BK_FILTER_PERF_VERSION 1

/* The probes of a classic array a lookup's prefetch loads (of its k): an
 * absent key is found absent after 1 / (1 - fill) probes on average, at
 * most 2 below fill 1/2; a present key's later probes are loaded by the
 * lookup itself, running ahead on the predicted "set" (measured, a 20 MB
 * slice holding 2 * 10^6 keys, BF.MEXISTS of 10 absent items: 2.8-3.2 ->
 * 1.5-1.6 us a call, server time). */
#define BK_LOOKUP_LINES 2u

/* Optional ways to do what the operations of bk_filter_ops do, faster. None
 * changes an answer: a variant without this table (ops->perf NULL), or with
 * any slot NULL, gets the same results from the operations one key at a
 * time. Locking: every hook is called with no lock of the core held; a hook
 * takes what its variant's add and contains take, except where said. */
typedef struct bk_filter_perf {
    int version; /* BK_FILTER_PERF_VERSION */
    /* Hint: start loading the memory that add (all 1) or contains (all 0)
     * of hs[0 .. n) will touch (batch calls issue it for a group of keys
     * before the first is applied, so the cache misses overlap; one call a
     * group). A lookup in a classic array stops at a key's first clear
     * probe, so for all 0 only its first BK_LOOKUP_LINES probes are worth
     * loading. Reads only; may run beside any other call. */
    void (*prefetch)(const bk_filter *f, const bk_hash *hs, size_t n, int all);
    /* Batch paths for stores where one call per key is slow (a server round
     * trip): n digests in, one result per key out (as add or contains
     * return), BK_OK or a negative code (results of keys before the failure
     * stand). src/core/filter.c hands them at most BK_STORE_CHUNK digests at a
     * time. */
    int (*add_batch)(bk_filter *f, const bk_hash *hs, size_t n, int *results);
    int (*contains_batch)(const bk_filter *f, const bk_hash *hs, size_t n, int *results);
    /* Adds split across threads (bk_add_batch_mt, src/core/batch.c); all four or
     * none. shard_begin(f, n), on the calling thread, returns 1 when the
     * next n adds may be applied shard by shard: shard_of names the memory a
     * key's add writes (keys with one name write the same memory, keys with
     * different names disjoint memory; src/core/batch.c groups names into
     * shards), and none of the n adds can change the filter's shape (no
     * growth), so each shard's keys applied in input order by their own
     * thread get the answers of all keys applied in order. Then shard_add
     * applies one key (as add, but with no locking or growth; 0 or 1) from
     * any thread, counting what it changed into the caller's tally instead
     * of the filter's counts, and shard_end follows the last one, on the
     * thread that called shard_begin, with the sum of every tally: the
     * counts then take it at once (a snapshot read meanwhile lags by one
     * chunk). 0: apply in order on one thread, and shard_end is not called.
     * The lock rule: whatever shard_begin takes when it returns 1 (a
     * scalable chain's read lock, which holds growth off) is held across the
     * shard_adds and released by shard_end, on the same thread. */
    int (*shard_begin)(bk_filter *f, size_t n);
    uint64_t (*shard_of)(const bk_filter *f, const bk_hash *h);
    int (*shard_add)(bk_filter *f, const bk_hash *h, bk_tally *t);
    void (*shard_end)(bk_filter *f, const bk_tally *t);
} bk_filter_perf;

/* Where a filter's cells live (bk_filter_ops.store). */
#define BK_STORE_MEMORY 0 /* in this process: slice views carry data */
#define BK_STORE_REMOTE 1 /* elsewhere (Redis): save, copy and merge cannot read them */

/* What a filter does: the semantic operations, then the state persistence,
 * merging and statistics read, then the optional performance table. One
 * table per kind of store of a variant (in memory, a Redis client's, a
 * Redis module's); the variant's identity is its descriptor's
 * (bk_variant_desc, below). */
typedef struct bk_filter_ops {
    int version; /* BK_FILTER_OPS_VERSION */
    int store;   /* BK_STORE_MEMORY or BK_STORE_REMOTE */
    /* -- semantics: one key's digest, computed once by src/core/filter.c */
    /* 1 new, 0 (maybe) present, or a negative BK_E* code. A variant whose
     * add of a present key changes the filter (one that counts copies:
     * counting, cuckoo) makes it change nothing while f->add_once is set,
     * deciding under the lock its add takes (bk_set_add_once). */
    int (*add)(bk_filter *f, const bk_hash *h);
    /* 1 maybe present, 0 absent. */
    int (*contains)(const bk_filter *f, const bk_hash *h);
    /* BK_OK or BK_ENOTFOUND; NULL when the variant cannot remove. */
    int (*remove)(bk_filter *f, const bk_hash *h);
    /* BK_OK, or an error of a remote store (nothing or everything cleared).
     * NULL: a store that cannot be emptied in place (a module filter). */
    int (*clear)(bk_filter *f);
    /* dst |= src, for filters whose variant, hash and key already match;
     * BK_EINCOMPAT (nothing changed) when the slice shapes differ. NULL
     * when the variant cannot merge. */
    int (*merge)(bk_filter *dst, const bk_filter *src);
    /* dst &= src, same rules; NULL when the variant cannot intersect. */
    int (*intersect)(bk_filter *dst, const bk_filter *src);
    /* For variants that keep time: free what the clock has aged out
     * (bk_expire): 1 freed, 0 nothing to free, or a negative code (the
     * filter unchanged). NULL: never anything to free. */
    int (*expire)(bk_filter *f);
    /* For a store that hashes keys itself (a filter kept by the Redis
     * module is sent the keys): op BK_KEYS_ADD, BK_KEYS_CONTAINS or
     * BK_KEYS_REMOVE on keys[0 .. n), results[i] what add, contains or
     * remove give for key i, in order. BK_OK or a negative code (results of
     * keys not applied hold it). When set, src/core/filter.c and src/core/batch.c hand
     * the keys here instead of digests, and the store has no add, contains
     * or remove (NULL; it removes when its variant does). NULL: the store
     * takes digests. */
    int (*keys_op)(bk_filter *f, int op, const void *const *keys, const size_t *lens, size_t n,
                   int *results);
    /* Release everything, including f itself, with f->alloc; payloads that
     * were adopted as borrowed (mapped) are left alone. */
    void (*destroy)(bk_filter *f);
    /* -- state: the slices, for persistence, merging and bk_stats (which
     * derives every figure from the views and the descriptor's estimate) */
    uint32_t (*slice_count)(const bk_filter *f);
    void (*slice_view)(const bk_filter *f, uint32_t i, bk_slice_view *out);
    /* Optional: the group of slice i. The slices of one group are a chain
     * that every key meets; groups are alternatives a key meets one of (the
     * shards of a module filter), numbered 0, 1, ... in slice order, and
     * bk_stats gives their mean rate. NULL: one group. */
    uint32_t (*slice_group)(const bk_filter *f, uint32_t i);
    /* Optional: bring the figures slice_view reports up to date (a remote
     * store re-reads its counts). BK_OK or an error; NULL when views are
     * always current. */
    int (*refresh)(const bk_filter *f);
    /* Optional: the bytes of f's structures besides its slices' arrays
     * (bk_filter_stats.state_bytes) when it holds more than its own struct
     * (a window's chains). NULL: f->state_size. */
    uint64_t (*state_bytes)(const bk_filter *f);
    /* Offer slice i's array (i < slice_count) to move (bk_defrag), under
     * f's write lock: bk_own_move on the pointer that holds it. NULL: a
     * store whose arrays are elsewhere. */
    void (*defrag)(bk_filter *f, uint32_t i, bk_move_fn move, void *arg);
    /* -- speed: NULL, or a table of hooks that change no answer */
    const bk_filter_perf *perf;
} bk_filter_ops;

/* The first fields of a variant's tables: its in-memory operations
 * (bk_filter_ops; the slots it leaves out are NULL) and its perf hooks. */
#define BK_MEMORY_OPS .version = BK_FILTER_OPS_VERSION, .store = BK_STORE_MEMORY
#define BK_PERF_TABLE .version = BK_FILTER_PERF_VERSION

/* The perf hook `slot` of f, or NULL. */
#define BK_PERF(f, slot) ((f)->ops->perf ? (f)->ops->perf->slot : NULL)

#define BK_KEYS_ADD      0
#define BK_KEYS_CONTAINS 1
#define BK_KEYS_REMOVE   2

struct bk_filter {
    const bk_filter_ops *ops;
    bk_allocator alloc;            /* the allocator f was made with; frees with it */
    bk_config cfg;                 /* validated, has_key = 1 with the actual key */
    bk_hashkey hkey;               /* cfg.key as each hash takes it */
    int readonly;                  /* mapped read-only: every mutation is refused */
    int single_writer;             /* bk_set_single_writer: writing calls never overlap */
    int add_once;                  /* bk_set_add_once: an add of a key present changes nothing */
    bk_grow_check_fn grow_check;   /* bk_set_grow_check: the host's check before growth, or NULL */
    void *grow_arg;                /* its argument */
    bk_mapping *mapping;           /* non-NULL when payloads live in a file mapping */
    const bk_backing_ops *backing; /* what syncs and releases it (src/io), with it */
    void *rwlock;                  /* the pthread_rwlock_t bk_filter_new set up in the variant's
                                    * struct (bk_write_locked, bk_read_locked), or NULL */
    /* window: the last re-dating (bk_filter_stats.redated_from_ms, _to_ms) */
    _Atomic int64_t redate_from_ms, redate_to_ms;
    size_t state_size; /* the bytes bk_filter_new allocated for the variant's struct */
};

/* f's bk_filter_stats.state_bytes. */
static inline uint64_t bk_state_bytes(const bk_filter *f)
{
    return f->ops->state_bytes ? f->ops->state_bytes(f) : f->state_size;
}

/* A key is (NULL, 0) or (non-NULL, any length). */
static inline int bk_key_valid(const void *key, size_t len)
{
    return key != NULL || len == 0;
}

/* The digest of a key under f's hash and key. */
static inline void bk_filter_hash(const bk_filter *f, const void *key, size_t len, bk_hash *h)
{
    bk_hash_key(f->cfg.hash, &f->hkey, key, len, h);
}

/* bk_filter_hash of n keys (several per instruction where the CPU allows). */
static inline void bk_filter_hash_keys(const bk_filter *f, const void *const *keys,
                                       const size_t *lens, size_t n, bk_hash *hs)
{
    bk_hash_keys(f->cfg.hash, &f->hkey, keys, lens, n, hs);
}

/* Set up the base part of a variant's struct. */
static inline void bk_filter_base_init(bk_filter *f, const bk_filter_ops *ops, const bk_config *cfg,
                                       const bk_allocator *a)
{
    f->ops = ops;
    f->alloc = *a;
    f->cfg = *cfg;
    bk_hashkey_init(&f->hkey, cfg->key);
    f->readonly = 0;
    f->single_writer = 0;
    f->add_once = 0;
    f->grow_check = NULL;
    f->grow_arg = NULL;
    f->rwlock = NULL;
    f->mapping = NULL;
    f->backing = NULL;
    atomic_init(&f->redate_from_ms, 0);
    atomic_init(&f->redate_to_ms, 0);
}

/* The ceilings on a filter's arrays, shared by all of them (a window's
 * generations draw on one): its payload memory (config max_bytes) and the
 * number of arrays a file can hold. An array is reserved before it is
 * allocated and given back when it is freed. */
typedef struct bk_budget {
    _Atomic uint64_t used;   /* bytes */
    _Atomic uint32_t arrays; /* slices */
    uint64_t max;            /* 0: no ceiling on bytes */
    uint32_t max_arrays;     /* 0: no ceiling on slices */
} bk_budget;

/* BK_EFULL with its detail: growing to `after` bytes would pass max (used
 * in use), or, when max_arrays is not 0, the slices a file holds are all
 * taken. For every store that enforces the ceilings (a Redis script too). */
int bk_full_error(uint64_t after, uint64_t max, uint64_t used, uint32_t max_arrays);

/* The check before a structure that grows by itself (RedisBloom's chain and
 * cuckoo filter) adds `next` bytes to the `used` it holds, for the filter
 * (a const bk_filter *) that holds it: the host's check first
 * (bk_set_grow_check: 0 or what it refuses with), then 0, or bk_full_error
 * when that would pass its max_bytes or no array can be made (next 0)
 * under a max_bytes. The one budget check of a structure's growth (a
 * bk_rb_grow's check, src/common/grow.h). */
int bk_max_bytes_check(void *filter, uint64_t used, uint64_t next);
/* Reserve one array of n bytes: BK_OK, or BK_EFULL (nothing reserved,
 * detail set: the limit and what growing needed). Thread-safe. */
int bk_budget_take(bk_budget *b, uint64_t n);
/* Give back one array of n bytes (freed). */
void bk_budget_give(bk_budget *b, uint64_t n);
/* Count an array of n bytes that exists already (adopted from a file), even
 * past the ceilings. */
void bk_budget_count(bk_budget *b, uint64_t n);

/* A variant's struct of `size` bytes (its bk_filter first): zeroed, the base
 * set up, allocated with a (free it with bk_mem_free(a, ...)), and when lock
 * is not 0 the pthread_rwlock_t that many bytes into it initialised (destroy
 * it before the free). BK_OK (*out set), BK_ENOMEM, BK_ESYS, BK_EINVAL (a
 * table of a version this build does not know; nothing kept). The first
 * step of every constructor. */
int bk_filter_new(size_t size, size_t lock, const bk_filter_ops *ops, const bk_config *cfg,
                  const bk_allocator *a, void *out);

/* For a variant whose writers take turns on the read-write lock
 * bk_filter_new set up in its struct (counting, cuckoo): op under the write
 * lock, or under the read lock (lookups share it). */
int bk_write_locked(bk_filter *f, int (*op)(bk_filter *, const bk_hash *), const bk_hash *h);
int bk_read_locked(const bk_filter *f, int (*op)(const bk_filter *, const bk_hash *),
                   const bk_hash *h);
/* destroy of such a variant when it is one payload array: the array (of
 * nbytes; a mapping's when borrowed, then left to it), the lock, the
 * struct, with the allocator the filter was made with. */
void bk_filter_free_array(bk_filter *f, void *data, uint64_t nbytes, int borrowed);
/* The entry points of such a variant, each one line: name runs the file's
 * unlocked op under the lock (BK_WRITE_LOCKED: an add or remove;
 * BK_CLEAR_LOCKED: clear; BK_READ_LOCKED: a lookup). No ';' after them. */
#define BK_WRITE_LOCKED(name, op)                                                                  \
    static int name(bk_filter *f, const bk_hash *h)                                                \
    {                                                                                              \
        return bk_write_locked(f, op, h);                                                          \
    }
#define BK_CLEAR_LOCKED(name, op)                                                                  \
    static int name(bk_filter *f)                                                                  \
    {                                                                                              \
        return bk_write_locked(f, op, NULL);                                                       \
    }
#define BK_READ_LOCKED(name, op)                                                                   \
    static int name(const bk_filter *f, const bk_hash *h)                                          \
    {                                                                                              \
        return bk_read_locked(f, op, h);                                                           \
    }

/* slice_count of a variant that is one array (standard, counting). */
static inline uint32_t bk_one_slice(const bk_filter *f)
{
    (void)f;
    return 1;
}

/* 1 when f's cells are in this process's memory (its slice views carry
 * data); 0 for a store that keeps them elsewhere (a Redis filter), which
 * save, copy and merge cannot read. */
static inline int bk_cells_in_memory(const bk_filter *f)
{
    return f->ops->store == BK_STORE_MEMORY;
}

/* Variant constructor: cfg is validated and carries the key (has_key = 1). */
typedef int (*bk_filter_create_fn)(const bk_config *cfg, const bk_allocator *a, bk_filter **out);

/* Variant constructor over existing payloads (a loaded or mapped file): n
 * slice views whose shapes the caller has validated. On success the filter
 * owns the payloads (frees them with a) unless `borrowed`, in which case they
 * belong to a mapping that outlives the filter. On error nothing is taken. */
typedef int (*bk_filter_adopt_fn)(const bk_config *cfg, const bk_allocator *a,
                                  const bk_slice_view *slices, uint32_t n, int borrowed,
                                  bk_filter **out);

/* The plan of the filter create would make from cfg (validated): its
 * first (or only) array's cells, bytes, k and rate (bk_plan_config). */
typedef int (*bk_filter_plan_fn)(const bk_config *cfg, bk_plan *out);

/* What the cells of one slice say, by the variant's own model (bk_stats,
 * bk_slice_info). */
typedef struct bk_slice_estimate {
    double keys;  /* distinct keys the cells suggest */
    double rate;  /* false-positive rate the cells give now */
    double model; /* false-positive rate the model gives for v->keys keys */
    double sized; /* the rate the slice was made for */
} bk_slice_estimate;

/* The estimates of slice v of a filter of config cfg. *steps, when not
 * NULL, caps the work of series that converge slowly (shared by every slice
 * of one bk_stats call; see bk_rate_for_within). */
typedef void (*bk_slice_estimate_fn)(const bk_config *cfg, const bk_slice_view *v, uint64_t *steps,
                                     bk_slice_estimate *out);

/* The cells of a Bloom variant's arrays: bits cells, in 64-byte blocks
 * when cfg's layout is blocked, counters or not. */
static inline bk_cells bk_bloom_cells(const bk_config *cfg, unsigned bits, unsigned counters)
{
    const bk_cells c = {bits, bk_block_cells(cfg->layout, bits), counters};
    return c;
}

/* A Bloom filter's slice by the Bloom formulas (src/common/sizing.c): the
 * estimate of every variant whose slices are bit or counter arrays probed k
 * times. */
void bk_bloom_estimate(const bk_config *cfg, const bk_slice_view *v, uint64_t *steps,
                       bk_slice_estimate *out);

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

/* RedisBloom's chunked dump of a variant (bk_variant_desc.chunked): the
 * header, the chunk after iterator it, a chunk loaded, a filter made from
 * a header (bloomkit_redisbloom.h's bk_chunked_* say what each answers). */
typedef struct bk_chunked_ops {
    size_t (*header)(const bk_filter *f, void *buf, size_t cap);
    void (*next)(const bk_filter *f, long long it, const uint8_t **data, size_t *len,
                 long long *next);
    int (*load)(bk_filter *f, long long it, const void *data, size_t len);
    int (*make)(const void *header, size_t len, unsigned flags, uint64_t max_bytes,
                bk_filter **out);
} bk_chunked_ops;

/* A configuration key as one variant takes it (bk_variant_desc.keys). */
typedef struct bk_variant_key {
    const char *key;  /* a key of the configuration table (src/core/config.c) */
    const char *def;  /* NULL, or its default for this variant when not the table's */
    const char *note; /* NULL, or what it means here, for the key's help */
} bk_variant_key;

/* The configuration keys of a variant that is one Bloom array (standard,
 * counting): its rate, how it grows and tightens as a chain's slice, its
 * layout, and a pinned shape (src/core/config.c). Such a variant names it
 * as its own: #define NAME_keys bk_bloom_keys. */
extern const bk_variant_key bk_bloom_keys[];

/* A variant, as it declares itself (in its own folder, as bk_<name>_desc)
 * and as the registry (src/core/registry.c, from BK_VARIANT_LIST) lists it:
 * everything the rest of the library knows of it. */
typedef struct bk_variant_desc {
    bk_variant variant; /* its number (its name: BK_VARIANT_LIST, bk_variant_name) */
    /* What it is, for the help of the key "variant": its name, and in
     * parentheses what sets it apart ("counting (4-bit counters, removal)"). */
    const char *summary;
    /* The configuration keys it takes beyond those every variant takes
     * (variant, capacity, hash, key, input), and any of those it gives a
     * note or default of its own; ended by a row of key NULL. A text that
     * states another key for it is refused, and formatting leaves it out. */
    const bk_variant_key *keys;
    /* The figures (src/core/figures.c) it reports beyond every variant's,
     * space-separated ("saturated"); NULL for none. */
    const char *figures;
    /* Non-NULL when hash=murmur, RedisBloom's unkeyed hash, is its (for its
     * data): the form its digest takes under cfg (the shared layer computes
     * it: no variant hashes). */
    bk_murmur_form (*murmur)(const bk_config *cfg);
    const bk_filter_ops *ops;                /* its in-memory operations */
    bk_filter_create_fn create;              /* empty, from a validated config */
    bk_filter_adopt_fn adopt;                /* over existing payloads (src/io) */
    bk_filter_plan_fn plan;                  /* bk_plan_config */
    bk_slice_estimate_fn estimate;           /* bk_stats' per-slice figures */
    uint32_t max_slices;                     /* 1, or the limit of a chain */
    bk_cells (*cells)(const bk_config *cfg); /* its payload's cells */
    /* Optional: record in *cfg what the filter chooses for it, the keys
     * left at 0 that mean "the filter chooses" (cuckoo: fingerprint and
     * bucket); the configuration create then keeps (bk_config_resolve).
     * BK_OK or an error of cfg's (BK_ECONFIG, BK_ERANGE: detail set). NULL:
     * nothing to choose. */
    int (*resolve)(bk_config *cfg);
    /* Optional: the capacity bk_stats reports, when it is not the sum of
     * the slices' (a window reports the capacity of one window). */
    uint64_t (*capacity)(const bk_filter *f, uint64_t slices_sum);
    /* Optional, for a variant whose arrays are chains that grow (scalable,
     * and a window's generations): slice i's shape (m, k, block, capacity,
     * fpr, nbytes; a window's span the length of its generations' spans, ms;
     * counts and data zero) and its limit, as this variant lays them out
     * with its slices sized by `rule` (bk_size_slice). BK_OK, or BK_ERANGE
     * (no slice i). NULL: the variant is one array. */
    int (*chain_slice)(const bk_config *cfg, uint32_t i, bk_slice_rule rule, bk_slice_view *out,
                       bk_slice_limit *limit);
    /* 1: its slice views carry a word of the variant's own in gen (a
     * RedisBloom chain's n2), which files keep and its adopt checks. */
    int own_words;
    /* 1: it grows as keys come though it is one array (a table that
     * doubles); a variant of more than one slice grows too (bk_variant_grows). */
    int grows;
    /* Optional (a variant bounded by max_bytes): the payload bytes a filter
     * of cfg takes when made, before any key; 0 when cfg cannot be sized
     * (create says why). bk_new refuses a max_bytes below it as a
     * configuration error that says what fits, before anything is made. */
    uint64_t (*first_bytes)(const bk_config *cfg);
    /* Optional operations of the variants that have them; the public calls
     * (src/core/optional.c) answer BK_ENOTSUP where a slot is NULL, and run
     * a slot under the filter's lock (the read lock for a const one). */
    /* 1: its growth asks the host (bk_set_grow_check) through
     * bk_max_bytes_check. */
    int host_grow;
    /* bk_count: the copies of the key's digest the filter holds. */
    uint64_t (*count)(const bk_filter *f, const bk_hash *h);
    /* bk_compact: BK_OK. */
    int (*compact)(bk_filter *f);
    /* RedisBloom's chunked dump (bloomkit_redisbloom.h: bk_chunked_*). */
    const struct bk_chunked_ops *chunked;
} bk_variant_desc;

/* The fields of a descriptor its variant's names give, written once: its
 * number and summary, and its parts named after it in its folder
 * (<name>_keys, <name>_ops, <name>_cells; bk_<name>_create, _adopt, _plan).
 * A descriptor starts with it: { BK_DESC_NAMED(STANDARD, standard, "..."), ... }. */
#define BK_DESC_NAMED(NAME, name, summary_)                                                        \
    .variant = BK_VARIANT_##NAME, .summary = summary_, .keys = name##_keys, .ops = &name##_ops,    \
    .create = bk_##name##_create, .adopt = bk_##name##_adopt, .plan = bk_##name##_plan,            \
    .cells = name##_cells

/* Every variant's descriptor, bk_<name>_desc, defined in its own folder
 * (the variants of BK_VARIANT_LIST). */
#define BK_DESC_DECLARE_(NAME, name, number) extern const bk_variant_desc bk_##name##_desc;
BK_VARIANT_LIST(BK_DESC_DECLARE_)
#undef BK_DESC_DECLARE_

/* The descriptor of variant v; NULL for an unknown one. */
const bk_variant_desc *bk_variant_for(bk_variant v);
/* One past the highest variant number: bk_variant_for(v) for v below it
 * (NULL at a number no variant has). */
unsigned bk_variant_count(void);

/* Slice i of a chain of cfg's variant (its descriptor's chain_slice): for
 * another store of the same chain (src/redis/lua), which lays out its
 * slices exactly as the variant does without reaching into it. BK_OK,
 * BK_ERANGE (no slice i), BK_ENOTSUP (a variant of one array). */
int bk_chain_slice(const bk_config *cfg, uint32_t i, bk_slice_rule rule, bk_slice_view *out,
                   bk_slice_limit *limit);

/* The rule that sized slices[0 .. n) of a chain of cfg's variant:
 * BK_SLICE_AVERAGE when its first slices are as 0.1.0 sized them and not as
 * this version does (a chain loaded from a file of 0.1.0, which then goes
 * on growing as it did, and a Redis copy of it sizes its slices alike),
 * else BK_SLICE_HOLDS (also for a variant of one array). Two slices tell
 * the rules apart; later ones would cost a blocked chain's load a sizing
 * search each. No error. */
bk_slice_rule bk_chain_rule(const bk_config *cfg, const bk_slice_view *slices, uint32_t n);

/* 1 when the variant can remove keys: its operations have remove. */
static inline int bk_desc_removes(const bk_variant_desc *d)
{
    return d->ops->remove != NULL;
}

#endif
