/*
 * rfilter.c - the Redis store behind the common vtable: key names, slice
 * shapes, and the pipeline every operation goes through (see rfilter.h).
 *
 * One engine runs every operation, single or batched: build one command per
 * key, send them all, read the replies in order. A reply can ask for the
 * command to be sent again: NOSCRIPT (scripts reloaded first), a scalable
 * chain that grew meanwhile (shapes recomputed first), or a lost connection
 * (reconnect first). Only operations that are safe to repeat are sent again
 * after a lost connection: adds of standard and scalable filters (a repeated
 * add of an applied key answers "present", never "new") and lookups.
 * Counting adds and removes are not (a repeat would count twice): their
 * caller gets BK_EIO saying their fate is unknown.
 */
#define _POSIX_C_SOURCE 200809L
#include "rfilter.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/bits.h"
#include "../../common/error.h"
#include "../../common/hash.h"
#include "../../common/sizing.h"

/* ---- key names ---------------------------------------------------------- */

/* Names never hold braces (bk_redis_name_valid), so the tag {NAME} hashes
 * to the slot of the metadata hash NAME itself: keys under that tag can be
 * changed by one script together with the counts in the metadata. */
int bk_rfilter_data_key(const bk_rfilter *rf, uint32_t j, uint64_t b, char *buf, size_t len)
{
    int n;
    if (rf->kind->slice_keys)
        n = snprintf(buf, len, "%s:{%s}:%" PRIu32 "/%" PRIu64 ":data", rf->name, rf->name, j, b);
    else if (b == 0)
        n = snprintf(buf, len, "%s:{%s}:data", rf->name, rf->name);
    else
        n = snprintf(buf, len, "%s:{%s/%" PRIu64 "}:data", rf->name, rf->name, b);
    return n > 0 && (size_t)n < len ? n : -1;
}

int bk_rfilter_count_key(const bk_rfilter *rf, uint64_t b, char *buf, size_t len)
{
    const int n = rf->kind->slice_keys || b == 0 || rf->counts_in_meta
                      ? snprintf(buf, len, "%s", rf->name)
                      : snprintf(buf, len, "%s:{%s/%" PRIu64 "}:count", rf->name, rf->name, b);
    return n > 0 && (size_t)n < len ? n : -1;
}

uint64_t bk_rfilter_blocks(const bk_rfilter *rf, uint32_t j)
{
    const uint64_t nb = rf->s[j].v.nbytes;
    return nb / rf->block_bytes + (nb % rf->block_bytes != 0);
}

uint64_t bk_rfilter_block_len(const bk_rfilter *rf, uint32_t j, uint64_t b)
{
    const uint64_t start = b * rf->block_bytes, nb = rf->s[j].v.nbytes;
    return nb - start < rf->block_bytes ? nb - start : rf->block_bytes;
}

bk_rconn *bk_rfilter_conn(bk_rfilter *rf)
{
    return rf->conn;
}

/* ---- shapes ------------------------------------------------------------- */

static int shape_of(const bk_rfilter *rf, uint32_t j, bk_rslice *out)
{
    const bk_config *cfg = &rf->base.cfg;
    memset(out, 0, sizeof *out);
    if (bk_rfilter_chained(rf)) { /* a window's generations are chains too */
        const int rc = j < BK_LUA_CHAIN_MAX ? bk_chain_slice(cfg, j, rf->rule, &out->v, &out->full)
                                            : BK_ERANGE;
        if (rc != BK_OK)
            return rc;
        out->v.probes = rf->probes;
        out->v.span = 0; /* a generation's span is rf->span_ms */
        return BK_OK;
    }
    uint64_t m;
    unsigned k;
    const unsigned block = bk_block_cells(cfg->layout, rf->cell_bits);
    const int rc = bk_size_config(cfg, block, &m, &k);
    if (rc != BK_OK)
        return rc;
    out->v.m = m;
    out->v.k = k;
    out->v.block = block;
    out->v.probes = rf->probes;
    out->v.capacity = cfg->capacity;
    out->v.fpr = cfg->fpr;
    out->v.nbytes = bk_bits_to_bytes(m * rf->cell_bits);
    return BK_OK;
}

/* A classic slice must fit one block (its probes span all of it); a blocked
 * one is split on 64-byte lines, which block_bytes (a multiple of 64) never
 * cuts. */
static int storable(const bk_rfilter *rf, const bk_rslice *s)
{
    return s->v.block || s->v.nbytes <= rf->block_bytes;
}

/* Slice j's shape into rf->s[j], once: a shape never changes, and slice j
 * keeps its counts. */
static int shape(bk_rfilter *rf, uint32_t j)
{
    if (j < rf->shaped)
        return BK_OK;
    const int rc = shape_of(rf, j, &rf->s[j]);
    if (rc == BK_OK && j == rf->shaped)
        rf->shaped = j + 1;
    return rc;
}

int bk_rfilter_set_slices(bk_rfilter *rf, uint32_t n)
{
    const uint32_t max = bk_rfilter_chained(rf) ? BK_LUA_CHAIN_MAX : 1;
    if (n < 1 || n > max)
        return bk_fail(BK_ESERVER, "redis filter %s: %" PRIu32 " slices (1 .. %" PRIu32 ")",
                       rf->name, n, max);
    for (uint32_t j = 0; j < n; j++) {
        const int rc = shape(rf, j);
        if (rc != BK_OK)
            return bk_fail(rc, "redis filter %s: slice %" PRIu32 " cannot be sized", rf->name, j);
        if (!storable(rf, &rf->s[j]))
            return bk_fail(BK_ERANGE,
                           "redis filter %s: a classic-layout slice of %" PRIu64
                           " bytes exceeds one Redis block (%" PRIu64
                           " bytes); use layout=blocked, which splits over blocks",
                           rf->name, rf->s[j].v.nbytes, rf->block_bytes);
    }
    rf->nslices = n;
    rf->has_next = 0;
    if (n < max && shape(rf, n) == BK_OK && storable(rf, &rf->s[n]))
        rf->has_next = 1;
    return BK_OK;
}

