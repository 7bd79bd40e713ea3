/*
 * filter_impl.h - the vtable every variant fills in, and the base struct every
 * variant embeds first (internal).
 *
 * Modelled on SQLite's sqlite3_io_methods: the table opens with a version
 * number and only ever grows at the end. Every object starts with a pointer to
 * its methods, so a pointer to a variant's struct is a pointer to bk_filter.
 * An operation a variant does not have is a NULL pointer, turned into
 * BK_ENOTSUP in one place (src/filter.c), never a stub in each variant.
 *
 * Methods receive the key's digest, computed once by src/filter.c; they never
 * see the key bytes.
 */
#ifndef BK_COMMON_FILTER_IMPL_H
#define BK_COMMON_FILTER_IMPL_H

#include "bloomkit.h"
#include "hash.h"
#include "siphash.h"

/* Version 1: every field below. */
#define BK_FILTER_OPS_VERSION 1

typedef struct bk_filter_ops {
    int version;      /* BK_FILTER_OPS_VERSION the table was written for */
    const char *name; /* "standard", ... */
    /* 1 new, 0 (maybe) present, or a negative BK_E* code. */
    int (*add)(bk_filter *f, const bk_hash *h);
    /* 1 maybe present, 0 absent. */
    int (*contains)(const bk_filter *f, const bk_hash *h);
    /* BK_OK or BK_ENOTFOUND; NULL when the variant cannot remove. */
    int (*remove)(bk_filter *f, const bk_hash *h);
    /* Fill the variant's figures; the base fields are filled by the caller. */
    void (*stats)(const bk_filter *f, bk_filter_stats *st);
    void (*clear)(bk_filter *f);
    /* Release everything, including f itself, with f->alloc. */
    void (*destroy)(bk_filter *f);
} bk_filter_ops;

struct bk_filter {
    const bk_filter_ops *ops;
    bk_allocator alloc; /* the allocator f was made with; frees with it */
    bk_config cfg;      /* validated, has_key = 1 with the actual key */
    bk_sipkey sipkey;   /* cfg.key as SipHash's two words */
};

/* Set up the base part of a variant's struct. */
static inline void bk_filter_base_init(bk_filter *f, const bk_filter_ops *ops, const bk_config *cfg,
                                       const bk_allocator *a)
{
    f->ops = ops;
    f->alloc = *a;
    f->cfg = *cfg;
    f->sipkey = bk_sipkey_from_bytes(cfg->key);
}

/* Variant constructor: cfg is validated and carries the key (has_key = 1). */
typedef int (*bk_filter_create_fn)(const bk_config *cfg, const bk_allocator *a, bk_filter **out);

#endif
