/*
 * rbchain.h - RedisBloom's scalable Bloom chain (internal): the struct
 * behind bk_rbchain (bloomkit_redisbloom.h) and what its files share.
 *   link.c            a link: RedisBloom's sizing (LinkInit), its probes
 *   rbchain.c         the chain: making, adding (growth), lookups, figures
 *   rbchain_image.c   the SCANDUMP header and chunks, and LOADCHUNK
 *   rbchain_filter.c  the chain as a bk_filter: the variant rbchain
 */
#ifndef BK_RBCHAIN_RBCHAIN_H
#define BK_RBCHAIN_RBCHAIN_H

#include <stdint.h>

#include "bloomkit_redisbloom.h"
#include "../common/grow.h"
#include "../common/hash.h"

typedef struct bk_rbchain bk_rbchain;

/* The structure's own calls, which the filter (rb*_filter.c) drives and
 * the tests and fuzzers reach directly. Memory from bk_set_allocator's
 * allocator; not thread-safe (the filter locks). */

/* A new chain as BF.RESERVE makes it: options FORCE64|NOROUND (|NO_SCALING
 * when nonscaling), the first link sized for capacity at error / 2 (error
 * when nonscaling). BK_OK (*out set), BK_EINVAL (out NULL), BK_ERANGE
 * (capacity 0, error outside (0, 1), or a link too large to address),
 * BK_EFULL (over max_bytes), BK_ENOMEM. */
int bk_rbchain_new(uint64_t capacity, double error, uint32_t growth, int nonscaling,
                   uint64_t max_bytes, bk_rbchain **out);

/* A chain from its fields (an RDB value's, or a SCANDUMP header's): info's
 * size, options and growth (links, capacity and bytes are ignored), n links
 * with each link's data copied from links[i].data when not NULL, else
 * zero-filled. Every link must pass RedisBloom's integrity rule (error in
 * (0, 1); n2 <= 63; bits >= 2^n2 when n2 > 0; bits == 8 * bytes, not 0;
 * hashes == ceil(0.693147180559945 * bpe)); flags BK_RB_STRICT adds the
 * LOADCHUNK checks. BK_OK (*out set), BK_EINVAL (n 0, a link or the chain
 * failing a check: nothing made; detail names it), BK_EFULL (over
 * max_bytes), BK_ENOMEM. */
int bk_rbchain_from(const bk_rbchain_info *info, const bk_rbchain_link *links, uint32_t n,
                    unsigned flags, uint64_t max_bytes, bk_rbchain **out);

/* Free c and its links (NULL ignored). */
void bk_rbchain_free(bk_rbchain *c);

/* BF.ADD of one item: 1 added, 0 already present (some link answers yes:
 * nothing changed), BK_EFULL (a non-scaling chain is full), BK_ERANGE (the
 * next link cannot be made: RedisBloom's "problem inserting"), BK_ENOMEM,
 * or what grow's check refused with (grow may be NULL); on anything but 1
 * nothing changed. item may be NULL when len is 0. */
int bk_rbchain_add(bk_rbchain *c, const void *item, size_t len, const bk_rb_grow *grow);

/* BF.EXISTS: 1 when some link has all its bits for item set, else 0. */
int bk_rbchain_exists(const bk_rbchain *c, const void *item, size_t len);

/* The chain's figures, and link i's (data points into the chain: valid
 * until the next add or free). bk_rbchain_link: BK_OK or BK_ERANGE. */
void bk_rb_chain_info(const bk_rbchain *c, bk_rbchain_info *out);
int bk_rb_chain_link(const bk_rbchain *c, uint32_t i, bk_rbchain_link *out);

/* RedisBloom's chunked dump of c (BF.SCANDUMP, BF.LOADCHUNK): what
 * bk_chunked_header, _new, _next and _load answer for a filter holding it
 * (bloomkit_redisbloom.h); a header is 20 + 53 * links bytes. */
size_t bk_rbchain_header(const bk_rbchain *c, void *buf, size_t cap);
int bk_rbchain_header_read(const void *buf, size_t len, uint64_t max_bytes, bk_rbchain **out);
void bk_rbchain_chunk(const bk_rbchain *c, long long it, const uint8_t **data, size_t *len,
                      long long *next);
int bk_rbchain_load_chunk(bk_rbchain *c, long long it, const void *data, size_t len);

/* A filter of this variant holding c, which it takes over (freed with the
 * filter; on error freed too): hash=murmur, its configuration read off the
 * structure; flags BK_RB_FILE or 0 (bloomkit_redisbloom.h). BK_OK (*out
 * set), BK_EINVAL (c or out NULL), BK_ENOTSUP (BK_RB_FILE: a value no
 * configuration states; detail says), BK_ENOMEM. */
