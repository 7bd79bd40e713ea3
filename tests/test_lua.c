/*
 * test_lua.c - the Lua mode's suite ("lua"): shared filters on a real
 * redis-server that has no module (started by redis_server.c on a free
 * loopback port, stopped at the end), and on a 3-master cluster; the wire
 * code they share with the module client (URLs, passwords, timeouts,
 * reconnection, redirections) is proven here through it. The module and
 * its client are proven by tests/module.
 *
 * What is proven: a Redis filter answers exactly as a local filter with the
 * same configuration and key, and its bytes are the local filter's (pull);
 * push and pull copy exactly; racing processes are told a new key is new
 * exactly once; counting saturates and never underflows; the first creator's
 * parameters win; faults give clear errors and write nothing; scripts and
 * connections that vanish are recovered; eight `bloomkit dedup --redis`
 * processes deduplicate overlapping streams between them; a server killed
 * and restarted mid-run loses no key that was reported new.
 */
#include "suites.h"

#if !BK_HAVE_HIREDIS
/* Built without hiredis (make HIREDIS=0): nothing here can reach Redis. */
#include <stdio.h>

Suite *lua_suite(void)
{
    fprintf(stderr, "lua suite: SKIPPED, built without hiredis (Debian package "
                    "libhiredis-dev)\n");
    return suite_create("lua");
}
#else
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "bloomkit_redis.h"
#include "redis/conn.h"
#include "redis/lua/rfilter.h"
#include "redis_server.h"
#include "suites.h"
#include "testutil.h"

#ifndef BK_CLI_PATH
#define BK_CLI_PATH "build/bloomkit"
#endif

static test_redis srv;

/* Files of one test: in a private directory, so that runs of the suite with
 * several compilers at once never share a path. Each test runs in its own
 * process (Check forks), which makes the directory its own. */
static char *scratch_dir;

static void scratch_remove(void)
{
    tu_rmtree(scratch_dir);
}

static const char *scratch(const char *name, unsigned i, char *buf, size_t len)
{
    if (!scratch_dir) {
        scratch_dir = tu_tmpdir();
        atexit(scratch_remove);
    }
    snprintf(buf, len, "%s/%u-%s", scratch_dir, i, name);
    return buf;
}

static void start_server(void)
{
    if (test_redis_start(&srv, 0, NULL) != 0) {
        fprintf(stderr, "lua suite: could not start redis-server\n");
        exit(1);
    }
    redisContext *c = redisConnect("127.0.0.1", srv.port);
    redisReply *r = c && !c->err ? redisCommand(c, "SET bystander untouched") : NULL;
    if (r)
        freeReplyObject(r);
    if (c)
        redisFree(c);
}

static void stop_server(void)
{
    test_redis_stop(&srv);
}

static redisContext *admin(void)
{
    redisContext *c = redisConnect("127.0.0.1", srv.port);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->err, 0);
    return c;
}

static void admin_cmd(const char *fmt, const char *arg)
{
    redisContext *c = admin();
    redisReply *r = redisCommand(c, fmt, arg);
    ck_assert_ptr_nonnull(r);
    freeReplyObject(r);
    redisFree(c);
}

/* Sum of a hash's count fields named PREFIX.J (all slices J); the slice
 * count when field is "slices" (1 when absent, as the scripts read it). */
static unsigned long long hash_count(redisContext *c, const char *key, const char *prefix)
{
    redisReply *r = redisCommand(c, "HGETALL %s", key);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->type, REDIS_REPLY_ARRAY);
    unsigned long long sum = 0;
    int seen = 0;
    const size_t pl = strlen(prefix);
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const char *f = r->element[i]->str;
        if (strcmp(prefix, "slices") == 0 ? strcmp(f, "slices") == 0
                                          : strncmp(f, prefix, pl) == 0 && f[pl] == '.') {
            sum += strtoull(r->element[i + 1]->str, NULL, 10);
            seen = 1;
        }
    }
    freeReplyObject(r);
    return strcmp(prefix, "slices") == 0 && !seen ? 1 : sum;
}

/* The counts as stored: the metadata hash NAME plus the count hashes of
 * blocks past the first (NAME:{NAME/b}:count). */
static void stored_counts(const char *name, unsigned long long *keys, unsigned long long *bits,
                          unsigned long long *slices, size_t *count_hashes)
{
    redisContext *c = admin();
    *keys = hash_count(c, name, "keys");
    *bits = hash_count(c, name, "bits");
    *slices = hash_count(c, name, "slices");
    redisReply *r = redisCommand(c, "KEYS %s:*:count", name);
    ck_assert_int_eq(r->type, REDIS_REPLY_ARRAY);
    *count_hashes = r->elements;
    for (size_t i = 0; i < r->elements; i++) {
        *keys += hash_count(c, r->element[i]->str, "keys");
        *bits += hash_count(c, r->element[i]->str, "bits");
    }
    freeReplyObject(r);
    redisFree(c);
}

static int key_of(char *buf, size_t len, const char *prefix, unsigned i)
{
    return snprintf(buf, len, "https://example.org/%s/%u?q=%u", prefix, i, i * 7919u);
}

/* A file's bytes, NUL-terminated (a command's output is read as text). */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(*len + 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(fread(p, 1, *len, f), *len);
    p[*len] = '\0';
    fclose(f);
    return p;
}

/* Lines in a file (the lines a command printed). */
static unsigned lines_in(const char *path)
{
    size_t len;
    unsigned char *text = slurp(path, &len);
    unsigned lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    free(text);
    return lines;
}

/* f and g saved are the same file, byte for byte. */
static void assert_same_saved(const bk_filter *f, const bk_filter *g)
{
    char a[256], b[256];
    scratch("same-a.bkf", 0, a, sizeof a);
    scratch("same-b.bkf", 0, b, sizeof b);
    ck_assert_int_eq(bk_save(f, a), BK_OK);
    ck_assert_int_eq(bk_save(g, b), BK_OK);
    size_t la, lb;
    unsigned char *pa = slurp(a, &la), *pb = slurp(b, &lb);
    ck_assert_uint_eq(la, lb);
    ck_assert_int_eq(memcmp(pa, pb, la), 0);
    free(pa);
    free(pb);
    unlink(a);
    unlink(b);
}

