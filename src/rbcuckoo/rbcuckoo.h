/*
 * rbcuckoo.h - RedisBloom's cuckoo filter (internal): the struct behind
 * bk_rbcuckoo (bloomkit_redisbloom.h) and what its files share.
 *   rbcuckoo.c         making it, its figures, and freeing it
 *   insert.c           lookups, counts, inserts with eviction and undo, growth
 *   compact.c          deletes and compaction
 *   rbcuckoo_image.c   the SCANDUMP header and chunks, and LOADCHUNK
 *   rbcuckoo_filter.c  the filter as a bk_filter: the variant rbcuckoo
 */
#ifndef BK_RBCUCKOO_RBCUCKOO_H
#define BK_RBCUCKOO_RBCUCKOO_H

#include <stdint.h>

#include "bloomkit_redisbloom.h"
#include "../common/grow.h"
#include "../common/hash.h"

typedef struct bk_rbcuckoo bk_rbcuckoo;

/* Flags of an add. */
#define BK_RB_NX 1u /* add only when the item is not present (CF.ADDNX) */

/* The structure's own calls, which the filter (rb*_filter.c) drives and
 * the tests and fuzzers reach directly. Memory from bk_set_allocator's
 * allocator; not thread-safe (the filter locks). */

/* A new filter as CF.RESERVE makes it: capacity / bucket_size buckets
 * rounded up to a power of two (at least 1), expansion rounded up to a power
 * of two (0 stays 0: never grows). BK_OK, BK_EINVAL (out NULL, bucket_size
 * outside 1 .. 255, max_iterations outside 1 .. 65535, expansion over
 * 32768), BK_ERANGE (too many buckets), BK_EFULL (over max_bytes),
 * BK_ENOMEM. */
int bk_rbcuckoo_new(uint64_t capacity, unsigned bucket_size, unsigned max_iterations,
                    unsigned expansion, uint64_t max_bytes, bk_rbcuckoo **out);

/* A zero-filled filter from its fields (info's buckets, items, deletes,
 * filters, bucket_size, max_iterations, expansion; bytes ignored), sub-filter
 * i with counts[i] buckets, or when counts is NULL buckets * expansion^i.
 * Without flags only what a loader must refuse is refused (no sub-filter, a
 * bucket count or bucket size of 0, more than BK_RBCUCKOO_FILTERS_MAX
 * sub-filters, one over BK_RBCUCKOO_BUCKETS_MAX buckets); BK_RB_STRICT adds
 * what CF.LOADCHUNK's header check refuses, and a counts[i] other than
 * buckets * expansion^i (the size that header gives sub-filter i). BK_OK, BK_EINVAL (detail),
 * BK_EFULL (over max_bytes), BK_ENOMEM. */
int bk_rbcuckoo_from(const bk_rbcuckoo_info *info, const uint64_t *counts, unsigned flags,
                     uint64_t max_bytes, bk_rbcuckoo **out);

/* Free c (NULL ignored). */
void bk_rbcuckoo_free(bk_rbcuckoo *c);

/* CF.ADD, or with flags BK_RB_NX CF.ADDNX, of one item: 1 inserted, 0
 * (BK_RB_NX only) already present, BK_EFULL (no room and expansion 0),
 * BK_ENOMEM (the next sub-filter cannot be made), or what grow's check
 * refused with (grow may be NULL); nothing changed but on 1. */
int bk_rbcuckoo_add(bk_rbcuckoo *c, const void *item, size_t len, unsigned flags,
                    const bk_rb_grow *grow);

/* CF.EXISTS (1 or 0) and CF.COUNT (RedisBloom's estimate: both buckets'
 * copies of the fingerprint in every sub-filter, a bucket counted twice
 * when the two are one). */
int bk_rbcuckoo_exists(const bk_rbcuckoo *c, const void *item, size_t len);
uint64_t bk_rbcuckoo_count(const bk_rbcuckoo *c, const void *item, size_t len);

/* CF.DEL: 1 a copy of the fingerprint removed (then, past 10% deletes in a
 * filter of several sub-filters, a compaction), 0 none found. */
