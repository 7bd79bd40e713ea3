/*
 * conn.h - the connections of one shared filter: a single server, or every
 * master of a Redis Cluster, behind one pipeline (internal; hiredis
 * underneath).
 *
 * Commands are appended (pipelined), each routed by its key's hash slot to
 * the node that serves it, and their replies read back in the order the
 * commands were appended. In a cluster, a MOVED reply updates the slot map
 * and the command is sent again to the new node; an ASK reply sends it once
 * to the named node after ASKING; the caller sees only the final reply.
 *
 * A lost connection (I/O error, timeout, closed) breaks the whole pipeline:
 * every connection is closed, the replies not yet read are lost, and the
 * caller decides which of those commands are safe to send again, after
 * bk_rconn_reconnect(). Not thread-safe: one thread per bk_rconn.
 */
#ifndef BK_REDIS_CONN_H
#define BK_REDIS_CONN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "redis_url.h"

typedef struct bk_rconn bk_rconn;

/* Connect to the URL's server (AUTH, SELECT, PING); when it is a cluster
 * node, read the slot map (CLUSTER SLOTS). BK_OK, BK_EIO (cannot connect:
 * detail names the address and the reason), BK_ESERVER (AUTH or SELECT
 * refused, a malformed slot map), BK_ENOMEM. The URL is copied. */
int bk_rconn_open(const bk_redis_url *u, bk_rconn **out);
void bk_rconn_close(bk_rconn *c);
const bk_redis_url *bk_rconn_url(const bk_rconn *c);
/* 1 when talking to a Redis Cluster. */
int bk_rconn_cluster(const bk_rconn *c);

/* The Redis Cluster hash slot of a key (CRC16/XMODEM of the key, or of its
 * hash tag: the text between the first '{' and the next '}', when not
 * empty), 0 .. 16383. */
unsigned bk_redis_key_slot(const char *key, size_t len);

/* Queue one command whose keys all hash to the slot of `key` (len bytes).
 * BK_OK, BK_ENOMEM, BK_EIO (the pipeline is broken). */
int bk_rconn_append(bk_rconn *c, const char *key, size_t keylen, int argc, const char **argv,
                    const size_t *lens);
/* The reply of the oldest queued command (redirections followed); free it
 * with freeReplyObject(). BK_EIO when the pipeline broke: every command
 * queued and not yet answered may or may not have been applied. */
int bk_rconn_reply(bk_rconn *c, redisReply **out);
/* 1 when the pipeline is broken and needs bk_rconn_reconnect(). */
int bk_rconn_broken(const bk_rconn *c);
/* Reconnect after a break, waiting 10 ms, 20 ms, ... (capped at 1 s) between
 * attempts, up to the URL's retries; a cluster's slot map is read again.
 * BK_OK or the last attempt's error. */
int bk_rconn_reconnect(bk_rconn *c);

/* A server restarting answers -LOADING until its data set is in memory: not
 * a refusal, a "not yet". Callers wait it out, BK_LOADING_PAUSE_MS at a
 * time, for at most BK_LOADING_WAIT_MS in all (then the error stands). */
#define BK_LOADING_PAUSE_MS 100
#define BK_LOADING_WAIT_MS  60000
/* 1 when r is a -LOADING error. */
int bk_rconn_loading(const redisReply *r);
/* Sleep ms milliseconds (signals do not cut it short). */
void bk_rconn_pause(long ms);

/* One command and its reply, reconnecting and resending when the pipeline
 * breaks (so only for commands that are safe to repeat). The queue must be
 * empty. An error reply is returned as a reply, not as an error code.
 * lens NULL: every argument is a C string. */
int bk_rconn_call(bk_rconn *c, const char *key, size_t keylen, redisReply **out, int argc,
                  const char **argv, const size_t *lens);
/* Same with a printf-like hiredis format ("%s %b" ...); key is a C string. */
int bk_rconn_callf(bk_rconn *c, const char *key, redisReply **out, const char *fmt, ...);
/* Delete the key name (UNLINK): BK_OK, or an error (BK_ESERVER: the server
 * refused, its reply quoted). */
int bk_rconn_unlink(bk_rconn *c, const char *name);
/* TYPE of key into type (len bytes; as Redis names it: "none", "set",
 * "string", ...): BK_OK or an error. */
int bk_rconn_type(bk_rconn *c, const char *key, char *type, size_t len);
/* The integer reply of `cmd key` (SCARD, STRLEN, LLEN ...), or 0 (an error
 * or another reply). */
uint64_t bk_rconn_count(bk_rconn *c, const char *cmd, const char *key);
int bk_rconn_vcallf(bk_rconn *c, const char *key, redisReply **out, const char *fmt, va_list ap);
/* Run one command on every node that serves slots (SCRIPT LOAD): BK_OK with
 * the last node's reply, or the first error (an error reply is returned as
 * the reply). The queue must be empty. */
int bk_rconn_all(bk_rconn *c, redisReply **out, const char *fmt, ...);

/* Parse a "MOVED slot host:port" or "ASK slot host:port" error reply: 0
 * with the fields set, -1 when r is anything else (or malformed). */
int bk_redis_parse_redirect(const redisReply *r, unsigned *slot, char *host, size_t hostlen,
                            int *port, int *ask);

/* Where the server is (the URL's address), for messages. */
const char *bk_rconn_where(const bk_rconn *c);

#endif
