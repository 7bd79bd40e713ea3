/*
 * propagate.c - which time a command acts at, and how writes reach replicas and
 * the AOF with it.
 *
 * Every write is propagated as `BK.AT <ms> <command> <args>...`: the command
 * as the client sent it, with the master's time. A replica (and an AOF
 * replay) runs it at that time, never by its own clock, so a window filter
 * rotates there exactly as on the master and the bytes agree. A filter
 * created on the master (BF.RESERVE, BF.ADD on a missing key, BK.CREATE...)
 * is propagated first as `BK.AT <ms> BK.CREATE <key> <config>` with its
 * whole config, random hash key included: a replica must not draw its own.
 */
#include <stdio.h>

#include "modclock.h"
#include "module.h"

void bkm_replicate(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    RedisModule_Replicate(ctx, "BK.AT", "lv", (long long)bkm_clock_now(), argv, (size_t)argc);
    bkm_sweep_if_due(ctx); /* a write command: propagating is safe here */
}

void bkm_replicate_write(RedisModuleCtx *ctx, const bkm_value *v, RedisModuleString **argv,
                         int argc)
{
    if (v->window) {
        bkm_replicate(ctx, argv, argc);
        return;
    }
    RedisModule_ReplicateVerbatim(ctx); /* its effect needs no clock: as it came */
    bkm_sweep_if_due(ctx);
}

void bkm_replicate_create(RedisModuleCtx *ctx, RedisModuleString *key, const bk_filter *f)
{
    bk_config cfg;
    char text[2048];
    if (bk_get_config(f, &cfg) != BK_OK)
        return;
    const int n = bk_config_format(&cfg, 1, text, sizeof text);
    if (n < 0 || n >= (int)sizeof text)
        return; /* cannot happen: a config's text is a few hundred bytes */
    RedisModule_Replicate(ctx, "BK.AT", "lcsc", (long long)bkm_clock_now(), "BK.CREATE", key, text);
}
