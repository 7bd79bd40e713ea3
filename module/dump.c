/*
 * dump.c - BF.SCANDUMP and BF.LOADCHUNK over bloomkit's own image (the file
 * format: a RedisBloom dump cannot be loaded, nor the other way round).
 *
 * SCANDUMP key 0 takes a snapshot of the image (or shares the current one,
 * when the filter has not changed since it was taken) and hands out its
 * first chunk; each later call the next, until [0, ""]. The iterator of a
 * chunk is the offset where it ends, with the snapshot's number above it
 * (BK_SCANDUMP_OFFSET_BITS). A call whose snapshot is no longer the
 * filter's (a write since, or another reader's start after a write) is told
 * to start again at 0 rather than handed a mix of two states; a snapshot
 * freed after its last chunk is taken again when the filter is unchanged
 * (the same bytes).
 *
 * LOADCHUNK key iter data takes the chunks in order: the first (iterator =
 * its length) must hold the image's whole header, which is checked whole
 * (checksum included) before anything is kept, and says the image's size:
 * an image over MAX_BYTES or over maxmemory's headroom is refused then. The
 * filter is made, with every check of bk_load_buffer, when the last byte
 * arrives, and only then does the key exist. Loads in progress live in the
 * module's memory, not in the keyspace, and hold what has arrived (their
 * buffers grow with the chunks), all of them together at most
 * LOADS_MAX_BYTES; at most MAX_LOADS at once (the oldest is dropped for a
 * new one). An unfinished load is freed when it is abandoned: idle for
 * LOAD_TIMEOUT_MS, its database flushed, a new first chunk for its key, or
 * its key made meanwhile by another command. They are not saved, so a
 * restart in the middle means starting again. A finished load reaches
 * replicas and the AOF as the whole image, in chunks, in one transaction.
 */
#include "dump.h"

#include <stdio.h>
#include <string.h>

#include "bloomkit_redis.h"
#include "modclock.h"
#include "commands.h"
#include "module.h"
#include "payload.h"
#include "rb.h"

#define MAX_LOADS 16

typedef struct pending {
    int db;
    char *name; /* key name (bkm_alloc) */
    size_t name_len;
    uint8_t *buf;              /* cap bytes, filled of them received */
    size_t total, filled, cap; /* the image's size; received; held */
    uint64_t started;          /* load order, for dropping the oldest */
    long long last_ms;         /* when its last chunk arrived */
} pending;

#define OFFSET_MASK ((UINT64_C(1) << BK_SCANDUMP_OFFSET_BITS) - 1)
#define SNAPSHOTS   ((UINT64_C(1) << (63 - BK_SCANDUMP_OFFSET_BITS)) - 1) /* numbers 1.. */

static pending loads[MAX_LOADS];
static uint64_t snapshot_clock;
static uint64_t load_clock, abandoned;
static int timer_armed;

static size_t held_bytes(void)
{
    size_t n = 0;
    for (int i = 0; i < MAX_LOADS; i++)
        n += loads[i].cap;
    return n;
}

void bkm_loads_info(RedisModuleInfoCtx *ctx)
{
    unsigned long long n = 0;
    for (int i = 0; i < MAX_LOADS; i++)
        n += loads[i].name != NULL;
    RedisModule_InfoAddFieldULongLong(ctx, "loads_pending", n);
    RedisModule_InfoAddFieldULongLong(ctx, "loading_bytes", held_bytes());
    RedisModule_InfoAddFieldULongLong(ctx, "loads_abandoned", abandoned);
}

static void drop(pending *p)
{
    bkm_free(p->name);
    bkm_free(p->buf);
    memset(p, 0, sizeof *p);
}

/* Free an unfinished load that nobody will finish. */
static void abandon(pending *p)
{
    abandoned++;
    drop(p);
}

static void drop_idle(long long now)
{
    for (int i = 0; i < MAX_LOADS; i++)
        if (loads[i].name && now - loads[i].last_ms >= (long long)bkm_conf.load_timeout_ms)
            abandon(&loads[i]);
}

static int any_pending(void)
{
    for (int i = 0; i < MAX_LOADS; i++)
        if (loads[i].name)
            return 1;
    return 0;
}

static void idle_timer(RedisModuleCtx *ctx, void *data);

/* The timer that frees idle loads: armed while any is pending. It touches
 * no key and propagates nothing, so it is safe whatever the server does. */
