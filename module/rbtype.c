/*
 * rbtype.c - RedisBloom's data types in the module: MBbloom-- (its
 * scalable chain) and MBbloomCF (its cuckoo filter), registered under
 * RedisBloom's names so that a dataset RedisBloom wrote loads (Redis finds
 * a module value only by its type name). rdb_load reads every encoding
 * RedisBloom 2.6 reads, as strictly (a stricter loader would turn a
 * dataset that starts into one that does not), but refuses cleanly what
 * would crash RedisBloom, and a cuckoo value its own CF.LOADCHUNK header
 * refuses (which no command makes: the AOF rewrite could not carry it, so
 * RESTORE says so instead of the next restart losing it); rdb_save writes RedisBloom's current
 * encoding (4), so the server can go back to RedisBloom; the AOF rewrite emits the dump commands
 * RedisBloom emits (FORMATS.md 1.3 - 1.6).
 */
#include <stdio.h>
#include <string.h>

#include "module.h"
#include "rb.h"

RedisModuleType *bkm_rbchain_type, *bkm_rbcuckoo_type;

bkm_kind bkm_kind_of(RedisModuleKey *key)
{
    const int type = RedisModule_KeyType(key);
    if (type == REDISMODULE_KEYTYPE_EMPTY)
        return BKM_EMPTY;
    if (type != REDISMODULE_KEYTYPE_MODULE)
        return BKM_OTHER;
    const RedisModuleType *t = RedisModule_ModuleTypeGetType(key);
    return t == bkm_type            ? BKM_BLOOMKIT
           : t == bkm_rbchain_type  ? BKM_RBCHAIN
           : t == bkm_rbcuckoo_type ? BKM_RBCUCKOO
                                    : BKM_OTHER;
}

/* A value the server now holds (loaded, copied), counted in INFO. */
static void *counted(bkm_kind kind, bk_filter *f)
{
    if (f)
        bkm_held_add(kind, 1, (long long)bkm_rb_usage(kind, f));
    return f;
}

bkm_kind bkm_bf_kind_of(RedisModuleKey *key)
{
    const bkm_kind k = bkm_kind_of(key);
    if (k != BKM_BLOOMKIT)
        return k;
    const bkm_value *v = RedisModule_ModuleTypeGetValue(key);
    return v->cuckoo ? BKM_RBCUCKOO : k;
}

bkm_kind bkm_kind_named(RedisModuleCtx *ctx, RedisModuleString *name)
{
    RedisModuleKey *key = RedisModule_OpenKey(ctx, name, REDISMODULE_READ);
    const bkm_kind k = bkm_kind_of(key);
    RedisModule_CloseKey(key);
    return k;
}

int bkm_resp3(RedisModuleCtx *ctx)
{
    return (RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_RESP3) != 0;
}

int bkm_reply_bool(RedisModuleCtx *ctx, int v)
{
    /* the server writes a boolean as RESP3 has it, and as 1/0 to a RESP2
     * client: no question about the protocol per reply */
    return RedisModule_ReplyWithBool(ctx, v != 0);
}

int bkm_reply_lookups(RedisModuleCtx *ctx, const bk_filter *f, RedisModuleString **argv, int argc,
                      int array)
{
    if (array)
        RedisModule_ReplyWithArray(ctx, argc - 2);
    for (int i = 2; i < argc; i++) {
        size_t n;
        const char *p = RedisModule_StringPtrLen(argv[i], &n);
        bkm_reply_bool(ctx, f && bk_contains(f, p, n) == 1);
    }
    return REDISMODULE_OK;
}

/* 1 for a command from the master or the AOF: it makes what the master made. */
static int replaying(RedisModuleCtx *ctx)
{
    return (RedisModule_GetContextFlags(ctx) &
            (REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING)) != 0;
}

int bkm_makes_redisbloom(RedisModuleCtx *ctx)
{
    return bkm_conf.new_keys_redisbloom || replaying(ctx);
}

uint64_t bkm_rb_limit(RedisModuleCtx *ctx)
{
    if (replaying(ctx))
        return 0;
    const uint64_t left = bkm_memory_left(ctx);
    return left < bkm_conf.max_bytes ? (left ? left : 1) : bkm_conf.max_bytes;
}

