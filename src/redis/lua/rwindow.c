/*
 * rwindow.c - a window filter in Redis: reading its live generations and
 * clearing them (see rfilter.h for the keys; the add and lookup scripts and
 * their rules are in scripts.c, and docs/redis.md tells the whole of it).
 *
 * Which generations are live is decided by the server's clock (TIME), as
 * in the scripts, so every client agrees whatever its own clock says.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/error.h"
#include "rfilter.h"

/* The hash of generation g: its slice count and counts. */
static int gen_key(const bk_rfilter *rf, int64_t g, char *buf, size_t len)
{
    const int n = snprintf(buf, len, "%s:{%s}:w%" PRId64, rf->name, rf->name, g);
    return n > 0 && (size_t)n < len ? n : -1;
}

/* The server's time in ms. */
static int server_ms(bk_rfilter *rf, int64_t *out)
{
    redisReply *r;
    int rc = bk_rconn_callf(rf->conn, rf->name, &r, "TIME");
    if (rc != BK_OK)
        return rc;
    long long sec = -1, usec = -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[0]->type == REDIS_REPLY_STRING && r->element[1]->type == REDIS_REPLY_STRING) {
        rc = bk_rfilter_count_value(rf, r->element[0], &sec);
        rc = rc ? rc : bk_rfilter_count_value(rf, r->element[1], &usec);
    }
    freeReplyObject(r);
    if (rc == BK_OK && (sec < 0 || sec > INT64_MAX / 2000 || usec < 0 || usec >= 1000000))
        rc = bk_fail(BK_ESERVER, "redis filter %s: TIME sent a reply bloomkit cannot read",
                     rf->name);
    *out = sec * 1000 + usec / 1000;
    return rc;
}

/* The newest generation made (NAME's field gen), or -1 for none. */
static int newest_gen(bk_rfilter *rf, int64_t *out)
{
    redisReply *r;
    int rc = bk_rconn_callf(rf->conn, rf->name, &r, "HGET %s gen", rf->name);
    if (rc != BK_OK)
        return rc;
    long long g = -1;
    if (r->type == REDIS_REPLY_ERROR)
        rc = bk_fail(BK_ESERVER, "redis filter %s: %.200s", rf->name, r->str);
    else if (r->type != REDIS_REPLY_NIL)
        rc = bk_rfilter_count_value(rf, r, &g);
    freeReplyObject(r);
    *out = g;
    return rc;
}

/* Generation g's slices, appended to rf->win (none when it is absent). */
static int read_gen(bk_rfilter *rf, int64_t g)
{
    char key[BK_REDIS_KEY_MAX];
    gen_key(rf, g, key, sizeof key);
    redisReply *r;
    int rc = bk_rconn_callf(rf->conn, key, &r, "HGETALL %s", key);
    if (rc != BK_OK)
        return rc;
    long long slices = 0, bits[BK_LUA_CHAIN_MAX] = {0}, keys[BK_LUA_CHAIN_MAX] = {0};
    if (r->type != REDIS_REPLY_ARRAY || r->elements % 2)
        rc = bk_fail(BK_ESERVER, "redis filter %s: the key %s is not a generation's hash", rf->name,
                     key);
    for (size_t i = 0; i < r->elements && rc == BK_OK; i += 2) {
        const redisReply *f = r->element[i], *v = r->element[i + 1];
        int j;
        if (f->type != REDIS_REPLY_STRING)
            rc = BK_ESERVER;
        else if (f->len == 6 && memcmp(f->str, "slices", 6) == 0)
            rc = bk_rfilter_count_value(rf, v, &slices);
        else if ((j = bk_rfilter_count_slice(f->str, f->len, "bits.")) >= 0)
            rc = bk_rfilter_count_value(rf, v, &bits[j]);
        else if ((j = bk_rfilter_count_slice(f->str, f->len, "keys.")) >= 0)
            rc = bk_rfilter_count_value(rf, v, &keys[j]);
        else
            rc = BK_ESERVER;
        if (rc != BK_OK)
            rc = bk_fail(BK_ESERVER,
                         "redis filter %s: the hash %s holds a field bloomkit does "
                         "not write",
                         rf->name, key);
    }
    freeReplyObject(r);
    if (rc == BK_OK &&
        (slices > BK_LUA_CHAIN_MAX || rf->nwin + (uint64_t)slices > BK_LUA_WINDOW_MAX))
        rc = bk_fail(BK_ESERVER,
                     "redis filter %s: generation %" PRId64 " has %lld slices, more "
                     "than a window holds",
                     rf->name, g, slices);
    if (rc == BK_OK && (uint32_t)slices > rf->nslices)
        rc = bk_rfilter_set_slices(rf, (uint32_t)slices); /* shapes never change */
    for (uint32_t j = 0; rc == BK_OK && j < (uint32_t)slices; j++) {
        bk_slice_view *v = &rf->win[rf->nwin++];
        *v = rf->s[j].v;
        v->set_bits = (uint64_t)bits[j];
        v->keys = (uint64_t)keys[j];
        v->gen = g;
        v->span = rf->span_ms;
    }
    return rc;
}

