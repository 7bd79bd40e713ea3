/*
 * rbchain.h - RedisBloom's scalable Bloom chain (internal): the struct
 * behind bk_rbchain (bloomkit_redisbloom.h) and what its files share.
 *   link.c    a link: RedisBloom's sizing (LinkInit), its probes
 *   rbchain.c the chain: making, adding (growth), lookups, figures
 *   bfimage.c the SCANDUMP header and chunks, and LOADCHUNK
 */
#ifndef BK_RBCHAIN_RBCHAIN_H
#define BK_RBCHAIN_RBCHAIN_H

#include <stdint.h>

#include "bloomkit_redisbloom.h"

struct bk_rbchain {
    bk_allocator alloc; /* what made it; frees with it */
    uint64_t size;
    uint32_t options, growth;
    uint32_t n, cap;        /* links in use, room in links[] */
    bk_rbchain_link *links; /* oldest first; each link's data owned */
};

/* The hash pair of an item under a chain's options (FORCE64 or not). */
typedef struct rb_pair {
    uint64_t a, b;
} rb_pair;
rb_pair bk_rb_pair(uint32_t options, const void *item, size_t len);

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

#endif
