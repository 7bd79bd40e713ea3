/*
 * config.c - the configuration keys, and the config text: `key=value` pairs
 * separated by spaces, commas or newlines, `#` to end of line is a comment,
 * blanks allowed around '='.
 *
 * One table (`keys` below) lists every key: its name, its field of
 * bk_config, how its value reads (a name from a list, a count, a real, 32 hex
 * digits), its range and its default. Parsing, validation, defaults,
 * formatting back to text, comparison (bk_config_diff), every error message
 * and the public list of keys (bk_config_key) are derived from it; nothing
 * else in the library, the command or the binding lists the keys again. A
 * new key is one row; a new hash or layout is one name in its list. Which
 * variants take a key (beyond the rows marked KEY_EVERY), with what default
 * and what it means for them, each variant's descriptor says
 * (bk_variant_desc.keys): the variant names come from BK_VARIANT_LIST.
 *
 * The parser works on a private copy and writes the caller's bk_config only
 * when the whole text is valid, so a bad text never leaves a half-applied
 * configuration. Every error names the key, the value and the allowed range,
 * with the line number for multi-line texts.
 */
#include "config.h"
#include "../common/error.h"
#include "../common/hex.h"
#include "filter_impl.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest value we accept; longer is an error rather than a silent cut. */
#define VALUE_MAX 128
/* Longest piece of an offending value quoted back in an error message. */
#define QUOTE_MAX 40

static const char *const variant_names[] = {
#define BK_VARIANT_NAME_(NAME, name, number) [number] = #name,
    BK_VARIANT_LIST(BK_VARIANT_NAME_)
#undef BK_VARIANT_NAME_
};
static const char *const hash_names[] = {"siphash24", "siphash13", "xxh3", "murmur"};
static const char *const layout_names[] = {"classic", "blocked"};
static const char *const input_names[] = {"raw", "scrapy-redis", "url", "url-keep-query-order"};
#define NAMES(list) (list), sizeof(list) / sizeof *(list)

/* Enumerations are stored as int-sized fields. */
_Static_assert(sizeof(bk_variant) == sizeof(int) && sizeof(bk_hash_alg) == sizeof(int) &&
                   sizeof(bk_layout) == sizeof(int),
               "enum fields are read and written as int");

typedef enum { K_NAME, K_COUNT, K_REAL, K_HEX, K_DURATION, K_SIZE } key_kind;

typedef struct key_desc {
    const char *name;
    key_kind kind;
    size_t off;               /* offsetof(bk_config, field) */
    const char *const *names; /* K_NAME: the values, by enum order */
    unsigned nnames;
    double lo, hi; /* K_COUNT, K_REAL: the range; lo excluded when lo_open */
    int lo_open;
    const char *range; /* the allowed values, as errors say them (K_NAME: built) */
    const char *def;   /* the default, as text (NULL: none; the key is random) */
    const char *help;  /* one line for docs and --help: what it means for every variant that
                        * takes it (a variant's own note is its descriptor's) */
    unsigned flags;    /* KEY_EVERY, KEY_AUTO, KEY_WRITTEN, or 0 */
} key_desc;

/* Named sets of defaults (bk_config_preset), each a config text. */
static const struct {
    const char *name, *text;
} presets[] = {
    {"crawler", "variant=expandable capacity=1000000 fpr=0.0001"},
    {"chain", "variant=scalable tightening=0.85 layout=blocked"},
};

/* Where a key's value lives: a field of bk_config that 0.1.0 had, or for a
 * key added since, slot i of bk_config.more (a new key takes the next free
 * slot: bk_config keeps its layout, and test_config checks that no two keys
 * share one). */
#define FIELD(f) offsetof(bk_config, f)
#define MORE(i)  (offsetof(bk_config, more) + (size_t)(i) * sizeof(uint64_t))
/* Every variant takes the key; the others are taken by the variants whose
 * descriptors list them (bk_variant_desc.keys): stating one for another
 * variant is an error, and it is formatted for those only. */
#define KEY_EVERY 4u
/* The key's 0 asks the filter to choose (from the rate, say), and the filter
 * records its choice in its configuration: 0 is not written, and a 0 in the
 * configuration asked for matches any choice (bk_config_diff). */
#define KEY_AUTO 1u
/* A key of more[] whose 0 means something (rbcuckoo's expansion 0: never
 * grows): written whenever it applies. Only for keys of variants older
 * readers do not know, whose texts they refuse anyway. */
#define KEY_WRITTEN 2u