/* ---- building commands -------------------------------------------------- */

static void args_reset(bk_rfilter *rf)
{
    rf->argc = 0;
    rf->textlen = 0;
}

static int args_add(bk_rfilter *rf, const char *s, size_t n)
{
    const bk_allocator *a = &rf->base.alloc;
    if (rf->argc == rf->argcap) {
        const size_t cap = rf->argcap ? rf->argcap * 2 : 64;
        const char **argv = bk_mem_alloc(a, cap * sizeof *argv);
        size_t *lens = bk_mem_alloc(a, cap * sizeof *lens);
        size_t *offs = bk_mem_alloc(a, cap * sizeof *offs);
        if (!argv || !lens || !offs) {
            bk_mem_free(a, argv);
            bk_mem_free(a, lens);
            bk_mem_free(a, offs);
            return BK_ENOMEM;
        }
        if (rf->argc) {
            memcpy(lens, rf->lens, rf->argc * sizeof *lens);
            memcpy(offs, rf->offs, rf->argc * sizeof *offs);
        }
        bk_mem_free(a, rf->argv);
        bk_mem_free(a, rf->lens);
        bk_mem_free(a, rf->offs);
        rf->argv = argv;
        rf->lens = lens;
        rf->offs = offs;
        rf->argcap = cap;
    }
    if (rf->textcap - rf->textlen < n) {
        size_t cap = rf->textcap ? rf->textcap : 1024;
        while (cap - rf->textlen < n)
            cap *= 2;
        char *text = bk_mem_alloc(a, cap);
        if (!text)
            return BK_ENOMEM;
        if (rf->textlen)
            memcpy(text, rf->text, rf->textlen);
        bk_mem_free(a, rf->text);
        rf->text = text;
        rf->textcap = cap;
    }
    memcpy(rf->text + rf->textlen, s, n);
    rf->offs[rf->argc] = rf->textlen;
    rf->lens[rf->argc] = n;
    rf->argc++;
    rf->textlen += n;
    return BK_OK;
}

static int args_str(bk_rfilter *rf, const char *s)
{
    return args_add(rf, s, strlen(s));
}

static int args_u64(bk_rfilter *rf, const char *prefix, uint64_t v)
{
    char buf[32];
    const int n = snprintf(buf, sizeof buf, "%s%" PRIu64, prefix, v);
    return args_add(rf, buf, (size_t)n);
}

static int args_send(bk_rfilter *rf)
{
    for (size_t i = 0; i < rf->argc; i++)
        rf->argv[i] = rf->text + rf->offs[i];
    return bk_rconn_append(rf->conn, rf->argv[rf->route], rf->lens[rf->route], (int)rf->argc,
                           rf->argv, rf->lens);
}

/* Block of slice j that key h's probes fall in (a classic slice has one). */
static uint64_t block_of(const bk_rfilter *rf, uint32_t j, const bk_hash *h)
{
    const bk_slice_view *v = &rf->s[j].v;
    const bk_probes p = bk_probes_for(h, v->m, v->block, v->probes);
    return p.base / (rf->block_bytes * 8 / rf->cell_bits);
}

/* Append key h's k probe offsets in slice j, relative to block b, each
 * after `prefix` ("#" addresses BITFIELD u4 counters by index). */
static int args_offsets(bk_rfilter *rf, uint32_t j, const bk_hash *h, uint64_t b,
                        const char *prefix)
{
    const bk_slice_view *v = &rf->s[j].v;
    bk_probes p = bk_probes_for(h, v->m, v->block, v->probes);
    const uint64_t base = b * (rf->block_bytes * 8 / rf->cell_bits);
    int rc = BK_OK;
    for (unsigned i = 0; i < v->k && rc == BK_OK; i++)
        rc = args_u64(rf, prefix, bk_probes_next(&p) - base);
    return rc;
}

typedef enum { OP_ADD, OP_CONTAINS, OP_REMOVE } rop;

/* A counting filter's add or remove of one key (the store's other commands
 * on one array are built per chunk: build_unit). */
static int build_single(bk_rfilter *rf, int op, const bk_hash *h)
{
    const uint64_t b = block_of(rf, 0, h);
    char data[BK_REDIS_KEY_MAX], count[BK_REDIS_KEY_MAX];
    bk_rfilter_data_key(rf, 0, b, data, sizeof data);
    bk_rfilter_count_key(rf, b, count, sizeof count);
    int rc = BK_OK;
    const int script = op == OP_ADD ? BK_RS_CNT_ADD : BK_RS_CNT_REMOVE;
    rf->route = 3; /* the first key: data and count share its hash tag */
    rc = args_str(rf, "EVALSHA");
    rc = rc ? rc : args_str(rf, rf->sha[script]);
    rc = rc ? rc : args_str(rf, "2");
    rc = rc ? rc : args_str(rf, data);
    rc = rc ? rc : args_str(rf, count);
    return rc ? rc : args_offsets(rf, 0, h, b, "");
}

