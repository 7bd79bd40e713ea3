/*
 * bloomkit_redisbloom.h - RedisBloom's two structures, bit for bit: its
 * scalable Bloom chain (bk_rbchain: BF.* keys, Redis type MBbloom--) and its
 * cuckoo filter (bk_rbcuckoo: CF.* keys, type MBbloomCF), with RedisBloom
 * 2.6's sizing, hashing, growth, eviction, deletion and compaction, so that
 * data RedisBloom wrote answers exactly as RedisBloom answered (the same
 * false positives), later writes change it as RedisBloom would, and what is
 * saved can go back to RedisBloom. Specified in our own words in
 * RedisBloom's interoperability notes (docs/redis.md, "Moving from
 * RedisBloom"); the Redis module is their main user.
 *
 * These structures hash with RedisBloom's MurmurHash64A / MurmurHash2,
 * which have NO KEY: anyone who can choose the items can make them collide
 * (docs/security.md). bloomkit's own filters (bloomkit.h) hash with a keyed
 * SipHash; use these only to stay compatible with RedisBloom's data.
 *
 * Errors are bloomkit codes (bk_strerror, bk_last_error for the detail);
 * nothing here prints, exits or aborts. Memory comes from the allocator
 * bk_set_allocator installed when the structure was made. A structure is
 * not thread-safe: one caller at a time (the Redis module runs on one
 * thread); different structures are independent.
 */
#ifndef BLOOMKIT_REDISBLOOM_H
#define BLOOMKIT_REDISBLOOM_H

#include <stddef.h>
#include <stdint.h>

#include "bloomkit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest chunk SCANDUMP returns (RedisBloom's 16 MiB). */
#define BK_RB_CHUNK_MAX ((size_t)16 << 20)

/* Flags of an add. */
#define BK_RB_NX 1u /* cuckoo: add only when the item is not present (CF.ADDNX) */

/* What an add asks at the one place its structure grows, before anything is
 * allocated or moved: check(arg, used, next), `used` the bytes of the arrays
 * it holds, `next` those of the link or sub-filter it would add (0: none can
 * be made, and the add fails as it would have). 0 lets it grow, exactly as
 * RedisBloom would; any other value refuses and is the add's result,
 * nothing changed (a negative code, or BK_RB_GROW for a caller that says
 * why itself). An add given NULL grows bounded by memory alone. */
typedef struct bk_rb_grow {
    int (*check)(void *arg, uint64_t used, uint64_t next);
    void *arg;
} bk_rb_grow;
#define BK_RB_GROW 2

/* ------------------------------------------------------------ the chain -- */

typedef struct bk_rbchain bk_rbchain;

/* A chain's option bits, as RedisBloom stores them. */
#define BK_RBCHAIN_NOROUND      1u /* links sized exactly (whole words), else powers of two */
#define BK_RBCHAIN_ENTS_IS_BITS 2u /* a link's capacity argument is log2 of its bits */
#define BK_RBCHAIN_FORCE64      4u /* the 64-bit hash pair (MurmurHash64A), else the 32-bit one */
#define BK_RBCHAIN_NO_SCALING   8u /* never adds a link: full when its one link is */
#define BK_RBCHAIN_OPTIONS      15u

/* A chain as a whole. */
typedef struct bk_rbchain_info {
    uint64_t size;     /* items added to the chain (BF.CARD) */
    uint32_t links;    /* links, >= 1 */
    uint32_t options;  /* BK_RBCHAIN_* bits */
    uint32_t growth;   /* capacity multiplier of the next link (EXPANSION) */
    uint64_t capacity; /* the links' entries, summed (BF.INFO Capacity) */
    uint64_t bytes;    /* the links' bytes, summed */
} bk_rbchain_info;

/* One link of a chain (oldest first). */
typedef struct bk_rbchain_link {
    uint64_t entries; /* capacity */
    double error;     /* its false-positive rate (already tightened) */
    unsigned hashes;  /* k */
    double bpe;       /* bits per entry */
    uint64_t bits;    /* 8 * bytes */
    unsigned n2;      /* log2 of the modulus of a power-of-two link, else 0 */
    uint64_t bytes;   /* length of data */
    uint64_t size;    /* items added to this link */
    uint8_t *data;    /* its bits, least significant first in each byte; owned by the chain */
} bk_rbchain_link;