int bkm_rb_room(void *room, uint64_t total, uint64_t need)
{
    const bkm_room *r = room;
    if (need == 0 || replaying(r->ctx))
        return 0;
    if (total + need > bkm_conf.max_bytes) {
        snprintf(r->err, r->errlen,
                 "ERR growing this filter to %llu bytes would pass the module's MAX_BYTES "
                 "(%llu): raise MAX_BYTES",
                 (unsigned long long)(total + need), (unsigned long long)bkm_conf.max_bytes);
        return BK_EFULL;
    }
    return bkm_headroom(r->ctx, need, r->err, r->errlen) != 0 ? BK_EFULL : 0;
}

int bkm_rb_add(RedisModuleCtx *ctx, bk_filter *f, RedisModuleString *item, int once, char *err,
               size_t errlen)
{
    bkm_room room = {ctx, err, errlen};
    size_t n;
    const char *p = RedisModule_StringPtrLen(item, &n);
    err[0] = '\0';
    bk_set_grow_check(f, bkm_rb_room, &room);
    if (once)
        bk_set_add_once(f, 1);
    int rc = bk_add(f, p, n);
    if (once)
        bk_set_add_once(f, 0);
    bk_set_grow_check(f, NULL, NULL);
    return rc < 0 && err[0] ? BKM_RB_GROW : rc;
}

void bkm_rb_replicate(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int first,
                      const unsigned char *skipped)
{
    int drop = 0;
    for (int i = first; skipped && i < argc; i++)
        drop += skipped[i - first] != 0;
    RedisModuleString **keep =
        drop ? RedisModule_TryAlloc((size_t)argc * sizeof(RedisModuleString *)) : NULL;
    if (!keep) {
        /* nothing skipped; or out of memory, where the command as it came
         * is the best a replica can be given */
        RedisModule_ReplicateVerbatim(ctx);
        return;
    }
    size_t n = 0;
    for (int i = 1; i < argc; i++)
        if (i < first || !skipped[i - first])
            keep[n++] = argv[i];
    RedisModule_Replicate(ctx, RedisModule_StringPtrLen(argv[0], NULL), "v", keep, n);
    RedisModule_Free(keep);
}

int bkm_rb_refused(RedisModuleCtx *ctx, const char *what)
{
    char msg[400];
    snprintf(msg, sizeof msg, "ERR %s: %s (the module's MAX_BYTES, %llu, or what maxmemory leaves)",
             what, bk_last_error(), (unsigned long long)bkm_conf.max_bytes);
    return RedisModule_ReplyWithError(ctx, msg);
}

/* The key's name for a log line. */
static const char *io_key(RedisModuleIO *io, int *len)
{
    const RedisModuleString *name = RedisModule_GetKeyNameFromIO(io);
    size_t n = 0;
    const char *p = name ? RedisModule_StringPtrLen(name, &n) : "?";
    *len = (int)(n > 200 ? 200 : n);
    return p;
}

static void *refuse(RedisModuleIO *io, const char *type, const char *why)
{
    int n;
    const char *name = io_key(io, &n);
    RedisModule_LogIOError(io, "warning", "bloomkit: %s key '%.*s' refused: %s", type, n, name,
                           why);
    return NULL;
}

/* ---- MBbloom-- ---- */

/* Free the link buffers LoadStringBuffer gave. */
static void free_links(bk_rbchain_link *links, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        RedisModule_Free(links[i].data);
    RedisModule_Free(links);
}

