/*
 * filter.c - the public filter API: validate, hash the key once, dispatch.
 *
 * This is the only file that knows all three variants (through their
 * constructors) and the only place a missing vtable operation becomes
 * BK_ENOTSUP. Variants receive a digest, never key bytes.
 */
#include <string.h>

#include "bloomkit.h"
#include "common/alloc.h"
#include "common/config.h"
#include "common/filter_impl.h"
#include "common/random.h"
#include "counting/counting.h"
#include "scalable/scalable.h"
#include "standard/standard.h"

static const bk_filter_create_fn creators[] = {
    [BK_VARIANT_STANDARD] = bk_standard_create,
    [BK_VARIANT_COUNTING] = bk_counting_create,
    [BK_VARIANT_SCALABLE] = bk_scalable_create,
};

/* A key is (NULL, 0) or (non-NULL, any length). */
static int key_valid(const void *key, size_t len)
{
    return key != NULL || len == 0;
}

static void hash_for(const bk_filter *f, const void *key, size_t len, bk_hash *h)
{
    bk_hash_key(f->cfg.hash, &f->sipkey, key, len, h);
}

int bk_new(const bk_config *cfg, bk_filter **out)
{
    if (!out)
        return BK_EINVAL;
    *out = NULL;
    bk_config c;
    if (cfg)
        c = *cfg;
    else
        bk_config_init(&c);
    if (bk_config_validate(&c, NULL, 0) != BK_OK)
        return BK_ECONFIG;
    if (!c.has_key) {
        const int rc = bk_random_bytes(c.key, sizeof c.key);
        if (rc != BK_OK)
            return rc;
        c.has_key = 1;
    }
    const bk_allocator a = bk_current_allocator();
    return creators[c.variant](&c, &a, out);
}

void bk_free(bk_filter *f)
{
    if (f)
        f->ops->destroy(f);
}

int bk_add(bk_filter *f, const void *key, size_t len)
{
    if (!f || !key_valid(key, len))
        return BK_EINVAL;
    bk_hash h;
    hash_for(f, key, len, &h);
    return f->ops->add(f, &h);
}

int bk_contains(const bk_filter *f, const void *key, size_t len)
{
    if (!f || !key_valid(key, len))
        return BK_EINVAL;
    bk_hash h;
    hash_for(f, key, len, &h);
    return f->ops->contains(f, &h);
}

int bk_remove(bk_filter *f, const void *key, size_t len)
{
    if (!f || !key_valid(key, len))
        return BK_EINVAL;
    if (!f->ops->remove)
        return BK_ENOTSUP;
    bk_hash h;
    hash_for(f, key, len, &h);
    return f->ops->remove(f, &h);
}

int bk_clear(bk_filter *f)
{
    if (!f)
        return BK_EINVAL;
    f->ops->clear(f);
    return BK_OK;
}

int bk_stats(const bk_filter *f, bk_filter_stats *st)
{
    if (!f || !st)
        return BK_EINVAL;
    memset(st, 0, sizeof *st);
    st->variant = f->ops->name;
    st->hash = bk_hash_name(f->cfg.hash);
    st->fpr = f->cfg.fpr;
    f->ops->stats(f, st);
    return BK_OK;
}

int bk_get_config(const bk_filter *f, bk_config *cfg)
{
    if (!f || !cfg)
        return BK_EINVAL;
    *cfg = f->cfg;
    return BK_OK;
}
