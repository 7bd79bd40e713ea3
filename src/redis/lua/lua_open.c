/*
 * lua_open.c - the Lua mode's open (bk_lua_open): find or create a shared
 * filter's metadata, adopt its parameters, check its keys (docs/redis.md).
 *
 * The metadata hash is created by one script (BK_RS_CREATE), so of several
 * processes opening a new name at once exactly one creates it and the others
 * adopt its parameters and hash key. An opener that states a configuration
 * must agree with the existing filter on every value it states.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit_redis.h"
#include "../../common/alloc.h"
#include "../../common/error.h"
#include "../../common/random.h"
#include "../foreign.h"
#include "rfilter.h"
#include "../redis_url.h"

/* Metadata format 4 (and 5, below): the filter's configuration as the key table's own
 * text (field config, the hash key included), so a new key needs no new
 * field; then what this version derived from it, checked on open (m and k
 * of slice 0), the store's layout (block_bytes, counts), and probes=dh for
 * a filter whose classic probes are the older derivation (pushed from a
 * version-1 file). Formats 2 (probes by BK_PROBES_DH) and 3 (BK_PROBES_LCG,
 * scalable slices sized by bk_size_slice) are read: they kept one field per
 * configuration key, named as the key. A format-2 scalable chain used the
 * older slice sizing, which this version does not reproduce: such chains
 * are refused by name. */
#define META_FORMAT "5"
/* Format 5 is format 4 for a chain (scalable, window) whose slices are sized
 * to hold their capacity (BK_SLICE_HOLDS): an older client, which would size
 * its next slices otherwise, refuses it. Every other filter, and a chain
 * pushed from a file 0.1.0 made, is written as format 4 (read as before). */
#define META_FORMAT_AVERAGE "4"

static const char *const meta_fields[] = {"format", "config",      "m",     "k",
                                          "counts", "block_bytes", "probes"};
enum { F_FORMAT, F_CONFIG, F_M, F_K, F_COUNTS, F_BLOCK_BYTES, F_PROBES, NFIELDS };
/* Fields every filter has: those before F_PROBES. */
#define META_REQUIRED ((1u << F_PROBES) - 1)
/* Formats 2 and 3 wrote these keys, every filter (and fpr unless its bits
 * were pinned): without them a configuration would be the defaults'. */
static const char *const legacy_required[] = {"variant", "layout",     "hash", "capacity",
                                              "growth",  "tightening", "key"};
#define META_VALUE_MAX  80  /* longest value of a field other than config */
#define META_CONFIG_MAX 960 /* longest config text */

/* 1 when f[0..n) is the name of a configuration key. */
static int is_config_key(const char *f, size_t n)
{
    for (unsigned i = 0;; i++) {
        const char *k = bk_config_key(i, NULL, 0, NULL);
        if (!k)
            return 0;
        if (strlen(k) == n && memcmp(k, f, n) == 0)
            return 1;
    }
}

static int field_index(const char *f, size_t n)
{
    for (int i = 0; i < NFIELDS; i++)
        if (strlen(meta_fields[i]) == n && memcmp(meta_fields[i], f, n) == 0)
            return i;
    return -1;
}

/* The count fields the scripts keep beside the metadata: slices, gen, and
 * bits.J, keys.J, sat.J for a slice J below BK_LUA_CHAIN_MAX. */
static int count_field(const char *f, size_t n)
{
    if ((n == 6 && memcmp(f, "slices", 6) == 0) || (n == 3 && memcmp(f, "gen", 3) == 0))
        return 1;
    return bk_rfilter_count_slice(f, n, "bits.") >= 0 ||
           bk_rfilter_count_slice(f, n, "keys.") >= 0 || bk_rfilter_count_slice(f, n, "sat.") >= 0;
}

int bk_redis_field_ours(const char *f, size_t n)
{
    return field_index(f, n) >= 0 || is_config_key(f, n) || count_field(f, n) ||
           (n == 7 && memcmp(f, "pushing", 7) == 0);
}