int bk_rbcuckoo_remove(bk_rbcuckoo *c, const void *item, size_t len);

/* CF.COMPACT (stop_on_failure 0), or the compaction a delete runs (1): move
 * fingerprints of newer sub-filters into older ones, drop the newest while
 * it empties, and reset deletes to 0. */
void bk_rbcuckoo_compact(bk_rbcuckoo *c, int stop_on_failure);

/* The filter's figures; sub-filter i's slots (*data, *buckets buckets of
 * bucket_size bytes; into c, valid until the next write): BK_OK or
 * BK_ERANGE. */
void bk_rc_info(const bk_rbcuckoo *c, bk_rbcuckoo_info *out);
int bk_rc_sub(const bk_rbcuckoo *c, uint32_t i, uint8_t **data, uint64_t *buckets);

/* The filter over c and the structure a filter holds, then the dump by
 * chunks: as rbchain.h's for a chain (CF.SCANDUMP, CF.LOADCHUNK; a 38-byte
 * header). */
int bk_filter_of_rbcuckoo(bk_rbcuckoo *c, unsigned flags, bk_filter **out);
bk_rbcuckoo *bk_filter_rbcuckoo(bk_filter *f);
int bk_rbcuckoo_header_read(const void *buf, size_t len, uint64_t max_bytes, bk_rbcuckoo **out);
size_t bk_rbcuckoo_header(const bk_rbcuckoo *c, void *buf, size_t cap);
int bk_rbcuckoo_load_chunk(bk_rbcuckoo *c, long long p, const void *data, size_t len);
void bk_rbcuckoo_chunk(const bk_rbcuckoo *c, long long p, const uint8_t **data, size_t *len,
                       long long *next);

/* One sub-filter: n buckets of the filter's bucket size, 8-bit slots, 0
 * an empty slot. */
typedef struct rc_sub {
    uint64_t n;
    uint8_t *slots;
    int own; /* who frees slots: BK_OWN_* (alloc.h) */
} rc_sub;

struct bk_rbcuckoo {
    bk_allocator alloc;
    uint64_t buckets, items, deletes;
    uint32_t filters; /* sub-filters in use */
    /* The most sub-filters it may grow to (a variant's filter: what a
     * bloomkit file or key holds, BK_SLICES_MAX); 0: BK_RBCUCKOO_FILTERS_MAX,
     * what RedisBloom's encoding holds. An add that needs a sub-filter past
     * it fails with BK_EFULL, the filter unchanged. */
    uint32_t max_filters;
    unsigned bucket_size, max_iterations, expansion;
    uint32_t cap; /* room in subs[] */
    rc_sub *subs; /* oldest first */
    /* The hash: NULL, RedisBloom's MurmurHash64A (seed 0); else the keyed
     * hash alg under *hkey, the key of the filter that holds this one
     * (variant rbcuckoo, src/rbcuckoo/variant.c), its h1 the 64 bits. */
    const bk_hashkey *hkey;
    bk_hash_alg alg;
    /* 1: new sub-filters are filter payloads (bk_payload_alloc), as in a
     * variant's filter; 0: bk_mem_zeroed. */
    int payloads;
};

/* RedisBloom's multiplier of a fingerprint in its alternate index. */
#define RC_MUL UINT64_C(0x5bd1e995)

/* An item's fingerprint and its two indices (mod a sub-filter's n). */
typedef struct rc_key {
    unsigned fp;
    uint64_t i1, i2;
} rc_key;
rc_key bk_rc_key(uint64_t h);
/* The key of an item as filter c hashes it. */
rc_key bk_rc_key_of(const bk_rbcuckoo *c, const void *item, size_t len);

/* What bk_rbcuckoo_exists, _count, _add and _remove answer for an item of
 * key k. */
int bk_rc_exists(const bk_rbcuckoo *c, const rc_key *k);
uint64_t bk_rc_count(const bk_rbcuckoo *c, const rc_key *k);
int bk_rc_add(bk_rbcuckoo *c, const rc_key *k, unsigned flags, const bk_rb_grow *grow);
int bk_rc_remove(bk_rbcuckoo *c, const rc_key *k);

