/*
 * membuf.c - bk_save_size and bk_save_buffer: a filter in the file format,
 * into the caller's memory (bk_load_buffer reads it back: load.c).
 */
#include <stdio.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/error.h"
#include "emit.h"

/* Checks and header shared by both calls: BK_OK with h described. */
static int describe(const bk_filter *f, bk_file_header *h, const char *what)
{
    if (!f)
        return bk_fail(BK_EINVAL, "%s: no filter", what);
    if (!bk_filter_in_memory(f))
        return bk_fail(BK_ENOTSUP,
                       "%s: the filter lives on a server; copy it with bk_redis_pull "
                       "(bloomkit pull)",
                       what);
    const int rc = bk_emit_describe(f, h);
    if (rc == BK_ENOTSUP) {
        char why[256];
        snprintf(why, sizeof why, "%s", bk_last_error());
        return bk_fail(rc, "%s: %s", what, why);
    }
    if (rc != BK_OK)
        return bk_fail(BK_ERANGE, "%s: more slices or bytes than the format holds", what);
    return BK_OK;
}

int bk_save_size(const bk_filter *f, uint64_t *size)
{
    bk_call_begin();
    if (!size)
        return bk_fail(BK_EINVAL, "save size: no output");
    bk_file_header h;
    const int rc = describe(f, &h, "save size");
    if (rc == BK_OK)
        *size = h.file_size;
    return bk_done(rc, "save_size");
}

typedef struct mem_sink {
    uint8_t *at;
} mem_sink;

static int to_memory(void *ctx, const void *p, size_t n)
{
    mem_sink *m = ctx;
    memcpy(m->at, p, n);
    m->at += n;
    return 0;
}

int bk_save_buffer(const bk_filter *f, void *buf, size_t cap, size_t *len)
{
    bk_call_begin();
    if (!buf || !len)
        return bk_fail(BK_EINVAL, "save to memory: no buffer or no length");
    bk_file_header h;
    int rc = describe(f, &h, "save to memory");
    if (rc != BK_OK)
        return bk_done(rc, "save_buffer");
    if (h.file_size > cap) {
        *len = h.file_size > SIZE_MAX ? SIZE_MAX : (size_t)h.file_size;
        return bk_fail(BK_ERANGE, "save to memory: %llu bytes needed, the buffer holds %zu",
                       (unsigned long long)h.file_size, cap);
    }
    const bk_allocator a = bk_filter_allocator(f);
    uint8_t *bounce = bk_mem_alloc(&a, BK_EMIT_CHUNK);
    if (!bounce)
        return bk_fail(BK_ENOMEM, "save to memory: out of memory");
    mem_sink m = {(uint8_t *)buf + h.header_size};
    rc = bk_emit_payloads(f, &h, bounce, to_memory, &m, &a);
    bk_mem_free(&a, bounce);
    if (rc != BK_OK)
        return bk_fail(BK_ENOMEM, "save to memory: out of memory");
    bk_file_encode(&h, buf);
    *len = (size_t)h.file_size;
    return BK_OK;
}
