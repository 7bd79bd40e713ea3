/*
 * cmdtime.c - what the command now running may rely on: the time it acts at
 * (the server's on a master, the master's when BK.AT replays) and the
 * memory maxmemory leaves it. Under every command file, sweep.c and
 * propagate.c; calls nothing of the module's but the clock.
 */
#include <stdio.h>

#include "modclock.h"
#include "module.h"

int bkm_replaying;

void bkm_time_begin(RedisModuleCtx *ctx)
{
    const int flags = RedisModule_GetContextFlags(ctx);
    if (flags & (REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING |
                 REDISMODULE_CTX_FLAGS_SLAVE))
        return; /* BK.AT sets the time; a replica's reads act at the master's latest */
    bkm_clock_set(RedisModule_Milliseconds());
}

uint64_t bkm_memory_left(RedisModuleCtx *ctx)
{
    RedisModuleServerInfoData *info = RedisModule_GetServerInfo(ctx, "memory");
    if (!info)
        return UINT64_MAX;
    int e1 = 0, e2 = 0;
    const unsigned long long max = RedisModule_ServerInfoGetFieldUnsigned(info, "maxmemory", &e1),
                             used =
                                 RedisModule_ServerInfoGetFieldUnsigned(info, "used_memory", &e2);
    RedisModule_FreeServerInfo(ctx, info);
    if (e1 || e2 || max == 0)
        return UINT64_MAX; /* no maxmemory: the allocator says when there is no more */
    return used < max ? max - used : 0;
}

int bkm_headroom(RedisModuleCtx *ctx, uint64_t need, char *err, size_t errlen)
{
    if (bkm_replaying)
        return 0; /* the master took it: a replica and a replay make the same */
    const uint64_t left = bkm_memory_left(ctx);
    if (need <= left)
        return 0;
    snprintf(err, errlen, "ERR not enough memory: this needs %llu bytes and maxmemory leaves %llu",
             (unsigned long long)need, (unsigned long long)left);
    return -1;
}
