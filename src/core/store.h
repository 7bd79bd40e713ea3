/*
 * store.h - the core as the layers above it see a filter (internal): src/io
 * reads a filter's slices and configuration, makes one over payloads read
 * from a file, and attaches the mapping those payloads live in, through
 * these calls and types only; the filter's struct and its variants'
 * tables (filter_impl.h) stay the core's. The core, in turn, knows a
 * mapping only as the two hooks io attaches with it (bk_backing_ops): it
 * calls nothing in src/io. Hidden in libbloomkit (the file layer is built
 * into it), but for bk_variant_adopt, which the Lua mode's pull also uses.
 */
#ifndef BK_CORE_STORE_H
#define BK_CORE_STORE_H

#include <stdint.h>

#include "bloomkit.h"

/* The most slices a filter file holds (src/io): a variant whose chains can
 * grow past it says so in its descriptor's max_slices. */
#define BK_SLICES_MAX 256

/* One bit or counter array of a filter, as persistence and merging see it.
 * Standard and counting filters have one slice, scalable filters one per
 * array of the chain (RedisBloom's: a link, a sub-filter). data points into the filter (or, for a
 * view passed to an adopt constructor, to a payload the new filter takes over). */
typedef struct bk_slice_view {
    uint64_t m;         /* bits or counters */
    unsigned k;         /* probes */
    unsigned block;     /* cells per block (blocked layout), 0 for classic */
    uint64_t capacity;  /* keys the slice was sized for */
    double fpr;         /* rate the slice was sized for */
    uint64_t set_bits;  /* set bits, or non-zero counters */
    uint64_t keys;      /* keys added (counting: adds - removes) */
    uint64_t saturated; /* counting: counters at 15; else 0 */
    uint8_t *data;      /* payload */
    uint64_t nbytes;    /* payload bytes */
    unsigned probes;    /* classic probe derivation: BK_PROBES_LCG (0) or BK_PROBES_DH */
    int64_t gen;        /* window: the slice's generation, by number: it spans
                         * [gen * span, (gen + 1) * span) ms; rbchain, rbcuckoo: the
                         * variant's own word (a link's n2; sub-filter 0's deletes),
                         * which the file keeps where a window's generation goes;
                         * 0 for other variants */
    int64_t span;       /* window: that span's length in ms; 0 for other variants */
} bk_slice_view;

/* 1 when two arrays are laid out alike (m, k, block and probe derivation), so
 * one's cells can be combined with the other's. */
static inline int bk_same_shape(const bk_slice_view *a, const bk_slice_view *b)
{
    return a->m == b->m && a->k == b->k && a->block == b->block && a->probes == b->probes;
}

/* The file mapping a filter's payloads live in (src/io/mmap.c); opaque here. */
typedef struct bk_mapping bk_mapping;

/* The cells of a variant's payload, as its configuration gives them: bits
 * per cell (packed most significant bit first, as Redis's BITFIELD reads
 * them), and for a layout that keeps a key's cells within 64-byte lines,
 * the cells a line holds (0: none; a line is then whole cells followed by
 * zero bits up to its 512, docs/file-format.md). */
typedef struct bk_cells {
    unsigned bits;
    unsigned block;
    /* 1 when the cells are counters that stick at their largest value
     * (counting's): the file's census counts those as saturated. Any other
     * cell (a bit, a cuckoo fingerprint) is only set or not, whatever it
     * holds: the variant says which, never the cell's width. */
    unsigned counters;
} bk_cells;

/* What the file layer needs of a variant to read and check a file of it. */
typedef struct bk_variant_shape {
    bk_cells cells;      /* its payload's cells under the file's configuration */
    uint32_t max_slices; /* the slices a file of it may hold: 1, or a chain's limit */
    int keeps_time;      /* 1: its slices carry generations (window) */
    int own_words;       /* 1: its slices carry a word of their own in gen (rbchain,
                          * rbcuckoo), which its adopt checks */
} bk_variant_shape;

/* The shape of cfg's variant into *out: BK_OK, or BK_ECORRUPT (a variant
 * this build has no code for; detail set). */
int bk_variant_shape_of(const bk_config *cfg, bk_variant_shape *out);

/* A filter of cfg's variant over n slice views whose shapes the caller has
 * validated: it frees the payloads with a unless `borrowed` (they belong to
 * a mapping that outlives it). BK_OK (*out set) or an error, nothing taken. */
int bk_variant_adopt(const bk_config *cfg, const bk_allocator *a, const bk_slice_view *slices,
                     uint32_t n, int borrowed, bk_filter **out);

/* A filter's slices (their views as slice_view gives them), its validated
 * configuration, the allocator it was made with, and whether its cells are
 * in this process's memory (a Redis filter's are not: it has no payloads
 * to save). Not concurrent with writers, as saving is not. */
uint32_t bk_filter_slices(const bk_filter *f);
void bk_filter_slice(const bk_filter *f, uint32_t i, bk_slice_view *out);
const bk_config *bk_filter_config(const bk_filter *f);
bk_allocator bk_filter_allocator(const bk_filter *f);
int bk_filter_in_memory(const bk_filter *f);
/* Bring the views of f (cells in memory) up to date before they are
 * written: its variant's refresh (a loaded expandable table's whole check,
 * which counts the figures its image carries). A check that fails leaves
 * them as they are, so the image holds the table as it was read (refused
 * again where it is broken), and a save never fails for it. */
void bk_filter_settle(const bk_filter *f);

/* What owns a mapping, attached with it: sync writes a writable mapped
 * filter back (bk_close, and bk_free best effort); release unmaps and frees
 * the mapping once the filter is destroyed. */
typedef struct bk_backing_ops {
    int (*sync)(bk_filter *f);
    void (*release)(bk_mapping *map);
} bk_backing_ops;

/* Attach map (its payloads are the ones f borrowed) and its hooks to f, and
 * make f read-only unless writable; the mapping f lives in (NULL: none). */
void bk_filter_attach(bk_filter *f, bk_mapping *map, const bk_backing_ops *ops, int writable);
bk_mapping *bk_filter_mapping(const bk_filter *f);

#endif
