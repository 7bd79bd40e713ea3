/*
 * settings.c - the module's settings (args.h): one table of every setting
 * with its server config name, its load-time argument, kind, range and
 * default; the load-time arguments read through it, and one setter that
 * both the arguments and CONFIG SET (configs.c) go through, so a range is
 * written once. No server calls: the fuzzer runs it alone.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "args.h"

#define MAX_BYTES_DEFAULT "512M"
#define U(field)          offsetof(bkm_settings, field)

/* Ranges are Redis 8's for its names (bf-*, cf-*), widened where bloomkit's
 * load-time argument already took more (INITIAL_SIZE up to 2^48,
 * CF_MAX_EXPANSIONS without bound), so that no server that loaded before
 * refuses to load now. */
const bkm_setting bkm_setting_rows[] = {
    {"bf-error-rate", "ERROR_RATE", BKM_SET_RATE, 0, 0, "0.01", U(error_rate), {NULL, NULL}, 0},
    {"bf-initial-size",
     "INITIAL_SIZE",
     BKM_SET_COUNT,
     1,
     (long long)BK_CAPACITY_MAX,
     "100",
     U(capacity),
     {NULL, NULL},
     0},
    {"bf-expansion-factor",
     "EXPANSION",
     BKM_SET_COUNT,
     0,
     32768,
     "2",
     U(expansion),
     {NULL, NULL},
     0},
    {"max-bytes",
     "MAX_BYTES",
     BKM_SET_BYTES,
     1,
     INT64_MAX,
     MAX_BYTES_DEFAULT,
     U(max_bytes),
     {NULL, NULL},
     0},
    {"bf-config", "BF_CONFIG", BKM_SET_TEXT, 0, 0, "", U(bf_base), {NULL, NULL}, 0},
    {"sweep-ms", "SWEEP_MS", BKM_SET_COUNT, 0, 3600000, "1000", U(sweep_ms), {NULL, NULL}, 0},
    {"loads-max-bytes",
     "LOADS_MAX_BYTES",
     BKM_SET_BYTES,
     1,
     INT64_MAX,
     MAX_BYTES_DEFAULT,
     U(loads_max_bytes),
     {NULL, NULL},
     0},
    {"load-timeout-ms",
     "LOAD_TIMEOUT_MS",
     BKM_SET_COUNT,
     100,
     86400000,
     "60000",
     U(load_timeout_ms),
     {NULL, NULL},
     0},
    {"cf-max-expansions",
     "CF_MAX_EXPANSIONS",
     BKM_SET_COUNT,
     1,
     INT64_MAX,
     "32",
     U(cf_max_expansions),
     {NULL, NULL},
     0},
    {"cf-bucket-size", NULL, BKM_SET_COUNT, 1, 255, "2", U(cf_bucket_size), {NULL, NULL}, 0},
    {"cf-initial-size", NULL, BKM_SET_COUNT, 2, 1048576, "1024", U(cf_capacity), {NULL, NULL}, 0},
    {"cf-max-iterations",
     NULL,
     BKM_SET_COUNT,
     1,
     65535,
     "20",
     U(cf_max_iterations),
     {NULL, NULL},
     0},
    {"cf-expansion-factor", NULL, BKM_SET_COUNT, 0, 32768, "1", U(cf_expansion), {NULL, NULL}, 0},
    {"new-keys",
     "NEW_KEYS",
     BKM_SET_CHOICE,
     0,
     1,
     "bloomkit",
     U(new_keys_redisbloom),
     {"bloomkit", "redisbloom"},
     0},
    {"module-name",
     "MODULE_NAME",
     BKM_SET_CHOICE,
     0,
     1,
     "bloomkit",
     U(named_bf),
     {"bloomkit", "bf"},
     1},
};
const size_t bkm_setting_count = sizeof bkm_setting_rows / sizeof *bkm_setting_rows;

