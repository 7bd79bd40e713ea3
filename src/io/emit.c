/* emit.c - a filter's bytes in file order, through a sink (see emit.h). */
#include "emit.h"

#include <string.h>

#include "../common/debug.h"
#include "../common/error.h"

int bk_emit_describe(const bk_filter *f, bk_file_header *h)
{
    memset(h, 0, sizeof *h);
    h->cfg = *bk_filter_config(f);
    char err[200];
    /* a RedisBloom value kept with its own limits may state what no
     * configuration does (bloomkit_redisbloom.h, BK_RB_FILE) */
    if (bk_config_validate(&h->cfg, err, sizeof err) != BK_OK)
        return bk_fail(BK_ENOTSUP, "a file cannot state this filter: %s", err);
    h->version = BK_FILE_VERSION;
    h->nslices = bk_filter_slices(f);
    if (h->nslices > BK_FILE_MAX_SLICES) /* variants keep within it (window: its budget) */
        return BK_ERANGE;
    for (uint32_t i = 0; i < h->nslices; i++)
        bk_filter_slice(f, i, &h->slices[i]);
    return bk_file_layout(h);
}

/* Padding up to slice i's offset, then its payload through the bounce. */
static int emit_slice(bk_file_header *h, bk_payload_sum *ps, uint64_t *pos, uint32_t i,
                      const bk_slice_view *v, uint8_t *bounce, bk_emit_sink sink, void *ctx)
{
    static const uint8_t zeros[BK_FILE_ALIGN];
    const uint64_t pad = h->offsets[i] - *pos;
    if (pad && sink(ctx, zeros, (size_t)pad) != 0)
        return 1;
    uint64_t set = 0, sat = 0;
    bk_payload_sum_slice(ps, v->m, bk_file_cells(&h->cfg));
    for (uint64_t off = 0; off < v->nbytes; off += BK_EMIT_CHUNK) {
        const size_t n =
            (size_t)(v->nbytes - off < BK_EMIT_CHUNK ? v->nbytes - off : BK_EMIT_CHUNK);
        memcpy(bounce, v->data + off, n);
        bk_payload_sum_feed(ps, bounce, n, &set, &sat);
        if (sink(ctx, bounce, n) != 0)
            return 1;
    }
    /* the census of the bytes emitted: a variant writes only its cells */
    BK_ASSERT(set <= v->m && sat <= set && bk_payload_sum_stray(ps) == 0);
    h->slices[i].set_bits = set;
    h->slices[i].saturated = sat;
    h->slices[i].gen = v->gen; /* the variant's own word, settled */
    *pos = h->offsets[i] + v->nbytes;
    return BK_OK;
}

int bk_emit_payloads(const bk_filter *f, bk_file_header *h, uint8_t *bounce, bk_emit_sink sink,
                     void *ctx, const bk_allocator *a)
{
    bk_payload_sum *ps = bk_payload_sum_new(a);
    if (!ps)
        return BK_ENOMEM;
    bk_filter_settle(f); /* the figures the views carry, counted */
    uint64_t pos = h->header_size;
    int rc = BK_OK;
    for (uint32_t i = 0; rc == BK_OK && i < h->nslices; i++) {
        bk_slice_view v;
        bk_filter_slice(f, i, &v);
        rc = emit_slice(h, ps, &pos, i, &v, bounce, sink, ctx);
    }
    h->payload_checksum = bk_payload_sum_digest(ps);
    bk_payload_sum_free(ps, a);
    return rc;
}