typedef struct meta {
    char v[NFIELDS][META_CONFIG_MAX + 1];
    unsigned present; /* bit i: field i was in the hash */
    int pushing;      /* a push has claimed the name and not finished */
    /* formats 2 and 3: their key fields as config text, and how many */
    char legacy[META_CONFIG_MAX + 1];
    size_t legacy_len;
} meta;

static void meta_from(const bk_rfilter *rf, meta *m)
{
    const bk_config *c = &rf->base.cfg;
    memset(m, 0, sizeof *m);
    snprintf(m->v[F_FORMAT], sizeof m->v[F_FORMAT], "%s",
             bk_rfilter_chained(rf) && rf->rule == BK_SLICE_HOLDS ? META_FORMAT
                                                                  : META_FORMAT_AVERAGE);
    bk_config_format(c, 1, m->v[F_CONFIG], sizeof m->v[F_CONFIG]);
    snprintf(m->v[F_M], sizeof m->v[F_M], "%" PRIu64, rf->s[0].v.m);
    snprintf(m->v[F_K], sizeof m->v[F_K], "%u", rf->s[0].v.k);
    snprintf(m->v[F_BLOCK_BYTES], sizeof m->v[F_BLOCK_BYTES], "%" PRIu64, rf->block_bytes);
    snprintf(m->v[F_COUNTS], sizeof m->v[F_COUNTS], "%s", rf->counts_in_meta ? "meta" : "blocks");
    m->present = META_REQUIRED;
    if (rf->probes == BK_PROBES_DH) {
        snprintf(m->v[F_PROBES], sizeof m->v[F_PROBES], "dh");
        m->present |= 1u << F_PROBES;
    }
}

/* 1 when v[0..n) holds only what bloomkit writes in a field: config text
 * (keys, values, blanks), or a plain value. */
static int value_chars_ok(const char *v, size_t n, int config)
{
    for (size_t c = 0; c < n; c++) {
        const char ch = v[c];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || ch == '.' || ch == '-' ||
              ch == '+' ||
              (config && ((ch >= 'A' && ch <= 'Z') || ch == '=' || ch == ' ' || ch == '_'))))
            return 0;
    }
    return 1;
}

/* Read field/value pairs (from HGETALL or the create script, from index
 * `first` of the array). Unknown fields are an error: this name holds
 * something that is not ours, or a newer format. */
static int meta_read(const char *name, const redisReply *r, size_t first, meta *m)
{
    memset(m, 0, sizeof *m);
    if (r->type != REDIS_REPLY_ARRAY || (r->elements - first) % 2 != 0)
        return bk_fail(BK_ESERVER, "redis filter %s: metadata reply of an unexpected shape", name);
    for (size_t i = first; i < r->elements; i += 2) {
        const redisReply *f = r->element[i], *v = r->element[i + 1];
        if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
            return bk_fail(BK_ESERVER, "redis filter %s: metadata reply of an unexpected shape",
                           name);
        if (f->len == 7 && memcmp(f->str, "pushing", 7) == 0) {
            m->pushing = 1;
            continue;
        }
        if (count_field(f->str, f->len))
            continue; /* read (and checked) by bk_rfilter_refresh */
        const int idx = field_index(f->str, f->len);
        const int legacy = idx < 0 && is_config_key(f->str, f->len);
        if (idx < 0 && !legacy)
            return bk_fail(BK_ESERVER,
                           "redis filter %s: the hash %s has a field '%.40s' that bloomkit does "
                           "not write: not a bloomkit filter, or a newer format",
                           name, name, f->str);
        const size_t max = idx == F_CONFIG ? META_CONFIG_MAX : META_VALUE_MAX;
        if (v->len == 0 || v->len >= max)
            return bk_fail(BK_ESERVER, "redis filter %s: metadata field %.40s has a bad length",
                           name, f->str);
        if (!value_chars_ok(v->str, v->len, idx == F_CONFIG))
            return bk_fail(BK_ESERVER,
                           "redis filter %s: metadata field %.40s holds a character bloomkit "
                           "never writes",
                           name, f->str);
        if (legacy) { /* key=value, for the parser */
            const int n = snprintf(m->legacy + m->legacy_len, sizeof m->legacy - m->legacy_len,
                                   " %.*s=%.*s", (int)f->len, f->str, (int)v->len, v->str);
            m->legacy_len += (size_t)n;
            if (m->legacy_len >= sizeof m->legacy)
                return bk_fail(BK_ESERVER, "redis filter %s: metadata too long", name);
            continue;
        }
        memcpy(m->v[idx], v->str, v->len);
        m->v[idx][v->len] = '\0';
        m->present |= 1u << idx;
    }
    return BK_OK;
}

