/*
 * redis_url.h - where a shared filter lives: a parsed redis:// or unix:// URL
 * (internal).
 *
 *   redis://[[user]:password@]host[:port]/name[?option=value&...]
 *   unix://[[user]:password@]/path/to/socket?name=NAME[&option=value...]
 *
 * Options: connect_timeout and timeout (milliseconds, 1 .. 3,600,000),
 * retries (reconnect attempts after a lost connection, 0 .. 100), db
 * (database number, 0 .. 65535), block_bytes (bytes of bit array per Redis
 * key, a multiple of 64 from 64 to 512 MiB; tests use small blocks to split
 * small filters), shards (a module filter split into this many keys, 1 ..
 * 1024: shards.h). Host may be a bracketed IPv6 address. Percent-escapes are
 * decoded in user, password and path.
 */
#ifndef BK_REDIS_URL_H
#define BK_REDIS_URL_H

#include <stddef.h>
#include <stdint.h>

#include "bloomkit_redis.h"

/* Longest filter name; names are printable ASCII without spaces, braces or
 * the characters that would make key names ambiguous. */
#define BK_REDIS_NAME_MAX 200
/* Room for any Redis key name a filter uses: its name twice (the key and the
 * hash tag {NAME/b}) and the slice, block and suffix around them. */
#define BK_REDIS_KEY_MAX (BK_REDIS_NAME_MAX * 2 + 64)
/* Redis's string limit: 512 MiB (2^32 bits, SETBIT's last offset + 1). */
#define BK_REDIS_BLOCK_MAX (UINT64_C(512) << 20)
/* Most shards one module filter is split into (shards=S). */
#define BK_REDIS_SHARDS_MAX 1024

typedef struct bk_redis_url {
    char *host;             /* NULL for unix sockets */
    int port;               /* default 6379 */
    char *path;             /* unix socket path, or NULL */
    char *user;             /* NULL: no ACL user */
    char *password;         /* NULL: no AUTH */
    char *name;             /* the filter's name (its metadata key) */
    int db;                 /* SELECT this database when non-zero */
    int connect_timeout_ms; /* default 2000 */
    int timeout_ms;         /* per command, default 10000 */
    int retries;            /* reconnect attempts, default 5 */
    uint64_t block_bytes;   /* default BK_REDIS_BLOCK_MAX */
    int block_bytes_given;  /* the URL states it: an existing filter must agree */
    int shards;             /* module filters split in this many (0: not given) */
    bk_allocator alloc;     /* the strings' allocator (current at parse time) */
} bk_redis_url;

/* Parse text into *u (heap strings, free with bk_redis_url_free). Returns
 * BK_OK or BK_EINVAL with a detail naming the part at fault in
 * bk_last_error(); *u is zeroed on error. The password never appears in a
 * message. */
int bk_redis_url_parse(const char *text, bk_redis_url *u);
void bk_redis_url_free(bk_redis_url *u);

/* 1 when name is a valid filter name (see BK_REDIS_NAME_MAX), else 0. */
int bk_redis_name_valid(const char *name);

/* "host:port" or the socket path, for messages (never the password). */
const char *bk_redis_url_where(const bk_redis_url *u, char *buf, size_t len);

#endif
