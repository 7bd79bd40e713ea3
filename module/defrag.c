/*
 * defrag.c - active defragmentation (`activedefrag yes`) of the module's
 * values, bloomkit's and RedisBloom's: each filter's arrays offered to the
 * server's RedisModule_DefragAlloc one at a time through bk_defrag, and a
 * value's BF.SCANDUMP snapshot. A value's free effort is its size in pages,
 * so the server moves one of more than its active-defrag-max-scan-fields
 * (4 MiB by default) over several defrag cycles, resuming at the array it
 * stopped at, none holding the server longer than it allows; such a value
 * is also freed on the server's background thread (lazyfree), which the
 * module's lists and sums allow. A value's own small struct stays (lists
 * point at it).
 */
#include "module.h"
#include "rb.h"

#define PAGE 4096

static void *move(void *block, void *arg)
{
    return RedisModule_DefragAlloc(arg, block);
}

/* Offer f's arrays from the server's cursor on: 0 when every one was
 * offered, 1 when the server asked to stop (the cursor then says where to
 * resume; a filter that lost arrays meanwhile just has fewer to offer). */
static int defrag_filter(RedisModuleDefragCtx *ctx, bk_filter *f)
{
    unsigned long cursor = 0;
    if (RedisModule_DefragCursorGet(ctx, &cursor) != REDISMODULE_OK || cursor > UINT32_MAX)
        cursor = 0; /* not resumed (a small value's single step) */
    for (uint32_t i = (uint32_t)cursor;; i++) {
        if (bk_defrag(f, i, move, ctx) != BK_OK)
            return 0; /* BK_ERANGE: all offered */
        if (RedisModule_DefragShouldStop(ctx)) {
            RedisModule_DefragCursorSet(ctx, (unsigned long)i + 1);
            return 1;
        }
    }
}

int bkm_defrag_value(RedisModuleDefragCtx *ctx, RedisModuleString *key, void **value)
{
    (void)key;
    bkm_value *v = *value;
    if (v->dump) {
        uint8_t *moved = RedisModule_DefragAlloc(ctx, v->dump);
        if (moved)
            v->dump = moved;
    }
    return defrag_filter(ctx, v->f);
}

int bkm_defrag_rb(RedisModuleDefragCtx *ctx, RedisModuleString *key, void **value)
{
    (void)key;
    return defrag_filter(ctx, *value);
}

size_t bkm_value_effort(RedisModuleString *key, const void *value)
{
    (void)key;
    return 1 + bkm_value_usage(value) / PAGE;
}

size_t bkm_rbchain_effort(RedisModuleString *key, const void *value)
{
    (void)key;
    return 1 + bkm_rb_usage(BKM_RBCHAIN, value) / PAGE;
}

size_t bkm_rbcuckoo_effort(RedisModuleString *key, const void *value)
{
    (void)key;
    return 1 + bkm_rb_usage(BKM_RBCUCKOO, value) / PAGE;
}
