/*
 * rb.h - the module's RedisBloom-compatible keys (internal): RedisBloom's
 * own data types, registered under its names so that its RDB and AOF data
 * load (type MBbloom--: a bk_filter of variant rbchain; type MBbloomCF: one
 * of variant rbcuckoo; both hash=murmur with RedisBloom's own limits,
 * bloomkit_redisbloom.h), and the commands on them, which reach every key
 * through bloomkit.h's calls on filters.
 *   rbtype.c      the two types: RDB load (every encoding RedisBloom 2.6
 *                 loads) and save (its current one), AOF rewrite, COPY, free
 *   bf_rbchain.c  BF.* on MBbloom-- keys (bf.c hands them over)
 *   cf.c          CF.*
 * These keys hash without a key, as RedisBloom does: docs/security.md.
 */
#ifndef BKM_RB_H
#define BKM_RB_H

#include "bloomkit_redisbloom.h"
#include "rm_api.h"

#define BKM_RB_ENCVER 4 /* RedisBloom 2.6's encoding of both types */

extern RedisModuleType *bkm_rbchain_type, *bkm_rbcuckoo_type;

/* Register both types (OnLoad). REDISMODULE_OK or _ERR. */
int bkm_register_rb_types(RedisModuleCtx *ctx);

/* What a key holds. */
typedef enum bkm_kind {
    BKM_EMPTY,    /* no key */
    BKM_BLOOMKIT, /* a bloomkit filter (bkm_value) */
    BKM_RBCHAIN,  /* RedisBloom's chain */
    BKM_RBCUCKOO, /* RedisBloom's cuckoo filter */
    BKM_OTHER     /* any other type */
} bkm_kind;

/* The kind of an open key (NULL: empty). */
bkm_kind bkm_kind_of(RedisModuleKey *key);
/* The kind of key `name` now (opened to read and closed). */
bkm_kind bkm_kind_named(RedisModuleCtx *ctx, RedisModuleString *name);
/* The kind of an open key as BF.* see it: a keyed CF.* key (a bloomkit
 * filter of variant rbcuckoo) is a cuckoo filter, BKM_RBCUCKOO, as the
 * same key of RedisBloom's type would be (BF.* writes and BF.INFO/CARD
 * answer WRONGTYPE, lookups 0). */
bkm_kind bkm_bf_kind_of(RedisModuleKey *key);

/* The bytes of a RedisBloom value v of kind BKM_RBCHAIN or BKM_RBCUCKOO and
 * its items; returns its arrays (a chain's links, a cuckoo filter's
 * sub-filters). */
uint32_t bkm_rb_size(bkm_kind kind, const bk_filter *v, uint64_t *bytes, uint64_t *items);
/* What MEMORY USAGE says of it (held.c). */
size_t bkm_rb_usage(bkm_kind kind, const bk_filter *v);
/* Set an empty key open to write to RedisBloom's value f of kind (which it
 * then owns), counted in INFO. */
void bkm_rb_set_value(RedisModuleKey *key, bkm_kind kind, bk_filter *f);

/* INFO bloomkit's per-type figures (held.c): add to the keys and bytes of
 * values of kind. Around a write to an open key holding a RedisBloom value
 * (-1 before for a key of another kind): what it holds before, then count
 * the change. all 0 for adds, which only append arrays (O(1) unless one
 * was added); 1 for a write that may drop arrays (CF.COMPACT), which
 * counts them all before and after. */
void bkm_held_add(bkm_kind kind, long long keys, long long bytes);
long long bkm_held_before(RedisModuleKey *key, int all);
void bkm_held_after(RedisModuleKey *key, long long before, int all);
void bkm_held_info(RedisModuleInfoCtx *ctx, int for_crash_report);

/* 1 when the client speaks RESP3. */
int bkm_resp3(RedisModuleCtx *ctx);
/* A boolean: true/false in RESP3, 1/0 in RESP2 (RedisBloom's "bool"). */
int bkm_reply_bool(RedisModuleCtx *ctx, int v);

/* The replies of a lookup of the items argv[2..argc) in f (NULL: a missing
 * key or one of another type, which holds nothing): one, or an array. */
int bkm_reply_lookups(RedisModuleCtx *ctx, const bk_filter *f, RedisModuleString **argv, int argc,
                      int array);

/* BF.* on a chain key (bf.c calls them for MBbloom-- keys, and for
 * missing keys when NEW_KEYS is redisbloom). Same arguments as the BF.*
 * handlers. */
int bkm_bf_rbchain_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_bf_rbchain_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int array);
int bkm_bf_rbchain_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_bf_rbchain_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int array);
int bkm_bf_rbchain_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_bf_rbchain_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_bf_rbchain_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_bf_rbchain_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* BF.INFO's reply for either kind of key (argv, argc: the command's; a
 * third argument names the one field asked): Capacity, Size, Number of
 * filters, Number of items inserted, Expansion rate (nil when no_growth),
 * in RedisBloom's shapes for RESP2 and RESP3. */
int bkm_reply_bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                      const long long values[5], int no_growth);

/* 1 when a BF.* or CF.* command that makes a key makes RedisBloom's type:
 * NEW_KEYS is redisbloom, or the command was replayed (a master's stream,
 * the AOF). A bloomkit master propagates the keys it makes as BK.CREATE,
 * so a plain creation that arrives replayed was written by RedisBloom, or
 * by a master that made RedisBloom's type: the key is made as its origin
 * made it, whatever this server's NEW_KEYS. */
int bkm_makes_redisbloom(RedisModuleCtx *ctx);

/* The most bytes a RedisBloom key a command makes may take: the module's
 * MAX_BYTES, lowered to what maxmemory leaves; 0 (no limit) for a command
 * from the master or the AOF, which makes what the master made. Data
 * loaded from an RDB or RESTORE is never refused for its size. */
uint64_t bkm_rb_limit(RedisModuleCtx *ctx);

/* What a command's add to a RedisBloom structure asks before it grows
 * (the arg of bkm_rb_room as the filter's grow check, bk_set_grow_check):
 * the command's context, and where the refusal's reply goes. */
typedef struct bkm_room {
    RedisModuleCtx *ctx;
    char *err;
    size_t errlen;
} bkm_room;
/* Room to grow a RedisBloom key of `total` bytes by `need` (a bkm_room *
 * room): within MAX_BYTES and what maxmemory leaves (always, for a command
 * from the master or the AOF, and when need is 0: the add then fails as
 * it would have): 0, or BK_EFULL with the reply in room->err. */
int bkm_rb_room(void *room, uint64_t total, uint64_t need);

/* An add of item to f (a filter of variant rbchain or rbcuckoo, either
 * hash) by a command: bk_add with bkm_rb_room as its grow check, and once
 * (CF.ADDNX) with bk_set_add_once. bk_add's result, or BKM_RB_GROW when
 * the array it needed has no room (err holds the reply). */
#define BKM_RB_GROW 2
int bkm_rb_add(RedisModuleCtx *ctx, bk_filter *f, RedisModuleString *item, int once, char *err,
               size_t errlen);

/* Replicate a write of items argv[first..argc): as it came, or without the
 * items skipped[i - first] marks (refused for memory on this server: they
 * changed nothing here, and a replica, which does not check memory, must
 * not add them either). skipped may be NULL. */
void bkm_rb_replicate(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int first,
                      const unsigned char *skipped);

/* Reply to a structure refused over bkm_rb_limit (BK_EFULL): "ERR <what>:
 * <the detail>" with the limits named. */
int bkm_rb_refused(RedisModuleCtx *ctx, const char *what);

#endif
