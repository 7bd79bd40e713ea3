/*
 * rfilter.h - a filter whose cells live in Redis, behind the common vtable
 * (internal; the public entry points are bk_redis_* in bloomkit.h).
 *
 * Keys of a filter NAME (docs/redis.md):
 *   NAME                      hash: metadata (format, variant, sizes, k, key,
 *                             ...) and the counts: slices, bits.j, keys.j,
 *                             sat.j (standard and counting: of every block, or
 *                             of block 0 when counts=blocks)
 *   NAME:{NAME}:data          standard and counting: block 0 of the cells
 *   NAME:{NAME/b}:data        block b > 0 of the cells
 *   NAME:{NAME/b}:count       counts=blocks only: block b's counts (bits.0,
 *                             keys.0, sat.0), summed by refresh
 *   NAME:{NAME}:j/b:data      scalable: block b of slice j
 *   NAME:{NAME}:w<g>          window: generation g's slice count and counts
 *   NAME:{NAME}:w<g>:j/b:data window: block b of slice j of generation g
 *                             (both expire when g leaves the window; NAME's
 *                             field gen is the newest generation made)
 * The tag {NAME} hashes to the slot of NAME itself (names hold no braces),
 * so one script changes block 0 (or a whole chain) and the metadata's
 * counts together, also on a cluster. A filter created on a single server
 * keeps every block's counts in NAME (counts=meta); one created on a cluster
 * (counts=blocks) keeps those of blocks past the first beside them, because
 * a cluster's script may touch one slot only.
 * A block holds at most the URL's block_bytes (512 MiB, the Redis string
 * limit). Every probe of a key falls in one block: the classic layout keeps a
 * slice in one block, the blocked layout splits it on 64-byte lines.
 */
#ifndef BK_REDIS_RFILTER_H
#define BK_REDIS_RFILTER_H

#include "../../core/filter_impl.h"
#include "../conn.h"
#include "lua.h"
#include "scripts.h"

/* One slice as the client sees it: its shape (data NULL) with the counts
 * last read from the server, and for scalable the set-bit count past which
 * the chain grows. */
typedef struct bk_rslice {
    bk_slice_view v;
    bk_slice_limit full; /* scalable: when the slice is full (bk_chain_slice) */
} bk_rslice;

/* The Lua mode's frozen limits, part of the data it wrote: a chain of at
 * most 64 slices, a window of at most 256 (the variants' own limits when
 * the mode was frozen; it keeps them whatever the variants become). */
#define BK_LUA_CHAIN_MAX  64
#define BK_LUA_WINDOW_MAX 256

typedef struct bk_rfilter bk_rfilter;

/* How the Lua mode stores one shape of filter (rfilter.c): a single array
 * (standard, counting), a chain (scalable), or a window's generations. */
typedef struct bk_lua_store {
    /* one key's command for op (BK_KEYS_ADD, _CONTAINS, _REMOVE) */
    int (*build)(bk_rfilter *rf, int op, const bk_hash *h);
    /* re-read the counts (and a chain's slices) from the server */
    int (*refresh)(bk_rfilter *rf);
    /* clear the cells (drop: delete every key, the metadata too) */
    int (*wipe)(bk_rfilter *rf, int drop);
} bk_lua_store;

/* What the Lua mode keeps of each variant it shares: one row per variant
 * (kinds.c), read wherever the store's work differs, so that nothing else
 * branches on the variant. The mode is frozen: it has rows for standard,
 * counting, scalable and window, and refuses every other variant by name
 * (bk_lua_refuses): new variants and new keys are the module's. */
typedef struct bk_lua_kind {
    bk_variant variant;
    const bk_filter_ops *ops;  /* the vtable (bk_rfilter_ops or _removing_ops) */
    const bk_lua_store *store; /* how its cells are laid out and changed */
    unsigned cell_bits;        /* 1 (bits) or 4 (counters) */
    int chained;               /* its slices are chains its scripts are told the shapes of */
    int windowed;              /* generations by the server's clock (rwindow.c) */
    int slice_keys;            /* data keys name their slice; every count in NAME */
    unsigned grouped;          /* ops (1u << op) sent one command per block of a chunk */
    unsigned repeatable;       /* ops safe to send again after a lost connection */
    const char *not_copied;    /* NULL, or why push and pull refuse it */
} bk_lua_kind;

/* The row of variant v, or NULL: the Lua mode does not keep it. */
const bk_lua_kind *bk_lua_kind_of(bk_variant v);
/* BK_ENOTSUP for a variant with no row, naming it and the module. */
int bk_lua_refuses(const char *name, bk_variant v);
/* BK_OK when cfg sets no key but those the Lua mode keeps to other than
 * its default (kept, nkept: NULL for its own frozen list; a test passes
 * another), else BK_ENOTSUP naming the first such key and the module. */
int bk_lua_keys_refused(const char *name, const bk_config *cfg, const char *const *kept,
                        size_t nkept);

/* The three stores (rfilter.c). */
extern const bk_lua_store bk_lua_array_store, bk_lua_chain_store, bk_lua_window_store;

