/*
 * scripts.h - the server-side Lua scripts of a shared filter (internal).
 *
 * Every script runs atomically on the server (Redis runs one script at a
 * time), so "check the probes, set them, count them" is one indivisible step:
 * when several processes add one new key at once, exactly one is told it is
 * new. Scripts are loaded once per connection (SCRIPT LOAD) and run with
 * EVALSHA; a NOSCRIPT reply (server restarted or SCRIPT FLUSH) reloads them.
 *
 * Offsets are computed by the client, which holds the hash key: the server
 * only ever sees bit and counter positions, as Redis numbers (decimal text).
 * The key layout and the counts are documented in docs/redis.md.
 */
#ifndef BK_REDIS_SCRIPTS_H
#define BK_REDIS_SCRIPTS_H

/* "count" is the hash holding the counts: the metadata hash NAME for block
 * 0 and for every scalable slice, a block's own count hash past block 0. */
enum {
    BK_RS_CREATE,        /* KEYS meta; ARGV field value ...: create or return existing */
    BK_RS_STD_ADD_MANY,  /* KEYS data count; ARGV k, then BITFIELD SETs: {0|1} per key */
    BK_RS_STD_ADD_LINES, /* KEYS data count; ARGV {line first, last, byte/mask pairs}: {0|1} per key
                          */
    BK_RS_CNT_ADD,       /* KEYS data count; ARGV counter indexes */
    BK_RS_CNT_REMOVE,    /* KEYS data count; ARGV counter indexes */
    BK_RS_SCL_ADD,       /* KEYS count data...; ARGV n grow_at has_next {k offsets}... */
    BK_RS_SCL_CONTAINS,  /* KEYS count data...; ARGV n {k offsets}... */
    BK_RS_CLEAR,         /* KEYS count data...; ARGV clear|drop: counts and cells gone */
    BK_RS_WIN,           /* KEYS meta; ARGV op span G refresh max_bytes max_slices has_next n
                          * {k block bytes max_set max_keys offsets}...: window add/lookup */
    BK_RS_WIN_CLEAR,     /* KEYS meta; ARGV clear|drop G {blocks of slice j}...: every
                          * generation gone (and with drop the metadata) */
    BK_RS_COUNT
};

/* The text of script i. */
const char *bk_redis_script(int i);

/* Error reply a scalable add gives when the chain must grow and the client
 * has no slice to grow into (the next slice cannot be stored). */
#define BK_RS_FULL "BKFULL"
/* Error reply of an add that would pass the filter's max_bytes (or the
 * slices a file holds): "BKMAX bytes_after used" or "BKMAX slices". */
#define BK_RS_MAX "BKMAX"
/* Error reply of a script whose filter is gone: its count hash lacks the
 * field format (dropped while in use, or damaged). Nothing was written. */
#define BK_RS_GONE "BKGONE"
/* Error reply of the create script when the name holds something else. */
#define BK_RS_WRONGTYPE "BKWRONGTYPE"

#endif
