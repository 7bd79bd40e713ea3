/*
 * bf_info.c - BF.INFO's reply, in RedisBloom's shapes (FORMATS.md 6.1), for
 * both kinds of key BF.* serves: bloomkit's filters (bf.c) and RedisBloom's
 * chains (bf_rbchain.c) give their five figures, this writes them.
 */
#include "module.h"
#include "rb.h"

int bkm_reply_bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                      const long long values[5], int no_growth)
{
    static const char *const labels[] = {"Capacity", "Size", "Number of filters",
                                         "Number of items inserted", "Expansion rate"};
    static const char *const fields[] = {"CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION"};
    int only = -1;
    if (argc == 3) {
        bkm_arg a;
        a.p = RedisModule_StringPtrLen(argv[2], &a.n);
        for (int i = 0; i < 5; i++)
            if (bkm_arg_is(a, fields[i]))
                only = i;
        if (only < 0)
            return RedisModule_ReplyWithError(ctx, "Invalid information value"); /* RedisBloom's */
    }
    /* one field: RESP2 a one-element array of its value, RESP3 a one-entry map */
    const int resp3 = bkm_resp3(ctx);
    if (only >= 0 && !resp3)
        RedisModule_ReplyWithArray(ctx, 1);
    else
        RedisModule_ReplyWithMap(ctx, only >= 0 ? 1 : 5);
    for (int i = 0; i < 5; i++) {
        if (only >= 0 && i != only)
            continue;
        if (only < 0 || resp3)
            RedisModule_ReplyWithSimpleString(ctx, labels[i]);
        if (i == 4 && no_growth)
            RedisModule_ReplyWithNull(ctx);
        else
            RedisModule_ReplyWithLongLong(ctx, values[i]);
    }
    return REDISMODULE_OK;
}