/* The configuration m holds into *c: format 4's text, or the key fields of
 * formats 2 and 3 (every one they always wrote present). */
static int meta_config(const bk_rfilter *rf, const meta *m, int legacy, bk_config *c)
{
    char err[200];
    const char *text = legacy ? m->legacy : m->v[F_CONFIG];
    for (size_t i = 0; legacy && i < sizeof legacy_required / sizeof *legacy_required; i++) {
        char want[32];
        snprintf(want, sizeof want, " %s=", legacy_required[i]);
        if (!strstr(m->legacy, want))
            return bk_fail(BK_ESERVER, "redis filter %s: metadata lacks the field %s", rf->name,
                           legacy_required[i]);
    }
    if (bk_config_parse(c, text, err, sizeof err) != BK_OK)
        return bk_fail(BK_ESERVER, "redis filter %s: bad metadata: %s", rf->name, err);
    if (!c->has_key)
        return bk_fail(BK_ESERVER, "redis filter %s: metadata lacks the hash key", rf->name);
    return BK_OK;
}

/* Turn metadata into a configuration (validated by the config parser) and
 * the block size; check m and k against this version's sizing.
 * long: one check per metadata field, each with its own error. */
static int meta_apply(bk_rfilter *rf, const meta *m)
{
    if (m->pushing)
        return bk_fail(BK_ESERVER,
                       "redis filter %s: a push into this name has not finished (or failed: "
                       "delete the keys named in docs/redis.md and push again)",
                       rf->name);
    const int legacy = strcmp(m->v[F_FORMAT], "2") == 0 || strcmp(m->v[F_FORMAT], "3") == 0;
    const int average = strcmp(m->v[F_FORMAT], META_FORMAT_AVERAGE) == 0;
    if (!legacy && !average && strcmp(m->v[F_FORMAT], META_FORMAT) != 0)
        return bk_fail(
            BK_ESERVER, "redis filter %s: metadata format %s (this bloomkit reads 2 to %s)",
            rf->name, m->present & 1u << F_FORMAT ? m->v[F_FORMAT] : "missing", META_FORMAT);
    const unsigned need = legacy ? META_REQUIRED & ~(1u << F_CONFIG) : META_REQUIRED;
    for (int i = 0; i < NFIELDS; i++)
        if ((need & 1u << i) && !(m->present & (1u << i)))
            return bk_fail(BK_ESERVER, "redis filter %s: metadata lacks the field %s", rf->name,
                           meta_fields[i]);
    if ((legacy && (m->present & 1u << F_CONFIG)) || (!legacy && m->legacy_len))
        return bk_fail(BK_ESERVER,
                       "redis filter %s: metadata of format %s with fields of another format",
                       rf->name, m->v[F_FORMAT]);
    rf->probes = strcmp(m->v[F_FORMAT], "2") == 0 || (m->present & 1u << F_PROBES) ? BK_PROBES_DH
                                                                                   : BK_PROBES_LCG;
    rf->rule = legacy || average ? BK_SLICE_AVERAGE : BK_SLICE_HOLDS;
    if ((m->present & 1u << F_PROBES) && strcmp(m->v[F_PROBES], "dh") != 0)
        return bk_fail(BK_ESERVER, "redis filter %s: bad metadata: probes %s", rf->name,
                       m->v[F_PROBES]);
    bk_config c;
    int rc = meta_config(rf, m, legacy, &c);
    if (rc != BK_OK)
        return rc;
    /* the variants it has scripts for: new variants are the module's */
    if (!(rf->kind = bk_lua_kind_of(c.variant)))
        return bk_lua_refuses(rf->name, c.variant);
    if ((rc = bk_lua_keys_refused(rf->name, &c, NULL, 0)) != BK_OK)
        return rc;
    if (rf->probes == BK_PROBES_DH && rf->kind->slice_keys)
        return bk_fail(BK_EINCOMPAT,
                       "redis filter %s is a scalable chain of metadata format 2, whose slices "
                       "an older bloomkit sized by a rule this version replaced (it broke the "
                       "rate bound): pull it with the version that made it and build a new one",
                       rf->name);
    char *end;
    const unsigned long long bb = strtoull(m->v[F_BLOCK_BYTES], &end, 10);
    if (*end || bb < 64 || bb > BK_REDIS_BLOCK_MAX || bb % 64)
        return bk_fail(BK_ESERVER, "redis filter %s: bad metadata: block_bytes %s", rf->name,
                       m->v[F_BLOCK_BYTES]);
    rf->base.cfg = c;
    bk_hashkey_init(&rf->base.hkey, c.key);
    if (strcmp(m->v[F_COUNTS], "meta") != 0 && strcmp(m->v[F_COUNTS], "blocks") != 0)
        return bk_fail(BK_ESERVER, "redis filter %s: bad metadata: counts %s", rf->name,
                       m->v[F_COUNTS]);
    const bk_redis_url *u = rf->conn ? bk_rconn_url(rf->conn) : NULL;
    if (u && u->block_bytes_given && u->block_bytes != bb)
        return bk_fail(BK_EINCOMPAT,
                       "redis filter %s was made with block_bytes=%llu; the URL asks %llu (drop "
                       "the option to adopt the filter's)",
                       rf->name, bb, (unsigned long long)u->block_bytes);
    rf->block_bytes = bb;
    rf->counts_in_meta = strcmp(m->v[F_COUNTS], "meta") == 0;
    rf->base.ops = rf->kind->ops;
    rf->cell_bits = rf->kind->cell_bits;
    rf->nslices = rf->shaped = 0;
    memset(rf->s, 0, sizeof rf->s);
    rc = bk_rfilter_set_slices(rf, 1);
    if (rc != BK_OK)
        return rc;
    char mk[2][32];
    snprintf(mk[0], sizeof mk[0], "%" PRIu64, rf->s[0].v.m);
    snprintf(mk[1], sizeof mk[1], "%u", rf->s[0].v.k);
    if (strcmp(mk[0], m->v[F_M]) != 0 || strcmp(mk[1], m->v[F_K]) != 0)
        return bk_fail(BK_ESERVER,
                       "redis filter %s: metadata says m=%s k=%s, this bloomkit sizes m=%s k=%s",
                       rf->name, m->v[F_M], m->v[F_K], mk[0], mk[1]);
    /* counts=meta spans slots once the cells have several blocks: fine on a
     * single server, refused by a cluster's scripts */
    if (rf->conn && rf->counts_in_meta && bk_rconn_cluster(rf->conn) && !bk_rfilter_chained(rf) &&
        bk_rfilter_blocks(rf, 0) > 1)
        return bk_fail(BK_EINCOMPAT,
                       "redis filter %s was made on a single server (counts=meta) and has "
                       "several blocks: a cluster cannot run its scripts; pull it and push it "
                       "into the cluster",
                       rf->name);
    return BK_OK;
}

