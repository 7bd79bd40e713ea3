/*
 * open.c - the entry points of shared filters (bk_redis_open, _existing,
 * _config, bk_redis_push, _pull, _drop; see bloomkit_redis.h): each parses
 * its URL, asks the server once whether the name is kept by bloomkit's
 * module (or would be, on a server that has it), and hands the call to the
 * module client (modfilter.c, modkey.c, shards.c) or to the Lua mode
 * (lua/, for servers without the module). The choice is made here and
 * nowhere else.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "bloomkit_redis.h"
#include "bloomkit_tools.h"
#include "../common/alloc.h"
#include "../core/config.h"
#include "../common/error.h"
#include "../core/filter_impl.h"
#include "lua/lua.h"
#include "modkey.h"
#include "redis_url.h"

/* Who keeps name on conn for an open with these flags: BK_RMOD_MODULE or
 * BK_RMOD_SHARDS (*create: 1 when it does not exist yet and the module
 * will make it), BK_RMOD_NONE or BK_RMOD_OTHER (the Lua mode), or an
 * error. shards: the URL's (0: not asked). */
static int keeper(bk_rconn *conn, const char *name, unsigned flags, unsigned shards, int *create)
{
    *create = 0;
    int kind = bk_rmod_is(conn, name);
    if (kind < 0)
        return kind;
    if (kind == BK_RMOD_NONE && !(flags & BK_ROPEN_PUSH)) { /* push lays out the Lua keys */
        const int has = bk_rmod_available(conn, name);
        if (has < 0)
            return has;
        if (has && (flags & BK_ROPEN_EXISTING)) /* not the Lua path: it would race a creator */
            return bk_fail(BK_ENOTFOUND, "redis filter %s does not exist", name);
        if (!has && shards > 1)
            return bk_fail(BK_ENOTSUP,
                           "redis filter %s: shards=%u needs bloomkit's Redis module on the "
                           "server (docs/redis.md)",
                           name, shards);
        if (has) {
            *create = 1;
            kind = shards > 1 ? BK_RMOD_SHARDS : BK_RMOD_MODULE;
        }
    }
    if (shards && kind != BK_RMOD_NONE && (kind == BK_RMOD_SHARDS) != (shards > 1))
        return bk_fail(BK_EINCOMPAT, "redis filter %s %s; the URL asks shards=%u", name,
                       kind == BK_RMOD_SHARDS ? "is split into shards" : "is not split into shards",
                       shards);
    if ((kind == BK_RMOD_MODULE || kind == BK_RMOD_SHARDS) && (flags & BK_ROPEN_PUSH))
        return bk_fail(BK_EINCOMPAT,
                       "redis filter %s already exists (kept by bloomkit's Redis module); push "
                       "needs a new name, or the old one dropped first (bloomkit drop --redis "
                       "URL)",
                       name);
    return kind;
}

/* The body of every open (flags: lua/lua.h). want: the configuration to
 * create with (NULL: defaults); text: when not NULL, the explicit config
 * text to check an existing filter against (applied over its
 * configuration); strict: compare want itself against an existing filter. */
static int open_impl(const char *url, const bk_config *want, const char *text, int strict,
                     unsigned flags, char *err, size_t errlen, bk_filter **out)
{
    if (!out)
        return bk_fail(BK_EINVAL, "redis open: no output");
    *out = NULL;
    bk_config c;
    if (want)
        c = *want;
    else
        bk_config_init(&c);
    char why[256];
    if ((text && bk_config_parse_over(&c, text, err, errlen) != BK_OK) ||
        bk_config_validate(&c, err, errlen) != BK_OK)
        return bk_fail(BK_ECONFIG, "redis open: %s", bk_detail_or("bad config", why, sizeof why));
    bk_redis_url u;
    int rc = bk_redis_url_parse(url, &u);
    if (rc != BK_OK) {
        bk_errorf(err, errlen, "%s", bk_last_error());
        return rc;
    }
    const bk_allocator a = bk_current_allocator();
    char *name = bk_mem_strdup(&a, u.name);
    const uint64_t block_bytes = u.block_bytes;
    const unsigned shards = (unsigned)u.shards;
    bk_rconn *conn = NULL;
    rc = name ? bk_rconn_open(&u, &conn) : bk_fail(BK_ENOMEM, "redis open: out of memory");
    bk_redis_url_free(&u);
    int create = 0, kind = rc == BK_OK ? keeper(conn, name, flags, shards, &create) : rc;
    if (kind == BK_RMOD_MODULE || kind == BK_RMOD_SHARDS) {
        rc = kind == BK_RMOD_SHARDS
                 ? bk_rmod_open_sharded(conn, name, &c, text, strict, !create, shards, out)
                 : bk_rmod_open(conn, name, &c, text, strict, !create, out);
        if (rc == BK_OK)
            conn = NULL; /* the module filter holds it now */
    } else if (kind >= 0) {
        rc = bk_lua_open(conn, name, block_bytes, &c, want, text, strict, flags, err, errlen, out);
        conn = NULL; /* taken over, even on error */
    } else {
        rc = kind;
    }
    if (rc != BK_OK && err && errlen && !err[0])
        bk_errorf(err, errlen, "%s", bk_last_error());
    bk_rconn_close(conn);
    bk_mem_free(&a, name);
    return rc;
}

