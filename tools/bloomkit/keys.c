/*
 * keys.c - a record's key: its bytes, or its canonical URL.
 */
#include "keys.h"

#include <stdlib.h>

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
