/*
 * bf.c - RedisBloom's BF.* commands, with its replies and error texts, on
 * any bloomkit filter. A filter BF.* creates is a scalable chain (its
 * EXPANSION is the chain's growth; the compound rate stays under
 * error_rate however long the chain gets), or with NONSCALING a standard
 * filter that refuses new items past its capacity.
 */
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

/* args of argv[from..argc) as bkm_arg (at most cap). */
static size_t args_of(RedisModuleString **argv, int from, int argc, bkm_arg *out, size_t cap)
{
    size_t n = 0;
    for (int i = from; i < argc && n < cap; i++)
        out[n++] = arg_of(argv[i]);
    return n;
}

/* Where a BF.* command goes: 1 to bf_rbchain.c (its key is RedisBloom's chain,
 * or is missing and the command makes RedisBloom's type), 0 to bloomkit's
 * filters, -1 after replying WRONGTYPE for a cuckoo filter (RedisBloom's,
 * or a keyed CF.* key: BF.RESERVE, BF.INFO and BF.CARD refuse both). */
static int chain_key(RedisModuleCtx *ctx, RedisModuleString *name, int makes)
{
    RedisModuleKey *key = RedisModule_OpenKey(ctx, name, REDISMODULE_READ);
    const bkm_kind k = bkm_bf_kind_of(key);
    RedisModule_CloseKey(key);
    if (k == BKM_RBCUCKOO)
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE), -1;
    return k == BKM_RBCHAIN || (k == BKM_EMPTY && makes && bkm_makes_redisbloom(ctx));
}

/* 1 when a bloomkit key takes o (bkm_bf_config): else the key is made as
 * RedisBloom's type, which takes every argument RedisBloom takes (EXPANSION
 * 1 or over 16, an error rate over 0.5). */
static int bloomkit_takes(const bkm_bf_opts *o)
{
    bk_config cfg;
    char err[400];
    return bkm_bf_config(&bkm_conf, o, &cfg, err, sizeof err) == 0;
}

static int reply_parse(RedisModuleCtx *ctx, int rc, const char *err)
{
    return rc == BKM_ARGS_ARITY ? RedisModule_WrongArity(ctx)
                                : RedisModule_ReplyWithError(ctx, err);
}

/* Create a BF filter under the empty key with o, replicate its creation. */
static bkm_value *create(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name,
                         const bkm_bf_opts *o)
{
    bk_config cfg;
    char err[400];
    bkm_value *v;
    if (bkm_bf_config(&bkm_conf, o, &cfg, err, sizeof err) != 0 ||
        bkm_create(ctx, key, &cfg, &v, err, sizeof err) != BK_OK) {
        RedisModule_ReplyWithError(ctx, err);
        return NULL;
    }
    bkm_replicate_create(ctx, name, v->f);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, "bf.reserve", name);
    return v;
}

int bkm_cmd_bf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    const int to = chain_key(ctx, argv[1], 1);
    if (to != 0)
        return to < 0 ? REDISMODULE_OK : bkm_bf_rbchain_reserve(ctx, argv, argc);
    bkm_time_begin(ctx);
    bkm_arg args[8];
    bkm_bf_opts o;
    char err[300];
    const size_t n = args_of(argv, 1, argc, args, 8);
    const int rc =
        argc - 1 > 8 ? BKM_ARGS_ARITY : bkm_parse_reserve(&bkm_conf, args, n, &o, err, sizeof err);
    if (rc != BKM_ARGS_OK)
        return reply_parse(ctx, rc, err);
    if (!bloomkit_takes(&o) && bkm_kind_named(ctx, argv[1]) == BKM_EMPTY)
        return bkm_bf_rbchain_reserve(ctx, argv, argc);
    RedisModuleKey *key = bkm_open_empty(ctx, argv[1]);
    if (!key)
        return REDISMODULE_OK;
    if (create(ctx, key, argv[1], &o))
        RedisModule_ReplyWithSimpleString(ctx, "OK");
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* Add argv[first..argc) to v, open under key (NULL: the key is empty, and
 * the filter is made with o unless o->nocreate); replies as BF.ADD (one
 * integer) or as BF.MADD / BF.INSERT (an array). The clock is read only
 * when the write needs it (a window, a creation replicated at its time). */
static int add_open(RedisModuleCtx *ctx, RedisModuleKey *key, bkm_value *v,
                    RedisModuleString **argv, int argc, int first, const bkm_bf_opts *o, int array)
{
    if (!v || v->window)
        bkm_time_begin(ctx);
    if (!v) {
        if (o->nocreate) {
            RedisModule_CloseKey(key);
            return RedisModule_ReplyWithError(ctx, "ERR not found");
        }
        if (!(v = create(ctx, key, argv[1], o))) {
            RedisModule_CloseKey(key);
            return REDISMODULE_OK;
        }
    }
    return bkm_add_command(ctx, key, v, argv, argc, first, array, 1, "bf.add");
}

