/*
 * cf.c - CF.*: RedisBloom's cuckoo filter commands, with its arguments,
 * defaults, limits, replies (RESP2 and RESP3) and error texts (FORMATS.md
 * 6.2), on keys of RedisBloom's type MBbloomCF and on keyed CF keys (both
 * filters of variant rbcuckoo, reached through bloomkit.h). Writes are
 * replicated as they came (the filter is deterministic), CF.LOADCHUNK's
 * chunks and CF.COMPACT included, which RedisBloom leaves out. An insert
 * that would add a sub-filter checks maxmemory's headroom for it first.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "dump.h"
#include "module.h"
#include "rb.h"

/* What CF.* makes a missing key with comes from the settings cf-initial-size,
 * cf-bucket-size, cf-max-iterations and cf-expansion-factor. MAXITERATIONS
 * at RedisBloom's 20 (given or by default): RedisBloom's type walks 20, a
 * keyed filter the library's default (config.c), which its promise to hold
 * its capacity needs; AUTO_ITERS stands for that. */
#define AUTO_ITERS 0
#define RB_ITERS   20

static unsigned default_iters(void)
{
    return bkm_conf.cf_max_iterations == RB_ITERS ? AUTO_ITERS
                                                  : (unsigned)bkm_conf.cf_max_iterations;
}

static bkm_arg arg_of(RedisModuleString *s)
{
    bkm_arg a;
    a.p = RedisModule_StringPtrLen(s, &a.n);
    return a;
}

/* The value of a keyed CF key (a bloomkit filter of variant rbcuckoo) open
 * for a command, or NULL for RedisBloom's type: every write to one is
 * followed by bkm_value_changed (its dump snapshot is stale). */
static bkm_value *keyed_of(RedisModuleKey *key)
{
    return bkm_kind_of(key) == BKM_BLOOMKIT ? RedisModule_ModuleTypeGetValue(key) : NULL;
}

/* The cuckoo filter of an open key: RedisBloom's type (MBbloomCF), or a
 * keyed one (bloomkit's type holding variant rbcuckoo); NULL for any other. */
static bk_filter *cuckoo_in(RedisModuleKey *key)
{
    const bkm_kind k = bkm_kind_of(key);
    if (k == BKM_RBCUCKOO)
        return RedisModule_ModuleTypeGetValue(key);
    const bkm_value *v = keyed_of(key);
    return v && v->cuckoo ? v->f : NULL;
}

/* Open key `name`: *c the filter or NULL (empty); -1 after replying
 * `wrong` (WRONGTYPE unless given) for a key of another type. */
static int open_cf(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **key,
                   bk_filter **c, const char *wrong)
{
    *key = RedisModule_OpenKey(ctx, name, mode);
    *c = cuckoo_in(*key);
    if (!*c && bkm_kind_of(*key) != BKM_EMPTY) {
        RedisModule_CloseKey(*key);
        *key = NULL;
        RedisModule_ReplyWithError(ctx, wrong ? wrong : REDISMODULE_ERRORMSG_WRONGTYPE);
        return -1;
    }
    return 0;
}

/* The configuration of a keyed filter for CF.RESERVE's parameters, or -1
 * when a keyed filter does not take them (the key is then RedisBloom's). */
static int keyed_config(bk_config *cfg, long long capacity, unsigned bucket, unsigned iters,
                        unsigned expansion)
{
    char text[200], its[40] = "";
    if (iters != AUTO_ITERS)
        snprintf(its, sizeof its, " iterations=%u", iters);
    snprintf(text, sizeof text, "variant=rbcuckoo capacity=%lld bucket_size=%u%s expansion=%u",
             capacity, bucket, its, expansion);
    return bk_config_parse(cfg, text, NULL, 0) == BK_OK ? 0 : -1;
}

/* A keyed filter (NEW_KEYS bloomkit, the default) of cfg under the empty
 * key: RedisBloom's cuckoo filter as variant rbcuckoo with a random SipHash
 * key, its creation replicated with that key. NULL after replying. */
