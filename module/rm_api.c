/*
 * rm_api.c - the API function pointers of rm_api.h and their lookup.
 */
#include "rm_api.h"

#include <string.h>

/* (rt is a type: it cannot take parentheses) */
#define BKM_RM_DEFINE(rt, name, params) rt(*RedisModule_##name) params = NULL; /* NOLINT */
BKM_RM_FUNCTIONS(BKM_RM_DEFINE)
BKM_RM_OPTIONAL(BKM_RM_DEFINE)
#undef BKM_RM_DEFINE

typedef int (*get_api_fn)(const char *name, void *out);

int rm_api_load(RedisModuleCtx *ctx, const char **missing)
{
    /* The reference's RedisModule_Init: the context's first word is the
     * server's GetApi function. A data pointer read as a function pointer:
     * copied byte-wise, as POSIX's dlsym results are. */
    void *word;
    memcpy(&word, (void *const *)ctx, sizeof word);
    get_api_fn get_api;
    memcpy(&get_api, &word, sizeof get_api);
    *missing = NULL;
#define BKM_RM_LOOKUP(rt, fname, params)                                                           \
    if (get_api("RedisModule_" #fname, (void *)&RedisModule_##fname) != REDISMODULE_OK ||          \
        !RedisModule_##fname) {                                                                    \
        *missing = "RedisModule_" #fname;                                                          \
        return REDISMODULE_ERR;                                                                    \
    }
    BKM_RM_FUNCTIONS(BKM_RM_LOOKUP)
#undef BKM_RM_LOOKUP
#define BKM_RM_MAYBE(rt, fname, params)                                                            \
    if (get_api("RedisModule_" #fname, (void *)&RedisModule_##fname) != REDISMODULE_OK)            \
        RedisModule_##fname = NULL;
    BKM_RM_OPTIONAL(BKM_RM_MAYBE)
#undef BKM_RM_MAYBE
    return REDISMODULE_OK;
}

int rm_set_name(RedisModuleCtx *ctx, const char *name, int ver)
{
    if (RedisModule_IsModuleNameBusy(name))
        return REDISMODULE_ERR;
    RedisModule_SetModuleAttribs(ctx, name, ver, REDISMODULE_APIVER_1);
    return REDISMODULE_OK;
}
