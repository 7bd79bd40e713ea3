/*
 * args.h - the module's argument parsing: module arguments and the options
 * of BF.RESERVE / BF.INSERT. No server calls, so that the fuzzer
 * (tests/fuzz/fuzz_module_args.c) runs it alone. Every error RedisBloom has
 * a text for is RedisBloom's text, exactly (its users match on them:
 * "ERR bad error rate", "ERR (0 < error rate range < 1) ", BF.INSERT's
 * "Bad error rate", ...; FORMATS.md section 6.1); bloomkit's own limits
 * (a rate above 0.5, say) quote the value as it was given.
 */
#ifndef BKM_ARGS_H
#define BKM_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "bloomkit.h"

/* One argument: bytes and length (may hold NUL bytes). */
typedef struct bkm_arg {
    const char *p;
    size_t n;
} bkm_arg;

/* Module arguments (MODULE LOAD path [NAME VALUE]...). */
typedef struct bkm_settings {
    double error_rate;        /* ERROR_RATE: BF.ADD/INSERT's default (0.01) */
    uint64_t capacity;        /* INITIAL_SIZE: their default capacity (100) */
    uint64_t expansion;       /* EXPANSION: their default growth (2) */
    uint64_t max_bytes;       /* MAX_BYTES: the most one filter may hold (512M) */
    bk_config bf_base;        /* BF_CONFIG: config text under BF-made filters ("") */
    uint64_t sweep_ms;        /* SWEEP_MS: window filters' sweep period, 0 = none (1000) */
    uint64_t loads_max_bytes; /* LOADS_MAX_BYTES: unfinished BF.LOADCHUNKs together (MAX_BYTES) */
    uint64_t load_timeout_ms; /* LOAD_TIMEOUT_MS: an unfinished load idle this long goes (60000) */
    uint64_t cf_max_expansions; /* CF_MAX_EXPANSIONS: a cuckoo filter of this many sub-filters
                                 * takes no more inserts (RedisBloom's, 32) */
    int new_keys_redisbloom;    /* NEW_KEYS: 0 bloomkit (BF.* makes bloomkit's keyed filters), 1
                                 * redisbloom (RedisBloom's chains, which RedisBloom can load) */
    int named_bf; /* MODULE_NAME: 0 bloomkit, 1 bf (MODULE LIST shows RedisBloom's name) */
} bkm_settings;

/* Defaults, then the NAME VALUE pairs of args[0..n). 0, or -1 with a message
 * in err. */
int bkm_settings_parse(bkm_settings *s, const bkm_arg *args, size_t n, char *err, size_t errlen);

/* Options of BF.RESERVE and BF.INSERT, as given. */
typedef struct bkm_bf_opts {
    double error_rate;
    uint64_t capacity;
    uint64_t expansion;
    int has_expansion;
    int nocreate;
    int nonscaling;
    size_t items; /* BF.INSERT: index in args of the first item */
} bkm_bf_opts;

/* What a parse says besides success. */
#define BKM_ARGS_OK    0
#define BKM_ARGS_ERROR (-1) /* err holds the reply */
#define BKM_ARGS_ARITY (-2) /* reply with the server's wrong-number-of-arguments */

/* BF.RESERVE's args from the key on: key error_rate capacity [EXPANSION n]
 * [NONSCALING], as RedisBloom reads them: EXPANSION and NONSCALING are
 * found anywhere (the key too), other words pass. */
int bkm_parse_reserve(const bkm_settings *s, const bkm_arg *args, size_t n, bkm_bf_opts *o,
                      char *err, size_t errlen);

/* BF.INSERT's args after the key: [CAPACITY c] [ERROR e] [EXPANSION n] [NOCREATE]
 * [NONSCALING] ITEMS item... (o->items indexes the first item; n > o->items),
 * options told apart by their letters as RedisBloom does. */
int bkm_parse_insert(const bkm_settings *s, const bkm_arg *args, size_t n, bkm_bf_opts *o,
                     char *err, size_t errlen);

/* The config of a filter BF.* creates with o: s->bf_base, then variant
 * (standard when nonscaling, else scalable), capacity, fpr and growth. 0, or
 * -1 with the reply in err ("ERR bad argument: growth: ..."). */
int bkm_bf_config(const bkm_settings *s, const bkm_bf_opts *o, bk_config *cfg, char *err,
                  size_t errlen);

/* Strict numbers: the whole argument, no NUL byte, no space; finite. 0 or -1. */
int bkm_parse_u64(bkm_arg a, uint64_t *out);
int bkm_parse_i64(bkm_arg a, int64_t *out);
int bkm_parse_double(bkm_arg a, double *out);

/* Case-insensitive equality of an argument and a C string. */
int bkm_arg_is(bkm_arg a, const char *word);

#endif