static const key_desc keys[] = {
    {"variant", K_NAME, FIELD(variant), NAMES(variant_names), 0, 0, 0, NULL, "standard",
     "the filter", KEY_EVERY},
    {"capacity", K_COUNT, FIELD(capacity), NULL, 0, 1, (double)BK_CAPACITY_MAX, 0,
     "an integer in 1 .. 2^48 (281474976710656)", "1000000", "keys expected", KEY_EVERY},
    {"fpr", K_REAL, FIELD(fpr), NULL, 0, 0.0, BK_FPR_MAX, 1, "a number in (0, 0.5]", "0.01",
     "the false-positive rate to keep", 0},
    {"growth", K_REAL, FIELD(growth), NULL, 0, BK_GROWTH_MIN, BK_GROWTH_MAX, 0,
     "a number in [2, 16]", "2", "each slice holds this many times the last", 0},
    {"tightening", K_REAL, FIELD(tightening), NULL, 0, BK_TIGHTENING_MIN, BK_TIGHTENING_MAX, 0,
     "a number in [0.1, 0.95]", "0.5", "each slice gets this share of the last's rate", 0},
    {"hash", K_NAME, FIELD(hash), NAMES(hash_names), 0, 0, 0, NULL, "siphash24",
     "the keyed hash: siphash24, siphash13 (faster), or xxh3 (fastest, trusted keys only)",
     KEY_EVERY},
    {"layout", K_NAME, FIELD(layout), NAMES(layout_names), 0, 0, 0, NULL, "classic",
     "where a key's probes fall: classic, or blocked (one cache line)", 0},
    {"key", K_HEX, FIELD(key), NULL, 0, 0, 0, 0, "exactly 32 hexadecimal digits (16 bytes)", NULL,
     "the SipHash key (default: 16 random bytes per filter)", KEY_EVERY},
    {"window", K_DURATION, FIELD(window_ms), NULL, 0, (double)BK_WINDOW_MS_MIN,
     (double)BK_WINDOW_MS_MAX, 0, "a whole number with a unit s, m, h or d, from 1s to 3650d", "1d",
     "how long a key is remembered (then forgotten)", 0},
    {"generations", K_COUNT, FIELD(generations), NULL, 0, BK_GENERATIONS_MIN, BK_GENERATIONS_MAX, 0,
     "an integer in 2 .. 64", "8", "spans the window is cut into", 0},
    {"refresh", K_COUNT, FIELD(refresh), NULL, 0, 0, 1, 0, "0 or 1", "0",
     "1 = seeing a key again renews it (a cache); 0 = it is forgotten a window after it was "
     "first added",
     0},
    {"max_bytes", K_SIZE, FIELD(max_bytes), NULL, 0, 0, (double)BK_MAX_BYTES_MAX, 0,
     "0 (no limit) or a size in bytes, with k, M or G for KiB, MiB, GiB (64M), up to 2^56", "0",
     "a ceiling on memory; growing past it fails with BK_EFULL", 0},
    {"bits", K_COUNT, FIELD(bits), NULL, 0, 0, (double)BK_BITS_MAX, 0,
     "0 (sized from capacity and fpr) or an integer in 1 .. 2^56", "0",
     "m pinned, the bits (counters) of the array, instead of fpr", 0},
    {"hashes", K_COUNT, FIELD(hashes), NULL, 0, 0, BK_HASHES_MAX, 0,
     "0 (the best k for bits and capacity) or an integer in 1 .. 2048", "0",
     "with bits, k pinned, the probes per key", 0},
    /* a cuckoo table's shape, chosen from fpr unless given */
    {"fingerprint", K_COUNT, MORE(0), NULL, 0, 0, 32, 0,
     "0 (chosen from fpr and bucket) or an integer in 1 .. 32", "0",
     "bits of a key's fingerprint; each bit more halves the rate", KEY_AUTO},
    {"bucket", K_COUNT, MORE(1), NULL, 0, 0, 8, 0, "0 (chosen from fpr) or an integer in 1 .. 8",
     "0", "fingerprints a bucket holds; each key has two buckets", KEY_AUTO},
    /* for the applications: the library carries it, the command and the
     * Scrapy filter make their keys by it */
    {"input", K_NAME, MORE(2), NAMES(input_names), 0, 0, 0, NULL, "raw",
     "what a key is: raw (the bytes given); url or url-keep-query-order (a line's canonical "
     "URL, its query sorted or kept in order: the command's --canonical-urls "
     "[--keep-query-order], which a filter made with it then applies by itself); or "
     "scrapy-redis (a request fingerprint as scrapy-redis makes it, its 40 hex digits held as "
     "20 bytes: a filter imported from scrapy-redis's set, whose Scrapy filter then "
     "fingerprints requests as scrapy-redis does)",
     KEY_EVERY},
    /* RedisBloom's parameters, as BF.RESERVE and CF.RESERVE take them */
    {"expansion", K_COUNT, MORE(3), NULL, 0, 0, (double)UINT32_MAX, 0,
     "an integer in 0 .. 4294967295 (rbchain: 1 or more; rbcuckoo: 0 .. 32768)", "2", NULL,
     KEY_WRITTEN},
    {"chain_options", K_COUNT, MORE(4), NULL, 0, 0, 15, 0, "an integer in 0 .. 15", "5",
     "RedisBloom's option bits, 1 links sized exactly, 2 capacity as log2 of bits, 4 the "
     "64-bit hash, 8 nonscaling (5: what BF.RESERVE makes; 13: with NONSCALING)",
     KEY_WRITTEN},
    {"bucket_size", K_COUNT, MORE(5), NULL, 0, 1, 255, 0, "an integer in 1 .. 255", "2",
     "8-bit fingerprints a bucket holds (BUCKETSIZE)", KEY_WRITTEN},
    {"iterations", K_COUNT, MORE(6), NULL, 0, 1, 65535, 0, "an integer in 1 .. 65535", "500",
     "evictions an add tries before the filter grows (MAXITERATIONS)", KEY_WRITTEN},
};
#define NKEYS (sizeof keys / sizeof *keys)

/* Field access through the table. */
static int *enum_at(bk_config *c, const key_desc *k)
{
    return (int *)(void *)((char *)c + k->off);
}
static int enum_of(const bk_config *c, const key_desc *k)
{
    return *(const int *)(const void *)((const char *)c + k->off);
}
static uint64_t *count_at(bk_config *c, const key_desc *k)
{
    return (uint64_t *)(void *)((char *)c + k->off);
}
static double *real_at(bk_config *c, const key_desc *k)
{
    return (double *)(void *)((char *)c + k->off);
}
static double real_of(const bk_config *c, const key_desc *k)
{
    return *(const double *)(const void *)((const char *)c + k->off);
}

/* The allowed values of k, for messages ("one of standard, counting, ..."). */
static const char *range_of(const key_desc *k, char *buf, size_t len)
{
    if (k->kind != K_NAME)
        return k->range;
    size_t at = (size_t)snprintf(buf, len, "one of ");
    for (unsigned i = 0; i < k->nnames && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", k->names[i]);
    return buf;
}

static const char *name_in(const char *const *names, unsigned n, int v)
{
    return v >= 0 && (unsigned)v < n ? names[v] : NULL;
}

const char *bk_variant_name(bk_variant v)
{
    return name_in(NAMES(variant_names), (int)v);
}

const char *bk_hash_name(bk_hash_alg h)
{
    return name_in(NAMES(hash_names), (int)h);
}

const char *bk_layout_name(bk_layout l)
{
    return name_in(NAMES(layout_names), (int)l);
}

/* --- value parsers: 0 on success ------------------------------------------ */

/* A plain decimal number: digits with at most one '.', an optional exponent.
 * Rejects signs, "nan", "inf", hex floats and trailing junk up front, so that
 * strtod's leniency never lets them through. A subnormal reads as itself
 * (strtod says ERANGE for it, yet it is exact enough, and format_real writes
 * such values: what a filter holds must read back); a value that overflows or
 * underflows to zero is refused. */
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
    if (*end != '\0' || !isfinite(v) || (errno == ERANGE && v == 0))
        return -1;
    *out = v;
    return 0;
}

