/*
 * test_writers.c - one writer at a time: concurrent bloomkit commands on one
 * file lose no key (the writer lock, bk_lock_file), --no-wait names the
 * holder, a writable mapping notices its file was replaced, and a line
 * printed as new is in the state a later run loads.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "io/format.h"
#include "suites.h"
#include "testutil.h"

#ifndef BK_CLI_PATH
#define BK_CLI_PATH "build/bloomkit"
#endif

static char *g_dir;

static void setup(void)
{
    g_dir = tu_tmpdir();
}
static void teardown(void)
{
    tu_rmtree(g_dir);
}

#ifndef BK_FAULT_SHIM
#define BK_FAULT_SHIM "build/tests/fault_shim.so"
#endif

static const char *g_mmap_min; /* the next spawn fails mmaps this large */

/* Start bloomkit with argv, stdin from `in` (a path or NULL), stdout and
 * stderr to files named after `tag`; returns the pid. */
static pid_t spawn(const char *in, const char *tag, char *const argv[])
{
    char outp[4096], errp[4096];
    snprintf(outp, sizeof outp, "%s/%s.out", g_dir, tag);
    snprintf(errp, sizeof errp, "%s/%s.err", g_dir, tag);
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const int i = open(in ? in : "/dev/null", O_RDONLY),
                  o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600),
                  e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (i < 0 || o < 0 || e < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(99);
        if (g_mmap_min) {
            setenv("LD_PRELOAD", BK_FAULT_SHIM, 1);
            setenv("BK_FAULT_MMAP_MIN", g_mmap_min, 1);
            setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1); /* sanitizer builds */
        }
        char *args[32] = {(char *)BK_CLI_PATH};
        for (int k = 0; k < 30 && argv[k]; k++)
            args[k + 1] = argv[k];
        execv(args[0], args);
        _exit(98);
    }
    return pid;
}

