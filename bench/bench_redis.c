/*
 * bench_redis.c - keys per second into a shared filter on a local
 * redis-server, bloomkit's pipelined batches against the seed-style client
 * (k separate GETBIT commands per key, then k SETBIT when one was clear: one
 * round trip per command, and not atomic), from 1 process and from 8, in one
 * run on the same keys. The server is started here on a free loopback port
 * (tests/redis_server.c) and stopped at the end.
 *
 * usage: bench_redis [-n KEYS] [--smoke]
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "../tests/redis_server.h"
#include "bloomkit_redis.h"
#include "bench_keys.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static test_redis srv;
static const char *const config_classic = "variant=standard capacity=10000000 fpr=0.0001";
static const char *const config_blocked =
    "variant=standard capacity=10000000 fpr=0.0001 layout=blocked";
static const char *config; /* the one being measured */

/* bloomkit: bk_add_batch (or bk_contains_batch) over chunks of 512 keys. */
static int run_bloomkit(const char *url, const keyset *ks, size_t from, size_t to, int lookup)
{
    bk_filter *f;
    char err[300];
    if (bk_redis_open_config(url, config, err, sizeof err, &f) != BK_OK) {
        fprintf(stderr, "bench_redis: %s\n", err);
        return -1;
    }
    enum { B = 512 };
    const void *keys[B];
    size_t lens[B];
    int res[B];
    for (size_t at = from; at < to; at += B) {
        const size_t n = to - at < B ? to - at : B;
        for (size_t i = 0; i < n; i++) {
            keys[i] = ks->bytes + ks->off[at + i];
            lens[i] = ks->off[at + i + 1] - ks->off[at + i];
        }
        const int rc =
            lookup ? bk_contains_batch(f, keys, lens, n, res) : bk_add_batch(f, keys, lens, n, res);
        if (rc != BK_OK) {
            fprintf(stderr, "bench_redis: %s\n", bk_last_error());
            bk_free(f);
            return -1;
        }
    }
    bk_free(f);
    return 0;
}

/* The seed-style client: its own m and k (the same as bloomkit's), probes by
 * double hashing of a SipHash digest, one GETBIT per probe, then one SETBIT
 * per probe when any was clear. */
static int run_naive(const keyset *ks, size_t from, size_t to, int lookup, uint64_t m, unsigned k)
{
    redisContext *c = redisConnect("127.0.0.1", srv.port);
    if (!c || c->err)
        return -1;
    static const uint8_t key[16] = {1, 2, 3};
    for (size_t i = from; i < to; i++) {
        uint8_t d[16];
        bk_siphash24_128(key, ks->bytes + ks->off[i], ks->off[i + 1] - ks->off[i], d);
        uint64_t h1, h2;
        memcpy(&h1, d, 8);
        memcpy(&h2, d + 8, 8);
        int all = 1;
        for (unsigned j = 0; j < k; j++) {
            redisReply *r =
                redisCommand(c, "GETBIT naive %llu", (unsigned long long)((h1 + j * h2) % m));
            if (!r)
                return -1;
            all &= r->integer == 1;
            freeReplyObject(r);
        }
        if (all || lookup)
            continue;
        for (unsigned j = 0; j < k; j++) {
            redisReply *r =
                redisCommand(c, "SETBIT naive %llu 1", (unsigned long long)((h1 + j * h2) % m));
            if (!r)
                return -1;
            freeReplyObject(r);
        }
    }
    redisFree(c);
    return 0;
}

/* Wall time of `procs` processes splitting keys [0, n) evenly. */
static double in_procs(int procs, int naive, const char *url, const keyset *ks, size_t n,
                       int lookup, uint64_t m, unsigned k)
{
    const double t0 = now();
    pid_t pids[8];
    for (int p = 0; p < procs; p++) {
        const size_t from = n * (size_t)p / (size_t)procs, to = n * (size_t)(p + 1) / (size_t)procs;
        pids[p] = fork();
        if (pids[p] == 0)
            _exit((naive ? run_naive(ks, from, to, lookup, m, k)
                         : run_bloomkit(url, ks, from, to, lookup)) == 0
                      ? 0
                      : 1);
    }
    int ok = 1;
    for (int p = 0; p < procs; p++) {
        int st;
        waitpid(pids[p], &st, 0);
        ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    if (!ok) {
        fprintf(stderr, "bench_redis: a worker failed\n");
        test_redis_stop(&srv);
        exit(1);
    }
    return now() - t0;
}

/* The server's own ceiling: redis-benchmark's SET rate with 512 commands
 * pipelined per round trip, one client (0 when redis-benchmark is missing). */
static double server_ceiling(size_t n)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "redis-benchmark -p %d -t set -P 512 -c 1 -n %zu -q 2>/dev/null",
             srv.port, n);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    char line[512];
    double rate = 0;
    while (fgets(line, sizeof line, p)) {
        /* progress ("SET: rps=...") and the result ("SET: N requests per
         * second") may share a line, separated by carriage returns */
        for (const char *at = strstr(line, "SET: "); at; at = strstr(at + 5, "SET: ")) {
            const double v = strtod(at + 5, NULL);
            if (v > 0)
                rate = v;
        }
    }
    pclose(p);
    return rate;
}

