/*
 * config.c - the config text: `key=value` pairs separated by spaces, commas or
 * newlines, `#` to end of line is a comment, blanks allowed around '='.
 *
 * The parser works on a private copy of the defaults and writes the caller's
 * bk_config only when the whole text is valid, so a bad text never leaves a
 * half-applied configuration. Every value is validated against the limits in
 * bloomkit.h (BK_CAPACITY_MAX ...), and every error names the key, the value and
 * the allowed range, with the line number for multi-line texts.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest value we accept; longer is an error rather than a silent cut. */
#define VALUE_MAX 128
/* Longest piece of an offending value quoted back in an error message. */
#define QUOTE_MAX 40

static const char *const variant_names[] = {"standard", "counting", "scalable"};
static const char *const hash_names[] = {"siphash24", "siphash13"};
static const char *const layout_names[] = {"classic", "blocked"};

const char *bk_variant_name(bk_variant v)
{
    return (unsigned)v < sizeof variant_names / sizeof *variant_names ? variant_names[v] : NULL;
}

const char *bk_hash_name(bk_hash_alg h)
{
    return (unsigned)h < sizeof hash_names / sizeof *hash_names ? hash_names[h] : NULL;
}

const char *bk_layout_name(bk_layout l)
{
    return (unsigned)l < sizeof layout_names / sizeof *layout_names ? layout_names[l] : NULL;
}

void bk_config_init(bk_config *cfg)
{
    if (!cfg)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->variant = BK_VARIANT_STANDARD;
    cfg->capacity = 1000000;
    cfg->fpr = 0.01;
    cfg->growth = 2.0;
    cfg->tightening = 0.5;
    cfg->hash = BK_HASH_SIPHASH24;
    cfg->layout = BK_LAYOUT_CLASSIC;
    cfg->has_key = 0;
}

void bk_errorf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int bk_config_validate(const bk_config *c, char *err, size_t errlen)
{
    if (!bk_variant_name(c->variant)) {
        bk_errorf(err, errlen, "variant: must be standard, counting or scalable");
        return BK_ECONFIG;
    }
    if (c->capacity < 1 || c->capacity > BK_CAPACITY_MAX) {
        bk_errorf(err, errlen, "capacity: must be an integer in 1 .. 2^48 (281474976710656)");
        return BK_ECONFIG;
    }
    if (!(c->fpr > 0.0 && c->fpr <= BK_FPR_MAX)) {
        bk_errorf(err, errlen, "fpr: must be a number in (0, 0.5]");
        return BK_ECONFIG;
    }
    if (!(c->growth >= BK_GROWTH_MIN && c->growth <= BK_GROWTH_MAX)) {
        bk_errorf(err, errlen, "growth: must be a number in [2, 16]");
        return BK_ECONFIG;
    }
    if (!(c->tightening >= BK_TIGHTENING_MIN && c->tightening <= BK_TIGHTENING_MAX)) {
        bk_errorf(err, errlen, "tightening: must be a number in [0.1, 0.95]");
        return BK_ECONFIG;
    }
    if (!bk_hash_name(c->hash)) {
        bk_errorf(err, errlen, "hash: must be siphash24 or siphash13");
        return BK_ECONFIG;
    }
    if (!bk_layout_name(c->layout)) {
        bk_errorf(err, errlen, "layout: must be classic or blocked");
        return BK_ECONFIG;
    }
    return BK_OK;
}

/* --- value parsers: 0 on success ------------------------------------------ */

/* A plain decimal number: digits with at most one '.', an optional exponent.
 * Rejects signs, "nan", "inf", hex floats and trailing junk up front, so that
 * strtod's leniency never lets them through. */