/* max_bytes, in the calls that make a structure: the most its arrays may
 * take, checked before anything is allocated (BK_EFULL, detail saying how
 * many bytes it needed); 0 for no limit. */

/* A new chain as BF.RESERVE makes it: options FORCE64|NOROUND (|NO_SCALING
 * when nonscaling), the first link sized for capacity at error / 2 (error
 * when nonscaling). BK_OK (*out set), BK_EINVAL (out NULL), BK_ERANGE
 * (capacity 0, error outside (0, 1), or a link too large to address),
 * BK_EFULL (over max_bytes), BK_ENOMEM. */
BK_API int bk_rbchain_new(uint64_t capacity, double error, uint32_t growth, int nonscaling,
                          uint64_t max_bytes, bk_rbchain **out);

/* Flags of bk_rbchain_from. */
#define BK_RB_STRICT                                                                               \
    1u /* also check what LOADCHUNK checks: known option bits, and the                             \
        * chain's size equal to its links' */

/* A chain from its fields (an RDB value's, or a SCANDUMP header's): info's
 * size, options and growth (links, capacity and bytes are ignored), n links
 * with each link's data copied from links[i].data when not NULL, else
 * zero-filled. Every link must pass RedisBloom's integrity rule (error in
 * (0, 1); n2 <= 63; bits >= 2^n2 when n2 > 0; bits == 8 * bytes, not 0;
 * hashes == ceil(0.693147180559945 * bpe)); flags BK_RB_STRICT adds the
 * LOADCHUNK checks. BK_OK (*out set), BK_EINVAL (n 0, a link or the chain
 * failing a check: nothing made; detail names it), BK_EFULL (over
 * max_bytes), BK_ENOMEM. */
BK_API int bk_rbchain_from(const bk_rbchain_info *info, const bk_rbchain_link *links, uint32_t n,
                           unsigned flags, uint64_t max_bytes, bk_rbchain **out);

/* Free c and its links (NULL ignored). */
BK_API void bk_rbchain_free(bk_rbchain *c);

/* BF.ADD of one item: 1 added, 0 already present (some link answers yes:
 * nothing changed), BK_EFULL (a non-scaling chain is full), BK_ERANGE (the
 * next link cannot be made: RedisBloom's "problem inserting"), BK_ENOMEM,
 * or what grow's check refused with (grow may be NULL); on anything but 1
 * nothing changed. item may be NULL when len is 0. */
BK_API int bk_rbchain_add(bk_rbchain *c, const void *item, size_t len, const bk_rb_grow *grow);

/* BF.EXISTS: 1 when some link has all its bits for item set, else 0. */
BK_API int bk_rbchain_exists(const bk_rbchain *c, const void *item, size_t len);

/* The chain's figures, and link i's (data points into the chain: valid
 * until the next add or free). bk_rbchain_link: BK_OK or BK_ERANGE. */
BK_API void bk_rbchain_info_of(const bk_rbchain *c, bk_rbchain_info *out);
BK_API int bk_rbchain_link_of(const bk_rbchain *c, uint32_t i, bk_rbchain_link *out);

/* BF.SCANDUMP's header of c (20 + 53 * links bytes, little-endian, packed)
 * into buf when cap allows; returns its length either way. */
BK_API size_t bk_rbchain_header(const bk_rbchain *c, void *buf, size_t cap);

/* A zero-filled chain from a SCANDUMP header (BF.LOADCHUNK on a new key),
 * checked as RedisBloom checks it (BK_RB_STRICT). BK_OK, BK_EINVAL (not a
 * valid header: RedisBloom's "received bad data"), BK_EFULL (over
 * max_bytes), BK_ENOMEM. */
BK_API int bk_rbchain_header_read(const void *buf, size_t len, uint64_t max_bytes,
                                  bk_rbchain **out);

