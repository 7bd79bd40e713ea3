/*
 * kinds.c - the variants the Lua mode keeps, one row each (rfilter.h,
 * bk_lua_kind), and its refusal of every other: the one place that names a
 * variant in src/redis/lua. Frozen: a new variant gets no row here; it is
 * the module's (docs/redis.md).
 */
#include "rfilter.h"

#include <string.h>

#include "../../common/error.h"

#define OPS(o) (1u << (o))

static const bk_lua_kind kinds[] = {
    /* standard: one array of bits; a chunk's adds and lookups are one script
     * (or BITFIELD_RO) per block; every command safe to send again */
    {BK_VARIANT_STANDARD, &bk_rfilter_ops, &bk_lua_array_store, 1, 0, 0, 0,
     OPS(BK_KEYS_ADD) | OPS(BK_KEYS_CONTAINS), OPS(BK_KEYS_ADD) | OPS(BK_KEYS_CONTAINS), NULL},
    /* counting: one array of 4-bit counters; an add or a removal sent twice
     * would count twice: only lookups are sent again */
    {BK_VARIANT_COUNTING, &bk_rfilter_removing_ops, &bk_lua_array_store, 4, 0, 0, 0,
     OPS(BK_KEYS_CONTAINS), OPS(BK_KEYS_CONTAINS), NULL},
    /* scalable: a chain, NAME:{NAME}:j/b:data, every count in NAME */
    {BK_VARIANT_SCALABLE, &bk_rfilter_ops, &bk_lua_chain_store, 1, 1, 0, 1, 0,
     OPS(BK_KEYS_ADD) | OPS(BK_KEYS_CONTAINS), NULL},
    /* window: a chain per generation, kept by the server's clock */
    {BK_VARIANT_WINDOW, &bk_rfilter_ops, &bk_lua_window_store, 1, 1, 1, 0, 0,
     OPS(BK_KEYS_ADD) | OPS(BK_KEYS_CONTAINS),
     "a window filter cannot be copied between Redis and this process (its generations "
     "are kept by the server's clock); open the name with the same config and let the "
     "crawl fill it"},
};

const bk_lua_kind *bk_lua_kind_of(bk_variant v)
{
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (kinds[i].variant == v)
            return &kinds[i];
    return NULL;
}

int bk_lua_refuses(const char *name, bk_variant v)
{
    return bk_fail(BK_ENOTSUP,
                   "redis filter %s: variant=%s has no Lua scripts (the Lua mode shares "
                   "standard, counting, scalable and window filters); load bloomkit's Redis "
                   "module into the server (redis-server --loadmodule, docs/redis.md), which "
                   "keeps every variant",
                   name, bk_variant_name(v));
}

/* The configuration keys the Lua mode keeps: the ones it had when it was
 * frozen. A key added since is the module's. */
static const char *const keys_kept[] = {
    "variant", "capacity",   "generations", "refresh", "max_bytes", "bits",   "hashes", "fpr",
    "growth",  "tightening", "hash",        "layout",  "key",       "window", "input",
};

int bk_lua_keys_refused(const char *name, const bk_config *cfg, const char *const *kept,
                        size_t nkept)
{
    if (!kept) {
        kept = keys_kept;
        nkept = sizeof keys_kept / sizeof *keys_kept;
    }
    /* a key is stated when its value is not its default for the variant */
    bk_config d;
    bk_config_init(&d);
    d.variant = cfg->variant;
    const char *key;
    for (unsigned i = 0; (key = bk_config_key(i, NULL, 0, NULL)) != NULL; i++) {
        size_t j = 0;
        while (j < nkept && strcmp(kept[j], key) != 0)
            j++;
        char have[64] = "", dflt[64] = "";
        if (j < nkept || bk_config_get(cfg, key, have, sizeof have) < 0 ||
            bk_config_get(&d, key, dflt, sizeof dflt) < 0 || strcmp(have, dflt) == 0)
            continue;
        return bk_fail(BK_ENOTSUP,
                       "redis filter %s: %s=%s has no place in the Lua mode (it keeps the keys "
                       "it had; a key added since is the module's): load bloomkit's Redis module "
                       "into the server (docs/redis.md)",
                       name, key, have);
    }
    return BK_OK;
}
