/*
 * bf_rbchain.c - BF.* on RedisBloom's chains (type MBbloom--), with RedisBloom's
 * replies and error texts (FORMATS.md 6.1): keys loaded from its data, and
 * keys made while the module's NEW_KEYS is redisbloom. bf.c hands a
 * command here when its key is a chain (or missing, under NEW_KEYS
 * redisbloom). A write is replicated as it came: its result on a replica
 * and in the AOF is the same, the chain being deterministic. An add that
 * would grow the chain checks maxmemory's headroom for the new link first
 * (these keys keep RedisBloom's limits, not MAX_BYTES).
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "module.h"
#include "payload.h"
#include "rb.h"

static bkm_arg arg_of(RedisModuleString *s)
{
    bkm_arg a;
    a.p = RedisModule_StringPtrLen(s, &a.n);
    return a;
}

/* Open the key for a chain command: *c the chain (a filter of variant
 * rbchain), or NULL when the key is empty; -1 after replying WRONGTYPE. */
static int open_chain(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **key,
                      bk_filter **c)
{
    *c = NULL;
    *key = RedisModule_OpenKey(ctx, name, mode);
    const bkm_kind k = bkm_kind_of(*key);
    if (k == BKM_RBCHAIN)
        *c = RedisModule_ModuleTypeGetValue(*key);
    else if (k != BKM_EMPTY) {
        RedisModule_CloseKey(*key);
        *key = NULL;
        RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
        return -1;
    }
    return 0;
}

/* The chain under name, open to read: NULL after replying (WRONGTYPE, "ERR
 * not found"), else the chain, its key in *key to close. */
static bk_filter *existing_chain(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey **key)
{
    bk_filter *c;
    if (open_chain(ctx, name, REDISMODULE_READ, key, &c) != 0)
        return NULL;
    if (!c) {
        RedisModule_CloseKey(*key);
        RedisModule_ReplyWithError(ctx, "ERR not found");
    }
    return c;
}

/* existing_chain, and its figures in *in. */
static const bk_filter *chain_figures(RedisModuleCtx *ctx, RedisModuleString *name,
                                      RedisModuleKey **key, bk_rbchain_info *in)
{
    const bk_filter *c = existing_chain(ctx, name, key);
    if (c)
        bk_rbchain_info_of(c, in);
    return c;
}

/* A new chain under the empty key: NULL after replying. */
static bk_filter *create(RedisModuleCtx *ctx, RedisModuleKey *key, const bkm_bf_opts *o)
{
    bk_filter *c;
    const int rc = bk_filter_rbchain_new(o->capacity, o->error_rate, (uint32_t)o->expansion,
                                         o->nonscaling, bkm_rb_limit(ctx), &c);
    if (rc == BK_EFULL) {
        bkm_rb_refused(ctx, "could not create filter");
        return NULL;
    }
    if (rc != BK_OK) {
        RedisModule_ReplyWithError(ctx, rc == BK_ENOMEM ? "ERR Insufficient memory to create filter"
                                                        : "ERR could not create filter");
        return NULL;
    }
    bkm_rb_set_value(key, BKM_RBCHAIN, c);
    return c;
}

int bkm_bf_rbchain_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    bkm_arg args[8];
    bkm_bf_opts o;
    char err[300];
    size_t n = 0;
    for (int i = 1; i < argc && n < 8; i++)
        args[n++] = arg_of(argv[i]);
    const int rc =
        argc - 1 > 8 ? BKM_ARGS_ARITY : bkm_parse_reserve(&bkm_conf, args, n, &o, err, sizeof err);
    if (rc != BKM_ARGS_OK)
        return rc == BKM_ARGS_ARITY ? RedisModule_WrongArity(ctx)
                                    : RedisModule_ReplyWithError(ctx, err);
    RedisModuleKey *key;
    bk_filter *c;
    if (open_chain(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &c) != 0)
        return REDISMODULE_OK;
    if (c) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR item exists");
    }
    if (create(ctx, key, &o)) {
        RedisModule_ReplicateVerbatim(ctx);
        RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, "bf.reserve", argv[1]);
        RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* Add one item: bk_add's result, or BKM_RB_GROW when the new link it
 * needs has no room under maxmemory (err says so). */
static int add_one(RedisModuleCtx *ctx, bk_filter *c, RedisModuleString *item, char *err,
                   size_t errlen)
{
    return bkm_rb_add(ctx, c, item, 0, err, errlen);
}

/* Reply for one add's result: 1 / 0, or RedisBloom's error. */
static void reply_add(RedisModuleCtx *ctx, int rc, const char *err)
{
    if (rc >= 0 && rc != BKM_RB_GROW)
        bkm_reply_bool(ctx, rc);
    else if (rc == BK_EFULL)
        RedisModule_ReplyWithError(ctx, "ERR non scaling filter is full");
    else if (rc == BKM_RB_GROW)
        RedisModule_ReplyWithError(ctx, err);
    else
        RedisModule_ReplyWithError(ctx, "ERR problem inserting into filter");
}