static int parse_real(const char *s, double *out)
{
    if (!(isdigit((unsigned char)s[0]) || (s[0] == '.' && isdigit((unsigned char)s[1]))))
        return -1;
    for (const char *p = s; *p; p++)
        if (!(isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' || *p == '-' ||
              *p == '+'))
            return -1;
    char *end;
    errno = 0;
    const double v = strtod(s, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* A whole number: decimal digits, or a real in exponent form equal to an
 * integer (1e6). */
static int parse_count(const char *s, uint64_t *out)
{
    size_t digits = strspn(s, "0123456789");
    if (digits > 0 && s[digits] == '\0') {
        char *end;
        errno = 0;
        const unsigned long long v = strtoull(s, &end, 10);
        if (errno == ERANGE || *end != '\0')
            return -1;
        *out = (uint64_t)v;
        return 0;
    }
    double d;
    if (parse_real(s, &d) != 0 || d != floor(d) || d > (double)BK_CAPACITY_MAX)
        return -1;
    *out = (uint64_t)d;
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int parse_hexkey(const char *s, uint8_t key[16])
{
    if (strlen(s) != 32)
        return -1;
    for (int i = 0; i < 16; i++) {
        const int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        key[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

static int parse_name(const char *s, const char *const *names, size_t n, int *out)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (int)i;
            return 0;
        }
    return -1;
}

/* --- keys ----------------------------------------------------------------- */

/* Apply one key=value to c. Returns 0, or -1 with the key's allowed range in
 * *range, or -2 for an unknown key. */
static int apply(bk_config *c, const char *key, const char *val, const char **range)
{
    int idx;
    if (strcmp(key, "variant") == 0) {
        *range = "one of standard, counting, scalable";
        if (parse_name(val, variant_names, 3, &idx) != 0)
            return -1;
        c->variant = (bk_variant)idx;
    } else if (strcmp(key, "capacity") == 0) {
        *range = "an integer in 1 .. 2^48 (281474976710656)";
        if (parse_count(val, &c->capacity) != 0 || c->capacity < 1 || c->capacity > BK_CAPACITY_MAX)
            return -1;
    } else if (strcmp(key, "fpr") == 0) {
        *range = "a number in (0, 0.5]";
        if (parse_real(val, &c->fpr) != 0 || !(c->fpr > 0.0 && c->fpr <= BK_FPR_MAX))
            return -1;
    } else if (strcmp(key, "growth") == 0) {
        *range = "a number in [2, 16]";
        if (parse_real(val, &c->growth) != 0 ||
            !(c->growth >= BK_GROWTH_MIN && c->growth <= BK_GROWTH_MAX))
            return -1;
    } else if (strcmp(key, "tightening") == 0) {
        *range = "a number in [0.1, 0.95]";
        if (parse_real(val, &c->tightening) != 0 ||
            !(c->tightening >= BK_TIGHTENING_MIN && c->tightening <= BK_TIGHTENING_MAX))
            return -1;
    } else if (strcmp(key, "hash") == 0) {
        *range = "one of siphash24, siphash13";
        if (parse_name(val, hash_names, 2, &idx) != 0)
            return -1;
        c->hash = (bk_hash_alg)idx;
    } else if (strcmp(key, "layout") == 0) {
        *range = "one of classic, blocked";
        if (parse_name(val, layout_names, 2, &idx) != 0)
            return -1;
        c->layout = (bk_layout)idx;
    } else if (strcmp(key, "key") == 0) {
        *range = "exactly 32 hexadecimal digits (16 bytes)";
        if (parse_hexkey(val, c->key) != 0)
            return -1;
        c->has_key = 1;
    } else {
        return -2;
    }
    return 0;
}

static const char *const known_keys[] = {"variant",    "capacity", "fpr",    "growth",
                                         "tightening", "hash",     "layout", "key"};
#define NKEYS (sizeof known_keys / sizeof *known_keys)

static int is_sep(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == ',';
}
static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}
static int is_keych(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_' || ch == '-';
}

static int key_index(const char *key)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(key, known_keys[i]) == 0)
            return (int)i;
    return -1;
}

/* Apply text to *base (valid) and, if all of it is valid, store the result in
 * *cfg. The shared body of bk_config_parse and bk_config_parse_over. */
static int parse_text(bk_config *cfg, const bk_config *base, const char *text, char *err,
                      size_t errlen, int *seen_out)
{
    bk_config c = *base;
    int seen[NKEYS] = {0};
    unsigned line = 1;
    const char *p = text;

    for (;;) {
        while (is_sep(*p) || *p == '#') {
            if (*p == '#')
                while (*p && *p != '\n')
                    p++;
            else if (*p++ == '\n')
                line++;
        }
        if (*p == '\0')
            break;

        char key[VALUE_MAX + 1], val[VALUE_MAX + 1];
        size_t klen = 0, vlen = 0;
        while (is_keych(*p) && klen < VALUE_MAX)
            key[klen++] = *p++;
        key[klen] = '\0';
        if (klen == 0) {
            bk_errorf(err, errlen, "line %u: unexpected character '%c' (expected key=value)", line,
                      *p);
            return BK_ECONFIG;
        }
        while (is_blank(*p))
            p++;
        if (*p != '=') {
            bk_errorf(err, errlen, "line %u: '%.*s' must be followed by '=value'", line, QUOTE_MAX,
                      key);
            return BK_ECONFIG;
        }
        p++;
        while (is_blank(*p))
            p++;
        while (*p && !is_sep(*p) && *p != '#') {
            if (vlen == VALUE_MAX) {
                bk_errorf(err, errlen, "line %u: %.*s: value longer than %d characters", line,
                          QUOTE_MAX, key, VALUE_MAX);
                return BK_ECONFIG;
            }
            val[vlen++] = *p++;
        }
        val[vlen] = '\0';

        const int ki = key_index(key);
        if (ki < 0) {
            bk_errorf(err, errlen,
                      "line %u: unknown key '%.*s' (known: variant, capacity, fpr, growth, "
                      "tightening, hash, layout, key)",
                      line, QUOTE_MAX, key);
            return BK_ECONFIG;
        }
        if (seen[ki]++) {
            bk_errorf(err, errlen, "line %u: duplicate key '%s'", line, key);
            return BK_ECONFIG;
        }
        const char *range = "";
        if (vlen == 0) {
            apply(&c, key, "", &range);
            bk_errorf(err, errlen, "line %u: %s: empty value (allowed: %s)", line, key, range);
            return BK_ECONFIG;
        }
        if (apply(&c, key, val, &range) != 0) {
            bk_errorf(err, errlen, "line %u: %s: invalid value '%.*s%s' (allowed: %s)", line, key,
                      QUOTE_MAX, val, vlen > QUOTE_MAX ? "..." : "", range);
            return BK_ECONFIG;
        }
    }
    *cfg = c;
    if (seen_out)
        memcpy(seen_out, seen, sizeof seen);
    return BK_OK;
}

int bk_config_parse(bk_config *cfg, const char *text, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!cfg || !text) {
        bk_errorf(err, errlen, "config: no configuration or text given");
        return BK_EINVAL;
    }
    bk_config defaults;
    bk_config_init(&defaults);
    return parse_text(cfg, &defaults, text, err, errlen, NULL);
}

