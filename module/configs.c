/*
 * configs.c - the module's settings as server configs: every row of
 * bkm_setting_rows registered through the module config API (Redis 7.0 on,
 * Valkey 8), so CONFIG GET / SET / REWRITE reach them as
 * `<module name>.<setting>` (bloomkit.bf-error-rate). A numeric setting's
 * range is the server's to check and word; every value then goes through
 * bkm_setting_set, the setter the load-time arguments use. A change applies
 * to filters made after it, never to existing ones.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "module.h"

/* What CONFIG GET answers for a text setting: kept until the next read. */
#define MAX_SETTINGS 32
static RedisModuleString *shown[MAX_SETTINGS];

static size_t row_of(void *privdata)
{
    return (size_t)((const bkm_setting *)privdata - bkm_setting_rows);
}

/* Set row i from text; on a refusal *err says why and nothing changed. */
static int set_text(size_t i, const char *p, size_t n, RedisModuleString **err)
{
    char why[300];
    const bkm_arg v = {p, n};
    const char *now = bkm_setting_text(&bkm_conf, i);
    if (bkm_setting_rows[i].immutable && !(strlen(now) == n && memcmp(now, p, n) == 0)) {
        /* the module's name, chosen before any config is read: a config
         * file's line cannot change it */
        snprintf(why, sizeof why, "fixed when the module loads, by its argument %s",
                 bkm_setting_rows[i].arg);
        *err = RedisModule_CreateString(NULL, why, strlen(why));
        return REDISMODULE_ERR;
    }
    if (bkm_setting_set(&bkm_conf, i, v, why, sizeof why) == 0)
        return REDISMODULE_OK;
    *err = RedisModule_CreateString(NULL, why, strlen(why));
    return REDISMODULE_ERR;
}

static long long get_number(const char *name, void *privdata)
{
    (void)name;
    return bkm_setting_number(&bkm_conf, row_of(privdata));
}

static int set_number(const char *name, long long val, void *privdata, RedisModuleString **err)
{
    (void)name;
    char text[24];
    const int n = snprintf(text, sizeof text, "%lld", val);
    return set_text(row_of(privdata), text, (size_t)n, err);
}

static RedisModuleString *get_string(const char *name, void *privdata)
{
    (void)name;
    const size_t i = row_of(privdata);
    const char *text = bkm_setting_text(&bkm_conf, i);
    if (shown[i])
        RedisModule_FreeString(NULL, shown[i]);
    shown[i] = RedisModule_CreateString(NULL, text, strlen(text));
    return shown[i];
}

static int set_string(const char *name, RedisModuleString *val, void *privdata,
                      RedisModuleString **err)
{
    (void)name;
    size_t n;
    const char *p = RedisModule_StringPtrLen(val, &n);
    return set_text(row_of(privdata), p, n, err);
}

static int get_choice(const char *name, void *privdata)
{
    (void)name;
    return (int)bkm_setting_number(&bkm_conf, row_of(privdata));
}

static int set_choice(const char *name, int val, void *privdata, RedisModuleString **err)
{
    (void)name;
    const size_t i = row_of(privdata);
    const char *word = bkm_setting_rows[i].choices[val ? 1 : 0];
    return set_text(i, word, strlen(word), err);
}

/* After a CONFIG SET: a sweep period set from 0 starts the sweep. */
static int apply(RedisModuleCtx *ctx, void *privdata, RedisModuleString **err)
{
    (void)privdata;
    (void)err;
    bkm_sweep_start(ctx);
    return REDISMODULE_OK;
}

int bkm_register_configs(RedisModuleCtx *ctx)
{
    for (size_t i = 0; i < bkm_setting_count && i < MAX_SETTINGS; i++) {
        const bkm_setting *row = &bkm_setting_rows[i];
        void *priv = (void *)(uintptr_t)row;
        /* the default is what the load-time arguments made it: a config
         * file's line or CONFIG SET then overrides it */
        const unsigned flags = row->immutable               ? REDISMODULE_CONFIG_IMMUTABLE
                               : row->kind == BKM_SET_BYTES ? REDISMODULE_CONFIG_MEMORY
                                                            : REDISMODULE_CONFIG_DEFAULT;
        int rc;
        if (row->kind == BKM_SET_COUNT || row->kind == BKM_SET_BYTES) {
            rc = RedisModule_RegisterNumericConfig(ctx, row->name, bkm_setting_number(&bkm_conf, i),
                                                   flags, row->min, row->max, get_number,
                                                   set_number, apply, priv);
        } else if (row->kind == BKM_SET_CHOICE) {
            static const int values[2] = {0, 1};
            rc = RedisModule_RegisterEnumConfig(ctx, row->name,
                                                (int)bkm_setting_number(&bkm_conf, i), flags,
                                                (const char **)(uintptr_t)row->choices, values, 2,
                                                get_choice, set_choice, apply, priv);
        } else {
            /* a copy: the server may compare values with it later (CONFIG
             * REWRITE leaves out a value equal to its default) */
            static char fallback[2][sizeof bkm_conf.bf_text];
            static size_t used;
            if (used == sizeof fallback / sizeof *fallback)
                return REDISMODULE_ERR;
            snprintf(fallback[used], sizeof fallback[used], "%s", bkm_setting_text(&bkm_conf, i));
            rc = RedisModule_RegisterStringConfig(ctx, row->name, fallback[used++], flags,
                                                  get_string, set_string, apply, priv);
        }
        if (rc != REDISMODULE_OK) {
            RedisModule_Log(ctx, "warning", "bloomkit: the server refused config %s", row->name);
            return REDISMODULE_ERR;
        }
    }
    return RedisModule_LoadConfigs(ctx);
}