struct bk_rfilter {
    bk_filter base;
    const bk_lua_kind *kind;
    bk_rconn *conn;
    char *name;
    uint64_t block_bytes; /* bytes per data key */
    unsigned cell_bits;   /* 1 (bits) or 4 (counters) */
    int counts_in_meta;   /* every block's counts in NAME (counts=meta) */
    unsigned probes;      /* BK_PROBES_LCG (metadata format 3) or BK_PROBES_DH (format 2) */
    bk_slice_rule rule;   /* a chain's slice sizing: BK_SLICE_HOLDS (format 5), or
                           * BK_SLICE_AVERAGE (formats 2 to 4: 0.1.0's) */
    uint32_t nslices;     /* slices known (scalable: the server may have more;
                           * window: shapes of a generation's first nslices) */
    int has_next;         /* scalable: slice nslices can be stored */
    uint32_t shaped;      /* s[0 .. shaped) hold their shapes (computed once: they never
                           * change, and a blocked slice's sizing costs milliseconds) */
    bk_rslice s[BK_LUA_CHAIN_MAX + 1];
    /* window: span in ms, and the live generations' slices as last read
     * (rwindow.c), oldest first, each naming its generation */
    int64_t span_ms;
    uint32_t nwin;
    bk_slice_view win[BK_LUA_WINDOW_MAX];
    char sha[BK_RS_COUNT][41];
    /* Command being built: argument offsets into text, turned into argv. */
    const char **argv;
    size_t *lens, *offs, argc, argcap;
    size_t route; /* argument whose key routes the command (cluster slot) */
    char *text;
    size_t textlen, textcap;
};

/* The vtables (rfilter.c): of every variant, and of those that remove. */
extern const bk_filter_ops bk_rfilter_ops, bk_rfilter_removing_ops;

/* 1 for a variant made of chains of slices (scalable, window): its adds
 * and lookups are scripts that are told the shapes of several slices. */
static inline int bk_rfilter_chained(const bk_rfilter *rf)
{
    return rf->kind->chained;
}

/* The window store (rwindow.c): read the live generations' counts (the
 * server's TIME says which are live), and clear every generation. */
int bk_rwindow_refresh(bk_rfilter *rf);
int bk_rwindow_clear(bk_rfilter *rf, int drop);
/* Delete every key of the filter, its count hashes and metadata included
 * (bk_redis_drop), so that a writer still using it fails (BK_RS_GONE). */
int bk_rfilter_drop(bk_rfilter *rf);
/* The error of an operation whose script found the filter gone. */
int bk_rfilter_gone(const bk_rfilter *rf);
/* A count field of a reply: absent is 0, anything but a non-negative
 * decimal integer is BK_ESERVER. */
int bk_rfilter_count_value(const bk_rfilter *rf, const redisReply *r, long long *out);
/* The slice J of a count field "PREFIX" "J" (f of n bytes; J a slice below
 * the chain's limit, written without leading zeros), or -1 when f is not
 * such a field. */
int bk_rfilter_count_slice(const char *f, size_t n, const char *prefix);
/* Error for a "BKMAX ..." reply (max_bytes or the slices a file holds). */
int bk_rfilter_max_error(const bk_rfilter *rf, const char *reply);

/* Shapes of slices 0 .. n (slice n only when it can be stored, has_next) for
 * a chain that has n slices now. BK_OK or BK_ERANGE. */
int bk_rfilter_set_slices(bk_rfilter *rf, uint32_t n);
/* SCRIPT LOAD every script; BK_OK or an error. */
int bk_rfilter_load_scripts(bk_rfilter *rf);
/* Re-read counts (and the slice count) from the server. */
int bk_rfilter_refresh(bk_rfilter *rf);

/* Interpret reply r to an operation (0 add, 1 contains, 2 remove) the way
 * the pipeline does: 0 done (*result set), 1 NOSCRIPT, 2 stale chain, or a
 * negative error. For the reply fuzzer (tests/fuzz). */
int bk_rfilter_parse_reply(bk_rfilter *rf, int op, const redisReply *r, int *result);
/* 1 when f (n bytes) is a field bloomkit writes into a filter's metadata
 * hash (a metadata field, or a count: slices, bits.J, keys.J, sat.J, gen,
 * pushing). */
int bk_redis_field_ours(const char *f, size_t n);
/* Check a metadata reply (HGETALL of NAME) as an opener does: BK_OK or the
 * error an opener would report. For the reply fuzzer. */
int bk_redis_meta_check(const char *name, const redisReply *r);

/* Free everything (connection included). */
void bk_rfilter_free(bk_rfilter *rf);

/* Name of the data key of block b of slice j, and of the hash holding the
 * counts of block b (NAME itself for block 0, for every scalable slice, and
 * for every block when counts_in_meta). */
int bk_rfilter_data_key(const bk_rfilter *rf, uint32_t j, uint64_t b, char *buf, size_t len);
int bk_rfilter_count_key(const bk_rfilter *rf, uint64_t b, char *buf, size_t len);

/* Blocks of slice j, and the bytes of block b of it. */
uint64_t bk_rfilter_blocks(const bk_rfilter *rf, uint32_t j);
uint64_t bk_rfilter_block_len(const bk_rfilter *rf, uint32_t j, uint64_t b);

bk_rconn *bk_rfilter_conn(bk_rfilter *rf);

#endif