/* A whole number: decimal digits, a real in exponent form equal to an
 * integer (1e6), or either with a decimal suffix k, M, G, T (bk_count_parse). */
static int parse_count(const char *s, uint64_t *out)
{
    size_t digits = strspn(s, "0123456789");
    if (digits > 0 && s[digits] == '\0') {
        char *end;
        errno = 0;
        const unsigned long long v = strtoull(s, &end, 10);
        if (errno == ERANGE || *end != '\0' || v > (unsigned long long)INT64_MAX)
            return -1;
        *out = (uint64_t)v;
        return 0;
    }
    static const char suffixes[] = "kMGT";
    const size_t n = strlen(s);
    const char *u = n > 1 ? strchr(suffixes, s[n - 1]) : NULL;
    double d, scale = 1;
    char body[VALUE_MAX + 1];
    if (u && *u) {
        if (n - 1 > VALUE_MAX || !isdigit((unsigned char)s[n - 2]))
            return -1;
        memcpy(body, s, n - 1);
        body[n - 1] = '\0';
        scale = pow(10, 3.0 * (double)(u - suffixes + 1));
        s = body;
    }
    if (parse_real(s, &d) != 0 || !(d >= 0) || !isdigit((unsigned char)s[0]))
        return -1;
    d *= scale;
    if (d != floor(d) || d > (double)INT64_MAX)
        return -1;
    *out = (uint64_t)d;
    return 0;
}

int bk_count_parse(const char *s, uint64_t *out)
{
    bk_call_begin();
    if (!s || !out)
        return bk_fail(BK_EINVAL, "count_parse: no text or output");
    uint64_t v;
    if (parse_count(s, &v) != 0)
        return bk_fail(BK_EINVAL,
                       "'%.*s' is not a count (a whole number: 1000000, 1e6 or 1M; k, M, G, T "
                       "are 10^3 .. 10^12)",
                       QUOTE_MAX, s);
    *out = v;
    return BK_OK;
}

/* A duration: a whole number and a unit, s m h or d ("30d"), in ms. */
static int parse_duration(const char *s, uint64_t *out_ms)
{
    static const struct {
        char unit;
        uint64_t ms;
    } units[] = {{'s', 1000}, {'m', 60000}, {'h', 3600000}, {'d', 86400000}};
    const size_t digits = strspn(s, "0123456789");
    if (digits == 0 || digits > 12 || s[digits] == '\0' || s[digits + 1] != '\0')
        return -1;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (s[digits] == units[i].unit) {
            *out_ms = strtoull(s, NULL, 10) * units[i].ms; /* 12 digits * 86400000 < 2^64 */
            return 0;
        }
    return -1;
}

/* A size: a whole number of bytes, or with k, M or G (KiB, MiB, GiB). */
static int parse_size(const char *s, uint64_t *out)
{
    const size_t digits = strspn(s, "0123456789");
    if (digits == 0 || digits > 15)
        return -1;
    const char *units = "kMG";
    const char *u = s[digits] ? strchr(units, s[digits]) : NULL;
    if (s[digits] && (!u || s[digits + 1] != '\0'))
        return -1;
    *out = strtoull(s, NULL, 10) << (u ? 10 * (u - units + 1) : 0); /* 15 digits < 2^50 */
    return 0;
}

/* bytes in the largest of k, M, G that divides them ("64M"). */
static void format_size(uint64_t v, char *buf, size_t len)
{
    int shift = 30;
    while (shift > 0 && (v == 0 || v % (UINT64_C(1) << shift) != 0))
        shift -= 10;
    snprintf(buf, len, "%llu%s", (unsigned long long)(v >> shift),
             shift == 30   ? "G"
             : shift == 20 ? "M"
             : shift == 10 ? "k"
                           : "");
}

/* x in the fewest digits that read back as x (0.3, not 0.29999999999999999). */
static void format_real(double x, char *buf, size_t len)
{
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(buf, len, "%.*g", digits, x);
        if (strtod(buf, NULL) == x)
            return;
    }
}

/* ms as a duration in the largest unit that divides it ("30d", "90m"). */
static void format_duration(uint64_t ms, char *buf, size_t len)
{
    static const struct {
        char unit;
        uint64_t ms;
    } units[] = {{'d', 86400000}, {'h', 3600000}, {'m', 60000}, {'s', 1000}};
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (ms % units[i].ms == 0) {
            snprintf(buf, len, "%llu%c", (unsigned long long)(ms / units[i].ms), units[i].unit);
            return;
        }
    snprintf(buf, len, "%llums", (unsigned long long)ms); /* not reached: ms >= 1s, whole s */
}