int bk_redis_open(const char *url, const bk_config *cfg, bk_filter **out)
{
    bk_call_begin();
    return bk_done(open_impl(url, cfg, NULL, cfg != NULL, 0, NULL, 0, out), "redis_open");
}

int bk_redis_open_existing(const char *url, bk_filter **out)
{
    bk_call_begin();
    return bk_done(open_impl(url, NULL, NULL, 0, BK_ROPEN_EXISTING, NULL, 0, out),
                   "redis_open_existing");
}

int bk_redis_open_default(const char *url, const bk_config *cfg, bk_filter **out)
{
    bk_call_begin();
    if (!cfg)
        return bk_done(bk_fail(BK_EINVAL, "redis open: no config"), "redis_open_default");
    for (int attempt = 0; attempt < 2; attempt++) { /* a creator in between: adopt its filter */
        int rc = open_impl(url, NULL, NULL, 0, BK_ROPEN_EXISTING, NULL, 0, out);
        if (rc != BK_ENOTFOUND)
            return bk_done(rc, "redis_open_default");
        bk_config c = *cfg;
        rc = open_impl(url, &c, NULL, 1, 0, NULL, 0, out);
        if (rc == BK_ENOTSUP && c.variant == BK_VARIANT_EXPANDABLE &&
            bk_config_parse_over(&c, bk_config_preset("chain"), NULL, 0) == BK_OK)
            rc = open_impl(url, &c, NULL, 1, 0, NULL, 0, out); /* the Lua mode's chain */
        if (rc != BK_EINCOMPAT)
            return bk_done(rc, "redis_open_default");
    }
    return bk_done(bk_fail(BK_EIO, "redis open: the filter kept changing while it was opened"),
                   "redis_open_default");
}

int bk_redis_open_config(const char *url, const char *config_text, char *err, size_t errlen,
                         bk_filter **out)
{
    if (err && errlen)
        err[0] = '\0';
    bk_call_begin();
    return bk_done(open_impl(url, NULL, config_text, 0, 0, err, errlen, out), "redis_open_config");
}

int bk_redis_push(const bk_filter *f, const char *url)
{
    bk_call_begin();
    if (!f || !url)
        return bk_fail(BK_EINVAL, "push: no filter or no URL");
    bk_config cfg;
    if (!bk_cells_in_memory(f))
        return bk_fail(BK_EINVAL, "push: the filter already lives on a server");
    int rc = bk_get_config(f, &cfg);
    if (rc == BK_OK)
        rc = bk_rmod_try(url, BK_RMOD_PUSH, f, NULL); /* into the module when it is there */
    if (rc != BK_RMOD_NOT)
        return bk_done(rc, "redis_push");
    unsigned flags = BK_ROPEN_PUSH;
    if ((rc = bk_lua_can_push(f, &flags)) != BK_OK)
        return rc;
    bk_filter *dst;
    rc = open_impl(url, &cfg, NULL, 1, flags, NULL, 0, &dst);
    if (rc == BK_OK) {
        rc = bk_lua_push_into(dst, f);
        bk_free(dst);
    }
    return bk_done(rc, "redis_push");
}

int bk_redis_pull(const char *url, bk_filter **out)
{
    bk_call_begin();
    if (!out)
        return bk_fail(BK_EINVAL, "pull: no output");
    *out = NULL;
    int rc = bk_rmod_try(url, BK_RMOD_PULL, NULL, out); /* a module filter: BF.SCANDUMP */
    if (rc != BK_RMOD_NOT)
        return bk_done(rc, "redis_pull");
    bk_filter *src;
    rc = open_impl(url, NULL, NULL, 0, BK_ROPEN_EXISTING, NULL, 0, &src);
    if (rc == BK_OK) {
        rc = bk_lua_pull_from(src, out);
        bk_free(src);
    }
    return bk_done(rc, "redis_pull");
}

int bk_redis_drop(const char *url)
{
    bk_call_begin();
    int rc = bk_rmod_try(url, BK_RMOD_DROP, NULL, NULL); /* a module filter: UNLINK */
    if (rc != BK_RMOD_NOT)
        return bk_done(rc, "redis_drop");
    bk_filter *f;
    rc = open_impl(url, NULL, NULL, 0, BK_ROPEN_EXISTING | BK_ROPEN_ANY_STATE, NULL, 0, &f);
    if (rc == BK_ENOTFOUND)
        return BK_OK;
    if (rc == BK_ESERVER && strstr(bk_last_error(), "metadata")) { /* unreadable: damaged */
        char why[512];
        snprintf(why, sizeof why, "%s", bk_last_error());
        return bk_lua_drop_damaged(url, why);
    }
    if (rc != BK_OK)
        return bk_done(rc, "redis_drop");
    rc = bk_lua_drop(f);
    bk_free(f);
    return bk_done(rc, "redis_drop");
}
