/*
 * lua.h - the Lua mode, as the rest of src/redis sees it (internal).
 *
 * The Lua mode keeps shared filters in plain Redis strings and hashes,
 * changed by Lua scripts, for servers that run EVAL but load no modules
 * (managed Redis services). It is compatibility code, frozen: it shares the
 * standard, counting, scalable and window filters it had, with the
 * configuration keys it had, and refuses any other variant, or a
 * configuration that states any other key, by name (the module keeps every
 * variant and key: docs/redis.md). New variants and new keys
 * are the module's; nothing in a variant's folder changes for the Lua mode
 * (what it needs of a chain's layout comes through bk_chain_slice).
 *
 * src/redis/open.c decides, once per call, whether a name is the module's
 * or the Lua mode's, and then calls one of them: these are the Lua calls.
 */
#ifndef BK_REDIS_LUA_H
#define BK_REDIS_LUA_H

#include <stddef.h>
#include <stdint.h>

#include "bloomkit.h"
#include "../conn.h"

/* Flags of an open: BK_ROPEN_EXISTING fails with BK_ENOTFOUND instead of
 * creating; BK_ROPEN_PUSH creates with the "pushing" mark and fails when
 * the name exists; BK_ROPEN_ANY_STATE opens a filter that carries the mark
 * (to drop it); BK_ROPEN_PROBES_DH creates with the older classic probes
 * (metadata format 2: the push of a format-1 file); BK_ROPEN_SLICES_AVERAGE
 * creates a chain whose slices are sized as 0.1.0 sized them (format 4: the
 * push of a chain 0.1.0 made). */
#define BK_ROPEN_EXISTING       1u
#define BK_ROPEN_PUSH           2u
#define BK_ROPEN_ANY_STATE      4u
#define BK_ROPEN_PROBES_DH      8u
#define BK_ROPEN_SLICES_AVERAGE 16u

/* Open (or create) the Lua mode's filter `name` on conn, which it takes
 * over (closed on error). cfg: validated, the configuration to create
 * with; text: when not NULL, config text to check an existing filter
 * against (over its configuration); strict: compare want itself. block_bytes:
 * the URL's. BK_OK with *out, or an error (err, errlen: the config's). */
int bk_lua_open(bk_rconn *conn, const char *name, uint64_t block_bytes, const bk_config *cfg,
                const bk_config *want, const char *text, int strict, unsigned flags, char *err,
                size_t errlen, bk_filter **out);

/* Push: BK_OK when the Lua mode can hold a copy of f (else why not, by
 * name), with the flags its open needs added to *flags; then f's cells
 * into dst, a filter opened with them (on failure the name is dropped
 * again, best effort). */
int bk_lua_can_push(const bk_filter *f, unsigned *flags);
int bk_lua_push_into(bk_filter *dst, const bk_filter *f);
/* Pull: a local copy of src, a Lua-mode filter, into *out. */
int bk_lua_pull_from(bk_filter *src, bk_filter **out);
/* Drop: every key of the Lua-mode filter f; or, for a name whose
 * metadata cannot be read (why: the opener's error), every key of the
 * name's pattern once the metadata shows it is a filter's. */
int bk_lua_drop(bk_filter *f);
int bk_lua_drop_damaged(const char *url, const char *why);

#endif