static const struct {
    const char *config, *query;
} shapes[] = {
    {"variant=standard capacity=20000 fpr=0.001", NULL},
    {"variant=counting capacity=20000 fpr=0.001", NULL},
    {"variant=scalable capacity=300 fpr=0.001", NULL},
    /* blocked and split over many Redis keys of 4 KiB */
    {"variant=standard capacity=20000 fpr=0.001 layout=blocked", "block_bytes=4096"},
    {"variant=counting capacity=20000 fpr=0.001 layout=blocked", "block_bytes=4096"},
    {"variant=scalable capacity=300 fpr=0.001 layout=blocked", "block_bytes=4096"},
    /* pinned m and k (the seed recipes' bits and hashes), one split over keys */
    {"variant=standard bits=300000 hashes=7 capacity=20000", NULL},
    {"variant=counting bits=320000 hashes=5 capacity=20000 layout=blocked", "block_bytes=4096"},
    {"variant=scalable capacity=300 fpr=0.01 growth=4", NULL},
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

/* The shared filter counted lo .. hi keys; then f is closed and dropped. */
static void finish_counted(bk_filter *f, const char *url, uint64_t lo, uint64_t hi)
{
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_msg(st.keys >= lo && st.keys <= hi, "%llu keys, not %llu .. %llu",
                  (unsigned long long)st.keys, (unsigned long long)lo, (unsigned long long)hi);
    bk_free(f);
    ck_assert_int_eq(bk_redis_drop(url), BK_OK);
}

static bk_config fixed_config(const char *text)
{
    bk_config c;
    char err[200];
    ck_assert_int_eq(bk_config_parse(&c, text, err, sizeof err), BK_OK);
    for (int i = 0; i < 16; i++)
        c.key[i] = (uint8_t)(i * 37 + 11);
    c.has_key = 1;
    return c;
}

/* Shape i: a local filter of its fixed config *c, and in name and url a
 * shared filter's name <prefix><i> and URL (dropped first). */
static bk_filter *shape_local(const char *prefix, unsigned i, char name[32], char url[256],
                              bk_config *c)
{
    snprintf(name, 32, "%s%u", prefix, i);
    test_redis_url(&srv, name, shapes[i].query, url, 256);
    bk_redis_drop(url);
    *c = fixed_config(shapes[i].config);
    bk_filter *loc;
    ck_assert_int_eq(bk_new(c, &loc), BK_OK);
    return loc;
}

START_TEST(each_variant_matches_a_local_filter_byte_for_byte)
{
    const unsigned i = (unsigned)_i;
    char url[256], name[32], buf[128];
    bk_config c;
    bk_filter *loc = shape_local("same", i, name, url, &c), *rem, *pulled;
    ck_assert_int_eq(bk_redis_open(url, &c, &rem), BK_OK);
    /* singles, then batches with repeats inside a batch */
    for (unsigned n = 0; n < 3000; n++) {
        const int len = key_of(buf, sizeof buf, "a", n % 2500);
        ck_assert_int_eq(bk_add(rem, buf, (size_t)len), bk_add(loc, buf, (size_t)len));
    }
    enum { B = 700 };
    static char kb[B][128];
    const void *keys[B];
    size_t lens[B];
    int rl[B], rr[B];
    for (unsigned n = 0; n < B; n++) {
        lens[n] = (size_t)key_of(kb[n], sizeof kb[n], "b", n % 500);
        keys[n] = kb[n];
    }
    ck_assert_int_eq(bk_add_batch(loc, keys, lens, B, rl), BK_OK);
    ck_assert_int_eq(bk_add_batch(rem, keys, lens, B, rr), BK_OK);
    ck_assert_int_eq(memcmp(rl, rr, sizeof rl), 0);
    for (unsigned n = 0; n < B; n++)
        lens[n] = (size_t)key_of(kb[n], sizeof kb[n], "absent", n);
    ck_assert_int_eq(bk_contains_batch(loc, keys, lens, B, rl), BK_OK);
    ck_assert_int_eq(bk_contains_batch(rem, keys, lens, B, rr), BK_OK);
    ck_assert_int_eq(memcmp(rl, rr, sizeof rl), 0);
    bk_filter_stats sl, sr;
    ck_assert_int_eq(bk_stats(loc, &sl), BK_OK);
    ck_assert_int_eq(bk_stats(rem, &sr), BK_OK);
    ck_assert_uint_eq(sl.keys, sr.keys);
    ck_assert_uint_eq(sl.set_bits, sr.set_bits);
    ck_assert_uint_eq(sl.slices, sr.slices);
    ck_assert_uint_eq(sl.saturated, sr.saturated);
    if (i % 3 == 2)
        ck_assert_uint_gt(sr.slices, 1); /* the chain grew inside the script */
    /* the counts are in the metadata hash, all of them (a single server:
     * counts=meta), also for the filters split over many blocks */
    unsigned long long skeys, sbits, sslices;
    size_t count_hashes;
    stored_counts(name, &skeys, &sbits, &sslices, &count_hashes);
    ck_assert_uint_eq(skeys, sr.keys);
    ck_assert_uint_eq(sbits, sr.set_bits);
    ck_assert_uint_eq(sslices, sr.slices);
    ck_assert_uint_eq(count_hashes, 0);
    char never[256];
    ck_assert_int_eq(bk_save(rem, scratch("never.bkf", 0, never, sizeof never)), BK_ENOTSUP);
    ck_assert_int_eq(bk_merge(loc, rem), BK_ENOTSUP);
    ck_assert_int_eq(bk_merge(rem, loc), BK_ENOTSUP);
    bk_filter_stats held; /* its figures are the server's */
    ck_assert_int_eq(bk_stats_held(rem, &held, sizeof held), BK_ENOTSUP);
    /* pulled back, the bytes are the local filter's */
    ck_assert_int_eq(bk_redis_pull(url, &pulled), BK_OK);
    assert_same_saved(loc, pulled);
    /* clear empties it, on the server too */
    ck_assert_int_eq(bk_clear(rem), BK_OK);
    const int len = key_of(buf, sizeof buf, "a", 1);
    ck_assert_int_eq(bk_contains(rem, buf, (size_t)len), 0);
    /* ... its counts gone from the metadata, which stays */
    stored_counts(name, &skeys, &sbits, &sslices, &count_hashes);
    ck_assert_uint_eq(skeys + sbits + count_hashes, 0);
    ck_assert_uint_eq(sslices, 1);
    bk_filter *again;
    ck_assert_int_eq(bk_redis_open_existing(url, &again), BK_OK);
    bk_free(again);
    ck_assert_int_eq(bk_redis_drop(url), BK_OK);
    /* dropped: no key of it is left, and a bystander was never touched */
    redisContext *ac = admin();
    redisReply *r = redisCommand(ac, "KEYS %s*", name);
    ck_assert_uint_eq(r->elements, 0);
    freeReplyObject(r);
    r = redisCommand(ac, "GET bystander");
    ck_assert_str_eq(r->str, "untouched");
    freeReplyObject(r);
    redisFree(ac);
    bk_free(loc);
    bk_free(rem);
    bk_free(pulled);
}
END_TEST

START_TEST(push_then_pull_is_exact)
{
    const unsigned i = (unsigned)_i;
    char url[256], name[32], buf[128];
    bk_config c;
    bk_filter *loc = shape_local("pushed", i, name, url, &c), *back, *rem;
    for (unsigned n = 0; n < 2000; n++) {
        const int len = key_of(buf, sizeof buf, "p", n);
        ck_assert_int_ge(bk_add(loc, buf, (size_t)len), 0);
    }
    ck_assert_int_eq(bk_redis_push(loc, url), BK_OK);
    ck_assert_int_eq(bk_redis_push(loc, url), BK_EINCOMPAT); /* the name is taken now */
    ck_assert_int_eq(bk_redis_open(url, NULL, &rem), BK_OK);
    for (unsigned n = 0; n < 4000; n++) { /* half present, half absent */
        const int len = key_of(buf, sizeof buf, "p", n);
        ck_assert_int_eq(bk_contains(rem, buf, (size_t)len), bk_contains(loc, buf, (size_t)len));
    }
    ck_assert_int_eq(bk_redis_pull(url, &back), BK_OK);
    assert_same_saved(loc, back);
    bk_redis_drop(url);
    bk_free(loc);
    bk_free(back);
    bk_free(rem);
}
END_TEST

/* 8 processes add the same keys (each in its own order) at once; a shared
 * array counts how often each key was reported new. */
static void race(const char *config, const char *url, const char *name)
{
    enum { PROCS = 8, KEYS = 3000 };
    bk_redis_drop(url);
    int *news =
        mmap(NULL, KEYS * sizeof *news, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(news, MAP_FAILED);
    memset(news, 0, KEYS * sizeof *news);
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        pids[p] = fork();
        ck_assert_int_ge(pids[p], 0);
        if (pids[p] == 0) {
            char err[300];
            bk_filter *f;
            if (bk_redis_open_config(url, config, err, sizeof err, &f) != BK_OK)
                _exit(2);
            for (unsigned n = 0; n < KEYS; n++) {
                const unsigned k = (n * 1009u + (unsigned)p * 613u) % KEYS; /* own order */
                char buf[128];
                const int len = key_of(buf, sizeof buf, "race", k);
                const int rc = bk_add(f, buf, (size_t)len);
                if (rc < 0)
                    _exit(3);
                if (rc == 1)
                    __atomic_fetch_add(&news[k], 1, __ATOMIC_RELAXED);
            }
            bk_free(f);
            _exit(0);
        }
    }
    for (int p = 0; p < PROCS; p++) {
        int st;
        ck_assert_int_eq(waitpid(pids[p], &st, 0), pids[p]);
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    unsigned once = 0, never = 0;
    for (unsigned k = 0; k < KEYS; k++) {
        ck_assert_int_le(news[k], 1); /* never two processes told "new" */
        once += news[k] == 1;
        never += news[k] == 0;
    }
    /* "never" is a key that looked present before anyone added it: a false
     * positive, rare at these rates */
    ck_assert_uint_le(never, 5);
    fprintf(stderr, "[redis race %s] %u keys new exactly once, %u false positives\n", name, once,
            never);
    bk_filter *f;
    ck_assert_int_eq(bk_redis_open(url, NULL, &f), BK_OK);
    finish_counted(f, url, once, once); /* the server counted each new key once */
    munmap(news, KEYS * sizeof *news);
}

START_TEST(racing_processes_see_each_new_key_once)
{
    char url[256];
    race("variant=standard capacity=100000 fpr=0.0001",
         test_redis_url(&srv, "race-std", NULL, url, sizeof url), "race-std");
    /* blocked: a chunk's keys go through the line script */
    race("variant=standard layout=blocked capacity=100000 fpr=0.0001",
         test_redis_url(&srv, "race-blk", NULL, url, sizeof url), "race-blk");
    /* small first slice: the chain grows several times during the race */
    race("variant=scalable capacity=200 fpr=0.0001",
         test_redis_url(&srv, "race-scl", NULL, url, sizeof url), "race-scl");
    /* a window whose current generation grows during the race */
    race("variant=window window=1h capacity=1600 fpr=0.0001",
         test_redis_url(&srv, "race-win", NULL, url, sizeof url), "race-win");
}
END_TEST

/* ---- windows ------------------------------------------------------------ */

static pid_t spawn_cli(const char *in, const char *out, const char *const *args);

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
    const double d = t - mono_s();
    if (d > 0) {
        struct timespec w = {(time_t)d, (long)((d - (time_t)d) * 1e9)};
        nanosleep(&w, NULL);
    }
}

/* In a child process: open url with config and add keys lo .. hi-1 (mode
 * 'a') or look them up ('c'); exit with the number of keys answered 1
 * (new, or present), or 255 on an error. */
static int window_child(const char *url, const char *config, char mode, unsigned lo, unsigned hi)
{
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        bk_filter *f;
        if (bk_redis_open_config(url, config, NULL, 0, &f) != BK_OK)
            _exit(255);
        unsigned ones = 0;
        for (unsigned i = lo; i < hi; i++) {
            char buf[128];
            const int len = key_of(buf, sizeof buf, "win", i);
            const int rc =
                mode == 'a' ? bk_add(f, buf, (size_t)len) : bk_contains(f, buf, (size_t)len);
            if (rc < 0)
                _exit(255);
            ones += rc == 1;
        }
        bk_free(f);
        _exit((int)(ones > 254 ? 254 : ones));
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st));
    ck_assert_int_ne(WEXITSTATUS(st), 255);
    return WEXITSTATUS(st);
}

/* One run of a_shared_window_forgets_after_it with a window of `w`
 * seconds (generations of w/4): 1 when every lookup came inside the window
 * and was checked, 0 when the machine took longer (nothing asserted: the
 * caller runs again with a longer window).
 * long: one run's steps in the order they happen, each checked where it happens. */
static int shared_window_run(unsigned w)
{
    char url[256], cfg[128], name[32], pattern[64];
    snprintf(name, sizeof name, "win-%u", w);
    test_redis_url(&srv, name, NULL, url, sizeof url);
    bk_redis_drop(url);
    snprintf(cfg, sizeof cfg, "variant=window window=%us generations=4 capacity=1000 fpr=0.001", w);
    const double start = mono_s(); /* no add of the first process is earlier */
    ck_assert_int_eq(window_child(url, cfg, 'a', 0, 100), 100);
    const double added = mono_s(); /* none is later */
    /* every generation key expires when it leaves the window */
    redisContext *c = admin();
    redisReply *r = redisCommand(c, "KEYS %s:{%s}:w*", name, name);
    ck_assert_int_eq(r->type, REDIS_REPLY_ARRAY);
    ck_assert_uint_ge(r->elements, 2); /* a generation's hash and its cells */
    char old[8][200];
    const size_t nold = r->elements < 8 ? r->elements : 8;
    for (size_t i = 0; i < nold; i++) {
        snprintf(old[i], sizeof old[i], "%s", r->element[i]->str);
        redisReply *t = redisCommand(c, "PTTL %s", old[i]);
        ck_assert_int_gt(t->integer, 0);
        ck_assert_int_le(t->integer, (long long)w * 1250 + 100); /* the window and a span */
        freeReplyObject(t);
    }
    freeReplyObject(r);
    /* the other process, inside the window: every key present, none new */
    sleep_until(start + 0.6 * w);
    const int found = window_child(url, cfg, 'c', 0, 100);
    const int fresh = window_child(url, cfg, 'a', 0, 100);
    if (mono_s() - start >= w) { /* the lookups came late: this run proves nothing */
        redisFree(c);
        ck_assert_int_eq(bk_redis_drop(url), BK_OK);
        return 0;
    }
    ck_assert_int_eq(found, 100);
    ck_assert_int_eq(fresh, 0);
    /* info (the CLI, a third process) lists the generation */
    const char *info[] = {"info", "--json", "--redis", url, NULL};
    char out[256], want[64];
    scratch("win-info.json", 0, out, sizeof out);
    int st;
    pid_t pid = spawn_cli("/dev/null", out, info);
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    size_t len;
    char *json = (char *)slurp(out, &len);
    char *text = realloc(json, len + 1);
    ck_assert_ptr_nonnull(text);
    json = text;
    json[len] = '\0';
    snprintf(want, sizeof want, "\"window\":\"%us\"", w);
    ck_assert_ptr_nonnull(strstr(json, want));
    ck_assert_ptr_nonnull(strstr(json, "\"generations\":[{\"start\":"));
    free(json);
    /* a window and a span after the last add: forgotten, new again */
    sleep_until(added + 1.25 * w + 0.35);
    ck_assert_int_le(window_child(url, cfg, 'c', 0, 100), 1); /* at the false-positive rate */
    for (size_t i = 0; i < nold; i++) {
        r = redisCommand(c, "EXISTS %s", old[i]);
        ck_assert_int_eq(r->integer, 0); /* Redis freed them: no client swept */
        freeReplyObject(r);
    }
    ck_assert_int_ge(window_child(url, cfg, 'a', 0, 100), 99);
    redisFree(c);
    ck_assert_int_eq(bk_redis_drop(url), BK_OK);
    c = admin();
    snprintf(pattern, sizeof pattern, "%s*", name);
    r = redisCommand(c, "KEYS %s", pattern);
    ck_assert_uint_eq(r->elements, 0); /* drop leaves nothing */
    freeReplyObject(r);
    redisFree(c);
    return 1;
}

/* A window shared by two processes, on the server's clock (TIME): what one
 * adds the other finds inside the window, and is told new again once a
 * window and a span have passed; Redis has expired the old generation's
 * keys by then. The window is sized from what the calls took: 2 s, and
 * when the lookups came later than that (a busy machine) the run is made
 * again with a window four times as long, so the machine's speed never
 * decides the answer. */
START_TEST(a_shared_window_forgets_after_it)
{
    unsigned w = 2;
    while (!shared_window_run(w)) {
        ck_assert_msg(w < 128, "lookups outlasted a %u s window", w);
        w *= 4;
    }
}
END_TEST

static int64_t skewed_clock(void *ctx)
{
    return *(const int64_t *)ctx;
}

/* The server's clock decides: a client whose own clock is days off adds
 * into and looks up the same generations as everyone else. */
