/*
 * test_crash.c - atomic save under SIGKILL and under failing system calls.
 *
 * A child saves 200 MB filters B and A over one path, alternately, forever,
 * reporting each completed save; the parent lets 0, 1 or 2 saves complete and
 * then kills it with SIGKILL at a random moment, 50 times. After every
 * kill the file at path must load and be exactly A or exactly B. Under the
 * sanitizers (tu_small) 20 MB filters and 20 kills: the same save path.
 * Then every system call of the save path (mkstemp, write, pwrite, fsync,
 * close, rename) is made to fail at its N-th call for every N: each failure
 * returns BK_EIO, leaves the old file byte-identical and no temporary behind.
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "failio.h"
#include "suites.h"
#include "testutil.h"

/* ~200 MB each: 1.67e8 keys at 1% is 1.6e9 bits (tu_small: a tenth). */
static bk_filter *marked(const char *family)
{
    char cfg[96];
    snprintf(cfg, sizeof cfg, "capacity=%d fpr=0.01 key=a0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
             tu_small() ? 16700000 : 167000000);
    return tu_holding(cfg, family, 0, 20000);
}

static void sleep_ns(long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Remove the ".crawl.bkf.tmp.*" temporaries a killed save leaves; returns how
 * many. Anything else in dir is left for the caller to see. */
static int remove_temps(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d)))
        if (strncmp(e->d_name, ".crawl.bkf.tmp.", 15) == 0) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            ck_assert_int_eq(unlink(p), 0);
            n++;
        }
    closedir(d);
    return n;
}

START_TEST(sigkill_during_save_leaves_old_or_new)
{
    uint64_t seed = tu_seed("sigkill_during_save_leaves_old_or_new");
    char *dir = tu_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/crawl.bkf", dir);
    bk_filter *a = marked("A"), *b = marked("B");
    ck_assert_int_eq(bk_save(a, path), BK_OK);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(bk_save(a, path), BK_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const long save_ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
    int seen_a = 0, seen_b = 0, stale = 0;
    const int kills = tu_small() ? 20 : 50;
    for (int kill_no = 0; kill_no < kills; kill_no++) {
        int done[2];
        ck_assert_int_eq(pipe(done), 0);
        const pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            close(done[0]);
            for (unsigned n = 0;; n++) {
                if (bk_save(n % 2 ? a : b, path) != BK_OK)
                    _exit(2);
                if (write(done[1], "s", 1) != 1)
                    _exit(3);
            }
        }
        close(done[1]);
        /* Let 0, 1 or 2 saves complete (B, then A), then kill at a random
         * moment of the next one: both outcomes occur whatever the speed. */
        char c;
        for (int waited = 0; waited < kill_no % 3; waited++)
            ck_assert_int_eq(read(done[0], &c, 1), 1);
        sleep_ns((long)(tu_next(&seed) % (uint64_t)(save_ns + 1)));
        kill(pid, SIGKILL);
        close(done[0]);
        int status;
        waitpid(pid, &status, 0);
        ck_assert_msg(WIFSIGNALED(status), "child exited on its own (status %d)", status);
        bk_filter *g = NULL;
        const int rc = bk_load(path, &g);
        ck_assert_msg(rc == BK_OK, "kill %d: load failed: %s", kill_no, bk_last_error());
        const int is_a = tu_same_filter(a, g), is_b = tu_same_filter(b, g);
        ck_assert_msg(is_a || is_b, "kill %d: file is neither the old nor the new filter", kill_no);
        seen_a += is_a;
        seen_b += is_b;
        bk_free(g);
        stale += remove_temps(dir);
        ck_assert_int_eq(tu_count_files(dir), 1);
    }
    fprintf(stderr,
            "[sigkill] %d kills over %.2f s saves: %d times A, %d times B, %d stale temps\n", kills,
            (double)save_ns / 1e9, seen_a, seen_b, stale);
    ck_assert_int_gt(seen_b, 0); /* guaranteed: some rounds wait for B's save */
    bk_free(a);
    bk_free(b);
    tu_rmtree(dir);
}
END_TEST

START_TEST(every_failing_syscall_keeps_the_old_file)
{
    char *dir = tu_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/f.bkf", dir);
    bk_filter *old = tu_filter("variant=scalable capacity=500 fpr=0.01");
    bk_filter *new = tu_holding("variant=scalable capacity=500 fpr=0.01", "n", 0, 3000);
    size_t len0;
    uint8_t *before = tu_saved_bytes(old, path, &len0);
    long n = 1;
    for (; n < 1000; n++) {
        tu_io_fail(n);
        const int rc = bk_save(new, path);
        bk_sysio_defaults();
        if (tu_io.calls < n) { /* no call failed: the save went through */
            ck_assert_int_eq(rc, BK_OK);
            break;
        }
        if (rc == BK_OK) {
            /* Only the close of the directory handle may fail harmlessly:
             * the new file is in place. */
            tu_assert_file_holds(path, new, "BK_OK");
            tu_write_file(path, before, len0);
            continue;
        }
        ck_assert_msg(rc == BK_EIO, "call %ld: %s", n, bk_err_name(rc));
        ck_assert_msg(bk_last_error()[0], "call %ld: no detail", n);
        size_t len;
        uint8_t *now = tu_read_file(path, &len);
        const int same = len == len0 && memcmp(now, before, len) == 0;
        free(now);
        /* A failure after the rename (directory fsync) leaves the new file. */
        if (!same) {
            char *detail = strdup(bk_last_error()); /* the load below resets it */
            tu_assert_file_holds(path, new, "neither old nor new");
            ck_assert_ptr_nonnull(strstr(detail, "directory"));
            free(detail);
            tu_write_file(path, before, len0);
        }
        ck_assert_msg(tu_count_files(dir) == 1, "call %ld: temporary left behind", n);
    }
    fprintf(stderr, "[save faults] %ld system calls failed in turn, each cleanly\n", n - 1);
    ck_assert_int_gt(n, 6);
    tu_assert_file_holds(path, new, "after the faults");
    free(before);
    bk_free(old);
    bk_free(new);
    tu_rmtree(dir);
}
END_TEST

Suite *crash_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("crash", "atomic_save", &tc);
    tcase_add_test(tc, every_failing_syscall_keeps_the_old_file);
    tcase_add_test(tc, sigkill_during_save_leaves_old_or_new);
    return s;
}
