/*
 * figures.c - the one table of a filter's figures (bk_figure_at): every
 * surface that reports a filter (the command's info, the module's BK.INFO,
 * Python's stats(), docs/figures.md) walks it, so a figure has one name, one
 * meaning and one place to add it, as a configuration key has in
 * src/core/config.c.
 */
#include <stddef.h>
#include <string.h>

#include "bloomkit.h"
#include "config.h"
#include "filter_impl.h"
#include "../common/error.h"

/* Where a row's value comes from: a field of bk_filter_stats (by type), or
 * a named key of the configuration (a text). */
typedef enum { FROM_STATS, FROM_CONFIG } source;

typedef struct {
    const char *name, *label;
    bk_figure_type type;
    source from;
    size_t off, width; /* FROM_STATS: the field's offset and size in bk_filter_stats */
    const char *key;   /* FROM_CONFIG: the configuration key */
    int own;           /* 1: only the variants whose descriptors list it (their .figures) */
    const char *meaning;
} row;

#define STAT(f) FROM_STATS, offsetof(bk_filter_stats, f), sizeof(((bk_filter_stats *)0)->f), NULL
#define CONF(k) FROM_CONFIG, 0, 0, k

static const row rows[] = {
    {"variant", "variant", BK_FIGURE_TEXT, STAT(variant), 0,
     "the variant, by its name (the configuration key variant)"},
    {"hash", "hash", BK_FIGURE_TEXT, STAT(hash), 0, "the keyed hash"},
    {"layout", "layout", BK_FIGURE_TEXT, CONF("layout"), 0,
     "where a key's probes fall: classic or blocked"},
    {"input", "input", BK_FIGURE_TEXT, CONF("input"), 0,
     "what a key is made of: raw, url, url-keep-query-order or scrapy-redis"},
    {"bits", "size", BK_FIGURE_COUNT, STAT(bits), 0,
     "m: the cells of the arrays (bits; counters; a cuckoo filter's fingerprint slots; a table "
     "of fingerprints: its bits), all slices together"},
    {"m", NULL, BK_FIGURE_COUNT, STAT(bits), 0, "the same as bits, under the formulas' name"},
    {"bytes", "bytes", BK_FIGURE_COUNT, STAT(bytes), 0, "bytes of payload memory"},
    {"k", "k", BK_FIGURE_COUNT, STAT(k), 0,
     "probes per key (a chain: of the newest slice; a cuckoo filter: the 2 buckets a lookup "
     "reads; a table of fingerprints: the 1 home)"},
    {"keys", "keys added", BK_FIGURE_COUNT, STAT(keys), 0,
     "adds that reported a new key (counting, cuckoo: adds minus removes)"},
    {"set_bits", "set bits", BK_FIGURE_COUNT, STAT(set_bits), 0,
     "cells in use: bits set (counting: non-zero counters; cuckoo: slots taken)"},
    {"fill", "fill", BK_FIGURE_REAL, STAT(fill), 0, "set_bits / bits"},
    {"est_cardinality", "est. distinct", BK_FIGURE_REAL, STAT(est_cardinality), 0,
     "distinct keys, estimated from the fill"},
    {"est_fpr", "est. fpr", BK_FIGURE_REAL, STAT(est_fpr), 0,
     "the false-positive rate now, estimated from the fill"},
    {"model_fpr", "model fpr", BK_FIGURE_REAL, STAT(model_fpr), 0,
     "the rate the sizing model predicts for the keys added"},
    {"target_fpr", "target fpr", BK_FIGURE_REAL, STAT(fpr), 0,
     "the rate the filter was made to keep (with bits pinned: the rate they give at capacity)"},
    {"rate_bound", "rate bound", BK_FIGURE_REAL, STAT(rate_bound), 0,
     "the rate once every array holds the keys it was sized for: the most a chain reaches with "
     "the slices it has (under target fpr however it grows)"},
    {"bits_per_key", "bits/key", BK_FIGURE_REAL, STAT(bits_per_key), 0,
     "the memory each key added has cost so far: bytes * 8 / keys"},
    {"capacity", "capacity", BK_FIGURE_COUNT, STAT(capacity), 0,
     "keys it is sized for (scalable: all slices; window: per window)"},
    {"slices", "slices", BK_FIGURE_COUNT, STAT(slices), 0,
     "arrays (1 but for scalable and window)"},
    {"saturated", "saturated", BK_FIGURE_COUNT, STAT(saturated), 1,
     "counters stuck at 15 (sticky: never decremented)"},
    {"redated_from_ms", "redated from", BK_FIGURE_MS, STAT(redated_from_ms), 1,
     "the start of the newest generation's span when it was found more than a span ahead of "
     "the clock (docs/windows.md), ms; 0: never re-dated"},
    {"redated_to_ms", "redated to", BK_FIGURE_MS, STAT(redated_to_ms), 1,
     "and the span's start it was moved back to, ms; 0: never re-dated"},
};
#define NROWS (sizeof rows / sizeof *rows)

/* The variants (bit 1 << v each) that report row r: every one, or for a
 * row of some variants' own, those whose descriptors name it. */
static unsigned reported_by(const row *r)
{
    const size_t len = strlen(r->name);
    unsigned mask = 0;
    for (unsigned v = 0; v < bk_variant_count() && v < 32; v++) {
        const bk_variant_desc *d = bk_variant_for((bk_variant)v);
        const char *at = d && r->own ? d->figures : NULL;
        int named = !r->own;
        while (at && !named && (at = strstr(at, r->name)) != NULL) {
            named = (at == d->figures || at[-1] == ' ') && (at[len] == ' ' || at[len] == '\0');
            at += len;
        }
        if (d && named)
            mask |= 1u << v;
    }
    return mask;
}

static void value_of(const row *r, const bk_filter_stats *st, const bk_config *cfg, bk_figure *f)
{
    const char *at = (const char *)st + r->off;
    if (r->from == FROM_CONFIG) {
        const char *name = bk_config_name_of(cfg, r->key);
        f->text = name ? name : "";
        return;
    }
    switch (r->type) {
    case BK_FIGURE_TEXT:
        memcpy(&f->text, at, sizeof f->text);
        if (!f->text)
            f->text = "";
        break;
    case BK_FIGURE_COUNT:
        if (r->width == sizeof(uint32_t)) { /* k, slices */
            uint32_t u;
            memcpy(&u, at, sizeof u);
            f->count = u;
        } else {
            memcpy(&f->count, at, sizeof f->count);
        }
        break;
    case BK_FIGURE_REAL:
        memcpy(&f->real, at, sizeof f->real);
        break;
    case BK_FIGURE_MS:
        memcpy(&f->ms, at, sizeof f->ms);
        break;
    }
}

int bk_figure_at(unsigned i, const bk_filter_stats *st, const bk_config *cfg, bk_figure *out,
                 size_t size)
{
    if (!out || size == 0 || !st != !cfg)
        return bk_fail(BK_EINVAL, "figure_at: no result pointer, a size of 0, or stats without "
                                  "a configuration (or the other way round)");
    if (i >= NROWS)
        return 0;
    const row *r = &rows[i];
    bk_figure f;
    memset(&f, 0, sizeof f);
    f.name = r->name;
    f.label = r->label;
    f.meaning = r->meaning;
    f.variants = reported_by(r);
    f.type = r->type;
    f.text = r->type == BK_FIGURE_TEXT ? "" : NULL;
    if (st)
        value_of(r, st, cfg, &f);
    memcpy(out, &f, size < sizeof f ? size : sizeof f);
    if (size > sizeof f)
        memset((char *)out + sizeof f, 0, size - sizeof f);
    return 1;
}
