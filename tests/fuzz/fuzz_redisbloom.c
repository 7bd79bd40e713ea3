/* fuzz_redisbloom.c - libFuzzer target: RedisBloom's dump parsers
 * (bloomkit_redisbloom.h's bk_chunked_*), what BF.LOADCHUNK and
 * CF.LOADCHUNK run on bytes from any client. Input: a kind byte (bit 0: cuckoo), a header (a
 * chain's 20 + 53 n bytes, n from its own count field, or the cuckoo's 38), then chunks (a 4-byte
 * little-endian iterator, a 2-byte length, the bytes), then items. An accepted header's structure
 * takes the chunks (refused ones change nothing), then adds, lookups, deletes and a compaction of
 * the items, and after all of it the property must hold: its dump (header and chunks) loads into a
 * filter whose dump is the same bytes. Headers claiming more than 64 MiB are refused by the
 * parser's own limit, before anything is allocated. */
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

/* A filter's dump: the header, then the chunks with their iterators. */
static dumped dump_of(const bk_filter *f)
{
    dumped d = {NULL, 0};
    size_t hlen = 0;
    bk_chunked_header(f, NULL, 0, &hlen);
    uint8_t *h = malloc(hlen);
    if (!h || bk_chunked_header(f, h, hlen, &hlen) != BK_OK)
        abort();
    put(&d, h, hlen);
    free(h);
    long long it = 1;
    for (;;) {
        const uint8_t *data;
        size_t len;
        if (bk_chunked_next(f, it, &data, &len, &it) != BK_OK)
            abort();
        if (!len)
            return d;
        put(&d, &it, sizeof it);
        put(&d, data, len);
    }
}

/* The filter's dump loaded again dumps as the same bytes. */
static void round_trip(const bk_filter *f, bk_variant v)
{
    const dumped a = dump_of(f);
    size_t hlen = 0;
    bk_chunked_header(f, NULL, 0, &hlen);
    bk_filter *copy;
    if (bk_chunked_new(v, a.bytes, hlen, 0, 0, &copy) != BK_OK)
        abort(); /* its own header refused */
    long long it = 1;
    for (;;) {
        const uint8_t *data;
        size_t len;
        bk_chunked_next(f, it, &data, &len, &it);
        if (!len)
            break;
        if (bk_chunked_load(copy, it, data, len) != BK_OK)
            abort(); /* its own chunk refused */
    }
    const dumped b = dump_of(copy);
    if (a.len != b.len || memcmp(a.bytes, b.bytes, a.len) != 0)
        abort();
    free(a.bytes);
    free(b.bytes);
    bk_free(copy);
}

/* Chunks, then items, from data[0 .. size) into the filter. */
static size_t feed_chunks(const uint8_t *data, size_t size, bk_filter *f)
{
    size_t at = 0;
    while (at + 6 <= size && data[at] != 0xff) {
        const long long it = (long long)(int32_t)le(data + at, 4);
        size_t n = (size_t)le(data + at + 4, 2);
        at += 6;
        if (n > size - at)
            n = size - at;
        bk_chunked_load(f, it, data + at, n);
        at += n;
    }
    return at < size ? at + 1 : size;
}

/* Growth within MAX_BYTES, as the module keeps a command's growth within
 * its limit: refused past it, nothing changed. */
static int within_max(void *arg, uint64_t used, uint64_t next)
{
    (void)arg;
    return used + next > MAX_BYTES ? BK_EFULL : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const int cuckoo = data[0] & 1;
    const bk_variant v = cuckoo ? BK_VARIANT_RBCUCKOO : BK_VARIANT_RBCHAIN;
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
    bk_filter *f = NULL;
    if (bk_chunked_new(v, data, hlen, 0, MAX_BYTES, &f) != BK_OK)
        return 0;
    if (bk_set_grow_check(f, within_max, NULL) != BK_OK)
        abort();
    size_t at = hlen + feed_chunks(data + hlen, size - hlen, f);
    /* items: one byte of length, its bytes, each added, looked up, and
     * (cuckoo) every third removed; growth only where it stays small */
    for (unsigned i = 0; at < size && i < 64; i++) {
        size_t n = data[at++] % 16;
        if (n > size - at)
            n = size - at;
        const uint8_t *item = data + at;
        at += n;
        if (cuckoo)
            bk_set_add_once(f, (int)(i & 1)); /* CF.ADDNX every other item */
        const int added = bk_add(f, item, n);
        if ((added == 1 || added == 0) && bk_contains(f, item, n) != 1)
            abort(); /* a false negative */
        uint64_t copies = 0;
        if (cuckoo && (bk_count(f, item, n, &copies) != BK_OK || (added >= 0 && copies == 0)))
            abort(); /* an item held but not counted */
        if (cuckoo && i % 3 == 2)
            bk_remove(f, item, n);
    }
    if (cuckoo && bk_compact(f) != BK_OK)
        abort();
    round_trip(f, v);
    bk_free(f);
    return 0;
}
