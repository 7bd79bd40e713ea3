/*
 * shared.c - what the module's commands share: the allocator the library
 * uses, values, opening keys, creating filters, replying with errors,
 * maxmemory's headroom.
 *
 * Every filter lives in a key of type "bloomkit0" and is a bk_filter made and
 * run through bloomkit.h, the same code as a local filter. Memory comes from
 * the server's allocator (reported in INFO memory, counted by maxmemory);
 * arrays from its calloc, so a large filter's pages are taken as they are
 * written, never zeroed up front while the server waits.
 */
#include <stdio.h>
#include <string.h>

#include "modclock.h"
#include "dump.h"
#include "module.h"
#include "rb.h"
#include "payload.h"

bkm_settings bkm_conf;
RedisModuleType *bkm_type;

void *bkm_alloc(size_t n)
{
    return RedisModule_TryAlloc(n);
}

void bkm_free(void *p)
{
    RedisModule_Free(p);
}

static void *server_alloc(void *opaque, size_t n)
{
    (void)opaque;
    return RedisModule_TryAlloc(n);
}

static void *server_zalloc(void *opaque, size_t n)
{
    (void)opaque;
    return RedisModule_Calloc(1, n);
}

static void server_free(void *opaque, void *p)
{
    (void)opaque;
    RedisModule_Free(p);
}

int bkm_allocator_init(void)
{
    const bk_allocator a = {server_alloc, server_free, NULL};
    return bk_set_allocator_zeroed(&a, server_zalloc) == BK_OK ? REDISMODULE_OK : REDISMODULE_ERR;
}

bkm_value *bkm_value_new(bk_filter *f)
{
    bkm_value *v = RedisModule_TryAlloc(sizeof *v);
    if (!v) {
        bk_free(f);
        return NULL;
    }
    memset(v, 0, sizeof *v);
    v->f = f;
    bk_config cfg;
    if (bk_get_config(f, &cfg) == BK_OK) { /* what each write asks, asked once */
        v->window = cfg.variant == BK_VARIANT_WINDOW;
        /* a variant that removes keeps a count per add, and a window moves
         * on with time (a new generation, a re-dating, a renewed key: none
         * of them "new"): every add changes them */
        v->counts = bk_variant_removes(cfg.variant) || v->window;
        v->capped = cfg.variant == BK_VARIANT_STANDARD;
        v->cuckoo = cfg.variant == BK_VARIANT_RBCUCKOO;
        v->capacity = cfg.capacity;
    }
    /* only a window's answers depend on time: any other value carries none
     * (0), so every path (RDB, AOF, a replica's stream) gives it one DUMP */
    v->at = v->window ? bkm_clock_now() : 0;
    /* the server's commands run one at a time: no lock, no locked
     * instruction on the write path (a sweep and a free run on that thread
     * too, or on a value no command can reach any more) */
    bk_set_single_writer(f, 1);
    bkm_sweep_track(v);
    bkm_held_add(BKM_BLOOMKIT, 1, 0);
    bkm_value_recount(v);
    return v;
}

int64_t bkm_value_time(const bkm_value *v)
{
    return v->at;
}

void bkm_value_free(void *value)
{
    bkm_value *v = value;
    if (!v)
        return;
    /* off the sweep's list first: a sweep running on the main thread while
     * this free runs on the background one (FLUSHALL ASYNC) marks what it
     * sweeps changed, which would put v back on INFO's list */
    bkm_sweep_untrack(v);
    bkm_value_uncount(v);
    bk_free(v->f);
    if (v->dump)
        RedisModule_Free(v->dump);
    RedisModule_Free(v);
}

int bkm_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **key,
             bkm_value **v)
{
    *v = NULL;
    *key = RedisModule_OpenKey(ctx, name, mode); /* NULL for a missing key opened to read */
    const int type = RedisModule_KeyType(*key);
    if (type == REDISMODULE_KEYTYPE_EMPTY)
        return 0;
    if (type != REDISMODULE_KEYTYPE_MODULE || RedisModule_ModuleTypeGetType(*key) != bkm_type) {
        RedisModule_CloseKey(*key);
        *key = NULL;
        RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
        return -1;
    }
    *v = RedisModule_ModuleTypeGetValue(*key);
    return 0;
}