int bk_filter_of_rbchain(bk_rbchain *c, unsigned flags, bk_filter **out);

/* The structure a filter of this variant holds, for tests that drive it
 * directly (NULL for another variant); owned by f. */
bk_rbchain *bk_filter_rbchain(bk_filter *f);

struct bk_rbchain {
    bk_allocator alloc; /* what made it; frees with it */
    uint64_t size;
    uint32_t options, growth;
    uint32_t n, cap; /* links in use, room in links[] and own[] */
    /* The most links it may grow to (a variant's chain: what a bloomkit
     * file or key holds, BK_SLICES_MAX); 0: no limit but memory (RedisBloom's
     * own type, whose encoding counts links in 64 bits). An add that needs
     * a link past it fails with BK_EFULL, the chain unchanged. */
    uint32_t max_links;
    bk_rbchain_link *links; /* oldest first */
    uint8_t *own;           /* per link: who frees its data, BK_OWN_* (alloc.h) */
    /* The hash: NULL, RedisBloom's MurmurHash as the options say; else the
     * keyed hash alg under *hkey, the key of the filter that holds the chain
     * (variant rbchain, src/rbchain/variant.c), its (h1, h2) the pair. */
    const bk_hashkey *hkey;
    bk_hash_alg alg;
    /* 1: new links are filter payloads (bk_payload_alloc: large ones mapped,
     * zeroed lazily, refused rather than aborting when past what the
     * process can map), as in a variant's filter; 0: bk_mem_zeroed. */
    int payloads;
};

/* The MurmurHash form of a chain of these options: a pair of 64-bit hashes
 * under FORCE64, else of 32-bit ones (RedisBloom's oldest chains). */
static inline bk_murmur_form bk_rb_murmur_form(uint32_t options)
{
    return options & BK_RBCHAIN_FORCE64 ? BK_MURMUR_PAIR64 : BK_MURMUR_PAIR32;
}

/* The hash pair of an item as a chain probes with it. */
typedef struct rb_pair {
    uint64_t a, b;
} rb_pair;
/* The pair of an item as chain c hashes it: its filter's digest, or for
 * RedisBloom's own value its MurmurHash pair (bk_hash_murmur), of 64-bit
 * hashes under FORCE64 else of 32-bit ones. */
rb_pair bk_rb_pair_of(const bk_rbchain *c, const void *item, size_t len);

/* An empty chain (no link yet) from allocator a: NULL when out of memory. */
bk_rbchain *bk_rb_chain_empty(const bk_allocator *a, uint64_t size, uint32_t options,
                              uint32_t growth);

/* 1 when some link of c has all the pair's bits. */
int bk_rb_chain_has(const bk_rbchain *c, const rb_pair *p);

/* bk_rbchain_add of an item whose pair is p (same answers). */
int bk_rb_chain_add(bk_rbchain *c, const rb_pair *p, const bk_rb_grow *grow);

/* A link's bits per entry for its error rate, as RedisBloom computes it. */
double bk_rb_bpe(double error);

/* LinkInit(capacity, error, options) into *l (data not allocated): BK_OK,
 * or BK_ERANGE (detail) for parameters RedisBloom refuses or a link too
 * large to address. */
int bk_rb_link_size(bk_rbchain_link *l, uint64_t capacity, double error, uint32_t options);

/* RedisBloom's integrity rule for a stored link: BK_OK or BK_EINVAL
 * (detail names the link and the rule). */
int bk_rb_link_check(const bk_rbchain_link *l, uint32_t i);

/* 1 when all of the pair's bits are set in l; bk_rb_link_set sets them and
 * returns how many were not set before. */
int bk_rb_link_has(const bk_rbchain_link *l, const rb_pair *p);
unsigned bk_rb_link_set(bk_rbchain_link *l, const rb_pair *p);

/* Append a zero-filled link shaped as *l to c: BK_OK or BK_ENOMEM. */
int bk_rb_chain_push(bk_rbchain *c, const bk_rbchain_link *l);

/* Append a link shaped as *l over data (l->bytes bytes), freed as own says
 * (BK_OWN_*): BK_OK, or BK_ENOMEM with data not taken. */
int bk_rb_chain_take(bk_rbchain *c, const bk_rbchain_link *l, uint8_t *data, int own);

/* Bytes of the link the chain's next growth makes (0: it cannot grow): what
 * its grow check is told. */
uint64_t bk_rbchain_next_bytes(const bk_rbchain *c);

#endif