static int wait_code(pid_t pid)
{
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *path_of(const char *name)
{
    static char paths[16][4096];
    static int next;
    char *p = paths[next++ % 16];
    snprintf(p, 4096, "%s/%s", g_dir, name);
    return p;
}

/* Lines "<family>:<i>" for i in [from, to) into a file; returns its path. */
static char *lines_file(const char *name, const char *family, int from, int to)
{
    char *p = path_of(name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = from; i < to; i++)
        fprintf(f, "%s:%d\n", family, i);
    fclose(f);
    return p;
}

static char *slurp(const char *name, size_t *len)
{
    char *s = (char *)tu_read_file(path_of(name), len);
    s[*len] = '\0';
    return s;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* 4 writers at once on one file, two commands' kinds (add, dedup --state
 * --checkpoint): each waits its turn, and afterwards every key of every
 * writer is in the file. Without the lock the last save won (issue 16:
 * 49,993 of 50,000 keys of one run were lost). */
START_TEST(concurrent_writers_lose_no_key)
{
    enum { KEYS = 20000, WRITERS = 4 };
    char *state = strdup(path_of("st.bkf"));
    ck_assert_int_eq(
        wait_code(spawn(NULL, "init",
                        (char *[]){"dedup", "--state", state, "--capacity", "100000", NULL})),
        0);
    pid_t pids[WRITERS];
    char *inputs[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        char name[32], fam[32], tag[32];
        snprintf(name, sizeof name, "in%d.txt", w);
        snprintf(fam, sizeof fam, "w%d", w);
        snprintf(tag, sizeof tag, "w%d", w);
        inputs[w] = strdup(lines_file(name, fam, 0, KEYS));
        if (w % 2 == 0)
            pids[w] = spawn(inputs[w], tag,
                            (char *[]){"dedup", "--state", state, "--checkpoint", "1000",
                                       "--capacity", "100000", NULL});
        else
            pids[w] = spawn(inputs[w], tag, (char *[]){"add", state, "--quiet", NULL});
    }
    for (int w = 0; w < WRITERS; w++) {
        const int code = wait_code(pids[w]);
        size_t len;
        char tag[32];
        snprintf(tag, sizeof tag, "w%d.err", w);
        char *err = slurp(tag, &len);
        ck_assert_msg(code == 0, "writer %d exited %d: %s", w, code, err);
        free(err);
    }
    /* every key of every writer that ran is in the state */
    for (int w = 0; w < WRITERS; w++) {
        char tag[32];
        snprintf(tag, sizeof tag, "check%d", w);
        const int code = wait_code(spawn(inputs[w], tag, (char *[]){"check", state, "-v", NULL}));
        size_t len;
        snprintf(tag, sizeof tag, "check%d.out", w);
        char *absent = slurp(tag, &len);
        ck_assert_msg(len == 0, "writer %d: %zu of its %d keys are absent from the state", w,
                      count_lines(absent), KEYS);
        ck_assert_int_eq(code, 1); /* -v printed nothing */
        free(absent);
    }
    fprintf(stderr, "[concurrent writers] %d writers x %d keys on one file: none lost\n", WRITERS,
            KEYS);
    for (int w = 0; w < WRITERS; w++)
        free(inputs[w]);
    free(state);
}
END_TEST

/* A writer holding the lock: a second one with --no-wait exits 3 at once
 * naming the holder's pid; without it, it waits and then succeeds. */
START_TEST(no_wait_names_the_holder)
{
    char *file = strdup(path_of("f.bkf"));
    char *in = strdup(lines_file("in.txt", "k", 0, 10));
    ck_assert_int_eq(wait_code(spawn(NULL, "c", (char *[]){"create", file, NULL})), 0);
    bk_file_lock *lock;
    ck_assert_int_eq(bk_lock_file(file, 0, &lock), BK_OK);
    ck_assert_int_eq(wait_code(spawn(in, "nw", (char *[]){"add", file, "--no-wait", NULL})), 3);
    size_t len;
    char *err = slurp("nw.err", &len);
    char pid[32];
    snprintf(pid, sizeof pid, "process %ld", (long)getpid());
    ck_assert_msg(strstr(err, pid), "'%s' does not name %s", err, pid);
    free(err);
    /* the library: BK_EBUSY at once for a second taker, in this process too */
    bk_file_lock *again;
    ck_assert_int_eq(bk_lock_file(file, BK_LOCK_NOWAIT, &again), BK_EBUSY);
    ck_assert_ptr_null(again);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), pid));
    /* a waiting writer goes on once the lock is released */
    const pid_t w = spawn(in, "wait", (char *[]){"add", file, NULL});
    struct timespec ms = {0, 200 * 1000 * 1000};
    nanosleep(&ms, NULL); /* not for timing: the writer is waiting or not yet started */
    bk_unlock_file(lock);
    ck_assert_int_eq(wait_code(w), 0);
    ck_assert_int_eq(wait_code(spawn(in, "chk", (char *[]){"check", file, "-v", NULL})), 1);
    /* the lock file sits beside the filter, 0600, while held; then goes */
    ck_assert_int_eq(bk_lock_file(file, 0, &lock), BK_OK);
    struct stat st;
    ck_assert_int_eq(stat(path_of(".f.bkf.lock"), &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
    bk_unlock_file(lock);
    ck_assert_int_eq(access(path_of(".f.bkf.lock"), F_OK), -1);
    free(file);
    free(in);
}
END_TEST

/* A writable mapping whose file another writer replaced: sync and close
 * fail instead of writing into the orphaned inode; the keys are still in
 * the filter and can be saved. */
START_TEST(mapping_notices_a_replaced_file)
{
    char *file = strdup(path_of("m.bkf"));
    bk_filter *f = tu_filter("capacity=1000");
    ck_assert_int_eq(bk_save(f, file), BK_OK);
    bk_filter *m;
    ck_assert_int_eq(bk_open_mmap(file, BK_MAP_WRITE, &m), BK_OK);
    ck_assert_int_eq(bk_add(m, "mapped", 6), 1);
    ck_assert_int_eq(bk_sync(m), BK_OK);
    ck_assert_int_eq(bk_save(f, file), BK_OK); /* another writer replaces it */
    ck_assert_int_eq(bk_add(m, "after", 5), 1);
    ck_assert_int_eq(bk_sync(m), BK_EIO);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "replaced or removed"));
    char *elsewhere = path_of("saved.bkf");
    ck_assert_int_eq(bk_save(m, elsewhere), BK_OK);
    ck_assert_int_eq(bk_close(m), BK_EIO);
    bk_filter *g;
    ck_assert_int_eq(bk_load(elsewhere, &g), BK_OK);
    ck_assert_int_eq(bk_contains(g, "after", 5), 1);
    bk_free(g);
    /* removed, not replaced: the same */
    ck_assert_int_eq(bk_open_mmap(file, BK_MAP_WRITE, &m), BK_OK);
    ck_assert_int_eq(unlink(file), 0);
    ck_assert_int_eq(bk_close(m), BK_EIO);
    /* and a mapping left alone closes cleanly */
    ck_assert_int_eq(bk_save(f, file), BK_OK);
    ck_assert_int_eq(bk_open_mmap(file, BK_MAP_WRITE, &m), BK_OK);
    ck_assert_int_eq(bk_add(m, "x", 1), 1);
    ck_assert_int_eq(bk_close(m), BK_OK);
    bk_free(f);
    free(file);
}
END_TEST