START_TEST(the_server_clock_decides)
{
    char url[256];
    test_redis_url(&srv, "win-clock", NULL, url, sizeof url);
    bk_redis_drop(url);
    const char *cfg = "variant=window window=1h capacity=1000 fpr=0.001";
    int64_t skew = bk_now_ms() + INT64_C(10) * 86400000; /* ten days ahead */
    bk_set_clock(skewed_clock, &skew);
    bk_filter *f;
    ck_assert_int_eq(bk_redis_open_config(url, cfg, NULL, 0, &f), BK_OK);
    ck_assert_int_eq(bk_add(f, "k", 1), 1);
    bk_set_clock(NULL, NULL);
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK); /* re-reads the generations */
    ck_assert_uint_eq(st.slices, 1);
    bk_slice_stats si;
    ck_assert_int_eq(bk_slice_info(f, 0, &si, sizeof si), BK_OK);
    const int64_t now = bk_now_ms(); /* this machine's clock is the server's here */
    ck_assert_int_le(si.span_start_ms, now);
    ck_assert_int_gt(si.span_start_ms, now - 3600000 / 8 - 1000);
    ck_assert_uint_eq(si.keys, 1);
    bk_free(f);
    skew = bk_now_ms() - INT64_C(10) * 86400000; /* ten days behind */
    bk_set_clock(skewed_clock, &skew);
    ck_assert_int_eq(window_child(url, cfg, 'c', 0, 0), 0);
    ck_assert_int_eq(bk_redis_open_config(url, cfg, NULL, 0, &f), BK_OK);
    ck_assert_int_eq(bk_contains(f, "k", 1), 1);
    ck_assert_int_eq(bk_add(f, "k", 1), 0);
    bk_set_clock(NULL, NULL);
    /* a window is not copied between a file and Redis (its generations
     * follow the server's clock): refused by name, nothing written */
    bk_filter *g;
    ck_assert_int_eq(bk_redis_pull(url, &g), BK_ENOTSUP);
    char url2[256];
    test_redis_url(&srv, "win-pushed", NULL, url2, sizeof url2);
    bk_filter *loc;
    const bk_config lc = fixed_config(cfg);
    ck_assert_int_eq(bk_new(&lc, &loc), BK_OK);
    ck_assert_int_eq(bk_redis_push(loc, url2), BK_ENOTSUP);
    ck_assert_int_eq(bk_redis_open_existing(url2, &g), BK_ENOTFOUND);
    bk_free(loc);
    finish_counted(f, url, 1, 1);
}
END_TEST

/* max_bytes, enforced by the script: the add that would grow past it fails
 * with BK_EFULL and changes nothing, lookups go on, and the shared filter
 * stops at the same key as a local one with the same configuration. */
static void fills_to_its_ceiling(const char *text, const char *name)
{
    char url[256];
    test_redis_url(&srv, name, NULL, url, sizeof url);
    bk_redis_drop(url);
    bk_config c = fixed_config(text);
    bk_filter *f, *loc;
    ck_assert_int_eq(bk_redis_open(url, &c, &f), BK_OK);
    ck_assert_int_eq(bk_new(&c, &loc), BK_OK);
    char buf[128];
    unsigned i = 0, full_at = 0;
    for (; i < 100000; i++) {
        const int len = key_of(buf, sizeof buf, name, i);
        const int want = bk_add(loc, buf, (size_t)len), got = bk_add(f, buf, (size_t)len);
        ck_assert_int_eq(got, want);
        if (got == BK_EFULL) {
            full_at = i;
            break;
        }
    }
    ck_assert_uint_gt(full_at, 0);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "max_bytes=4096"));
    bk_filter_stats before, after;
    ck_assert_int_eq(bk_stats(f, &before), BK_OK);
    for (unsigned j = full_at; j < full_at + 50; j++) {
        const int len = key_of(buf, sizeof buf, name, j);
        const int rc = bk_add(f, buf, (size_t)len);
        ck_assert(rc == BK_EFULL || rc == 0); /* 0: a false positive, nothing to add */
    }
    ck_assert_int_eq(bk_stats(f, &after), BK_OK);
    ck_assert_uint_eq(after.keys, before.keys);
    ck_assert_uint_eq(after.set_bits, before.set_bits);
    ck_assert_uint_le(after.bytes, 4096);
    for (unsigned j = 0; j < full_at; j++) { /* every key it took is still there */
        const int len = key_of(buf, sizeof buf, name, j);
        ck_assert_int_eq(bk_contains(f, buf, (size_t)len), 1);
    }
    fprintf(stderr, "[redis %s] full at key %u, %llu bytes, as the local filter\n", name, full_at,
            (unsigned long long)after.bytes);
    bk_free(loc);
    finish_counted(f, url, before.keys, before.keys);
}

START_TEST(max_bytes_is_enforced_by_the_script)
{
    fills_to_its_ceiling("variant=scalable capacity=100 fpr=0.001 max_bytes=4k", "full-scl");
    fills_to_its_ceiling("variant=window window=1h capacity=400 fpr=0.001 max_bytes=4k",
                         "full-win");
    /* the CLI exits 3 naming the limit */
    char url[256], in[256], err[256];
    test_redis_url(&srv, "full-cli", NULL, url, sizeof url);
    bk_redis_drop(url);
    scratch("full-in.txt", 0, in, sizeof in);
    FILE *fp = fopen(in, "w");
    for (unsigned i = 0; i < 20000; i++)
        fprintf(fp, "https://example.org/page/%u\n", i);
    fclose(fp);
    const char *args[] = {
        "dedup", "--redis", url, "--config", "variant=scalable capacity=100 max_bytes=64k", NULL};
    scratch("full-err.txt", 0, err, sizeof err);
    int st;
    const pid_t pid = spawn_cli(in, err, args);
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_int_eq(WEXITSTATUS(st), 3);
    bk_redis_drop(url);
}
END_TEST

START_TEST(counting_saturates_and_never_underflows)
{
    char url[256];
    test_redis_url(&srv, "cnt", NULL, url, sizeof url);
    bk_redis_drop(url);
    bk_filter *f;
    ck_assert_int_eq(bk_redis_open_config(url, "variant=counting capacity=1000", NULL, 0, &f),
                     BK_OK);
    tu_assert_multiset(f, "x");
    /* no underflow: removing an absent key changes nothing */
    bk_filter *before, *after;
    ck_assert_int_eq(bk_add(f, "y", 1), 1);
    ck_assert_int_eq(bk_redis_pull(url, &before), BK_OK);
    ck_assert_int_eq(bk_remove(f, "x", 1), BK_ENOTFOUND);
    ck_assert_int_eq(bk_redis_pull(url, &after), BK_OK);
    assert_same_saved(before, after);
    /* sticky saturation: 20 adds, 20 removes, still present */
    for (int i = 0; i < 20; i++)
        ck_assert_int_ge(bk_add(f, "z", 1), 0);
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_uint_gt(st.saturated, 0);
    for (int i = 0; i < 20; i++)
        ck_assert_int_eq(bk_remove(f, "z", 1), BK_OK);
    ck_assert_int_eq(bk_contains(f, "z", 1), 1);
    /* another opener sees the same counters */
    bk_filter *other;
    ck_assert_int_eq(bk_redis_open(url, NULL, &other), BK_OK);
    ck_assert_int_eq(bk_contains(other, "z", 1), 1);
    ck_assert_int_eq(bk_remove(other, "q", 1), BK_ENOTFOUND);
    bk_free(other);
    bk_free(before);
    bk_free(after);
    bk_free(f);
    bk_redis_drop(url);
}
END_TEST

START_TEST(first_creator_wins_and_conflicts_are_named)
{
    char url[256], err[400];
    test_redis_url(&srv, "meta", NULL, url, sizeof url);
    bk_redis_drop(url);
    bk_filter *a, *b, *c;
    ck_assert_int_eq(bk_redis_open_config(url, "capacity=5000 fpr=0.001", err, sizeof err, &a),
                     BK_OK);
    ck_assert_int_eq(bk_add(a, "k", 1), 1);
    /* a later opener without config adopts parameters and hash key */
    ck_assert_int_eq(bk_redis_open_config(url, NULL, err, sizeof err, &b), BK_OK);
    ck_assert_int_eq(bk_contains(b, "k", 1), 1);
    bk_config ca, cb;
    bk_get_config(a, &ca);
    bk_get_config(b, &cb);
    ck_assert_int_eq(memcmp(ca.key, cb.key, 16), 0);
    ck_assert_uint_eq(cb.capacity, 5000);
    /* stating only agreeing values is fine; a differing one is named */
    ck_assert_int_eq(bk_redis_open_config(url, "fpr=0.001", err, sizeof err, &c), BK_OK);
    bk_free(c);
    ck_assert_int_eq(bk_redis_open_config(url, "fpr=0.01", err, sizeof err, &c), BK_EINCOMPAT);
    ck_assert_ptr_null(c);
    ck_assert_ptr_nonnull(strstr(err, "fpr"));
    ck_assert_int_eq(bk_redis_open_config(url, "variant=counting", err, sizeof err, &c),
                     BK_EINCOMPAT);
    ck_assert_ptr_nonnull(strstr(err, "variant"));
    ck_assert_int_eq(bk_redis_open_existing(url, &c), BK_OK);
    bk_free(c);
    bk_free(a);
    bk_free(b);
    bk_redis_drop(url);
    ck_assert_int_eq(bk_redis_open_existing(url, &c), BK_ENOTFOUND);
    /* pinned bits and hashes are stored, adopted and compared */
    ck_assert_int_eq(bk_redis_open_config(url, "bits=1048576 hashes=6", err, sizeof err, &a),
                     BK_OK);
    ck_assert_int_eq(bk_redis_open_existing(url, &b), BK_OK);
    bk_get_config(b, &cb);
    ck_assert_uint_eq(cb.bits, 1048576);
    ck_assert_uint_eq(cb.hashes, 6);
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(b, &st), BK_OK);
    ck_assert_uint_eq(st.bits, 1048576);
    ck_assert_uint_eq(st.k, 6);
    ck_assert_int_eq(bk_redis_open_config(url, "bits=1048576 hashes=7", err, sizeof err, &c),
                     BK_EINCOMPAT);
    ck_assert_ptr_nonnull(strstr(err, "hashes"));
    /* (a rate stated to a pinned filter contradicts its bits) */
    ck_assert_int_eq(bk_redis_open_config(url, "fpr=0.01", err, sizeof err, &c), BK_ECONFIG);
    ck_assert_ptr_nonnull(strstr(err, "bits"));
    bk_free(a);
    bk_free(b);
    bk_redis_drop(url);
}
END_TEST

START_TEST(faults_give_clear_errors_and_write_nothing)
{
    char url[256];
    bk_filter *f;
    /* nobody listening */
    test_redis r2;
    ck_assert_int_eq(test_redis_start(&r2, 0, NULL), 0);
    const int dead = r2.port;
    test_redis_stop(&r2);
    snprintf(url, sizeof url, "redis://127.0.0.1:%d/x?connect_timeout=500", dead);
    ck_assert_int_eq(bk_redis_open(url, NULL, &f), BK_EIO);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "cannot connect"));
    /* bad URLs */
    ck_assert_int_eq(bk_redis_open("http://x/y", NULL, &f), BK_EINVAL);
    ck_assert_int_eq(bk_redis_open("redis://127.0.0.1:6379/", NULL, &f), BK_EINVAL);
    ck_assert_int_eq(bk_redis_open("redis://127.0.0.1:99999/x", NULL, &f), BK_EINVAL);
    ck_assert_int_eq(bk_redis_open("redis://127.0.0.1/a{b}", NULL, &f), BK_EINVAL);
    ck_assert_int_eq(bk_redis_open("redis://127.0.0.1/x?timeout=abc", NULL, &f), BK_EINVAL);
    /* wrong password: refused, and the password never shows */
    admin_cmd("ACL SETUSER %s on >right-pass ~* +@all", "bkuser");
    test_redis_url(&srv, "pw", NULL, url, sizeof url);
    char pwurl[300];
    snprintf(pwurl, sizeof pwurl, "redis://bkuser:wrong-pass@127.0.0.1:%d/pw", srv.port);
    ck_assert_int_eq(bk_redis_open(pwurl, NULL, &f), BK_ESERVER);
    ck_assert_ptr_null(strstr(bk_last_error(), "wrong-pass"));
    snprintf(pwurl, sizeof pwurl, "redis://bkuser:right-pass@127.0.0.1:%d/pw", srv.port);
    ck_assert_int_eq(bk_redis_open(pwurl, NULL, &f), BK_OK);
    bk_free(f);
    bk_redis_drop(pwurl);
    /* the name holds someone else's data: refused, untouched */
    admin_cmd("SET %s not-a-filter", "taken");
    test_redis_url(&srv, "taken", NULL, url, sizeof url);
    ck_assert_int_eq(bk_redis_open(url, NULL, &f), BK_ESERVER);
    redisContext *c = admin();
    redisReply *rep = redisCommand(c, "GET taken");
    ck_assert_str_eq(rep->str, "not-a-filter");
    freeReplyObject(rep);
    /* a data key of the wrong type: refused at open, nothing written */
    test_redis_url(&srv, "wt", NULL, url, sizeof url);
    ck_assert_int_eq(bk_redis_open(url, NULL, &f), BK_OK);
    bk_free(f);
    rep = redisCommand(c, "LPUSH %s junk", "wt:{wt}:data");
    freeReplyObject(rep);
    ck_assert_int_eq(bk_redis_open(url, NULL, &f), BK_ESERVER);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "holds a list"));
    rep = redisCommand(c, "DEL %s", "wt:{wt}:data");
    freeReplyObject(rep);
    /* metadata with a field bloomkit never writes */
    rep = redisCommand(c, "HSET %s color blue", "wt");
    freeReplyObject(rep);
    ck_assert_int_eq(bk_redis_open(url, NULL, &f), BK_ESERVER);
    rep = redisCommand(c, "HDEL %s color", "wt");
    freeReplyObject(rep);
    /* counts the server answers with that are not counts: a clear error at
     * open and from bk_stats, and the cells are left as they were */
    test_redis_url(&srv, "odd", NULL, url, sizeof url);
    ck_assert_int_eq(bk_redis_open_config(url, "variant=scalable capacity=100", NULL, 0, &f),
                     BK_OK);
    ck_assert_int_eq(bk_add(f, "k", 1), 1);
    rep = redisCommand(c, "HSET %s keys.0 banana", "odd");
    freeReplyObject(rep);
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_ESERVER);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "not a non-negative integer"));
    bk_filter *g;
    ck_assert_int_eq(bk_redis_open_existing(url, &g), BK_ESERVER);
    rep = redisCommand(c, "HSET %s keys.0 1 slices 900", "odd");
    freeReplyObject(rep);
    ck_assert_int_eq(bk_redis_open_existing(url, &g), BK_ESERVER);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "slice count 900 out of range"));
    rep = redisCommand(c, "HDEL %s slices", "odd");
    freeReplyObject(rep);
    ck_assert_int_eq(bk_contains(f, "k", 1), 1); /* untouched */
    bk_free(f);
    bk_redis_drop(url);
    rep = redisCommand(c, "DEL wt taken");
    freeReplyObject(rep);
    redisFree(c);
}
END_TEST

