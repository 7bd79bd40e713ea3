/*
 * conn.h - one connection to a Redis server, with bounded reconnects
 * (internal; hiredis underneath).
 *
 * Commands are appended (pipelined) and their replies read back in order.
 * A lost connection (I/O error, timeout, server closed) leaves the
 * connection broken: the caller decides which in-flight commands are safe to
 * send again, calls bk_rconn_reconnect() (attempts with exponential backoff,
 * as many as the URL's retries), and resends. Not thread-safe: one thread
 * per connection.
 */
#ifndef BK_REDIS_CONN_H
#define BK_REDIS_CONN_H

#include <stddef.h>

#include <hiredis/hiredis.h>

#include "url.h"

typedef struct bk_rconn bk_rconn;

/* Connect, AUTH and SELECT as the URL says. BK_OK, BK_EIO (cannot connect:
 * detail names the address and the reason), BK_ESERVER (AUTH or SELECT
 * refused), BK_ENOMEM. The URL is copied. */
int bk_rconn_open(const bk_redis_url *u, bk_rconn **out);
void bk_rconn_close(bk_rconn *c);
const bk_redis_url *bk_rconn_url(const bk_rconn *c);

/* Queue one command (argv with explicit lengths). BK_OK, BK_ENOMEM, BK_EIO
 * (the connection is broken). */
int bk_rconn_append(bk_rconn *c, int argc, const char **argv, const size_t *lens);
/* The reply of the oldest queued command; free it with freeReplyObject().
 * BK_EIO when the connection broke (every queued command's fate is then
 * unknown: it may or may not have been applied). */
int bk_rconn_reply(bk_rconn *c, redisReply **out);
/* 1 when the connection is broken and needs bk_rconn_reconnect(). */
int bk_rconn_broken(const bk_rconn *c);
/* Reconnect after a break, waiting 10 ms, 20 ms, ... (capped at 1 s) between
 * attempts, up to the URL's retries. BK_OK or the last attempt's error. */
int bk_rconn_reconnect(bk_rconn *c);

/* Send one command and wait for its reply, reconnecting and resending when
 * the connection breaks (so only for commands that are safe to repeat). An
 * error reply is returned as a reply, not as an error code. */
int bk_rconn_call(bk_rconn *c, redisReply **out, int argc, const char **argv, const size_t *lens);
/* Same with a printf-like hiredis format ("%s %b" ...). */
int bk_rconn_callf(bk_rconn *c, redisReply **out, const char *fmt, ...);

/* Where the server is, for messages. */
const char *bk_rconn_where(const bk_rconn *c);

#endif
