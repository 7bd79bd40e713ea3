/*
 * ref_module.c - the floor bench_module.sh measures bloomkit's module
 * against, beside SET: the simplest Redis module doing what RedisBloom's
 * BF.ADD and BF.EXISTS do for a reserved filter, with none of bloomkit's
 * code but the MurmurHash (src/common/murmur.c) and the API lookup
 * (module/rm_api.c). One bit array a key, sized and probed as FORMATS.md
 * sections 2.3 and 3 say RedisBloom's first link is (error e / 2, bits
 * C * bpe, k = ceil(ln 2 * bpe), positions (a + i b) mod bits, a lookup
 * before an add), the command replicated verbatim and notified as
 * RedisBloom's are; and its cuckoo filter's first sub-filter (FORMATS.md
 * section 4: MurmurHash64A, 8-bit fingerprints, two slots a bucket,
 * nextpow2(capacity / 2) buckets, first fit in i1 then i2). Not a product:
 * no persistence, no growth, no evictions (an add that finds no free slot
 * answers -1: less work than any real filter, so a lower floor), no checks
 * past what a benchmark needs. Commands:
 *   REF.RESERVE key error capacity   -> OK
 *   REF.ADD key item                 -> 1 new, 0 present
 *   REF.EXISTS key item              -> 1 or 0
 *   REF.NOOP key item                -> 0: the key opened, nothing hashed
 *   REF.CFRESERVE key capacity       -> OK
 *   REF.CFADD / CFEXISTS / CFCOUNT / CFDEL key item
 *                                    -> 1 (-1 no room), 1 or 0, count, 1 or 0
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/murmur.h"
#include "rm_api.h"

#define SEED 0x9747b28cu

/* A Bloom filter (k > 0) or a cuckoo filter (k == 0: bits is its
 * buckets, a power of two, of two one-byte slots). */
typedef struct ref_filter {
    uint64_t bits;
    unsigned k;
    uint8_t *data;
} ref_filter;

static RedisModuleType *ref_type;

static void ref_free(void *value)
{
    ref_filter *f = value;
    free(f->data);
    free(f);
}

static void ref_save(RedisModuleIO *io, void *value)
{
    (void)io;
    (void)value; /* the benchmark's server saves nothing */
}

static void *ref_load(RedisModuleIO *io, int encver)
{
    (void)io;
    (void)encver;
    return NULL;
}

static int has(const ref_filter *f, uint64_t a, uint64_t b)
{
    for (unsigned i = 0; i < f->k; i++) {
        const uint64_t x = (a + i * b) % f->bits;
        if (!(f->data[x >> 3] & (1u << (x & 7))))
            return 0;
    }
    return 1;
}

static int add(ref_filter *f, uint64_t a, uint64_t b)
{
    if (has(f, a, b))
        return 0;
    for (unsigned i = 0; i < f->k; i++) {
        const uint64_t x = (a + i * b) % f->bits;
        f->data[x >> 3] |= (uint8_t)(1u << (x & 7));
    }
    return 1;
}

/* The key's filter, or NULL after an error reply. */
static ref_filter *open_filter(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                               RedisModuleKey **key, int cuckoo)
{
    *key = RedisModule_OpenKey(ctx, name, mode);
    if (RedisModule_KeyType(*key) != REDISMODULE_KEYTYPE_MODULE ||
        RedisModule_ModuleTypeGetType(*key) != ref_type ||
        (((ref_filter *)RedisModule_ModuleTypeGetValue(*key))->k == 0) != cuckoo) {
        RedisModule_CloseKey(*key);
        RedisModule_ReplyWithError(ctx, "ERR not found");
        return NULL;
    }
    return RedisModule_ModuleTypeGetValue(*key);
}

static void pair(RedisModuleString *item, uint64_t *a, uint64_t *b)
{
    size_t n;
    const char *p = RedisModule_StringPtrLen(item, &n);
    *a = bk_murmur64a(p, n, SEED);
    *b = bk_murmur64a(p, n, *a);
}

/* f under the empty key `name`: OK, or an error and f freed. */
static int set_new(RedisModuleCtx *ctx, RedisModuleString *name, ref_filter *f)
{
    RedisModuleKey *key = RedisModule_OpenKey(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE);
    if (RedisModule_KeyType(key) != REDISMODULE_KEYTYPE_EMPTY) {
        RedisModule_CloseKey(key);
        ref_free(f);
        return RedisModule_ReplyWithError(ctx, "ERR item exists");
    }
    RedisModule_ModuleTypeSetValue(key, ref_type, f);
    RedisModule_CloseKey(key);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmd_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    size_t n;
    const char *e = RedisModule_StringPtrLen(argv[2], &n);
    const double error = strtod(e, NULL) / 2; /* RedisBloom's first link */
    long long capacity;
    if (!(error > 0 && error < 0.5) || RedisModule_StringToLongLong(argv[3], &capacity) != 0 ||
        capacity < 1 || capacity > (1LL << 40))
        return RedisModule_ReplyWithError(ctx, "ERR bad error rate or capacity");
    const double bpe = -log(error) / (log(2) * log(2));
    ref_filter *f = calloc(1, sizeof *f);
    if (!f)
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    f->bits = ((uint64_t)((double)capacity * bpe) + 63) / 64 * 64;
    f->k = (unsigned)ceil(log(2) * bpe);
    f->data = calloc(f->bits / 8, 1);
    if (!f->data) {
        free(f);
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    }
    memset(f->data, 0, f->bits / 8); /* touched now, as RedisBloom's calloc'd pages are by use */
    return set_new(ctx, argv[1], f);
}