/* long: the fields of every encoding in their order, as FORMATS.md 1.4 tabulates them. */
static void *chain_load(RedisModuleIO *io, int encver)
{
    if (encver > BKM_RB_ENCVER)
        return refuse(io, "MBbloom--", "an encoding newer than RedisBloom 2.6's");
    bk_rbchain_info in = {0};
    in.size = RedisModule_LoadUnsigned(io);
    const uint64_t n = RedisModule_LoadUnsigned(io);
    in.options = encver >= 2 ? (uint32_t)RedisModule_LoadUnsigned(io) : 0;
    in.growth = encver >= 4 ? (uint32_t)RedisModule_LoadUnsigned(io) : 2;
    if (RedisModule_IsIOError(io) || n == 0 || n > UINT32_MAX)
        return refuse(io, "MBbloom--", "no links");
    uint32_t got = 0, cap = 0;
    bk_rbchain_link *links = NULL;
    const char *why = NULL;
    while (got < n && !why) {
        if (got == cap) {
            cap = cap ? cap * 2 : 4;
            bk_rbchain_link *more = RedisModule_TryAlloc(cap * sizeof *more);
            if (!more) {
                why = "out of memory";
                break;
            }
            if (got)
                memcpy(more, links, got * sizeof *links);
            RedisModule_Free(links);
            links = more;
        }
        bk_rbchain_link *l = &links[got];
        memset(l, 0, sizeof *l);
        l->entries = RedisModule_LoadUnsigned(io);
        l->error = RedisModule_LoadDouble(io);
        l->hashes = (uint32_t)RedisModule_LoadUnsigned(io);
        l->bpe = RedisModule_LoadDouble(io);
        if (encver == 0) {
            const double bits = (double)l->entries * l->bpe;
            l->bits = bits >= 0 && bits < 18446744073709551616.0 ? (uint64_t)bits : 0;
            l->n2 = 0;
        } else {
            l->bits = RedisModule_LoadUnsigned(io);
            l->n2 = (uint8_t)RedisModule_LoadUnsigned(io);
        }
        size_t len = 0;
        l->data = (uint8_t *)RedisModule_LoadStringBuffer(io, &len);
        l->bytes = len;
        l->size = RedisModule_LoadUnsigned(io);
        got++;
        if (RedisModule_IsIOError(io) || !l->data)
            why = "the value ends early";
        else if (len < l->bits / 8 + (l->bits % 8 != 0))
            why = "a link's bits are longer than its array";
    }
    bk_filter *c = NULL;
    if (!why && bk_filter_rbchain_from(&in, links, got, 0, 0, &c) != BK_OK)
        why = bk_last_error();
    if (why) {
        refuse(io, "MBbloom--", why);
        c = NULL;
    }
    free_links(links, got);
    return counted(BKM_RBCHAIN, c);
}

static void chain_save(RedisModuleIO *io, void *value)
{
    const bk_filter *c = value;
    bk_rbchain_info in;
    bk_rbchain_info_of(c, &in);
    RedisModule_SaveUnsigned(io, in.size);
    RedisModule_SaveUnsigned(io, in.links);
    RedisModule_SaveUnsigned(io, in.options);
    RedisModule_SaveUnsigned(io, in.growth);
    for (uint32_t i = 0; i < in.links; i++) {
        bk_rbchain_link l;
        bk_rbchain_link_of(c, i, &l);
        RedisModule_SaveUnsigned(io, l.entries);
        RedisModule_SaveDouble(io, l.error);
        RedisModule_SaveUnsigned(io, l.hashes);
        RedisModule_SaveDouble(io, l.bpe);
        RedisModule_SaveUnsigned(io, l.bits);
        RedisModule_SaveUnsigned(io, l.n2);
        RedisModule_SaveStringBuffer(io, (const char *)l.data, (size_t)l.bytes);
        RedisModule_SaveUnsigned(io, l.size);
    }
}

/* The AOF rewrite of a RedisBloom value: its chunked dump as the
 * LOADCHUNK commands RedisBloom emits (cmd: BF.LOADCHUNK or CF.LOADCHUNK). */
static void rewrite(RedisModuleIO *aof, RedisModuleString *key, const bk_filter *f, const char *cmd)
{
    size_t hlen = 0;
    bk_chunked_header(f, NULL, 0, &hlen);
    char *head = RedisModule_TryAlloc(hlen);
    if (!head) {
        RedisModule_LogIOError(aof, "warning", "bloomkit: out of memory rewriting a filter");
        return;
    }
    bk_chunked_header(f, head, hlen, &hlen);
    RedisModule_EmitAOF(aof, cmd, "slb", key, 1LL, head, hlen);
    RedisModule_Free(head);
    long long it = 1;
    for (;;) {
        const uint8_t *data;
        size_t len;
        bk_chunked_next(f, it, &data, &len, &it);
        if (!len)
            break;
        RedisModule_EmitAOF(aof, cmd, "slb", key, it, (const char *)data, len);
    }
}

static void chain_rewrite(RedisModuleIO *aof, RedisModuleString *key, void *value)
{
    rewrite(aof, key, value, "BF.LOADCHUNK");
}

static size_t chain_usage(const void *value)
{
    return bkm_rb_usage(BKM_RBCHAIN, value);
}

void bkm_rb_set_value(RedisModuleKey *key, bkm_kind kind, bk_filter *f)
{
    RedisModule_ModuleTypeSetValue(key, kind == BKM_RBCHAIN ? bkm_rbchain_type : bkm_rbcuckoo_type,
                                   f);
    bkm_held_add(kind, 1, (long long)bkm_rb_usage(kind, f));
}

