/*
 * commands.c - the module's commands, one row each: name, handler, the
 * server's flags, key positions (first, last, step: 0 0 0 for none), and
 * the reply it gives (RedisBloom's shape for BF.*, see docs/redis.md).
 */
#include "commands.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "args.h"

static const struct {
    const char *name;
    RedisModuleCmdFunc fn;
    const char *flags;
    int first, last, step;
    const char *reply; /* for the reader: what the command answers */
} commands[] = {
    {"BF.RESERVE", bkm_cmd_bf_reserve, "write deny-oom", 1, 1, 1, "OK"},
    {"BF.ADD", bkm_cmd_bf_add, "write deny-oom", 1, 1, 1, "1/0"},
    {"BF.MADD", bkm_cmd_bf_madd, "write deny-oom", 1, 1, 1, "array of 1/0"},
    {"BF.INSERT", bkm_cmd_bf_insert, "write deny-oom", 1, 1, 1, "array of 1/0"},
    {"BF.EXISTS", bkm_cmd_bf_exists, "readonly fast", 1, 1, 1, "1/0"},
    {"BF.MEXISTS", bkm_cmd_bf_mexists, "readonly", 1, 1, 1, "array of 1/0"},
    {"BF.INFO", bkm_cmd_bf_info, "readonly fast", 1, 1, 1, "RedisBloom's label/value pairs"},
    {"BF.CARD", bkm_cmd_bf_card, "readonly fast", 1, 1, 1, "integer"},
    {"BF.SCANDUMP", bkm_cmd_bf_scandump, "readonly", 1, 1, 1, "[iterator, chunk]"},
    {"BF.LOADCHUNK", bkm_cmd_bf_loadchunk, "write deny-oom", 1, 1, 1, "OK"},
    {"BF.DEBUG", bkm_cmd_bf_debug, "readonly fast", 1, 1, 1, "size, then a line a link"},
    {"CF.RESERVE", bkm_cmd_cf_reserve, "write deny-oom", 1, 1, 1, "OK"},
    {"CF.ADD", bkm_cmd_cf_add, "write deny-oom", 1, 1, 1, "1"},
    {"CF.ADDNX", bkm_cmd_cf_addnx, "write deny-oom", 1, 1, 1, "1/0"},
    {"CF.INSERT", bkm_cmd_cf_insert, "write deny-oom", 1, 1, 1, "array of 1/-1"},
    {"CF.INSERTNX", bkm_cmd_cf_insertnx, "write deny-oom", 1, 1, 1, "array of 1/0/-1"},
    {"CF.EXISTS", bkm_cmd_cf_exists, "readonly fast", 1, 1, 1, "1/0"},
    {"CF.MEXISTS", bkm_cmd_cf_mexists, "readonly fast", 1, 1, 1, "array of 1/0"},
    {"CF.COUNT", bkm_cmd_cf_count, "readonly fast", 1, 1, 1, "integer"},
    {"CF.DEL", bkm_cmd_cf_del, "write fast", 1, 1, 1, "1/0"},
    /* RedisBloom flags it readonly though it writes: here a write, replicated */
    {"CF.COMPACT", bkm_cmd_cf_compact, "write", 1, 1, 1, "OK"},
    {"CF.INFO", bkm_cmd_cf_info, "readonly fast", 1, 1, 1, "RedisBloom's label/value pairs"},
    {"CF.DEBUG", bkm_cmd_cf_debug, "readonly fast", 1, 1, 1, "one line"},
    {"CF.SCANDUMP", bkm_cmd_cf_scandump, "readonly fast", 1, 1, 1, "[position, chunk]"},
    {"CF.LOADCHUNK", bkm_cmd_cf_loadchunk, "write deny-oom", 1, 1, 1, "OK"},
    {"BK.CREATE", bkm_cmd_bk_create, "write deny-oom", 1, 1, 1, "OK"},
    {"BK.ADD", bkm_cmd_bk_add, "write deny-oom", 1, 1, 1, "array of 1/0"},
    {"BK.REMOVE", bkm_cmd_bk_remove, "write", 1, 1, 1, "array of 1/0"},
    {"BK.EXISTS", bkm_cmd_bk_exists, "readonly", 1, 1, 1, "array of 1/0"},
    {"BK.INFO", bkm_cmd_bk_info, "readonly", 1, 1, 1, "map of bk_stats' figures"},
    {"BK.SWEEP", bkm_cmd_bk_sweep, "write", 0, 0, 0, "filters that freed memory"},
    {"BK.MERGE", bkm_cmd_bk_merge, "write deny-oom", 1, -1, 1, "OK"},
    {"BK.AT", bkm_cmd_bk_at, "write", 3, 3, 1, "the replayed command's"},
};

