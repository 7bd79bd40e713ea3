/* keys.h - the key of each record: its bytes, or with --canonical-urls the
 * canonical form of the URL it holds (the record itself is what is printed). */
#ifndef BK_CLI_KEYS_H
#define BK_CLI_KEYS_H

#include "inputs.h"

/* Where a batch's canonical keys live while the batch is in use: one per
 * batch that may be in flight at once. Zero-initialise; key_arena_free. */
typedef struct key_arena {
    char *buf;
    size_t cap;
} key_arena;

/* keys[i], lens[i] for recs[0..n): the records' keys (their bytes without
 * terminator), or with --canonical-urls their canonical URLs
 * (bk_url_canonical; a record that is not a URL is its own key), or with
 * o->fingerprints the 20 bytes of each record's 40 hex digits, written into
 * *arena, valid until its next use. 0, or an exit code (out of memory; a
 * record that is not a fingerprint: 2). */
int cli_record_keys(const cli_opts *o, key_arena *arena, const record *recs, size_t n,
                    const void **keys, size_t *lens);

/* The canonical URLs of recs[0..n) (bk_url_canonical with flags) into
 * *arena, their places into keys[] and lens[]: BK_OK or BK_ENOMEM (arena
 * untouched), and nothing printed, so any thread may call it. */
int cli_canonical_keys(unsigned flags, key_arena *arena, const record *recs, size_t n,
                       const void **keys, size_t *lens);

/* The bk_url_canonical flags o asks for. */
unsigned cli_canonical_flags(const cli_opts *o);

/* Whether o's --canonical-urls and --keep-query-order agree with what the
 * existing filter f (named `what` in messages) records of its keys (its
 * input): 0, or a usage error that names both and the remedy (printed). A
 * filter of canonical URLs applies its rule by itself (cli_keys_follow), so
 * leaving the flags out is fine; flags that ask for another rule, or
 * --canonical-urls on a filter of raw keys or fingerprints, would look up
 * other keys than those added before. */
int cli_keys_agree(const cli_opts *o, const bk_filter *f, const char *what);

/* o's key options set from what f records: canonical URLs by its rule, or
 * fingerprints (input=scrapy-redis: a filter imported from scrapy-redis's
 * set, whose records then spell its keys in hex). After cli_keys_agree. */
void cli_keys_follow(cli_opts *o, const bk_filter *f);

void key_arena_free(key_arena *arena);

#endif
