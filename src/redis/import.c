/*
 * import.c - a Redis set's members into a bloomkit filter
 * (bk_redis_import_set, see bloomkit_redis.h).
 *
 * The members are read with SSCAN, a thousand at a time, and added with the
 * batch call (pipelined). SSCAN may return a member twice; a filter that
 * counts (counting, cuckoo) is asked first, so that no member is added twice,
 * and a resumed import neither.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bloomkit_redis.h"
#include "bloomkit_tools.h"

#include "../common/alloc.h"
#include "../common/hex.h"
#include "../common/error.h"
#include "conn.h"
#include "modkey.h"
#include "redis_url.h"

#define SCAN_COUNT "1000"
#define FP_HEX     40 /* a request fingerprint: SHA-1, in hexadecimal */
#define FP_BYTES   (FP_HEX / 2)

/* The name an in-place import keeps the set under: SET:imported, or
 * {SET}:imported when a cluster would put that in another slot (RENAME
 * stays within one). */
static int kept_name(const char *set, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s:imported", set);
    if (n > 0 && (size_t)n < len &&
        bk_redis_key_slot(buf, (size_t)n) != bk_redis_key_slot(set, strlen(set)))
        n = snprintf(buf, len, "{%s}:imported", set);
    return n > 0 && (size_t)n < len
               ? BK_OK
               : bk_fail(BK_ERANGE, "import: the name %.200s is too long", set);
}

typedef struct importer {
    bk_rconn *c;
    const char *source; /* the set read */
    int fingerprints;   /* input=scrapy-redis: members are 40 hex digits */
    int counts;         /* a variant that counts adds: ask before adding */
    bk_filter *f;
    bk_redis_import_stats *st;
    char set_type[32], name_type[32], kept_type[32]; /* TYPE of set_key, NAME, the kept name */
    uint8_t keys[1024][FP_BYTES];
} importer;

/* The key of member m (n bytes) under the filter's input: *key, *len. */
static int member_key(importer *im, const char *m, size_t n, size_t i, const void **key,
                      size_t *len)
{
    if (!im->fingerprints) {
        *key = m;
        *len = n;
        return BK_OK;
    }
    int ok = n == FP_HEX;
    for (size_t j = 0; ok && j < FP_BYTES; j++) {
        const int hi = bk_hex_value(m[2 * j]), lo = bk_hex_value(m[2 * j + 1]);
        ok = hi >= 0 && lo >= 0;
        im->keys[i][j] = (uint8_t)(hi << 4 | (lo & 15));
    }
    if (!ok)
        return bk_fail(BK_ESERVER,
                       "import: %s holds \"%.60s\", which is not a request fingerprint (40 "
                       "hexadecimal digits); not scrapy-redis's set? Import its members as they "
                       "are with input=raw (--input raw)",
                       im->source, m);
    *key = im->keys[i];
    *len = FP_BYTES;
    return BK_OK;
}

/* Add the members of one SSCAN reply. */
static int add_members(importer *im, const redisReply *arr)
{
    const void *keys[1024] = {0};
    size_t lens[1024] = {0};
    int res[1024];
    size_t n = 0;
    for (size_t i = 0; i < arr->elements && n < 1024; i++) {
        const redisReply *m = arr->element[i];
        if (m->type != REDIS_REPLY_STRING)
            return bk_fail(BK_ESERVER, "import: SSCAN %s sent a member that is not a string",
                           im->source);
        const int rc = member_key(im, m->str, m->len, n, &keys[n], &lens[n]);
        if (rc != BK_OK)
            return rc;
        n++;
    }
    im->st->members += n;
    if (im->counts) { /* add only what the filter does not hold */
        int rc = bk_contains_batch(im->f, keys, lens, n, res);
        if (rc != BK_OK)
            return rc;
        size_t w = 0;
        for (size_t i = 0; i < n; i++)
            if (!res[i]) {
                keys[w] = keys[i];
                lens[w++] = lens[i];
            }
        n = w;
    }
    const int rc = bk_add_batch(im->f, keys, lens, n, res);
    for (size_t i = 0; rc == BK_OK && i < n; i++)
        im->st->added += res[i] == 1;
    return rc;
}

