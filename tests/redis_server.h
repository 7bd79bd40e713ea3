/*
 * redis_server.h - a real redis-server for the tests: started on a free
 * loopback port in a scratch directory, stopped (and the directory removed)
 * at the end, also when tests fail. No mock anywhere.
 */
#ifndef BK_TESTS_REDIS_SERVER_H
#define BK_TESTS_REDIS_SERVER_H

#include <sys/types.h>

typedef struct test_redis {
    pid_t pid;
    int port;
    char dir[64];
} test_redis;

/* 1 when a redis-server program is on PATH. */
int test_redis_available(void);

/* Start a server; extra: NULL-terminated extra arguments (may be NULL);
 * port 0 picks a free one, else that port (a restart). 0 or -1. */
int test_redis_start(test_redis *r, int port, const char *const *extra);

/* SIGKILL (hard) or SIGTERM the server and wait for it; the directory
 * stays (a restart reads its append-only file). */
void test_redis_kill(test_redis *r, int hard);

/* Stop it and remove its directory. */
void test_redis_stop(test_redis *r);

/* "redis://127.0.0.1:PORT/NAME" plus query into buf. */
const char *test_redis_url(const test_redis *r, const char *name, const char *query, char *buf,
                           unsigned len);

#endif
