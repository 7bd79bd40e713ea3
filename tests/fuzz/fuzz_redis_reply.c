/* fuzz_redis_reply.c - libFuzzer target: what bloomkit does with replies a
 * Redis server (or something pretending to be one) sends. The bytes are fed
 * to hiredis's protocol reader; every reply it produces goes through the
 * pipeline's reply check (every variant and operation), the metadata check
 * of an opener, the shard descriptor parser, and the MOVED/ASK parser. Each must give a result or
 * an error code, never crash or read out of bounds.
 *
 * Inputs announcing an array of more than a million elements are skipped:
 * Debian's hiredis 0.14 allocates the whole array when it reads the header
 * ("*253687094" asks for 2 GB: tests/fuzz/regress/redis_reply/huge-array-
 * header, the first finding), which is the library's memory, not our code,
 * and a limit it does not let us set (docs/security.md). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "bloomkit.h"
#include "common/alloc.h"
#include "redis/lua/rfilter.h"
#include "redis/shards.h"

static bk_rfilter *filters[4];

static bk_rfilter *make(const char *text)
{
    bk_config c;
    if (bk_config_parse(&c, text, NULL, 0) != BK_OK)
        abort();
    c.has_key = 1;
    const bk_allocator a = bk_current_allocator();
    bk_rfilter *rf = bk_mem_calloc(&a, 1, sizeof *rf);
    rf->kind = bk_lua_kind_of(c.variant);
    if (!rf->kind)
        abort();
    bk_filter_base_init(&rf->base, rf->kind->ops, &c, &a);
    rf->name = bk_mem_alloc(&a, 2);
    memcpy(rf->name, "f", 2);
    rf->block_bytes = 4096;
    rf->cell_bits = rf->kind->cell_bits;
    if (rf->kind->windowed) {
        bk_slice_view v;
        bk_slice_limit l;
        if (bk_chain_slice(&c, 0, rf->rule, &v, &l) != BK_OK)
            abort();
        rf->span_ms = v.span;
    }
    if (bk_rfilter_set_slices(rf, 1) != BK_OK)
        abort();
    return rf;
}

/* 1 when the bytes hold "*N" (an array header, or anything that looks like
 * one) with N above a million. */
static int huge_aggregate(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i + 1 < size; i++) {
        if (data[i] != '*')
            continue;
        unsigned long long n = 0;
        size_t j = i + 1;
        while (j < size && data[j] >= '0' && data[j] <= '9' && n <= 1000000)
            n = n * 10 + (unsigned)(data[j++] - '0');
        if (n > 1000000)
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (huge_aggregate(data, size))
        return 0;
    if (!filters[0]) {
        filters[0] = make("variant=standard capacity=1000");
        filters[1] = make("variant=counting capacity=1000 layout=blocked");
        filters[2] = make("variant=scalable capacity=10");
        filters[3] = make("variant=window window=60s capacity=10 max_bytes=4k");
    }
    redisReader *rd = redisReaderCreate();
    if (!rd)
        return 0;
    redisReaderFeed(rd, (const char *)data, size);
    void *reply = NULL;
    for (int i = 0; i < 64 && redisReaderGetReply(rd, &reply) == REDIS_OK && reply; i++) {
        const redisReply *r = reply;
        for (int f = 0; f < 4; f++)
            for (int op = 0; op < 3; op++) {
                int result = 0;
                const int rc = bk_rfilter_parse_reply(filters[f], op, r, &result);
                if (rc == 0 && op != 2 && result != 0 && result != 1)
                    abort();
            }
        (void)bk_redis_meta_check("f", r);
        bk_rshards d;
        if (r->type == REDIS_REPLY_STRING && bk_rshards_parse("f", r->str, r->len, &d) == BK_OK &&
            (d.n < 2 || d.n > BK_REDIS_SHARDS_MAX || !memchr(d.config, '\0', sizeof d.config)))
            abort();
        unsigned slot;
        char host[64];
        int port, ask;
        if (bk_redis_parse_redirect(r, &slot, host, sizeof host, &port, &ask) == 0 &&
            (slot >= 16384 || port < 1 || port > 65535 || strlen(host) >= sizeof host))
            abort();
        freeReplyObject(reply);
        reply = NULL;
    }
    redisReaderFree(rd);
    return 0;
}
