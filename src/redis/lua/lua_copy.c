/*
 * lua_copy.c - the Lua mode's push, pull and drop (lua.h): copying filters
 * between this process and its keys.
 *
 * Cells travel in chunks of 1 MiB (SETRANGE / GETRANGE), so a 512 MiB block
 * never needs one 512 MiB request. Chunks that are all zero are not sent: a
 * missing key or a short string reads as zeros, which is how Redis itself
 * grows strings under SETBIT.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "bloomkit_redis.h"

#include "../../common/alloc.h"
#include "../../common/bits.h"
#include "../../common/error.h"
#include "rfilter.h"

#define CHUNK ((uint64_t)1 << 20)

static int reply_error(bk_rfilter *rf, redisReply *r, const char *what)
{
    const int rc = bk_fail(BK_ESERVER, "redis filter %s: %s: %.200s", rf->name, what,
                           r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    freeReplyObject(r);
    return rc;
}

/* A write whose reply is an integer (SETRANGE, HSET, HDEL, DEL), `what`
 * naming it in the error: BK_OK, or the error with the reply freed. */
static int write_int(bk_rfilter *rf, const char *key, const char *what, const char *fmt, ...)
{
    redisReply *r;
    va_list ap;
    va_start(ap, fmt);
    const int rc = bk_rconn_vcallf(bk_rfilter_conn(rf), key, &r, fmt, ap);
    va_end(ap);
    if (rc != BK_OK)
        return rc;
    if (r->type != REDIS_REPLY_INTEGER)
        return reply_error(rf, r, what);
    freeReplyObject(r);
    return BK_OK;
}