static int build_scalable(bk_rfilter *rf, int op, const bk_hash *h)
{
    const uint32_t n = rf->nslices, with = n + (op == OP_ADD && rf->has_next);
    char name[BK_REDIS_KEY_MAX];
    uint64_t blocks[BK_LUA_CHAIN_MAX + 1];
    for (uint32_t j = 0; j < with; j++)
        blocks[j] = block_of(rf, j, h);
    rf->route = 3; /* every key of a chain carries the tag {NAME} */
    int rc = args_str(rf, "EVALSHA");
    rc = rc ? rc : args_str(rf, rf->sha[op == OP_ADD ? BK_RS_SCL_ADD : BK_RS_SCL_CONTAINS]);
    rc = rc ? rc : args_u64(rf, "", (uint64_t)with + 1);
    bk_rfilter_count_key(rf, 0, name, sizeof name);
    rc = rc ? rc : args_str(rf, name);
    for (uint32_t j = 0; j < with && rc == BK_OK; j++) {
        bk_rfilter_data_key(rf, j, blocks[j], name, sizeof name);
        rc = args_str(rf, name);
    }
    rc = rc ? rc : args_u64(rf, "", n);
    if (op == OP_ADD) {
        /* max_bytes: whether growing into the next slice would pass it is
         * known here (the chain's shapes are fixed); the script refuses */
        uint64_t bytes = 0;
        for (uint32_t j = 0; j < n; j++)
            bytes += rf->s[j].v.nbytes;
        const uint64_t max = rf->base.cfg.max_bytes, after = bytes + rf->s[n].v.nbytes;
        char detail[48];
        snprintf(detail, sizeof detail, "%" PRIu64 " %" PRIu64, after, bytes);
        rc = rc ? rc : args_u64(rf, "", rf->s[n - 1].full.set);
        rc = rc ? rc : args_u64(rf, "", rf->s[n - 1].full.keys);
        rc = rc ? rc : args_str(rf, !rf->has_next ? "0" : max && after > max ? "M" : "1");
        rc = rc ? rc : args_str(rf, detail);
    }
    for (uint32_t j = 0; j < with && rc == BK_OK; j++) {
        rc = args_u64(rf, "", rf->s[j].v.k);
        rc = rc ? rc : args_offsets(rf, j, h, blocks[j], "");
    }
    return rc;
}

/* A window's add or lookup: the script reads the server's clock and finds
 * the live generations itself (scripts.c); the client sends the shapes of
 * a generation's first nslices slices (and the next one, for an add), the
 * key's block and probe offsets in each. */
static int build_window(bk_rfilter *rf, int op, const bk_hash *h)
{
    const bk_config *c = &rf->base.cfg;
    const int next = op == OP_ADD && rf->has_next;
    const uint32_t with = rf->nslices + (uint32_t)next;
    rf->route = 3; /* NAME: every key of the window carries the tag {NAME} */
    int rc = args_str(rf, "EVALSHA");
    rc = rc ? rc : args_str(rf, rf->sha[BK_RS_WIN]);
    rc = rc ? rc : args_str(rf, "1");
    rc = rc ? rc : args_str(rf, rf->name);
    rc = rc ? rc : args_str(rf, op == OP_ADD ? "a" : "c");
    rc = rc ? rc : args_u64(rf, "", (uint64_t)rf->span_ms);
    rc = rc ? rc : args_u64(rf, "", c->generations);
    rc = rc ? rc : args_u64(rf, "", c->refresh);
    rc = rc ? rc : args_u64(rf, "", c->max_bytes);
    rc = rc ? rc : args_u64(rf, "", BK_LUA_WINDOW_MAX);
    rc = rc ? rc : args_str(rf, next ? "1" : "0");
    rc = rc ? rc : args_u64(rf, "", with);
    for (uint32_t j = 0; j < with && rc == BK_OK; j++) {
        const bk_rslice *s = &rf->s[j];
        const uint64_t b = block_of(rf, j, h);
        rc = args_u64(rf, "", s->v.k);
        rc = rc ? rc : args_u64(rf, "", b);
        rc = rc ? rc : args_u64(rf, "", bk_rfilter_blocks(rf, j));
        rc = rc ? rc : args_u64(rf, "", s->v.nbytes);
        rc = rc ? rc : args_u64(rf, "", s->full.set);
        rc = rc ? rc : args_u64(rf, "", s->full.keys);
        rc = rc ? rc : args_offsets(rf, j, h, b, "");
    }
    return rc;
}

static int build(bk_rfilter *rf, rop op, const bk_hash *h)
{
    args_reset(rf);
    return rf->kind->store->build(rf, (int)op, h);
}

/* ---- replies ------------------------------------------------------------ */

enum { R_DONE, R_NOSCRIPT, R_STALE, R_LOADING };

/* Interpret one script's reply (a lookup's BITFIELD_RO is read by
 * parse_unit): R_DONE with *result set, R_NOSCRIPT, R_STALE (the chain has
 * another number of slices: shapes already updated), or a negative error
 * code. */
