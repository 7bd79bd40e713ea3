/*
 * bloomkit_redis.h - shared filters in Redis: bloomkit's optional part,
 * compiled into libbloomkit when hiredis is there (Debian's libhiredis);
 * built without it, every call here fails with BK_ENOTSUP. A program that
 * never shares a filter needs only bloomkit.h. A filter opened here is a bk_filter like any other:
 * every call of bloomkit.h applies to it as documented below.
 */
#ifndef BLOOMKIT_REDIS_H
#define BLOOMKIT_REDIS_H

#include "bloomkit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* BF.SCANDUMP of bloomkit's Redis module: a chunk's iterator holds the
 * offset where the chunk ends in its low BK_SCANDUMP_OFFSET_BITS bits and
 * the snapshot it was cut from in the bits above, so that a reader whose
 * snapshot was replaced is told to start again instead of being served
 * another state. BF.LOADCHUNK reads the offset from the low bits (a plain
 * offset is one with snapshot 0). Images are under 2^40 bytes (1 TiB). */
#define BK_SCANDUMP_OFFSET_BITS 40

/* ---- Shared filters in Redis (docs/redis.md) ---------------------------
 *
 * url: redis://[[user]:password@]host[:port]/NAME[?options] or
 *      unix://[[user]:password@]/path/to/socket?name=NAME[&options]
 * options: connect_timeout=MS, timeout=MS (per command), retries=N
 * (reconnects after a lost connection, default 5), db=N, block_bytes=B (bytes
 * of cells per Redis key, a multiple of 64, default and maximum 512 MiB),
 * shards=S (1 .. 1024: a new filter kept by bloomkit's Redis module split
 * over S keys, an item routed to one by a keyed hash, so that a Redis
 * Cluster spreads it over its masters; an existing filter must agree;
 * refused where the server has no module).
 *
 * The filter is a bk_filter like any other: bk_add, bk_contains, bk_remove
 * (counting), the batch calls (pipelined: one round trip per 512 keys),
 * bk_stats (re-reads the counts), bk_clear and bk_free (which closes the
 * connection and leaves the data on the server). bk_save, bk_merge and
 * bk_intersect do not apply to it (BK_ENOTSUP); copy it with bk_redis_pull. Every process that
 * opens one NAME shares one filter: adds are atomic on the server (one Lua script per key), so of
 * several processes adding one new key at once exactly one is told it is new.
 *
 * One bk_filter from these calls holds one connection and must be used by
 * one thread at a time (open one per thread). Errors of any call on it:
 * BK_EIO (cannot connect, connection lost and not regained within the
 * retries; for counting adds and removes, a lost connection with the
 * operation in flight, whose fate is then unknown), BK_ESERVER (refused
 * credentials, a key of the wrong type, an unexpected reply; nothing is
 * written), BK_ERANGE (a slice the Redis layout cannot hold). Detail in
 * bk_last_error(); passwords never appear in it. */

/* Open the filter NAME at url, creating it when it does not exist: with cfg
 * (its hash key, or a random one when cfg->has_key is 0), or the defaults
 * when cfg is NULL. The first creator wins; every later opener adopts the
 * stored parameters and hash key. An opener passing cfg must agree with an
 * existing filter on every value of cfg (the key only when cfg->has_key):
 * otherwise BK_EINCOMPAT naming the value. A NAME kept by bloomkit's Redis
 * module (docs/redis.md) is not opened: BK_EINCOMPAT saying so (reach it with
 * its BF.* and BK.* commands, or copy it with bk_redis_pull). Errors as
 * above, plus BK_EINVAL (bad URL, out NULL) and BK_ECONFIG. On error *out is
 * NULL. Thread-safe. */
BK_API int bk_redis_open(const char *url, const bk_config *cfg, bk_filter **out);

/* Open the existing filter at url, adopting its configuration: BK_ENOTFOUND
 * when the name does not exist (nothing is created). Otherwise as
 * bk_redis_open. */
BK_API int bk_redis_open_existing(const char *url, bk_filter **out);

/* Open the filter NAME at url as it is when it exists (its configuration
 * adopted, none of cfg's values compared: a caller's defaults must not
 * refuse the filter an earlier version of it made), else create it from
 * cfg (not NULL), the first creator winning. A server without bloomkit's
 * module keeps no expandable filter (its Lua mode keeps chains): there an
 * expandable cfg is made as the chain that stands for it, cfg under
 * bk_config_preset("chain"). Errors as bk_redis_open. Thread-safe. */
BK_API int bk_redis_open_default(const char *url, const bk_config *cfg, bk_filter **out);

/* Like bk_redis_open, with a config text (NULL: none): a new filter is
 * created with the text over the defaults; an existing one must agree with
 * the values the text states (others are adopted). Errors go into err too
 * (one line, at most errlen bytes, may be NULL). */
