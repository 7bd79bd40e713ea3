/*
 * bk.c - bloomkit's own commands: every variant and option, the local
 * filter's semantics and errors.
 *
 *   BK.CREATE key [config text]...   (the words are joined: as --config takes it)
 *   BK.ADD key item...               array of 1 (new) / 0 (present)
 *   BK.EXISTS key item...            array of 1 (maybe) / 0 (absent)
 *   BK.REMOVE key item...            counting: array of 1 (removed) / 0 (not there)
 *   BK.INFO key                      the figures of `bloomkit info --json`
 *   BK.AT ms command args...         replication and AOF only (propagate.c)
 */
#include <stdio.h>
#include <string.h>

#include "modclock.h"
#include "commands.h"
#include "module.h"
#include "rb.h"
#include "payload.h"

#define MAX_CONFIG_TEXT 4096

int bkm_cmd_bk_create(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 2)
        return RedisModule_WrongArity(ctx);
    bkm_time_begin(ctx);
    char text[MAX_CONFIG_TEXT];
    size_t used = 0;
    for (int i = 2; i < argc; i++) {
        size_t n;
        const char *p = RedisModule_StringPtrLen(argv[i], &n);
        if (memchr(p, '\0', n) || used + n + 2 > sizeof text)
            return RedisModule_ReplyWithError(
                ctx, "ERR bad config: config text is at most 4095 bytes, with no NUL byte");
        memcpy(text + used, p, n);
        used += n;
        text[used++] = ' ';
    }
    text[used] = '\0';
    bk_config cfg;
    char err[400], why[300];
    bk_config_init(&cfg);
    if (bk_config_parse(&cfg, text, why, sizeof why) != BK_OK) {
        snprintf(err, sizeof err, "ERR bad config: %s", why);
        return RedisModule_ReplyWithError(ctx, err);
    }
    bkm_value *v;
    RedisModuleKey *key = bkm_open_empty(ctx, argv[1]);
    if (!key)
        return REDISMODULE_OK;
    if (bkm_create(ctx, key, &cfg, &v, err, sizeof err) != BK_OK) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, err);
    }
    bkm_replicate_create(ctx, argv[1], v->f);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, "bk.create", argv[1]);
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

/* BK.ADD's and BK.REMOVE's start: the filter argv[1] names, open to write
 * at the command's time. NULL after replying (arity, not found,
 * WRONGTYPE), else the key to close. */
static RedisModuleKey *open_to_write(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                                     bkm_value **v)
{
    if (argc < 3) {
        RedisModule_WrongArity(ctx);
        return NULL;
    }
    bkm_time_begin(ctx);
    return bkm_open_existing(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, v);
}

int bkm_cmd_bk_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    bkm_value *v;
    RedisModuleKey *key = open_to_write(ctx, argv, argc, &v);
    if (!key)
        return REDISMODULE_OK;
    return bkm_add_command(ctx, key, v, argv, argc, 2, 1, 0, "bk.add");
}

int bkm_cmd_bk_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return argc < 3 ? RedisModule_WrongArity(ctx) : bkm_exists_command(ctx, argv, argc, 1, 0);
}

int bkm_cmd_bk_remove(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    bkm_value *v;
    RedisModuleKey *key = open_to_write(ctx, argv, argc, &v);
    if (!key)
        return REDISMODULE_OK;
    /* a variant that cannot remove says so itself (its error, whole-command:
     * nothing was changed) */
    size_t len0;
    const char *first = RedisModule_StringPtrLen(argv[2], &len0);
    const int rc0 = bk_remove(v->f, first, len0);
    if (rc0 == BK_ENOTSUP) {
        RedisModule_CloseKey(key);
        return bkm_reply_code(ctx, rc0);
    }
    const size_t n = (size_t)(argc - 2);
    RedisModule_ReplyWithArray(ctx, (long)n);
    int changed = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *p = RedisModule_StringPtrLen(argv[2 + i], &len);
        const int rc = i == 0 ? rc0 : bk_remove(v->f, p, len);
        if (rc == BK_OK) {
            changed = 1;
            RedisModule_ReplyWithLongLong(ctx, 1);
        } else if (rc == BK_ENOTFOUND) {
            RedisModule_ReplyWithLongLong(ctx, 0);
        } else {
            bkm_reply_code(ctx, rc);
        }
    }
    if (changed) {
        v->keys_known = 0;
        bkm_value_changed(v);
        bkm_replicate(ctx, argv, argc);
        RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, "bk.remove", argv[1]);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static void field_int(RedisModuleCtx *ctx, const char *name, long long v)
{
    RedisModule_ReplyWithSimpleString(ctx, name);
    RedisModule_ReplyWithLongLong(ctx, v);
}

static void field_text(RedisModuleCtx *ctx, const char *name, const char *v)
{
    RedisModule_ReplyWithSimpleString(ctx, name);
    RedisModule_ReplyWithStringBuffer(ctx, v, strlen(v));
}

