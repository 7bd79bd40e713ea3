/*
 * commands.h - every command of the module: its handler (in the file of its
 * family) and the one table that registers them (commands.c). A new command
 * is a handler and one row.
 */
#ifndef BKM_COMMANDS_H
#define BKM_COMMANDS_H

#include <stddef.h>

#include "rm_api.h"

/* bf.c: RedisBloom's BF.* (its arguments, replies and error texts) */
int bkm_cmd_bf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_bf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_bf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_bf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_bf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_bf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_bf_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* dump.c: BF.SCANDUMP and BF.LOADCHUNK */
int bkm_cmd_bf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_bf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* bf_rbchain.c: BF.DEBUG (RedisBloom's chains only) */
int bkm_cmd_bf_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* cf.c: RedisBloom's CF.* */
int bkm_cmd_cf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_cf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_cf_addnx(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_cf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_cf_insertnx(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_cf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_cf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_cf_count(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_cf_del(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_cf_compact(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_cf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_cf_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_cf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_cf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* bk.c: bloomkit's own, for every variant; BK.AT (replication and the AOF) */
int bkm_cmd_bk_create(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_bk_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_bk_remove(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_bk_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_bk_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bkm_cmd_bk_at(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* merge.c: BK.MERGE */
int bkm_cmd_bk_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* sweep.c: BK.SWEEP */
int bkm_cmd_bk_sweep(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* What COMMAND DOCS says of a command, by its name in upper case
 * (command_docs.c): NULL for none. */
const RedisModuleCommandInfo *bkm_command_info(const char *name);

/* Register every command of the table, with its docs and ACL categories.
 * REDISMODULE_OK or _ERR. */
int bkm_register_commands(RedisModuleCtx *ctx);

/* The handler of a write command by name (BK.AT replays through it): NULL
 * for a name that is not one of the module's write commands, or is BK.AT. */
RedisModuleCmdFunc bkm_write_command(const char *name, size_t len);

#endif