static bk_filter *create_keyed(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name,
                               const bk_config *cfg)
{
    char err[300] = "";
    bkm_value *v;
    /* refused over MAX_BYTES or maxmemory's headroom before any memory */
    const int rc = bkm_create(ctx, key, cfg, &v, err, sizeof err);
    if (rc == BK_EFULL || (rc == BK_ERANGE && strncmp(err, "ERR ", 4) == 0)) {
        /* over MAX_BYTES or maxmemory's headroom: say how much, and how much there is */
        char msg[400];
        snprintf(msg, sizeof msg, "ERR Insufficient memory to create filter: %s", err + 4);
        RedisModule_ReplyWithError(ctx, msg);
        return NULL;
    }
    if (rc != BK_OK) {
        RedisModule_ReplyWithError(ctx, rc == BK_ECONFIG || rc == BK_EINVAL || rc == BK_ERANGE
                                            ? "ERR Could not create filter"
                                            : "ERR Insufficient memory to create filter");
        return NULL;
    }
    bkm_replicate_create(ctx, name, v->f);
    return v->f;
}

/* A new filter under the empty key: keyed, or RedisBloom's own when the
 * command makes RedisBloom's type (bkm_makes_redisbloom) or a keyed filter
 * does not take its parameters. NULL after replying. */
static bk_filter *create(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name,
                         long long capacity, unsigned bucket, unsigned iters, unsigned expansion)
{
    bk_config cfg;
    if (!bkm_makes_redisbloom(ctx) && keyed_config(&cfg, capacity, bucket, iters, expansion) == 0)
        return create_keyed(ctx, key, name, &cfg);
    bk_filter *c;
    if (iters == AUTO_ITERS)
        iters = RB_ITERS;
    const int rc =
        bk_filter_rbcuckoo_new((uint64_t)capacity, bucket, iters, expansion, bkm_rb_limit(ctx), &c);
    if (rc == BK_EFULL) {
        bkm_rb_refused(ctx, "Insufficient memory to create filter");
        return NULL;
    }
    if (rc != BK_OK) {
        RedisModule_ReplyWithError(ctx, rc == BK_EINVAL
                                            ? "ERR Could not create filter"
                                            : "ERR Insufficient memory to create filter");
        return NULL;
    }
    bkm_rb_set_value(key, BKM_RBCUCKOO, c);
    /* replicas and the AOF make it with this server's numbers, whatever
     * their own cf-* settings say */
    char cap[24], b[12], it[12], exp[12];
    snprintf(cap, sizeof cap, "%lld", capacity);
    snprintf(b, sizeof b, "%u", bucket);
    snprintf(it, sizeof it, "%u", iters);
    snprintf(exp, sizeof exp, "%u", expansion);
    RedisModule_Replicate(ctx, "CF.RESERVE", "sccccccc", name, cap, "BUCKETSIZE", b,
                          "MAXITERATIONS", it, "EXPANSION", exp);
    return c;
}

/* The integer option `name` of CF.RESERVE, found anywhere in argv: 0 (absent:
 * *v untouched, or read and in range), 1 after replying, -1 arity. */
static int reserve_option(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const char *name,
                          long long lo, long long hi, long long *v)
{
    for (int i = 1; i < argc; i++) {
        if (!bkm_arg_is(arg_of(argv[i]), name))
            continue;
        if (i + 1 >= argc)
            return -1;
        char msg[160];
        if (RedisModule_StringToLongLong(argv[i + 1], v) != REDISMODULE_OK) {
            snprintf(msg, sizeof msg, "Couldn't parse %s", name);
            RedisModule_ReplyWithError(ctx, msg);
            return 1;
        }
        if (*v < lo || *v > hi) {
            snprintf(msg, sizeof msg,
                     "%s: value must be an integer between %lld and %lld, inclusive.", name, lo,
                     hi);
            RedisModule_ReplyWithError(ctx, msg);
            return 1;
        }
        return 0;
    }
    return 0;
}