static int cmd_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    ref_filter *f = open_filter(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, 0);
    if (!f)
        return REDISMODULE_OK;
    uint64_t a, b;
    pair(argv[2], &a, &b);
    const int added = add(f, a, b);
    RedisModule_ReplyWithLongLong(ctx, added);
    if (added) {
        RedisModule_ReplicateVerbatim(ctx);
        RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_GENERIC, "bf.add", argv[1]);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* REF.EXISTS (probe 1), and REF.NOOP (0): the module API's own cost of a
 * one-key read, the key opened and its value fetched, nothing hashed or
 * probed, 0 replied. */
static int bloom_read(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int probe)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const ref_filter *f = open_filter(ctx, argv[1], REDISMODULE_READ, &key, 0);
    if (!f)
        return REDISMODULE_OK;
    uint64_t a = 0, b = 0;
    if (probe)
        pair(argv[2], &a, &b);
    RedisModule_ReplyWithLongLong(ctx, probe && has(f, a, b));
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int cmd_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return bloom_read(ctx, argv, argc, 1);
}

static int cmd_noop(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return bloom_read(ctx, argv, argc, 0);
}

/* ------------------------------------------------------------- cuckoo -- */

static int cmd_cfreserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    long long capacity;
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    if (RedisModule_StringToLongLong(argv[2], &capacity) != 0 || capacity < 4 ||
        capacity > (1LL << 40))
        return RedisModule_ReplyWithError(ctx, "ERR bad capacity");
    ref_filter *f = calloc(1, sizeof *f);
    if (!f)
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    f->bits = 1;
    while (f->bits < (uint64_t)capacity / 2)
        f->bits <<= 1;
    f->data = calloc(f->bits, 2);
    if (!f->data) {
        free(f);
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    }
    memset(f->data, 0, f->bits * 2);
    return set_new(ctx, argv[1], f);
}

/* What a cuckoo command does with an item's two buckets. */
enum { CF_ADD, CF_EXISTS, CF_COUNT, CF_DEL };

static long long cuckoo_op(ref_filter *f, RedisModuleString *item, int op)
{
    size_t n;
    const char *p = RedisModule_StringPtrLen(item, &n);
    const uint64_t h = bk_murmur64a(p, n, 0);
    const uint8_t fp = (uint8_t)(h % 255 + 1);
    uint8_t *b[2] = {f->data + (h & (f->bits - 1)) * 2,
                     f->data + ((h ^ (fp * UINT64_C(0x5bd1e995))) & (f->bits - 1)) * 2};
    long long count = 0;
    for (int i = 0; i < 2; i++)
        for (int v = 0; v < 2; v++) {
            if (op == CF_ADD && b[i][v] == 0) {
                b[i][v] = fp;
                return 1;
            }
            if (op == CF_DEL && b[i][v] == fp) {
                b[i][v] = 0;
                return 1;
            }
            count += b[i][v] == fp;
            if (op == CF_EXISTS && count)
                return 1;
        }
    return op == CF_ADD ? -1 : count;
}

static int cuckoo_cmd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int op)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const int write = op == CF_ADD || op == CF_DEL;
    ref_filter *f = open_filter(
        ctx, argv[1], write ? REDISMODULE_READ | REDISMODULE_WRITE : REDISMODULE_READ, &key, 1);
    if (!f)
        return REDISMODULE_OK;
    const long long r = cuckoo_op(f, argv[2], op);
    RedisModule_ReplyWithLongLong(ctx, r);
    if (write && r == 1) {
        RedisModule_ReplicateVerbatim(ctx);
        RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_GENERIC,
                                        op == CF_ADD ? "cf.add" : "cf.del", argv[1]);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int cmd_cfadd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return cuckoo_cmd(ctx, argv, argc, CF_ADD);
}

static int cmd_cfexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return cuckoo_cmd(ctx, argv, argc, CF_EXISTS);
}

static int cmd_cfcount(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return cuckoo_cmd(ctx, argv, argc, CF_COUNT);
}

static int cmd_cfdel(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return cuckoo_cmd(ctx, argv, argc, CF_DEL);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
__attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx *ctx,
                                                              RedisModuleString **argv, int argc)
{
    (void)argv;
    (void)argc;
    const char *missing;
    if (rm_api_load(ctx, &missing) != REDISMODULE_OK ||
        rm_set_name(ctx, "bkref", 1) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    RedisModuleTypeMethods tm;
    memset(&tm, 0, sizeof tm);
    tm.version = 1;
    tm.rdb_load = ref_load;
    tm.rdb_save = ref_save;
    tm.free = ref_free;
    ref_type = RedisModule_CreateDataType(ctx, "bkref-flt", 0, &tm);
    if (!ref_type ||
        RedisModule_CreateCommand(ctx, "ref.reserve", cmd_reserve, "write deny-oom", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "ref.add", cmd_add, "write deny-oom fast", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "ref.exists", cmd_exists, "readonly fast", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "ref.noop", cmd_noop, "readonly fast", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "ref.cfreserve", cmd_cfreserve, "write deny-oom", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "ref.cfadd", cmd_cfadd, "write deny-oom fast", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "ref.cfexists", cmd_cfexists, "readonly fast", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "ref.cfcount", cmd_cfcount, "readonly fast", 1, 1, 1) ||
        RedisModule_CreateCommand(ctx, "ref.cfdel", cmd_cfdel, "write fast", 1, 1, 1))
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