static void arm_timer(RedisModuleCtx *ctx)
{
    if (!timer_armed) {
        RedisModule_CreateTimer(ctx, (long long)bkm_conf.load_timeout_ms, idle_timer, NULL);
        timer_armed = 1;
    }
}

static void idle_timer(RedisModuleCtx *ctx, void *data)
{
    (void)data;
    timer_armed = 0;
    drop_idle(RedisModule_Milliseconds());
    if (any_pending())
        arm_timer(ctx);
}

static void on_flush(RedisModuleCtx *ctx, RedisModuleEvent eid, uint64_t sub, void *data)
{
    (void)ctx, (void)eid;
    const RedisModuleFlushInfo *fi = data;
    if (sub != REDISMODULE_SUBEVENT_FLUSHDB_START || !fi)
        return;
    for (int i = 0; i < MAX_LOADS; i++)
        if (loads[i].name && (fi->dbnum == -1 || fi->dbnum == loads[i].db))
            abandon(&loads[i]);
}

int bkm_loads_watch(RedisModuleCtx *ctx)
{
    const RedisModuleEvent flush = {REDISMODULE_EVENT_FLUSHDB, 1};
    return RedisModule_SubscribeToServerEvent(ctx, flush, on_flush);
}

static pending *find(int db, const char *name, size_t len)
{
    for (int i = 0; i < MAX_LOADS; i++)
        if (loads[i].name && loads[i].db == db && loads[i].name_len == len &&
            memcmp(loads[i].name, name, len) == 0)
            return &loads[i];
    return NULL;
}

static pending *slot(void)
{
    pending *oldest = &loads[0];
    for (int i = 0; i < MAX_LOADS; i++) {
        if (!loads[i].name)
            return &loads[i];
        if (loads[i].started < oldest->started)
            oldest = &loads[i];
    }
    abandon(oldest);
    return oldest;
}

/* Room in p's buffer for `more` bytes past what it holds: it grows by
 * doubling up to the image's size, within LOADS_MAX_BYTES for all loads
 * together (not when replaying: the master's load is made as it was). 0, or
 * -1 with the reply in err. */
static int reserve(RedisModuleCtx *ctx, pending *p, size_t more, char *err, size_t errlen)
{
    const size_t want = p->filled + more;
    if (want <= p->cap)
        return 0;
    size_t cap = p->cap ? p->cap : (size_t)64 << 10;
    while (cap < want)
        cap = cap > p->total / 2 ? p->total : cap * 2;
    if (cap > p->total)
        cap = p->total;
    const size_t others = held_bytes() - p->cap;
    if (!bkm_replaying && others + cap > bkm_conf.loads_max_bytes) {
        snprintf(err, errlen,
                 "ERR unfinished BF.LOADCHUNK loads would hold %zu bytes, over LOADS_MAX_BYTES "
                 "(%llu): finish one, or wait for an idle one to go (LOAD_TIMEOUT_MS)",
                 others + cap, (unsigned long long)bkm_conf.loads_max_bytes);
        return -1;
    }
    if (bkm_headroom(ctx, cap - p->cap, err, errlen) != 0)
        return -1;
    uint8_t *buf = bkm_alloc(cap);
    if (!buf) {
        snprintf(err, errlen, "ERR out of memory");
        return -1;
    }
    if (p->filled)
        memcpy(buf, p->buf, p->filled);
    bkm_free(p->buf);
    p->buf = buf;
    p->cap = cap;
    return 0;
}