START_TEST(survives_script_flush_and_killed_connections)
{
    char url[256];
    test_redis_url(&srv, "flaky", "retries=10", url, sizeof url);
    bk_redis_drop(url);
    bk_filter *f;
    ck_assert_int_eq(
        bk_redis_open_config(url, "variant=scalable capacity=100 fpr=1e-7", NULL, 0, &f), BK_OK);
    char buf[128];
    for (unsigned n = 0; n < 600; n++) {
        if (n % 100 == 50)
            admin_cmd("SCRIPT %s", "FLUSH"); /* NOSCRIPT: reloaded */
        if (n % 100 == 99)
            admin_cmd("CLIENT KILL TYPE %s", "normal"); /* our connection dies */
        const int len = key_of(buf, sizeof buf, "flaky", n);
        ck_assert_int_eq(bk_add(f, buf, (size_t)len), 1);
    }
    for (unsigned n = 0; n < 600; n++) {
        const int len = key_of(buf, sizeof buf, "flaky", n);
        ck_assert_int_eq(bk_contains(f, buf, (size_t)len), 1);
    }
    bk_free(f);
    bk_redis_drop(url);
}
END_TEST

/* Run `bloomkit ARGS` with stdin from in and stdout to out; returns its pid. */
static pid_t spawn_cli(const char *in, const char *out, const char *const *args)
{
    const pid_t pid = fork();
    if (pid == 0) {
        const int i = open(in, O_RDONLY), o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (i < 0 || o < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0)
            _exit(126);
        const char *argv[16] = {BK_CLI_PATH};
        int n = 1;
        for (; args[n - 1]; n++)
            argv[n] = args[n - 1];
        argv[n] = NULL;
        execv(BK_CLI_PATH, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Every line of the files counted: how many times each of `total` URL ids
 * occurs (lines are "https://example.org/crawl/ID?q=..."). */
static void count_ids(const char *const *files, int nfiles, unsigned *seen, unsigned total)
{
    memset(seen, 0, total * sizeof *seen);
    for (int i = 0; i < nfiles; i++) {
        FILE *f = fopen(files[i], "r");
        ck_assert_ptr_nonnull(f);
        char line[256];
        while (fgets(line, sizeof line, f)) {
            unsigned id;
            ck_assert_int_eq(sscanf(line, "https://example.org/crawl/%u?", &id), 1);
            ck_assert_uint_lt(id, total);
            seen[id]++;
        }
        fclose(f);
    }
}

static void eight_dedups(const char *url)
{
    enum { PROCS = 8, DISTINCT = 40000, PER = 20000 };
    bk_redis_drop(url);
    static unsigned in_any[DISTINCT], seen[DISTINCT];
    memset(in_any, 0, sizeof in_any);
    char in[PROCS][256], out[PROCS][256];
    const char *outs[PROCS];
    /* overlapping streams: each process sees a window of the id space, with
     * repeats, in its own order */
    for (int p = 0; p < PROCS; p++) {
        scratch("crawl-in.txt", (unsigned)p, in[p], sizeof in[p]);
        scratch("crawl-out.txt", (unsigned)p, out[p], sizeof out[p]);
        outs[p] = out[p];
        FILE *f = fopen(in[p], "w");
        ck_assert_ptr_nonnull(f);
        unsigned x = 12345u + (unsigned)p * 7777u;
        for (unsigned n = 0; n < PER; n++) {
            x = x * 1103515245u + 12345u;
            const unsigned id = ((unsigned)p * 5000u + (x >> 8) % 15000u) % DISTINCT;
            char buf[128];
            key_of(buf, sizeof buf, "crawl", id);
            fprintf(f, "%s\n", buf);
            in_any[id] = 1;
        }
        fclose(f);
    }
    pid_t pids[PROCS];
    const char *args[] = {"dedup", "--redis", url, "--quiet", NULL};
    for (int p = 0; p < PROCS; p++)
        pids[p] = spawn_cli(in[p], out[p], args);
    for (int p = 0; p < PROCS; p++) {
        int st;
        ck_assert_int_eq(waitpid(pids[p], &st, 0), pids[p]);
        ck_assert(WIFEXITED(st));
        ck_assert_int_eq(WEXITSTATUS(st), 0);
    }
    count_ids(outs, PROCS, seen, DISTINCT);
    unsigned distinct = 0, lost = 0;
    for (unsigned id = 0; id < DISTINCT; id++) {
        ck_assert_uint_le(seen[id], 1); /* never emitted twice between them */
        if (in_any[id]) {
            distinct++;
            lost += seen[id] == 0; /* a false positive: counted */
        } else {
            ck_assert_uint_eq(seen[id], 0);
        }
    }
    /* dedup's default rate is 1e-4: allow 5x the expectation, at least 3 */
    const double bound = 5.0 * 1e-4 * distinct + 3;
    fprintf(stderr,
            "[redis dedup x8] %u distinct URLs, %u emitted once, %u lost to false "
            "positives (bound %.1f)\n",
            distinct, distinct - lost, lost, bound);
    ck_assert_double_le(lost, bound);
    for (int p = 0; p < PROCS; p++) {
        unlink(in[p]);
        unlink(out[p]);
    }
    bk_redis_drop(url);
}

START_TEST(eight_cli_processes_dedup_overlapping_streams)
{
    char url[256];
    eight_dedups(test_redis_url(&srv, "crawl", NULL, url, sizeof url));
}
END_TEST

/* dedup --canonical-urls records its rule in the shared filter's metadata
 * (input=url): a later run without the flag decides on canonical URLs too,
 * and one with another rule is refused, naming both. */
START_TEST(canonical_urls_are_recorded_in_a_shared_filter)
{
    char url[256], in[64], out[64];
    test_redis_url(&srv, "canon", NULL, url, sizeof url);
    bk_redis_drop(url);
    snprintf(in, sizeof in, "/tmp/bk-canon-in.%d", (int)getpid());
    snprintf(out, sizeof out, "/tmp/bk-canon-out.%d", (int)getpid());
    const char *const runs[][6] = {
        {"dedup", "--redis", url, "--canonical-urls", NULL},
        {"dedup", "--redis", url, NULL},
        {"dedup", "--redis", url, "--canonical-urls", "--keep-query-order", NULL}};
    const char *lines[] = {"http://Example.com/a?b=2&a=1\n", "HTTP://example.com:80/a?a=1&b=2#x\n",
                           "http://example.com/a?a=1&b=2\n"};
    const int codes[] = {0, 0, 2};
    const size_t outs[] = {strlen(lines[0]), 0, 0};
    for (int r = 0; r < 3; r++) {
        FILE *f = fopen(in, "w");
        ck_assert_ptr_nonnull(f);
        fputs(lines[r], f);
        fclose(f);
        const pid_t pid = spawn_cli(in, out, runs[r]);
        int st;
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        ck_assert(WIFEXITED(st));
        ck_assert_int_eq(WEXITSTATUS(st), codes[r]);
        size_t len;
        free(slurp(out, &len));
        ck_assert_uint_eq(len, outs[r]);
    }
    bk_filter *f;
    ck_assert_int_eq(bk_redis_open_existing(url, &f), BK_OK);
    char input[32];
    ck_assert_int_gt(bk_get_setting(f, "input", input, sizeof input), 0);
    ck_assert_str_eq(input, "url");
    bk_free(f);
    unlink(in);
    unlink(out);
    bk_redis_drop(url);
}
END_TEST

/* A server that stops answering (CLIENT PAUSE) makes a call fail after the
 * URL's command timeout, with BK_EIO, instead of hanging. */
START_TEST(command_timeout_is_honoured)
{
    char url[256];
    test_redis_url(&srv, "slow", "timeout=100&retries=0", url, sizeof url);
    bk_redis_drop(url);
    bk_filter *f;
    ck_assert_int_eq(bk_redis_open(url, NULL, &f), BK_OK);
    ck_assert_int_eq(bk_add(f, "a", 1), 1);
    admin_cmd("CLIENT PAUSE %s ALL", "1500");
    ck_assert_int_eq(bk_add(f, "b", 1), BK_EIO);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "connection lost"));
    bk_free(f);
    admin_cmd("CLIENT %s", "UNPAUSE");
    bk_redis_drop(url);
}
END_TEST

/* The N-th allocation of bloomkit's own (hiredis allocates its own) fails,
 * for every N, in open, adds, lookups, stats, push and pull: each call
 * reports BK_ENOMEM or succeeds, and nothing leaks. */
START_TEST(every_failing_allocation_on_redis_paths_is_clean)
{
    char url[256], url2[256];
    test_redis_url(&srv, "oom", "block_bytes=4096", url, sizeof url);
    test_redis_url(&srv, "oom2", "block_bytes=4096", url2, sizeof url2);
    long n = 1;
    for (; n < 5000; n++) {
        bk_redis_drop(url);
        bk_redis_drop(url2);
        const bk_allocator failing = tu_failing_allocator(n);
        ck_assert_int_eq(bk_set_allocator(&failing), BK_OK);
        bk_filter *f = NULL, *p = NULL;
        int rc =
            bk_redis_open_config(url, "variant=scalable capacity=50 layout=blocked", NULL, 0, &f);
        enum { K = 80 };
        static char kb[K][128];
        const void *keys[K];
        size_t lens[K];
        int res[K];
        for (unsigned k = 0; k < K; k++) {
            lens[k] = (size_t)key_of(kb[k], sizeof kb[k], "oom", k);
            keys[k] = kb[k];
        }
        if (rc == BK_OK) /* one pipelined batch: a failure mid-way */
            rc = bk_add_batch(f, keys, lens, K, res);
        bk_filter_stats st;
        if (rc == BK_OK)
            rc = bk_stats(f, &st);
        if (rc == BK_OK)
            rc = bk_redis_pull(url, &p);
        if (rc == BK_OK)
            rc = bk_redis_push(p, url2);
        bk_set_allocator(NULL);
        if (f && rc == BK_ENOMEM) {
            /* the connection is still in step: every answer is right */
            ck_assert_int_eq(bk_add_batch(f, keys, lens, K, res), BK_OK);
            ck_assert_int_eq(bk_contains_batch(f, keys, lens, K, res), BK_OK);
            for (unsigned k = 0; k < K; k++)
                ck_assert_int_eq(res[k], 1);
        }
        bk_free(p);
        bk_free(f);
        ck_assert_msg(rc == BK_OK || rc == BK_ENOMEM, "allocation %ld: %s (%s)", n, bk_err_name(rc),
                      bk_last_error());
        ck_assert_msg(tu_alloc.live == 0, "allocation %ld: %ld blocks leaked", n, tu_alloc.live);
        if (tu_alloc.calls < n)
            break;
    }
    fprintf(stderr, "[redis alloc faults] %ld allocation points failed in turn, each cleanly\n",
            n - 1);
    ck_assert_int_gt(n, 10);
    bk_redis_drop(url);
    bk_redis_drop(url2);
}
END_TEST

/* The command's faults: an unreachable server and a missing filter exit 3
 * with one line on stderr; a conflicting config exits 2. */
START_TEST(cli_faults_have_their_exit_codes)
{
    test_redis r2;
    ck_assert_int_eq(test_redis_start(&r2, 0, NULL), 0);
    const int dead = r2.port;
    test_redis_stop(&r2);
    char url[256];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d/x", dead);
    const char *down[] = {"dedup", "--redis", url, NULL};
    int st;
    pid_t pid = spawn_cli("/dev/null", "/dev/null", down);
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_int_eq(WEXITSTATUS(st), 3);
    test_redis_url(&srv, "never-made", NULL, url, sizeof url);
    const char *missing[] = {"info", "--redis", url, NULL};
    pid = spawn_cli("/dev/null", "/dev/null", missing);
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_int_eq(WEXITSTATUS(st), 3);
    test_redis_url(&srv, "cli-conf", NULL, url, sizeof url);
    bk_filter *f;
    ck_assert_int_eq(bk_redis_open_config(url, "fpr=0.001", NULL, 0, &f), BK_OK);
    bk_free(f);
    const char *conflict[] = {"dedup", "--redis", url, "--fpr", "0.01", NULL};
    pid = spawn_cli("/dev/null", "/dev/null", conflict);
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_int_eq(WEXITSTATUS(st), 2);
    bk_redis_drop(url);
}
END_TEST

/* A server with appendfsync always is killed (SIGKILL) and restarted while a
 * dedup runs: the run reconnects, and every line it reported new is in the
 * filter afterwards. */
START_TEST(server_killed_mid_dedup_loses_no_reported_key)
{
    static const char *const aof[] = {"--appendonly", "yes", "--appendfsync", "always", NULL};
    test_redis r;
    ck_assert_int_eq(test_redis_start(&r, 0, aof), 0);
    /* under the sanitizers (tu_small) a third: the kill still lands mid-run */
    const unsigned LINES = tu_small() ? 100000 : 300000, DISTINCT = LINES / 3 * 2;
    char inbuf[256], outbuf[256];
    const char *in = scratch("kill-in.txt", 0, inbuf, sizeof inbuf),
               *out = scratch("kill-out.txt", 0, outbuf, sizeof outbuf);
    unlink(out);
    FILE *f = fopen(in, "w");
    for (unsigned n = 0; n < LINES; n++) {
        char buf[128];
        key_of(buf, sizeof buf, "crawl", n % DISTINCT);
        fprintf(f, "%s\n", buf);
    }
    fclose(f);
    char url[256];
    test_redis_url(&r, "kill", "retries=40&connect_timeout=200", url, sizeof url);
    const char *args[] = {"dedup", "--redis", url, "--quiet", NULL};
    const pid_t pid = spawn_cli(in, out, args);
    /* kill the server once the run has started writing */
    struct stat st;
    for (int i = 0; i < 5000 && (stat(out, &st) != 0 || st.st_size < 100000); i++)
        usleep(1000);
    const int port = r.port;
    int status;
    ck_assert_int_eq(waitpid(pid, &status, WNOHANG), 0); /* killed mid-run, not after */
    test_redis_kill(&r, 1);
    ck_assert_int_eq(test_redis_start(&r, port, aof), 0);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    /* every reported line is present now */
    bk_filter *flt;
    ck_assert_msg(bk_redis_open_existing(url, &flt) == BK_OK, "%s", bk_last_error());
    FILE *o = fopen(out, "r");
    char line[256];
    unsigned reported = 0;
    while (fgets(line, sizeof line, o)) {
        line[strcspn(line, "\n")] = '\0';
        ck_assert_int_eq(bk_contains(flt, line, strlen(line)), 1);
        reported++;
    }
    fclose(o);
    fprintf(stderr, "[redis kill] %u lines reported new, all present after the restart\n",
            reported);
    ck_assert_uint_gt(reported, DISTINCT - 100);
    bk_free(flt);
    unlink(in);
    unlink(out);
    test_redis_stop(&r);
}
END_TEST

/* dedup --redis failing mid-batch: every line whose add the server
 * confirmed is printed before the error is reported, so the filter's stored
 * keys equal the lines printed (issue 16: a chain at its block limit lost
 * 54 lines, a server at maxmemory 2; no later run would ever print them).
 * Case 0: a classic chain whose next slice exceeds block_bytes; case 1: a
 * server whose maxmemory is reached mid-run. */
START_TEST(dedup_prints_every_confirmed_line_before_an_error)
{
    enum { LINES = 40000 };
    char inbuf[256], outbuf[256], url[256];
    const char *in = scratch("mid-in.txt", (unsigned)_i, inbuf, sizeof inbuf),
               *out = scratch("mid-out.txt", (unsigned)_i, outbuf, sizeof outbuf);
    FILE *f = fopen(in, "w");
    for (unsigned n = 0; n < LINES; n++) {
        char buf[128];
        key_of(buf, sizeof buf, "mid", n);
        fprintf(f, "%s\n", buf);
    }
    fclose(f);
    const char *name = _i == 0 ? "midfull" : "midmem";
    test_redis_url(&srv, name, _i == 0 ? "block_bytes=4096" : "", url, sizeof url);
    bk_redis_drop(url);
    if (_i == 1) { /* just above what the server uses now: the filter's first
                    * writes pass it, the rest are refused */
        redisContext *c = admin();
        redisReply *r = redisCommand(c, "INFO memory");
        const char *used = strstr(r->str, "used_memory:");
        char limit[32];
        snprintf(limit, sizeof limit, "%llu",
                 strtoull(used + strlen("used_memory:"), NULL, 10) + 100000);
        freeReplyObject(r);
        redisFree(c);
        admin_cmd("CONFIG SET maxmemory %s", limit);
    }
    const char *args0[] = {"dedup",    "--redis", url,       "--capacity", "100",
                           "--layout", "classic", "--quiet", NULL};
    const char *args1[] = {"dedup",    "--redis",  url,       "--capacity", "400000", "--variant",
                           "standard", "--layout", "blocked", "--quiet",    NULL};
    const pid_t pid = spawn_cli(in, out, _i == 0 ? args0 : args1);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    if (_i == 1)
        admin_cmd("CONFIG SET maxmemory %s", "0");
    ck_assert(WIFEXITED(status));
    const int code = WEXITSTATUS(status);
    const unsigned lines = lines_in(out);
    bk_filter *flt;
    ck_assert_msg(bk_redis_open_existing(url, &flt) == BK_OK, "%s", bk_last_error());
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(flt, &st), BK_OK);
    fprintf(stderr, "[redis mid-batch %s] exit %d, %u lines printed, %llu keys stored\n", name,
            code, lines, (unsigned long long)st.keys);
    ck_assert_int_eq(code, 3);
    ck_assert_uint_gt(lines, 0);
    ck_assert_uint_lt(lines, LINES);
    ck_assert_uint_eq(st.keys, lines);
    bk_free(flt);
    bk_redis_drop(url);
    unlink(in);
    unlink(out);
}
END_TEST