/* A chain made by an add reaches replicas and the AOF as the BF.RESERVE of
 * what this server decided (its ERROR_RATE, INITIAL_SIZE, EXPANSION where
 * the command gave none), before the add itself: a replica, or a replay
 * under other module arguments, makes the same chain. */
static void replicate_reserve(RedisModuleCtx *ctx, RedisModuleString *name, const bkm_bf_opts *o)
{
    char rate[40], cap[24], exp[24];
    snprintf(rate, sizeof rate, "%.17g", o->error_rate);
    snprintf(cap, sizeof cap, "%llu", (unsigned long long)o->capacity);
    snprintf(exp, sizeof exp, "%llu", (unsigned long long)o->expansion);
    if (o->nonscaling)
        RedisModule_Replicate(ctx, "BF.RESERVE", "sccc", name, rate, cap, "NONSCALING");
    else
        RedisModule_Replicate(ctx, "BF.RESERVE", "scccc", name, rate, cap, "EXPANSION", exp);
}

/* Add argv[first..argc) to the chain under key (made with o when empty,
 * unless o->nocreate); one reply, or an array (MADD, INSERT) that ends
 * early with the error when a non-scaling chain fills. */
static int add_items(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int first,
                     const bkm_bf_opts *o, int array)
{
    RedisModuleKey *key;
    bk_filter *c;
    if (open_chain(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &c) != 0)
        return REDISMODULE_OK;
    int changed = 0;
    if (!c) {
        if (o->nocreate) {
            RedisModule_CloseKey(key);
            return RedisModule_ReplyWithError(ctx, "ERR not found");
        }
        if (!(c = create(ctx, key, o))) {
            RedisModule_CloseKey(key);
            return REDISMODULE_OK;
        }
        replicate_reserve(ctx, argv[1], o);
        changed = 1;
    }
    char err[300];
    const long long before = bkm_held_before(key, 0);
    int stop = argc; /* the first item not applied, when one was refused for memory */
    if (!array) {
        const int rc = add_one(ctx, c, argv[first], err, sizeof err);
        changed |= rc == 1;
        reply_add(ctx, rc, err);
    } else {
        RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
        long n = 0;
        for (int i = first; i < argc; i++) {
            const int rc = add_one(ctx, c, argv[i], err, sizeof err);
            changed |= rc == 1;
            reply_add(ctx, rc, err);
            n++;
            if (rc == BK_EFULL || rc == BKM_RB_GROW) {
                stop = rc == BKM_RB_GROW ? i : argc;
                break;
            }
        }
        RedisModule_ReplySetArrayLength(ctx, n);
    }
    if (changed) {
        if (stop < argc) { /* the items from the refused one on changed nothing here */
            RedisModule_Replicate(ctx, RedisModule_StringPtrLen(argv[0], NULL), "v", argv + 1,
                                  (size_t)(stop - 1));
        } else {
            RedisModule_ReplicateVerbatim(ctx);
        }
        RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, "bf.add", argv[1]);
    }
    bkm_held_after(key, before, 0);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

int bkm_bf_rbchain_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int array)
{
    bkm_bf_opts o;
    bkm_bf_defaults(&bkm_conf, &o);
    return add_items(ctx, argv, argc, 2, &o, array);
}

int bkm_bf_rbchain_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    bkm_arg few[16] = {{NULL, 0}}, *args = few;
    const size_t n = (size_t)(argc - 2);
    if (n > sizeof few / sizeof *few && !(args = bkm_alloc(n * sizeof *args)))
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    for (size_t i = 0; i < n; i++)
        args[i] = arg_of(argv[2 + i]);
    bkm_bf_opts o;
    char err[300];
    const int rc = bkm_parse_insert(&bkm_conf, args, n, &o, err, sizeof err);
    if (args != few)
        bkm_free(args);
    if (rc != BKM_ARGS_OK)
        return rc == BKM_ARGS_ARITY ? RedisModule_WrongArity(ctx)
                                    : RedisModule_ReplyWithError(ctx, err);
    return add_items(ctx, argv, argc, 2 + (int)o.items, &o, 1);
}