static int parse(bk_rfilter *rf, rop op, const redisReply *r, int *result)
{
    if (r->type == REDIS_REPLY_ERROR) {
        if (strncmp(r->str, "NOSCRIPT", 8) == 0)
            return R_NOSCRIPT;
        if (bk_rconn_loading(r))
            return R_LOADING; /* not applied: asked again once the server is ready */
        if (strstr(r->str, BK_RS_MAX))
            return bk_rfilter_max_error(rf, strstr(r->str, BK_RS_MAX));
        if (strstr(r->str, BK_RS_GONE))
            return bk_rfilter_gone(rf);
        if (strncmp(r->str, BK_RS_FULL, sizeof BK_RS_FULL - 1) == 0 || strstr(r->str, BK_RS_FULL))
            return bk_fail(BK_ERANGE,
                           "redis filter %s: the chain is full and its next slice cannot be "
                           "stored (a classic slice must fit one block; use layout=blocked)",
                           rf->name);
        return bk_fail(BK_ESERVER, "redis filter %s: %.300s", rf->name, r->str);
    }
    if (r->type != REDIS_REPLY_INTEGER)
        return bk_fail(BK_ESERVER, "redis filter %s: a script sent a reply of an unexpected type",
                       rf->name);
    if (r->integer == 0 || r->integer == 1) {
        *result = op == OP_REMOVE ? (r->integer ? BK_OK : BK_ENOTFOUND) : (int)r->integer;
        return R_DONE;
    }
    if (bk_rfilter_chained(rf) && r->integer < 0 && r->integer >= -(long long)BK_LUA_CHAIN_MAX) {
        const int rc = bk_rfilter_set_slices(rf, (uint32_t)-r->integer);
        return rc == BK_OK ? R_STALE : rc;
    }
    return bk_fail(BK_ESERVER, "redis filter %s: a script answered %lld", rf->name, r->integer);
}

int bk_rfilter_count_slice(const char *f, size_t n, const char *prefix)
{
    const size_t p = strlen(prefix);
    if (n <= p || n > p + 2 || memcmp(f, prefix, p) != 0 || (n == p + 2 && f[p] == '0'))
        return -1;
    int v = 0;
    for (size_t i = p; i < n; i++) {
        if (f[i] < '0' || f[i] > '9')
            return -1;
        v = v * 10 + (f[i] - '0');
    }
    return v < BK_LUA_CHAIN_MAX ? v : -1;
}

int bk_rfilter_max_error(const bk_rfilter *rf, const char *reply)
{
    unsigned long long after = 0, used = 0;
    if (sscanf(reply, BK_RS_MAX " %llu %llu", &after, &used) == 2)
        return bk_full_error(after, rf->base.cfg.max_bytes, used, 0);
    return bk_full_error(0, 0, 0, BK_LUA_WINDOW_MAX);
}

/* ---- the engine --------------------------------------------------------- */

#define RUN_MAX BK_STORE_CHUNK /* what src/core/filter.c hands a batch call */

/* The commands of a chunk. A standard filter's adds and lookups, and a
 * counting filter's lookups, are one command per block the chunk's keys fall
 * in (usually one): a script adding them all in order (bit by bit, or a
 * blocked filter's line by line), or one BITFIELD_RO reading all their
 * cells; keys of different blocks share no cell, so grouping them changes no
 * answer. Every other operation is one command per key. Unit u answers the keys
 * order[first[u] .. first[u + 1]). */
typedef struct units {
    size_t order[RUN_MAX];
    size_t first[RUN_MAX + 1];
    size_t n;
} units;

static int grouped(const bk_rfilter *rf, rop op)
{
    return ((rf->kind->grouped >> op) & 1u) != 0;
}

static void make_units(const bk_rfilter *rf, rop op, const bk_hash *hs, size_t n, units *u)
{
    u->n = 0;
    if (!grouped(rf, op)) {
        for (size_t i = 0; i < n; i++)
            u->order[i] = u->first[i] = i;
        u->first[n] = u->n = n;
        return;
    }
    uint64_t block[RUN_MAX];
    unsigned char taken[RUN_MAX] = {0};
    for (size_t i = 0; i < n; i++)
        block[i] = block_of(rf, 0, &hs[i]);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (taken[i])
            continue;
        u->first[u->n++] = at;
        for (size_t j = i; j < n; j++)
            if (!taken[j] && block[j] == block[i]) {
                u->order[at++] = j;
                taken[j] = 1;
            }
    }
    u->first[u->n] = n;
}

/* BITFIELD operations on every cell every key probes, relative to block b:
 * "op u1 offset" (counters: "op u4 #index") and, when value is not NULL,
 * the value. */
static int args_probes(bk_rfilter *rf, const bk_hash *hs, const size_t *keys, size_t count,
                       uint64_t b, const char *op, const char *value)
{
    const bk_slice_view *v = &rf->s[0].v;
    const int counters = rf->cell_bits == 4;
    const uint64_t base = b * (rf->block_bytes * 8 / rf->cell_bits);
    int rc = BK_OK;
    for (size_t i = 0; i < count && rc == BK_OK; i++) {
        bk_probes p = bk_probes_for(&hs[keys[i]], v->m, v->block, v->probes);
        for (unsigned j = 0; j < v->k && rc == BK_OK; j++) {
            rc = args_str(rf, op);
            rc = rc ? rc : args_str(rf, counters ? "u4" : "u1");
            rc = rc ? rc : args_u64(rf, counters ? "#" : "", bk_probes_next(&p) - base);
            rc = rc || !value ? rc : args_str(rf, value);
        }
    }
    return rc;
}

/* A blocked filter's keys for the line script: per key, the first and last
 * byte offsets of its 64-byte line in block b, and its probes as (byte in the line, mask)
 * pairs, each byte once with every probe's bit in it (Redis's bit order:
 * bit i of the line is byte i / 8, mask 0x80 >> i % 8). */