/* Creation writes nothing unless every key of the new filter is usable (a
 * data key of the wrong type in the metadata's slot or in another block's
 * left the metadata behind before: "already exists" ever after); a name
 * left half-made by an interrupted push is removed by `bloomkit drop`,
 * which touches nothing else. */
START_TEST(creation_writes_nothing_and_drop_clears_a_stuck_name)
{
    char url[256];
    redisContext *c = admin();
    const char *cases[][2] = {{"wt0", "wt0:{wt0}:data"}, {"wt1", "wt1:{wt1/1}:data"}};
    for (int i = 0; i < 2; i++) {
        redisReply *r = redisCommand(c, "LPUSH %s somebody-elses", cases[i][1]);
        freeReplyObject(r);
        test_redis_url(&srv, cases[i][0], "block_bytes=64", url, sizeof url);
        bk_filter *f = NULL;
        char err[512];
        ck_assert_int_eq(
            bk_redis_open_config(url, "layout=blocked capacity=1000", err, sizeof err, &f),
            BK_ESERVER);
        ck_assert_msg(strstr(err, cases[i][1]), "'%s' does not name %s", err, cases[i][1]);
        r = redisCommand(c, "EXISTS %s", cases[i][0]);
        ck_assert_int_eq(r->integer, 0); /* no metadata left behind */
        freeReplyObject(r);
        r = redisCommand(c, "TYPE %s", cases[i][1]);
        ck_assert_str_eq(r->str, "list"); /* and the other key untouched */
        freeReplyObject(r);
        r = redisCommand(c, "DEL %s", cases[i][1]);
        freeReplyObject(r);
        ck_assert_int_eq(
            bk_redis_open_config(url, "layout=blocked capacity=1000", err, sizeof err, &f), BK_OK);
        bk_free(f);
        bk_redis_drop(url);
    }
    /* a push that stopped half-way: the name carries the "pushing" mark */
    test_redis_url(&srv, "stuck", NULL, url, sizeof url);
    bk_filter *local = tu_filter("capacity=1000");
    ck_assert_int_eq(bk_add(local, "k", 1), 1);
    ck_assert_int_eq(bk_redis_push(local, url), BK_OK);
    redisReply *r = redisCommand(c, "HSET stuck pushing 1");
    freeReplyObject(r);
    bk_filter *f;
    ck_assert_int_eq(bk_redis_open_existing(url, &f), BK_ESERVER);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "push"));
    const char *args[] = {"drop", "--redis", url, NULL};
    char outbuf[256];
    const pid_t pid = spawn_cli("/dev/null", scratch("drop.out", 0, outbuf, sizeof outbuf), args);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    r = redisCommand(c, "KEYS stuck*");
    ck_assert_uint_eq(r->elements, 0);
    freeReplyObject(r);
    r = redisCommand(c, "GET bystander");
    ck_assert_str_eq(r->str, "untouched");
    freeReplyObject(r);
    ck_assert_int_eq(bk_redis_push(local, url), BK_OK); /* the name is free again */
    bk_redis_drop(url);
    bk_free(local);
    redisFree(c);
}
END_TEST

/* Make NAME, just created (nothing added), what 0.1.0 made for its
 * configuration: a chain's slices sized by BK_SLICE_AVERAGE (format 4, m of
 * that sizing, no cells yet). 1 for a chain, 0 for a single array (which
 * 0.1.0 sized as this version does: format 4 already). */
static int as_made_by_0_1_0(redisContext *c, const char *name, const bk_filter *f)
{
    bk_slice_view v;
    bk_slice_limit l;
    redisReply *r = redisCommand(c, "HGET %s format", name);
    const int chained = bk_chain_slice(&f->cfg, 0, BK_SLICE_AVERAGE, &v, &l) == BK_OK;
    ck_assert_str_eq(r->str, chained ? "5" : "4"); /* format 5: a chain sized to hold */
    freeReplyObject(r);
    if (!chained)
        return 0;
    r = redisCommand(c, "KEYS %s:*", name);
    for (size_t i = 0; i < r->elements; i++)
        freeReplyObject(redisCommand(c, "DEL %s", r->element[i]->str));
    freeReplyObject(r);
    freeReplyObject(redisCommand(c, "HSET %s format 4 m %llu", name, (unsigned long long)v.m));
    return 1;
}

/* Metadata written before the key table's text (formats 2 and 3: one field
 * per configuration key, as 0.1.0 wrote them) still opens, answers as its
 * cells say and takes adds, a chain's slices sized as 0.1.0 sized them; a
 * hash of format 4 must carry its text and the hash key, and a format that
 * mixes both is refused. */