int bkm_bf_rbchain_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int array)
{
    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    /* a missing key, or one of another type, holds nothing (RedisBloom's answer) */
    bkm_reply_lookups(ctx,
                      bkm_kind_of(key) == BKM_RBCHAIN ? RedisModule_ModuleTypeGetValue(key) : NULL,
                      argv, argc, array);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

int bkm_bf_rbchain_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    RedisModuleKey *key;
    bk_rbchain_info in;
    if (!chain_figures(ctx, argv[1], &key, &in))
        return REDISMODULE_OK;
    RedisModule_CloseKey(key);
    const long long values[] = {(long long)in.capacity, (long long)(32 + 64 * in.links + in.bytes),
                                (long long)in.links, (long long)in.size, (long long)in.growth};
    return bkm_reply_bf_info(ctx, argv, argc, values, (in.options & BK_RBCHAIN_NO_SCALING) != 0);
}

int bkm_bf_rbchain_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argc;
    RedisModuleKey *key;
    bk_filter *c;
    if (open_chain(ctx, argv[1], REDISMODULE_READ, &key, &c) != 0)
        return REDISMODULE_OK;
    bk_rbchain_info in = {0};
    if (c)
        bk_rbchain_info_of(c, &in);
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithLongLong(ctx, (long long)in.size);
}

int bkm_bf_rbchain_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argc;
    RedisModuleKey *key;
    const bk_filter *c = existing_chain(ctx, argv[1], &key);
    if (!c)
        return REDISMODULE_OK;
    long long it;
    if (RedisModule_StringToLongLong(argv[2], &it) != REDISMODULE_OK) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "Second argument must be numeric");
    }
    RedisModule_ReplyWithArray(ctx, 2);
    if (it == 0) {
        size_t hlen = 0;
        bk_chunked_header(c, NULL, 0, &hlen);
        char *head = bkm_alloc(hlen);
        if (!head) {
            RedisModule_ReplyWithLongLong(ctx, 0);
            RedisModule_ReplyWithError(ctx, "ERR out of memory");
        } else {
            bk_chunked_header(c, head, hlen, &hlen);
            RedisModule_ReplyWithLongLong(ctx, 1);
            RedisModule_ReplyWithStringBuffer(ctx, head, hlen);
            bkm_free(head);
        }
    } else {
        const uint8_t *data;
        size_t len;
        long long next;
        bk_chunked_next(c, it, &data, &len, &next);
        RedisModule_ReplyWithLongLong(ctx, next);
        RedisModule_ReplyWithStringBuffer(ctx, len ? (const char *)data : "", len);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

int bkm_bf_rbchain_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argc;
    long long it;
    if (RedisModule_StringToLongLong(argv[2], &it) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR Second argument must be numeric");
    RedisModuleKey *key;
    bk_filter *c;
    if (open_chain(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &c) != 0)
        return REDISMODULE_OK;
    const bkm_arg data = arg_of(argv[3]);
    int rc;
    if (!c && it == 1) {
        rc = bk_chunked_new(BK_VARIANT_RBCHAIN, data.p, data.n, 0, bkm_rb_limit(ctx), &c);
        if (rc == BK_OK)
            bkm_rb_set_value(key, BKM_RBCHAIN, c);
    } else if (!c) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR not found");
    } else {
        rc = bk_chunked_load(c, it, data.p, data.n);
    }
    RedisModule_CloseKey(key);
    if (rc == BK_OK) {
        RedisModule_ReplicateVerbatim(ctx);
        return RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    if (rc == BK_EFULL)
        return bkm_rb_refused(ctx, "received a filter too large");
    return RedisModule_ReplyWithError(
        ctx, rc == BK_ENOTFOUND ? "ERR invalid offset - no link found"
             : rc == BK_ERANGE  ? "ERR invalid chunk - Too big for current filter"
             : rc == BK_ENOMEM  ? "ERR Insufficient memory to create filter"
                                : "ERR received bad data");
}

int bkm_cmd_bf_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bk_rbchain_info in;
    const bk_filter *c = chain_figures(ctx, argv[1], &key, &in);
    if (!c)
        return REDISMODULE_OK;
    char line[300];
    RedisModule_ReplyWithArray(ctx, 1 + (long)in.links);
    int n = snprintf(line, sizeof line, "size:%llu", (unsigned long long)in.size);
    RedisModule_ReplyWithStringBuffer(ctx, line, (size_t)n); /* bulk strings, as RedisBloom's */
    for (uint32_t i = 0; i < in.links; i++) {
        bk_rbchain_link l;
        bk_rbchain_link_of(c, i, &l);
        n = snprintf(line, sizeof line,
                     "bytes:%llu bits:%llu hashes:%u hashwidth:%d capacity:%llu size:%llu ratio:%g",
                     (unsigned long long)l.bytes, (unsigned long long)l.bits, l.hashes,
                     in.options & BK_RBCHAIN_FORCE64 ? 64 : 32, (unsigned long long)l.entries,
                     (unsigned long long)l.size, l.error);
        RedisModule_ReplyWithStringBuffer(ctx, line, (size_t)n);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}
