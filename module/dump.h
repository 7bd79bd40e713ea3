/*
 * dump.h - BF.SCANDUMP / BF.LOADCHUNK (dump.c): a filter's image in
 * chunks, each chunk's iterator the offset where it ends.
 */
#ifndef BKM_DUMP_H
#define BKM_DUMP_H

#include <stddef.h>
#include <stdint.h>

/* The largest chunk SCANDUMP hands out and the AOF and replicas receive
 * (16 MiB, as RedisBloom's). */
#define BKM_CHUNK ((size_t)16 << 20)

#include "rm_api.h"

/* The INFO fields of loads in progress: loads_pending, loading_bytes (what
 * they hold now), loads_abandoned (freed unfinished: timed out, flushed,
 * replaced, their key taken meanwhile). */
void bkm_loads_info(RedisModuleInfoCtx *ctx);
/* 1 while a BF.LOADCHUNK of bloomkit's image into key `name` (of the
 * selected database) is unfinished. */
int bkm_load_pending(RedisModuleCtx *ctx, RedisModuleString *name);
/* An image for key `name` to replicas and the AOF, as BF.LOADCHUNK pieces
 * at the command's time (BK.AT): the key must be empty where they arrive. */
void bkm_replicate_image(RedisModuleCtx *ctx, RedisModuleString *name, const uint8_t *buf,
                         size_t len);
/* Free the loads of a flushed database (OnLoad subscribes to FlushDB). */
int bkm_loads_watch(RedisModuleCtx *ctx);

#endif