/* bk_rbcuckoo_new, of `buckets` (1 .. BK_RBCUCKOO_BUCKETS_MAX) in
 * sub-filter 0, and bk_rbcuckoo_from with allocator a (the public calls
 * take bk_set_allocator's), the filter's payloads flag set first. */
int bk_rc_new(const bk_allocator *a, uint64_t buckets, unsigned bucket_size,
              unsigned max_iterations, unsigned expansion, uint64_t max_bytes, int payloads,
              bk_rbcuckoo **out);
int bk_rc_from(const bk_allocator *a, const bk_rbcuckoo_info *in, const uint64_t *counts,
               unsigned flags, uint64_t max_bytes, int payloads, bk_rbcuckoo **out);

/* A filter of in's fields (filters, bytes ignored) with no sub-filter yet,
 * from allocator a: NULL when out of memory. */
bk_rbcuckoo *bk_rc_empty(const bk_allocator *a, const bk_rbcuckoo_info *in);

/* Buckets of sub-filter 0 for a capacity (CF.RESERVE's sizing: capacity /
 * bucket_size rounded up to a power of two, at least 1), or 0 when past
 * BK_RBCUCKOO_BUCKETS_MAX. bucket_size >= 1. */
uint64_t bk_rc_buckets_for(uint64_t capacity, unsigned bucket_size);

/* Buckets of a keyed filter's sub-filter 0 for a capacity: a power of two,
 * at least RC_MIN_HELD, enough that capacity items fit without growing
 * (held_load in rbcuckoo.c); 0 past BK_RBCUCKOO_BUCKETS_MAX. */
#define RC_MIN_HELD 512u
uint64_t bk_rc_buckets_holding(uint64_t capacity, unsigned bucket_size);

/* Buckets of sub-filter 0 for a capacity into *out, by
 * bk_rc_buckets_holding when hold, else bk_rc_buckets_for: BK_OK,
 * BK_EINVAL (bucket_size 0) or BK_ERANGE (too many buckets). */
int bk_rc_size(uint64_t capacity, unsigned bucket_size, int hold, uint64_t *out);

/* Buckets of sub-filter i as RedisBloom computes them (pow in doubles):
 * BK_OK, or BK_ERANGE when 0 or past BK_RBCUCKOO_BUCKETS_MAX. */
int bk_rc_buckets_at(uint64_t buckets, unsigned expansion, uint32_t i, uint64_t *out);

/* Append a zeroed sub-filter of n buckets: BK_OK or BK_ENOMEM. */
int bk_rc_push(bk_rbcuckoo *c, uint64_t n);
/* Append a sub-filter of n buckets over slots, freed as own says
 * (BK_OWN_*): BK_OK, or BK_ENOMEM with slots not taken. */
int bk_rc_take(bk_rbcuckoo *c, uint64_t n, uint8_t *slots, int own);
/* Free the newest sub-filter. */
void bk_rc_pop(bk_rbcuckoo *c);

/* Bucket j of sub-filter s: its first slot. */
/* A hash's bucket in s: hash mod its buckets, a mask when they are a power
 * of two (every sub-filter RedisBloom 2.6 makes; a loaded one may not be):
 * a 64-bit division is ~40 cycles, and an operation takes two per
 * sub-filter. */
static inline uint64_t bk_rc_index(const rc_sub *s, uint64_t h)
{
    return (s->n & (s->n - 1)) == 0 ? h & (s->n - 1) : h % s->n;
}

static inline uint8_t *bk_rc_bucket(const bk_rbcuckoo *c, const rc_sub *s, uint64_t j)
{
    return s->slots + j * c->bucket_size;
}

/* Bytes of the sub-filter the filter's next growth makes (0: it cannot
 * grow): what its grow check is told. */
uint64_t bk_rbcuckoo_next_bytes(const bk_rbcuckoo *c);

#endif