static void *chain_copy(RedisModuleString *from, RedisModuleString *to, const void *value)
{
    (void)from;
    (void)to;
    const bk_filter *c = value;
    bk_rbchain_info in;
    bk_rbchain_info_of(c, &in);
    bk_rbchain_link *links = RedisModule_TryAlloc(in.links * sizeof *links);
    if (!links)
        return NULL;
    for (uint32_t i = 0; i < in.links; i++)
        bk_rbchain_link_of(c, i, &links[i]);
    bk_filter *copy = NULL;
    if (bk_filter_rbchain_from(&in, links, in.links, 0, 0, &copy) != BK_OK)
        copy = NULL; /* COPY then fails, the source unchanged */
    RedisModule_Free(links);
    return counted(BKM_RBCHAIN, copy);
}

static void chain_free(void *value)
{
    bkm_held_add(BKM_RBCHAIN, -1, -(long long)bkm_rb_usage(BKM_RBCHAIN, value));
    bk_free(value);
}

/* ---- MBbloomCF ---- */

/* long: the fields of every encoding in their order, as FORMATS.md 1.5 tabulates them. */
static void *cuckoo_load(RedisModuleIO *io, int encver)
{
    if (encver > BKM_RB_ENCVER)
        return refuse(io, "MBbloomCF", "an encoding newer than RedisBloom 2.6's");
    bk_rbcuckoo_info in = {0};
    in.filters = (uint16_t)RedisModule_LoadUnsigned(io);
    in.buckets = RedisModule_LoadUnsigned(io);
    in.items = RedisModule_LoadUnsigned(io);
    if (encver >= 4) {
        in.deletes = RedisModule_LoadUnsigned(io);
        in.bucket_size = (uint16_t)RedisModule_LoadUnsigned(io);
        in.max_iterations = (uint16_t)RedisModule_LoadUnsigned(io);
        in.expansion = (uint16_t)RedisModule_LoadUnsigned(io);
    } else {
        in.bucket_size = 2;
        in.max_iterations = 20;
        in.expansion = 1;
    }
    if (RedisModule_IsIOError(io) || in.filters == 0 || in.buckets == 0 || in.bucket_size == 0)
        return refuse(io, "MBbloomCF", "no sub-filter, bucket or slot");
    struct sub {
        uint64_t count;
        char *array;
        size_t len;
    } *subs = RedisModule_TryAlloc(in.filters * sizeof *subs);
    if (!subs)
        return refuse(io, "MBbloomCF", "out of memory");
    uint64_t *counts = RedisModule_TryAlloc(in.filters * sizeof *counts);
    if (!counts) {
        RedisModule_Free(subs);
        return refuse(io, "MBbloomCF", "out of memory");
    }
    uint32_t got = 0;
    const char *why = NULL;
    for (; got < in.filters && !why; got++) {
        struct sub *s = &subs[got];
        s->count = counts[got] = encver >= 4 ? RedisModule_LoadUnsigned(io) : in.buckets;
        s->len = 0;
        s->array = RedisModule_LoadStringBuffer(io, &s->len);
        if (RedisModule_IsIOError(io) || !s->array)
            why = "the value ends early";
        else if (s->count == 0 || s->count > BK_RBCUCKOO_BUCKETS_MAX ||
                 s->len != s->count * in.bucket_size)
            /* RedisBloom asserts here, taking the server down */
            why = "a sub-filter's slots are not its buckets times the bucket size";
    }
    bk_filter *c = NULL;
    /* RedisBloom's header checks too (a power-of-two bucket count, a bucket
     * size up to 255, iterations, expansion, each sub-filter its size): a
     * value the AOF rewrite's CF.LOADCHUNK could not carry is refused here,
     * where RESTORE says so, not lost at the next restart */
    if (!why && bk_filter_rbcuckoo_from(&in, counts, BK_RB_STRICT, 0, &c) != BK_OK)
        why = bk_last_error();
    for (uint32_t i = 0; i < got; i++) {
        if (c && !why) {
            uint8_t *slots;
            uint64_t nb;
            bk_rbcuckoo_slots(c, i, &slots, &nb);
            memcpy(slots, subs[i].array, subs[i].len);
        }
        if (subs[i].array)
            RedisModule_Free(subs[i].array);
    }
    RedisModule_Free(subs);
    RedisModule_Free(counts);
    if (why) {
        bk_free(c);
        return refuse(io, "MBbloomCF", why);
    }
    return counted(BKM_RBCUCKOO, c);
}

