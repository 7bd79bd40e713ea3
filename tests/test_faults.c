/*
 * test_faults.c - fault injection beyond saving (test_crash.c has the N-th
 * failing write/fsync/close/rename of bk_save):
 *   - bk_load and bk_open_mmap with the N-th open, read, pread, fstat, mmap,
 *     close failing, for every N: an error or the right filter, never a
 *     partial one, nothing leaked;
 *   - the N-th allocation failing in bk_save, bk_load and bk_open_mmap, for
 *     every N: BK_ENOMEM (or success), the file old or new, no temporary left,
 *     nothing leaked;
 *   - `bloomkit dedup --state` with the N-th write, fsync, rename or mkstemp
 *     failing in the command's process (an LD_PRELOAD shim,
 *     tests/shim/fault_shim.c), for every N: exit 3 or 0, the state file the
 *     old one or the new one byte for byte, no temporary left.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bloomkit.h"
#include "bloomkit_tools.h"
#include "failio.h"
#include "suites.h"
#include "testutil.h"

#ifndef BK_CLI_PATH
#define BK_CLI_PATH "build/bloomkit"
#endif
#ifndef BK_FAULT_SHIM
#define BK_FAULT_SHIM "build/tests/fault_shim.so"
#endif

/* Config i: every variant of the registry, the odd ones blocked; small
 * enough that a chain grows to several slices, and, for a variant that keeps
 * time (it takes window=), a window that filled() spreads over three
 * generations, so a failure can strike between slices. */
#define NCONFIGS ((int)tu_nvariants())
static const char *config_of(int i, char *buf, size_t cap)
{
    const char *timed = " window=30s generations=3";
    bk_config c;
    snprintf(buf, cap, "variant=%s capacity=%llu fpr=0.01 layout=%s%s", tu_variant((unsigned)i),
             (unsigned long long)tu_capacity_for((unsigned)i, 300, 2000),
             i % 2 ? "blocked" : "classic", timed);
    if (bk_config_parse(&c, buf, NULL, 0) != BK_OK) /* a key of another variant */
        buf[strlen(buf) - strlen(timed)] = '\0';
    return buf;
}

static int64_t fault_now;

static int64_t fault_clock(void *ctx)
{
    (void)ctx;
    return fault_now;
}

static bk_filter *filled(const char *cfg)
{
    fault_now = INT64_C(1800000000000);
    bk_set_clock(fault_clock, NULL); /* reset by teardown */
    bk_filter *f = tu_filter(cfg);
    char key[32];
    for (uint64_t i = 0; i < 1500; i++) {
        fault_now = INT64_C(1800000000000) + (int64_t)(i / 500) * 10000;
        ck_assert_int_ge(bk_add(f, key, tu_key(key, sizeof key, "fault", i)), 0);
    }
    return f;
}

static void teardown(void)
{
    bk_set_clock(NULL, NULL);
}

/* open(mode): 0 bk_load, 1 bk_open_mmap (verified), 2 mapped without verify */
static int open_as(int mode, const char *path, bk_filter **out)
{
    return mode == 0   ? bk_load(path, out)
           : mode == 1 ? bk_open_mmap(path, BK_MAP_READONLY, out)
                       : bk_open_mmap(path, BK_MAP_READONLY | BK_MAP_NOVERIFY, out);
}

START_TEST(every_failing_call_while_loading_is_an_error)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "f.bkf");
    char cfg[TU_CFG_MAX];
    bk_filter *f = filled(config_of(_i % NCONFIGS, cfg, sizeof cfg));
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    const int mode = _i / NCONFIGS;
    long n = 1;
    for (; n < 1000; n++) {
        tu_io_fail(n);
        bk_filter *g = (bk_filter *)f; /* must come back NULL on error */
        const int rc = open_as(mode, path, &g);
        bk_sysio_defaults();
        if (rc == BK_OK) {
            /* no call failed, or only a harmless one (a close after use) */
            ck_assert(tu_same_filter(f, g));
            bk_free(g);
            if (tu_io.calls < n)
                break;
            continue;
        }
        ck_assert_ptr_null(g);
        ck_assert_msg(rc == BK_EIO || rc == BK_ESYS || rc == BK_ENOMEM || rc == BK_ECORRUPT,
                      "call %ld: %s", n, bk_err_name(rc));
        ck_assert_msg(bk_last_error()[0], "call %ld: no detail", n);
    }
    fprintf(stderr, "[load faults %s, %s] %ld calls failed in turn, each cleanly\n",
            mode == 0   ? "load"
            : mode == 1 ? "mmap"
                        : "mmap-noverify",
            cfg, n - 1);
    ck_assert_int_gt(n, 3);
    bk_free(f);
    free(path);
    tu_rmtree(dir);
}
END_TEST

