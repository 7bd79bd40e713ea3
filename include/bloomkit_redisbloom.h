/*
 * bloomkit_redisbloom.h - RedisBloom's two structures as bloomkit filters,
 * bit for bit: its scalable Bloom chain (variant rbchain: BF.* keys, Redis
 * type MBbloom--) and its cuckoo filter (variant rbcuckoo: CF.* keys, type
 * MBbloomCF), with RedisBloom 2.6's sizing, hashing, growth, eviction,
 * deletion and compaction, so that data RedisBloom wrote answers exactly as
 * RedisBloom answered (the same false positives), later writes change it as
 * RedisBloom would, and what is saved can go back to RedisBloom. Specified
 * in our own words in RedisBloom's interoperability notes (docs/redis.md,
 * "Moving from RedisBloom"); the Redis module is their main user.
 *
 * What is here makes such filters from RedisBloom's own fields (an RDB
 * value, BF.RESERVE's and CF.RESERVE's arguments, a SCANDUMP header) and
 * reads those fields back; everything else is bloomkit.h's calls on the
 * filter (bk_add, bk_contains, bk_remove, bk_count, bk_compact, bk_free,
 * bk_set_grow_check), which hash the key in the shared layer as for every
 * variant. The filters made here hash with RedisBloom's MurmurHash64A /
 * MurmurHash2 (hash=murmur), which have NO KEY: anyone who can choose the
 * items can make them collide (docs/security.md); use them only to stay
 * compatible with RedisBloom's data.
 *
 * Errors are bloomkit codes (bk_strerror, bk_last_error for the detail);
 * nothing here prints, exits or aborts. Memory comes from the allocator
 * bk_set_allocator installed when the filter was made. Thread-safety: as
 * for any filter of the variant (bloomkit.h); the calls reading fields
 * (bk_rbchain_info_of ...) are lookups.
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

/* Flags of the calls that make a filter here. */
#define BK_RB_STRICT 1u /* also check what LOADCHUNK checks (below, per structure) */
/* Keep within a bloomkit file (bk_save, bk_redis_push of a pulled key): the
 * filter stops growing at BK_SLICES_MAX links or sub-filters (an add past
 * them fails with BK_EFULL), and a value no configuration states (a chain's
 * first error rate over 0.5, or 0.25 when it scales; a capacity past 2^48)
 * is refused with BK_ENOTSUP. Without it a filter keeps RedisBloom's own
 * limits (links bounded by memory alone, 65,535 sub-filters), as the Redis
 * module's RedisBloom-typed keys do, and bk_save refuses it (BK_ENOTSUP or
 * BK_ERANGE, detail) only when its fields are past what a file holds. */
#define BK_RB_FILE 2u

/* max_bytes, in the calls that make a filter: the most its arrays may take
 * when it is made, checked before anything is allocated (BK_EFULL, detail
 * saying how many bytes it needed); 0 for no limit. Its later growth is
 * bounded by the host's check (bk_set_grow_check) and by memory. */

/* ------------------------------------------------------------ the chain -- */

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

/* A filter of variant rbchain as BF.RESERVE makes it: options
 * FORCE64|NOROUND (|NO_SCALING when nonscaling), the first link sized for
 * capacity at error / 2 (error when nonscaling), RedisBloom's own limits.
 * bk_add then answers as BF.ADD: 1 added, 0 present, BK_EFULL (a
 * non-scaling chain is full), BK_ERANGE (the next link cannot be made:
 * RedisBloom's "problem inserting"), BK_ENOMEM, or what the grow check
 * refused with. BK_OK (*out set), BK_EINVAL (out NULL), BK_ERANGE (capacity
 * 0, error outside (0, 1), or a link too large to address), BK_EFULL (over
 * max_bytes), BK_ENOMEM. */
BK_API int bk_filter_rbchain_new(uint64_t capacity, double error, uint32_t growth, int nonscaling,
                                 uint64_t max_bytes, bk_filter **out);

/* A filter of variant rbchain from a chain's fields (an RDB value's): info's
 * size, options and growth (links, capacity and bytes are ignored), n links
 * with each link's data copied from links[i].data when not NULL, else
 * zero-filled. Every link must pass RedisBloom's integrity rule (error in
 * (0, 1); n2 <= 63; bits >= 2^n2 when n2 > 0; bits == 8 * bytes, not 0;
 * hashes == ceil(0.693147180559945 * bpe)); flags BK_RB_STRICT adds the
 * LOADCHUNK checks (known option bits, the chain's size equal to its
 * links'), BK_RB_FILE a file's limits. BK_OK (*out set), BK_EINVAL (n 0, a
 * link or the chain failing a check: nothing made; detail names it),
 * BK_ENOTSUP (BK_RB_FILE), BK_EFULL (over max_bytes), BK_ENOMEM. */
BK_API int bk_filter_rbchain_from(const bk_rbchain_info *info, const bk_rbchain_link *links,
                                  uint32_t n, unsigned flags, uint64_t max_bytes, bk_filter **out);

/* The chain's fields, and link i's (data points into the filter: valid
 * until its next write or bk_free). BK_OK, BK_EINVAL (f or out NULL),
 * BK_ENOTSUP (f is not of variant rbchain), BK_ERANGE (no link i). */
BK_API int bk_rbchain_info_of(const bk_filter *f, bk_rbchain_info *out);
BK_API int bk_rbchain_link_of(const bk_filter *f, uint32_t i, bk_rbchain_link *out);

/* ----------------------------------------------------------- the cuckoo -- */

/* A cuckoo filter's fields. */
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