static void cuckoo_save(RedisModuleIO *io, void *value)
{
    const bk_filter *c = value;
    bk_rbcuckoo_info in;
    bk_rbcuckoo_info_of(c, &in);
    RedisModule_SaveUnsigned(io, in.filters);
    RedisModule_SaveUnsigned(io, in.buckets);
    RedisModule_SaveUnsigned(io, in.items);
    RedisModule_SaveUnsigned(io, in.deletes);
    RedisModule_SaveUnsigned(io, in.bucket_size);
    RedisModule_SaveUnsigned(io, in.max_iterations);
    RedisModule_SaveUnsigned(io, in.expansion);
    for (uint32_t i = 0; i < in.filters; i++) {
        uint8_t *slots;
        uint64_t nb;
        bk_rbcuckoo_slots(c, i, &slots, &nb);
        RedisModule_SaveUnsigned(io, nb);
        RedisModule_SaveStringBuffer(io, (const char *)slots, (size_t)(nb * in.bucket_size));
    }
}

static void cuckoo_rewrite(RedisModuleIO *aof, RedisModuleString *key, void *value)
{
    rewrite(aof, key, value, "CF.LOADCHUNK");
}

static size_t cuckoo_usage(const void *value)
{
    return bkm_rb_usage(BKM_RBCUCKOO, value);
}

static void cuckoo_free(void *value)
{
    bkm_held_add(BKM_RBCUCKOO, -1, -(long long)bkm_rb_usage(BKM_RBCUCKOO, value));
    bk_free(value);
}

static void *cuckoo_copy(RedisModuleString *from, RedisModuleString *to, const void *value)
{
    (void)from;
    (void)to;
    const bk_filter *c = value;
    bk_rbcuckoo_info in;
    bk_rbcuckoo_info_of(c, &in);
    uint64_t *counts = RedisModule_TryAlloc(in.filters * sizeof *counts);
    if (!counts)
        return NULL;
    for (uint32_t i = 0; i < in.filters; i++) {
        uint8_t *slots;
        bk_rbcuckoo_slots(c, i, &slots, &counts[i]);
    }
    bk_filter *copy = NULL;
    if (bk_filter_rbcuckoo_from(&in, counts, 0, 0, &copy) == BK_OK)
        for (uint32_t i = 0; i < in.filters; i++) {
            uint8_t *from_slots, *to_slots;
            uint64_t nb;
            bk_rbcuckoo_slots(c, i, &from_slots, &nb);
            bk_rbcuckoo_slots(copy, i, &to_slots, &nb);
            memcpy(to_slots, from_slots, (size_t)(nb * in.bucket_size));
        }
    RedisModule_Free(counts);
    return counted(BKM_RBCUCKOO, copy);
}

int bkm_register_rb_types(RedisModuleCtx *ctx)
{
    static RedisModuleTypeMethods chain, cuckoo;
    memset(&chain, 0, sizeof chain);
    chain.version = BKM_TYPE_METHOD_VERSION;
    chain.rdb_load = chain_load;
    chain.rdb_save = chain_save;
    chain.aof_rewrite = chain_rewrite;
    chain.mem_usage = chain_usage;
    chain.free = chain_free;
    chain.copy = chain_copy;
    chain.free_effort = bkm_rbchain_effort;
    chain.defrag = bkm_defrag_rb;
    cuckoo = chain;
    cuckoo.rdb_load = cuckoo_load;
    cuckoo.rdb_save = cuckoo_save;
    cuckoo.aof_rewrite = cuckoo_rewrite;
    cuckoo.mem_usage = cuckoo_usage;
    cuckoo.copy = cuckoo_copy;
    cuckoo.free = cuckoo_free;
    cuckoo.free_effort = bkm_rbcuckoo_effort;
    bkm_rbchain_type = RedisModule_CreateDataType(ctx, "MBbloom--", BKM_RB_ENCVER, &chain);
    bkm_rbcuckoo_type = RedisModule_CreateDataType(ctx, "MBbloomCF", BKM_RB_ENCVER, &cuckoo);
    return bkm_rbchain_type && bkm_rbcuckoo_type ? REDISMODULE_OK : REDISMODULE_ERR;
}
