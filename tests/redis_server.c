/* redis_server.c - starting and stopping a real redis-server (see redis_server.h). */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include "redis_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

int test_redis_available(void)
{
    return system("command -v redis-server >/dev/null 2>&1") == 0;
}

/* Bind a loopback TCP socket to port (0: any); the socket, or -1. */
static int bound_socket(int port, int *got)
{
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        close(fd);
        return -1;
    }
    *got = ntohs(a.sin_port);
    return fd;
}

/* A free port P whose cluster bus port P + 10000 is free too (Redis Cluster
 * binds both, and refuses a P above 55535): an ephemeral port above that,
 * or one whose bus port another server holds, failed a cluster start. */
static int free_port(void)
{
    for (int tries = 0; tries < 200; tries++) {
        int port = -1, bus = -1;
        const int fd = bound_socket(0, &port);
        if (fd < 0)
            return -1;
        const int bfd = port <= 55535 ? bound_socket(port + 10000, &bus) : -1;
        close(fd);
        if (bfd >= 0) {
            close(bfd);
            return port;
        }
    }
    return -1;
}

/* Wait (bounded) until the server answers PING: a wait for a condition, not
 * a sleep for timing. */
static int wait_ready(const test_redis *r)
{
    for (int i = 0; i < 1000; i++) {
        int status;
        if (waitpid(r->pid, &status, WNOHANG) == r->pid)
            return -1; /* it exited: port taken, bad argument */
        struct timeval tv = {1, 0};
        redisContext *c = redisConnectWithTimeout("127.0.0.1", r->port, tv);
        if (c && !c->err) {
            redisReply *rep = redisCommand(c, "PING");
            /* up: answering, also while it loads its data (-LOADING) or
             * when it wants a password first (-NOAUTH) */
            const int ok =
                rep && (rep->type == REDIS_REPLY_STATUS ||
                        (rep->type == REDIS_REPLY_ERROR && (strncmp(rep->str, "LOADING", 7) == 0 ||
                                                            strncmp(rep->str, "NOAUTH", 6) == 0)));
            if (rep)
                freeReplyObject(rep);
            redisFree(c);
            if (ok)
                return 0;
        } else if (c) {
            redisFree(c);
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

int test_redis_start(test_redis *r, int port, const char *const *extra)
{
    if (port == 0) {
        memset(r, 0, sizeof *r);
        snprintf(r->dir, sizeof r->dir, "/tmp/bk-redis-XXXXXX");
        if (!mkdtemp(r->dir))
            return -1;
    }
    for (int attempt = 0; attempt < 5; attempt++) {
        r->port = port ? port : free_port();
        char portbuf[16], logbuf[128];
        snprintf(portbuf, sizeof portbuf, "%d", r->port);
        snprintf(logbuf, sizeof logbuf, "%s/redis.log", r->dir);
        const char *argv[64] = {
            "redis-server", "--port", portbuf,     "--bind", "127.0.0.1",   "--save", "",
            "--dir",        r->dir,   "--logfile", logbuf,   "--daemonize", "no"};
        int argc = 13;
        for (int i = 0; extra && extra[i] && argc < 62; i++)
            argv[argc++] = extra[i];
        argv[argc] = NULL;
        const pid_t pid = fork();
        if (pid < 0)
            return -1;
        if (pid == 0) {
            /* Dies with the process that started it (a failing test too), and
             * holds none of its pipes open. */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            const int null = open("/dev/null", O_RDWR);
            if (null >= 0) {
                dup2(null, 0);
                dup2(null, 1);
                dup2(null, 2);
                close(null);
            }
            setpgid(0, 0);
            execvp("redis-server", (char *const *)argv);
            _exit(127);
        }
        r->pid = pid;
        if (wait_ready(r) == 0)
            return 0;
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        r->pid = 0;
        if (port)
            break;
    }
    return -1;
}

void test_redis_kill(test_redis *r, int hard)
{
    if (r->pid <= 0)
        return;
    kill(r->pid, hard ? SIGKILL : SIGTERM);
    waitpid(r->pid, NULL, 0);
    r->pid = 0;
}

void test_redis_stop(test_redis *r)
{
    test_redis_kill(r, 0);
    if (r->dir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", r->dir);
        r->dir[0] = '\0';
    }
}

const char *test_redis_url(const test_redis *r, const char *name, const char *query, char *buf,
                           unsigned len)
{
    snprintf(buf, len, "redis://127.0.0.1:%d/%s%s%s", r->port, name, query ? "?" : "",
             query ? query : "");
    return buf;
}
