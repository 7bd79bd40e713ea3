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

static void info(RedisModuleInfoCtx *ctx, int for_crash_report)
{
    (void)for_crash_report;
    RedisModule_InfoAddSection(ctx, "settings");
    RedisModule_InfoAddFieldULongLong(ctx, "max_bytes", bkm_conf.max_bytes);
    RedisModule_InfoAddFieldULongLong(ctx, "initial_size", bkm_conf.capacity);
    RedisModule_InfoAddFieldULongLong(ctx, "expansion", bkm_conf.expansion);
    RedisModule_InfoAddFieldULongLong(ctx, "sweep_ms", bkm_conf.sweep_ms);
    RedisModule_InfoAddFieldULongLong(ctx, "loads_max_bytes", bkm_conf.loads_max_bytes);
    RedisModule_InfoAddFieldULongLong(ctx, "load_timeout_ms", bkm_conf.load_timeout_ms);
    RedisModule_InfoAddFieldULongLong(ctx, "cf_max_expansions", bkm_conf.cf_max_expansions);
    RedisModule_InfoAddFieldULongLong(ctx, "new_keys_redisbloom",
                                      (unsigned long long)bkm_conf.new_keys_redisbloom);
    bkm_loads_info(ctx);
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