START_TEST(metadata_of_formats_2_and_3_still_opens)
{
    redisContext *c = admin();
    const char *key = "000102030405060708090a0b0c0d0e0f";
    const struct {
        const char *name, *config, *legacy;
    } cases[] = {
        {"m3std", "capacity=1000 fpr=0.01",
         "format 3 variant standard layout classic hash siphash24 capacity 1000 fpr 0.01 growth 2 "
         "tightening 0.5"},
        {"m3win", "variant=window window=1h capacity=1000 fpr=0.01",
         "format 3 variant window layout classic hash siphash24 capacity 1000 fpr 0.01 growth 2 "
         "tightening 0.29999999999999999 window 3600s generations 8 refresh 0"},
        {"m3cap", "variant=scalable capacity=1000 fpr=0.01 max_bytes=1M",
         "format 3 variant scalable layout classic hash siphash24 capacity 1000 fpr 0.01 growth 2 "
         "tightening 0.5 max_bytes 1048576"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char url[256], text[256], err[512], k[32];
        test_redis_url(&srv, cases[i].name, NULL, url, sizeof url);
        snprintf(text, sizeof text, "%s key=%s", cases[i].config, key);
        bk_filter *f = NULL, *g = NULL;
        ck_assert_msg(bk_redis_open_config(url, text, err, sizeof err, &f) == BK_OK, "%s", err);
        if (as_made_by_0_1_0(c, cases[i].name, f)) {
            bk_free(f);
            ck_assert_msg(bk_redis_open_existing(url, &f) == BK_OK, "%s", bk_last_error());
        }
        for (unsigned j = 0; j < 200; j++)
            ck_assert_int_ge(bk_add(f, k, tu_key(k, sizeof k, "m3", j)), 0);
        bk_free(f);
        redisReply *r = redisCommand(c, "HGET %s config", cases[i].name);
        ck_assert_int_eq(r->type, REDIS_REPLY_STRING);
        ck_assert_ptr_nonnull(strstr(r->str, key)); /* the text, hash key included */
        freeReplyObject(r);
        /* rewritten as the older release wrote it */
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "HSET %s %s key %s", cases[i].name, cases[i].legacy, key);
        freeReplyObject(redisCommand(c, "HDEL %s config", cases[i].name));
        freeReplyObject(redisCommand(c, cmd));
        ck_assert_msg(bk_redis_open_existing(url, &g) == BK_OK, "%s: %s", cases[i].name,
                      bk_last_error());
        for (unsigned j = 0; j < 200; j++)
            ck_assert_int_eq(bk_contains(g, k, tu_key(k, sizeof k, "m3", j)), 1);
        ck_assert_int_eq(bk_add(g, "after", 5), 1);
        bk_config have, want;
        ck_assert_int_eq(bk_get_config(g, &have), BK_OK);
        ck_assert_int_eq(bk_config_parse(&want, text, NULL, 0), BK_OK);
        ck_assert_ptr_null(bk_config_diff(&want, &have));
        bk_free(g);
        /* a config field beside the old ones, or format 4 without its text */
        freeReplyObject(redisCommand(c, "HSET %s config %s", cases[i].name, "capacity=1"));
        ck_assert_int_eq(bk_redis_open_existing(url, &g), BK_ESERVER);
        ck_assert_ptr_nonnull(strstr(bk_last_error(), "another format"));
        freeReplyObject(redisCommand(c, "HDEL %s config", cases[i].name));
        freeReplyObject(redisCommand(c, "HSET %s format 4", cases[i].name));
        ck_assert_int_eq(bk_redis_open_existing(url, &g), BK_ESERVER);
        ck_assert_int_eq(bk_redis_drop(url), BK_OK);
    }
    /* format 4 whose text lacks the hash key */
    char url[256];
    test_redis_url(&srv, "m4nokey", NULL, url, sizeof url);
    bk_filter *f = NULL;
    ck_assert_int_eq(bk_redis_open_config(url, "capacity=1000", NULL, 0, &f), BK_OK);
    bk_free(f);
    freeReplyObject(redisCommand(c, "HSET m4nokey config %s", "capacity=1000"));
    ck_assert_int_eq(bk_redis_open_existing(url, &f), BK_ESERVER);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "hash key"));
    ck_assert_int_eq(bk_redis_drop(url), BK_OK);
    redisFree(c);
}
END_TEST

/* A chain pushed from a file 0.1.0 wrote keeps 0.1.0's slice sizing in
 * Redis (format 4), so every client grows it as that file's chain grows;
 * a chain made now is format 5, and both pull back as they are. */
START_TEST(a_pushed_chain_keeps_the_sizing_it_was_made_with)
{
    redisContext *c = admin();
    const char *const names[] = {"push_old", "push_new"};
    for (int i = 0; i < 2; i++) {
        bk_filter *local = NULL;
        if (i == 0)
            ck_assert_int_eq(bk_load("tests/data/golden/v4-scalable.bkf", &local), BK_OK);
        else
            local = tu_filter("variant=scalable capacity=100 fpr=0.01 max_bytes=64k");
        char url[256], key[32];
        test_redis_url(&srv, names[i], NULL, url, sizeof url);
        ck_assert_msg(bk_redis_push(local, url) == BK_OK, "%s", bk_last_error());
        redisReply *r = redisCommand(c, "HGET %s format", names[i]);
        ck_assert_str_eq(r->str, i == 0 ? "4" : "5");
        freeReplyObject(r);
        bk_filter *f = NULL;
        ck_assert_int_eq(bk_redis_open_existing(url, &f), BK_OK);
        bk_filter_stats a, b;
        ck_assert_int_eq(bk_stats(f, &a), BK_OK);
        bk_slice_view v;
        bk_slice_limit l;
        ck_assert_int_eq(bk_chain_slice(&f->cfg, (uint32_t)a.slices,
                                        i == 0 ? BK_SLICE_AVERAGE : BK_SLICE_HOLDS, &v, &l),
                         BK_OK);
        uint64_t n = 0;
        while (n < 100000) { /* until it grows: its next slice */
            ck_assert_int_ge(bk_add(f, key, tu_key(key, sizeof key, "po", n++)), 0);
            ck_assert_int_eq(bk_stats(f, &b), BK_OK);
            if (b.slices > a.slices)
                break;
        }
        ck_assert_uint_eq(b.slices, a.slices + 1);
        ck_assert_uint_eq(b.bits - a.bits, v.m);
        bk_filter *back = NULL;
        bk_filter_stats p;
        ck_assert_int_eq(bk_redis_pull(url, &back), BK_OK);
        ck_assert_int_eq(bk_stats(back, &p), BK_OK);
        ck_assert_uint_eq(p.slices, b.slices);
        ck_assert_uint_eq(p.bits, b.bits);
        ck_assert_uint_eq(p.set_bits, b.set_bits);
        ck_assert_uint_eq(tu_count_present(back, "po", 0, n), n);
        ck_assert_int_eq(bk_redis_drop(url), BK_OK);
        tu_free_all(f, back);
        bk_free(local);
    }
    redisFree(c);
}
END_TEST

/* The Lua mode keeps the variants it has scripts for: a cuckoo filter is
 * refused by name, pointing to the module, and nothing is created. */
START_TEST(lua_mode_refuses_a_variant_it_has_no_scripts_for)
{
    char url[256], err[512];
    test_redis_url(&srv, "luack", NULL, url, sizeof url);
    bk_filter *f = (bk_filter *)url;
    ck_assert_int_eq(bk_redis_open_config(url, "variant=cuckoo capacity=1000", err, sizeof err, &f),
                     BK_ENOTSUP);
    ck_assert_ptr_null(f);
    ck_assert_msg(strstr(err, "variant=cuckoo") && strstr(err, "module"), "%s", err);
    ck_assert_str_eq(bk_last_error(), err);
    bk_config c;
    ck_assert_int_eq(bk_config_parse(&c, "variant=cuckoo", NULL, 0), BK_OK);
    ck_assert_int_eq(bk_redis_open(url, &c, &f), BK_ENOTSUP);
    redisContext *rc = admin();
    redisReply *r = redisCommand(rc, "KEYS luack*");
    ck_assert_uint_eq(r->elements, 0);
    freeReplyObject(r);
    redisFree(rc);
    bk_filter *local = tu_filter("variant=cuckoo capacity=100");
    ck_assert_int_eq(bk_redis_push(local, url), BK_ENOTSUP);
    bk_free(local);
    /* a key it does not keep is refused by name too: its frozen list holds
     * every key its variants have today, so a shorter list stands in for a
     * key added later */
    bk_config k;
    ck_assert_int_eq(bk_config_parse(&k, "variant=scalable max_bytes=64M", NULL, 0), BK_OK);
    ck_assert_int_eq(bk_lua_keys_refused("luack", &k, NULL, 0), BK_OK);
    const char *fewer[64];
    size_t nfewer = 0;
    for (unsigned i = 0; bk_config_key(i, NULL, 0, NULL) && nfewer < 64; i++)
        if (strcmp(bk_config_key(i, NULL, 0, NULL), "max_bytes") != 0)
            fewer[nfewer++] = bk_config_key(i, NULL, 0, NULL);
    ck_assert_int_eq(bk_lua_keys_refused("luack", &k, fewer, nfewer), BK_ENOTSUP);
    ck_assert_msg(strstr(bk_last_error(), "max_bytes=") && strstr(bk_last_error(), "module"), "%s",
                  bk_last_error());
    ck_assert_int_eq(bk_config_parse(&k, "variant=scalable", NULL, 0), BK_OK);
    ck_assert_int_eq(bk_lua_keys_refused("luack", &k, fewer, nfewer), BK_OK); /* not stated */
}
END_TEST

/* A writer that races `drop` fails (nothing written, the error says the
 * filter was dropped) instead of making half a filter that nothing can open
 * or drop; every variant, and a standard filter over several blocks. */
START_TEST(drop_racing_a_writer_leaves_nothing_behind)
{
    static const char *const configs[] = {
        "variant=standard capacity=1000", "variant=counting capacity=1000",
        "variant=scalable capacity=100", "variant=window window=1h capacity=1000",
        "variant=standard layout=blocked capacity=20000"};
    redisContext *c = admin();
    for (size_t i = 0; i < sizeof configs / sizeof *configs; i++) {
        char url[256], name[16], err[512];
        snprintf(name, sizeof name, "dr%zu", i);
        test_redis_url(&srv, name, i == 4 ? "block_bytes=4096" : NULL, url, sizeof url);
        bk_filter *w = NULL;
        ck_assert_int_eq(bk_redis_open_config(url, configs[i], err, sizeof err, &w), BK_OK);
        ck_assert_int_eq(tu_add_keys(w, "before", 0, 50), 50);
        ck_assert_int_eq(bk_redis_drop(url), BK_OK);
        char key[32];
        const int rc = bk_add(w, key, tu_key(key, sizeof key, "after", 0));
        ck_assert_msg(rc == BK_ENOTFOUND, "%s: add after drop gave %d", configs[i], rc);
        ck_assert_msg(strstr(bk_last_error(), "dropped") != NULL, "%s", bk_last_error());
        int results[64];
        const char *keys[64];
        size_t lens[64];
        char buf[64][24];
        for (int k = 0; k < 64; k++) {
            lens[k] = tu_key(buf[k], sizeof buf[k], "batch", (uint64_t)k);
            keys[k] = buf[k];
        }
        ck_assert_int_eq(bk_add_batch(w, (const void *const *)keys, lens, 64, results),
                         BK_ENOTFOUND);
        redisReply *r = redisCommand(c, "KEYS %s*", name);
        ck_assert_msg(r->elements == 0, "%s: %zu keys left after the racing adds", configs[i],
                      r->elements);
        freeReplyObject(r);
        bk_filter *g = NULL;
        ck_assert_int_eq(bk_redis_open_existing(url, &g), BK_ENOTFOUND);
        ck_assert_int_eq(bk_redis_open_config(url, configs[i], err, sizeof err, &g), BK_OK);
        bk_free(g);
        ck_assert_int_eq(bk_redis_drop(url), BK_OK);
        bk_free(w);
    }
    /* a name an older release left damaged (a hash of counts only, cells
     * beside it) is dropped whole; a hash that is not bloomkit's is not */
    redisReply *r = redisCommand(c, "HSET dmg bits.0 5 keys.0 3 gen 12");
    freeReplyObject(r);
    r = redisCommand(c, "MSET dmg:{dmg}:data x dmg:{dmg/1}:data y dmgx:{dmgx}:data z "
                        "dmg:{dmgy}:other z");
    freeReplyObject(r);
    r = redisCommand(c, "HSET notours name bob");
    freeReplyObject(r);
    char url[256];
    bk_filter *g;
    ck_assert_int_eq(bk_redis_open_existing(test_redis_url(&srv, "dmg", NULL, url, sizeof url), &g),
                     BK_ESERVER);
    ck_assert_int_eq(bk_redis_drop(url), BK_OK);
    r = redisCommand(c, "KEYS dmg*");
    ck_assert_uint_eq(r->elements, 2); /* keys of other tags stay */
    freeReplyObject(r);
    r = redisCommand(c, "EXISTS dmgx:{dmgx}:data dmg:{dmgy}:other");
    ck_assert_int_eq(r->integer, 2);
    freeReplyObject(r);
    ck_assert_int_eq(bk_redis_drop(test_redis_url(&srv, "notours", NULL, url, sizeof url)),
                     BK_ESERVER);
    r = redisCommand(c, "HGET notours name");
    ck_assert_str_eq(r->str, "bob");
    freeReplyObject(r);
    r = redisCommand(c, "DEL notours dmgx:{dmgx}:data dmg:{dmgy}:other");
    freeReplyObject(r);
    redisFree(c);
}
END_TEST