int bkm_cmd_bf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    if (bkm_kind_named(ctx, argv[1]) == BKM_RBCHAIN)
        return bkm_bf_rbchain_scandump(ctx, argv, argc);
    bkm_time_begin(ctx);
    bkm_value *v; /* the key first, then the iterator: RedisBloom's order and texts */
    RedisModuleKey *key = bkm_open_existing(ctx, argv[1], REDISMODULE_READ, &v);
    if (!key)
        return REDISMODULE_OK;
    RedisModule_CloseKey(key);
    long long iter;
    if (RedisModule_StringToLongLong(argv[2], &iter) != REDISMODULE_OK || iter < 0)
        return RedisModule_ReplyWithError(ctx, "Second argument must be numeric");
    const uint64_t id = (uint64_t)iter >> BK_SCANDUMP_OFFSET_BITS;
    const uint64_t off = (uint64_t)iter & OFFSET_MASK;
    const int current = v->dump_id != 0 && v->dump_writes == v->writes;
    if (iter != 0 && (id == 0 || id != v->dump_id || !current))
        return RedisModule_ReplyWithError(
            ctx, "ERR the filter changed during BF.SCANDUMP (or this iterator is not one of its "
                 "current dump's): start again at iterator 0");
    if (iter == 0 && !current) { /* a new snapshot */
        snapshot_clock = snapshot_clock % SNAPSHOTS + 1;
        v->dump_id = snapshot_clock;
        if (v->dump)
            bkm_free(v->dump);
        v->dump = NULL;
    }
    if (!v->dump) { /* new, or freed after its last chunk with the filter unchanged */
        const int rc = bkm_image(v->f, &v->dump, &v->dump_len);
        if (rc != BK_OK) {
            v->dump_id = 0;
            bkm_value_dirty(v);
            return bkm_reply_code(ctx, rc);
        }
        v->dump_writes = v->writes;
    }
    bkm_value_dirty(v); /* the snapshot is counted while it is held */
    RedisModule_ReplyWithArray(ctx, 2);
    if (off >= v->dump_len) {
        bkm_free(v->dump);
        v->dump = NULL;
        bkm_value_dirty(v);
        RedisModule_ReplyWithLongLong(ctx, 0);
        return RedisModule_ReplyWithStringBuffer(ctx, "", 0);
    }
    const size_t left = v->dump_len - (size_t)off;
    const size_t n = left < BKM_CHUNK ? left : BKM_CHUNK;
    RedisModule_ReplyWithLongLong(ctx,
                                  (long long)(v->dump_id << BK_SCANDUMP_OFFSET_BITS | (off + n)));
    return RedisModule_ReplyWithStringBuffer(ctx, (const char *)v->dump + off, n);
}

void bkm_replicate_image(RedisModuleCtx *ctx, RedisModuleString *name, const uint8_t *buf,
                         size_t len)
{
    for (size_t off = 0; off < len;) {
        const size_t n = len - off < BKM_CHUNK ? len - off : BKM_CHUNK;
        RedisModule_Replicate(ctx, "BK.AT", "lcslb", (long long)bkm_clock_now(), "BF.LOADCHUNK",
                              name, (long long)(off + n), (const char *)buf + off, n);
        off += n;
    }
}

/* Make the filter of a whole image under the (empty) key. */
static int finish(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name,
                  const uint8_t *buf, size_t len)
{
    bk_filter *f;
    char err[400], msg[500];
    const int rc =
        bkm_image_load(buf, len, bkm_clock_now(), bkm_replaying ? UINT64_MAX : bkm_conf.max_bytes,
                       &f, err, sizeof err);
    if (rc != BK_OK) {
        snprintf(msg, sizeof msg, "ERR invalid filter image: %s", err);
        for (char *p = msg; *p; p++)
            if (*p == '\r' || *p == '\n')
                *p = ' ';
        return RedisModule_ReplyWithError(ctx, msg);
    }
    bkm_value *v = bkm_value_new(f);
    if (!v)
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    RedisModule_ModuleTypeSetValue(key, bkm_type, v);
    bkm_replicate_image(ctx, name, buf, len);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, "bf.loadchunk", name);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int loadchunk_reply(RedisModuleCtx *ctx, RedisModuleKey *key, const char *msg)
{
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithError(ctx, msg);
}

int bkm_load_pending(RedisModuleCtx *ctx, RedisModuleString *name)
{
    size_t len;
    const char *p = RedisModule_StringPtrLen(name, &len);
    return find(RedisModule_GetSelectedDb(ctx), p, len) != NULL;
}

