/*
 * modkey.h - module filters met by the Lua mode's library (modkey.c;
 * internal).
 */
#ifndef BK_REDIS_MODKEY_H
#define BK_REDIS_MODKEY_H

#include "bloomkit.h"
#include "conn.h"

/* The TYPE of a key that bloomkit's Redis module keeps. */
#define BK_RMOD_TYPE "bloomkit0"

/* 1 when name holds a module filter, 0 when not (missing, or another type),
 * or a negative error of the connection. */
int bk_rmod_is(bk_rconn *c, const char *name);
/* The error an opener reports for a module filter (BK_EINCOMPAT, detail set). */
int bk_rmod_refuse(const char *name);
/* A local copy of the module filter name (BF.SCANDUMP). */
int bk_rmod_pull(bk_rconn *c, const char *name, bk_filter **out);
/* Delete it. */
int bk_rmod_drop(bk_rconn *c, const char *name);

/* Pull or drop the URL's filter when it is a module filter: BK_OK (done),
 * BK_RMOD_NOT (not one: the caller goes on with the Lua mode), or an error. */
#define BK_RMOD_PULL 0
#define BK_RMOD_DROP 1
#define BK_RMOD_NOT  1
int bk_rmod_try(const char *url, int what, bk_filter **out);

#endif
