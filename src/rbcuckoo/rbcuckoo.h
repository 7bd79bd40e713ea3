/*
 * rbcuckoo.h - RedisBloom's cuckoo filter (internal): the struct behind
 * bk_rbcuckoo (bloomkit_redisbloom.h) and what its files share.
 *   rbcuckoo.c making it, its figures, and freeing it
 *   insert.c   lookups, counts, inserts with eviction and undo, growth
 *   compact.c  deletes and compaction
 *   cfimage.c  the SCANDUMP header and chunks, and LOADCHUNK
 */
#ifndef BK_RBCUCKOO_RBCUCKOO_H
#define BK_RBCUCKOO_RBCUCKOO_H

#include <stdint.h>

#include "bloomkit_redisbloom.h"

/* One sub-filter: n buckets of the filter's bucket size, 8-bit slots, 0
 * an empty slot. */
typedef struct rc_sub {
    uint64_t n;
    uint8_t *slots;
} rc_sub;

struct bk_rbcuckoo {
    bk_allocator alloc;
    uint64_t buckets, items, deletes;
    uint32_t filters; /* sub-filters in use */
    unsigned bucket_size, max_iterations, expansion;
    uint32_t cap; /* room in subs[] */
    rc_sub *subs; /* oldest first */
};

/* RedisBloom's multiplier of a fingerprint in its alternate index. */
#define RC_MUL UINT64_C(0x5bd1e995)

/* An item's fingerprint and its two indices (mod a sub-filter's n). */
typedef struct rc_key {
    unsigned fp;
    uint64_t i1, i2;
} rc_key;
rc_key bk_rc_key(const void *item, size_t len);

/* Buckets of sub-filter i as RedisBloom computes them (pow in doubles):
 * BK_OK, or BK_ERANGE when 0 or past BK_RBCUCKOO_BUCKETS_MAX. */
int bk_rc_buckets_at(uint64_t buckets, unsigned expansion, uint32_t i, uint64_t *out);

/* Append a zeroed sub-filter of n buckets: BK_OK or BK_ENOMEM. */
int bk_rc_push(bk_rbcuckoo *c, uint64_t n);
/* Free the newest sub-filter. */
void bk_rc_pop(bk_rbcuckoo *c);

/* Bucket j of sub-filter s: its first slot. */
static inline uint8_t *bk_rc_bucket(const bk_rbcuckoo *c, const rc_sub *s, uint64_t j)
{
    return s->slots + j * c->bucket_size;
}

#endif
