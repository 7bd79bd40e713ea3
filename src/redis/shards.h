/*
 * shards.h - one logical module filter split over several module keys
 * (shards.c; internal; docs/redis.md, "Shards").
 *
 * NAME holds a descriptor, a plain string key: how many shards, the route
 * key that sends each item to its shard, and the logical filter's config
 * text (hash key included). Shard i is the module key "NAME:shard:I{T}",
 * whose hash tag T puts it in the i-th of n equal slot ranges, counted from
 * NAME's own: a cluster whose masters serve equal ranges (redis-cli
 * --cluster create) gets its share of the shards on every master.
 */
#ifndef BK_REDIS_SHARDS_H
#define BK_REDIS_SHARDS_H

#include <stddef.h>
#include <stdint.h>

#include "bloomkit.h"
#include "conn.h"

typedef struct bk_rshards {
    unsigned n;        /* shards, 2 .. BK_REDIS_SHARDS_MAX (redis_url.h) */
    uint8_t route[16]; /* SipHash-2-4 key routing an item to its shard */
    char config[2048]; /* the logical filter's config text, its hash key included */
    int ready;         /* its creator made every shard (the descriptor's last line) */
} bk_rshards;

/* 1 when a string value is a descriptor (its first line), else 0. */
int bk_rshards_is(const char *value, size_t len);

/* Parse a descriptor's text (a string from the server: untrusted): BK_OK,
 * or BK_ESERVER for anything but the exact shape shards.c writes. */
int bk_rshards_parse(const char *name, const char *text, size_t len, bk_rshards *d);

/* Read NAME's descriptor: BK_OK, BK_ENOTFOUND (no key), BK_ESERVER (a key
 * of another type or a malformed descriptor), or a connection error. */
int bk_rshards_read(bk_rconn *c, const char *name, bk_rshards *d);

/* Write d as NAME's descriptor, not ready yet, unless NAME exists (SET NX):
 * 1 written, 0 NAME existed (*d then holds its descriptor), or an error. */
int bk_rshards_create(bk_rconn *c, const char *name, bk_rshards *d);
/* Mark NAME's descriptor ready once its creator made every shard (SET XX):
 * BK_OK, BK_ENOTFOUND (dropped meanwhile), or an error. */
int bk_rshards_ready(bk_rconn *c, const char *name, bk_rshards *d);

/* The hash tag of each of the n slot ranges, into tags[0 .. n). */
void bk_rshards_tags(unsigned n, unsigned *tags);
/* Shard i's module key, into out (BK_REDIS_KEY_MAX bytes); tags from
 * bk_rshards_tags(n). */
void bk_rshards_key(const char *name, unsigned i, unsigned n, const unsigned *tags, char *out,
                    size_t len);

/* The shard of an item: SipHash-2-4 under the route key, modulo n. */
unsigned bk_rshards_route(const bk_rshards *d, const void *item, size_t len);

/* The config a shard is made with: the logical one with capacity divided
 * among the n shards (rounded up). BK_OK or BK_ECONFIG (pinned bits). */
int bk_rshards_shard_config(const bk_config *logical, unsigned n, bk_config *out);

#endif
