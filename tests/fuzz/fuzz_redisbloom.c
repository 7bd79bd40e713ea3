/* fuzz_redisbloom.c - libFuzzer target: RedisBloom's dump parsers
 * (bloomkit_redisbloom.h), what BF.LOADCHUNK and CF.LOADCHUNK run on bytes
 * from any client. Input: a kind byte (bit 0: cuckoo), a header (a chain's
 * 20 + 53 n bytes, n from its own count field, or the cuckoo's 38), then
 * chunks (a 4-byte little-endian iterator, a 2-byte length, the bytes),
 * then items. An accepted header's structure takes the chunks (refused ones
 * change nothing), then adds, lookups, deletes and a compaction of the
 * items, and after all of it the property must hold: its dump (header and
 * chunks) loads into a structure whose dump is the same bytes. Headers
 * claiming more than 64 MiB are refused by the parser's own limit, before
 * anything is allocated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit_redisbloom.h"

#define MAX_BYTES ((uint64_t)64 << 20)

static uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* A structure's dump: the header, then the chunks with their iterators. */
typedef struct dumped {
    uint8_t *bytes;
    size_t len;
} dumped;

static void put(dumped *d, const void *p, size_t n)
{
    uint8_t *b = realloc(d->bytes, d->len + n + 1);
    if (!b)
        abort();
    memcpy(b + d->len, p, n);
    d->bytes = b;
    d->len += n;
}

static dumped dump_chain(const bk_rbchain *c)
{
    dumped d = {NULL, 0};
    const size_t hlen = bk_rbchain_header(c, NULL, 0);
    uint8_t *h = malloc(hlen);
    if (!h)
        abort();
    bk_rbchain_header(c, h, hlen);
    put(&d, h, hlen);
    free(h);
    long long it = 1;
    for (;;) {
        const uint8_t *data;
        size_t len;
        bk_rbchain_chunk(c, it, &data, &len, &it);
        if (!len)
            return d;
        put(&d, &it, sizeof it);
        put(&d, data, len);
    }
}

static dumped dump_cuckoo(const bk_rbcuckoo *c)
{
    dumped d = {NULL, 0};
    uint8_t h[38];
    const size_t hlen = bk_rbcuckoo_header(c, h, sizeof h);
    put(&d, h, hlen);
    long long p = 1;
    for (;;) {
        const uint8_t *data;
        size_t len;
        bk_rbcuckoo_chunk(c, p, &data, &len, &p);
        if (!len)
            return d;
        put(&d, &p, sizeof p);
        put(&d, data, len);
    }
}

/* The chain's dump loaded again dumps as the same bytes. */
static void chain_round_trip(const bk_rbchain *c)
{
    const dumped a = dump_chain(c);
    const size_t hlen = bk_rbchain_header(c, NULL, 0);
    bk_rbchain *copy;
    if (bk_rbchain_header_read(a.bytes, hlen, 0, &copy) != BK_OK)
        abort(); /* its own header refused */
    long long it = 1;
    for (;;) {
        const uint8_t *data;
        size_t len;
        bk_rbchain_chunk(c, it, &data, &len, &it);
        if (!len)
            break;
        if (bk_rbchain_load_chunk(copy, it, data, len) != BK_OK)
            abort(); /* its own chunk refused */
    }
    const dumped b = dump_chain(copy);
    if (a.len != b.len || memcmp(a.bytes, b.bytes, a.len) != 0)
        abort();
    free(a.bytes);
    free(b.bytes);
    bk_rbchain_free(copy);
}

static void cuckoo_round_trip(const bk_rbcuckoo *c)
{
    const dumped a = dump_cuckoo(c);
    bk_rbcuckoo *copy;
    if (bk_rbcuckoo_header_read(a.bytes, 38, 0, &copy) != BK_OK)
        abort();
    long long p = 1;
    for (;;) {
        const uint8_t *data;
        size_t len;
        bk_rbcuckoo_chunk(c, p, &data, &len, &p);
        if (!len)
            break;
        if (bk_rbcuckoo_load_chunk(copy, p, data, len) != BK_OK)
            abort();
    }
    const dumped b = dump_cuckoo(copy);
    if (a.len != b.len || memcmp(a.bytes, b.bytes, a.len) != 0)
        abort();
    free(a.bytes);
    free(b.bytes);
    bk_rbcuckoo_free(copy);
}

/* Chunks, then items, from data[0 .. size) into the structure. */
static size_t feed_chunks(const uint8_t *data, size_t size, void *s, int cuckoo)
{
    size_t at = 0;
    while (at + 6 <= size && data[at] != 0xff) {
        const long long it = (long long)(int32_t)le(data + at, 4);
        size_t n = (size_t)le(data + at + 4, 2);
        at += 6;
        if (n > size - at)
            n = size - at;
        if (cuckoo)
            bk_rbcuckoo_load_chunk(s, it, data + at, n);
        else
            bk_rbchain_load_chunk(s, it, data + at, n);
        at += n;
    }
    return at < size ? at + 1 : size;
}

/* Growth within MAX_BYTES, as the module keeps a command's growth within
 * its limit: refused past it, nothing changed. */
static int within_max(void *arg, uint64_t used, uint64_t next)
{
    (void)arg;
    return used + next > MAX_BYTES ? BK_RB_GROW : 0;
}
static const bk_rb_grow within = {within_max, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const int cuckoo = data[0] & 1;
    data++;
    size--;
    size_t hlen;
    if (cuckoo) {
        hlen = 38;
        if (size < hlen)
            return 0;
    } else {
        if (size < 20)
            return 0;
        const uint64_t n = le(data + 8, 4);
        hlen = n > (size - 20) / 53 ? size : (size_t)(20 + 53 * n);
    }
    void *s = NULL;
    const int rc = cuckoo ? bk_rbcuckoo_header_read(data, hlen, MAX_BYTES, (bk_rbcuckoo **)&s)
                          : bk_rbchain_header_read(data, hlen, MAX_BYTES, (bk_rbchain **)&s);
    if (rc != BK_OK)
        return 0;
    size_t at = hlen + feed_chunks(data + hlen, size - hlen, s, cuckoo);
    /* items: one byte of length, its bytes, each added, looked up, and
     * (cuckoo) every third removed; growth only where it stays small */
    for (unsigned i = 0; at < size && i < 64; i++) {
        size_t n = data[at++] % 16;
        if (n > size - at)
            n = size - at;
        const uint8_t *item = data + at;
        at += n;
        if (cuckoo) {
            bk_rbcuckoo *c = s;
            bk_rbcuckoo_add(c, item, n, BK_RB_NX * (i & 1), &within);
            if (!bk_rbcuckoo_exists(c, item, n) && bk_rbcuckoo_count(c, item, n) != 0)
                abort();
            if (i % 3 == 2)
                bk_rbcuckoo_remove(c, item, n);
        } else {
            bk_rbchain *c = s;
            const int added = bk_rbchain_add(c, item, n, &within);
            if ((added == 1 || added == 0) && !bk_rbchain_exists(c, item, n))
                abort(); /* a false negative */
        }
    }
    if (cuckoo) {
        bk_rbcuckoo_compact(s, 0);
        cuckoo_round_trip(s);
        bk_rbcuckoo_free(s);
    } else {
        chain_round_trip(s);
        bk_rbchain_free(s);
    }
    return 0;
}