/* A window whose server clock is more than a span behind its newest
 * generation (the server's clock ran ahead when it was made, here by 1,000
 * spans): opening says so, and the next script re-dates every generation
 * (keys renamed, expiry by the new number) instead of freezing it. Spans of
 * 100 s, so that the keys added (slowly, under a sanitizer) all fall in the
 * one generation the test moves ahead. */
START_TEST(a_window_from_a_server_clock_ahead_is_redated)
{
    char url[256], err[512];
    test_redis_url(&srv, "wskew", NULL, url, sizeof url);
    bk_filter *f = NULL;
    ck_assert_int_eq(
        bk_redis_open_config(url, "variant=window window=200s generations=2", err, sizeof err, &f),
        BK_OK);
    ck_assert_uint_ge(tu_add_keys(f, "skew", 0, 100), 99);
    bk_free(f);
    redisContext *c = admin();
    redisReply *r = redisCommand(c, "HGET wskew gen");
    const long long g = atoll(r->str), ahead = g + 1000;
    freeReplyObject(r);
    char from[128], to[128];
    snprintf(from, sizeof from, "wskew:{wskew}:w%lld", g);
    snprintf(to, sizeof to, "wskew:{wskew}:w%lld", ahead);
    r = redisCommand(c, "RENAME %s %s", from, to);
    freeReplyObject(r);
    r = redisCommand(c, "RENAME %s:0/0:data %s:0/0:data", from, to);
    freeReplyObject(r);
    r = redisCommand(c, "HSET wskew gen %lld", ahead);
    freeReplyObject(r);
    ck_assert_int_eq(bk_redis_open_existing(url, &f), BK_OK);
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_int_eq(st.redated_from_ms, ahead * 100000);
    ck_assert_int_ge(st.redated_to_ms, g * 100000);
    ck_assert_uint_eq(tu_count_present(f, "skew", 0, 100), 100); /* re-dated, not lost */
    r = redisCommand(c, "HGET wskew gen");
    const long long now = atoll(r->str);
    freeReplyObject(r);
    ck_assert_int_lt(now, ahead);
    ck_assert_int_ge(now, g);
    r = redisCommand(c, "PTTL wskew:{wskew}:w%lld:0/0:data", now);
    ck_assert_int_gt(r->integer, 0);
    ck_assert_int_le(r->integer, 300000); /* (now + G + 1) spans: within a window and a span */
    freeReplyObject(r);
    r = redisCommand(c, "EXISTS %s", to);
    ck_assert_int_eq(r->integer, 0);
    freeReplyObject(r);
    ck_assert_int_eq(bk_add(f, "fresh", 5), 1);
    bk_redis_drop(url);
    bk_free(f);
    redisFree(c);
}
END_TEST

/* A server that restarts answers -LOADING until its data set is in memory;
 * `bloomkit check` right then waits it out (bounded) instead of failing.
 * The loading is made slow on purpose (key-load-delay), and the test checks
 * that the server really was loading when the command started. */
START_TEST(a_restarting_server_is_waited_for)
{
    static const char *const debug[] = {"--enable-debug-command", "local", NULL};
    static const char *const slow[] = {"--key-load-delay", "1000",
                                       "--loading-process-events-interval-bytes", "1024", NULL};
    test_redis r;
    ck_assert_int_eq(test_redis_start(&r, 0, debug), 0);
    char url[256], inbuf[256], outbuf[256];
    test_redis_url(&r, "restart", NULL, url, sizeof url);
    bk_filter *f;
    ck_assert_int_eq(bk_redis_open_config(url, "capacity=10000", NULL, 0, &f), BK_OK);
    const char *in = scratch("restart-in.txt", 0, inbuf, sizeof inbuf),
               *out = scratch("restart-out.txt", 0, outbuf, sizeof outbuf);
    FILE *fp = fopen(in, "w");
    for (unsigned n = 0; n < 100; n++) {
        char buf[128];
        key_of(buf, sizeof buf, "restart", n);
        ck_assert_int_eq(bk_add(f, buf, strlen(buf)), 1);
        fprintf(fp, "%s\n", buf);
    }
    fclose(fp);
    bk_free(f);
    redisContext *c = redisConnect("127.0.0.1", r.port);
    redisReply *rep = redisCommand(c, "DEBUG POPULATE 3000");
    freeReplyObject(rep);
    rep = redisCommand(c, "SAVE");
    ck_assert_str_eq(rep->str, "OK");
    freeReplyObject(rep);
    redisFree(c);
    const int port = r.port;
    test_redis_kill(&r, 1);
    ck_assert_int_eq(test_redis_start(&r, port, slow), 0);
    c = redisConnect("127.0.0.1", port);
    rep = redisCommand(c, "PING");
    const int was_loading = rep && rep->type == REDIS_REPLY_ERROR;
    freeReplyObject(rep);
    redisFree(c);
    const char *args[] = {"check", "--redis", url, NULL};
    const pid_t pid = spawn_cli(in, out, args);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    const unsigned lines = lines_in(out);
    fprintf(stderr,
            "[redis restart] server loading when check started: %s; check exit %d, "
            "%u of 100 keys present\n",
            was_loading ? "yes" : "no", WIFEXITED(status) ? WEXITSTATUS(status) : -1, lines);
    ck_assert_msg(was_loading, "the server was not loading: the test proves nothing");
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_uint_eq(lines, 100);
    test_redis_stop(&r);
}
END_TEST

/* The password off the command line: from REDISCLI_AUTH (as redis-cli
 * reads it) or --password-file, escaped into the URL in memory (a password
 * with ':', '@' and '/'); a URL with a password and a password file is an
 * error, not a choice; none at all is refused by the server, exit 3. */
START_TEST(password_from_environment_or_file)
{
    static const char *const auth[] = {"--requirepass", "s3:cr@t/pw", NULL};
    test_redis r;
    ck_assert_int_eq(test_redis_start(&r, 0, auth), 0);
    char url[256], pwbuf[256], outbuf[256], inbuf[256];
    test_redis_url(&r, "secret", NULL, url, sizeof url);
    const char *pw = scratch("pw.txt", 0, pwbuf, sizeof pwbuf),
               *out = scratch("pw.out", 0, outbuf, sizeof outbuf),
               *in = scratch("pw.in", 0, inbuf, sizeof inbuf);
    tu_write_file(pw, (const uint8_t *)"s3:cr@t/pw\n", 11);
    tu_write_file(in, (const uint8_t *)"a\nb\n", 4);
    struct {
        const char *env, *file;
        int code;
    } cases[] = {{NULL, NULL, 3}, {"s3:cr@t/pw", NULL, 0}, {NULL, pw, 0}, {"wrong", pw, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (cases[i].env)
            setenv("REDISCLI_AUTH", cases[i].env, 1);
        else
            unsetenv("REDISCLI_AUTH");
        const char *with_file[] = {"dedup", "--redis", url, "--password-file", cases[i].file, NULL};
        const char *without[] = {"dedup", "--redis", url, NULL};
        const pid_t pid = spawn_cli(in, out, cases[i].file ? with_file : without);
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == cases[i].code,
                      "case %zu: exit %d, expected %d", i, WEXITSTATUS(status), cases[i].code);
    }
    unsetenv("REDISCLI_AUTH");
    /* a password in the URL and a file: refused (exit 2), nothing asked */
    char both[300];
    snprintf(both, sizeof both, "redis://:x@127.0.0.1:%d/secret", r.port);
    const char *conflict[] = {"check", "--redis", both, "--password-file", pw, NULL};
    const pid_t pid = spawn_cli(in, out, conflict);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2);
    test_redis_stop(&r);
}
END_TEST

/* Nothing about a shared filter is silently ignored: a URL option given
 * twice, a block_bytes that differs from the filter's, create --force on an
 * existing name, remove on a standard filter ("filter unchanged", not
 * "file"), and a capacity the server cannot hold (refused before anything
 * is written, as the same config is refused locally). */
START_TEST(redis_options_are_never_ignored)
{
    char url[256], twice[300], other[300], outbuf[256];
    const char *out = scratch("opts.out", 0, outbuf, sizeof outbuf);
    test_redis_url(&srv, "opts", "block_bytes=4096", url, sizeof url);
    bk_redis_drop(url);
    bk_filter *f;
    ck_assert_int_eq(bk_redis_open_config(url, "layout=blocked", NULL, 0, &f), BK_OK);
    bk_free(f);
    test_redis_url(&srv, "opts", "db=0&db=1", twice, sizeof twice);
    ck_assert_int_eq(bk_redis_open_existing(twice, &f), BK_EINVAL);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "db given twice"));
    test_redis_url(&srv, "opts", "block_bytes=8192", other, sizeof other);
    ck_assert_int_eq(bk_redis_open_existing(other, &f), BK_EINCOMPAT);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "block_bytes=4096"));
    /* shards=S: 1 .. 1024, and only where the module runs (this server has
     * none): refused with nothing created, never a Lua filter instead */
    static const char *const bad_shards[] = {"shards=0", "shards=1025", "shards=x"};
    for (size_t i = 0; i < sizeof bad_shards / sizeof *bad_shards; i++) {
        test_redis_url(&srv, "opts-sh", bad_shards[i], other, sizeof other);
        ck_assert_int_eq(bk_redis_open_config(other, NULL, NULL, 0, &f), BK_EINVAL);
        ck_assert_ptr_nonnull(strstr(bk_last_error(), "shards must be 1 .. 1024"));
    }
    test_redis_url(&srv, "opts-sh", "shards=4", other, sizeof other);
    ck_assert_int_eq(bk_redis_open_config(other, NULL, NULL, 0, &f), BK_ENOTSUP);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "needs bloomkit's Redis module"));
    test_redis_url(&srv, "opts", "shards=4", other, sizeof other); /* a Lua filter: not split */
    ck_assert_int_eq(bk_redis_open_existing(other, &f), BK_EINCOMPAT);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "is not split into shards"));
    bk_filter *local;
    ck_assert_int_eq(bk_new(NULL, &local), BK_OK);
    test_redis_url(&srv, "opts-sh", "shards=4", other, sizeof other);
    ck_assert_int_eq(bk_redis_push(local, other), BK_ENOTSUP);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "cannot be split into shards"));
    bk_free(local);
    redisContext *adm = admin();
    redisReply *keys = redisCommand(adm, "KEYS opts-sh*");
    ck_assert_uint_eq(keys->elements, 0);
    freeReplyObject(keys);
    redisFree(adm);
    const struct {
        const char *args[8];
        int code;
        const char *says;
    } cli[] = {
        {{"create", "--redis", url, "--force", NULL}, 2, "drop it first"},
        {{"remove", "--redis", url, NULL}, 2, "filter unchanged"},
    };
    for (size_t i = 0; i < sizeof cli / sizeof *cli; i++) {
        char errp[300];
        snprintf(errp, sizeof errp, "%s.err", out);
        const pid_t pid = fork();
        if (pid == 0) {
            const int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600),
                      o = open("/dev/null", O_RDWR);
            if (e < 0 || o < 0 || dup2(o, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
                _exit(126);
            const char *argv[10] = {BK_CLI_PATH};
            for (int k = 0; cli[i].args[k]; k++)
                argv[k + 1] = cli[i].args[k];
            execv(BK_CLI_PATH, (char *const *)argv);
            _exit(127);
        }
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        size_t len;
        char *err = (char *)slurp(errp, &len);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == cli[i].code &&
                          strstr(err, cli[i].says),
                      "%s: exit %d: %s", cli[i].args[0], WEXITSTATUS(status), err);
        free(err);
    }
    bk_redis_drop(url);
    /* 2^48 keys blocked: hundreds of terabytes; refused, nothing created */
    test_redis_url(&srv, "huge", NULL, url, sizeof url);
    char err[512];
    ck_assert_int_eq(
        bk_redis_open_config(url, "layout=blocked capacity=281474976710656", err, sizeof err, &f),
        BK_ERANGE);
    ck_assert_ptr_nonnull(strstr(err, "nothing was created"));
    redisContext *c = admin();
    redisReply *r = redisCommand(c, "KEYS huge*");
    ck_assert_uint_eq(r->elements, 0);
    freeReplyObject(r);
    redisFree(c);
}
END_TEST