/* Case-insensitive equality of an argument and a name. */
static int same_name(bkm_arg a, const char *name)
{
    if (!name || strlen(name) != a.n)
        return 0;
    for (size_t i = 0; i < a.n; i++)
        if (tolower((unsigned char)a.p[i]) != tolower((unsigned char)name[i]))
            return 0;
    return 1;
}

static uint64_t *count_of(bkm_settings *s, const bkm_setting *row)
{
    return (uint64_t *)(void *)((char *)s + row->offset);
}

static int *choice_of(bkm_settings *s, const bkm_setting *row)
{
    return (int *)(void *)((char *)s + row->offset);
}

/* A value as a C string: at most cap - 1 bytes, no NUL byte. */
static int text_of(bkm_arg v, char *buf, size_t cap)
{
    if (v.n >= cap || (v.n && memchr(v.p, '\0', v.n)))
        return -1;
    if (v.n)
        memcpy(buf, v.p, v.n);
    buf[v.n] = '\0';
    return 0;
}

/* A size in bytes with k, M or G, as max_bytes in config text takes it. */
static int parse_bytes(bkm_arg v, uint64_t *out, char *why, size_t whylen)
{
    bk_config probe;
    bk_config_init(&probe);
    probe.variant = BK_VARIANT_SCALABLE;
    char buf[64];
    if (text_of(v, buf, sizeof buf) != 0)
        return snprintf(why, whylen, "not a size"), -1;
    if (bk_config_set(&probe, "max_bytes", buf, why, whylen) != BK_OK)
        return -1;
    *out = probe.max_bytes;
    return 0;
}

/* What one setting is, for an error: "an integer in 1 .. 255". */
static void describe(const bkm_setting *row, char *out, size_t len)
{
    switch (row->kind) {
    case BKM_SET_RATE:
        snprintf(out, len, "a number in (0, 1)");
        break;
    case BKM_SET_COUNT:
        snprintf(out, len, "an integer in %lld .. %lld", row->min, row->max);
        break;
    case BKM_SET_BYTES:
        snprintf(out, len, "a size in bytes, with k, M or G, at least 1");
        break;
    case BKM_SET_TEXT:
        snprintf(out, len, "config text of at most %zu bytes",
                 sizeof((bkm_settings *)0)->bf_text - 1);
        break;
    case BKM_SET_CHOICE:
        snprintf(out, len, "%s or %s", row->choices[0], row->choices[1]);
        break;
    }
}

/* Settings that depend on each other: NULL, or what is wrong. */
static const char *incoherent(const bkm_settings *s)
{
    if (s->sweep_ms && s->sweep_ms < 10)
        return "sweep-ms is 0 (no sweep) or 10 .. 3600000";
    if (s->cf_capacity < 2 * s->cf_bucket_size)
        return "cf-initial-size must be at least twice cf-bucket-size";
    return NULL;
}

/* Set row's value in *s (a copy the caller keeps or drops). 0, or -1 with why. */
static int set_value(bkm_settings *s, const bkm_setting *row, bkm_arg v, char *why, size_t whylen)
{
    char text[sizeof s->bf_text];
    why[0] = '\0';
    switch (row->kind) {
    case BKM_SET_RATE: {
        double rate;
        if (bkm_parse_double(v, &rate) != 0 || !(rate > 0) || !(rate < 1) ||
            text_of(v, s->rate_text, sizeof s->rate_text) != 0)
            return -1;
        s->error_rate = rate;
        return 0;
    }
    case BKM_SET_COUNT:
    case BKM_SET_BYTES: {
        uint64_t n;
        const int bad =
            row->kind == BKM_SET_COUNT ? bkm_parse_u64(v, &n) : parse_bytes(v, &n, why, whylen);
        if (bad || n < (uint64_t)row->min || n > (uint64_t)row->max)
            return -1;
        *count_of(s, row) = n;
        return 0;
    }
    case BKM_SET_TEXT: {
        bk_config base;
        bk_config_init(&base);
        if (text_of(v, text, sizeof text) != 0 ||
            bk_config_parse(&base, text, why, whylen) != BK_OK)
            return -1;
        s->bf_base = base;
        memcpy(s->bf_text, text, strlen(text) + 1);
        return 0;
    }
    case BKM_SET_CHOICE:
        for (int i = 0; i < 2; i++)
            if (same_name(v, row->choices[i])) {
                *choice_of(s, row) = i;
                return 0;
            }
        return -1;
    }
    return -1;
}