int bkm_cmd_cf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3 || argc % 2 == 0)
        return RedisModule_WrongArity(ctx);
    long long capacity, iters = default_iters(), bucket = (long long)bkm_conf.cf_bucket_size,
                        expansion = (long long)bkm_conf.cf_expansion;
    if (RedisModule_StringToLongLong(argv[2], &capacity) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "Bad capacity");
    int rc;
    if ((rc = reserve_option(ctx, argv, argc, "MAXITERATIONS", 1, 65535, &iters)) != 0 ||
        (rc = reserve_option(ctx, argv, argc, "BUCKETSIZE", 1, 255, &bucket)) != 0 ||
        (rc = reserve_option(ctx, argv, argc, "EXPANSION", 0, 32768, &expansion)) != 0)
        return rc < 0 ? RedisModule_WrongArity(ctx) : REDISMODULE_OK;
    if (capacity < 2 * bucket)
        return RedisModule_ReplyWithError(ctx, "Capacity must be at least (BucketSize * 2)");
    RedisModuleKey *key;
    bk_filter *c;
    if (open_cf(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &c, NULL) != 0)
        return REDISMODULE_OK;
    if (c) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, "ERR item exists");
    }
    if (create(ctx, key, argv[1], capacity, (unsigned)bucket, (unsigned)iters,
               (unsigned)expansion)) {
        RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, "cf.reserve", argv[1]);
        RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* Insert one item (nx: only when absent): 1 inserted, 0 (nx only)
 * present, an error of bk_add, or BKM_RB_GROW when the sub-filter it needs
 * has no room under maxmemory (err says so). */
static int add_one(RedisModuleCtx *ctx, bk_filter *c, RedisModuleString *item, int nx, char *err,
                   size_t errlen)
{
    const int rc = bkm_rb_add(ctx, c, item, nx, err, errlen);
    return !nx && rc == 0 ? 1 : rc; /* CF.ADD adds a copy even when one was there */
}

/* The guard before any insert: 0, or 1 after replying. */
static int expansions_reached(RedisModuleCtx *ctx, const bk_filter *c)
{
    bk_rbcuckoo_info in;
    bk_rbcuckoo_info_of(c, &in);
    if (in.filters < bkm_conf.cf_max_expansions)
        return 0;
    RedisModule_ReplyWithError(ctx, "Maximum expansions reached");
    return 1;
}

static void finish_write(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name,
                         int changed, const char *event)
{
    bkm_value *v = changed ? keyed_of(key) : NULL;
    if (v)
        bkm_value_changed(v);
    if (changed) {
        RedisModule_ReplicateVerbatim(ctx);
        RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, event, name);
    }
    RedisModule_CloseKey(key);
}

/* CF.ADD (nx 0) and CF.ADDNX (nx 1). */
static int cf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int nx)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bk_filter *c;
    if (open_cf(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &c, NULL) != 0)
        return REDISMODULE_OK;
    int changed = 0;
    if (!c) {
        if (!(c = create(ctx, key, argv[1], (long long)bkm_conf.cf_capacity,
                         (unsigned)bkm_conf.cf_bucket_size, default_iters(),
                         (unsigned)bkm_conf.cf_expansion))) {
            RedisModule_CloseKey(key);
            return REDISMODULE_OK;
        }
        changed = 1;
    } else if (expansions_reached(ctx, c)) {
        RedisModule_CloseKey(key);
        return REDISMODULE_OK;
    }
    char err[300];
    const long long before = bkm_held_before(key, 0);
    const int rc = add_one(ctx, c, argv[2], nx, err, sizeof err);
    bkm_held_after(key, before, 0);
    changed |= rc == 1;
    if (rc == 0 || rc == 1)
        bkm_reply_bool(ctx, rc);
    else
        RedisModule_ReplyWithError(ctx, rc == BK_EFULL      ? "Filter is full"
                                        : rc == BKM_RB_GROW ? err
                                                            : "Memory allocation failure");
    finish_write(ctx, key, argv[1], changed, nx ? "cf.addnx" : "cf.add");
    return REDISMODULE_OK;
}

int bkm_cmd_cf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return cf_add(ctx, argv, argc, 0);
}

int bkm_cmd_cf_addnx(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return cf_add(ctx, argv, argc, 1);
}

