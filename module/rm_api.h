/*
 * rm_api.h - the part of Redis's module API this module uses, declared from
 * the API's published reference (the "Modules API reference" of Redis 7.0:
 * names, signatures, constants and the RedisModuleTypeMethods layout).
 * Debian ships no module header, so we write our own and declare nothing we
 * do not call. The tests load the module into the real redis-server, which
 * proves every declaration: a name the server does not export makes
 * rm_api_load fail with the name in the log; a wrong signature or constant fails
 * the command suites.
 *
 * How the API is reached (the reference's RedisModule_Init): the server
 * passes OnLoad a context whose first word is a function
 * `int GetApi(const char *name, void *out)`; each API function is looked up
 * by its name ("RedisModule_" + short name) and stored in a pointer.
 */
#ifndef BKM_RM_API_H
#define BKM_RM_API_H

#include <stddef.h>
#include <stdint.h>

/* Opaque types of the server. */
typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleKey RedisModuleKey;
typedef struct RedisModuleType RedisModuleType;
typedef struct RedisModuleIO RedisModuleIO;
typedef struct RedisModuleDigest RedisModuleDigest;
typedef struct RedisModuleInfoCtx RedisModuleInfoCtx;
typedef struct RedisModuleServerInfoData RedisModuleServerInfoData;
typedef struct RedisModuleCommand RedisModuleCommand;
typedef struct RedisModuleDefragCtx RedisModuleDefragCtx;
typedef uint64_t RedisModuleTimerID;

/* A server event to subscribe to (RedisModuleEvent_FlushDB is {2, 1}). */
typedef struct RedisModuleEvent {
    uint64_t id;
    uint64_t dataver;
} RedisModuleEvent;
#define REDISMODULE_EVENT_FLUSHDB          2
#define REDISMODULE_SUBEVENT_FLUSHDB_START 0
/* The data of a FlushDB event: dbnum -1 for FLUSHALL. */
typedef struct RedisModuleFlushInfo {
    uint64_t version;
    int32_t sync;
    int32_t dbnum;
} RedisModuleFlushInfo;
typedef void (*RedisModuleEventCallback)(RedisModuleCtx *ctx, RedisModuleEvent eid,
                                         uint64_t subevent, void *data);

#define REDISMODULE_OK                       0
#define REDISMODULE_ERR                      1
#define REDISMODULE_APIVER_1                 1
#define REDISMODULE_READ                     (1 << 0)
#define REDISMODULE_WRITE                    (1 << 1)
#define REDISMODULE_KEYTYPE_EMPTY            0
#define REDISMODULE_KEYTYPE_MODULE           6
#define REDISMODULE_POSTPONED_LEN            (-1L)
#define REDISMODULE_NOTIFY_GENERIC           (1 << 2)
#define REDISMODULE_NOTIFY_MODULE            (1 << 13)
#define REDISMODULE_CTX_FLAGS_SLAVE          (1 << 3)
#define REDISMODULE_CTX_FLAGS_AOF            (1 << 6)
#define REDISMODULE_CTX_FLAGS_OOM            (1 << 10)
#define REDISMODULE_CTX_FLAGS_REPLICATED     (1 << 12)
#define REDISMODULE_CTX_FLAGS_LOADING        (1 << 13)
#define REDISMODULE_CTX_FLAGS_RESP3          (1 << 22)
#define REDISMODULE_OPTIONS_HANDLE_IO_ERRORS (1 << 0)
#define REDISMODULE_ERRORMSG_WRONGTYPE                                                             \
    "WRONGTYPE Operation against a key holding the wrong kind of value"