static int args_lines(bk_rfilter *rf, const bk_hash *hs, const size_t *keys, size_t count,
                      uint64_t b)
{
    const bk_slice_view *v = &rf->s[0].v;
    const uint64_t base = b * (rf->block_bytes * 8);
    int rc = BK_OK;
    for (size_t i = 0; i < count && rc == BK_OK; i++) {
        bk_probes p = bk_probes_for(&hs[keys[i]], v->m, v->block, v->probes);
        uint8_t mask[64] = {0}, pairs[128];
        for (unsigned j = 0; j < v->k; j++) {
            const uint64_t bit = bk_probes_next(&p) - p.base;
            mask[bit / 8] |= (uint8_t)(0x80u >> (bit % 8));
        }
        size_t n = 0;
        for (unsigned byte = 0; byte < 64; byte++)
            if (mask[byte]) {
                pairs[n++] = (uint8_t)byte;
                pairs[n++] = mask[byte];
            }
        const uint64_t line = (p.base - base) / 8;
        rc = args_u64(rf, "", line);
        rc = rc ? rc : args_u64(rf, "", line + 63);
        rc = rc ? rc : args_add(rf, (const char *)pairs, n);
    }
    return rc;
}

/* The command of unit g. */
static int build_unit(bk_rfilter *rf, rop op, const bk_hash *hs, const units *u, size_t g)
{
    const size_t *keys = &u->order[u->first[g]], count = u->first[g + 1] - u->first[g];
    if (!grouped(rf, op))
        return build(rf, op, &hs[keys[0]]);
    args_reset(rf);
    const uint64_t b = block_of(rf, 0, &hs[keys[0]]);
    char data[BK_REDIS_KEY_MAX], cnt[BK_REDIS_KEY_MAX];
    bk_rfilter_data_key(rf, 0, b, data, sizeof data);
    int rc;
    if (op == OP_CONTAINS) { /* BITFIELD_RO data GET u1 o ...: every probe of every key */
        rf->route = 1;
        rc = args_str(rf, "BITFIELD_RO");
        rc = rc ? rc : args_str(rf, data);
        return rc ? rc : args_probes(rf, hs, keys, count, b, "GET", NULL);
    }
    bk_rfilter_count_key(rf, b, cnt, sizeof cnt);
    const int lines = rf->s[0].v.block != 0;
    rf->route = 3; /* data and count share its hash tag */
    rc = args_str(rf, "EVALSHA");
    rc = rc ? rc : args_str(rf, rf->sha[lines ? BK_RS_STD_ADD_LINES : BK_RS_STD_ADD_MANY]);
    rc = rc ? rc : args_str(rf, "2");
    rc = rc ? rc : args_str(rf, data);
    rc = rc ? rc : args_str(rf, cnt);
    if (lines)
        return rc ? rc : args_lines(rf, hs, keys, count, b);
    rc = rc ? rc : args_u64(rf, "", rf->s[0].v.k);
    return rc ? rc : args_probes(rf, hs, keys, count, b, "SET", "1");
}

/* Interpret unit g's reply as parse does a key's: R_DONE with every key's
 * result set, R_NOSCRIPT, R_LOADING, or a negative error. */
static int parse_unit(bk_rfilter *rf, rop op, const redisReply *r, const units *u, size_t g,
                      int *results)
{
    const size_t *keys = &u->order[u->first[g]], count = u->first[g + 1] - u->first[g];
    if (!grouped(rf, op) || r->type == REDIS_REPLY_ERROR) { /* a grouped error sets no result */
        int unused = 0;
        return parse(rf, op, r, grouped(rf, op) ? &unused : &results[keys[0]]);
    }
    const unsigned k = rf->s[0].v.k;
    const size_t want = op == OP_CONTAINS ? count * k : count;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != want)
        return bk_fail(BK_ESERVER, "redis filter %s: a reply of %s shape to %zu keys", rf->name,
                       "an unexpected", count);
    const long long top = op == OP_CONTAINS ? (1 << rf->cell_bits) - 1 : 1; /* a cell, or new */
    for (size_t i = 0; i < want; i++)
        if (r->element[i]->type != REDIS_REPLY_INTEGER || r->element[i]->integer < 0 ||
            r->element[i]->integer > top)
            return bk_fail(BK_ESERVER, "redis filter %s: a reply holds a value out of range",
                           rf->name);
    for (size_t i = 0; i < count; i++) {
        int v = 1;
        if (op == OP_CONTAINS)
            for (unsigned j = 0; j < k; j++)
                v &= r->element[i * k + j]->integer != 0;
        else
            v = (int)r->element[i]->integer;
        results[keys[i]] = v;
    }
    return R_DONE;
}

/* As the pipeline reads the reply to one key's command (its unit alone). */
int bk_rfilter_parse_reply(bk_rfilter *rf, int op, const redisReply *r, int *result)
{
    units u;
    u.order[0] = u.first[0] = 0;
    u.first[1] = u.n = 1;
    return parse_unit(rf, (rop)op, r, &u, 0, result);
}