/* A scalable chain whose growth fails mid-batch (the shim refuses the
 * payload mapping of the slice that would hold key 146,001): dedup prints
 * every line the filter took before the failure, exits 3, and saves them in
 * the state; a second run without the fault prints exactly the other lines.
 * No line is printed twice or never. */
START_TEST(lines_printed_before_a_failure_are_in_the_state)
{
    enum { KEYS = 160000 };
    if (access(BK_FAULT_SHIM, R_OK) != 0)
        ck_abort_msg("fault shim %s not built", BK_FAULT_SHIM);
    char *state = strdup(path_of("s.bkf"));
    char *in = strdup(lines_file("in.txt", "u", 0, KEYS));
    /* slices of 2,000 x 8^i keys: the fourth (1,024,000 keys, 3.3 MB) is
     * the first large enough to be mapped (src/common/alloc.c), and its
     * mapping (size + 2 MiB of alignment) passes 3 MiB */
    g_mmap_min = "3145728";
    const int code = wait_code(spawn(in, "first",
                                     (char *[]){"dedup", "--state", state, "--capacity", "2000",
                                                "--growth", "8", "--layout", "classic", NULL}));
    g_mmap_min = NULL;
    size_t outlen, errlen;
    char *out = slurp("first.out", &outlen), *err = slurp("first.err", &errlen);
    const size_t printed = count_lines(out);
    fprintf(stderr, "[dedup failure mid-batch] exit %d, %zu of %d lines printed: %s", code, printed,
            KEYS, err);
    ck_assert_int_eq(code, 3);
    ck_assert_uint_gt(printed, 1000);
    ck_assert_uint_lt(printed, KEYS);
    free(err);
    /* every printed line is in the state */
    FILE *fp = fopen(path_of("printed.txt"), "w");
    fwrite(out, 1, outlen, fp);
    fclose(fp);
    ck_assert_int_eq(
        wait_code(spawn(path_of("printed.txt"), "chk", (char *[]){"check", state, "-v", NULL})), 1);
    /* the second run prints the rest: together each line once (barring the
     * filter's rate, 1e-4 here: allow a handful) */
    ck_assert_int_eq(wait_code(spawn(in, "second", (char *[]){"dedup", "--state", state, NULL})),
                     0);
    size_t len2;
    char *out2 = slurp("second.out", &len2);
    const size_t second = count_lines(out2);
    fprintf(stderr, "[dedup failure mid-batch] second run printed %zu, together %zu of %d\n",
            second, printed + second, KEYS);
    ck_assert_uint_le(printed + second, KEYS);
    ck_assert_uint_ge(printed + second, KEYS - 20);
    free(out2);
    free(out);
    free(state);
    free(in);
}
END_TEST

/* remove: absent lines are counted, exit 1; the docs' warning holds: a
 * never-added key that is a false positive decrements other keys. */
START_TEST(remove_reports_absent_lines)
{
    char *file = strdup(path_of("c.bkf"));
    ck_assert_int_eq(wait_code(spawn(NULL, "c",
                                     (char *[]){"create", file, "--variant", "counting",
                                                "--capacity", "1000", NULL})),
                     0);
    char *added = strdup(lines_file("added.txt", "a", 0, 100));
    ck_assert_int_eq(wait_code(spawn(added, "add", (char *[]){"add", file, NULL})), 0);
    char *mixed = strdup(lines_file("mixed.txt", "a", 90, 110)); /* 10 added, 10 not */
    ck_assert_int_eq(wait_code(spawn(mixed, "rm", (char *[]){"remove", file, NULL})), 1);
    size_t len;
    char *err = slurp("rm.err", &len);
    ck_assert_msg(strstr(err, "10 of 20 lines were not in the filter"), "%s", err);
    free(err);
    char *first = strdup(lines_file("first.txt", "a", 0, 50));
    ck_assert_int_eq(wait_code(spawn(first, "rm2", (char *[]){"remove", file, NULL})), 0);
    free(file);
    free(added);
    free(mixed);
    free(first);
}
END_TEST