/* One result of CF.INSERT (bools in RESP3, but an allocation failure) or
 * CF.INSERTNX (integers). */
static void reply_insert(RedisModuleCtx *ctx, int rc, int nx)
{
    const long long v = rc == 1 ? 1 : rc == 0 ? 0 : -1;
    if (!nx && bkm_resp3(ctx) && (rc == 1 || rc == BK_EFULL))
        RedisModule_ReplyWithBool(ctx, rc == 1);
    else
        RedisModule_ReplyWithLongLong(ctx, v);
}

/* long: RedisBloom's option letters, then the key (made or guarded), then one result an item. */
static int cf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int nx)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    long long capacity = (long long)bkm_conf.cf_capacity;
    int nocreate = 0, first = -1;
    for (int i = 2; i < argc && first < 0; i++) {
        const bkm_arg a = arg_of(argv[i]);
        const unsigned letter = a.n ? ((unsigned char)a.p[0] | 0x20u) : 0;
        if (letter == 'c') {
            if (++i >= argc)
                return RedisModule_WrongArity(ctx);
            if (RedisModule_StringToLongLong(argv[i], &capacity) != REDISMODULE_OK)
                return RedisModule_ReplyWithError(ctx, "Bad capacity");
            if (capacity < 2LL * (long long)bkm_conf.cf_bucket_size)
                return RedisModule_ReplyWithError(ctx,
                                                  "Capacity must be at least (BucketSize * 2)");
        } else if (letter == 'n') {
            nocreate = 1;
        } else if (letter == 'i') {
            first = i + 1;
        } else {
            return RedisModule_ReplyWithError(ctx, "Unknown argument received");
        }
    }
    if (first < 0 || first >= argc)
        return RedisModule_WrongArity(ctx);
    /* the items refused for memory here, left out of what replicas get */
    unsigned char *skipped = RedisModule_TryAlloc((size_t)(argc - first));
    if (!skipped)
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    memset(skipped, 0, (size_t)(argc - first));
    RedisModuleKey *key;
    bk_filter *c;
    if (open_cf(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &c, NULL) != 0) {
        RedisModule_Free(skipped);
        return REDISMODULE_OK;
    }
    int changed = 0;
    if (!c) {
        if (nocreate) {
            RedisModule_Free(skipped);
            RedisModule_CloseKey(key);
            return RedisModule_ReplyWithError(ctx, "ERR not found");
        }
        if (!(c = create(ctx, key, argv[1], capacity, (unsigned)bkm_conf.cf_bucket_size,
                         default_iters(), (unsigned)bkm_conf.cf_expansion))) {
            RedisModule_Free(skipped);
            RedisModule_CloseKey(key);
            return REDISMODULE_OK;
        }
        changed = 1;
    } else if (expansions_reached(ctx, c)) {
        RedisModule_Free(skipped);
        RedisModule_CloseKey(key);
        return REDISMODULE_OK;
    }
    char err[300];
    const long long before = bkm_held_before(key, 0);
    RedisModule_ReplyWithArray(ctx, argc - first);
    for (int i = first; i < argc; i++) {
        const int rc = add_one(ctx, c, argv[i], nx, err, sizeof err);
        changed |= rc == 1;
        if (rc == BKM_RB_GROW)
            skipped[i - first] = 1;
        reply_insert(ctx, rc, nx);
    }
    bkm_held_after(key, before, 0);
    if (changed) {
        bkm_value *v = keyed_of(key);
        if (v)
            bkm_value_changed(v);
        bkm_rb_replicate(ctx, argv, argc, first, skipped);
        RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE,
                                        nx ? "cf.insertnx" : "cf.insert", argv[1]);
    }
    RedisModule_Free(skipped);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

int bkm_cmd_cf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return cf_insert(ctx, argv, argc, 0);
}

int bkm_cmd_cf_insertnx(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return cf_insert(ctx, argv, argc, 1);
}

/* The filter under argv[1] for a lookup: NULL for a missing key or one of
 * another type (RedisBloom answers 0 for those). */