static int all_zero(const uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* Cells of block b of slice j from data (the slice's whole payload). */
static int push_block(bk_rfilter *rf, uint32_t j, uint64_t b, const uint8_t *data)
{
    char key[BK_REDIS_KEY_MAX];
    bk_rfilter_data_key(rf, j, b, key, sizeof key);
    const uint64_t start = b * rf->block_bytes, len = bk_rfilter_block_len(rf, j, b);
    for (uint64_t off = 0; off < len; off += CHUNK) {
        const uint64_t n = len - off < CHUNK ? len - off : CHUNK;
        if (all_zero(data + start + off, n))
            continue;
        const int rc = write_int(rf, key, "SETRANGE", "SETRANGE %s %llu %b", key,
                                 (unsigned long long)off, data + start + off, (size_t)n);
        if (rc != BK_OK)
            return rc;
    }
    return BK_OK;
}

static int hset_counts(bk_rfilter *rf, uint64_t b, uint32_t j, uint64_t bits, uint64_t keys,
                       uint64_t sat)
{
    char key[BK_REDIS_KEY_MAX];
    bk_rfilter_count_key(rf, b, key, sizeof key);
    return write_int(rf, key, "HSET", "HSET %s bits.%u %llu keys.%u %llu sat.%u %llu", key,
                     (unsigned)j, (unsigned long long)bits, (unsigned)j, (unsigned long long)keys,
                     (unsigned)j, (unsigned long long)sat);
}

static int push_all(bk_rfilter *rf, const bk_filter *f)
{
    const uint32_t n = f->ops->slice_count(f);
    int rc = bk_rfilter_set_slices(rf, n);
    for (uint32_t j = 0; j < n && rc == BK_OK; j++) {
        bk_slice_view v;
        f->ops->slice_view(f, j, &v);
        if (v.m != rf->s[j].v.m || v.k != rf->s[j].v.k || v.nbytes != rf->s[j].v.nbytes ||
            v.probes != rf->s[j].v.probes)
            return bk_fail(BK_EINCOMPAT,
                           "push: slice %" PRIu32 " has another shape than its "
                           "configuration gives",
                           j);
        const uint64_t blocks = bk_rfilter_blocks(rf, j);
        for (uint64_t b = 0; b < blocks && rc == BK_OK; b++) {
            rc = push_block(rf, j, b, v.data);
            if (rc != BK_OK || (b && (rf->kind->slice_keys || rf->counts_in_meta)))
                continue;
            /* Counts per count hash: with counts=meta (and for scalable) one
             * for all, written once per slice from the view; with
             * counts=blocks one per block, recounted from its cells, keys
             * going to block 0. */
            uint64_t bits = v.set_bits, sat = v.saturated;
            if (!rf->counts_in_meta && blocks > 1) {
                const uint8_t *p = v.data + b * rf->block_bytes;
                const uint64_t len = bk_rfilter_block_len(rf, j, b);
                if (rf->cell_bits == 4)
                    bk_nibble_census(p, (size_t)len, &bits, &sat);
                else
                    bits = bk_popcount(p, (size_t)len);
            }
            rc = hset_counts(rf, b, j, bits, b == 0 ? v.keys : 0, sat);
        }
    }
    char key[BK_REDIS_KEY_MAX];
    if (rc == BK_OK && rf->kind->slice_keys) {
        bk_rfilter_count_key(rf, 0, key, sizeof key);
        rc = write_int(rf, key, "HSET", "HSET %s slices %u", key, (unsigned)n);
    }
    if (rc == BK_OK)
        rc = write_int(rf, rf->name, "HDEL", "HDEL %s pushing", rf->name);
    return rc;
}

int bk_lua_can_push(const bk_filter *f, unsigned *flags)
{
    const bk_lua_kind *kind = bk_lua_kind_of(f->cfg.variant);
    if (!kind)
        return bk_lua_refuses("(push)", f->cfg.variant);
    if (kind->not_copied)
        return bk_fail(BK_ENOTSUP, "push: %s", kind->not_copied);
    bk_slice_view v0;
    f->ops->slice_view(f, 0, &v0);
    if (v0.probes == BK_PROBES_DH && kind->slice_keys)
        return bk_fail(BK_EINCOMPAT,
                       "push: a scalable filter from a format-1 file keeps the older slice "
                       "sizing, which Redis filters no longer lay out");
    if (v0.probes == BK_PROBES_DH)
        *flags |= BK_ROPEN_PROBES_DH;
    if (bk_chain_rule(&f->cfg, &v0, 1) == BK_SLICE_AVERAGE)
        *flags |= BK_ROPEN_SLICES_AVERAGE; /* a chain of 0.1.0: its next slices as it sized them */
    return BK_OK;
}

int bk_lua_push_into(bk_filter *dst, const bk_filter *f)
{
    bk_rfilter *rf = (bk_rfilter *)dst;
    const int rc = push_all(rf, f);
    if (rc != BK_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", bk_last_error());
        if (bk_rconn_broken(bk_rfilter_conn(rf)) == 0 ||
            bk_rconn_reconnect(bk_rfilter_conn(rf)) == BK_OK)
            bk_rfilter_drop(rf); /* best effort: the name is ours (we created it) */
        bk_fail(rc, "%s", detail);
    }
    return rc;
}

/* Read slice j's cells into data (nbytes, zeroed). */
static int pull_slice(bk_rfilter *rf, uint32_t j, uint8_t *data)
{
    char key[BK_REDIS_KEY_MAX];
    const uint64_t blocks = bk_rfilter_blocks(rf, j);
    for (uint64_t b = 0; b < blocks; b++) {
        bk_rfilter_data_key(rf, j, b, key, sizeof key);
        const uint64_t start = b * rf->block_bytes, len = bk_rfilter_block_len(rf, j, b);
        for (uint64_t off = 0; off < len; off += CHUNK) {
            const uint64_t n = len - off < CHUNK ? len - off : CHUNK;
            redisReply *r;
            const int rc =
                bk_rconn_callf(bk_rfilter_conn(rf), key, &r, "GETRANGE %s %llu %llu", key,
                               (unsigned long long)off, (unsigned long long)(off + n - 1));
            if (rc != BK_OK)
                return rc;
            if (r->type != REDIS_REPLY_STRING || r->len > n)
                return reply_error(rf, r, "GETRANGE");
            memcpy(data + start + off, r->str, r->len); /* shorter: the rest stays zero */
            const int more = r->len == n;
            freeReplyObject(r);
            if (!more)
                break; /* the string ends here */
        }
    }
    return BK_OK;
}

int bk_lua_pull_from(bk_filter *src, bk_filter **out)
{
    bk_rfilter *rf = (bk_rfilter *)src;
    if (rf->kind->not_copied)
        return bk_fail(BK_ENOTSUP, "pull: %s", rf->kind->not_copied);
    int rc = BK_OK;
    const bk_allocator a = bk_current_allocator();
    const uint32_t n = rf->nslices;
    bk_slice_view views[BK_LUA_CHAIN_MAX];
    uint32_t got = 0;
    for (; got < n && rc == BK_OK; got++) {
        views[got] = rf->s[got].v;
        if (views[got].nbytes > SIZE_MAX) {
            rc = bk_fail(BK_ERANGE, "pull: slice too large for this machine");
            break;
        }
        views[got].data = bk_payload_alloc(&a, (size_t)views[got].nbytes);
        if (!views[got].data) {
            rc = bk_fail(BK_ENOMEM, "pull: out of memory for %" PRIu64 " bytes", views[got].nbytes);
            break;
        }
        rc = pull_slice(rf, got, views[got].data);
        if (rc != BK_OK) {
            got++;
            break;
        }
    }
    if (rc == BK_OK)
        rc = bk_variant_adopt(&rf->base.cfg, &a, views, n, 0, out);
    if (rc != BK_OK)
        for (uint32_t j = 0; j < got; j++)
            if (views[j].data)
                bk_payload_free(&a, views[j].data, (size_t)views[j].nbytes);
    return rc;
}

/* "NAME:{NAME[}/]*" with NAME's glob characters escaped: every key of a
 * filter, in NAME's slot (tag {NAME}) and of its further blocks ({NAME/b}),
 * and no other name's. */
static void key_pattern(const char *name, char *buf, size_t len)
{
    size_t o = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (const char *p = name; *p && o + 3 < len; p++) {
            if (strchr("*?[]\\", *p))
                buf[o++] = '\\';
            buf[o++] = *p;
        }
        const char *sep = pass == 0 ? ":{" : "[}/]*";
        for (; *sep && o + 1 < len; sep++)
            buf[o++] = *sep;
    }
    buf[o] = '\0';
}

/* A name that is not a whole filter (a metadata hash holding only counts,
 * left by a writer that raced a drop of an older bloomkit, or a half-made
 * one): removed when every field of its hash is one bloomkit writes, with
 * every key under its prefix on its server (SCAN, a cursor at a time, so
 * the server is never held); anything else at the name is not ours and
 * stays. */
int bk_lua_drop_damaged(const char *url, const char *why)
{
    bk_redis_url u;
    int rc = bk_redis_url_parse(url, &u);
    bk_rconn *c = NULL;
    if (rc == BK_OK)
        rc = bk_rconn_open(&u, &c);
    redisReply *r = NULL;
    if (rc == BK_OK)
        rc = bk_rconn_callf(c, u.name, &r, "HGETALL %s", u.name);
    if (rc == BK_OK && (r->type != REDIS_REPLY_ARRAY || r->elements % 2))
        rc = bk_fail(BK_ESERVER, "%s; the key is not a hash, so it is not bloomkit's: left alone",
                     why);
    for (size_t i = 0; rc == BK_OK && i < r->elements; i += 2)
        if (r->element[i]->type != REDIS_REPLY_STRING ||
            !bk_redis_field_ours(r->element[i]->str, r->element[i]->len))
            rc = bk_fail(BK_ESERVER,
                         "%s; its hash holds fields bloomkit does not write, so it is not "
                         "bloomkit's: left alone",
                         why);
    if (r)
        freeReplyObject(r);
    char pattern[2 * BK_REDIS_KEY_MAX + 8], cursor[32] = "0";
    key_pattern(u.name, pattern, sizeof pattern);
    do {
        if (rc != BK_OK)
            break;
        rc = bk_rconn_callf(c, u.name, &r, "SCAN %s MATCH %s COUNT 1000", cursor, pattern);
        if (rc != BK_OK)
            break;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_ARRAY)
            rc = bk_fail(BK_ESERVER, "drop %s: SCAN sent an unexpected reply", u.name);
        else
            snprintf(cursor, sizeof cursor, "%s", r->element[0]->str);
        for (size_t i = 0; rc == BK_OK && i < r->element[1]->elements; i++) {
            const redisReply *k = r->element[1]->element[i];
            redisReply *d;
            if (k->type == REDIS_REPLY_STRING &&
                (rc = bk_rconn_callf(c, k->str, &d, "DEL %b", k->str, k->len)) == BK_OK)
                freeReplyObject(d);
        }
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    if (rc == BK_OK && (rc = bk_rconn_callf(c, u.name, &r, "DEL %s", u.name)) == BK_OK)
        freeReplyObject(r);
    bk_rconn_close(c);
    bk_redis_url_free(&u);
    return rc;
}

int bk_lua_drop(bk_filter *f)
{
    return bk_rfilter_drop((bk_rfilter *)f);
}