int bkm_setting_set(bkm_settings *s, size_t i, bkm_arg v, char *err, size_t errlen)
{
    const bkm_setting *row = &bkm_setting_rows[i];
    bkm_settings next = *s;
    char why[200], what[120];
    if (set_value(&next, row, v, why, sizeof why) != 0) {
        describe(row, what, sizeof what);
        snprintf(err, errlen, "%s", why[0] ? why : what);
        return -1;
    }
    const char *wrong = incoherent(&next);
    if (wrong)
        return snprintf(err, errlen, "%s", wrong), -1;
    *s = next;
    return 0;
}

long long bkm_setting_number(const bkm_settings *s, size_t i)
{
    const bkm_setting *row = &bkm_setting_rows[i];
    const char *at = (const char *)s + row->offset;
    if (row->kind == BKM_SET_CHOICE) {
        int choice;
        memcpy(&choice, at, sizeof choice);
        return choice;
    }
    uint64_t count;
    memcpy(&count, at, sizeof count);
    return (long long)count;
}

const char *bkm_setting_text(const bkm_settings *s, size_t i)
{
    const bkm_setting *row = &bkm_setting_rows[i];
    return row->kind == BKM_SET_RATE   ? s->rate_text
           : row->kind == BKM_SET_TEXT ? s->bf_text
                                       : row->choices[bkm_setting_number(s, i) ? 1 : 0];
}

int bkm_settings_defaults(bkm_settings *s)
{
    memset(s, 0, sizeof *s);
    bk_config_init(&s->bf_base);
    char why[200];
    for (size_t i = 0; i < bkm_setting_count; i++) {
        const bkm_arg v = {bkm_setting_rows[i].fallback, strlen(bkm_setting_rows[i].fallback)};
        if (set_value(s, &bkm_setting_rows[i], v, why, sizeof why) != 0)
            return -1; /* a default out of its own range: the table's bug (tests catch it) */
    }
    return incoherent(s) ? -1 : 0;
}

int bkm_settings_parse(bkm_settings *s, const bkm_arg *args, size_t n, char *err, size_t errlen)
{
    if (bkm_settings_defaults(s) != 0)
        return snprintf(err, errlen, "the module's defaults do not hold"), -1;
    int loads_given = 0;
    if (n % 2)
        return snprintf(err, errlen, "module arguments come in pairs NAME VALUE; %zu given", n), -1;
    for (size_t i = 0; i < n; i += 2) {
        size_t k = 0;
        while (k < bkm_setting_count && !same_name(args[i], bkm_setting_rows[k].arg) &&
               !same_name(args[i], bkm_setting_rows[k].name))
            k++;
        if (k == bkm_setting_count)
            return snprintf(err, errlen,
                            "unknown module argument '%.*s' (docs/redis.md lists the settings)",
                            (int)(args[i].n > 40 ? 40 : args[i].n), args[i].p),
                   -1;
        char why[300];
        if (bkm_setting_set(s, k, args[i + 1], why, sizeof why) != 0)
            return snprintf(err, errlen, "%.*s: %s", (int)(args[i].n > 40 ? 40 : args[i].n),
                            args[i].p, why),
                   -1;
        loads_given |= bkm_setting_rows[k].offset == U(loads_max_bytes);
    }
    if (!loads_given) /* LOADS_MAX_BYTES defaults to MAX_BYTES */
        s->loads_max_bytes = s->max_bytes;
    return 0;
}