START_TEST(every_failing_allocation_in_save_and_load_is_clean)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "f.bkf");
    char cfg[TU_CFG_MAX];
    bk_filter *old = filled(config_of(_i, cfg, sizeof cfg)), *new = filled(cfg);
    tu_add_keys(new, "more", 0, 500);
    size_t len0;
    uint8_t *before = tu_saved_bytes(old, path, &len0);
    long points = 0;
    for (int op = 0; op < 3; op++) {
        long n = 1;
        for (; n < 1000; n++) {
            tu_io.calls = 0;
            tu_io.fail_at = n;
            bk_allocator failing = tu_failing_allocator(0);
            tu_alloc.fails = tu_io_tick; /* allocations count with the system calls */
            ck_assert_int_eq(bk_set_allocator(&failing), BK_OK);
            bk_filter *g = NULL;
            int rc;
            if (op == 0)
                rc = bk_save(new, path);
            else
                rc = open_as(op == 1 ? 0 : 1, path, &g);
            if (g)
                bk_free(g);
            bk_set_allocator(NULL);
            ck_assert_msg(tu_alloc.live == 0, "op %d, allocation %ld: %ld blocks leaked", op, n,
                          tu_alloc.live);
            ck_assert_msg(rc == BK_OK || rc == BK_ENOMEM, "op %d, allocation %ld: %s", op, n,
                          bk_err_name(rc));
            ck_assert_int_eq(tu_count_files(dir), 1); /* no temporary left */
            size_t len;
            uint8_t *now = tu_read_file(path, &len);
            if (op == 0 && rc != BK_OK) {
                ck_assert(len == len0 && memcmp(now, before, len) == 0); /* the old file */
            }
            free(now);
            if (op == 0 && rc == BK_OK)
                tu_write_file(path, before, len0); /* back to old for the next n */
            if (tu_io.calls < n)
                break;
        }
        points += n - 1;
    }
    fprintf(stderr, "[alloc faults %s] %ld allocation points failed in turn, each cleanly\n", cfg,
            points);
    ck_assert_int_gt(points, 3);
    free(before);
    bk_free(old);
    bk_free(new);
    free(path);
    tu_rmtree(dir);
}
END_TEST

/* Run `bloomkit dedup --state STATE` on input with the shim failing call N
 * (0: none); returns the exit status and sets *calls to the calls seen. */
static int dedup_with_fault(const char *state, const char *input, const char *out, long n,
                            const char *countfile, long *calls)
{
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const int i = open(input, O_RDONLY), o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600),
                  e = open("/dev/null", O_WRONLY);
        if (i < 0 || o < 0 || e < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(99);
        char at[32];
        snprintf(at, sizeof at, "%ld", n);
        setenv("LD_PRELOAD", BK_FAULT_SHIM, 1);
        setenv("BK_FAULT_AT", at, 1);
        setenv("BK_FAULT_COUNT", countfile, 1);
        setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1); /* sanitizer builds */
        execl(BK_CLI_PATH, BK_CLI_PATH, "dedup", "--state", state, "--quiet", (char *)NULL);
        _exit(98);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    FILE *f = fopen(countfile, "r");
    *calls = -1;
    if (f) {
        if (fscanf(f, "%ld", calls) != 1)
            *calls = -1;
        fclose(f);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

START_TEST(dedup_state_survives_every_failing_call)
{
    if (access(BK_FAULT_SHIM, R_OK) != 0)
        ck_abort_msg("fault shim %s not built", BK_FAULT_SHIM);
    char *dir = tu_tmpdir();
    char *state = tu_path(dir, "state.bkf"), *in1 = tu_path(dir, "in1"), *in2 = tu_path(dir, "in2"),
         *out = tu_path(dir, "out"), *count = tu_path(dir, "count"),
         *fresh = tu_path(dir, "new.bkf");
    FILE *f = fopen(in1, "w");
    for (int i = 0; i < 3000; i++)
        fprintf(f, "https://a.example/%d\n", i);
    fclose(f);
    f = fopen(in2, "w");
    for (int i = 0; i < 3000; i++)
        fprintf(f, "https://b.example/%d\n", i);
    fclose(f);
    long calls;
    ck_assert_int_eq(dedup_with_fault(state, in1, out, 0, count, &calls), 0); /* the old state */
    size_t len_old, len_new;
    uint8_t *old = tu_read_file(state, &len_old);
    /* the new state: the same run without faults, on a copy */
    tu_write_file(fresh, old, len_old);
    ck_assert_int_eq(dedup_with_fault(fresh, in2, out, 0, count, &calls), 0);
    uint8_t *new = tu_read_file(fresh, &len_new);
    unlink(fresh);
    ck_assert_int_gt(calls, 3);
    const long total = calls;
    int failures = 0;
    for (long n = 1; n <= total; n++) {
        tu_write_file(state, old, len_old);
        const int code = dedup_with_fault(state, in2, out, n, count, &calls);
        ck_assert_msg(code == 0 || code == 3, "call %ld: exit %d", n, code);
        failures += code == 3;
        size_t len;
        uint8_t *now = tu_read_file(state, &len);
        const int is_old = len == len_old && memcmp(now, old, len) == 0;
        const int is_new = len == len_new && memcmp(now, new, len) == 0;
        ck_assert_msg(is_old || is_new, "call %ld: the state is neither old nor new", n);
        if (code == 3)
            ck_assert_msg(is_old || n >= total - 1, "call %ld: failed but the state is new", n);
        free(now);
        /* state, inputs, output, count: nothing else (no temporary) */
        ck_assert_msg(tu_count_files(dir) == 5, "call %ld: %d files in the directory", n,
                      tu_count_files(dir));
    }
    fprintf(stderr,
            "[dedup --state faults] %ld calls failed in turn: %d runs exited 3, the "
            "state old or new each time\n",
            total, failures);
    ck_assert_int_gt(failures, 0);
    free(old);
    free(new);
    free(state);
    free(in1);
    free(in2);
    free(out);
    free(count);
    free(fresh);
    tu_rmtree(dir);
}
END_TEST

Suite *faults_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("faults", "faults", &tc);
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_loop_test(tc, every_failing_call_while_loading_is_an_error, 0, 3 * NCONFIGS);
    tcase_add_loop_test(tc, every_failing_allocation_in_save_and_load_is_clean, 0, NCONFIGS);
    tcase_add_test(tc, dedup_state_survives_every_failing_call);
    return s;
}
