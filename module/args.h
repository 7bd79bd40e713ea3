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

/* The module's settings: its load-time arguments (MODULE LOAD path [NAME
 * VALUE]...) and, under the same names, server configs (configs.c).
 * bkm_setting_rows lists them; docs/redis.md tells what each means. */
typedef struct bkm_settings {
    double error_rate;          /* bf-error-rate: BF.ADD/INSERT's default */
    uint64_t capacity;          /* bf-initial-size: their default capacity */
    uint64_t expansion;         /* bf-expansion-factor: their growth, 0 = non-scaling */
    uint64_t max_bytes;         /* max-bytes: the most one filter may hold */
    bk_config bf_base;          /* bf-config: config text under BF-made filters */
    uint64_t sweep_ms;          /* sweep-ms: window filters' sweep period, 0 = none */
    uint64_t loads_max_bytes;   /* loads-max-bytes: unfinished BF.LOADCHUNKs together */
    uint64_t load_timeout_ms;   /* load-timeout-ms: an unfinished load idle this long goes */
    uint64_t cf_max_expansions; /* cf-max-expansions: a cuckoo filter of this many
                                 * sub-filters takes no more inserts */
    uint64_t cf_bucket_size;    /* cf-bucket-size: what CF.* makes a missing key with */
    uint64_t cf_capacity;       /* cf-initial-size */
    uint64_t cf_max_iterations; /* cf-max-iterations */
    uint64_t cf_expansion;      /* cf-expansion-factor */
    int new_keys_redisbloom;    /* new-keys: 0 bloomkit (BF.* makes bloomkit's keyed filters), 1
                                 * redisbloom (RedisBloom's chains, which RedisBloom can load) */
    int named_bf;       /* module-name: 0 bloomkit, 1 bf (MODULE LIST shows RedisBloom's name) */
    char rate_text[32]; /* bf-error-rate as given */
    char bf_text[1024]; /* bf-config as given */
} bkm_settings;

/* A setting's kind: how its value is written. */
typedef enum bkm_setting_kind {
    BKM_SET_RATE,   /* a number in (0, 1) */
    BKM_SET_COUNT,  /* an integer in min .. max */
    BKM_SET_BYTES,  /* a size in bytes, k, M or G, in min .. max */
    BKM_SET_TEXT,   /* config text */
    BKM_SET_CHOICE, /* one of two words */
} bkm_setting_kind;

/* One setting: its server config name, its load-time argument (NULL: the
 * config name only), kind, range, default (as text), where it lives in
 * bkm_settings, its two words (CHOICE), and whether it is fixed at load. */
typedef struct bkm_setting {
    const char *name;
    const char *arg;
    bkm_setting_kind kind;
    long long min, max;
    const char *fallback;
    size_t offset;
    const char *choices[2];
    int immutable;
} bkm_setting;

extern const bkm_setting bkm_setting_rows[];
extern const size_t bkm_setting_count;

/* Every setting to its default: 0 (-1 only if the table were wrong). */
int bkm_settings_defaults(bkm_settings *s);

/* Defaults, then the NAME VALUE pairs of args[0..n) (a load-time name or a
 * config name, in any case). 0, or -1 with a message in err. */
int bkm_settings_parse(bkm_settings *s, const bkm_arg *args, size_t n, char *err, size_t errlen);

/* Set setting i of *s from its text (a CHOICE by its word): 0, or -1 with
 * what was wrong in err ("an integer in 1 .. 255", without the setting's
 * name) and *s unchanged (a value out of range, or settings that would not
 * fit together). */
int bkm_setting_set(bkm_settings *s, size_t i, bkm_arg v, char *err, size_t errlen);

/* Setting i's value: a number (COUNT, BYTES, CHOICE's index), or text
 * (RATE, TEXT, CHOICE's word; owned by *s or the table). */
long long bkm_setting_number(const bkm_settings *s, size_t i);
const char *bkm_setting_text(const bkm_settings *s, size_t i);

/* Options of BF.RESERVE and BF.INSERT, as given. */
typedef struct bkm_bf_opts {
    double error_rate;
    uint64_t capacity;
    uint64_t expansion;
    int has_expansion;
    int nocreate;
    int nonscaling;
    int reserved; /* BF.RESERVE: a count is known */
    size_t items; /* BF.INSERT: index in args of the first item */
} bkm_bf_opts;

/* The options of a filter BF.* makes with the settings' defaults (a
 * bf-expansion-factor of 0 makes it non-scaling). */
void bkm_bf_defaults(const bkm_settings *s, bkm_bf_opts *o);

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

/* The config of a filter BF.* creates with o: s->bf_base, then variant,
 * capacity, fpr and growth. The variant: standard when nonscaling; a
 * scalable chain for BF.RESERVE (a count known: its first slice is a Bloom
 * array of RedisBloom's size); else, for a key BF.ADD, BF.MADD or
 * BF.INSERT makes, the expandable filter (one table that doubles: a lookup
 * costs one home however large it grows), unless bf-config names a
 * growing variant or states a key only chains take (layout: a scalable
 * chain, as asked). 0, or -1 with the reply in err ("ERR bad argument:
 * growth: ..."). */
int bkm_bf_config(const bkm_settings *s, const bkm_bf_opts *o, bk_config *cfg, char *err,
                  size_t errlen);

/* Strict numbers: the whole argument, no NUL byte, no space; finite. 0 or -1. */
int bkm_parse_u64(bkm_arg a, uint64_t *out);
int bkm_parse_i64(bkm_arg a, int64_t *out);
int bkm_parse_double(bkm_arg a, double *out);

/* Case-insensitive equality of an argument and a C string. */
int bkm_arg_is(bkm_arg a, const char *word);

#endif
