/*
 * merge.c - BK.MERGE dest src [src ...]: the union of bloomkit filters into
 * dest, with bk_merge's rules (the same variant, hash, key and shape; a
 * cuckoo filter has no union), all or nothing: the union is made in a copy
 * that replaces dest only once every source has gone in. A missing dest is
 * made a copy of the first source; a missing source is an error (a typo
 * must not pass for an empty filter); dest named among the sources is
 * already in the union (a counting filter's counts are not added twice). RedisBloom's types are
 * refused: their chains and cuckoo filters have no union. Replicated as its effect: DEL dest, then
 * dest's image in BF.LOADCHUNK pieces at the master's time (one MULTI/EXEC), so a replica ends with
 * the master's bytes.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "dump.h"
#include "module.h"
#include "payload.h"
#include "rb.h"

/* Open argv[i] for the merge: its filter, or NULL (after replying) for a
 * key that cannot take part. dest may be missing (*f NULL, 0 returned). */
static int open_part(RedisModuleCtx *ctx, RedisModuleString *name, int dest, RedisModuleKey **key,
                     bkm_value **v)
{
    *key = RedisModule_OpenKey(ctx, name, REDISMODULE_READ | (dest ? REDISMODULE_WRITE : 0));
    *v = NULL;
    const bkm_kind kind = bkm_kind_of(*key);
    size_t n;
    const char *p = RedisModule_StringPtrLen(name, &n);
    char msg[300];
    if (kind == BKM_BLOOMKIT) {
        *v = RedisModule_ModuleTypeGetValue(*key);
        return 0;
    }
    if (kind == BKM_EMPTY && dest)
        return 0;
    if (kind == BKM_EMPTY)
        snprintf(msg, sizeof msg, "ERR BK.MERGE: source '%.*s' not found", (int)(n > 200 ? 200 : n),
                 p);
    else if (kind == BKM_RBCHAIN || kind == BKM_RBCUCKOO)
        snprintf(msg, sizeof msg,
                 "ERR BK.MERGE: '%.*s' is RedisBloom's type, which has no union (merge bloomkit's "
                 "filters: BK.CREATE, or NEW_KEYS bloomkit)",
                 (int)(n > 200 ? 200 : n), p);
    else
        snprintf(msg, sizeof msg, "%s", REDISMODULE_ERRORMSG_WRONGTYPE);
    RedisModule_ReplyWithError(ctx, msg);
    return -1;
}

/* The union of the sources (and dest's filter, when it has one) in a new
 * filter: *out, or an error after replying. */
static int unite(RedisModuleCtx *ctx, RedisModuleString **argv, const bkm_value *dest,
                 bkm_value *const *src, int nsrc, bk_filter **out)
{
    const bkm_value *first = dest ? dest : src[0];
    uint64_t need = 0;
    char msg[500];
    if (bk_save_size(first->f, &need) == BK_OK && bkm_headroom(ctx, 2 * need, msg, sizeof msg) != 0)
        return RedisModule_ReplyWithError(ctx, msg), -1; /* the copy, and its image to replicas */
    int rc = bk_copy(first->f, out);
    for (int i = dest ? 0 : 1; rc == BK_OK && i < nsrc; i++) {
        if (src[i] == dest)
            continue; /* dest named again: already in the union */
        rc = bk_merge(*out, src[i]->f);
        if (rc != BK_OK) {
            size_t n;
            const char *p = RedisModule_StringPtrLen(argv[2 + i], &n);
            snprintf(msg, sizeof msg, "ERR BK.MERGE: '%.*s': %s", (int)(n > 200 ? 200 : n), p,
                     bk_last_error());
            for (char *c = msg; *c; c++)
                if (*c == '\r' || *c == '\n')
                    *c = ' ';
            bk_free(*out);
            *out = NULL;
            return RedisModule_ReplyWithError(ctx, msg), -1;
        }
    }
    if (rc != BK_OK)
        return bkm_reply_code(ctx, rc), -1;
    return 0;
}

int bkm_cmd_bk_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    bkm_time_begin(ctx);
    const int nsrc = argc - 2;
    RedisModuleKey **keys = bkm_alloc((size_t)(nsrc + 1) * sizeof(RedisModuleKey *));
    bkm_value **vals = bkm_alloc((size_t)(nsrc + 1) * sizeof(bkm_value *));
    if (!keys || !vals) {
        bkm_free(keys);
        bkm_free(vals);
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    }
    int opened = 0, ok = 1;
    for (int i = 0; i <= nsrc && ok; i++, opened++) /* dest, then the sources */
        ok = open_part(ctx, argv[1 + i], i == 0, &keys[i], &vals[i]) == 0;
    bk_filter *f = NULL;
    if (ok && unite(ctx, argv, vals[0], vals + 1, nsrc, &f) == 0) {
        bkm_value *v = bkm_value_new(f); /* owns f, or freed it */
        uint8_t *buf = NULL;
        size_t len = 0;
        if (!v || bkm_image(v->f, &buf, &len) != BK_OK) {
            bkm_value_free(v);
            RedisModule_ReplyWithError(ctx, "ERR out of memory");
        } else {
            RedisModule_ModuleTypeSetValue(keys[0], bkm_type, v); /* frees dest's old value */
            RedisModule_Replicate(ctx, "DEL", "s", argv[1]);
            bkm_replicate_image(ctx, argv[1], buf, len);
            RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, "bk.merge", argv[1]);
            RedisModule_ReplyWithSimpleString(ctx, "OK");
        }
        bkm_free(buf);
    }
    for (int i = 0; i < opened; i++)
        RedisModule_CloseKey(keys[i]);
    bkm_free(keys);
    bkm_free(vals);
    return REDISMODULE_OK;
}
