/*
 * sweep.c - window filters let go of their expired generations without a
 * write to them: bk_expire on every window filter the module holds (a
 * sweep), at most every SWEEP_MS (module argument; 0 turns it off).
 *
 * What a sweep frees must reach replicas and the AOF at the master's time
 * (BK.AT <ms> BK.SWEEP) so that they keep the same bytes. Redis 7.0 cannot
 * propagate from a timer safely: while clients are paused (CLIENT PAUSE, a
 * SHUTDOWN waiting for its replicas, FAILOVER) any propagation trips an
 * assertion, and a module cannot tell that they are. So the timer only
 * marks a sweep due, and the next write command of the module on a master
 * runs it and replicates it with its own write (a write command never runs
 * while writes are paused). A master with nothing to propagate to (no AOF,
 * no replica, no replication backlog for one to resume from) sweeps from the
 * timer itself, so a server nobody writes frees memory too. BK.SWEEP sweeps
 * at once.
 *
 * The window values are kept in a list (their keys may be renamed, moved or
 * swapped: the values, not their names, are what a sweep needs), under a
 * mutex, since the server may free a value away from its main thread.
 */
#include <pthread.h>
#include <stddef.h>

#include "modclock.h"
#include "commands.h"
#include "module.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bkm_value *head;

void bkm_sweep_track(bkm_value *v)
{
    bk_config cfg;
    if (bk_get_config(v->f, &cfg) != BK_OK || cfg.variant != BK_VARIANT_WINDOW)
        return;
    pthread_mutex_lock(&lock);
    bkm_list_add(&head, v, offsetof(bkm_value, swept));
    pthread_mutex_unlock(&lock);
}

void bkm_sweep_untrack(bkm_value *v)
{
    if (!v->swept.in)
        return;
    pthread_mutex_lock(&lock);
    bkm_list_remove(&head, v, offsetof(bkm_value, swept));
    pthread_mutex_unlock(&lock);
}

/* bk_expire on every window filter: how many freed something. */
static long long sweep(void)
{
    long long freed = 0;
    pthread_mutex_lock(&lock);
    for (bkm_value *v = head; v; v = v->swept.next)
        if (bk_expire(v->f) == 1) {
            bkm_value_changed(v);
            freed++;
        }
    pthread_mutex_unlock(&lock);
    return freed;
}

static int due; /* the timer asked for a sweep that has not run yet */

/* A sweep reaches replicas and the AOF as BK.AT <now> BK.SWEEP: they free
 * what the master freed, at its time. */
static void replicate(RedisModuleCtx *ctx)
{
    RedisModule_Replicate(ctx, "BK.AT", "lc", (long long)bkm_clock_now(), "BK.SWEEP");
}

/* BK.SWEEP: the number of window filters that freed memory. */
int bkm_cmd_bk_sweep(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 1)
        return RedisModule_WrongArity(ctx);
    (void)argv;
    bkm_time_begin(ctx);
    const long long freed = sweep();
    due = 0;
    if (freed)
        replicate(ctx);
    return RedisModule_ReplyWithLongLong(ctx, freed);
}

/* A master client's context: neither a replica, nor a replay. */
static int on_master(RedisModuleCtx *ctx)
{
    return !bkm_replaying && !(RedisModule_GetContextFlags(ctx) &
                               (REDISMODULE_CTX_FLAGS_SLAVE | REDISMODULE_CTX_FLAGS_REPLICATED |
                                REDISMODULE_CTX_FLAGS_LOADING));
}

void bkm_sweep_if_due(RedisModuleCtx *ctx)
{
    if (!due || !on_master(ctx))
        return;
    due = 0;
    bkm_time_begin(ctx); /* the write that runs it may not have needed the clock */
    if (sweep())
        replicate(ctx);
}

/* 1 when a sweep here needs no propagation: no AOF, no replica, and no
 * backlog a replica could resume from (a later replica then starts from a
 * full copy, which holds the sweep). */
static int alone(RedisModuleCtx *ctx)
{
    if (RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_AOF)
        return 0;
    RedisModuleServerInfoData *info = RedisModule_GetServerInfo(ctx, "replication");
    if (!info)
        return 0;
    int e1 = 0, e2 = 0;
    const long long replicas = RedisModule_ServerInfoGetFieldSigned(info, "connected_slaves", &e1),
                    backlog =
                        RedisModule_ServerInfoGetFieldSigned(info, "repl_backlog_active", &e2);
    RedisModule_FreeServerInfo(ctx, info);
    return !e1 && !e2 && replicas == 0 && backlog == 0;
}

/* 1 while a timer is set to call tick (one at a time, whatever CONFIG SET
 * does to sweep-ms in between). */
static int armed;

static void tick(RedisModuleCtx *ctx, void *data)
{
    (void)data;
    if (on_master(ctx)) {
        bkm_time_begin(ctx);
        if (alone(ctx))
            sweep(); /* nothing to propagate to: at once */
        else
            due = 1; /* by the next write (above) */
    }
    armed = bkm_conf.sweep_ms != 0; /* sweep-ms set to 0: the sweep stops here */
    if (armed)
        RedisModule_CreateTimer(ctx, (long long)bkm_conf.sweep_ms, tick, NULL);
}
void bkm_sweep_start(RedisModuleCtx *ctx)
{
    if (bkm_conf.sweep_ms && !armed) {
        armed = 1;
        RedisModule_CreateTimer(ctx, (long long)bkm_conf.sweep_ms, tick, NULL);
    }
}