static int scan(importer *im, bk_progress_fn progress, void *arg)
{
    const uint64_t total = bk_rconn_count(im->c, "SCARD", im->source);
    char cursor[32] = "0";
    int rc = BK_OK;
    do {
        redisReply *r;
        rc = bk_rconn_callf(im->c, im->source, &r, "SSCAN %s %s COUNT " SCAN_COUNT, im->source,
                            cursor);
        if (rc != BK_OK)
            break;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_ARRAY ||
            r->element[1]->elements > 1024)
            rc = bk_fail(BK_ESERVER, "import: SSCAN %s sent an unexpected reply", im->source);
        else {
            snprintf(cursor, sizeof cursor, "%s", r->element[0]->str);
            rc = add_members(im, r->element[1]);
        }
        freeReplyObject(r);
        if (rc == BK_OK && progress && progress(im->st->members, total, arg) != 0)
            rc = bk_fail(BK_ECANCELED, "import: stopped after %" PRIu64 " of %" PRIu64 " members",
                         im->st->members, total);
    } while (rc == BK_OK && strcmp(cursor, "0") != 0);
    return rc;
}

/* Before anything is written: the members of the set's first SSCAN reply
 * are keys of the filter's input, so that a set of another kind changes
 * nothing. */
static int check_first(importer *im, const char *set)
{
    redisReply *r;
    int rc = bk_rconn_callf(im->c, set, &r, "SSCAN %s 0 COUNT " SCAN_COUNT, set);
    if (rc != BK_OK)
        return rc;
    const redisReply *arr = r->type == REDIS_REPLY_ARRAY && r->elements == 2 ? r->element[1] : NULL;
    const char *was = im->source;
    im->source = set;
    for (size_t i = 0; arr && rc == BK_OK && i < arr->elements && i < 1024; i++) {
        const void *key;
        size_t len;
        if (arr->element[i]->type == REDIS_REPLY_STRING)
            rc = member_key(im, arr->element[i]->str, arr->element[i]->len, i, &key, &len);
    }
    im->source = was;
    freeReplyObject(r);
    return rc;
}

/* 1 when the filter's input is scrapy-redis's fingerprints. */
static int holds_fingerprints(const bk_filter *f)
{
    char input[32] = "";
    bk_get_setting(f, "input", input, sizeof input);
    return strcmp(input, "scrapy-redis") == 0;
}

/* The input text asks for: 1 scrapy-redis (stated, or not stated), 0 raw. */
static int asks_fingerprints(const char *text)
{
    bk_config cfg;
    bk_config_init(&cfg);
    bk_config_set(&cfg, "input", "scrapy-redis", NULL, 0);
    char input[32] = "";
    if (text)
        bk_config_parse_over(&cfg, text, NULL, 0); /* a bad text fails at the open */
    bk_config_get(&cfg, "input", input, sizeof input);
    return strcmp(input, "scrapy-redis") == 0;
}

/* Where the members come from: set_key, or in place (set_key is the
 * filter's NAME) the kept set: *rename when set_key must first be renamed to
 * it, not when an earlier import did (resume). */
static int plan_source(importer *im, const char *name, const char *set_key, int *rename)
{
    const char *t = im->set_type;
    *rename = 0;
    im->source = set_key;
    if (strcmp(name, set_key) != 0) {
        if (strcmp(t, "none") == 0)
            return bk_fail(BK_ENOTFOUND, "import: there is no key %s on the server", set_key);
        return strcmp(t, "set") == 0
                   ? BK_OK
                   : bk_fail(BK_ESERVER, "import: the key %s is a %s, not a set", set_key, t);
    }
    im->source = im->st->kept;
    if (strcmp(t, "set") == 0) {
        *rename = 1;
        return strcmp(im->kept_type, "none") == 0
                   ? BK_OK
                   : bk_fail(BK_ESERVER,
                             "import: %s is a set, and %s, where the import keeps it, exists "
                             "already (a %s): rename or delete that key first",
                             set_key, im->st->kept, im->kept_type);
    }
    if (strcmp(im->kept_type, "set") == 0)
        return BK_OK; /* an earlier import renamed it: resume */
    if (strcmp(t, "none") == 0)
        return bk_fail(BK_ENOTFOUND, "import: there is no key %s on the server", set_key);
    return bk_fail(BK_ESERVER,
                   "import: %s is not a set (it is a %s) and no set is kept at %s: nothing to "
                   "import",
                   set_key, t, im->st->kept);
}

/* An existing filter, as it is (agreeing with text), holding the keys the
 * import adds. */
static int open_existing(importer *im, const char *url, const char *name, const char *text)
{
    int rc = bk_redis_open_config(url, text, NULL, 0, &im->f);
    if (rc != BK_OK)
        return rc;
    im->fingerprints = holds_fingerprints(im->f);
    if (!im->fingerprints && asks_fingerprints(text))
        return bk_fail(BK_EINCOMPAT,
                       "import: the filter %s holds raw keys (input=raw), which request "
                       "fingerprints would never match: import into a new name, or with "
                       "--input raw to add the members as they are",
                       name);
    return BK_OK;
}

