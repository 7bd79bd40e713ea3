/*
 * args.c - module arguments and BF.* options (args.h).
 */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_BYTES ((uint64_t)512 << 20)
#define KNOWN                                                                                      \
    "ERROR_RATE, INITIAL_SIZE, EXPANSION, MAX_BYTES, BF_CONFIG, SWEEP_MS, LOADS_MAX_BYTES, "       \
    "LOAD_TIMEOUT_MS, CF_MAX_EXPANSIONS, NEW_KEYS, MODULE_NAME"

/* A NUL-terminated copy of a short argument for strto*: refuses NUL bytes,
 * spaces and anything longer than a number can be. */
static int number_text(bkm_arg a, char *buf, size_t cap)
{
    if (a.n == 0 || a.n >= cap)
        return -1;
    for (size_t i = 0; i < a.n; i++)
        if (a.p[i] == '\0' || a.p[i] == ' ' || a.p[i] == '\t' || a.p[i] == '\n' || a.p[i] == '\r' ||
            a.p[i] == '\f' || a.p[i] == '\v')
            return -1;
    memcpy(buf, a.p, a.n);
    buf[a.n] = '\0';
    return 0;
}

int bkm_parse_i64(bkm_arg a, int64_t *out)
{
    char buf[32], *end;
    if (number_text(a, buf, sizeof buf) != 0)
        return -1;
    errno = 0;
    const long long v = strtoll(buf, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int bkm_parse_u64(bkm_arg a, uint64_t *out)
{
    int64_t v;
    if (bkm_parse_i64(a, &v) != 0 || v < 0)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int bkm_parse_double(bkm_arg a, double *out)
{
    char buf[64], *end;
    if (number_text(a, buf, sizeof buf) != 0)
        return -1;
    errno = 0;
    const double v = strtod(buf, &end);
    if (*end || !isfinite(v) || (errno == ERANGE && v != 0.0))
        return -1;
    *out = v;
    return 0;
}

int bkm_arg_is(bkm_arg a, const char *word)
{
    const size_t n = strlen(word);
    if (a.n != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = a.p[i];
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        if (c != word[i])
            return 0;
    }
    return 1;
}

static int fail(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "%s", msg);
    return BKM_ARGS_ERROR;
}

/* A config value as text, so that bk_config_set checks it against the one
 * table of ranges. */
static int set_key(bk_config *cfg, const char *key, bkm_arg v, char *err, size_t errlen)
{
    char buf[256];
    if (v.n >= sizeof buf || memchr(v.p, '\0', v.n))
        return snprintf(err, errlen, "a value of %s is at most %zu bytes, with no NUL byte", key,
                        sizeof buf - 1),
               -1;
    memcpy(buf, v.p, v.n);
    buf[v.n] = '\0';
    return bk_config_set(cfg, key, buf, err, errlen) == BK_OK ? 0 : -1;
}

/* A size setting (MAX_BYTES, LOADS_MAX_BYTES): bytes with k, M or G, as
 * max_bytes in config text takes them; not 0. */
static int parse_bytes(bkm_arg name, bkm_arg v, uint64_t *out, char *err, size_t errlen)
{
    bk_config probe;
    bk_config_init(&probe);
    probe.variant = BK_VARIANT_SCALABLE;
    char why[200];
    if (set_key(&probe, "max_bytes", v, why, sizeof why) != 0 || probe.max_bytes == 0)
        return snprintf(err, errlen, "%.*s: a size in bytes, with k, M or G (%s)", (int)name.n,
                        name.p, probe.max_bytes == 0 ? "0 is no filter at all" : why),
               -1;
    *out = probe.max_bytes;
    return 0;
}

/* long: one branch per module argument, in the order docs/redis.md lists them. */
int bkm_settings_parse(bkm_settings *s, const bkm_arg *args, size_t n, char *err, size_t errlen)
{
    s->error_rate = 0.01;
    s->capacity = 100;
    s->expansion = 2;
    s->max_bytes = DEFAULT_MAX_BYTES;
    s->sweep_ms = 1000;
    s->loads_max_bytes = 0; /* MAX_BYTES, once it is known */
    s->load_timeout_ms = 60000;
    s->cf_max_expansions = 32;
    s->new_keys_redisbloom = 0;
    s->named_bf = 0;
    bk_config_init(&s->bf_base);
    if (n % 2)
        return snprintf(err, errlen,
                        "module arguments come in pairs NAME VALUE (" KNOWN "); %zu given", n),
               -1;
    for (size_t i = 0; i < n; i += 2) {
        const bkm_arg name = args[i], v = args[i + 1];
        if (bkm_arg_is(name, "ERROR_RATE")) {
            if (bkm_parse_double(v, &s->error_rate) != 0 || !(s->error_rate > 0) ||
                s->error_rate > BK_FPR_MAX)
                return snprintf(err, errlen, "ERROR_RATE: a number in (0, %g]", BK_FPR_MAX), -1;
        } else if (bkm_arg_is(name, "INITIAL_SIZE")) {
            if (bkm_parse_u64(v, &s->capacity) != 0 || s->capacity < 1 ||
                s->capacity > BK_CAPACITY_MAX)
                return snprintf(err, errlen, "INITIAL_SIZE: an integer in 1 .. 2^48"), -1;
        } else if (bkm_arg_is(name, "EXPANSION")) {
            if (bkm_parse_u64(v, &s->expansion) != 0 || (double)s->expansion < BK_GROWTH_MIN ||
                (double)s->expansion > BK_GROWTH_MAX)
                return snprintf(err, errlen, "EXPANSION: an integer in %g .. %g", BK_GROWTH_MIN,
                                BK_GROWTH_MAX),
                       -1;
        } else if (bkm_arg_is(name, "MAX_BYTES") || bkm_arg_is(name, "LOADS_MAX_BYTES")) {
            uint64_t bytes;
            if (parse_bytes(name, v, &bytes, err, errlen) != 0)
                return -1;
            *(bkm_arg_is(name, "MAX_BYTES") ? &s->max_bytes : &s->loads_max_bytes) = bytes;
        } else if (bkm_arg_is(name, "SWEEP_MS")) {
            if (bkm_parse_u64(v, &s->sweep_ms) != 0 || (s->sweep_ms && s->sweep_ms < 10) ||
                s->sweep_ms > 3600000)
                return snprintf(err, errlen, "SWEEP_MS: 0 (no sweep) or 10 .. 3600000 ms"), -1;
        } else if (bkm_arg_is(name, "LOAD_TIMEOUT_MS")) {
            if (bkm_parse_u64(v, &s->load_timeout_ms) != 0 || s->load_timeout_ms < 100 ||
                s->load_timeout_ms > 86400000)
                return snprintf(err, errlen, "LOAD_TIMEOUT_MS: 100 .. 86400000 ms"), -1;
        } else if (bkm_arg_is(name, "CF_MAX_EXPANSIONS")) {
            if (bkm_parse_u64(v, &s->cf_max_expansions) != 0 || s->cf_max_expansions < 1)
                return snprintf(err, errlen, "CF_MAX_EXPANSIONS must be an integer >= 1"), -1;
        } else if (bkm_arg_is(name, "NEW_KEYS")) {
            if (!bkm_arg_is(v, "BLOOMKIT") && !bkm_arg_is(v, "REDISBLOOM"))
                return snprintf(err, errlen,
                                "NEW_KEYS: bloomkit (BF.* makes bloomkit's keyed filters) or "
                                "redisbloom (RedisBloom's own, which it can load back)"),
                       -1;
            s->new_keys_redisbloom = bkm_arg_is(v, "REDISBLOOM");
        } else if (bkm_arg_is(name, "MODULE_NAME")) {
            if (!bkm_arg_is(v, "BLOOMKIT") && !bkm_arg_is(v, "BF"))
                return snprintf(err, errlen,
                                "MODULE_NAME: bloomkit, or bf (RedisBloom's name, for tools "
                                "that look for it in MODULE LIST)"),
                       -1;
            s->named_bf = bkm_arg_is(v, "BF");
        } else if (bkm_arg_is(name, "BF_CONFIG")) {
            char text[1024], why[200];
            if (v.n >= sizeof text || memchr(v.p, '\0', v.n))
                return snprintf(err, errlen, "BF_CONFIG: config text of at most %zu bytes",
                                sizeof text - 1),
                       -1;
            memcpy(text, v.p, v.n);
            text[v.n] = '\0';
            bk_config_init(&s->bf_base);
            if (bk_config_parse(&s->bf_base, text, why, sizeof why) != BK_OK)
                return snprintf(err, errlen, "BF_CONFIG: %s", why), -1;
        } else {
            return snprintf(err, errlen, "unknown module argument '%.*s' (known: " KNOWN ")",
                            (int)(name.n > 40 ? 40 : name.n), name.p),
                   -1;
        }
    }
    if (s->loads_max_bytes == 0)
        s->loads_max_bytes = s->max_bytes;
    return 0;
}

static void defaults(const bkm_settings *s, bkm_bf_opts *o)
{
    memset(o, 0, sizeof *o);
    o->error_rate = s->error_rate;
    o->capacity = s->capacity;
    o->expansion = s->expansion;
}

/* RedisBloom's texts for a bad value: BF.RESERVE's, or BF.INSERT's. */
typedef struct bad_texts {
    const char *rate, *rate_range, *capacity, *capacity_range, *expansion, *expansion_range;
} bad_texts;
static const bad_texts reserve_texts = {
    "ERR bad error rate", "ERR (0 < error rate range < 1) ",
    "ERR bad capacity",   "ERR (capacity should be larger than 0)",
    "ERR bad expansion",  "ERR expansion should be greater or equal to 1"};
/* BF.INSERT checks the ranges after every option is read (NULL: later) */
static const bad_texts insert_texts = {"Bad error rate", NULL, "Bad capacity", NULL,
                                       "Bad expansion",  NULL};

static int error_rate(bkm_arg a, bkm_bf_opts *o, const bad_texts *t, char *err, size_t errlen)
{
    if (bkm_parse_double(a, &o->error_rate) != 0)
        return fail(err, errlen, t->rate);
    if (t->rate_range && (!(o->error_rate > 0) || !(o->error_rate < 1)))
        return fail(err, errlen, t->rate_range);
    return BKM_ARGS_OK;
}

/* A count of at least 1 into *out: `bad` for a word that is no integer,
 * `range` for one below 1 (a negative integer parses, then is out of
 * range, as in RedisBloom). */
static int count(bkm_arg a, uint64_t *out, const char *bad, const char *range, char *err,
                 size_t errlen)
{
    int64_t signed_value;
    if (bkm_parse_u64(a, out) != 0) {
        if (bkm_parse_i64(a, &signed_value) != 0)
            return fail(err, errlen, bad);
        *out = 0; /* a negative integer: out of range, now or (range NULL) later */
    }
    return *out < 1 && range ? fail(err, errlen, range) : BKM_ARGS_OK;
}

static int capacity(bkm_arg a, bkm_bf_opts *o, const bad_texts *t, char *err, size_t errlen)
{
    return count(a, &o->capacity, t->capacity, t->capacity_range, err, errlen);
}

static int expansion(bkm_arg a, bkm_bf_opts *o, const bad_texts *t, char *err, size_t errlen)
{
    const int rc = count(a, &o->expansion, t->expansion, t->expansion_range, err, errlen);
    if (rc == BKM_ARGS_OK)
        o->has_expansion = 1;
    return rc;
}

/* The index of the first argument that is `word`, or n. */
static size_t index_of(const bkm_arg *args, size_t n, const char *word)
{
    size_t i = 0;
    while (i < n && !bkm_arg_is(args[i], word))
        i++;
    return i;
}

int bkm_parse_reserve(const bkm_settings *s, const bkm_arg *args, size_t n, bkm_bf_opts *o,
                      char *err, size_t errlen)
{
    defaults(s, o);
    if (n < 3 || n > 6)
        return BKM_ARGS_ARITY;
    int rc;
    if ((rc = error_rate(args[1], o, &reserve_texts, err, errlen)) != BKM_ARGS_OK ||
        (rc = capacity(args[2], o, &reserve_texts, err, errlen)) != BKM_ARGS_OK)
        return rc;
    /* RedisBloom looks for its two words anywhere, the key and the numbers
     * too, and lets any other word pass */
    const size_t exp = index_of(args, n, "EXPANSION");
    o->nonscaling = index_of(args, n, "NONSCALING") < n;
    if (exp < n) {
        if (exp + 1 == n)
            return fail(err, errlen, "ERR no expansion");
        if (o->nonscaling)
            return fail(err, errlen, "Nonscaling filters cannot expand");
        if ((rc = expansion(args[exp + 1], o, &reserve_texts, err, errlen)) != BKM_ARGS_OK)
            return rc;
    }
    return BKM_ARGS_OK;
}

/* Letter k of a, lower case, or 0 past its end. */
static unsigned letter(bkm_arg a, size_t k)
{
    const unsigned c = k < a.n ? (unsigned char)a.p[k] : 0u;
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

int bkm_parse_insert(const bkm_settings *s, const bkm_arg *args, size_t n, bkm_bf_opts *o,
                     char *err, size_t errlen)
{
    defaults(s, o);
    int rc;
    /* RedisBloom tells its options apart by their letters alone: CAPACITY,
     * ERROR (e, r), EXPANSION (e, anything else), NOCREATE (n, ?, c),
     * NONSCALING (n, anything else), ITEMS */
    for (size_t i = 0; i < n; i++) {
        const bkm_arg a = args[i];
        const unsigned c = letter(a, 0);
        if (c == 'i') {
            if (i + 1 == n)
                return BKM_ARGS_ARITY;
            o->items = i + 1;
            /* then, for an existing filter too, the values' ranges */
            if (!(o->error_rate > 0) || !(o->error_rate < 1) || o->capacity < 1 || o->expansion < 1)
                return fail(err, errlen, "Bad argument received");
            return BKM_ARGS_OK;
        } else if (c == 'n') {
            *(letter(a, 2) == 'c' ? &o->nocreate : &o->nonscaling) = 1;
        } else if (c == 'c' || c == 'e') {
            if (i + 1 == n)
                return BKM_ARGS_ARITY;
            const bkm_arg v = args[++i];
            rc = c == 'c'              ? capacity(v, o, &insert_texts, err, errlen)
                 : letter(a, 1) == 'r' ? error_rate(v, o, &insert_texts, err, errlen)
                                       : expansion(v, o, &insert_texts, err, errlen);
            if (rc != BKM_ARGS_OK)
                return rc;
        } else {
            return fail(err, errlen, "Unknown argument received");
        }
    }
    return BKM_ARGS_ARITY; /* no ITEMS */
}

int bkm_bf_config(const bkm_settings *s, const bkm_bf_opts *o, bk_config *cfg, char *err,
                  size_t errlen)
{
    *cfg = s->bf_base;
    cfg->variant = o->nonscaling ? BK_VARIANT_STANDARD : BK_VARIANT_SCALABLE;
    cfg->bits = 0;
    cfg->hashes = 0;
    /* The numbers as parsed, checked once against the key table: a value
     * bloomkit's filters do not take (RedisBloom takes EXPANSION 1, an
     * error rate over 0.5) makes the key RedisBloom's type instead. */
    cfg->capacity = o->capacity;
    cfg->fpr = o->error_rate;
    if (o->nonscaling)
        cfg->max_bytes = 0;
    else
        cfg->growth = (double)o->expansion;
    char why[200];
    if (bk_config_validate(cfg, why, sizeof why) != BK_OK)
        return snprintf(err, errlen, "ERR bad argument: %s", why), -1;
    return 0;
}