int bk_rwindow_refresh(bk_rfilter *rf)
{
    int64_t now, newest;
    int rc = server_ms(rf, &now);
    rc = rc ? rc : newest_gen(rf, &newest);
    if (rc != BK_OK)
        return rc;
    int64_t cur = now / rf->span_ms;
    if (newest > cur + 1) { /* more than a span ahead: the next script re-dates it to now */
        atomic_store(&rf->base.redate_from_ms, newest * rf->span_ms);
        atomic_store(&rf->base.redate_to_ms, cur * rf->span_ms);
    }
    if (newest > cur) /* (the generations read as they are until then) */
        cur = newest;
    rf->nwin = 0;
    for (int64_t g = cur - (int64_t)rf->base.cfg.generations; g <= cur && rc == BK_OK; g++)
        rc = read_gen(rf, g);
    if (rc == BK_OK && rf->nwin == 0) { /* no key in the window: the current span's, empty */
        rf->win[0] = rf->s[0].v;
        rf->win[0].set_bits = rf->win[0].keys = 0;
        rf->win[0].gen = cur;
        rf->win[0].span = rf->span_ms;
        rf->nwin = 1;
    }
    return rc;
}

int bk_rwindow_clear(bk_rfilter *rf, int drop)
{
    enum { FIXED = 6 };
    const char *argv[FIXED + BK_LUA_CHAIN_MAX];
    char nums[1 + BK_LUA_CHAIN_MAX][24];
    int argc = 0;
    argv[argc++] = "EVAL";
    argv[argc++] = bk_redis_script(BK_RS_WIN_CLEAR);
    argv[argc++] = "1";
    argv[argc++] = rf->name;
    argv[argc++] = drop ? "drop" : "clear";
    snprintf(nums[0], sizeof nums[0], "%" PRIu64, rf->base.cfg.generations);
    argv[argc++] = nums[0];
    for (uint32_t j = 0; j < rf->nslices; j++) { /* blocks of each slice shape */
        snprintf(nums[j + 1], sizeof nums[j + 1], "%" PRIu64, bk_rfilter_blocks(rf, j));
        argv[argc++] = nums[j + 1];
    }
    redisReply *r;
    int rc = bk_rconn_call(rf->conn, rf->name, strlen(rf->name), &r, argc, argv, NULL);
    if (rc != BK_OK)
        return rc;
    if (r->type == REDIS_REPLY_ERROR)
        rc = bk_fail(BK_ESERVER, "redis filter %s: %s: %.200s", rf->name, drop ? "drop" : "clear",
                     r->str);
    freeReplyObject(r);
    return rc || drop ? rc : bk_rwindow_refresh(rf);
}
