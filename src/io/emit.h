/*
 * emit.h - a filter's bytes in file order, through a sink: what bk_save
 * writes to its temporary file and bk_save_buffer into the caller's memory
 * (internal). One snapshot logic for both.
 */
#ifndef BK_IO_EMIT_H
#define BK_IO_EMIT_H

#include "format.h"

/* Receives the next n bytes in file order after the header (padding and
 * payloads); 0, or -1 to stop (errno kept for the caller's message). */
typedef int (*bk_emit_sink)(void *ctx, const void *p, size_t n);

/* Bytes of the bounce buffer bk_emit_payloads needs. */
#define BK_EMIT_CHUNK ((size_t)4 << 20)

/* Fill h from f: config, version, slice shapes, layout. BK_ERANGE when the
 * filter holds more slices than the format or would pass its size. */
int bk_emit_describe(const bk_filter *f, bk_file_header *h);

/* Hand the padding and payloads of f, described in h, to sink, each chunk
 * copied through bounce (BK_EMIT_CHUNK bytes) before it is checksummed and
 * handed on, so that a filter other threads keep adding to is emitted as a
 * consistent snapshot of each chunk, with counts that match the bytes; sets
 * h's counts and payload checksum. BK_OK, BK_ENOMEM, or 1 when the sink
 * stopped. Then bk_file_encode(h) gives the header. */
int bk_emit_payloads(const bk_filter *f, bk_file_header *h, uint8_t *bounce, bk_emit_sink sink,
                     void *ctx, const bk_allocator *a);

#endif
