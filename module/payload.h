/*
 * payload.h - a filter as the bytes the module stores and sends: its image
 * in bloomkit's file format (docs/file-format.md), the one format of files,
 * RDB payloads, DUMP/RESTORE, the AOF and BF.SCANDUMP. No server calls, so
 * that tests/fuzz/fuzz_module_payload.c runs the loader alone.
 */
#ifndef BKM_PAYLOAD_H
#define BKM_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "bloomkit.h"

/* Memory for images: the server's allocator in the module, malloc in the
 * fuzzer (each defines these). NULL when out of memory. */
void *bkm_alloc(size_t n);
void bkm_free(void *p);

/* f's image in a new buffer (*buf, bkm_free), *len bytes. BK_OK, BK_ENOMEM,
 * BK_ERANGE. */
int bkm_image(const bk_filter *f, uint8_t **buf, size_t *len);

/* A filter from an image, as the master had it at saved_ms (a window filter
 * is loaded at that time, so that it drops nothing the master still had;
 * time then moves on from the clock, which the load leaves where it was).
 * A saved_ms outside bkm_time_ok is refused (BK_ECORRUPT). Every check of
 * bk_load_buffer;
 * with max_bytes (UINT64_MAX: none, for the server's own RDB and AOF)
 * refuses an image over it and a growing filter that could pass it (its
 * max_bytes 0 or larger). BK_OK or a code with detail in err. */
int bkm_image_load(const void *buf, size_t len, int64_t saved_ms, uint64_t max_bytes,
                   bk_filter **out, char *err, size_t errlen);

#endif
