/*
 * bloomkit_tools.h - the part of bloomkit's API that is there for tools,
 * bindings and tests: the command, the Python binding, the Redis module and
 * the test suites use it. It works, is documented and is tested as
 * bloomkit.h is, but unlike bloomkit.h it carries no stability promise: a
 * function here may change or go in any release, and NEWS says when (as
 * zstd's experimental API, ZSTD_STATIC_LINKING_ONLY, may). A program that
 * only uses filters needs nothing from here.
 */
#ifndef BLOOMKIT_TOOLS_H
#define BLOOMKIT_TOOLS_H

#include "bloomkit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How this process hashes a batch of SipHash keys (bk_add_batch and every
 * other batch call): "avx512" (8 keys at a time), "avx2" (4) or "scalar" (one
 * at a time). The fastest this CPU has, unless the environment variable
 * BLOOMKIT_SIMD names another path it has (scalar, avx2, avx512; read at the
 * first batch); every path gives the same digests. Static storage. No error.
 * Thread-safe. */
BK_API const char *bk_simd_path(void);

/* Rate of a blocked filter of m cells in blocks of `block` cells (512 bits,
 * or 128 counters) after n insertions: keys per block are ~Poisson(n block / m)
 * and a block of j keys passes with (1 - (1 - 1/block)^(j k))^k; the rate is
 * the average over j (Putze, Sanders & Singler, 2007). Returns 1.0 when
 * m < block or k is 0. Thread-safe. */
BK_API double bk_rate_blocked(uint64_t m, unsigned k, uint64_t n, unsigned block);

/* Key i of the configuration table (0, 1, ... until NULL): its name; its
 * allowed values into range (rangelen bytes, may be NULL) and a line of
 * help into *help (may be NULL). For documentation and completion.
 * Thread-safe. */
BK_API const char *bk_config_key(unsigned i, char *range, size_t rangelen, const char **help);

/* 1 when the configuration key named `key` is one of variant v's (a text
 * of that variant may state it), 0 when it is another variant's or unknown
 * (or v is). Every variant takes variant, capacity, hash, key and input;
 * the rest, each variant's descriptor lists (layout and fpr are bloomkit's
 * own sizing: RedisBloom's structures size as RedisBloom does). Thread-safe. */
BK_API int bk_config_key_applies(bk_variant v, const char *key);

/* The config text of a named set of defaults (static; NULL for an unknown
 * name). "crawler": a crawler's seen-URL filter when nobody knows how many
 * URLs will come, the expandable filter at 1 in 10,000 (the command's
 * dedup, bk_redis_import_set and the Scrapy filter start from it).
 * "chain": what turns a configuration into the scalable chain that stands
 * for it where a chain is wanted or is all there is (a Redis server
 * without bloomkit's module; dedup with a count, a layout or a growth
 * given): variant=scalable, tightening 0.85 (planned for growth: each
 * slice gets 0.85 of the last's rate), the blocked layout. Written once,
 * in the key table (src/core/config.c), for every program that makes such
 * a filter. Thread-safe. */
BK_API const char *bk_config_preset(const char *name);

/* A configuration built in layers, as a program gathers one: config text
 * (a file, --config), then single values (options, keywords, the
 * environment), each value checked once against its key's row as it comes,
 * and what only the whole says (fpr beside pinned bits, hashes without
 * bits, a stated key of another variant) checked once at the end. A key is
 * stated at most once across the layers. Plain data: the caller owns it,
 * on its stack or anywhere; one thread at a time. */
typedef struct bk_config_build {
    bk_config cfg;            /* the values so far: read it, never set it directly */
    unsigned char stated[64]; /* stated[i]: key i of bk_config_key was stated */
} bk_config_build;

/* Start *b at *start (valid; NULL: the defaults), nothing stated: a
 * program's own defaults (a preset) are the layer under every other. No
 * error (a NULL b is ignored). */
BK_API void bk_config_build_init(bk_config_build *b, const bk_config *start);

/* Apply config text (bk_config_parse's syntax) over *b. Errors: BK_EINVAL
 * (NULL), BK_ECONFIG (a bad line, value or key, a key an earlier layer
 * stated); *error (may be NULL) gets the key, line and message, as
 * bk_config_read gives them; *b untouched on error. */
BK_API int bk_config_build_text(bk_config_build *b, const char *text, bk_config_error *error);

/* Set one key from its text, as bk_config_set does, and mark it stated.
 * Errors: BK_EINVAL (NULL), BK_ECONFIG (unknown key, invalid value, a key
 * already stated: "<key>: given twice ..."); *b untouched on error. */
BK_API int bk_config_build_set(bk_config_build *b, const char *key, const char *value, char *err,
                               size_t errlen);

/* 1 when a layer of *b stated key, else 0 (also for NULL or an unknown key). */
BK_API int bk_config_build_stated(const bk_config_build *b, const char *key);

/* The configuration *b built, after the checks of the whole (those
 * bk_config_parse makes of a text) into *out. Errors: BK_EINVAL (NULL),
 * BK_ECONFIG; *error (may be NULL) gets the key at fault (the first of two
 * that contradict) and the message; *out untouched on error. */
BK_API int bk_config_build_finish(const bk_config_build *b, bk_config *out, bk_config_error *error);

/* 1 when the valid config text states a value for key, else 0 (also for an
 * invalid text or an unknown key). Lets a caller refuse a value given both
 * in a text and another way. Thread-safe. */
BK_API int bk_config_text_sets(const char *text, const char *key);

/* A count as people type it, the way the config text reads capacity and
 * every other count: decimal digits (1000000), exponent form equal to a
 * whole number (1e6), or a number with a decimal suffix k, M, G or T
 * (10^3 .. 10^12: 1M and 2.5k are 1000000 and 2500; sizes, max_bytes, keep
 * their binary k, M, G). BK_OK with *out, or BK_EINVAL (not a whole number
 * in 0 .. 2^63, s or out NULL) with *out unchanged. Thread-safe. */
BK_API int bk_count_parse(const char *s, uint64_t *out);

/* The clock of the window variant: milliseconds since the Unix epoch
 * (wall-clock time, so a window survives restarts and is shared across
 * machines through files). ctx is passed back unchanged. */
typedef int64_t (*bk_clock_fn)(void *ctx);

/* Replace the clock every window filter of this process reads (NULL
 * restores the system's real-time clock). Meant for tests and simulations
 * that move time by hand: a filter never acts on a time earlier than the
 * latest it has seen, so a clock that steps backwards by up to a span
 * freezes its time instead of dropping or reviving anything; a clock more
 * than a span behind the filter's newest generation re-dates the filter
 * (bk_filter_stats.redated_from_ms, docs/windows.md). No error. Not
 * thread-safe: set it while no other thread uses a window filter. */
BK_API void bk_set_clock(bk_clock_fn fn, void *ctx);

/* The current time by that clock, in ms since the epoch. Thread-safe. */
BK_API int64_t bk_now_ms(void);

/* The layout of the structs that cross this ABI, for bindings that mirror
 * them (the Python one checks its mirrors at import): sizeof of type
 * ("bk_config", "bk_filter_stats", "bk_config_error", "bk_plan") when field
 * is NULL, else the field's offset; (size_t)-1 for an unknown name.
 * Thread-safe. */
BK_API size_t bk_abi_layout(const char *type, const char *field);

#ifdef __cplusplus
}
#endif

#endif /* BLOOMKIT_TOOLS_H */