static const bk_filter *lookup(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey **key)
{
    *key = RedisModule_OpenKey(ctx, name, REDISMODULE_READ);
    return cuckoo_in(*key);
}

static int cf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int array)
{
    if (array ? argc < 3 : argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkm_reply_lookups(ctx, lookup(ctx, argv[1], &key), argv, argc, array);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

int bkm_cmd_cf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return cf_exists(ctx, argv, argc, 0);
}

int bkm_cmd_cf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return cf_exists(ctx, argv, argc, 1);
}

int bkm_cmd_cf_count(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const bk_filter *c = lookup(ctx, argv[1], &key);
    const bkm_arg a = arg_of(argv[2]);
    uint64_t n = 0;
    if (c && bk_count(c, a.p, a.n, &n) != BK_OK)
        n = 0;
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithLongLong(ctx, (long long)n);
}

/* The filter under name, its key open with mode in *key: NULL after
 * replying `wrong` (NULL: WRONGTYPE) for a key of another type, `missing`
 * for none. */
static bk_filter *existing(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                           RedisModuleKey **key, const char *wrong, const char *missing)
{
    bk_filter *c;
    if (open_cf(ctx, name, mode, key, &c, wrong) != 0)
        return NULL;
    if (!c) {
        RedisModule_CloseKey(*key);
        RedisModule_ReplyWithError(ctx, missing);
    }
    return c;
}

int bkm_cmd_cf_del(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bk_filter *c = existing(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, "Not found",
                            "Not found");
    if (!c)
        return REDISMODULE_OK;
    const bkm_arg a = arg_of(argv[2]);
    const int rc = bk_remove(c, a.p, a.n) == BK_OK;
    bkm_reply_bool(ctx, rc);
    finish_write(ctx, key, argv[1], rc == 1, "cf.del");
    return REDISMODULE_OK;
}

int bkm_cmd_cf_compact(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    const char *missing = "Cuckoo filter was not found";
    bk_filter *c =
        existing(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, missing, missing);
    if (!c)
        return REDISMODULE_OK;
    const long long before = bkm_held_before(key, 1);
    bk_compact(c);
    bkm_held_after(key, before, 1);
    RedisModule_ReplyWithSimpleString(ctx, "OK");
    finish_write(ctx, key, argv[1], 1, "cf.compact");
    return REDISMODULE_OK;
}

/* CF.INFO's and CF.DEBUG's start: the figures of the filter argv[1] names,
 * its key closed. 0, or -1 after replying (arity, WRONGTYPE, not found). */
static int figures_of(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bk_rbcuckoo_info *in)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx), -1;
    RedisModuleKey *key;
    const bk_filter *c = existing(ctx, argv[1], REDISMODULE_READ, &key, NULL, "ERR not found");
    if (!c)
        return -1;
    bk_rbcuckoo_info_of(c, in);
    RedisModule_CloseKey(key);
    return 0;
}

int bkm_cmd_cf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    bk_rbcuckoo_info in;
    if (figures_of(ctx, argv, argc, &in) != 0)
        return REDISMODULE_OK;
    static const char *const labels[] = {"Size",
                                         "Number of buckets",
                                         "Number of filters",
                                         "Number of items inserted",
                                         "Number of items deleted",
                                         "Bucket size",
                                         "Expansion rate",
                                         "Max iterations"};
    const long long values[] = {(long long)(40 + 16 * (uint64_t)in.filters + in.bytes),
                                (long long)in.buckets,
                                in.filters,
                                (long long)in.items,
                                (long long)in.deletes,
                                in.bucket_size,
                                in.expansion,
                                in.max_iterations};
    RedisModule_ReplyWithMap(ctx, 8);
    for (int i = 0; i < 8; i++) {
        RedisModule_ReplyWithSimpleString(ctx, labels[i]);
        RedisModule_ReplyWithLongLong(ctx, values[i]);
    }
    return REDISMODULE_OK;
}

