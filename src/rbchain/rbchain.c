/*
 * rbchain.c - RedisBloom's scalable Bloom chain (bloomkit_redisbloom.h):
 * links oldest first, each sized by link.c; an item is present when any
 * link has all its bits; a new item goes into the newest link, and when
 * that is full a link of growth times its entries at half its error is
 * appended with the chain's options (FORMATS.md sections 2 and 3).
 */
#include "rbchain.h"

#include <string.h>

#include "../common/alloc.h"
#include "../common/error.h"

bk_rbchain *bk_rb_chain_empty(const bk_allocator *a, uint64_t size, uint32_t options,
                              uint32_t growth)
{
    bk_rbchain *c = bk_mem_zeroed(a, 1, sizeof *c);
    if (!c)
        return NULL;
    c->alloc = *a;
    c->size = size;
    c->options = options;
    c->growth = growth;
    return c;
}

static bk_rbchain *chain_alloc(void)
{
    const bk_allocator a = bk_current_allocator();
    return bk_rb_chain_empty(&a, 0, 0, 0);
}

/* Room for one link more: BK_OK or BK_ENOMEM. */
static int room(bk_rbchain *c)
{
    if (c->n < c->cap)
        return BK_OK;
    if (c->cap > UINT32_MAX / 2)
        return bk_fail(BK_ENOMEM, "a chain of %u links", c->n);
    const uint32_t cap = c->cap ? c->cap * 2 : 4;
    bk_rbchain_link *links = bk_mem_zeroed(&c->alloc, cap, sizeof *links);
    uint8_t *own = bk_mem_zeroed(&c->alloc, cap, 1);
    if (!links || !own) {
        bk_mem_free(&c->alloc, links);
        bk_mem_free(&c->alloc, own);
        return bk_fail(BK_ENOMEM, "room for %u links", cap);
    }
    if (c->n) {
        memcpy(links, c->links, c->n * sizeof *links);
        memcpy(own, c->own, c->n);
    }
    bk_mem_free(&c->alloc, c->links);
    bk_mem_free(&c->alloc, c->own);
    c->links = links;
    c->own = own;
    c->cap = cap;
    return BK_OK;
}

int bk_rb_chain_take(bk_rbchain *c, const bk_rbchain_link *l, uint8_t *data, int own)
{
    const int rc = room(c);
    if (rc != BK_OK)
        return rc;
    c->links[c->n] = *l;
    c->links[c->n].data = data;
    c->own[c->n] = (uint8_t)own;
    c->n++;
    return BK_OK;
}

int bk_rb_chain_push(bk_rbchain *c, const bk_rbchain_link *l)
{
    const int own = c->payloads ? BK_OWN_PAYLOAD : BK_OWN_MEM;
    uint8_t *data = own == BK_OWN_PAYLOAD ? bk_payload_alloc(&c->alloc, (size_t)l->bytes)
                                          : bk_mem_zeroed(&c->alloc, 1, (size_t)l->bytes);
    if (!data) /* alloc.h: neither aborts */
        return bk_fail(BK_ENOMEM, "a link of %llu bytes", (unsigned long long)l->bytes);
    const int rc = bk_rb_chain_take(c, l, data, own);
    if (rc != BK_OK)
        bk_own_free(&c->alloc, data, (size_t)l->bytes, own);
    return rc;
}

void bk_rbchain_free(bk_rbchain *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->n; i++)
        bk_own_free(&c->alloc, c->links[i].data, (size_t)c->links[i].bytes, c->own[i]);
    bk_mem_free(&c->alloc, c->links);
    bk_mem_free(&c->alloc, c->own);
    bk_mem_free(&c->alloc, c);
}

rb_pair bk_rb_pair_of(const bk_rbchain *c, const void *item, size_t len)
{
    bk_hash h;
    if (c->hkey) /* a filter's: its digest */
        bk_hash_key(c->alg, c->hkey, item, len, &h);
    else /* RedisBloom's own value: its pair, as its options say */
        bk_hash_murmur(bk_rb_murmur_form(c->options), item, len, &h);
    const rb_pair p = {h.h1, h.h2};
    return p;
}

int bk_rbchain_new(uint64_t capacity, double error, uint32_t growth, int nonscaling,
                   uint64_t max_bytes, bk_rbchain **out)
{
    bk_call_begin();
    if (!out)
        return bk_fail(BK_EINVAL, "rbchain_new: no output");
    const uint32_t options =
        BK_RBCHAIN_FORCE64 | BK_RBCHAIN_NOROUND | (nonscaling ? BK_RBCHAIN_NO_SCALING : 0);
    bk_rbchain_link l;
    int rc = bk_rb_link_size(&l, capacity, nonscaling ? error : error * 0.5, options);
    if (rc != BK_OK)
        return rc;
    if (max_bytes && l.bytes > max_bytes)
        return bk_full_arrays(l.bytes, max_bytes);
    bk_rbchain *c = chain_alloc();
    if (!c)
        return bk_fail(BK_ENOMEM, "a chain");
    c->options = options;
    c->growth = growth;
    rc = bk_rb_chain_push(c, &l);
    if (rc != BK_OK) {
        bk_rbchain_free(c);
        return rc;
    }
    *out = c;
    return BK_OK;
}