static int conflict(const bk_rfilter *rf, const bk_config *want, char *err, size_t errlen)
{
    const char *d = bk_config_diff(want, &rf->base.cfg);
    if (!d)
        return BK_OK;
    char have[400], asked[400];
    bk_config_format(&rf->base.cfg, 0, have, sizeof have);
    bk_config_format(want, 0, asked, sizeof asked);
    const int rc =
        bk_fail(BK_EINCOMPAT, "redis filter %s exists with another %s (it has: %s; asked: %s)",
                rf->name, d, have, asked);
    bk_errorf(err, errlen, "%s", bk_last_error());
    return rc;
}

/* The metadata: BK_OK and *exists, or an error (wrong type included). */
static int meta_fetch(bk_rfilter *rf, meta *m, int *exists)
{
    redisReply *r;
    int rc = bk_rconn_callf(rf->conn, rf->name, &r, "HGETALL %s", rf->name);
    if (rc != BK_OK)
        return rc;
    if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "WRONGTYPE", 9) == 0)
        rc = bk_redis_foreign(rf->conn, rf->name); /* says what it is, and what to do */
    else if (r->type == REDIS_REPLY_ERROR)
        rc = bk_fail(BK_ESERVER, "redis filter %s: the key %s is not a bloomkit filter: %.200s",
                     rf->name, rf->name, r->str);
    else
        rc = meta_read(rf->name, r, 0, m);
    *exists = rc == BK_OK && r->elements > 0;
    freeReplyObject(r);
    return rc;
}