static void flush(void)
{
    redisContext *c = redisConnect("127.0.0.1", srv.port);
    redisReply *r = c ? redisCommand(c, "FLUSHALL") : NULL;
    if (r)
        freeReplyObject(r);
    if (c)
        redisFree(c);
}

/* long: the runs in the order the report prints them, each a few lines. */
int main(int argc, char **argv)
{
    size_t n = 200000;
    int smoke = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--smoke"))
            smoke = 1;
        else {
            fprintf(stderr, "usage: bench_redis [-n KEYS] [--smoke]\n");
            return 2;
        }
    }
    if (smoke)
        n = 4000;
    if (!test_redis_available()) {
        fprintf(stderr, "bench_redis: skipped, redis-server is not installed\n");
        return 0;
    }
    if (test_redis_start(&srv, 0, NULL) != 0) {
        fprintf(stderr, "bench_redis: could not start redis-server\n");
        return 1;
    }
    bk_config cfg;
    bk_plan plan;
    config = config_classic;
    bk_config_parse(&cfg, config, NULL, 0);
    bk_plan_config(&cfg, &plan);
    char url[256];
    test_redis_url(&srv, "bench", NULL, url, sizeof url);
    const keyset ks = keys_make(0, n);
    /* The naive client is ~2k round trips per key: give it fewer keys (a
     * rate is a rate) so the run stays short. */
    const size_t n_naive = n / 20 < 500 ? (n < 500 ? n : 500) : n / 20;
    printf("keys per second into one shared filter on a local redis-server (%s,\n"
           "m = %llu bits, k = %u); bloomkit: bk_add_batch / bk_contains_batch, 512 keys\n"
           "per round trip, one command per chunk (bk blocked: the same with layout=blocked);\n"
           "seed-style: k GETBIT then k SETBIT commands per key, one round trip each. Same\n"
           "run, same keys.\n\n",
           config, (unsigned long long)plan.bits, plan.k);
    printf("operation  procs  client      keys      seconds   keys/s      bloomkit is\n");
    for (int lookup = 0; lookup < 2; lookup++) {
        for (int procs = 1; procs <= 8; procs *= 8) {
            flush();
            const double tn = in_procs(procs, 1, url, &ks, n_naive, lookup, plan.bits, plan.k);
            flush();
            if (lookup)
                in_procs(procs, 0, url, &ks, n, 0, 0, 0); /* lookups of present keys */
            const double tb = in_procs(procs, 0, url, &ks, n, lookup, 0, 0);
            const double rn = (double)n_naive / tn, rb = (double)n / tb;
            const char *op = lookup ? "lookup" : "add";
            printf("%-9s  %5d  seed-style  %8zu  %9.3f  %9.0f\n", op, procs, n_naive, tn, rn);
            printf("%-9s  %5d  bloomkit    %8zu  %9.3f  %9.0f   %6.1fx  (target >= 20x)\n", op,
                   procs, n, tb, rb, rb / rn);
            config = config_blocked; /* the same with layout=blocked */
            flush();
            if (lookup)
                in_procs(procs, 0, url, &ks, n, 0, 0, 0);
            const double tk = in_procs(procs, 0, url, &ks, n, lookup, 0, 0);
            config = config_classic;
            printf("%-9s  %5d  bk blocked  %8zu  %9.3f  %9.0f   %6.1fx\n", op, procs, n, tk,
                   (double)n / tk, (double)n / tk / rn);
        }
    }
    flush();
    const double ceiling = server_ceiling(smoke ? 20000 : 2000000);
    if (ceiling > 0)
        printf("\nthe server's ceiling, same run: redis-benchmark -t set -P 512 -c 1: %.0f SET/s\n",
               ceiling);
    else
        printf("\nthe server's ceiling: redis-benchmark not found (Debian: redis-tools)\n");
    keys_free((keyset *)&ks);
    test_redis_stop(&srv);
    return 0;
}