typedef int (*RedisModuleCmdFunc)(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
typedef void *(*RedisModuleTypeLoadFunc)(RedisModuleIO *io, int encver);
typedef void (*RedisModuleTypeSaveFunc)(RedisModuleIO *io, void *value);
typedef void (*RedisModuleTypeRewriteFunc)(RedisModuleIO *aof, RedisModuleString *key, void *value);
typedef size_t (*RedisModuleTypeMemUsageFunc)(const void *value);
typedef void (*RedisModuleTypeDigestFunc)(RedisModuleDigest *digest, void *value);
typedef void (*RedisModuleTypeFreeFunc)(void *value);
typedef size_t (*RedisModuleTypeFreeEffortFunc)(RedisModuleString *key, const void *value);
typedef void *(*RedisModuleTypeCopyFunc)(RedisModuleString *fromkey, RedisModuleString *tokey,
                                         const void *value);
typedef void (*RedisModuleTimerProc)(RedisModuleCtx *ctx, void *data);
/* Active defrag of one value: 0 done, 1 more to do (its cursor set). */
typedef int (*RedisModuleTypeDefragFunc)(RedisModuleDefragCtx *ctx, RedisModuleString *key,
                                         void **value);
typedef void (*RedisModuleInfoFunc)(RedisModuleInfoCtx *ctx, int for_crash_report);

/* Command docs and key specs (Redis 7.0 on: RedisModule_SetCommandInfo),
 * the layout of the reference's version 1. */
typedef enum {
    REDISMODULE_ARG_TYPE_STRING,
    REDISMODULE_ARG_TYPE_INTEGER,
    REDISMODULE_ARG_TYPE_DOUBLE,
    REDISMODULE_ARG_TYPE_KEY,
    REDISMODULE_ARG_TYPE_PATTERN,
    REDISMODULE_ARG_TYPE_UNIX_TIME,
    REDISMODULE_ARG_TYPE_PURE_TOKEN,
    REDISMODULE_ARG_TYPE_ONEOF,
    REDISMODULE_ARG_TYPE_BLOCK
} RedisModuleCommandArgType;
#define REDISMODULE_CMD_ARG_OPTIONAL (1 << 0)
#define REDISMODULE_CMD_ARG_MULTIPLE (1 << 1)
typedef enum {
    REDISMODULE_KSPEC_BS_INVALID,
    REDISMODULE_KSPEC_BS_UNKNOWN,
    REDISMODULE_KSPEC_BS_INDEX,
    REDISMODULE_KSPEC_BS_KEYWORD
} RedisModuleKeySpecBeginSearchType;
typedef enum {
    REDISMODULE_KSPEC_FK_OMITTED,
    REDISMODULE_KSPEC_FK_UNKNOWN,
    REDISMODULE_KSPEC_FK_RANGE,
    REDISMODULE_KSPEC_FK_KEYNUM
} RedisModuleKeySpecFindKeysType;
#define REDISMODULE_CMD_KEY_RO     (1ULL << 0)
#define REDISMODULE_CMD_KEY_RW     (1ULL << 1)
#define REDISMODULE_CMD_KEY_OW     (1ULL << 2)
#define REDISMODULE_CMD_KEY_ACCESS (1ULL << 4)
#define REDISMODULE_CMD_KEY_UPDATE (1ULL << 5)
#define REDISMODULE_CMD_KEY_INSERT (1ULL << 6)
#define REDISMODULE_CMD_KEY_DELETE (1ULL << 7)
typedef struct RedisModuleCommandArg {
    const char *name;
    RedisModuleCommandArgType type;
    int key_spec_index;
    const char *token;
    const char *summary;
    const char *since;
    int flags;
    const char *deprecated_since;
    struct RedisModuleCommandArg *subargs;
    const char *display_text;
} RedisModuleCommandArg;
typedef struct {
    const char *since;
    const char *changes;
} RedisModuleCommandHistoryEntry;
typedef struct {
    const char *notes;
    uint64_t flags;
    RedisModuleKeySpecBeginSearchType begin_search_type;
    union {
        struct {
            int pos;
        } index;
        struct {
            const char *keyword;
            int startfrom;
        } keyword;
    } bs;
    RedisModuleKeySpecFindKeysType find_keys_type;
    union {
        struct {
            int lastkey;
            int keystep;
            int limit;
        } range;
        struct {
            int keynumidx;
            int firstkey;
            int keystep;
        } keynum;
    } fk;
} RedisModuleCommandKeySpec;
typedef struct {
    int version;
    size_t sizeof_historyentry;
    size_t sizeof_keyspec;
    size_t sizeof_arg;
} RedisModuleCommandInfoVersion;
typedef struct {
    const RedisModuleCommandInfoVersion *version;
    const char *summary;
    const char *complexity;
    const char *since;
    RedisModuleCommandHistoryEntry *history;
    const char *tips;
    int arity;
    RedisModuleCommandKeySpec *key_specs;
    RedisModuleCommandArg *args;
} RedisModuleCommandInfo;

/* Module configs (Redis 7.0 on): a setter answers REDISMODULE_OK, or _ERR
 * with *err a string the server frees; the apply callback runs once after
 * the setters of one CONFIG SET. */
#define REDISMODULE_CONFIG_DEFAULT   0
#define REDISMODULE_CONFIG_IMMUTABLE (1ULL << 0)
#define REDISMODULE_CONFIG_MEMORY    (1ULL << 7)
typedef long long (*RedisModuleConfigGetNumericFunc)(const char *name, void *privdata);
typedef int (*RedisModuleConfigSetNumericFunc)(const char *name, long long val, void *privdata,
                                               RedisModuleString **err);
typedef RedisModuleString *(*RedisModuleConfigGetStringFunc)(const char *name, void *privdata);
typedef int (*RedisModuleConfigSetStringFunc)(const char *name, RedisModuleString *val,
                                              void *privdata, RedisModuleString **err);
typedef int (*RedisModuleConfigGetEnumFunc)(const char *name, void *privdata);
typedef int (*RedisModuleConfigSetEnumFunc)(const char *name, int val, void *privdata,
                                            RedisModuleString **err);
typedef int (*RedisModuleConfigApplyFunc)(RedisModuleCtx *ctx, void *privdata,
                                          RedisModuleString **err);

/* The layout of RedisModuleTypeMethods up to the last field of version 3
 * (Redis 6.0 on; 7.0 reads it as it reads version 4, whose fields follow). */
#define BKM_TYPE_METHOD_VERSION 3
typedef struct RedisModuleTypeMethods {
    uint64_t version;
    RedisModuleTypeLoadFunc rdb_load;
    RedisModuleTypeSaveFunc rdb_save;
    RedisModuleTypeRewriteFunc aof_rewrite;
    RedisModuleTypeMemUsageFunc mem_usage;
    RedisModuleTypeDigestFunc digest;
    RedisModuleTypeFreeFunc free;
    void *aux_load; /* unused: NULL */
    void *aux_save; /* unused: NULL */
    int aux_save_triggers;
    RedisModuleTypeFreeEffortFunc free_effort;
    void *unlink; /* unused: NULL */
    RedisModuleTypeCopyFunc copy;
    RedisModuleTypeDefragFunc defrag;
} RedisModuleTypeMethods;

/* Every API function used: X(return type, short name, parameters). */
#define BKM_RM_FUNCTIONS(X)                                                                        \
    X(void *, TryAlloc, (size_t bytes))                                                            \
    X(void *, Calloc, (size_t nmemb, size_t size))                                                 \
    X(void, Free, (void *ptr))                                                                     \
    X(size_t, MallocSize, (void *ptr))                                                             \
    X(void, SetModuleAttribs, (RedisModuleCtx * ctx, const char *name, int ver, int apiver))       \
    X(int, IsModuleNameBusy, (const char *name))                                                   \
    X(int, CreateCommand,                                                                          \
      (RedisModuleCtx * ctx, const char *name, RedisModuleCmdFunc f, const char *flags,            \
       int firstkey, int lastkey, int keystep))                                                    \
    X(RedisModuleType *, CreateDataType,                                                           \
      (RedisModuleCtx * ctx, const char *name, int encver, RedisModuleTypeMethods *methods))       \
    X(void, SetModuleOptions, (RedisModuleCtx * ctx, int options))                                 \
    X(int, WrongArity, (RedisModuleCtx * ctx))                                                     \
    X(int, ReplyWithLongLong, (RedisModuleCtx * ctx, long long ll))                                \
    X(int, ReplyWithError, (RedisModuleCtx * ctx, const char *err))                                \
    X(int, ReplyWithSimpleString, (RedisModuleCtx * ctx, const char *msg))                         \
    X(int, ReplyWithArray, (RedisModuleCtx * ctx, long len))                                       \
    X(void, ReplySetArrayLength, (RedisModuleCtx * ctx, long len))                                 \
    X(int, ReplyWithMap, (RedisModuleCtx * ctx, long len))                                         \
    X(int, ReplyWithStringBuffer, (RedisModuleCtx * ctx, const char *buf, size_t len))             \
    X(int, ReplyWithNull, (RedisModuleCtx * ctx))                                                  \
    X(int, ReplyWithDouble, (RedisModuleCtx * ctx, double d))                                      \
    X(int, ReplyWithBool, (RedisModuleCtx * ctx, int b))                                           \
    X(const char *, StringPtrLen, (const RedisModuleString *str, size_t *len))                     \
    X(int, StringToLongLong, (const RedisModuleString *str, long long *ll))                        \
    X(RedisModuleString *, CreateString, (RedisModuleCtx * ctx, const char *ptr, size_t len))      \
    X(void, FreeString, (RedisModuleCtx * ctx, RedisModuleString * str))                           \
    X(RedisModuleKey *, OpenKey, (RedisModuleCtx * ctx, RedisModuleString * name, int mode))       \
    X(void, CloseKey, (RedisModuleKey * key))                                                      \
    X(int, KeyType, (RedisModuleKey * key))                                                        \
    X(RedisModuleType *, ModuleTypeGetType, (RedisModuleKey * key))                                \
    X(void *, ModuleTypeGetValue, (RedisModuleKey * key))                                          \
    X(int, ModuleTypeSetValue, (RedisModuleKey * key, RedisModuleType * mt, void *value))          \
    X(void, SaveUnsigned, (RedisModuleIO * io, uint64_t value))                                    \
    X(uint64_t, LoadUnsigned, (RedisModuleIO * io))                                                \
    X(void, SaveDouble, (RedisModuleIO * io, double value))                                        \
    X(double, LoadDouble, (RedisModuleIO * io))                                                    \
    X(void, SaveStringBuffer, (RedisModuleIO * io, const char *str, size_t len))                   \
    X(char *, LoadStringBuffer, (RedisModuleIO * io, size_t * lenptr))                             \
    X(int, IsIOError, (RedisModuleIO * io))                                                        \
    X(const RedisModuleString *, GetKeyNameFromIO, (RedisModuleIO * io))                           \
    X(void, EmitAOF, (RedisModuleIO * io, const char *cmdname, const char *fmt, ...))              \
    X(void, Log, (RedisModuleCtx * ctx, const char *level, const char *fmt, ...))                  \
    X(void, LogIOError, (RedisModuleIO * io, const char *level, const char *fmt, ...))             \
    X(int, Replicate, (RedisModuleCtx * ctx, const char *cmdname, const char *fmt, ...))           \
    X(int, ReplicateVerbatim, (RedisModuleCtx * ctx))                                              \
    X(long long, Milliseconds, (void))                                                             \
    X(RedisModuleServerInfoData *, GetServerInfo, (RedisModuleCtx * ctx, const char *section))     \
    X(void, FreeServerInfo, (RedisModuleCtx * ctx, RedisModuleServerInfoData * data))              \
    X(long long, ServerInfoGetFieldSigned,                                                         \
      (RedisModuleServerInfoData * data, const char *field, int *out_err))                         \
    X(RedisModuleTimerID, CreateTimer,                                                             \
      (RedisModuleCtx * ctx, long long period, RedisModuleTimerProc callback, void *data))         \
    X(int, SubscribeToServerEvent,                                                                 \
      (RedisModuleCtx * ctx, RedisModuleEvent event, RedisModuleEventCallback callback))           \
    X(unsigned long long, ServerInfoGetFieldUnsigned,                                              \
      (RedisModuleServerInfoData * data, const char *field, int *out_err))                         \
    X(int, GetContextFlags, (RedisModuleCtx * ctx))                                                \
    X(int, GetSelectedDb, (RedisModuleCtx * ctx))                                                  \
    X(int, NotifyKeyspaceEvent,                                                                    \
      (RedisModuleCtx * ctx, int type, const char *event, RedisModuleString *key))                 \
    X(int, RegisterInfoFunc, (RedisModuleCtx * ctx, RedisModuleInfoFunc cb))                       \
    X(int, InfoAddSection, (RedisModuleInfoCtx * ctx, const char *name))                           \
    X(int, InfoAddFieldULongLong,                                                                  \
      (RedisModuleInfoCtx * ctx, const char *field, unsigned long long value))                     \
    X(int, InfoAddFieldCString, (RedisModuleInfoCtx * ctx, const char *field, const char *value))  \
    X(int, RegisterNumericConfig,                                                                  \
      (RedisModuleCtx * ctx, const char *name, long long default_val, unsigned int flags,          \
       long long min, long long max, RedisModuleConfigGetNumericFunc getfn,                        \
       RedisModuleConfigSetNumericFunc setfn, RedisModuleConfigApplyFunc applyfn, void *privdata)) \
    X(int, RegisterStringConfig,                                                                   \
      (RedisModuleCtx * ctx, const char *name, const char *default_val, unsigned int flags,        \
       RedisModuleConfigGetStringFunc getfn, RedisModuleConfigSetStringFunc setfn,                 \
       RedisModuleConfigApplyFunc applyfn, void *privdata))                                        \
    X(int, RegisterEnumConfig,                                                                     \
      (RedisModuleCtx * ctx, const char *name, int default_val, unsigned int flags,                \
       const char **enum_values, const int *int_values, int num_enum_vals,                         \
       RedisModuleConfigGetEnumFunc getfn, RedisModuleConfigSetEnumFunc setfn,                     \
       RedisModuleConfigApplyFunc applyfn, void *privdata))                                        \
    X(int, LoadConfigs, (RedisModuleCtx * ctx))                                                    \
    X(RedisModuleCommand *, GetCommand, (RedisModuleCtx * ctx, const char *name))                  \
    X(void *, DefragAlloc, (RedisModuleDefragCtx * ctx, void *ptr))                                \
    X(int, DefragShouldStop, (RedisModuleDefragCtx * ctx))                                         \
    X(int, DefragCursorSet, (RedisModuleDefragCtx * ctx, unsigned long cursor))                    \
    X(int, DefragCursorGet, (RedisModuleDefragCtx * ctx, unsigned long *cursor))                   \
    X(int, SetCommandInfo, (RedisModuleCommand * command, const RedisModuleCommandInfo *info))

/* Functions of newer servers, NULL where the server lacks them: what they
 * add (ACL categories: Redis 7.2 / 7.4, Valkey 8) is left out there. */
#define BKM_RM_OPTIONAL(X)                                                                         \
    X(int, AddACLCategory, (RedisModuleCtx * ctx, const char *name))                               \
    X(int, SetCommandACLCategories, (RedisModuleCommand * command, const char *aclflags))

#define BKM_RM_DECLARE(rt, name, params) extern rt(*RedisModule_##name) params;
BKM_RM_FUNCTIONS(BKM_RM_DECLARE)
BKM_RM_OPTIONAL(BKM_RM_DECLARE)
#undef BKM_RM_DECLARE

/* The reference's RedisModule_Init in its two steps, so that the module's
 * arguments (read through the API) can choose its name: look every
 * function up through the server's GetApi (the first word of ctx), then
 * register the module as `name`, version `ver`. REDISMODULE_ERR when a
 * function is missing (the server is too old: *missing names it), or the
 * name is taken. */
int rm_api_load(RedisModuleCtx *ctx, const char **missing);
int rm_set_name(RedisModuleCtx *ctx, const char *name, int ver);

#endif