/* Run the create script: BK_OK with *created, or with the existing
 * metadata in *m when another process created the name first. */
static int meta_create(bk_rfilter *rf, const meta *mine, meta *m, int *created, int pushing)
{
    const char *argv[6 + 2 * NFIELDS + 2];
    char data0[BK_REDIS_KEY_MAX]; /* block 0 of slice 0: NAME's own slot */
    bk_rfilter_data_key(rf, 0, 0, data0, sizeof data0);
    int argc = 0;
    argv[argc++] = "EVALSHA";
    argv[argc++] = rf->sha[BK_RS_CREATE];
    argv[argc++] = "2";
    argv[argc++] = rf->name;
    argv[argc++] = data0;
    for (int i = 0; i < NFIELDS; i++) {
        if (!(mine->present & (1u << i)))
            continue;
        argv[argc++] = meta_fields[i];
        argv[argc++] = mine->v[i];
    }
    if (pushing) {
        argv[argc++] = "pushing";
        argv[argc++] = "1";
    }
    redisReply *r;
    int rc = bk_rconn_call(rf->conn, rf->name, strlen(rf->name), &r, argc, argv, NULL);
    if (rc != BK_OK)
        return rc;
    if (r->type == REDIS_REPLY_ERROR && strstr(r->str, BK_RS_WRONGTYPE " "))
        rc = bk_fail(BK_ESERVER, "redis filter %s: key %.200s, not a string; nothing was created",
                     rf->name, strstr(r->str, BK_RS_WRONGTYPE " ") + sizeof BK_RS_WRONGTYPE);
    else if (r->type == REDIS_REPLY_ERROR && strstr(r->str, BK_RS_WRONGTYPE))
        rc = bk_redis_foreign(rf->conn, rf->name);
    else if (r->type == REDIS_REPLY_ERROR)
        rc = bk_fail(BK_ESERVER, "redis filter %s: creating the metadata failed: %.200s", rf->name,
                     r->str);
    else if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
             r->element[0]->type != REDIS_REPLY_INTEGER)
        rc = bk_fail(BK_ESERVER, "redis filter %s: create script reply of an unexpected shape",
                     rf->name);
    else if ((*created = r->element[0]->integer == 1) == 0)
        rc = meta_read(rf->name, r, 1, m);
    freeReplyObject(r);
    return rc;
}

/* Keys whose types are asked at a time: one round trip for each so many
 * (a filter of small blocks has thousands). */
#define BK_TYPES_AHEAD 64

typedef struct typed_key {
    char name[BK_REDIS_KEY_MAX];
    const char *want; /* "string" or "hash" */
} typed_key;

/* TYPE of q[0 .. n) in one pipeline: BK_OK when each is absent or of its
 * type, else the first misfit's BK_ESERVER. Every reply of what was queued
 * is read, so that the connection stays in step. */
