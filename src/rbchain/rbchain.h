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
#include "../common/hash.h"

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