BK_API int bk_redis_open_config(const char *url, const char *config_text, char *err, size_t errlen,
                                bk_filter **out);

/* Copy a local filter f into Redis under a new NAME (BK_EINCOMPAT when the
 * name exists): same configuration and hash key, cells and counts, so the
 * shared filter answers every key as f does. Where the server has bloomkit's
 * module the copy is a module filter, sent as f's image (BF.LOADCHUNK): the
 * name appears with the last chunk, or not at all. Otherwise a Lua-mode
 * filter: while the copy runs the name carries a "pushing" mark that makes
 * openers refuse it; on failure the keys written are deleted. shards=S > 1
 * is refused (BK_ENOTSUP: cells cannot be split by key). f must not be
 * written meanwhile. */
BK_API int bk_redis_push(const bk_filter *f, const char *url);

/* Copy the filter at url into a new local filter (*out, free with bk_free):
 * same configuration, hash key, cells and counts, so it answers every key as
 * the shared one did, and bk_save writes the file a local filter with the
 * same history would. Writers should pause meanwhile (cells and counts are
 * read block by block). A filter kept by bloomkit's Redis module (TYPE
 * bloomkit0) is copied through BF.SCANDUMP, as a consistent snapshot, with
 * every check of bk_load_buffer; a sharded one has no one image (BK_ENOTSUP).
 * Errors as bk_redis_open (the filter must exist: BK_ENOTFOUND otherwise),
 * plus BK_ENOMEM. */
BK_API int bk_redis_pull(const char *url, bk_filter **out);

/* Delete the filter NAME at url: its metadata and every key of its cells
 * and counts (and nothing else); a module filter's one key; a sharded one's
 * shards, then its descriptor. BK_OK also when it did not exist. */
BK_API int bk_redis_drop(const char *url);

/* What an import did (bk_redis_import_set). */
typedef struct bk_redis_import_stats {
    uint64_t members; /* members of the set read */
    uint64_t added;   /* of which new to the filter */
    char kept[512];   /* in place: the name the set was kept under; else "" */
} bk_redis_import_stats;

/* Import the members of the Redis set set_key into the filter at url (on
 * the same server and database): a crawl moves from scrapy-redis's
 * duplicate filter, which keeps one member per request, to a bloomkit
 * filter without fetching again what it fetched (docs/redis.md,
 * "Importing"). The filter is created with config_text (NULL: none) over
 * bk_config_preset("crawler") (the expandable filter at 0.0001),
 * input=scrapy-redis and a capacity of the set's size (at least 1000000),
 * as bk_redis_open_default makes it (a chain on a server without bloomkit's
 * module), or an existing one is used (it must agree
 * with what config_text states). Under input=scrapy-redis (the default) each
 * member must be a request fingerprint, 40 hexadecimal digits, and is added
 * as its 20 bytes, as bloomkit's Scrapy filter adds the fingerprints it
 * makes; under input=raw as it is. When set_key is the filter's own NAME
 * (in place), the set is first renamed to a name reported in st->kept
 * (SET:imported, or {SET}:imported when Redis Cluster would put that in
 * another slot), which an import meeting NAME and the kept set again resumes
 * from; it is never deleted. Writers of the set must stop meanwhile. An add
 * is never counted twice: a resumed import adds no member twice, even to a
 * counting or cuckoo filter. progress (bloomkit.h; may be NULL) sees the
 * members read of the set's size after every thousand.
 *
 * Errors: BK_EINVAL (url, set_key or st NULL), BK_ENOTFOUND (no set_key),
 * BK_ESERVER (set_key is not a set; a member is not a fingerprint under
 * input=scrapy-redis; the kept name exists), BK_ECANCELED (progress said
 * stop: what was added stays, and the import can be run again), the errors
 * of bk_redis_open. The filter is left as the adds made it; nothing else is
 * changed. progress may be NULL. Thread-safe. */
BK_API int bk_redis_import_set(const char *url, const char *set_key, const char *config_text,
                               bk_progress_fn progress, void *arg, bk_redis_import_stats *st);

/* What the key `key` holds on the server of url (a filter's NAME or not):
 * its type as Redis names it ("none", "string", "set", "hash", a module's
 * type) into type (typelen bytes), and its size (STRLEN, SCARD, HLEN, LLEN,
 * ZCARD; 0 for other types) into *size. For tools that meet keys bloomkit
 * did not make (the Scrapy filter looks for a dupefilter recipe's bitmaps
 * before it makes its own filter beside them). Errors: BK_EINVAL, BK_EIO,
 * BK_ESERVER as bk_redis_open. Thread-safe. */
BK_API int bk_redis_key_type(const char *url, const char *key, char *type, size_t typelen,
                             uint64_t *size);

#ifdef __cplusplus
}
#endif

#endif /* BLOOMKIT_REDIS_H */