static int types_of(bk_rfilter *rf, const typed_key *q, size_t n)
{
    size_t queued = 0;
    int rc = BK_OK;
    for (; queued < n && rc == BK_OK; queued++) {
        const char *argv[2] = {"TYPE", q[queued].name};
        const size_t lens[2] = {4, strlen(q[queued].name)};
        rc = bk_rconn_append(rf->conn, argv[1], lens[1], 2, argv, lens);
        if (rc != BK_OK)
            break;
    }
    for (size_t i = 0; i < queued; i++) {
        redisReply *r;
        const int got = bk_rconn_reply(rf->conn, &r);
        if (got != BK_OK)
            return got; /* the pipeline broke: nothing more to read */
        const int ok = r->type == REDIS_REPLY_STATUS &&
                       (strcmp(r->str, "none") == 0 || strcmp(r->str, q[i].want) == 0);
        if (!ok && rc == BK_OK)
            rc = bk_fail(BK_ESERVER, "redis filter %s: key %s holds a %.40s, not a %s", rf->name,
                         q[i].name, r->type == REDIS_REPLY_STATUS ? r->str : "?", q[i].want);
        freeReplyObject(r);
    }
    return rc;
}

/* Every data key must be a string (or absent), every count key a hash (or
 * absent): a key of another type means the name collides with someone
 * else's data, and nothing is written. */
static int check_types(bk_rfilter *rf)
{
    if (rf->kind->windowed)
        return BK_OK; /* its keys come and go with the spans: its scripts check them */
    typed_key *q = bk_mem_alloc(&rf->base.alloc, BK_TYPES_AHEAD * sizeof *q);
    if (!q)
        return bk_fail(BK_ENOMEM, "redis filter %s: out of memory", rf->name);
    size_t n = 0;
    int rc = BK_OK;
    for (uint32_t j = 0; j < rf->nslices && rc == BK_OK; j++) {
        const uint64_t blocks = bk_rfilter_blocks(rf, j);
        for (uint64_t b = 0; b < blocks && rc == BK_OK; b++) {
            for (int what = 0; what < 2 && rc == BK_OK; what++) {
                if (what == 1 && (j || b) && (rf->kind->slice_keys || rf->counts_in_meta))
                    continue; /* one count hash: the metadata */
                if (what == 0)
                    bk_rfilter_data_key(rf, j, b, q[n].name, sizeof q[n].name);
                else
                    bk_rfilter_count_key(rf, b, q[n].name, sizeof q[n].name);
                q[n].want = what == 0 ? "string" : "hash";
                if (++n == BK_TYPES_AHEAD) {
                    rc = types_of(rf, q, n);
                    n = 0;
                }
            }
        }
    }
    if (rc == BK_OK && n)
        rc = types_of(rf, q, n);
    bk_mem_free(&rf->base.alloc, q);
    return rc;
}

/* A single server must be able to hold the new filter's cells: the limit
 * a local filter meets in its allocation (BK_ERANGE here, before anything
 * is written; a filter a server cannot hold would fail on its first adds,
 * after allocating up to its size). The server's maxmemory when set, else
 * its machine's memory. A cluster spreads blocks over its masters: not
 * checked there. */
static int check_room(bk_rfilter *rf)
{
    if (!rf->conn || bk_rconn_cluster(rf->conn))
        return BK_OK;
    uint64_t need = 0;
    for (uint32_t j = 0; j < rf->nslices; j++)
        need += rf->s[j].v.nbytes;
    redisReply *r;
    const int rc = bk_rconn_callf(rf->conn, rf->name, &r, "INFO memory");
    if (rc != BK_OK)
        return rc;
    unsigned long long limit = 0;
    if (r->type == REDIS_REPLY_STRING) {
        const char *mm = strstr(r->str, "\nmaxmemory:"),
                   *tot = strstr(r->str, "total_system_memory:");
        if (mm)
            limit = strtoull(mm + strlen("\nmaxmemory:"), NULL, 10);
        if (!limit && tot)
            limit = strtoull(tot + strlen("total_system_memory:"), NULL, 10);
    }
    freeReplyObject(r);
    if (limit && need > limit)
        return bk_fail(BK_ERANGE,
                       "redis filter %s needs %llu bytes of cells; the server holds at most %llu "
                       "(maxmemory, or its memory): nothing was created",
                       rf->name, (unsigned long long)need, limit);
    return BK_OK;
}

