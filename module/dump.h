/*
 * dump.h - BF.SCANDUMP / BF.LOADCHUNK (dump.c): a filter's image in
 * chunks, each chunk's iterator the offset where it ends.
 */
#ifndef BKM_DUMP_H
#define BKM_DUMP_H

#include <stddef.h>

/* The largest chunk SCANDUMP hands out and the AOF and replicas receive
 * (16 MiB, as RedisBloom's). */
#define BKM_CHUNK ((size_t)16 << 20)

/* Bytes held by loads in progress (INFO). */
size_t bkm_loading_bytes(void);

#endif