/* long: a pipeline: send, read replies as they come, keep reading after a failure. */
static int run_chunk(bk_rfilter *rf, rop op, const bk_hash *hs, size_t n, int *results)
{
    enum { PENDING = 0, DONE = 1 };
    units u;
    make_units(rf, op, hs, n, &u);
    unsigned char state[RUN_MAX] = {0}; /* of each unit */
    size_t sent[RUN_MAX];
    size_t left = u.n;
    const int repeatable = ((rf->kind->repeatable >> op) & 1u) != 0;
    const int rounds_max = 8 + 2 * bk_rconn_url(rf->conn)->retries;
    int loading_ms = 0;
    for (int idle = 0; left;) {
        int rc = bk_rconn_reconnect(rf->conn);
        if (rc != BK_OK)
            return rc;
        size_t nsent = 0;
        int unsent = BK_OK; /* out of memory building a command: the ones sent
                               before it are still read (the connection stays in
                               step, their results stand), then the error */
        for (size_t g = 0; g < u.n; g++) {
            if (state[g] != PENDING)
                continue;
            rc = build_unit(rf, op, hs, &u, g);
            if (rc == BK_OK)
                rc = args_send(rf);
            if (rc == BK_EIO)
                break;
            if (rc != BK_OK) {
                unsent = rc;
                break;
            }
            sent[nsent++] = g;
        }
        int reload = 0, loading = 0, failed = BK_OK;
        size_t got = 0;
        const size_t before = left;
        for (; got < nsent; got++) {
            redisReply *r;
            if (bk_rconn_reply(rf->conn, &r) != BK_OK)
                break;
            const size_t g = sent[got];
            /* After a failure the rest are still read (the connection stays
             * in step) and the answers the server gave still count: those
             * keys were applied, and a caller must be able to report them
             * (issue 16: dedup printed none of them and lost them). An error
             * reply then only stays unconfirmed: the first error's detail
             * is the one kept. */
            const int st = failed != BK_OK && r->type == REDIS_REPLY_ERROR
                               ? R_NOSCRIPT
                               : parse_unit(rf, op, r, &u, g, results);
            freeReplyObject(r);
            if (failed != BK_OK) {
                if (st == R_DONE)
                    state[g] = DONE;
                continue;
            }
            if (st == R_DONE) {
                state[g] = DONE;
                left--;
            } else if (st == R_NOSCRIPT) {
                reload = 1;
            } else if (st == R_LOADING) {
                loading = 1;
            } else if (st < 0) {
                failed = st;
            }
        }
        if (failed != BK_OK)
            return failed;
        if (unsent != BK_OK && got == nsent)
            return unsent;
        if (got < nsent && !repeatable)
            return bk_fail(BK_EIO,
                           "redis filter %s: connection lost with %zu counting operations in "
                           "flight; they may or may not have been applied",
                           rf->name, nsent - got);
        if (loading) { /* a restarting server: wait, bounded, without counting rounds */
            if (loading_ms >= BK_LOADING_WAIT_MS)
                return bk_fail(BK_EIO,
                               "redis filter %s: the server was still loading its data "
                               "after %d s",
                               rf->name, BK_LOADING_WAIT_MS / 1000);
            bk_rconn_pause(BK_LOADING_PAUSE_MS);
            loading_ms += BK_LOADING_PAUSE_MS;
            continue;
        }
        if (reload && (rc = bk_rfilter_load_scripts(rf)) != BK_OK)
            return rc;
        idle = left < before ? 0 : idle + 1;
        if (idle > rounds_max)
            return bk_fail(BK_ESERVER, "redis filter %s: no progress after %d rounds", rf->name,
                           idle);
    }
    return BK_OK;
}

/* On an error, results[i] of every key the server did not confirm is set
 * to the error: the answers that stand are exactly the 0s and 1s (the batch
 * contract in bloomkit.h; a pipelined chunk confirms any subset). */
static int run(bk_rfilter *rf, rop op, const bk_hash *hs, size_t n, int *results)
{
    for (size_t at = 0; at < n; at += RUN_MAX) {
        const size_t c = n - at < RUN_MAX ? n - at : RUN_MAX;
        for (size_t i = at; i < at + c; i++)
            results[i] = BK_EIO; /* unconfirmed until its reply is parsed */
        const int rc = run_chunk(rf, op, hs + at, c, results + at);
        if (rc != BK_OK) {
            for (size_t i = at; i < n; i++)
                if (i >= at + c || results[i] < 0)
                    results[i] = rc;
            return rc;
        }
    }
    return BK_OK;
}

/* ---- the vtable --------------------------------------------------------- */

static int r_add(bk_filter *f, const bk_hash *h)
{
    int result = 0;
    const int rc = run((bk_rfilter *)f, OP_ADD, h, 1, &result);
    return rc != BK_OK ? rc : result;
}

static int r_contains(const bk_filter *f, const bk_hash *h)
{
    int result = 0;
    const int rc = run((bk_rfilter *)f, OP_CONTAINS, h, 1, &result);
    return rc != BK_OK ? rc : result;
}

static int r_remove(bk_filter *f, const bk_hash *h)
{
    int result = 0;
    const int rc = run((bk_rfilter *)f, OP_REMOVE, h, 1, &result);
    return rc != BK_OK ? rc : result;
}

static int r_add_batch(bk_filter *f, const bk_hash *hs, size_t n, int *results)
{
    return run((bk_rfilter *)f, OP_ADD, hs, n, results);
}

static int r_contains_batch(const bk_filter *f, const bk_hash *hs, size_t n, int *results)
{
    return run((bk_rfilter *)f, OP_CONTAINS, hs, n, results);
}

/* Run the clear script on one count hash and the data keys under its tag
 * (EVAL with the text: clears are rare, and a flushed script cache does not
 * matter to them). */