/* A filter of variant rbcuckoo as CF.RESERVE makes it: capacity /
 * bucket_size buckets rounded up to a power of two (at least 1), expansion
 * rounded up to a power of two (0 stays 0: never grows), RedisBloom's own
 * limits. bk_add then inserts as CF.ADD (1 when no copy of the fingerprint
 * was there, 0 when one was: a copy is added either way), and with
 * bk_set_add_once as CF.ADDNX; BK_EFULL (no room and expansion 0),
 * BK_ENOMEM (the next sub-filter cannot be made), or what the grow check
 * refused with. bk_remove is CF.DEL (then, past 10% deletes in a filter of
 * several sub-filters, a compaction), bk_count CF.COUNT, bk_compact
 * CF.COMPACT. BK_OK, BK_EINVAL (out NULL, bucket_size outside 1 .. 255,
 * max_iterations outside 1 .. 65535, expansion over 32768), BK_ERANGE (too
 * many buckets), BK_EFULL (over max_bytes), BK_ENOMEM. */
BK_API int bk_filter_rbcuckoo_new(uint64_t capacity, unsigned bucket_size, unsigned max_iterations,
                                  unsigned expansion, uint64_t max_bytes, bk_filter **out);

/* A zero-filled filter of variant rbcuckoo from its fields (info's
 * buckets, items, deletes, filters, bucket_size, max_iterations, expansion;
 * bytes ignored), sub-filter i with counts[i] buckets, or when counts is
 * NULL buckets * expansion^i; fill its slots through bk_rbcuckoo_slots.
 * Without flags only what a loader must refuse is refused (no sub-filter, a
 * bucket count or bucket size of 0, more than BK_RBCUCKOO_FILTERS_MAX
 * sub-filters, one over BK_RBCUCKOO_BUCKETS_MAX buckets); BK_RB_STRICT adds
 * what CF.LOADCHUNK's header check refuses (a bucket count not a power of
 * two, a bucket size over 255, iterations 0, expansion 0 with several
 * sub-filters), and a counts[i] other than buckets * expansion^i;
 * BK_RB_FILE a file's limits. BK_OK, BK_EINVAL (detail), BK_ENOTSUP
 * (BK_RB_FILE), BK_EFULL (over max_bytes), BK_ENOMEM. */
BK_API int bk_filter_rbcuckoo_from(const bk_rbcuckoo_info *info, const uint64_t *counts,
                                   unsigned flags, uint64_t max_bytes, bk_filter **out);

/* The filter's fields; sub-filter i's slots (*data, *buckets buckets of
 * bucket_size bytes; into f, valid until its next write or bk_free; a
 * loader may write them before the filter's first use). BK_OK, BK_EINVAL (f
 * or an output NULL), BK_ENOTSUP (f is not of variant rbcuckoo), BK_ERANGE
 * (no sub-filter i). */
BK_API int bk_rbcuckoo_info_of(const bk_filter *f, bk_rbcuckoo_info *out);
BK_API int bk_rbcuckoo_slots(const bk_filter *f, uint32_t i, uint8_t **data, uint64_t *buckets);

/* ------------------------------------------------ the chunked dump -- */

/* RedisBloom's copy of a key in chunks (BF.SCANDUMP / BF.LOADCHUNK,
 * CF.SCANDUMP / CF.LOADCHUNK), of a filter of variant rbchain or rbcuckoo
 * (either hash: a keyed filter's chunks carry no key, so they go back to a
 * filter of the same key only). Each call: BK_EINVAL (a NULL pointer),
 * BK_ENOTSUP (another variant), or as said. Not concurrent with writers of
 * f (what they return points into it). */

/* The header (the chunk at iterator 0 / position 1: a chain's 20 + 53 *
 * links bytes, a cuckoo filter's 38) into buf when cap allows; *len its
 * length either way. BK_OK. */
BK_API int bk_chunked_header(const bk_filter *f, void *buf, size_t cap, size_t *len);

/* The chunk after the header at iterator it >= 1: *data (into f), *len (at
 * most BK_RB_CHUNK_MAX; a chain's never past its link, a cuckoo filter's a
 * whole sub-filter when it fits) and *next, the iterator that goes with it
 * (it + len). Past the end: *len 0, *next 0. BK_OK. */
BK_API int bk_chunked_next(const bk_filter *f, long long it, const uint8_t **data, size_t *len,
                           long long *next);

/* A zero-filled filter of variant v (rbchain or rbcuckoo, hash=murmur) from
 * a header, checked as RedisBloom checks it on LOADCHUNK; flags BK_RB_FILE
 * or 0. BK_OK, BK_EINVAL (not a valid header: RedisBloom's "received bad
 * data", a cuckoo header not of 38 bytes: "Invalid header"), BK_ECORRUPT (a
 * cuckoo header of fields RedisBloom refuses: "Couldn't create filter!"),
 * BK_ENOTSUP (BK_RB_FILE, or v another variant), BK_EFULL (over
 * max_bytes), BK_ENOMEM. */
BK_API int bk_chunked_new(bk_variant v, const void *header, size_t len, unsigned flags,
                          uint64_t max_bytes, bk_filter **out);

/* Load a chunk at iterator it into f: its bytes go at offset it - len - 1
 * of the arrays. BK_OK, or nothing changed and BK_EINVAL (it or len out of
 * place: RedisBloom's "received bad data" / "Couldn't load chunk!"),
 * BK_ENOTFOUND (a chain: no link at that offset), BK_ERANGE (a chain: more
 * bytes than the link has left), BK_EREADONLY. */
BK_API int bk_chunked_load(bk_filter *f, long long it, const void *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif
