/*
 * shards.c - the descriptor and the keys of a sharded module filter (see
 * shards.h).
 *
 * The descriptor is text, one field a line:
 *   bloomkit-shards 1
 *   shards=N
 *   route=<32 hex digits>
 *   config=<config text>
 *   ready=1
 * written in two steps by the one opener that creates the filter: without
 * its last line (SET NX: of several creators exactly one writes it, the
 * others adopt it and wait), then, once that opener has made every shard,
 * whole (SET XX). So a shard missing from a ready filter was lost (deleted,
 * evicted, flushed), never "not made yet": nobody but the creator makes
 * one. Read strictly: any other shape is refused, since the key may hold
 * someone else's string.
 */
#include "shards.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hex.h"
#include "../common/error.h"

#define MAGIC "bloomkit-shards 1\n"

int bk_rshards_is(const char *value, size_t len)
{
    return len >= sizeof MAGIC - 1 && memcmp(value, MAGIC, sizeof MAGIC - 1) == 0;
}

static int format(const bk_rshards *d, char *out, size_t len)
{
    char hex[33];
    bk_hex_encode(d->route, 16, hex);
    const int n = snprintf(out, len, MAGIC "shards=%u\nroute=%s\nconfig=%s\n%s", d->n, hex,
                           d->config, d->ready ? "ready=1\n" : "");
    return n > 0 && (size_t)n < len ? n : -1;
}

/* The value of line "field=..." of text, its length in *n; NULL if absent. */
static const char *field(const char *text, size_t len, const char *name, size_t *n)
{
    const size_t fl = strlen(name);
    const char *end = text + len;
    for (const char *p = text; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return NULL; /* every line ends with a newline */
        if ((size_t)(nl - p) > fl && memcmp(p, name, fl) == 0 && p[fl] == '=') {
            *n = (size_t)(nl - p) - fl - 1;
            return p + fl + 1;
        }
        p = nl + 1;
    }
    return NULL;
}

int bk_rshards_parse(const char *name, const char *text, size_t len, bk_rshards *d)
{
    memset(d, 0, sizeof *d);
    size_t n = 0, rn = 0, cn = 0;
    const char *s = bk_rshards_is(text, len) ? field(text, len, "shards", &n) : NULL;
    const char *r = s ? field(text, len, "route", &rn) : NULL;
    const char *c = r ? field(text, len, "config", &cn) : NULL;
    char num[8] = "";
    int ok = c && n > 0 && n < sizeof num && rn == 32 && cn > 0 && cn < sizeof d->config &&
             !memchr(c, '\0', cn);
    if (ok) {
        memcpy(num, s, n);
        char *end;
        const unsigned long v = strtoul(num, &end, 10);
        ok = *end == '\0' && num[0] >= '1' && num[0] <= '9' && v >= 2 && v <= BK_REDIS_SHARDS_MAX;
        d->n = (unsigned)v;
    }
    for (size_t i = 0; ok && i < 16; i++) {
        const int hi = bk_hex_value(r[2 * i]), lo = bk_hex_value(r[2 * i + 1]);
        ok = hi >= 0 && lo >= 0;
        if (ok)
            d->route[i] = (uint8_t)(hi << 4 | lo);
    }
    if (!ok)
        return bk_fail(BK_ESERVER,
                       "redis filter %s: the key %s is a string that is not a bloomkit shard "
                       "descriptor (or a damaged one)",
                       name, name);
    memcpy(d->config, c, cn);
    d->config[cn] = '\0';
    size_t yn = 0;
    const char *y = field(text, len, "ready", &yn);
    if (y && !(yn == 1 && y[0] == '1'))
        return bk_fail(BK_ESERVER, "redis filter %s: its shard descriptor's ready line is damaged",
                       name);
    d->ready = y != NULL;
    return BK_OK;
}

int bk_rshards_read(bk_rconn *c, const char *name, bk_rshards *d)
{
    redisReply *r;
    int rc = bk_rconn_callf(c, name, &r, "GET %s", name);
    if (rc != BK_OK)
        return rc;
    if (r->type == REDIS_REPLY_NIL)
        rc = bk_fail(BK_ENOTFOUND, "redis filter %s does not exist", name);
    else if (r->type == REDIS_REPLY_STRING)
        rc = bk_rshards_parse(name, r->str, r->len, d);
    else
        rc = bk_fail(BK_ESERVER, "redis filter %s: the key %s is not a shard descriptor: %.200s",
                     name, name, r->type == REDIS_REPLY_ERROR ? r->str : "another type");
    freeReplyObject(r);
    return rc;
}

/* SET name <d's text> NX or XX: the reply's 1 (set), 0 (not), or an error. */
static int write_descriptor(bk_rconn *c, const char *name, const bk_rshards *d, const char *how)
{
    char text[sizeof d->config + 128];
    const int len = format(d, text, sizeof text);
    if (len < 0)
        return bk_fail(BK_ECONFIG, "redis filter %s: config text too long", name);
    redisReply *r;
    const char *argv[] = {"SET", name, text, how};
    const size_t lens[] = {3, strlen(name), (size_t)len, 2};
    int rc = bk_rconn_call(c, name, strlen(name), &r, 4, argv, lens);
    if (rc != BK_OK)
        return rc;
    if (r->type == REDIS_REPLY_STATUS)
        rc = 1;
    else if (r->type == REDIS_REPLY_NIL)
        rc = 0;
    else
        rc = bk_fail(BK_ESERVER, "redis filter %s: writing its shard descriptor: %.200s", name,
                     r->type == REDIS_REPLY_ERROR ? r->str : "a reply of an unexpected shape");
    freeReplyObject(r);
    return rc;
}

int bk_rshards_create(bk_rconn *c, const char *name, bk_rshards *d)
{
    d->ready = 0;
    const int rc = write_descriptor(c, name, d, "NX");
    if (rc == 0) {
        const int read = bk_rshards_read(c, name, d);
        if (read != BK_OK)
            return read == BK_ENOTFOUND ? bk_fail(BK_ESERVER,
                                                  "redis filter %s was dropped while "
                                                  "being made: try again",
                                                  name)
                                        : read;
    }
    return rc;
}

int bk_rshards_ready(bk_rconn *c, const char *name, bk_rshards *d)
{
    d->ready = 1;
    const int rc = write_descriptor(c, name, d, "XX");
    if (rc == 0)
        return bk_fail(BK_ENOTFOUND, "redis filter %s was dropped while being made", name);
    return rc < 0 ? rc : BK_OK;
}

/* Hash tags by slot range: tags[s] of n is the first "bk<j>" whose slot
 * falls in the middle half of range s (16384 slots in n equal ranges), so
 * that a master serving a range of equal size holds it even when its range
 * starts or ends a few slots off. One pass over j = 0, 1, ... fills every
 * range (for n = 1024, j stays below 14,000). */
void bk_rshards_tags(unsigned n, unsigned *tags)
{
    unsigned left = n;
    for (unsigned s = 0; s < n; s++)
        tags[s] = UINT_MAX;
    for (unsigned j = 0; left; j++) {
        char tag[16];
        const int len = snprintf(tag, sizeof tag, "bk%u", j);
        const unsigned slot = bk_redis_key_slot(tag, (size_t)len);
        const unsigned s = (unsigned)((uint64_t)slot * n / 16384);
        const unsigned lo = (unsigned)((uint64_t)s * 16384 / n),
                       hi = (unsigned)((uint64_t)(s + 1) * 16384 / n), q = (hi - lo) / 4;
        if (tags[s] == UINT_MAX && slot >= lo + q && slot < hi - q) {
            tags[s] = j;
            left--;
        }
    }
}

void bk_rshards_key(const char *name, unsigned i, unsigned n, const unsigned *tags, char *out,
                    size_t len)
{
    const unsigned home = (unsigned)((uint64_t)bk_redis_key_slot(name, strlen(name)) * n / 16384);
    snprintf(out, len, "%s:shard:%u{bk%u}", name, i, tags[(home + i) % n]);
}

unsigned bk_rshards_route(const bk_rshards *d, const void *item, size_t len)
{
    uint8_t h[8];
    bk_siphash24(d->route, item, len, h);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | h[i];
    return (unsigned)(v % d->n);
}

int bk_rshards_shard_config(const bk_config *logical, unsigned n, bk_config *out)
{
    if (logical->bits)
        return bk_fail(BK_ECONFIG, "shards: pinned bits (bits=) cannot be divided among shards; "
                                   "give capacity and fpr instead");
    *out = *logical;
    out->capacity = logical->capacity / n + (logical->capacity % n != 0);
    return BK_OK;
}