/* The ACL categories of a command: its family's (BF.* bloom, CF.* cuckoo,
 * as RedisBloom's; BK.* bloomkit) where the server lets a module add one,
 * then read or write, fast or slow, from its flags, as the server gives its
 * own commands. */
static void categories_of(const char *name, const char *flags, int family, char *out, size_t len)
{
    const char *fam = strncmp(name, "BF.", 3) == 0   ? "bloom "
                      : strncmp(name, "CF.", 3) == 0 ? "cuckoo "
                                                     : "bloomkit ";
    snprintf(out, len, "%s%s %s", family ? fam : "",
             strncmp(flags, "write", 5) == 0 ? "write" : "read",
             strstr(flags, "fast") ? "fast" : "slow");
}

/* Module ACL categories: Redis 7.4 and Valkey 8 (AddACLCategory), the
 * read/write/fast ones from Redis 7.2 (SetCommandACLCategories); none on
 * Redis 7.0, where the commands are in @all alone (the log says so). */
static void set_categories(RedisModuleCtx *ctx, const char *lower, size_t i, int family)
{
    if (!RedisModule_SetCommandACLCategories)
        return;
    char acl[64];
    categories_of(commands[i].name, commands[i].flags, family, acl, sizeof acl);
    RedisModuleCommand *cmd = RedisModule_GetCommand(ctx, lower);
    if (!cmd || RedisModule_SetCommandACLCategories(cmd, acl) != REDISMODULE_OK)
        RedisModule_Log(ctx, "warning", "bloomkit: %s: the server refused ACL categories '%s'",
                        commands[i].name, acl);
}

/* Registered in lower case, as RedisBloom registers its commands: the
 * server names a command by its registered name (the arity error says
 * 'bf.add'); clients call them in any case. */
int bkm_register_commands(RedisModuleCtx *ctx)
{
    int family = RedisModule_AddACLCategory != NULL;
    static const char *const families[] = {"bloom", "cuckoo", "bloomkit"};
    for (size_t f = 0; family && f < sizeof families / sizeof *families; f++)
        if (RedisModule_AddACLCategory(ctx, families[f]) != REDISMODULE_OK)
            family = 0; /* taken (another module's): leave the families out */
    if (!RedisModule_SetCommandACLCategories)
        RedisModule_Log(ctx, "notice",
                        "bloomkit: this server has no module ACL categories: the commands are in "
                        "@all only (Redis 7.4 and Valkey 8 have @bloom, @cuckoo, @bloomkit)");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        char name[32];
        size_t n = 0;
        for (; n < sizeof name - 1 && commands[i].name[n]; n++)
            name[n] = (char)tolower((unsigned char)commands[i].name[n]);
        name[n] = '\0';
        if (RedisModule_CreateCommand(ctx, name, commands[i].fn, commands[i].flags,
                                      commands[i].first, commands[i].last,
                                      commands[i].step) != REDISMODULE_OK)
            return REDISMODULE_ERR;
        const RedisModuleCommandInfo *info = bkm_command_info(commands[i].name);
        RedisModuleCommand *cmd = RedisModule_GetCommand(ctx, name);
        if (!info || !cmd || RedisModule_SetCommandInfo(cmd, info) != REDISMODULE_OK) {
            RedisModule_Log(ctx, "warning", "bloomkit: %s: its docs were refused",
                            commands[i].name);
            return REDISMODULE_ERR;
        }
        set_categories(ctx, name, i, family);
    }
    return REDISMODULE_OK;
}

RedisModuleCmdFunc bkm_write_command(const char *name, size_t len)
{
    const bkm_arg a = {name, len};
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (commands[i].fn != bkm_cmd_bk_at && strncmp(commands[i].flags, "write", 5) == 0 &&
            bkm_arg_is(a, commands[i].name))
            return commands[i].fn;
    return NULL;
}