/* BF.ADD (array 0) and BF.MADD (1): a missing filter made with the
 * module's defaults; RedisBloom's chains go to bf_rbchain.c. One lookup of the
 * key for all of it. */
static int add_defaults(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int array)
{
    RedisModuleKey *key;
    bkm_value *v;
    const int at = bkm_open_bf(ctx, argv[1], 1, &key, &v);
    if (at != 0)
        return at < 0 ? REDISMODULE_OK : bkm_bf_rbchain_add(ctx, argv, argc, array);
    bkm_bf_opts o;
    bkm_bf_defaults(&bkm_conf, &o);
    return add_open(ctx, key, v, argv, argc, 2, &o, array);
}

int bkm_cmd_bf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return argc != 3 ? RedisModule_WrongArity(ctx) : add_defaults(ctx, argv, argc, 0);
}

int bkm_cmd_bf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return argc < 3 ? RedisModule_WrongArity(ctx) : add_defaults(ctx, argv, argc, 1);
}

int bkm_cmd_bf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkm_value *v;
    const int at = bkm_open_bf(ctx, argv[1], 1, &key, &v);
    if (at != 0)
        return at < 0 ? REDISMODULE_OK : bkm_bf_rbchain_insert(ctx, argv, argc);
    bkm_arg few[16] = {{NULL, 0}}, *args = few;
    const size_t n = (size_t)(argc - 2);
    if (n > sizeof few / sizeof *few && !(args = bkm_alloc(n * sizeof *args))) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    }
    args_of(argv, 2, argc, args, n);
    bkm_bf_opts o;
    char err[300];
    const int rc = bkm_parse_insert(&bkm_conf, args, n, &o, err, sizeof err);
    if (args != few)
        bkm_free(args);
    if (rc != BKM_ARGS_OK) {
        RedisModule_CloseKey(key);
        return reply_parse(ctx, rc, err);
    }
    if (!v && !o.nocreate && !bloomkit_takes(&o)) {
        RedisModule_CloseKey(key);
        return bkm_bf_rbchain_insert(ctx, argv, argc);
    }
    return add_open(ctx, key, v, argv, argc, 2 + (int)o.items, &o, 1);
}

/* BF.EXISTS (array 0) and BF.MEXISTS (1): RedisBloom's keys go to bf_rbchain.c
 * (its cuckoo filters answer 0 there, as in RedisBloom). */
static int exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int array)
{
    RedisModuleKey *key;
    bkm_value *v;
    const int at = bkm_open_bf(ctx, argv[1], 0, &key, &v);
    if (at != 0)
        return at < 0 ? REDISMODULE_OK : bkm_bf_rbchain_exists(ctx, argv, argc, array);
    return bkm_exists_open(ctx, key, v, argv, argc, array, 1);
}

int bkm_cmd_bf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return argc != 3 ? RedisModule_WrongArity(ctx) : exists(ctx, argv, argc, 0);
}

int bkm_cmd_bf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return argc < 3 ? RedisModule_WrongArity(ctx) : exists(ctx, argv, argc, 1);
}

static size_t value_size(const bkm_value *v)
{
    uint64_t size = 0;
    bk_save_size(v->f, &size);
    return sizeof *v + (size_t)size;
}

int bkm_cmd_bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2 && argc != 3)
        return RedisModule_WrongArity(ctx);
    const int to = chain_key(ctx, argv[1], 0);
    if (to != 0)
        return to < 0 ? REDISMODULE_OK : bkm_bf_rbchain_info(ctx, argv, argc);
    bkm_figures f;
    RedisModuleKey *key = bkm_open_figures(ctx, argv[1], 1, &f);
    if (!key)
        return REDISMODULE_OK;
    const long long values[] = {(long long)f.st.capacity, (long long)value_size(f.v),
                                (long long)f.st.slices, (long long)f.st.keys,
                                (long long)f.cfg.growth};
    RedisModule_CloseKey(key);
    return bkm_reply_bf_info(ctx, argv, argc, values, !bk_variant_grows(f.cfg.variant));
}

int bkm_cmd_bf_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    const int to = chain_key(ctx, argv[1], 0);
    if (to != 0)
        return to < 0 ? REDISMODULE_OK : bkm_bf_rbchain_card(ctx, argv, argc);
    bkm_time_begin(ctx);
    bkm_value *v;
    RedisModuleKey *key;
    if (bkm_open(ctx, argv[1], REDISMODULE_READ, &key, &v) != 0)
        return REDISMODULE_OK;
    bk_filter_stats st;
    int rc = BK_OK;
    if (v)
        rc = bk_stats_held(v->f, &st, sizeof st);
    RedisModule_CloseKey(key);
    if (rc != BK_OK)
        return bkm_reply_code(ctx, rc);
    return RedisModule_ReplyWithLongLong(ctx, v ? (long long)st.keys : 0);
}
