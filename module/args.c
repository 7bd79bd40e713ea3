/*
 * args.c - module arguments and BF.* options (args.h).
 */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void bkm_bf_defaults(const bkm_settings *s, bkm_bf_opts *o)
{
    memset(o, 0, sizeof *o);
    o->error_rate = s->error_rate;
    o->capacity = s->capacity;
    /* bf-expansion-factor 0: filters made without EXPANSION do not scale */
    o->expansion = s->expansion ? s->expansion : 2;
    o->nonscaling = s->expansion == 0;
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
    bkm_bf_defaults(s, o);
    if (n < 3 || n > 6)
        return BKM_ARGS_ARITY;
    int rc;
    if ((rc = error_rate(args[1], o, &reserve_texts, err, errlen)) != BKM_ARGS_OK ||
        (rc = capacity(args[2], o, &reserve_texts, err, errlen)) != BKM_ARGS_OK)
        return rc;
    /* RedisBloom looks for its two words anywhere, the key and the numbers
     * too, and lets any other word pass */
    const size_t exp = index_of(args, n, "EXPANSION");
    o->nonscaling = index_of(args, n, "NONSCALING") < n || (o->nonscaling && exp == n);
    if (exp < n) {
        if (exp + 1 == n)
            return fail(err, errlen, "ERR no expansion");
        if (o->nonscaling)
            return fail(err, errlen, "Nonscaling filters cannot expand");
        if ((rc = expansion(args[exp + 1], o, &reserve_texts, err, errlen)) != BKM_ARGS_OK)
            return rc;
    }
    o->reserved = 1;
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
    bkm_bf_defaults(s, o);
    int rc, said_nonscaling = 0;
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
            said_nonscaling |= letter(a, 2) != 'c';
        } else if (c == 'c' || c == 'e') {
            if (i + 1 == n)
                return BKM_ARGS_ARITY;
            const bkm_arg v = args[++i];
            rc = c == 'c'              ? capacity(v, o, &insert_texts, err, errlen)
                 : letter(a, 1) == 'r' ? error_rate(v, o, &insert_texts, err, errlen)
                                       : expansion(v, o, &insert_texts, err, errlen);
            if (rc != BKM_ARGS_OK)
                return rc;
            if (c == 'e' && letter(a, 1) != 'r' && s->expansion == 0 && !said_nonscaling)
                o->nonscaling = 0; /* EXPANSION given: it scales */
        } else {
            return fail(err, errlen, "Unknown argument received");
        }
    }
    return BKM_ARGS_ARITY; /* no ITEMS */
}

/* The variant of a filter BF.* makes with o, over base (bkm_bf_config). */
static bk_variant variant_for(const bk_config *base, const bkm_bf_opts *o)
{
    if (o->nonscaling)
        return BK_VARIANT_STANDARD;
    if (base->variant == BK_VARIANT_SCALABLE || base->variant == BK_VARIANT_EXPANDABLE)
        return base->variant; /* bf-config names it */
    if (o->reserved)
        return BK_VARIANT_SCALABLE;
    bk_config grown = *base;
    return bk_config_set(&grown, "variant", "expandable", NULL, 0) == BK_OK &&
                   bk_config_validate(&grown, NULL, 0) == BK_OK
               ? BK_VARIANT_EXPANDABLE
               : BK_VARIANT_SCALABLE; /* bf-config states a key only chains take */
}

int bkm_bf_config(const bkm_settings *s, const bkm_bf_opts *o, bk_config *cfg, char *err,
                  size_t errlen)
{
    *cfg = s->bf_base;
    char why[200];
    const bk_variant v = variant_for(cfg, o);
    /* keys still at the base variant's defaults take the new one's */
    if (v != cfg->variant &&
        bk_config_set(cfg, "variant", bk_variant_name(v), why, sizeof why) != BK_OK)
        return snprintf(err, errlen, "ERR bad argument: %s", why), -1;
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
    if (bk_config_validate(cfg, why, sizeof why) != BK_OK)
        return snprintf(err, errlen, "ERR bad argument: %s", why), -1;
    return 0;
}