/* The chunk BF.SCANDUMP gives for iterator it >= 1: *data (into c), *len
 * (at most BK_RB_CHUNK_MAX, never past its link) and *next, the iterator
 * returned with it (it + len). Past the end: *len 0, *next 0. */
BK_API void bk_rbchain_chunk(const bk_rbchain *c, long long it, const uint8_t **data, size_t *len,
                             long long *next);

/* BF.LOADCHUNK of a chunk into an existing chain: the bytes go at offset
 * it - len - 1 of the links' arrays. BK_OK, or nothing changed and
 * BK_EINVAL (it <= 0 or it < len: "received bad data"), BK_ENOTFOUND (no
 * link at that offset), BK_ERANGE (more bytes than the link has left). */
BK_API int bk_rbchain_load_chunk(bk_rbchain *c, long long it, const void *data, size_t len);

/* ----------------------------------------------------------- the cuckoo -- */

typedef struct bk_rbcuckoo bk_rbcuckoo;

/* A cuckoo filter's figures. */
typedef struct bk_rbcuckoo_info {
    uint64_t buckets;        /* buckets of sub-filter 0 */
    uint64_t items;          /* items inserted (minus deleted) */
    uint64_t deletes;        /* deletes since the last compaction */
    uint32_t filters;        /* sub-filters, 1 .. 65535 */
    unsigned bucket_size;    /* slots (8-bit fingerprints) a bucket holds */
    unsigned max_iterations; /* evictions an insert tries */
    unsigned expansion;      /* sub-filter i has buckets * expansion^i buckets */
    uint64_t bytes;          /* the sub-filters' slots, summed */
} bk_rbcuckoo_info;

/* The most sub-filters a cuckoo filter reaches, and the most buckets of one. */
#define BK_RBCUCKOO_FILTERS_MAX 65535u
#define BK_RBCUCKOO_BUCKETS_MAX ((UINT64_C(1) << 56) - 1)

/* A new filter as CF.RESERVE makes it: capacity / bucket_size buckets
 * rounded up to a power of two (at least 1), expansion rounded up to a power
 * of two (0 stays 0: never grows). BK_OK, BK_EINVAL (out NULL, bucket_size
 * outside 1 .. 255, max_iterations outside 1 .. 65535, expansion over
 * 32768), BK_ERANGE (too many buckets), BK_EFULL (over max_bytes),
 * BK_ENOMEM. */