/* With counts=blocks every block past the first keeps its counts in a hash
 * of its own, in its own slot: each gets the field format (if it lacks it:
 * a filter made before the field was written) so that the scripts writing
 * that block can tell the filter still exists (scripts.c, WHOLE). */
static int mark_block_counts(bk_rfilter *rf)
{
    if (rf->counts_in_meta || bk_rfilter_chained(rf))
        return BK_OK;
    int rc = BK_OK;
    for (uint64_t b = 1; b < bk_rfilter_blocks(rf, 0) && rc == BK_OK; b++) {
        char key[BK_REDIS_KEY_MAX];
        bk_rfilter_count_key(rf, b, key, sizeof key);
        redisReply *r;
        rc = bk_rconn_callf(rf->conn, key, &r, "HSETNX %s format %s", key, META_FORMAT_AVERAGE);
        if (rc != BK_OK)
            break;
        if (r->type == REDIS_REPLY_ERROR)
            rc = bk_fail(BK_ESERVER, "redis filter %s: HSETNX %s: %.200s", rf->name, key, r->str);
        freeReplyObject(r);
    }
    return rc;
}

/* A window's span, as the variant lays its generations out (bk_chain_slice). */
static int window_span(bk_rfilter *rf)
{
    bk_slice_view v;
    bk_slice_limit l;
    const int rc = bk_chain_slice(&rf->base.cfg, 0, rf->rule, &v, &l);
    if (rc != BK_OK || v.span <= 0)
        return bk_fail(rc != BK_OK ? rc : BK_ERANGE, "redis filter %s: its window cannot be sized",
                       rf->name);
    rf->span_ms = v.span;
    return BK_OK;
}