/* long: the checks of a chunk in the order they apply, each with its own error. */
int bkm_cmd_bf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    long long iter;
    if (RedisModule_StringToLongLong(argv[2], &iter) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR Second argument must be numeric");
    /* RedisBloom's dump: a chain's chunk, or its header (iterator 1) for a
     * new key; bloomkit's images start at the end of a 128-byte header */
    const bkm_kind kind = bkm_kind_named(ctx, argv[1]);
    if (kind == BKM_RBCHAIN || (kind == BKM_EMPTY && iter == 1))
        return bkm_bf_rbchain_loadchunk(ctx, argv, argc);
    bkm_time_begin(ctx);
    drop_idle(RedisModule_Milliseconds());
    size_t len, nlen;
    const uint8_t *data = (const uint8_t *)RedisModule_StringPtrLen(argv[3], &len);
    const char *name = RedisModule_StringPtrLen(argv[1], &nlen);
    const int db = RedisModule_GetSelectedDb(ctx);
    pending *p = find(db, name, nlen);
    /* the key before the chunk, as RedisBloom: WRONGTYPE for another type */
    RedisModuleKey *key = bkm_open_empty(ctx, argv[1]);
    if (!key) { /* the key exists now (made by another command): nobody can finish this load */
        if (p)
            abandon(p);
        return REDISMODULE_OK;
    }
    /* the iterator is the offset where the chunk ends (as BF.SCANDUMP gave
     * it), and a chunk is not empty: else RedisBloom's answer */
    if (iter <= 0 || len == 0 || ((uint64_t)iter & OFFSET_MASK) < len)
        return loadchunk_reply(ctx, key, "ERR received bad data");
    const size_t off = (size_t)((uint64_t)iter & OFFSET_MASK) - len;
    char msg[600];
    int rc = REDISMODULE_OK;
    if (off == 0) {
        if (p)
            abandon(p); /* a new load replaces an unfinished one */
        uint64_t total;
        if (bk_image_size(data, len, &total) != BK_OK) {
            if (len < 4 || memcmp(data,
                                  "\x89"
                                  "BKF",
                                  4) != 0) /* no image: RedisBloom's answer */
                return loadchunk_reply(ctx, key, "ERR received bad data");
            snprintf(msg, sizeof msg, "ERR invalid chunk: %s",
                     len < 128 ? "the first chunk holds the image's whole header"
                               : bk_last_error());
            for (char *c = msg; *c; c++)
                if (*c == '\r' || *c == '\n')
                    *c = ' ';
            return loadchunk_reply(ctx, key, msg);
        }
        if (total < len)
            return loadchunk_reply(ctx, key, "ERR invalid chunk: longer than the image it begins");
        if (!bkm_replaying && total > bkm_conf.max_bytes + ((uint64_t)1 << 20)) {
            snprintf(msg, sizeof msg,
                     "ERR invalid chunk: the image is %llu bytes, over the module's MAX_BYTES "
                     "(%llu)",
                     (unsigned long long)total, (unsigned long long)bkm_conf.max_bytes);
            return loadchunk_reply(ctx, key, msg);
        }
        if (total > SIZE_MAX)
            return loadchunk_reply(ctx, key, "ERR invalid chunk: the image is too large here");
        /* the whole image, then the filter made of it (about as much again) */
        if (bkm_headroom(ctx, 2 * total, msg, sizeof msg) != 0)
            return loadchunk_reply(ctx, key, msg);
        if (total == len) {
            rc = finish(ctx, key, argv[1], data, len);
            RedisModule_CloseKey(key);
            return rc;
        }
        p = slot();
        if (!(p->name = bkm_alloc(nlen ? nlen : 1))) {
            drop(p);
            return loadchunk_reply(ctx, key, "ERR out of memory");
        }
        memcpy(p->name, name, nlen);
        p->name_len = nlen;
        p->db = db;
        p->total = (size_t)total;
        p->started = ++load_clock;
    } else if (!p) { /* no load of this key: RedisBloom's answer for a chunk of no key */
        return loadchunk_reply(ctx, key, "ERR not found");
    } else if (p->filled != off || p->total - p->filled < len) {
        if (p->filled != off)
            snprintf(msg, sizeof msg, "ERR chunk out of order: the next begins at %zu", p->filled);
        else
            snprintf(msg, sizeof msg, "ERR invalid chunk: past the end of the image");
        return loadchunk_reply(ctx, key, msg);
    }
    if (reserve(ctx, p, len, msg, sizeof msg) != 0) {
        if (off == 0)
            drop(p); /* nothing of it kept */
        return loadchunk_reply(ctx, key, msg);
    }
    memcpy(p->buf + p->filled, data, len);
    p->filled += len;
    p->last_ms = RedisModule_Milliseconds();
    if (p->filled == p->total) {
        rc = finish(ctx, key, argv[1], p->buf, p->total);
        drop(p);
    } else {
        arm_timer(ctx);
        rc = RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    RedisModule_CloseKey(key);
    return rc;
}