/* One row of the library's table of figures (bk_figure_at), under its name. */
static void field_figure(RedisModuleCtx *ctx, const bk_figure *fig)
{
    RedisModule_ReplyWithSimpleString(ctx, fig->name);
    if (fig->type == BK_FIGURE_TEXT)
        RedisModule_ReplyWithStringBuffer(ctx, fig->text, strlen(fig->text));
    else if (fig->type == BK_FIGURE_COUNT)
        RedisModule_ReplyWithLongLong(ctx, (long long)fig->count);
    else if (fig->type == BK_FIGURE_MS)
        RedisModule_ReplyWithLongLong(ctx, (long long)fig->ms);
    else
        RedisModule_ReplyWithDouble(ctx, fig->real);
}

/* BK.INFO key: the table of figures, then the configuration's text (and a
 * window's length and the module's clock). */
/* What BK.INFO says of a filter hashed as RedisBloom hashes (hash=murmur). */
static const char no_hash_key[] = "none: RedisBloom's MurmurHash has no key, so chosen items can "
                                  "collide (docs/security.md)";

/* BK.INFO of a RedisBloom key: what it is, and that its hash has no key
 * (docs/security.md); BF.INFO / CF.INFO give its figures. */
static int rb_info(RedisModuleCtx *ctx, RedisModuleString *name, bkm_kind kind)
{
    RedisModuleKey *key = RedisModule_OpenKey(ctx, name, REDISMODULE_READ);
    uint64_t bytes, items;
    bkm_rb_size(kind, RedisModule_ModuleTypeGetValue(key), &bytes, &items);
    RedisModule_CloseKey(key);
    RedisModule_ReplyWithMap(ctx, 5);
    field_text(ctx, "variant",
               bk_variant_name(kind == BKM_RBCHAIN ? BK_VARIANT_RBCHAIN : BK_VARIANT_RBCUCKOO));
    field_text(ctx, "hash", bk_hash_name(BK_HASH_MURMUR));
    field_text(ctx, "hash_key", no_hash_key);
    field_int(ctx, "bytes", (long long)bytes);
    field_int(ctx, "keys", (long long)items);
    return REDISMODULE_OK;
}

int bkm_cmd_bk_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    const bkm_kind kind = bkm_kind_named(ctx, argv[1]);
    if (kind == BKM_RBCHAIN || kind == BKM_RBCUCKOO)
        return rb_info(ctx, argv[1], kind);
    bkm_figures f;
    RedisModuleKey *key = bkm_open_figures(ctx, argv[1], 0, &f);
    if (!key)
        return REDISMODULE_OK;
    char text[2048];
    const int tn = bk_config_format(&f.cfg, 0, text, sizeof text);
    if (tn < 0 || tn >= (int)sizeof text)
        text[0] = '\0';
    const int window = f.cfg.variant == BK_VARIANT_WINDOW;
    bk_figure fig;
    unsigned rows = 0;
    while (bk_figure_at(rows, NULL, NULL, &fig, sizeof fig) == 1)
        rows++;
    const int unkeyed = f.cfg.hash == BK_HASH_MURMUR;
    RedisModule_ReplyWithMap(ctx, (long)rows + 1 + 2L * window + unkeyed);
    for (unsigned i = 0; i < rows && bk_figure_at(i, &f.st, &f.cfg, &fig, sizeof fig) == 1; i++)
        field_figure(ctx, &fig);
    field_text(ctx, "config", text);
    if (unkeyed)
        field_text(ctx, "hash_key", no_hash_key);
    if (window) {
        field_int(ctx, "window_ms", (long long)f.cfg.window_ms);
        field_int(ctx, "now_ms", (long long)bkm_clock_now());
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* BK.AT ms command args...: a write as the master made it, at its time. */
int bkm_cmd_bk_at(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3) /* BK.AT ms BK.SWEEP: the one write without a key */
        return RedisModule_WrongArity(ctx);
    const int flags = RedisModule_GetContextFlags(ctx);
    if (!(flags & (REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING)))
        return RedisModule_ReplyWithError(
            ctx, "ERR BK.AT carries the master's writes to replicas and the AOF; clients use "
                 "the commands themselves");
    long long ms;
    size_t n;
    const char *name = RedisModule_StringPtrLen(argv[2], &n);
    RedisModuleCmdFunc fn = bkm_write_command(name, n);
    if (RedisModule_StringToLongLong(argv[1], &ms) != REDISMODULE_OK || !bkm_time_ok(ms) || !fn)
        return RedisModule_ReplyWithError(ctx, "ERR BK.AT: bad time or not a write command");
    bkm_clock_pin((int64_t)ms);
    bkm_replaying = 1;
    const int rc = fn(ctx, argv + 2, argc - 2);
    bkm_replaying = 0;
    bkm_clock_unpin();
    bkm_clock_set((int64_t)ms); /* the master's time: a replica's reads act at its latest */
    return rc;
}