int bkm_cmd_cf_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    bk_rbcuckoo_info in;
    if (figures_of(ctx, argv, argc, &in) != 0)
        return REDISMODULE_OK;
    char line[300];
    const int n =
        snprintf(line, sizeof line,
                 "bktsize:%u buckets:%llu items:%llu deletes:%llu filters:%u "
                 "max_iterations:%u expansion:%u",
                 in.bucket_size, (unsigned long long)in.buckets, (unsigned long long)in.items,
                 (unsigned long long)in.deletes, in.filters, in.max_iterations, in.expansion);
    return RedisModule_ReplyWithStringBuffer(ctx, line, (size_t)n); /* bulk, as RedisBloom's */
}

int bkm_cmd_cf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    long long p;
    if (RedisModule_StringToLongLong(argv[2], &p) != REDISMODULE_OK || p < 0)
        return RedisModule_ReplyWithError(ctx, "Invalid position");
    RedisModuleKey *key;
    const bk_filter *c = existing(ctx, argv[1], REDISMODULE_READ, &key, NULL, "ERR not found");
    if (!c)
        return REDISMODULE_OK;
    bk_rbcuckoo_info in;
    bk_rbcuckoo_info_of(c, &in);
    if (in.items && keyed_of(key)) { /* a keyed filter copies as bloomkit's image, key and all */
        RedisModule_CloseKey(key);
        return bkm_cmd_bf_scandump(ctx, argv, argc);
    }
    RedisModule_ReplyWithArray(ctx, 2);
    const uint8_t *data = NULL;
    size_t len = 0;
    long long next = 0;
    char head[64];
    if (in.items == 0) {
        /* RedisBloom's: an empty filter has no dump */
    } else if (p == 0) {
        bk_chunked_header(c, head, sizeof head, &len);
        data = (const uint8_t *)head;
        next = 1;
    } else {
        bk_chunked_next(c, p, &data, &len, &next);
    }
    RedisModule_ReplyWithLongLong(ctx, next);
    if (len)
        RedisModule_ReplyWithStringBuffer(ctx, (const char *)data, len);
    else
        RedisModule_ReplyWithNull(ctx);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

int bkm_cmd_cf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    long long p;
    if (RedisModule_StringToLongLong(argv[2], &p) != REDISMODULE_OK || p == 0)
        return RedisModule_ReplyWithError(ctx, "Invalid position");
    RedisModuleKey *key;
    bk_filter *c;
    if (open_cf(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &key, &c, NULL) != 0)
        return REDISMODULE_OK;
    const bkm_arg data = arg_of(argv[3]);
    if (keyed_of(key) || (!c && p != 1 &&
                          ((data.n >= 4 && memcmp(data.p,
                                                  "\x89"
                                                  "BKF",
                                                  4) == 0) ||
                           bkm_load_pending(ctx, argv[1])))) {
        /* bloomkit's image (CF.SCANDUMP of a keyed filter): its first chunk
         * starts with the file magic and ends past 1 (RedisBloom's header
         * is chunk 1), the others continue a pending load */
        RedisModule_CloseKey(key);
        return bkm_cmd_bf_loadchunk(ctx, argv, argc);
    }
    const char *err = NULL;
    if (p == 1 && c) {
        err = "ERR item exists";
    } else if (p == 1 && data.n != 38) {
        err = "Invalid header";
    } else if (p == 1) {
        const int rc =
            bk_chunked_new(BK_VARIANT_RBCUCKOO, data.p, data.n, 0, bkm_rb_limit(ctx), &c);
        if (rc == BK_EFULL) {
            RedisModule_CloseKey(key);
            return bkm_rb_refused(ctx, "Couldn't create filter!");
        }
        if (rc != BK_OK)
            err = "Couldn't create filter!";
        else
            bkm_rb_set_value(key, BKM_RBCUCKOO, c);
    } else if (!c) {
        err = "ERR not found";
    } else if (bk_chunked_load(c, p, data.p, data.n) != BK_OK) {
        err = "Couldn't load chunk!";
    }
    if (err) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, err);
    }
    RedisModule_ReplyWithSimpleString(ctx, "OK");
    finish_write(ctx, key, argv[1], 1, "cf.loadchunk");
    return REDISMODULE_OK;
}