static int parse_hexkey(const char *s, uint8_t key[16])
{
    if (strlen(s) != 32)
        return -1;
    for (size_t i = 0; i < 16; i++) {
        const int hi = bk_hex_value(s[2 * i]), lo = bk_hex_value(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        key[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

/* 1 when v lies in k's numeric range. */
static int in_range(const key_desc *k, double v)
{
    return isfinite(v) && (k->lo_open ? v > k->lo : v >= k->lo) && v <= k->hi;
}

/* Apply one value of key k to c: 0, or -1 (not a valid value). */
static int apply(bk_config *c, const key_desc *k, const char *val)
{
    switch (k->kind) {
    case K_NAME:
        for (unsigned i = 0; i < k->nnames; i++)
            if (strcmp(val, k->names[i]) == 0) {
                *enum_at(c, k) = (int)i;
                return 0;
            }
        return -1;
    case K_COUNT: {
        uint64_t v;
        /* and exactly: past 2^53 a double rounds 2^56 + 1 down to the bound */
        if (parse_count(val, &v) != 0 || !in_range(k, (double)v) || v > (uint64_t)k->hi)
            return -1;
        *count_at(c, k) = v;
        return 0;
    }
    case K_REAL: {
        double v;
        if (parse_real(val, &v) != 0 || !in_range(k, v))
            return -1;
        *real_at(c, k) = v;
        return 0;
    }
    case K_HEX:
        if (parse_hexkey(val, c->key) != 0)
            return -1;
        c->has_key = 1;
        return 0;
    case K_DURATION:
    case K_SIZE: {
        uint64_t v;
        if ((k->kind == K_SIZE ? parse_size(val, &v) : parse_duration(val, &v)) != 0 ||
            !in_range(k, (double)v))
            return -1;
        *count_at(c, k) = v;
        return 0;
    }
    }
    return -1;
}

static const key_desc *key_named(const char *name)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(name, keys[i].name) == 0)
            return &keys[i];
    return NULL;
}

/* Variant v's row for key k (bk_variant_desc.keys), or NULL: v takes k as
 * every variant does, or not at all. */
static const bk_variant_key *row_of(const key_desc *k, int v)
{
    const bk_variant_desc *d = bk_variant_for((bk_variant)v);
    for (const bk_variant_key *r = d ? d->keys : NULL; r && r->key; r++)
        if (strcmp(r->key, k->name) == 0)
            return r;
    return NULL;
}

/* 1 when key k applies to variant v. */
static int applies(const key_desc *k, int v)
{
    return (k->flags & KEY_EVERY) || row_of(k, v) != NULL;
}

/* The variants (bit 1 << v each) that take k; with k NULL, those whose
 * hash may be murmur. */
static unsigned takers(const key_desc *k)
{
    unsigned mask = 0;
    for (unsigned v = 0; v < bk_variant_count(); v++) {
        const bk_variant_desc *d = bk_variant_for((bk_variant)v);
        if (d && (k ? applies(k, (int)v) : d->murmur != NULL))
            mask |= 1u << v;
    }
    return mask;
}

/* "variant=scalable or variant=window only", or for most variants, "every
 * variant but variant=rbcuckoo" (names alone, with `bare`: "scalable,
 * window"; "all but rbcuckoo"): the variants of mask, as a text says them. */
static const char *variants_phrase(unsigned mask, int bare, char *buf, size_t len)
{
    unsigned n = 0, takes = 0;
    for (unsigned v = 0; v < bk_variant_count(); v++)
        if (bk_variant_for((bk_variant)v)) {
            n++;
            takes += mask >> v & 1u;
        }
    const int but = 2 * takes > n;
    size_t at = (size_t)snprintf(buf, len, "%s",
                                 !but   ? ""
                                 : bare ? "all but "
                                        : "every variant but ");
    for (unsigned v = 0, listed = 0; v < bk_variant_count() && at < len; v++)
        if (bk_variant_for((bk_variant)v) && (mask >> v & 1u) != (unsigned)but)
            at += (size_t)snprintf(buf + at, len - at, "%s%s%s",
                                   !listed++ ? ""
                                   : bare    ? ", "
                                             : " or ",
                                   bare ? "" : "variant=", variant_names[v]);
    if (!but && !bare && at < len)
        snprintf(buf + at, len - at, " only");
    return buf;
}

/* "applies to variant=scalable or variant=window only": which variants k
 * applies to, as an error says it. */
static const char *applies_to(const key_desc *k, char *buf, size_t len)
{
    char phrase[256];
    snprintf(buf, len, "applies to %s", variants_phrase(takers(k), 0, phrase, sizeof phrase));
    return buf;
}

/* The default of key k for a filter of variant v. */
static const char *default_for(const key_desc *k, int v)
{
    const bk_variant_key *r = row_of(k, v);
    return r && r->def ? r->def : k->def;
}

/* c's variant changed from `from`: a key not stated (seen) that still holds
 * from's default takes the new variant's. */
static void retarget_defaults(bk_config *c, int from, const unsigned char *seen)
{
    for (size_t i = 0; i < NKEYS; i++) {
        const key_desc *k = &keys[i];
        const char *old = default_for(k, from), *now = default_for(k, (int)c->variant);
        if (seen[i] || old == now || !old || !now)
            continue;
        bk_config probe = *c;
        apply(&probe, k, old);
        if (memcmp((char *)&probe + k->off, (char *)c + k->off,
                   k->kind == K_REAL   ? sizeof(double)
                   : k->kind == K_NAME ? sizeof(int)
                                       : sizeof(uint64_t)) == 0)
            apply(c, k, now);
    }
}

/* "variant, capacity, ..., key" into buf: for "unknown key" messages. */
static const char *key_list(char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NKEYS && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", keys[i].name);
    return buf;
}

/* The pinning rules, said once: fpr beside pinned bits, and hashes without
 * bits. */
static const char fpr_with_bits[] =
    "fpr and bits contradict: a filter of pinned bits (and hashes) has the rate they and "
    "capacity give; state fpr or bits, not both";
static const char hashes_without_bits[] =
    "hashes: needs bits (k is pinned only with m; without bits, capacity and fpr give both)";

/* hash=murmur is for the variants that say so (RedisBloom's structures):
 * NULL, or why not into buf. */
static const char *murmur_misplaced(const bk_config *c, char *buf, size_t len)
{
    if (c->hash != BK_HASH_MURMUR || (unsigned)c->variant >= 32 ||
        (takers(NULL) >> c->variant & 1u))
        return NULL;
    char phrase[256];
    snprintf(buf, len, "hash: murmur is RedisBloom's unkeyed hash, for %s (this is variant=%s)",
             variants_phrase(takers(NULL), 0, phrase, sizeof phrase), variant_names[c->variant]);
    return buf;
}

/* 1 when key k says nothing about c: a pinned filter's fpr (its rate follows
 * from bits, hashes and capacity), and bits and hashes left at 0 (sized).
 * Such a key is neither formatted nor compared. */
static int unused(const bk_config *c, const key_desc *k)
{
    if (k->off == FIELD(fpr))
        return c->bits != 0;
    if (k->off == FIELD(bits) || k->off == FIELD(hashes) || (k->flags & KEY_AUTO))
        return *count_at((bk_config *)c, k) == 0;
    if (k->flags & KEY_WRITTEN)
        return 0;
    /* a key added since 0.1.0 (a slot of more[]) has 0 for its default,
     * the behaviour before it: at 0 it is not written, so that texts of
     * filters that do not use it read in versions that do not know it */
    return k->off >= FIELD(more) && *count_at((bk_config *)c, k) == 0;
}

/* --- the configuration as a whole ------------------------------------------ */

void bk_config_init(bk_config *cfg)
{
    if (!cfg)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->struct_size = (uint32_t)sizeof *cfg;
    for (size_t i = 0; i < NKEYS; i++)
        if (keys[i].def)
            apply(cfg, &keys[i], keys[i].def); /* the table's defaults are valid */
    cfg->has_key = 0;
}

int bk_config_validate(const bk_config *c, char *err, size_t errlen)
{
    if (c->struct_size != sizeof *c) {
        bk_errorf(err, errlen,
                  "bk_config: a struct of %u bytes, this library's has %zu (initialise it with "
                  "bk_config_init or bk_config_parse, from this version's bloomkit.h)",
                  (unsigned)c->struct_size, sizeof *c);
        return BK_ECONFIG;
    }
    for (size_t i = 0; i < NKEYS; i++) {
        const key_desc *k = &keys[i];
        int ok = 1;
        if (k->kind == K_NAME)
            ok = name_in(k->names, k->nnames, enum_of(c, k)) != NULL;
        else if (k->kind == K_COUNT || k->kind == K_SIZE)
            ok = in_range(k, (double)*count_at((bk_config *)c, k));
        else if (k->kind == K_DURATION)
            ok = in_range(k, (double)*count_at((bk_config *)c, k)) &&
                 *count_at((bk_config *)c, k) % 1000 == 0;
        else if (k->kind == K_REAL)
            ok = in_range(k, real_of(c, k));
        if (!ok) {
            char buf[128];
            bk_errorf(err, errlen, "%s: must be %s", k->name, range_of(k, buf, sizeof buf));
            return BK_ECONFIG;
        }
        if (!applies(k, (int)c->variant) && k->def) {
            bk_config d = *c;
            apply(&d, k, k->def);
            if (memcmp((const char *)&d + k->off, (const char *)c + k->off, sizeof(uint64_t)) !=
                0) {
                char to[256];
                bk_errorf(err, errlen, "%s: %s", k->name, applies_to(k, to, sizeof to));
                return BK_ECONFIG;
            }
        }
    }
    if (c->hashes && !c->bits) {
        bk_errorf(err, errlen, "%s", hashes_without_bits);
        return BK_ECONFIG;
    }
    char why[512];
    if (murmur_misplaced(c, why, sizeof why)) {
        bk_errorf(err, errlen, "%s", why);
        return BK_ECONFIG;
    }
    return BK_OK;
}

const char *bk_config_diff(const bk_config *want, const bk_config *have)
{
    if (!want || !have)
        return NULL;
    for (size_t i = 0; i < NKEYS; i++) {
        const key_desc *k = &keys[i];
        if (k->off == FIELD(fpr) && (want->bits || have->bits))
            continue; /* pinned: the rate is not a parameter */
        if ((k->flags & KEY_AUTO) && *count_at((bk_config *)want, k) == 0)
            continue; /* left to the filter: any choice matches */
        const int differ = k->kind == K_NAME ? enum_of(want, k) != enum_of(have, k)
                           : k->kind == K_COUNT || k->kind == K_DURATION || k->kind == K_SIZE
                               ? *count_at((bk_config *)want, k) != *count_at((bk_config *)have, k)
                           : k->kind == K_REAL
                               ? real_of(want, k) != real_of(have, k)
                               : want->has_key && memcmp(want->key, have->key, 16) != 0;
        if (differ)
            return k->name;
    }
    return NULL;
}

const char *bk_config_preset(const char *name)
{
    for (size_t i = 0; name && i < sizeof presets / sizeof *presets; i++)
        if (strcmp(presets[i].name, name) == 0)
            return presets[i].text;
    return NULL;
}

int bk_config_key_applies(bk_variant v, const char *key)
{
    const key_desc *k = key ? key_named(key) : NULL;
    return k && bk_variant_name(v) && applies(k, (int)v);
}

/* Each key's line of help: its row's, with the variants that take it
 * before it (when not every one does) and each variant's own note and
 * default after it; for "variant", every variant's summary. Made once. */
#define HELP_MAX 1024
static char help_lines[NKEYS][HELP_MAX];
static pthread_once_t help_once = PTHREAD_ONCE_INIT;

static void make_help_line(const key_desc *k, char *buf, size_t len)
{
    size_t at = 0;
    char phrase[256];
#define HELP_ADD(...)                                                                              \
    do {                                                                                           \
        if (at < len)                                                                              \
            at += (size_t)snprintf(buf + at, len - at, __VA_ARGS__);                               \
    } while (0)
    if (k->help && !(k->flags & KEY_EVERY))
        HELP_ADD("%s: ", variants_phrase(takers(k), 1, phrase, sizeof phrase));
    HELP_ADD("%s", k->help ? k->help : "");
    const int names = k->off == FIELD(variant);
    for (unsigned v = 0, n = 0; v < bk_variant_count(); v++) {
        const bk_variant_desc *d = bk_variant_for((bk_variant)v);
        const bk_variant_key *r = d ? row_of(k, (int)v) : NULL;
        if (names && d)
            HELP_ADD("%s%s", n++ ? ", " : ": ", d->summary ? d->summary : variant_names[v]);
        else if (r && (r->note || r->def))
            HELP_ADD("%s%s: %s%s%s%s", at ? "; " : "", variant_names[v], r->note ? r->note : "",
                     r->note && r->def ? ", " : "", r->def ? "default " : "", r->def ? r->def : "");
    }
    if (k->off == FIELD(hash))
        HELP_ADD("; %s: also murmur, RedisBloom's unkeyed MurmurHash (its data only)",
                 variants_phrase(takers(NULL), 1, phrase, sizeof phrase));
#undef HELP_ADD
}

static void make_help(void)
{
    for (size_t i = 0; i < NKEYS; i++)
        make_help_line(&keys[i], help_lines[i], sizeof help_lines[i]);
}

const char *bk_config_key(unsigned i, char *range, size_t rangelen, const char **help)
{
    if (i >= NKEYS)
        return NULL;
    if (range && rangelen) {
        char buf[128];
        snprintf(range, rangelen, "%s", range_of(&keys[i], buf, sizeof buf));
    }
    if (help) {
        pthread_once(&help_once, make_help);
        *help = help_lines[i];
    }
    return keys[i].name;
}

/* --- the text ---------------------------------------------------------------- */

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

/* Fill *e (line, key, message) and return BK_ECONFIG. */
static int fail(bk_config_error *e, unsigned line, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(bk_config_error *e, unsigned line, const char *key, const char *fmt, ...)
{
    e->line = line;
    snprintf(e->key, sizeof e->key, "%s", key ? key : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    return BK_ECONFIG;
}

/* Apply the lines of text to *c, marking in seen[] the keys they state; a
 * key seen already (in this text or an earlier layer) is refused. On error
 * *c is part-applied: callers apply to a copy.
 * long: one pass over the lines: split, look up, apply; each error names its line. */
static int read_lines(bk_config *c, const char *text, bk_config_error *e, unsigned char *seen)
{
    unsigned line = 1;
    const char *p = text;
    char rbuf[256];
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
        if (klen == 0)
            return fail(e, line, NULL, "line %u: unexpected character '%c' (expected key=value)",
                        line, *p);
        while (is_blank(*p))
            p++;
        if (*p != '=')
            return fail(e, line, key_named(key) ? key : NULL,
                        "line %u: '%.*s' must be followed by '=value'", line, QUOTE_MAX, key);
        p++;
        while (is_blank(*p))
            p++;
        while (*p && !is_sep(*p) && *p != '#') {
            if (vlen == VALUE_MAX)
                return fail(e, line, key_named(key) ? key : NULL,
                            "line %u: %.*s: value longer than %d characters", line, QUOTE_MAX, key,
                            VALUE_MAX);
            val[vlen++] = *p++;
        }
        val[vlen] = '\0';
        const key_desc *k = key_named(key);
        if (!k)
            return fail(e, line, NULL, "line %u: unknown key '%.*s' (known: %s)", line, QUOTE_MAX,
                        key, key_list(rbuf, sizeof rbuf));
        const size_t ki = (size_t)(k - keys);
        if (seen[ki]++)
            return fail(e, line, k->name, "line %u: duplicate key '%s'", line, k->name);
        if (vlen == 0)
            return fail(e, line, k->name, "line %u: %s: empty value (allowed: %s)", line, k->name,
                        range_of(k, rbuf, sizeof rbuf));
        if (apply(c, k, val) != 0)
            return fail(e, line, k->name, "line %u: %s: invalid value '%.*s%s' (allowed: %s)", line,
                        k->name, QUOTE_MAX, val, vlen > QUOTE_MAX ? "..." : "",
                        range_of(k, rbuf, sizeof rbuf));
    }
    return BK_OK;
}

/* What only the whole configuration says, checked once for every way one is
 * built (a text, or layers): the pins (fpr beside bits, hashes without
 * bits), every stated key one of the variant's, the hash one the variant
 * takes (each value was checked against its row as it was applied; keys of
 * the start a caller gave are its own: an existing filter's, asked about). */
static int check_whole(const bk_config *c, const unsigned char *seen, bk_config_error *e)
{
    char rbuf[256];
    if (seen[key_named("fpr") - keys] && c->bits)
        return fail(e, 0, "fpr", "%s", fpr_with_bits);
    if (seen[key_named("hashes") - keys] && !c->bits)
        return fail(e, 0, "hashes", "%s", hashes_without_bits);
    for (size_t i = 0; i < NKEYS; i++)
        if (seen[i] && !applies(&keys[i], (int)c->variant))
            return fail(e, 0, keys[i].name, "%s: %s (this is variant=%s)", keys[i].name,
                        applies_to(&keys[i], rbuf, sizeof rbuf), variant_names[c->variant]);
    if (murmur_misplaced(c, rbuf, sizeof rbuf))
        return fail(e, 0, "hash", "%s", rbuf);
    return BK_OK;
}

/* Apply text over *base (valid) and, if all of it is valid, store the result
 * in *cfg. seen_out (may be NULL) receives which keys the text states. */
static int parse_text(bk_config *cfg, const bk_config *base, const char *text, bk_config_error *e,
                      unsigned char *seen_out)
{
    bk_config c = *base;
    unsigned char seen[NKEYS] = {0};
    int rc = read_lines(&c, text, e, seen);
    if (rc != BK_OK)
        return rc;
    if (c.variant != base->variant)
        retarget_defaults(&c, (int)base->variant, seen);
    if ((rc = check_whole(&c, seen, e)) != BK_OK)
        return rc;
    *cfg = c;
    if (seen_out)
        memcpy(seen_out, seen, sizeof seen);
    return BK_OK;
}

/* Where a call that reports a bk_config_error writes it: the caller's, or
 * *local when it gave none; cleared. */
static bk_config_error *error_or(bk_config_error *error, bk_config_error *local)
{
    bk_config_error *e = error ? error : local;
    memset(e, 0, sizeof *e);
    return e;
}

int bk_config_read(bk_config *cfg, const char *text, bk_config_error *error)
{
    bk_config_error local;
    bk_config_error *e = error_or(error, &local);
    if (!cfg || !text) {
        bk_errorf(e->message, sizeof e->message, "config: no configuration or text given");
        return BK_EINVAL;
    }
    if (bk_config_validate(cfg, e->message, sizeof e->message) != BK_OK)
        return BK_EINVAL;
    const bk_config base = *cfg;
    const int rc = parse_text(cfg, &base, text, e, NULL);
    return rc != BK_OK ? bk_fail(rc, "%s", e->message) : rc; /* the message, in both places */
}

/* The message of *e into err (truncated, terminated). */
static int report(int rc, const bk_config_error *e, char *err, size_t errlen)
{
    if (rc != BK_OK)
        bk_errorf(err, errlen, "%s", e->message);
    return rc;
}

int bk_config_parse(bk_config *cfg, const char *text, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    bk_config_error e;
    memset(&e, 0, sizeof e);
    if (!cfg || !text) {
        bk_errorf(err, errlen, "config: no configuration or text given");
        return BK_EINVAL;
    }
    bk_config defaults;
    bk_config_init(&defaults);
    return report(parse_text(cfg, &defaults, text, &e, NULL), &e, err, errlen);
}

int bk_config_parse_over(bk_config *cfg, const char *text, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    bk_config_error e;
    return report(bk_config_read(cfg, text, &e), &e, err, errlen);
}

/* Set key k of *cfg to value, as one value; the keys in stated[] (with k)
 * were stated, so a change of variant leaves them as they are. A builder
 * (stated not NULL) checks the whole at its end, bk_config_set here. */
static int set_one(bk_config *cfg, const key_desc *k, const char *value,
                   const unsigned char *stated, char *err, size_t errlen)
{
    if (k->off == FIELD(fpr) && cfg->bits) {
        bk_errorf(err, errlen, "%s (bits=%llu)", fpr_with_bits, (unsigned long long)cfg->bits);
        return BK_ECONFIG;
    }
    bk_config c = *cfg;
    if (strlen(value) > VALUE_MAX || apply(&c, k, value) != 0) {
        char rbuf[128];
        bk_errorf(err, errlen, "%s: '%.*s%s' is not valid (allowed: %s)", k->name, QUOTE_MAX, value,
                  strlen(value) > QUOTE_MAX ? "..." : "", range_of(k, rbuf, sizeof rbuf));
        return BK_ECONFIG;
    }
    if (c.variant != cfg->variant) {
        unsigned char seen[NKEYS] = {0};
        if (stated)
            memcpy(seen, stated, sizeof seen);
        seen[k - keys] = 1;
        retarget_defaults(&c, (int)cfg->variant, seen);
    }
    if (!stated && bk_config_validate(&c, err, errlen) != BK_OK) /* a key of another variant */
        return BK_ECONFIG;
    *cfg = c;
    return BK_OK;
}

/* k for key, or NULL with "unknown key" in err. */
static const key_desc *known_key(const char *key, char *err, size_t errlen)
{
    const key_desc *k = key_named(key);
    if (!k) {
        char list[256];
        bk_errorf(err, errlen, "unknown key '%.*s' (known: %s)", QUOTE_MAX, key,
                  key_list(list, sizeof list));
    }
    return k;
}

int bk_config_set(bk_config *cfg, const char *key, const char *value, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!cfg || !key || !value || bk_config_validate(cfg, NULL, 0) != BK_OK) {
        bk_errorf(err, errlen, "config: no configuration, key or value, or an invalid one");
        return BK_EINVAL;
    }
    const key_desc *k = known_key(key, err, errlen);
    return k ? set_one(cfg, k, value, NULL, err, errlen) : BK_ECONFIG;
}

int bk_config_text_sets(const char *text, const char *key)
{
    const key_desc *k = text && key ? key_named(key) : NULL;
    unsigned char seen[NKEYS];
    bk_config base, out;
    bk_config_error e;
    bk_config_init(&base);
    if (!k || parse_text(&out, &base, text, &e, seen) != BK_OK)
        return 0;
    return seen[k - keys] != 0;
}

/* --- a configuration in layers ------------------------------------------------ */

_Static_assert(NKEYS <= sizeof(((bk_config_build *)0)->stated), "bk_config_build: too many keys");

void bk_config_build_init(bk_config_build *b, const bk_config *start)
{
    if (!b)
        return;
    memset(b, 0, sizeof *b);
    if (start)
        b->cfg = *start;
    else
        bk_config_init(&b->cfg);
}

int bk_config_build_text(bk_config_build *b, const char *text, bk_config_error *error)
{
    bk_config_error local;
    bk_config_error *e = error_or(error, &local);
    if (!b || !text || b->cfg.struct_size != sizeof b->cfg) {
        bk_errorf(e->message, sizeof e->message,
                  "config: no configuration or text, or not one of bk_config_build_init");
        return BK_EINVAL;
    }
    bk_config c = b->cfg;
    unsigned char seen[NKEYS];
    memcpy(seen, b->stated, sizeof seen);
    if (read_lines(&c, text, e, seen) != BK_OK)
        return bk_fail(BK_ECONFIG, "%s", e->message); /* the message, in both places */
    if (c.variant != b->cfg.variant)
        retarget_defaults(&c, (int)b->cfg.variant, seen);
    b->cfg = c;
    memcpy(b->stated, seen, sizeof seen);
    return BK_OK;
}

int bk_config_build_set(bk_config_build *b, const char *key, const char *value, char *err,
                        size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!b || !key || !value || b->cfg.struct_size != sizeof b->cfg) {
        bk_errorf(err, errlen,
                  "config: no configuration, key or value, or not one of bk_config_build_init");
        return BK_EINVAL;
    }
    const key_desc *k = known_key(key, err, errlen);
    if (!k)
        return BK_ECONFIG;
    if (b->stated[k - keys]) {
        bk_errorf(err, errlen, "%s: given twice (a key is stated once)", k->name);
        return BK_ECONFIG;
    }
    const int rc = set_one(&b->cfg, k, value, b->stated, err, errlen);
    if (rc == BK_OK)
        b->stated[k - keys] = 1;
    return rc;
}

int bk_config_build_stated(const bk_config_build *b, const char *key)
{
    const key_desc *k = b && key ? key_named(key) : NULL;
    return k && b->stated[k - keys];
}

int bk_config_build_finish(const bk_config_build *b, bk_config *out, bk_config_error *error)
{
    bk_config_error local;
    bk_config_error *e = error_or(error, &local);
    if (!b || !out) {
        bk_errorf(e->message, sizeof e->message, "config: no configuration or result");
        return BK_EINVAL;
    }
    const int rc = check_whole(&b->cfg, b->stated, e);
    if (rc != BK_OK)
        return bk_fail(rc, "%s", e->message); /* the message, in both places */
    *out = b->cfg;
    return BK_OK;
}

/* The value of key k in c as config text writes it, into v (vlen >= 40):
 * 0, or -1 for the hash key when c has none (or include_key is 0). */
static int format_value(const bk_config *c, const key_desc *k, int include_key, char *v,
                        size_t vlen)
{
    if (k->kind == K_NAME)
        snprintf(v, vlen, "%s", k->names[enum_of(c, k)]);
    else if (k->kind == K_COUNT)
        snprintf(v, vlen, "%llu", (unsigned long long)*count_at((bk_config *)c, k));
    else if (k->kind == K_REAL)
        format_real(real_of(c, k), v, vlen);
    else if (k->kind == K_DURATION)
        format_duration(*count_at((bk_config *)c, k), v, vlen);
    else if (k->kind == K_SIZE)
        format_size(*count_at((bk_config *)c, k), v, vlen);
    else if (include_key && c->has_key)
        bk_hex_encode(c->key, 16, v);
    else
        return -1;
    return 0;
}

int bk_config_format(const bk_config *cfg, int include_key, char *buf, size_t buflen)
{
    if (!cfg || (!buf && buflen))
        return bk_fail(BK_EINVAL, "config_format: no config, or no buffer of %zu bytes", buflen);
    if (bk_config_validate(cfg, NULL, 0) != BK_OK)
        return BK_EINVAL; /* validate said which key, and why */
    size_t need = 0;
    for (size_t i = 0; i < NKEYS; i++) {
        const key_desc *k = &keys[i];
        char v[40];
        if (!applies(k, (int)cfg->variant) || unused(cfg, k))
            continue; /* applies to another variant (its default stands), or says nothing */
        if (format_value(cfg, k, include_key, v, sizeof v) != 0)
            continue;
        const int n =
            snprintf(buf ? buf + (need < buflen ? need : buflen) : NULL,
                     need < buflen ? buflen - need : 0, "%s%s=%s", need ? " " : "", k->name, v);
        if (n < 0)
            return bk_fail(BK_EINVAL, "config_format: cannot format %s", k->name);
        need += (size_t)n;
    }
    return need > INT32_MAX ? bk_fail(BK_EINVAL, "config_format: the text is too long") : (int)need;
}

int bk_config_get(const bk_config *cfg, const char *key, char *buf, size_t buflen)
{
    if (!cfg || !key || (!buf && buflen))
        return bk_fail(BK_EINVAL, "config_get: no config, key or buffer");
    const key_desc *k = key_named(key);
    if (!k) {
        char list[256];
        return bk_fail(BK_ECONFIG, "config_get: unknown key '%.*s' (known: %s)", QUOTE_MAX, key,
                       key_list(list, sizeof list));
    }
    if (bk_config_validate(cfg, NULL, 0) != BK_OK)
        return BK_EINVAL; /* validate said which key, and why */
    char v[40] = "";
    format_value(cfg, k, 1, v, sizeof v); /* no key: the empty text */
    const int n = snprintf(buf, buflen, "%s", v);
    return n;
}

int bk_config_put(bk_config *cfg, const char *key, uint64_t value)
{
    const key_desc *k = key_named(key);
    if (!k || k->kind == K_NAME || k->kind == K_REAL || k->kind == K_HEX ||
        !in_range(k, (double)value))
        return BK_EINVAL;
    *count_at(cfg, k) = value;
    return BK_OK;
}

const char *bk_config_name_of(const bk_config *cfg, const char *key)
{
    const key_desc *k = key_named(key);
    if (!cfg || !k || k->kind != K_NAME)
        return NULL;
    const int v = enum_of(cfg, k);
    return v >= 0 && (unsigned)v < k->nnames ? k->names[v] : NULL;
}

size_t bk_config_key_offset(unsigned i)
{
    return i < NKEYS ? keys[i].off : (size_t)-1;
}

uint64_t bk_config_count(const bk_config *cfg, const char *key)
{
    const key_desc *k = key_named(key);
    return k && k->kind != K_NAME && k->kind != K_REAL && k->kind != K_HEX
               ? *count_at((bk_config *)cfg, k)
               : 0;
}

int bk_config_stated(bk_config *cfg, bk_variant v, bk_hash_alg hash, uint64_t capacity, double fpr,
                     const char *const *keys, const uint64_t *values, unsigned n, int strict)
{
    bk_config_init(cfg);
    cfg->variant = v;
    cfg->hash = hash;
    cfg->capacity = capacity;
    cfg->fpr = fpr;
    cfg->has_key = 1;
    for (unsigned i = 0; i < n; i++)
        if (bk_config_put(cfg, keys[i], values[i]) != BK_OK && strict)
            return bk_fail(BK_ENOTSUP, "%s: %llu is past what the key takes", keys[i],
                           (unsigned long long)values[i]);
    char err[200];
    if (strict && bk_config_validate(cfg, err, sizeof err) != BK_OK)
        return bk_fail(BK_ENOTSUP, "no configuration states it: %s", err);
    return BK_OK;
}

const bk_variant_key bk_bloom_keys[] = {
    {"fpr", NULL, NULL},    {"growth", NULL, NULL}, {"tightening", NULL, NULL},
    {"layout", NULL, NULL}, {"bits", NULL, NULL},   {"hashes", NULL, NULL},
    {NULL, NULL, NULL},
};
