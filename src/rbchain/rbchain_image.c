/*
 * rbchain_image.c - RedisBloom's dump of a chain (FORMATS.md section 5): the
 * SCANDUMP header, a packed little-endian struct of 20 + 53 * links bytes,
 * and the links' arrays cut into chunks addressed by iterator = byte
 * offset + 1 in their concatenation, oldest link first; a chunk never spans
 * two links.
 */
#include "rbchain.h"

#include <string.h>

#include "../common/alloc.h"
#include "../common/bits.h"
#include "../common/error.h"

#define HEAD 20
#define LINK 53

static void put_double(uint8_t *p, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    bk_le_put(p, v, 8);
}

static double get_double(const uint8_t *p)
{
    const uint64_t v = bk_le_get(p, 8);
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

size_t bk_rbchain_header(const bk_rbchain *c, void *buf, size_t cap)
{
    const size_t need = HEAD + (size_t)LINK * c->n;
    if (!buf || cap < need)
        return need;
    uint8_t *p = buf;
    bk_le_put(p, c->size, 8);
    bk_le_put(p + 8, c->n, 4);
    bk_le_put(p + 12, c->options, 4);
    bk_le_put(p + 16, c->growth, 4);
    for (uint32_t i = 0; i < c->n; i++) {
        const bk_rbchain_link *l = &c->links[i];
        uint8_t *q = p + HEAD + (size_t)LINK * i;
        bk_le_put(q, l->bytes, 8);
        bk_le_put(q + 8, l->bits, 8);
        bk_le_put(q + 16, l->size, 8);
        put_double(q + 24, l->error);
        put_double(q + 32, l->bpe);
        bk_le_put(q + 40, l->hashes, 4);
        bk_le_put(q + 44, l->entries, 8);
        q[52] = (uint8_t)l->n2;
    }
    return need;
}

int bk_rbchain_header_read(const void *buf, size_t len, uint64_t max_bytes, bk_rbchain **out)
{
    bk_call_begin();
    if ((!buf && len) || !out)
        return bk_fail(BK_EINVAL, "rbchain_header_read: no header or output");
    const uint8_t *p = buf;
    if (len < HEAD)
        return bk_fail(BK_EINVAL, "a header of %zu bytes (at least %d)", len, HEAD);
    bk_rbchain_info info = {0};
    info.size = bk_le_get(p, 8);
    const uint64_t n = bk_le_get(p + 8, 4);
    info.options = (uint32_t)bk_le_get(p + 12, 4);
    info.growth = (uint32_t)bk_le_get(p + 16, 4);
    if (n == 0 || len != HEAD + LINK * n)
        return bk_fail(BK_EINVAL, "a header of %zu bytes for %llu links", len,
                       (unsigned long long)n);
    bk_rbchain c = {0};
    c.alloc = bk_current_allocator();
    c.links = bk_mem_zeroed(&c.alloc, (size_t)n, sizeof *c.links);
    if (!c.links)
        return bk_fail(BK_ENOMEM, "%llu links", (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *q = p + HEAD + LINK * i;
        bk_rbchain_link *l = &c.links[i];
        l->bytes = bk_le_get(q, 8);
        l->bits = bk_le_get(q + 8, 8);
        l->size = bk_le_get(q + 16, 8);
        l->error = get_double(q + 24);
        l->bpe = get_double(q + 32);
        l->hashes = (unsigned)bk_le_get(q + 40, 4);
        l->entries = bk_le_get(q + 44, 8);
        l->n2 = q[52];
    }
    const int rc = bk_rbchain_from(&info, c.links, (uint32_t)n, BK_RB_STRICT, max_bytes, out);
    bk_mem_free(&c.alloc, c.links);
    return rc;
}

void bk_rbchain_chunk(const bk_rbchain *c, long long it, const uint8_t **data, size_t *len,
                      long long *next)
{
    *data = NULL;
    *len = 0;
    *next = 0;
    if (it < 1)
        return;
    uint64_t off = (uint64_t)it - 1;
    for (uint32_t i = 0; i < c->n; i++) {
        const bk_rbchain_link *l = &c->links[i];
        if (off < l->bytes) {
            const uint64_t left = l->bytes - off;
            *data = l->data + off;
            *len = left < BK_RB_CHUNK_MAX ? (size_t)left : BK_RB_CHUNK_MAX;
            *next = it + (long long)*len;
            return;
        }
        off -= l->bytes;
    }
}

int bk_rbchain_load_chunk(bk_rbchain *c, long long it, const void *data, size_t len)
{
    bk_call_begin();
    if (!c || (!data && len))
        return bk_fail(BK_EINVAL, "rbchain_load_chunk: no chain or data");
    if (it <= 0 || (unsigned long long)it < len)
        return bk_fail(BK_EINVAL, "iterator %lld for a chunk of %zu bytes", it, len);
    if ((unsigned long long)it == len)
        return bk_fail(BK_ENOTFOUND, "no link at offset -1");
    uint64_t off = (uint64_t)it - len - 1;
    for (uint32_t i = 0; i < c->n; i++) {
        bk_rbchain_link *l = &c->links[i];
        if (off < l->bytes) {
            if (len > l->bytes - off)
                return bk_fail(BK_ERANGE, "%zu bytes at offset %llu of a link of %llu", len,
                               (unsigned long long)off, (unsigned long long)l->bytes);
            if (len)
                memcpy(l->data + off, data, len);
            return BK_OK;
        }
        off -= l->bytes;
    }
    return bk_fail(BK_ENOTFOUND, "no link at offset %llu",
                   (unsigned long long)((uint64_t)it - len - 1));
}