/* Saving respects the file system: through a symbolic link to its target
 * (the link stays), a dangling link creates its target, anything that is
 * not a regular file is refused untouched, an existing file keeps its
 * owner, group and mode, and temporaries of dead writers are swept while a
 * live writer's is left alone. */
START_TEST(saving_respects_the_file_system)
{
    bk_filter *f = tu_filter("capacity=1000");
    ck_assert_int_eq(bk_add(f, "first", 5), 1);
    char *target = strdup(path_of("target.bkf")), *link = strdup(path_of("link.bkf"));
    ck_assert_int_eq(bk_save(f, target), BK_OK);
    ck_assert_int_eq(symlink("target.bkf", link), 0); /* relative, as users make them */
    ck_assert_int_eq(bk_add(f, "second", 6), 1);
    ck_assert_int_eq(bk_save(f, link), BK_OK);
    struct stat st;
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode)); /* the link stays a link */
    bk_filter *g;
    ck_assert_int_eq(bk_load(target, &g), BK_OK);
    ck_assert_int_eq(bk_contains(g, "second", 6), 1); /* and its target got the key */
    bk_free(g);
    /* a dangling link: its target is created, the link kept */
    char *dangling = strdup(path_of("dangling.bkf"));
    ck_assert_int_eq(symlink("made-by-save.bkf", dangling), 0);
    ck_assert_int_eq(bk_save(f, dangling), BK_OK);
    ck_assert_int_eq(lstat(dangling, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    ck_assert_int_eq(stat(path_of("made-by-save.bkf"), &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    /* not regular files: refused, left as they are */
    char *fifo = strdup(path_of("fifo")), *dirp = strdup(path_of("dir")),
         *to_fifo = strdup(path_of("to-fifo.bkf"));
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(mkdir(dirp, 0700), 0);
    ck_assert_int_eq(symlink("fifo", to_fifo), 0);
    const char *refused[] = {fifo, dirp, to_fifo};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(bk_save(f, refused[i]), BK_EIO);
        ck_assert_ptr_nonnull(strstr(bk_last_error(), "not a regular file"));
    }
    ck_assert_int_eq(stat(fifo, &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));
    if (geteuid() == 0) { /* a device node of our own (a copy of /dev/null's numbers) */
        char *dev = path_of("dev");
        ck_assert_int_eq(mknod(dev, S_IFCHR | 0600, makedev(1, 3)), 0);
        ck_assert_int_eq(bk_save(f, dev), BK_EIO);
        ck_assert_int_eq(stat(dev, &st), 0);
        ck_assert(S_ISCHR(st.st_mode));
    }
    /* owner, group and mode of an existing file are kept */
    ck_assert_int_eq(chmod(target, 0640), 0);
    const int root = geteuid() == 0;
    if (root)
        ck_assert_int_eq(chown(target, 65534, 65534), 0);
    ck_assert_int_eq(bk_save(f, target), BK_OK);
    ck_assert_int_eq(stat(target, &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0640);
    if (root) {
        ck_assert_uint_eq(st.st_uid, 65534);
        ck_assert_uint_eq(st.st_gid, 65534);
    }
    /* a new file is 0600 (it holds the hash key) */
    ck_assert_int_eq(bk_save(f, path_of("new.bkf")), BK_OK);
    ck_assert_int_eq(stat(path_of("new.bkf"), &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0600);
    /* temporaries: a dead writer's is swept, a live one's stays */
    char *dead = strdup(path_of(".target.bkf.tmp.Dead01")),
         *live = strdup(path_of(".target.bkf.tmp.Live01"));
    tu_write_file(dead, (const uint8_t *)"partial", 7);
    tu_write_file(live, (const uint8_t *)"partial", 7);
    int ready[2], go[2];
    ck_assert_int_eq(pipe(ready), 0);
    ck_assert_int_eq(pipe(go), 0);
    const pid_t writer = fork();
    ck_assert_int_ge(writer, 0);
    if (writer == 0) { /* a writer still at work: holds its temporary's lock */
        const int fd = open(live, O_RDWR);
        char c = 'x';
        if (fd < 0 || flock(fd, LOCK_EX) != 0 || write(ready[1], &c, 1) != 1 ||
            read(go[0], &c, 1) != 1)
            _exit(1);
        _exit(0);
    }
    char c;
    ck_assert_int_eq(read(ready[0], &c, 1), 1);
    ck_assert_int_eq(bk_save(f, link), BK_OK); /* the same target, through the link */
    ck_assert_int_eq(access(dead, F_OK), -1);
    ck_assert_int_eq(access(live, F_OK), 0);
    ck_assert_int_eq(write(go[1], "g", 1), 1);
    ck_assert_int_eq(wait_code(writer), 0);
    bk_free(f);
    free(target);
    free(link);
    free(dangling);
    free(fifo);
    free(dirp);
    free(to_fifo);
    free(dead);
    free(live);
}
END_TEST

/* The exit code of pid, or -1 if it has not exited within `seconds` (it is
 * then killed): a command that blocks forever fails the test quickly. */
static int wait_code_within(pid_t pid, int seconds)
{
    for (int i = 0; i < seconds * 100; i++) {
        int status;
        const pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        struct timespec ms = {0, 10 * 1000 * 1000};
        nanosleep(&ms, NULL); /* polling for an exit, bounded */
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

/* No hang, right exit codes: a FIFO where a filter file is expected is
 * refused at once (it blocked in open() before); output that cannot be
 * written is exit 3 for every command; a state that cannot be written
 * fails before any input is read or printed. */
START_TEST(no_hang_and_right_exit_codes)
{
    char *fifo = strdup(path_of("pipe.bkf"));
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    char *const cmds[][6] = {{"info", fifo, NULL},
                             {"check", fifo, NULL},
                             {"merge", path_of("out.bkf"), fifo, fifo, NULL},
                             {"dedup", "--state", fifo, NULL},
                             {"add", fifo, NULL},
                             {"create", path_of("c.bkf"), "--config-file", fifo, NULL}};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        const int code = wait_code_within(spawn(NULL, "fifo", cmds[i]), 10);
        size_t len;
        char *err = slurp("fifo.err", &len);
        ck_assert_msg(code == 3, "%s on a FIFO: exit %d (-1: still blocked): %s", cmds[i][0], code,
                      err);
        ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
        free(err);
    }
    /* stdout that cannot be written: exit 3, for reports and help alike */
    ck_assert_int_eq(wait_code(spawn(NULL, "mk", (char *[]){"create", path_of("i.bkf"), NULL})), 0);
    char *const full[][6] = {{"info", path_of("i.bkf"), NULL},
                             {"info", path_of("i.bkf"), "--json", NULL},
                             {"plan", "--capacity", "1000", "--fpr", "0.01", NULL},
                             {"--help", NULL},
                             {"--version", NULL},
                             {"add", "--help", NULL}};
    for (size_t i = 0; i < sizeof full / sizeof *full; i++) {
        const pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            const int o = open("/dev/full", O_WRONLY), e = open("/dev/null", O_WRONLY);
            if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
                _exit(99);
            char *args[8] = {(char *)BK_CLI_PATH};
            for (int k = 0; k < 6 && full[i][k]; k++)
                args[k + 1] = full[i][k];
            execv(args[0], args);
            _exit(98);
        }
        ck_assert_msg(wait_code(pid) == 3, "%s %s to /dev/full did not exit 3", full[i][0],
                      full[i][1] ? full[i][1] : "");
    }
    /* a state in a missing directory: refused before reading or printing */
    char *in = strdup(lines_file("in.txt", "x", 0, 1000));
    ck_assert_int_eq(
        wait_code(
            spawn(in, "nodir", (char *[]){"dedup", "--state", path_of("no/dir/s.bkf"), NULL})),
        3);
    size_t len;
    char *out = slurp("nodir.out", &len);
    ck_assert_uint_eq(len, 0);
    free(out);
    free(in);
    free(fifo);
}
END_TEST

/* Issue 16's smaller defects, each tried: a wrong saturated count is named
 * as such; a path appears once in a message; info --json stays valid JSON
 * for any file name; repeated experiment keys, a directory as keys_file and
 * a NUL byte in an experiment file get messages that say so. */
START_TEST(smaller_defects_are_fixed)
{
    /* a counting file whose header claims one saturated counter too many,
     * with valid checksums: the message names saturated counters */
    bk_filter *f = tu_filter("variant=counting capacity=100 fpr=0.01");
    for (int i = 0; i < 20; i++)
        ck_assert_int_ge(bk_add(f, "same", 4), 0); /* saturates its counters */
    char *file = strdup(path_of("sat.bkf"));
    ck_assert_int_eq(bk_save(f, file), BK_OK);
    size_t len;
    uint8_t *bytes = tu_read_file(file, &len);
    bk_file_header h;
    ck_assert_int_eq(bk_file_decode_fixed(bytes, len, &h), BK_OK);
    ck_assert_int_eq(bk_file_decode(bytes, len, &h), BK_OK);
    ck_assert_uint_gt(h.slices[0].saturated, 0);
    h.slices[0].saturated--;
    bk_file_encode(&h, bytes);
    tu_write_file(file, bytes, len);
    free(bytes);
    bk_filter *g;
    ck_assert_int_eq(bk_load(file, &g), BK_ECORRUPT);
    ck_assert_msg(strstr(bk_last_error(), "saturated counters"), "%s", bk_last_error());
    bk_free(f);
    /* the path once: "info x: not a regular file", not "x: x: ..." */
    ck_assert_int_eq(wait_code(spawn(NULL, "dir", (char *[]){"info", g_dir, NULL})), 3);
    char *err = slurp("dir.err", &len);
    char twice[4200];
    snprintf(twice, sizeof twice, "%s: %s", g_dir, g_dir);
    ck_assert_msg(!strstr(err, twice), "path twice: %s", err);
    free(err);
    /* info --json on a file whose name is not UTF-8 and holds a quote and a
     * control character: still JSON (checked by the strictest reader here:
     * every byte outside ASCII is a valid UTF-8 sequence) */
    char *odd = strdup(path_of("we\xffird\"\x01.bkf"));
    ck_assert_int_eq(wait_code(spawn(NULL, "mk", (char *[]){"create", odd, NULL})), 0);
    ck_assert_int_eq(wait_code(spawn(NULL, "json", (char *[]){"info", odd, "--json", NULL})), 0);
    char *out = slurp("json.out", &len);
    ck_assert_ptr_null(memchr(out, 0xff, len));
    ck_assert_ptr_null(memchr(out, 0x01, len));
    ck_assert_ptr_nonnull(strstr(out, "\\ufffdird\\\"\\u0001.bkf\""));
    free(out);
    /* experiment files */
    static const char with_nul[] = "[workload]\nkeys = 1\0\n0\na: capacity=100\n";
    const struct {
        const char *text, *says;
        size_t len;
    } exps[] = {{"[workload]\nkeys = 100\nkeys = 200\na: capacity=100\n", "given twice", 0},
                {"[workload]\nkeys = 100\nkeys_file = x\na: capacity=100\n", "not both", 0},
                {"[workload]\nkeys_file = /\nprobes = 10\na: capacity=100\n", "Is a directory", 0},
                {with_nul, "NUL byte", sizeof with_nul - 1}};
    for (int i = 0; i < 4; i++) {
        char *exp = path_of("e.exp");
        tu_write_file(exp, (const uint8_t *)exps[i].text,
                      exps[i].len ? exps[i].len : strlen(exps[i].text));
        const int code =
            wait_code(spawn(NULL, "exp", (char *[]){"experiment", "--config-file", exp, NULL}));
        err = slurp("exp.err", &len);
        ck_assert_msg(code == 2 || code == 3, "exp %d: exit %d", i, code);
        ck_assert_msg(strstr(err, exps[i].says), "exp %d: '%s' lacks '%s'", i, err, exps[i].says);
        free(err);
    }
    free(odd);
    free(file);
}
END_TEST

Suite *writers_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("writers", "writers", &tc);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, concurrent_writers_lose_no_key);
    tcase_add_test(tc, no_wait_names_the_holder);
    tcase_add_test(tc, mapping_notices_a_replaced_file);
    tcase_add_test(tc, lines_printed_before_a_failure_are_in_the_state);
    tcase_add_test(tc, remove_reports_absent_lines);
    tcase_add_test(tc, saving_respects_the_file_system);
    tcase_add_test(tc, no_hang_and_right_exit_codes);
    tcase_add_test(tc, smaller_defects_are_fixed);
    return s;
}
