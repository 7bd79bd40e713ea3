/*
 * modkey.h - module filters met by the Lua mode's library (modkey.c;
 * internal).
 */
#ifndef BK_REDIS_MODKEY_H
#define BK_REDIS_MODKEY_H

#include "bloomkit.h"
#include "conn.h"

/* The TYPE of a key that bloomkit's Redis module keeps. */
#define BK_RMOD_TYPE "bloomkit0"

/* What name holds: BK_RMOD_NONE (nothing), BK_RMOD_MODULE (a module
 * filter), BK_RMOD_OTHER (another type), or a negative error. */
#define BK_RMOD_NONE     0
#define BK_RMOD_MODULE   1
#define BK_RMOD_OTHER    2
#define BK_RMOD_SHARDS   3 /* a sharded module filter's descriptor (shards.h) */
#define BK_RMOD_RBCHAIN  4 /* RedisBloom's chain (type MBbloom--: rbkey.c) */
#define BK_RMOD_RBCUCKOO 5 /* RedisBloom's cuckoo filter (type MBbloomCF) */
int bk_rmod_is(bk_rconn *c, const char *name);
/* 1 when the server has bloomkit's module (its BK.CREATE), 0 when not, or a
 * negative error. name routes the question (a cluster node). (modkey.c, as
 * bk_rmod_is.) */
int bk_rmod_available(bk_rconn *c, const char *name);
/* A filter on the module filter name (modfilter.c), taking over c: made
 * with want when !exists (BK.CREATE; a creator that loses the race adopts
 * the winner's), checked against text (config text over the filter's own)
 * or, when strict, against want. On error c is left to the caller. */
int bk_rmod_open(bk_rconn *c, const char *name, const bk_config *want, const char *text, int strict,
                 int exists, bk_filter **out);
/* The same for a sharded filter (shards.h): its descriptor made with
 * shards shards and want when !exists, every shard made when missing and
 * checked; shards 0: adopt the descriptor's count, else it must agree. */
int bk_rmod_open_sharded(bk_rconn *c, const char *name, const bk_config *want, const char *text,
                         int strict, int exists, unsigned shards, bk_filter **out);
/* Copy the local filter f into the new module filter name (BF.LOADCHUNK:
 * the key appears with the last chunk, complete, or not at all). */
int bk_rmod_push(bk_rconn *c, const char *name, const bk_filter *f);
/* A local copy of the module filter name (BF.SCANDUMP). */
int bk_rmod_pull(bk_rconn *c, const char *name, bk_filter **out);
/* A local copy of RedisBloom's key name (cuckoo: MBbloomCF, else MBbloom--),
 * a filter of variant rbcuckoo or rbchain (rbkey.c). */
int bk_rmod_pull_rb(bk_rconn *c, const char *name, int cuckoo, bk_filter **out);
/* Copy f, of variant rbchain or rbcuckoo with hash=murmur, into the new
 * key name as RedisBloom's type (BF.LOADCHUNK or CF.LOADCHUNK). */
int bk_rmod_push_rb(bk_rconn *c, const char *name, const bk_filter *f);
/* 1 when bk_rmod_try hands name (what bk_rmod_is said: is) to
 * bk_rmod_try_rb: RedisBloom's key, or a push of RedisBloom's data (f of
 * hash=murmur) to a new name; that then pulls, drops or pushes it. */
int bk_rmod_rb_turn(int is, int what, const bk_filter *f);
int bk_rmod_try_rb(bk_rconn *c, const char *name, int is, int what, unsigned shards,
                   const bk_filter *f, bk_filter **out);

/* Pull, drop or push (f into a new name) the URL's filter when it is a
 * module filter, or when the name is new on a server with the module (push
 * only): BK_OK (done), BK_RMOD_NOT (not one: the caller goes on with the Lua
 * mode), or an error. */
#define BK_RMOD_PULL 0
#define BK_RMOD_DROP 1
#define BK_RMOD_PUSH 2
#define BK_RMOD_NOT  1
int bk_rmod_try(const char *url, int what, const bk_filter *f, bk_filter **out);

#endif
