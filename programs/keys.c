/*
 * keys.c - a record's key: its bytes, its canonical URL, or for a filter of
 * request fingerprints (input=scrapy-redis) the 20 bytes its 40 hex digits
 * spell; which of them, from what the filter records (its input) and the
 * command's flags.
 */
#include "keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What f records of its keys: input's value, "raw" when it records none. */
static void input_of(const bk_filter *f, char *buf, size_t len)
{
    if (bk_get_setting(f, "input", buf, len) <= 0)
        snprintf(buf, len, "raw");
}

int cli_keys_agree(const cli_opts *o, const bk_filter *f, const char *what)
{
    if (!o->canonical_urls)
        return 0; /* the filter's own rule applies */
    char input[32];
    input_of(f, input, sizeof input);
    if (strcmp(input, "scrapy-redis") == 0)
        return cli_fail(o, EXIT_USAGE,
                        "%s: the filter's keys are request fingerprints (input=scrapy-redis), "
                        "not URLs: give each as its 40 hex digits, without --canonical-urls",
                        what);
    if (strcmp(input, "url") == 0 && o->keep_query_order)
        return cli_fail(o, EXIT_USAGE,
                        "%s: the filter's keys are canonical URLs with their query parameters "
                        "sorted (input=url), and --keep-query-order keeps them in their order, "
                        "which makes other keys: drop --keep-query-order (the filter applies "
                        "its rule by itself; --canonical-urls may go too)",
                        what);
    if (strcmp(input, "url-keep-query-order") == 0 && !o->keep_query_order)
        return cli_fail(o, EXIT_USAGE,
                        "%s: the filter's keys are canonical URLs whose query parameters keep "
                        "their order (input=url-keep-query-order), and --canonical-urls alone "
                        "sorts them, which makes other keys: add --keep-query-order, or drop "
                        "--canonical-urls (the filter applies its rule by itself)",
                        what);
    if (strcmp(input, "raw") == 0)
        return cli_fail(o, EXIT_USAGE,
                        "%s: the filter's keys are the lines as they are (input=raw), and "
                        "--canonical-urls would look up their canonical URLs instead, which "
                        "the lines added before are not: drop --canonical-urls, or start a new "
                        "filter with it (which records it and then applies it by itself)",
                        what);
    return 0;
}

void cli_keys_follow(cli_opts *o, const bk_filter *f)
{
    char input[32];
    input_of(f, input, sizeof input);
    o->fingerprints = strcmp(input, "scrapy-redis") == 0;
    if (strncmp(input, "url", 3) == 0) {
        o->canonical_urls = 1;
        o->keep_query_order = strcmp(input, "url-keep-query-order") == 0;
    }
}

static int hex_digit(uint8_t c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The fingerprints' bytes into *arena; a record that is not 40 hex digits
 * is a usage error naming it. */
static int fingerprint_keys(const cli_opts *o, key_arena *arena, const record *recs, size_t n,
                            const void **keys, size_t *lens)
{
    if (n * 20 > arena->cap) {
        char *grown = realloc(arena->buf, n * 20);
        if (!grown)
            return cli_fail(o, EXIT_IO, "out of memory");
        arena->buf = grown;
        arena->cap = n * 20;
    }
    for (size_t i = 0; i < n; i++) {
        const uint8_t *r = recs[i].raw;
        uint8_t *out = (uint8_t *)arena->buf + 20 * i;
        int ok = recs[i].keylen == 40;
        for (size_t j = 0; ok && j < 20; j++) {
            const int hi = hex_digit(r[2 * j]), lo = hex_digit(r[2 * j + 1]);
            ok = hi >= 0 && lo >= 0;
            out[j] = (uint8_t)(hi << 4 | (lo & 15));
        }
        if (!ok)
            return cli_fail(o, EXIT_USAGE,
                            "\"%.*s\" is not a request fingerprint (40 hex digits): this "
                            "filter's keys are scrapy-redis's fingerprints (input=scrapy-redis)",
                            (int)(recs[i].keylen < 60 ? recs[i].keylen : 60), (const char *)r);
        keys[i] = out;
        lens[i] = 20;
    }
    return 0;
}

unsigned cli_canonical_flags(const cli_opts *o)
{
    return o->keep_query_order ? BK_URL_KEEP_QUERY_ORDER : 0;
}

int cli_canonical_keys(unsigned flags, key_arena *arena, const record *recs, size_t n,
                       const void **keys, size_t *lens)
{
    size_t need = 0;
    for (size_t i = 0; i < n; i++)
        need += BK_URL_CANONICAL_MAX(recs[i].keylen);
    if (need > arena->cap) {
        char *grown = realloc(arena->buf, need);
        if (!grown)
            return BK_ENOMEM;
        arena->buf = grown;
        arena->cap = need;
    }
    char *at = arena->buf;
    for (size_t i = 0; i < n; i++) {
        const int rc = bk_url_canonical((const char *)recs[i].raw, recs[i].keylen, flags, at,
                                        BK_URL_CANONICAL_MAX(recs[i].keylen), &lens[i]);
        if (rc < 0)
            return rc;
        keys[i] = at;
        at += lens[i];
    }
    return BK_OK;
}

int cli_record_keys(const cli_opts *o, key_arena *arena, const record *recs, size_t n,
                    const void **keys, size_t *lens)
{
    if (o->fingerprints)
        return fingerprint_keys(o, arena, recs, n, keys, lens);
    if (!o->canonical_urls) {
        for (size_t i = 0; i < n; i++) {
            keys[i] = recs[i].raw;
            lens[i] = recs[i].keylen;
        }
        return 0;
    }
    const int rc = cli_canonical_keys(cli_canonical_flags(o), arena, recs, n, keys, lens);
    return rc == BK_OK ? 0 : cli_lib_fail(o, rc, "--canonical-urls");
}

void key_arena_free(key_arena *arena)
{
    free(arena->buf);
    arena->buf = NULL;
    arena->cap = 0;
}
