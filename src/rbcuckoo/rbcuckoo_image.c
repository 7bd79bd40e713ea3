/*
 * rbcuckoo_image.c - RedisBloom's dump of a cuckoo filter (FORMATS.md 5.3 - 5.5):
 * a packed little-endian 38-byte header, then the sub-filters' slots
 * addressed by position = byte offset + 1 in their concatenation; a chunk
 * is a whole sub-filter when it is at most 16 MiB.
 */
#include "rbcuckoo.h"

#include <string.h>

#include "../common/bits.h"
#include "../common/error.h"

#define HEADER 38

size_t bk_rbcuckoo_header(const bk_rbcuckoo *c, void *buf, size_t cap)
{
    if (!buf || cap < HEADER)
        return HEADER;
    uint8_t *p = buf;
    bk_le_put(p, c->items, 8);
    bk_le_put(p + 8, c->buckets, 8);
    bk_le_put(p + 16, c->deletes, 8);
    bk_le_put(p + 24, c->filters, 8);
    bk_le_put(p + 32, c->bucket_size, 2);
    bk_le_put(p + 34, c->max_iterations, 2);
    bk_le_put(p + 36, c->expansion, 2);
    return HEADER;
}

int bk_rbcuckoo_header_read(const void *buf, size_t len, uint64_t max_bytes, bk_rbcuckoo **out)
{
    bk_call_begin();
    if ((!buf && len) || !out)
        return bk_fail(BK_EINVAL, "rbcuckoo_header_read: no header or output");
    if (len != HEADER)
        return bk_fail(BK_EINVAL, "a header of %zu bytes (38)", len);
    const uint8_t *p = buf;
    const bk_rbcuckoo_info in = {.items = bk_le_get(p, 8),
                                 .buckets = bk_le_get(p + 8, 8),
                                 .deletes = bk_le_get(p + 16, 8),
                                 .filters = (uint32_t)(bk_le_get(p + 24, 8) & 0xffff),
                                 .bucket_size = (unsigned)bk_le_get(p + 32, 2),
                                 .max_iterations = (unsigned)bk_le_get(p + 34, 2),
                                 .expansion = (unsigned)bk_le_get(p + 36, 2)};
    const int rc = bk_rbcuckoo_from(&in, NULL, BK_RB_STRICT, max_bytes, out);
    return rc == BK_EINVAL ? BK_ECORRUPT : rc;
}

void bk_rbcuckoo_chunk(const bk_rbcuckoo *c, long long p, const uint8_t **data, size_t *len,
                       long long *next)
{
    *data = NULL;
    *len = 0;
    *next = 0;
    if (p < 1)
        return;
    uint64_t off = (uint64_t)p - 1;
    for (uint32_t i = 0; i < c->filters; i++) {
        const rc_sub *s = &c->subs[i];
        const uint64_t size = s->n * c->bucket_size;
        if (off < size) {
            if (size <= BK_RB_CHUNK_MAX) {
                *data = s->slots;
                *len = (size_t)size;
            } else {
                const uint64_t left = size - off;
                *data = s->slots + off;
                *len = left < BK_RB_CHUNK_MAX ? (size_t)left : BK_RB_CHUNK_MAX;
            }
            *next = p + (long long)*len;
            return;
        }
        off -= size;
    }
}

int bk_rbcuckoo_load_chunk(bk_rbcuckoo *c, long long p, const void *data, size_t len)
{
    bk_call_begin();
    if (!c || !data || len == 0 || p < 0 || (unsigned long long)(p - 1) < len || p == 0)
        return bk_fail(BK_EINVAL, "a chunk of %zu bytes at position %lld", len, p);
    uint64_t off = (uint64_t)p - len - 1;
    uint32_t i = 0;
    while (i + 1 < c->filters && off >= c->subs[i].n * c->bucket_size)
        off -= c->subs[i++].n * c->bucket_size;
    const uint64_t size = c->subs[i].n * c->bucket_size;
    if (off > size || len > size - off)
        return bk_fail(BK_EINVAL, "%zu bytes at offset %llu of a sub-filter of %llu", len,
                       (unsigned long long)off, (unsigned long long)size);
    memcpy(c->subs[i].slots + off, data, len);
    return BK_OK;
}