static int clear_group(bk_rfilter *rf, uint32_t j0, uint32_t j1, uint64_t b0, uint64_t b1, int drop)
{
    char name[BK_REDIS_KEY_MAX];
    args_reset(rf);
    int rc = args_str(rf, "EVAL");
    rc = rc ? rc : args_str(rf, bk_redis_script(BK_RS_CLEAR));
    size_t nkeys = 1;
    for (uint32_t j = j0; j < j1; j++)
        nkeys += (b1 ? b1 : bk_rfilter_blocks(rf, j)) - b0;
    rc = rc ? rc : args_u64(rf, "", nkeys);
    bk_rfilter_count_key(rf, b0, name, sizeof name);
    rc = rc ? rc : args_str(rf, name);
    for (uint32_t j = j0; j < j1 && rc == BK_OK; j++)
        for (uint64_t b = b0; b < (b1 ? b1 : bk_rfilter_blocks(rf, j)) && rc == BK_OK; b++) {
            bk_rfilter_data_key(rf, j, b, name, sizeof name);
            rc = args_str(rf, name);
        }
    rc = rc ? rc : args_str(rf, drop ? "drop" : "clear");
    for (size_t i = 0; rc == BK_OK && i < rf->argc; i++)
        rf->argv[i] = rf->text + rf->offs[i];
    redisReply *r = NULL;
    if (rc == BK_OK)
        rc = bk_rconn_call(rf->conn, rf->argv[3], rf->lens[3], &r, (int)rf->argc, rf->argv,
                           rf->lens);
    if (rc == BK_OK && r->type == REDIS_REPLY_ERROR)
        rc = bk_fail(BK_ESERVER, "redis filter %s: %s: %.200s", rf->name, drop ? "drop" : "clear",
                     r->str);
    if (r)
        freeReplyObject(r);
    return rc;
}

/* Scalable: every slice's cells and the chain's counts, one script (all
 * under the tag {NAME}). Standard and counting: with counts=meta one script
 * for every block too; with counts=blocks (a cluster) block 0 with the
 * metadata's counts, then each further block with its own count hash. A
 * drop deletes the count hashes too, the metadata's group first: every
 * writer's script fails from that moment on (scripts.c, WHOLE). */
static int wipe_chain(bk_rfilter *rf, int drop)
{
    int rc = clear_group(rf, 0, rf->nslices, 0, 0, drop);
    if (rc == BK_OK)
        rc = bk_rfilter_set_slices(rf, 1);
    return rc;
}

static int wipe_array(bk_rfilter *rf, int drop)
{
    if (rf->counts_in_meta) /* a single server: one script for all */
        return clear_group(rf, 0, 1, 0, 0, drop);
    int rc = BK_OK;
    for (uint64_t b = 0; b < bk_rfilter_blocks(rf, 0) && rc == BK_OK; b++)
        rc = clear_group(rf, 0, 1, b, b + 1, drop);
    return rc;
}

static int wipe(bk_rfilter *rf, int drop)
{
    int rc = bk_rfilter_refresh(rf); /* learn every slice the chain has */
    if (rc == BK_OK)
        rc = rf->kind->store->wipe(rf, drop);
    if (rc == BK_OK && !rf->kind->windowed)
        for (uint32_t j = 0; j < rf->nslices; j++)
            rf->s[j].v.set_bits = rf->s[j].v.keys = rf->s[j].v.saturated = 0;
    return rc;
}

static int r_clear(bk_filter *f)
{
    return wipe((bk_rfilter *)f, 0);
}

int bk_rfilter_drop(bk_rfilter *rf)
{
    return wipe(rf, 1);
}

int bk_rfilter_gone(const bk_rfilter *rf)
{
    return bk_fail(BK_ENOTFOUND,
                   "redis filter %s was dropped (or damaged) while in use: nothing more was "
                   "written to it",
                   rf->name);
}

static void r_destroy(bk_filter *f)
{
    bk_rfilter_free((bk_rfilter *)f);
}

/* A window's slices are its live generations' (as last read); the others'
 * are the shapes with their counts. */
static uint32_t r_slice_count(const bk_filter *f)
{
    const bk_rfilter *rf = (const bk_rfilter *)f;
    return rf->kind->windowed ? rf->nwin : rf->nslices;
}

static void r_slice_view(const bk_filter *f, uint32_t i, bk_slice_view *out)
{
    const bk_rfilter *rf = (const bk_rfilter *)f;
    *out = rf->kind->windowed ? rf->win[i] : rf->s[i].v;
}

static int r_refresh(const bk_filter *f)
{
    return bk_rfilter_refresh((bk_rfilter *)f);
}

/* Pipelined batches: one round trip per chunk of keys. */
static const bk_filter_perf rfilter_perf = {
    .version = BK_FILTER_PERF_VERSION,
    .add_batch = r_add_batch,
    .contains_batch = r_contains_batch,
};

#define RFILTER_OPS(rm)                                                                            \
    {                                                                                              \
        .version = BK_FILTER_OPS_VERSION, .store = BK_STORE_REMOTE, .add = r_add,                  \
        .contains = r_contains, .remove = (rm), .clear = r_clear, .destroy = r_destroy,            \
        .slice_count = r_slice_count, .slice_view = r_slice_view, .merge = NULL,                   \
        .intersect = NULL, .refresh = r_refresh, .perf = &rfilter_perf,                            \
    }

/* Every variant's, and for those that remove (counting), with remove. */
const bk_filter_ops bk_rfilter_ops = RFILTER_OPS(NULL);
const bk_filter_ops bk_rfilter_removing_ops = RFILTER_OPS(r_remove);

/* ---- scripts, counts, teardown ------------------------------------------ */