int bk_rbchain_from(const bk_rbchain_info *info, const bk_rbchain_link *links, uint32_t n,
                    unsigned flags, uint64_t max_bytes, bk_rbchain **out)
{
    bk_call_begin();
    if (!info || !links || !out)
        return bk_fail(BK_EINVAL, "rbchain_from: no fields or output");
    if (n == 0)
        return bk_fail(BK_EINVAL, "a chain of no links");
    uint64_t sizes = 0, bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        const int rc = bk_rb_link_check(&links[i], i);
        if (rc != BK_OK)
            return rc;
        sizes += links[i].size;
        bytes = links[i].bytes > UINT64_MAX - bytes ? UINT64_MAX : bytes + links[i].bytes;
    }
    if ((flags & BK_RB_STRICT) && (info->options & ~BK_RBCHAIN_OPTIONS))
        return bk_fail(BK_EINVAL, "unknown option bits 0x%x", (unsigned)info->options);
    if ((flags & BK_RB_STRICT) && sizes != info->size)
        return bk_fail(BK_EINVAL, "the chain's size %llu is not its links' %llu",
                       (unsigned long long)info->size, (unsigned long long)sizes);
    if (max_bytes && bytes > max_bytes)
        return bk_full_arrays(bytes, max_bytes);
    bk_rbchain *c = chain_alloc();
    if (!c)
        return bk_fail(BK_ENOMEM, "a chain");
    c->size = info->size;
    c->options = info->options;
    c->growth = info->growth;
    for (uint32_t i = 0; i < n; i++) {
        const int rc = links[i].bytes > SIZE_MAX / 2 ? bk_fail(BK_ENOMEM, "a link of %llu bytes",
                                                               (unsigned long long)links[i].bytes)
                                                     : bk_rb_chain_push(c, &links[i]);
        if (rc != BK_OK) {
            bk_rbchain_free(c);
            return rc;
        }
        if (links[i].data)
            memcpy(c->links[i].data, links[i].data, (size_t)links[i].bytes);
    }
    *out = c;
    return BK_OK;
}

/* Newest first. */
int bk_rb_chain_has(const bk_rbchain *c, const rb_pair *p)
{
    for (uint32_t i = c->n; i-- > 0;)
        if (bk_rb_link_has(&c->links[i], p))
            return 1;
    return 0;
}

int bk_rbchain_exists(const bk_rbchain *c, const void *item, size_t len)
{
    if (!c || (!item && len))
        return 0;
    const rb_pair p = bk_rb_pair_of(c, item, len);
    return bk_rb_chain_has(c, &p);
}

/* Append the link that follows the newest: growth times its entries, half
 * its error, the chain's options. */
static int push_next(bk_rbchain *c)
{
    const bk_rbchain_link *last = &c->links[c->n - 1];
    if (c->growth && last->entries > UINT64_MAX / c->growth)
        return bk_fail(BK_ERANGE, "the next link's capacity passes 2^64");
    bk_rbchain_link l;
    const int rc = bk_rb_link_size(&l, last->entries * c->growth, last->error * 0.5, c->options);
    return rc != BK_OK ? rc : bk_rb_chain_push(c, &l);
}

uint64_t bk_rbchain_next_bytes(const bk_rbchain *c)
{
    const bk_rbchain_link *last = &c->links[c->n - 1];
    bk_rbchain_link l;
    if ((c->options & BK_RBCHAIN_NO_SCALING) || (c->max_links && c->n >= c->max_links) ||
        (c->growth && last->entries > UINT64_MAX / c->growth))
        return 0;
    bk_call_begin();
    return bk_rb_link_size(&l, last->entries * c->growth, last->error * 0.5, c->options) == BK_OK
               ? l.bytes
               : 0;
}

int bk_rbchain_add(bk_rbchain *c, const void *item, size_t len, const bk_rb_grow *grow)
{
    bk_call_begin();
    if (!c || (!item && len))
        return bk_fail(BK_EINVAL, "rbchain_add: no chain or item");
    const rb_pair p = bk_rb_pair_of(c, item, len);
    return bk_rb_chain_add(c, &p, grow);
}

int bk_rb_chain_add(bk_rbchain *c, const rb_pair *p, const bk_rb_grow *grow)
{
    if (bk_rb_chain_has(c, p))
        return 0;
    bk_rbchain_link *l = &c->links[c->n - 1];
    if (l->size >= l->entries) {
        if (c->options & BK_RBCHAIN_NO_SCALING)
            return bk_fail(BK_EFULL, "a non-scaling filter of %llu items is full",
                           (unsigned long long)l->entries);
        if (c->max_links && c->n >= c->max_links)
            return bk_fail(BK_EFULL,
                           "the chain has %u links, the most a bloomkit file or key holds: "
                           "make it with a larger capacity or expansion",
                           c->n);
        int rc = 0;
        if (grow && grow->check) {
            bk_rbchain_info in;
            bk_rb_chain_info(c, &in);
            rc = grow->check(grow->arg, in.bytes, bk_rbchain_next_bytes(c));
        }
        if (rc != 0)
            return rc;
        rc = push_next(c);
        if (rc != BK_OK)
            return rc;
        l = &c->links[c->n - 1];
    }
    if (bk_rb_link_set(l, p) == 0)
        return 0; /* not reached: some bit was clear, or has() had said yes */
    l->size++;
    c->size++;
    return 1;
}

void bk_rb_chain_info(const bk_rbchain *c, bk_rbchain_info *out)
{
    memset(out, 0, sizeof *out);
    out->size = c->size;
    out->links = c->n;
    out->options = c->options;
    out->growth = c->growth;
    for (uint32_t i = 0; i < c->n; i++) {
        out->capacity += c->links[i].entries;
        out->bytes += c->links[i].bytes;
    }
}

int bk_rb_chain_link(const bk_rbchain *c, uint32_t i, bk_rbchain_link *out)
{
    if (!c || !out || i >= c->n)
        return BK_ERANGE;
    *out = c->links[i];
    return BK_OK;
}