/* ---- Redis Cluster: three masters on loopback ports ---------------------- */

enum { NODES = 3 };
static test_redis cl[NODES];

static void cluster_start(void)
{
    static const char *const args[] = {"--cluster-enabled",
                                       "yes",
                                       "--cluster-config-file",
                                       "nodes.conf",
                                       "--cluster-node-timeout",
                                       "5000",
                                       NULL};
    for (int i = 0; i < NODES; i++)
        if (test_redis_start(&cl[i], 0, args) != 0) {
            fprintf(stderr, "redis cluster: could not start node %d\n", i);
            exit(1);
        }
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "redis-cli --cluster create 127.0.0.1:%d 127.0.0.1:%d 127.0.0.1:%d "
             "--cluster-replicas 0 --cluster-yes >/dev/null 2>&1",
             cl[0].port, cl[1].port, cl[2].port);
    if (system(cmd) != 0) {
        fprintf(stderr, "redis cluster: redis-cli --cluster create failed\n");
        exit(1);
    }
    /* wait (bounded) until every node says the cluster is ok */
    for (int tries = 0; tries < 2000; tries++) {
        int ok = 0;
        for (int i = 0; i < NODES; i++) {
            redisContext *c = redisConnect("127.0.0.1", cl[i].port);
            redisReply *r = c && !c->err ? redisCommand(c, "CLUSTER INFO") : NULL;
            ok += r && r->type == REDIS_REPLY_STRING && strstr(r->str, "cluster_state:ok");
            if (r)
                freeReplyObject(r);
            if (c)
                redisFree(c);
        }
        if (ok == NODES)
            return;
        usleep(10000);
    }
    fprintf(stderr, "redis cluster: the cluster never reached state ok\n");
    exit(1);
}

static void cluster_stop(void)
{
    for (int i = 0; i < NODES; i++)
        test_redis_stop(&cl[i]);
}

static redisReply *node_cmd(int i, const char *fmt, const char *a, const char *b)
{
    redisContext *c = redisConnect("127.0.0.1", cl[i].port);
    ck_assert(c && !c->err);
    redisReply *r = redisCommand(c, fmt, a, b);
    ck_assert_ptr_nonnull(r);
    redisFree(c);
    return r;
}

START_TEST(key_slots_match_the_server)
{
    ck_assert_uint_eq(bk_redis_key_slot("123456789", 9), 0x31C3 & 16383); /* CRC16 check value */
    static const char *const keys[] = {"a",       "seen-urls", "x:{x/17}:data",       "{}",
                                       "{}{tag}", "a{b}c{d}",  "{user1000}.following"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        redisReply *r = node_cmd(0, "CLUSTER KEYSLOT %s", keys[i], NULL);
        ck_assert_int_eq(r->type, REDIS_REPLY_INTEGER);
        ck_assert_uint_eq(bk_redis_key_slot(keys[i], strlen(keys[i])), (unsigned)r->integer);
        freeReplyObject(r);
    }
}
END_TEST

START_TEST(cluster_runs_the_concurrency_tests)
{
    char url[256];
    race("variant=standard capacity=100000 fpr=0.0001",
         test_redis_url(&cl[1], "c-race-std", NULL, url, sizeof url), "cluster-std");
    race("variant=scalable capacity=200 fpr=0.0001",
         test_redis_url(&cl[2], "c-race-scl", NULL, url, sizeof url), "cluster-scl");
    race("variant=window window=1h capacity=1600 fpr=0.0001",
         test_redis_url(&cl[1], "c-race-win", NULL, url, sizeof url), "cluster-win");
    /* blocked, in 4 KiB blocks: the blocks spread over all three masters */
    eight_dedups(test_redis_url(&cl[0], "c-crawl", "block_bytes=4096", url, sizeof url));
    bk_filter *f;
    ck_assert_msg(bk_redis_open_config(url, "layout=blocked capacity=100000", NULL, 0, &f) == BK_OK,
                  "%s", bk_last_error());
    char buf[128];
    for (unsigned n = 0; n < 2000; n++) {
        const int len = key_of(buf, sizeof buf, "spread", n);
        ck_assert_int_eq(bk_add(f, buf, (size_t)len), 1);
    }
    for (int i = 0; i < NODES; i++) {
        redisReply *r = node_cmd(i, "DBSIZE", NULL, NULL);
        ck_assert_int_gt(r->integer, 0);
        freeReplyObject(r);
    }
    /* made on a cluster: the blocks past the first keep their counts beside
     * them (counts=blocks), and bk_stats adds them up */
    int found = 0;
    for (int i = 0; i < NODES; i++) {
        redisReply *r = node_cmd(i, "HGET %s %s", "c-crawl", "counts");
        if (r->type == REDIS_REPLY_STRING) {
            ck_assert_str_eq(r->str, "blocks");
            found = 1;
        }
        freeReplyObject(r);
    }
    ck_assert(found);
    finish_counted(f, url, 2000, UINT64_MAX);
}
END_TEST

/* Move the slot of a filter's block to another master while the filter is
 * open: adds and lookups during the migration (ASK) and after it (MOVED)
 * still land where the data is. */
START_TEST(cluster_redirections_are_followed)
{
    char url[256];
    test_redis_url(&cl[0], "moving", NULL, url, sizeof url);
    bk_redis_drop(url);
    bk_filter *f;
    ck_assert_int_eq(bk_redis_open_config(url, "capacity=10000", NULL, 0, &f), BK_OK);
    char buf[128];
    for (unsigned n = 0; n < 1000; n++) {
        const int len = key_of(buf, sizeof buf, "before", n);
        ck_assert_int_eq(bk_add(f, buf, (size_t)len), 1);
    }
    static const char *const blockkeys[] = {"moving:{moving}:data", "moving"};
    char slot[16];
    snprintf(slot, sizeof slot, "%u", bk_redis_key_slot(blockkeys[0], strlen(blockkeys[0])));
    /* which node holds it, and its neighbour */
    int from = -1;
    char ids[NODES][64];
    for (int i = 0; i < NODES; i++) {
        redisReply *r = node_cmd(i, "CLUSTER MYID", NULL, NULL);
        snprintf(ids[i], sizeof ids[i], "%s", r->str);
        freeReplyObject(r);
        r = node_cmd(i, "CLUSTER COUNTKEYSINSLOT %s", slot, NULL);
        if (r->integer > 0)
            from = i;
        freeReplyObject(r);
    }
    ck_assert_int_ge(from, 0);
    const int to = (from + 1) % NODES;
    freeReplyObject(node_cmd(to, "CLUSTER SETSLOT %s IMPORTING %s", slot, ids[from]));
    freeReplyObject(node_cmd(from, "CLUSTER SETSLOT %s MIGRATING %s", slot, ids[to]));
    /* mid-migration: the keys are still on the old node */
    for (unsigned n = 0; n < 1000; n++) {
        const int len = key_of(buf, sizeof buf, "before", n);
        ck_assert_int_eq(bk_contains(f, buf, (size_t)len), 1);
    }
    char target[64];
    snprintf(target, sizeof target, "%d", cl[to].port);
    redisContext *c = redisConnect("127.0.0.1", cl[from].port);
    redisReply *r = redisCommand(c, "MIGRATE 127.0.0.1 %s %s 0 5000 KEYS %s %s", target, "",
                                 blockkeys[0], blockkeys[1]);
    ck_assert_ptr_nonnull(r);
    ck_assert_msg(r->type != REDIS_REPLY_ERROR, "MIGRATE: %s", r->str);
    freeReplyObject(r);
    redisFree(c);
    /* keys moved, slot still migrating: ASK */
    for (unsigned n = 0; n < 300; n++) {
        const int len = key_of(buf, sizeof buf, "during", n);
        ck_assert_int_eq(bk_add(f, buf, (size_t)len), 1);
    }
    for (int i = 0; i < NODES; i++)
        freeReplyObject(node_cmd(i, "CLUSTER SETSLOT %s NODE %s", slot, ids[to]));
    /* done: MOVED, once, then the new map */
    for (unsigned n = 0; n < 1000; n++) {
        const int len = key_of(buf, sizeof buf, "before", n);
        ck_assert_int_eq(bk_contains(f, buf, (size_t)len), 1);
    }
    for (unsigned n = 0; n < 300; n++) {
        const int len = key_of(buf, sizeof buf, "during", n);
        ck_assert_int_eq(bk_add(f, buf, (size_t)len), 0);
    }
    finish_counted(f, url, 1300, 1300);
}
END_TEST

Suite *lua_suite(void)
{
    Suite *s = suite_create("lua");
    if (!test_redis_available()) {
        fprintf(stderr, "lua suite: SKIPPED, redis-server is not installed (Debian package "
                        "redis-server)\n");
        return s;
    }
    TCase *tc = tu_tcase("lua");
    tcase_add_unchecked_fixture(tc, start_server, stop_server);
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, each_variant_matches_a_local_filter_byte_for_byte, 0, NSHAPES);
    tcase_add_loop_test(tc, push_then_pull_is_exact, 0, NSHAPES);
    tcase_add_test(tc, racing_processes_see_each_new_key_once);
    tcase_add_test(tc, counting_saturates_and_never_underflows);
    tcase_add_test(tc, a_shared_window_forgets_after_it);
    tcase_add_test(tc, the_server_clock_decides);
    tcase_add_test(tc, max_bytes_is_enforced_by_the_script);
    tcase_add_test(tc, first_creator_wins_and_conflicts_are_named);
    tcase_add_test(tc, faults_give_clear_errors_and_write_nothing);
    tcase_add_test(tc, survives_script_flush_and_killed_connections);
    tcase_add_test(tc, eight_cli_processes_dedup_overlapping_streams);
    tcase_add_test(tc, server_killed_mid_dedup_loses_no_reported_key);
    tcase_add_loop_test(tc, dedup_prints_every_confirmed_line_before_an_error, 0, 2);
    tcase_add_test(tc, creation_writes_nothing_and_drop_clears_a_stuck_name);
    tcase_add_test(tc, metadata_of_formats_2_and_3_still_opens);
    tcase_add_test(tc, a_pushed_chain_keeps_the_sizing_it_was_made_with);
    tcase_add_test(tc, lua_mode_refuses_a_variant_it_has_no_scripts_for);
    tcase_add_test(tc, drop_racing_a_writer_leaves_nothing_behind);
    tcase_add_test(tc, a_window_from_a_server_clock_ahead_is_redated);
    tcase_add_test(tc, a_restarting_server_is_waited_for);
    tcase_add_test(tc, password_from_environment_or_file);
    tcase_add_test(tc, redis_options_are_never_ignored);
    tcase_add_test(tc, cli_faults_have_their_exit_codes);
    tcase_add_test(tc, command_timeout_is_honoured);
    tcase_add_test(tc, canonical_urls_are_recorded_in_a_shared_filter);
    tcase_add_test(tc, every_failing_allocation_on_redis_paths_is_clean);
    suite_add_tcase(s, tc);
    TCase *tcc = tu_tcase("cluster");
    tcase_add_unchecked_fixture(tcc, cluster_start, cluster_stop);
    tcase_set_timeout(tcc, 300);
    tcase_add_test(tcc, key_slots_match_the_server);
    tcase_add_test(tcc, cluster_runs_the_concurrency_tests);
    tcase_add_test(tcc, cluster_redirections_are_followed);
    suite_add_tcase(s, tcc);
    return s;
}
#endif