int bk_config_parse_over(bk_config *cfg, const char *text, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!cfg || !text) {
        bk_errorf(err, errlen, "config: no configuration or text given");
        return BK_EINVAL;
    }
    if (bk_config_validate(cfg, err, errlen) != BK_OK)
        return BK_EINVAL;
    const bk_config base = *cfg;
    return parse_text(cfg, &base, text, err, errlen, NULL);
}

int bk_config_set(bk_config *cfg, const char *key, const char *value, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!cfg || !key || !value || bk_config_validate(cfg, NULL, 0) != BK_OK) {
        bk_errorf(err, errlen, "config: no configuration, key or value, or an invalid one");
        return BK_EINVAL;
    }
    if (key_index(key) < 0) {
        bk_errorf(err, errlen,
                  "unknown key '%.*s' (known: variant, capacity, fpr, growth, tightening, hash, "
                  "layout, key)",
                  QUOTE_MAX, key);
        return BK_ECONFIG;
    }
    bk_config c = *cfg;
    const char *range = "";
    const int bad = apply(&c, key, value, &range) != 0;
    if (bad || strlen(value) > VALUE_MAX) {
        const size_t n = strlen(value);
        bk_errorf(err, errlen, "%s: '%.*s%s' is not valid (allowed: %s)", key, QUOTE_MAX, value,
                  n > QUOTE_MAX ? "..." : "", range);
        return BK_ECONFIG;
    }
    *cfg = c;
    return BK_OK;
}

int bk_config_text_sets(const char *text, const char *key)
{
    const int ki = text && key ? key_index(key) : -1;
    int seen[NKEYS];
    bk_config base, out;
    bk_config_init(&base);
    if (ki < 0 || parse_text(&out, &base, text, NULL, 0, seen) != BK_OK)
        return 0;
    return seen[ki] != 0;
}

int bk_config_format(const bk_config *cfg, int include_key, char *buf, size_t buflen)
{
    if (!cfg || bk_config_validate(cfg, NULL, 0) != BK_OK || (!buf && buflen))
        return BK_EINVAL;
    char keyhex[2 * 16 + 1] = "";
    if (include_key && cfg->has_key)
        for (int i = 0; i < 16; i++)
            snprintf(keyhex + 2 * i, 3, "%02x", cfg->key[i]);
    const int n = snprintf(buf, buflen,
                           "variant=%s capacity=%llu fpr=%.17g growth=%.17g tightening=%.17g "
                           "hash=%s layout=%s%s%s",
                           bk_variant_name(cfg->variant), (unsigned long long)cfg->capacity,
                           cfg->fpr, cfg->growth, cfg->tightening, bk_hash_name(cfg->hash),
                           bk_layout_name(cfg->layout), keyhex[0] ? " key=" : "", keyhex);
    return n < 0 ? BK_EINVAL : n;
}
