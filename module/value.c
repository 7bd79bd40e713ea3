/*
 * value.c - the module type's callbacks: RDB save and load, AOF rewrite,
 * MEMORY USAGE, COPY, free. A value's persistent form is its image in
 * bloomkit's file format (payload.h) and the master's time it was taken at.
 */
#include <stdio.h>
#include <string.h>

#include "modclock.h"
#include "dump.h"
#include "module.h"
#include "payload.h"

/* The value's image, which a save must write whole: a value it cannot
 * write must fail the save, never stand in the file as a value the loader
 * refuses (that would stop every later start of the server). The image
 * cannot be too large for the format (variants stop growing where it
 * stops), so the one failure is memory for its copy: then the allocator
 * that does not return is used, as the server's own types do when they
 * save, which ends the saving child (BGSAVE, a replica's sync, a rewrite)
 * with the save reported failed and the previous file intact. */
static void image_or_fail(RedisModuleIO *io, const bkm_value *v, uint8_t **buf, size_t *len)
{
    const int rc = bkm_image(v->f, buf, len);
    if (rc == BK_OK)
        return;
    RedisModule_LogIOError(io, "warning",
                           "bloomkit: saving a filter: %s: trying the server's allocator",
                           bk_strerror(rc));
    uint64_t size = 0;
    const int sized = bk_save_size(v->f, &size);
    *buf = RedisModule_Calloc(1, sized == BK_OK && size <= SIZE_MAX ? (size_t)size : 1);
    if (sized != BK_OK || bk_save_buffer(v->f, *buf, (size_t)size, len) != BK_OK) {
        /* not reached: the format holds every state a filter can reach */
        RedisModule_LogIOError(io, "warning", "bloomkit: a filter the format cannot hold: %s",
                               bk_last_error());
        *len = 0;
    }
}

static void rdb_save(RedisModuleIO *io, void *value)
{
    const bkm_value *v = value;
    uint8_t *buf = NULL;
    size_t len = 0;
    image_or_fail(io, v, &buf, &len);
    RedisModule_SaveUnsigned(io, (uint64_t)bkm_value_time(v));
    RedisModule_SaveStringBuffer(io, (const char *)buf, len);
    RedisModule_Free(buf);
}

static void *rdb_load(RedisModuleIO *io, int encver)
{
    const RedisModuleString *name = RedisModule_GetKeyNameFromIO(io);
    size_t nlen = 0;
    const char *kname = name ? RedisModule_StringPtrLen(name, &nlen) : "?";
    if (encver != BKM_ENCVER) {
        RedisModule_LogIOError(io, "warning",
                               "bloomkit: key '%.*s': encoding version %d is not this module's "
                               "(%d): refused",
                               (int)(nlen > 200 ? 200 : nlen), kname, encver, BKM_ENCVER);
        return NULL;
    }
    const uint64_t saved = RedisModule_LoadUnsigned(io);
    size_t len = 0;
    char *buf = RedisModule_LoadStringBuffer(io, &len);
    if (RedisModule_IsIOError(io) || !buf) {
        if (buf)
            RedisModule_Free(buf);
        return NULL;
    }
    bk_filter *f;
    char err[300];
    const int rc = bkm_image_load(buf, len, (int64_t)saved, UINT64_MAX, &f, err, sizeof err);
    RedisModule_Free(buf);
    if (rc != BK_OK) {
        RedisModule_LogIOError(io, "warning", "bloomkit: key '%.*s': damaged filter refused: %s",
                               (int)(nlen > 200 ? 200 : nlen), kname, err);
        return NULL;
    }
    bkm_value *v = bkm_value_new(f);
    if (v && v->window)
        v->at = (int64_t)saved; /* its time, not the server's: bkm_value_time */
    return v;
}

static void aof_rewrite(RedisModuleIO *aof, RedisModuleString *key, void *value)
{
    const bkm_value *v = value;
    uint8_t *buf;
    size_t len;
    image_or_fail(aof, v, &buf, &len);
    /* The image in BF.LOADCHUNK pieces at the value's own time, so the
     * replay makes the value the RDB would: a window's time, or 0 for a
     * value that carries none. A window dated after the clock (RESTOREd
     * with a later time) goes at the clock's time instead, since a later
     * time would move the clock of the whole replay: it is re-dated. */
    const long long clock = (long long)bkm_clock_now(), at = (long long)bkm_value_time(v);
    const long long now = at <= clock ? at : clock;
    for (size_t off = 0; off < len;) {
        const size_t n = len - off < BKM_CHUNK ? len - off : BKM_CHUNK;
        RedisModule_EmitAOF(aof, "BK.AT", "lcslb", now, "BF.LOADCHUNK", key, (long long)(off + n),
                            (const char *)buf + off, n);
        off += n;
    }
    RedisModule_Free(buf);
}

static size_t mem_usage(const void *value)
{
    return bkm_value_usage(value);
}

static void *copy(RedisModuleString *from, RedisModuleString *to, const void *value)
{
    (void)from;
    (void)to;
    const bkm_value *v = value;
    bk_filter *f;
    if (bk_copy(v->f, &f) != BK_OK)
        return NULL; /* COPY then fails, the source unchanged */
    bkm_value *c = bkm_value_new(f);
    if (c)
        c->at = v->at;
    return c;
}

int bkm_register_type(RedisModuleCtx *ctx)
{
    /* static: the server copies the methods, but nothing then need show that
     * it keeps no pointer to them */
    static RedisModuleTypeMethods tm;
    memset(&tm, 0, sizeof tm);
    tm.version = BKM_TYPE_METHOD_VERSION;
    tm.rdb_load = rdb_load;
    tm.rdb_save = rdb_save;
    tm.aof_rewrite = aof_rewrite;
    tm.mem_usage = mem_usage;
    tm.free = bkm_value_free;
    tm.copy = copy;
    tm.free_effort = bkm_value_effort;
    tm.defrag = bkm_defrag_value;
    bkm_type = RedisModule_CreateDataType(ctx, BKM_TYPENAME, BKM_ENCVER, &tm);
    return bkm_type ? REDISMODULE_OK : REDISMODULE_ERR;
}