/* A new filter: the defaults for a crawl, a capacity of the set's size, then
 * text over them. */
static int create(importer *im, const char *url, const char *text)
{
    uint64_t cap = bk_rconn_count(im->c, "SCARD", im->source);
    char defaults[128];
    snprintf(defaults, sizeof defaults, "input=scrapy-redis capacity=%" PRIu64,
             cap < 1000000 ? 1000000 : cap);
    bk_config cfg;
    bk_config_init(&cfg);
    char err[256];
    if (bk_config_parse_over(&cfg, bk_config_preset("crawler"), NULL, 0) != BK_OK ||
        bk_config_parse_over(&cfg, defaults, NULL, 0) != BK_OK ||
        (text && bk_config_parse_over(&cfg, text, err, sizeof err) != BK_OK))
        return bk_fail(BK_ECONFIG, "import: %s", text ? err : "bad defaults");
    return bk_redis_open_default(url, &cfg, &im->f);
}

static int rename_set(importer *im, const char *set_key)
{
    redisReply *r;
    int rc = bk_rconn_callf(im->c, set_key, &r, "RENAMENX %s %s", set_key, im->st->kept);
    if (rc != BK_OK)
        return rc;
    if (r->type != REDIS_REPLY_INTEGER || r->integer != 1)
        rc = bk_fail(BK_ESERVER, "import: RENAMENX %s %s: %.200s", set_key, im->st->kept,
                     r->type == REDIS_REPLY_ERROR ? r->str : "refused");
    freeReplyObject(r);
    return rc;
}

static int run(importer *im, const char *url, const char *name, const char *set_key,
               const char *text, bk_progress_fn progress, void *arg)
{
    int rc = kept_name(set_key, im->st->kept, sizeof im->st->kept), rename = 0;
    if (rc == BK_OK)
        rc = bk_rconn_type(im->c, set_key, im->set_type, sizeof im->set_type);
    if (rc == BK_OK)
        rc = bk_rconn_type(im->c, name, im->name_type, sizeof im->name_type);
    if (rc == BK_OK)
        rc = bk_rconn_type(im->c, im->st->kept, im->kept_type, sizeof im->kept_type);
    if (rc == BK_OK)
        rc = plan_source(im, name, set_key, &rename);
    if (!rename && strcmp(name, set_key) != 0)
        im->st->kept[0] = '\0';
    /* the filter, when there is one (in place, NAME is the set until renamed) */
    const int exists = strcmp(im->name_type, "none") != 0 && strcmp(im->name_type, "set") != 0;
    if (rc == BK_OK && exists)
        rc = open_existing(im, url, name, text);
    else if (rc == BK_OK)
        im->fingerprints = asks_fingerprints(text);
    if (rc == BK_OK)
        rc = check_first(im, rename ? set_key : im->source);
    if (rc == BK_OK && rename)
        rc = rename_set(im, set_key);
    if (rc == BK_OK && !exists)
        rc = create(im, url, text);
    if (rc == BK_OK) {
        bk_config cfg;
        bk_config_init(&cfg);
        bk_get_config(im->f, &cfg);
        im->counts = bk_variant_removes(cfg.variant);
        rc = scan(im, progress, arg);
    }
    return rc;
}

int bk_redis_import_set(const char *url, const char *set_key, const char *config_text,
                        bk_progress_fn progress, void *arg, bk_redis_import_stats *st)
{
    bk_call_begin();
    if (!url || !set_key || !st)
        return bk_fail(BK_EINVAL, "redis_import_set: no url, set or stats");
    memset(st, 0, sizeof *st);
    bk_redis_url u;
    int rc = bk_redis_url_parse(url, &u);
    if (rc != BK_OK)
        return bk_done(rc, "redis_import_set");
    const bk_allocator a = bk_current_allocator();
    importer *im = bk_mem_alloc(&a, sizeof *im);
    if (!im) {
        bk_redis_url_free(&u);
        return bk_fail(BK_ENOMEM, "import: out of memory");
    }
    memset(im, 0, sizeof *im);
    im->st = st;
    rc = bk_rconn_open(&u, &im->c);
    if (rc == BK_OK)
        rc = run(im, url, u.name, set_key, config_text, progress, arg);
    bk_free(im->f);
    bk_rconn_close(im->c);
    bk_redis_url_free(&u);
    bk_mem_free(&a, im);
    return bk_done(rc, "redis_import_set");
}