/* long: the Lua mode's open in its order: scripts, metadata (made or read), checks. */
int bk_lua_open(bk_rconn *conn, const char *name, uint64_t block_bytes, const bk_config *cfg,
                const bk_config *want, const char *text, int strict, unsigned flags, char *err,
                size_t errlen, bk_filter **out)
{
    *out = NULL;
    bk_config c = *cfg;
    const bk_allocator a = bk_current_allocator();
    const bk_lua_kind *kind = bk_lua_kind_of(c.variant);
    bk_rfilter *rf;
    int rc = bk_filter_new(sizeof *rf, 0, kind ? kind->ops : &bk_rfilter_ops, &c, &a, &rf);
    if (rc != BK_OK) {
        bk_rconn_close(conn);
        return rc;
    }
    rf->conn = conn;
    rf->block_bytes = block_bytes;
    rf->kind = kind;
    rf->cell_bits = kind ? kind->cell_bits : 1;
    rf->name = bk_mem_strdup(&a, name);
    if (!rf->name)
        rc = bk_fail(BK_ENOMEM, "redis filter %s: out of memory", name);
    /* the variants and keys it had: new ones are the module's */
    if (rc == BK_OK && !kind && !(flags & BK_ROPEN_EXISTING))
        rc = bk_lua_refuses(name, c.variant);
    if (rc == BK_OK && kind && !(flags & BK_ROPEN_EXISTING))
        rc = bk_lua_keys_refused(name, &c, NULL, 0);
    if (rc == BK_OK)
        rc = bk_rfilter_load_scripts(rf);
    meta m;
    int exists = 0;
    if (rc == BK_OK)
        rc = meta_fetch(rf, &m, &exists);
    const int create_pushing = (flags & BK_ROPEN_PUSH) != 0;
    if (rc == BK_OK && exists && create_pushing)
        rc =
            bk_fail(BK_EINCOMPAT,
                    "redis filter %s already exists; push needs a new name, or the old one dropped "
                    "first (bloomkit drop --redis URL)",
                    rf->name);
    if (rc == BK_OK && !exists && (flags & BK_ROPEN_EXISTING))
        rc = bk_fail(BK_ENOTFOUND, "redis filter %s does not exist", rf->name);
    if (rc == BK_OK && !exists) {
        if (!c.has_key && (rc = bk_random_bytes(c.key, sizeof c.key)) == BK_OK)
            c.has_key = 1;
        if (rc == BK_OK) {
            rf->base.cfg = c;
            bk_hashkey_init(&rf->base.hkey, c.key);
            /* every count in NAME unless a cluster forbids it (docs/redis.md) */
            rf->counts_in_meta = bk_rfilter_chained(rf) || !bk_rconn_cluster(rf->conn);
            rf->probes = flags & BK_ROPEN_PROBES_DH ? BK_PROBES_DH : BK_PROBES_LCG;
            rf->rule = flags & BK_ROPEN_SLICES_AVERAGE ? BK_SLICE_AVERAGE : BK_SLICE_HOLDS;
            rc = bk_rfilter_set_slices(rf, 1);
        }
        meta mine;
        int created = 0;
        /* every key of the new filter must be usable before anything is
         * written: blocks in other slots here (a script may touch one
         * slot), the metadata's slot again inside the create script */
        if (rc == BK_OK)
            rc = check_room(rf); /* before asking each of its keys' types */
        if (rc == BK_OK)
            rc = check_types(rf);
        if (rc == BK_OK) {
            meta_from(rf, &mine);
            rc = meta_create(rf, &mine, &m, &created, create_pushing);
        }
        if (rc == BK_OK && !created && create_pushing)
            rc = bk_fail(BK_EINCOMPAT,
                         "redis filter %s was created meanwhile; push needs a new "
                         "name",
                         rf->name);
        exists = rc == BK_OK && !created;
    }
    if (rc == BK_OK && exists) {
        if (flags & BK_ROPEN_ANY_STATE)
            m.pushing = 0;
        rc = meta_apply(rf, &m);
        if (rc == BK_OK && text) {
            bk_config asked = rf->base.cfg;
            asked.has_key = 0;
            rc = bk_config_parse_over(&asked, text, err, errlen) == BK_OK
                     ? conflict(rf, &asked, err, errlen)
                     : BK_ECONFIG;
        } else if (rc == BK_OK && strict) {
            rc = conflict(rf, want, err, errlen);
        }
    }
    if (rc == BK_OK && rf->kind->windowed)
        rc = window_span(rf);
    if (rc == BK_OK)
        rc = mark_block_counts(rf);
    if (rc == BK_OK && !create_pushing)
        rc = bk_rfilter_refresh(rf);
    if (rc == BK_OK && !create_pushing)
        rc = check_types(rf);
    if (rc != BK_OK) {
        if (err && errlen && !err[0])
            bk_errorf(err, errlen, "%s", bk_last_error());
        bk_rfilter_free(rf);
        return rc;
    }
    *out = &rf->base;
    return BK_OK;
}

int bk_redis_meta_check(const char *name, const redisReply *r)
{
    const bk_allocator a = bk_current_allocator();
    bk_config c;
    bk_config_init(&c);
    bk_rfilter *rf;
    const int made = bk_filter_new(sizeof *rf, 0, &bk_rfilter_ops, &c, &a, &rf);
    if (made != BK_OK)
        return made;
    rf->name = bk_mem_strdup(&a, name);
    int rc = rf->name ? BK_OK : BK_ENOMEM;
    meta m;
    if (rc == BK_OK)
        rc = meta_read(name, r, 0, &m);
    if (rc == BK_OK && r->elements > 0)
        rc = meta_apply(rf, &m);
    bk_rfilter_free(rf);
    return rc;
}