int bk_rfilter_load_scripts(bk_rfilter *rf)
{
    for (int i = 0; i < BK_RS_COUNT; i++) {
        redisReply *r;
        const int rc = bk_rconn_all(rf->conn, &r, "SCRIPT LOAD %s", bk_redis_script(i));
        if (rc != BK_OK)
            return rc;
        const int ok = r->type == REDIS_REPLY_STRING && r->len == 40;
        if (ok)
            memcpy(rf->sha[i], r->str, 41);
        const int err = ok ? BK_OK
                           : bk_fail(BK_ESERVER, "redis %s: SCRIPT LOAD refused: %.200s",
                                     bk_rconn_where(rf->conn),
                                     r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
        freeReplyObject(r);
        if (err != BK_OK)
            return err;
    }
    return BK_OK;
}

/* A count field: absent is 0, anything but a decimal integer is an error. */
int bk_rfilter_count_value(const bk_rfilter *rf, const redisReply *r, long long *out)
{
    if (r->type == REDIS_REPLY_NIL) {
        *out = 0;
        return BK_OK;
    }
    if (r->type == REDIS_REPLY_STRING && r->len > 0 && r->len < 21) {
        char buf[24];
        memcpy(buf, r->str, r->len);
        buf[r->len] = '\0';
        char *end;
        const long long v = strtoll(buf, &end, 10);
        if (*end == '\0' && v >= 0) {
            *out = v;
            return BK_OK;
        }
    }
    return bk_fail(BK_ESERVER, "redis filter %s: a count field is not a non-negative integer",
                   rf->name);
}

static int refresh_scalable(bk_rfilter *rf)
{
    char name[BK_REDIS_KEY_MAX];
    bk_rfilter_count_key(rf, 0, name, sizeof name);
    redisReply *r;
    int rc = bk_rconn_callf(rf->conn, name, &r, "HGET %s slices", name);
    if (rc != BK_OK)
        return rc;
    long long slices = 1;
    if (r->type == REDIS_REPLY_ERROR)
        rc = bk_fail(BK_ESERVER, "redis filter %s: %.200s", rf->name, r->str);
    else if (r->type != REDIS_REPLY_NIL && (rc = bk_rfilter_count_value(rf, r, &slices)) == BK_OK &&
             (slices < 1 || slices > BK_LUA_CHAIN_MAX))
        rc =
            bk_fail(BK_ESERVER, "redis filter %s: slice count %lld out of range", rf->name, slices);
    freeReplyObject(r);
    if (rc == BK_OK)
        rc = bk_rfilter_set_slices(rf, (uint32_t)slices);
    for (uint32_t j = 0; j < rf->nslices && rc == BK_OK; j++) {
        rc = bk_rconn_callf(rf->conn, name, &r, "HMGET %s bits.%u keys.%u", name, (unsigned)j,
                            (unsigned)j);
        if (rc != BK_OK)
            return rc;
        long long bits = 0, keys = 0;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2)
            rc = bk_fail(BK_ESERVER, "redis filter %s: HMGET of the counts failed", rf->name);
        else if ((rc = bk_rfilter_count_value(rf, r->element[0], &bits)) == BK_OK)
            rc = bk_rfilter_count_value(rf, r->element[1], &keys);
        freeReplyObject(r);
        rf->s[j].v.set_bits = (uint64_t)bits;
        rf->s[j].v.keys = (uint64_t)keys;
    }
    return rc;
}

int bk_rfilter_refresh(bk_rfilter *rf)
{
    return rf->kind->store->refresh(rf);
}

/* A single array's counts: of every block, in NAME or in each block's hash. */
static int refresh_array(bk_rfilter *rf)
{
    uint64_t bits = 0, keys = 0, sat = 0;
    char name[BK_REDIS_KEY_MAX];
    const uint64_t hashes = rf->counts_in_meta ? 1 : bk_rfilter_blocks(rf, 0);
    for (uint64_t b = 0; b < hashes; b++) {
        bk_rfilter_count_key(rf, b, name, sizeof name);
        redisReply *r;
        int rc = bk_rconn_callf(rf->conn, name, &r, "HMGET %s bits.0 keys.0 sat.0", name);
        if (rc != BK_OK)
            return rc;
        long long v[3] = {0, 0, 0};
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 3)
            rc = bk_fail(BK_ESERVER, "redis filter %s: HMGET of the counts failed: %.200s",
                         rf->name, r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
        for (int i = 0; i < 3 && rc == BK_OK; i++)
            rc = bk_rfilter_count_value(rf, r->element[i], &v[i]);
        freeReplyObject(r);
        if (rc != BK_OK)
            return rc;
        bits += (uint64_t)v[0];
        keys += (uint64_t)v[1];
        sat += (uint64_t)v[2];
    }
    rf->s[0].v.set_bits = bits;
    rf->s[0].v.keys = keys;
    rf->s[0].v.saturated = sat;
    return BK_OK;
}

void bk_rfilter_free(bk_rfilter *rf)
{
    if (!rf)
        return;
    const bk_allocator a = rf->base.alloc;
    bk_rconn_close(rf->conn);
    bk_mem_free(&a, rf->name);
    bk_mem_free(&a, rf->argv);
    bk_mem_free(&a, rf->lens);
    bk_mem_free(&a, rf->offs);
    bk_mem_free(&a, rf->text);
    bk_mem_free(&a, rf);
}

const bk_lua_store bk_lua_array_store = {build_single, refresh_array, wipe_array};
const bk_lua_store bk_lua_chain_store = {build_scalable, refresh_scalable, wipe_chain};
const bk_lua_store bk_lua_window_store = {build_window, bk_rwindow_refresh, bk_rwindow_clear};
