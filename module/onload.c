/*
 * onload.c - bloomkit's Redis module: loading it.
 *
 *   redis-server --loadmodule bloomkit-redis-module.so [NAME VALUE]...
 *
 * The server's API looked up, the module arguments read (args.c), the
 * library set to the server's allocator and the module's clock, the data
 * type (value.c) and every command (commands.c) registered, the INFO
 * section, and the timers (sweep.c) started.
 */
#include <stdio.h>

#include "modclock.h"
#include "commands.h"
#include "dump.h"
#include "module.h"
#include "rb.h"

/* INFO bloomkit: every setting under its config name ("-" as "_"), the
 * unfinished BF.LOADCHUNK loads, and what each value type holds. */
static void info(RedisModuleInfoCtx *ctx, int for_crash_report)
{
    RedisModule_InfoAddSection(ctx, "settings");
    for (size_t i = 0; i < bkm_setting_count; i++) {
        char field[40];
        size_t n = 0;
        for (const char *p = bkm_setting_rows[i].name; *p && n < sizeof field - 1; p++)
            field[n++] = (char)(*p == '-' ? '_' : *p);
        field[n] = '\0';
        const bkm_setting_kind kind = bkm_setting_rows[i].kind;
        if (kind == BKM_SET_COUNT || kind == BKM_SET_BYTES)
            RedisModule_InfoAddFieldULongLong(ctx, field,
                                              (unsigned long long)bkm_setting_number(&bkm_conf, i));
        else
            RedisModule_InfoAddFieldCString(ctx, field, bkm_setting_text(&bkm_conf, i));
    }
    bkm_loads_info(ctx);
    RedisModule_InfoAddSection(ctx, "held");
    bkm_held_info(ctx, for_crash_report);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
__attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx *ctx,
                                                              RedisModuleString **argv, int argc)
{
    const char *missing;
    if (rm_api_load(ctx, &missing) != REDISMODULE_OK) {
        if (missing && RedisModule_Log)
            RedisModule_Log(ctx, "warning",
                            "bloomkit: this server lacks %s (Redis 7.0 or later is needed)",
                            missing);
        return REDISMODULE_ERR;
    }
    bkm_arg args[64];
    if (argc > (int)(sizeof args / sizeof *args))
        argc = -1; /* refused once the module has a name to log under */
    for (int i = 0; i < argc; i++)
        args[i].p = RedisModule_StringPtrLen(argv[i], &args[i].n);
    char err[300];
    const int parsed =
        argc < 0 ? -1 : bkm_settings_parse(&bkm_conf, args, (size_t)argc, err, sizeof err);
    if (argc < 0)
        snprintf(err, sizeof err, "too many module arguments");
    /* MODULE_NAME bf: the name and version RedisBloom's tools look for
     * (RedisBloom 2.6.28, whose commands and data the module answers for) */
    const int named_bf = parsed == 0 && bkm_conf.named_bf;
    if (rm_set_name(ctx, named_bf ? "bf" : BKM_NAME,
                    named_bf ? BKM_RB_MODULE_VERSION
                             : BK_VERSION_MAJOR * 10000 + BK_VERSION_MINOR * 100 +
                                   BK_VERSION_PATCH) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (parsed != 0) {
        RedisModule_Log(ctx, "warning", "bloomkit: %s", err);
        return REDISMODULE_ERR;
    }
    if (bkm_allocator_init() != REDISMODULE_OK)
        return REDISMODULE_ERR;
    bkm_alloc_probe();
    /* 0 until a command sets it: a master from its own clock, a replica only from
     * the master's times (a replica must never read ahead of its master) */
    bkm_clock_init(0);
    /* a damaged payload is refused (NULL from rdb_load), never a crash */
    RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTIONS_HANDLE_IO_ERRORS);
    if (bkm_register_configs(ctx) != REDISMODULE_OK || bkm_register_type(ctx) != REDISMODULE_OK ||
        bkm_register_rb_types(ctx) != REDISMODULE_OK ||
        bkm_register_commands(ctx) != REDISMODULE_OK || bkm_loads_watch(ctx) != REDISMODULE_OK ||
        RedisModule_RegisterInfoFunc(ctx, info) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    bkm_sweep_start(ctx);
    RedisModule_Log(ctx, "notice",
                    "bloomkit %s: BF.*, CF.* and BK.* commands, filters up to %llu bytes",
                    BK_VERSION_STRING, (unsigned long long)bkm_conf.max_bytes);
    return REDISMODULE_OK;
}