BK_API int bk_rbcuckoo_new(uint64_t capacity, unsigned bucket_size, unsigned max_iterations,
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
BK_API int bk_rbcuckoo_from(const bk_rbcuckoo_info *info, const uint64_t *counts, unsigned flags,
                            uint64_t max_bytes, bk_rbcuckoo **out);

/* Free c (NULL ignored). */
BK_API void bk_rbcuckoo_free(bk_rbcuckoo *c);

/* CF.ADD, or with flags BK_RB_NX CF.ADDNX, of one item: 1 inserted, 0
 * (BK_RB_NX only) already present, BK_EFULL (no room and expansion 0),
 * BK_ENOMEM (the next sub-filter cannot be made), or what grow's check
 * refused with (grow may be NULL); nothing changed but on 1. */
BK_API int bk_rbcuckoo_add(bk_rbcuckoo *c, const void *item, size_t len, unsigned flags,
                           const bk_rb_grow *grow);

/* CF.EXISTS (1 or 0) and CF.COUNT (RedisBloom's estimate: both buckets'
 * copies of the fingerprint in every sub-filter, a bucket counted twice
 * when the two are one). */
BK_API int bk_rbcuckoo_exists(const bk_rbcuckoo *c, const void *item, size_t len);
BK_API uint64_t bk_rbcuckoo_count(const bk_rbcuckoo *c, const void *item, size_t len);

/* CF.DEL: 1 a copy of the fingerprint removed (then, past 10% deletes in a
 * filter of several sub-filters, a compaction), 0 none found. */
BK_API int bk_rbcuckoo_remove(bk_rbcuckoo *c, const void *item, size_t len);

/* CF.COMPACT (stop_on_failure 0), or the compaction a delete runs (1): move
 * fingerprints of newer sub-filters into older ones, drop the newest while
 * it empties, and reset deletes to 0. */
BK_API void bk_rbcuckoo_compact(bk_rbcuckoo *c, int stop_on_failure);

/* The filter's figures; sub-filter i's slots (*data, *buckets buckets of
 * bucket_size bytes; into c, valid until the next write): BK_OK or
 * BK_ERANGE. */
BK_API void bk_rbcuckoo_info_of(const bk_rbcuckoo *c, bk_rbcuckoo_info *out);
BK_API int bk_rbcuckoo_filter(const bk_rbcuckoo *c, uint32_t i, uint8_t **data, uint64_t *buckets);

/* CF.SCANDUMP's 38-byte header of c into buf when cap allows; returns 38. */
BK_API size_t bk_rbcuckoo_header(const bk_rbcuckoo *c, void *buf, size_t cap);

/* A zero-filled filter from a CF.SCANDUMP header (CF.LOADCHUNK at position
 * 1): BK_OK, BK_EINVAL (length not 38: "Invalid header"), BK_ECORRUPT
 * (fields RedisBloom refuses: "Couldn't create filter!"), BK_EFULL (over
 * max_bytes), BK_ENOMEM. */
BK_API int bk_rbcuckoo_header_read(const void *buf, size_t len, uint64_t max_bytes,
                                   bk_rbcuckoo **out);

/* The chunk CF.SCANDUMP gives at position p >= 1: a whole sub-filter when
 * it is at most BK_RB_CHUNK_MAX bytes, else a slice from the offset;
 * *next = p + *len. Past the end: *len 0, *next 0. */
BK_API void bk_rbcuckoo_chunk(const bk_rbcuckoo *c, long long p, const uint8_t **data, size_t *len,
                              long long *next);

/* CF.LOADCHUNK of a chunk at position p: the bytes go at offset p - len - 1
 * of the sub-filters' slots. BK_OK, or BK_EINVAL ("Couldn't load chunk!":
 * an empty chunk, p < 0, p - 1 < len, or more bytes than the sub-filter
 * has left), nothing changed. */
BK_API int bk_rbcuckoo_load_chunk(bk_rbcuckoo *c, long long p, const void *data, size_t len);

/* ------------------------------------------------------- as variants -- */

/* The structure a filter of variant rbchain (rbcuckoo) holds (bk_new,
 * bk_load, bk_open_mmap of such a configuration), to drive it with the
 * calls above: they then hash as the filter does (its keyed hash, or
 * RedisBloom's MurmurHash under hash=murmur), so both ways of adding reach
 * the same bits. NULL for a filter of another variant (or NULL). Owned by
 * f, valid until bk_free(f); the calls above take no lock, so they must not
 * overlap f's own calls (one caller at a time). A mapped read-only filter's
 * structure must not be written. */
BK_API bk_rbchain *bk_filter_rbchain(bk_filter *f);
BK_API bk_rbcuckoo *bk_filter_rbcuckoo(bk_filter *f);

/* A filter of variant rbchain (rbcuckoo) holding c, which it takes over
 * (freed with the filter; on error freed too): hash=murmur (RedisBloom's
 * data keeps RedisBloom's hash), its configuration read off the structure
 * (capacity and error rate of a chain's first link, its expansion and
 * options; a cuckoo filter's slots, bucket size, iterations, expansion),
 * so that bk_save writes it to a file and bk_redis_push copies it back as
 * RedisBloom's. For RedisBloom's data met elsewhere (bk_redis_pull of a
 * MBbloom-- or MBbloomCF key). BK_OK (*out set), BK_EINVAL (c or out NULL),
 * BK_ENOTSUP (a value no configuration states: a first link's error rate
 * over 0.5, or 0.25 for a scaling chain, a capacity past 2^48; detail
 * says), BK_ENOMEM. */
BK_API int bk_filter_of_rbchain(bk_rbchain *c, bk_filter **out);
BK_API int bk_filter_of_rbcuckoo(bk_rbcuckoo *c, bk_filter **out);

#ifdef __cplusplus
}
#endif

#endif