int bkm_open_bf(RedisModuleCtx *ctx, RedisModuleString *name, int makes, RedisModuleKey **key,
                bkm_value **v)
{
    *v = NULL;
    *key = RedisModule_OpenKey(ctx, name,
                               makes ? REDISMODULE_READ | REDISMODULE_WRITE : REDISMODULE_READ);
    const bkm_kind k = bkm_bf_kind_of(*key);
    if (k == BKM_BLOOMKIT) {
        *v = RedisModule_ModuleTypeGetValue(*key);
        return 0;
    }
    if (k == BKM_EMPTY && !(makes && bkm_makes_redisbloom(ctx)))
        return 0;
    RedisModule_CloseKey(*key);
    *key = NULL;
    if (makes && (k == BKM_OTHER || k == BKM_RBCUCKOO))
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE), -1;
    return 1;
}

RedisModuleKey *bkm_open_existing(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                                  bkm_value **v)
{
    RedisModuleKey *key;
    if (bkm_open(ctx, name, mode, &key, v) != 0)
        return NULL;
    if (!*v) {
        RedisModule_CloseKey(key);
        RedisModule_ReplyWithError(ctx, "ERR not found");
        return NULL;
    }
    return key;
}

RedisModuleKey *bkm_open_figures(RedisModuleCtx *ctx, RedisModuleString *name, int held,
                                 bkm_figures *out)
{
    bkm_time_begin(ctx);
    RedisModuleKey *key = bkm_open_existing(ctx, name, REDISMODULE_READ, &out->v);
    if (!key)
        return NULL;
    int rc =
        held ? bk_stats_held(out->v->f, &out->st, sizeof out->st) : bk_stats(out->v->f, &out->st);
    if (rc != BK_OK || (rc = bk_get_config(out->v->f, &out->cfg)) != BK_OK) {
        RedisModule_CloseKey(key);
        bkm_reply_code(ctx, rc);
        return NULL;
    }
    return key;
}

RedisModuleKey *bkm_open_empty(RedisModuleCtx *ctx, RedisModuleString *name)
{
    RedisModuleKey *key;
    bkm_value *v;
    if (bkm_open(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE, &key, &v) != 0)
        return NULL;
    if (v) {
        RedisModule_CloseKey(key);
        RedisModule_ReplyWithError(ctx, "ERR item exists");
        return NULL;
    }
    return key;
}

int bkm_reply_code(RedisModuleCtx *ctx, int rc)
{
    char msg[512];
    const char *detail = bk_last_error();
    if (rc == BK_EFULL)
        snprintf(msg, sizeof msg, "ERR filter is full: %s",
                 detail && *detail ? detail : bk_strerror(rc));
    else if (detail && *detail)
        snprintf(msg, sizeof msg, "ERR %s: %s", bk_strerror(rc), detail);
    else
        snprintf(msg, sizeof msg, "ERR %s", bk_strerror(rc));
    for (char *p = msg; *p; p++) /* an error reply is one line */
        if (*p == '\r' || *p == '\n')
            *p = ' ';
    return RedisModule_ReplyWithError(ctx, msg);
}

int bkm_create(RedisModuleCtx *ctx, RedisModuleKey *key, const bk_config *want, bkm_value **out,
               char *err, size_t errlen)
{
    *out = NULL;
    bk_config cfg = *want;
    /* a growing filter stops at MAX_BYTES; a fixed one is refused above it */
    if (bk_variant_grows(cfg.variant) &&
        (cfg.max_bytes == 0 || cfg.max_bytes > bkm_conf.max_bytes) && !bkm_replaying)
        cfg.max_bytes = bkm_conf.max_bytes;
    bk_plan plan;
    int rc = bk_plan_config(&cfg, &plan);
    if (rc != BK_OK) {
        snprintf(err, errlen, "ERR bad config: %s", bk_last_error());
        return rc;
    }
    if (plan.bytes > bkm_conf.max_bytes && !bkm_replaying) {
        snprintf(err, errlen,
                 "ERR filter of %llu bytes is over the module's MAX_BYTES (%llu): lower "
                 "capacity or raise MAX_BYTES",
                 (unsigned long long)plan.bytes, (unsigned long long)bkm_conf.max_bytes);
        return BK_ERANGE;
    }
    if (bkm_headroom(ctx, plan.bytes, err, errlen) != 0)
        return BK_EFULL;
    bk_filter *f;
    if ((rc = bk_new(&cfg, &f)) != BK_OK) {
        snprintf(err, errlen, "ERR could not create filter: %s", bk_strerror(rc));
        return rc;
    }
    bk_touch(f); /* its pages now, not a page fault in each of its first writes */
    bkm_value *v = bkm_value_new(f);
    if (!v) {
        snprintf(err, errlen, "ERR could not create filter: out of memory");
        return BK_ENOMEM;
    }
    RedisModule_ModuleTypeSetValue(key, bkm_type, v);
    *out = v;
    return BK_OK;
}
