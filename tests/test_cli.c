/*
 * test_cli.c - the bloomkit command, driven as a user drives it: every
 * command, the flags, the error paths and exit codes, signals, and a two-run
 * crawl with --state. The binary under test is BK_CLI_PATH (set by the
 * Makefile to the build's bloomkit).
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "suites.h"
#include "testutil.h"

#ifndef BK_CLI_PATH
#define BK_CLI_PATH "build/bloomkit"
#endif

typedef struct run_result {
    int code; /* exit status, or 128 + signal */
    char *out, *err;
    size_t outlen, errlen;
} run_result;

static char *g_dir; /* this test's scratch directory */

static char *in_dir(const char *name)
{
    static char paths[32][4096];
    static int next;
    char *p = paths[next++ % 32];
    snprintf(p, 4096, "%s/%s", g_dir, name);
    return p;
}

static void setup(void)
{
    g_dir = tu_tmpdir();
}
static void teardown(void)
{
    tu_rmtree(g_dir);
}

/* Run bloomkit with argv (NULL-terminated) and `input` on stdin; optionally
 * with a file-size limit. */
static run_result run_limited(const char *input, size_t inlen, rlim_t fsize, char *const argv[])
{
    char inp[4096], outp[4096], errp[4096];
    snprintf(inp, sizeof inp, "%s/.stdin", g_dir);
    snprintf(outp, sizeof outp, "%s/.stdout", g_dir);
    snprintf(errp, sizeof errp, "%s/.stderr", g_dir);
    tu_write_file(inp, (const uint8_t *)(input ? input : ""), input ? inlen : 0);
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const int i = open(inp, O_RDONLY), o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600),
                  e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (i < 0 || o < 0 || e < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(99);
        if (fsize) {
            const struct rlimit lim = {fsize, fsize};
            setrlimit(RLIMIT_FSIZE, &lim);
        }
        /* BK_CLI_WRAP="valgrind --error-exitcode=97 ...": run the command
         * under a checker (make check-valgrind); its words come first. */
        char *args[96] = {NULL};
        int n = 0;
        char *wrap = getenv("BK_CLI_WRAP") ? strdup(getenv("BK_CLI_WRAP")) : NULL;
        for (char *tok = wrap ? strtok(wrap, " ") : NULL; tok && n < 30; tok = strtok(NULL, " "))
            args[n++] = tok;
        args[n++] = (char *)BK_CLI_PATH;
        for (int k = 0; k < 62 && argv[k]; k++)
            args[n++] = argv[k];
        execvp(args[0], args);
        _exit(98);
    }
    int status;
    waitpid(pid, &status, 0);
    run_result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = (char *)tu_read_file(outp, &r.outlen);
    r.out[r.outlen] = '\0';
    r.err = (char *)tu_read_file(errp, &r.errlen);
    r.err[r.errlen] = '\0';
    unlink(inp);
    unlink(outp);
    unlink(errp);
    return r;
}

static size_t len_of(const char *s)
{
    return s ? strlen(s) : 0;
}

#define RUN(input, ...) run_limited((input), len_of(input), 0, (char *[]){__VA_ARGS__, NULL})

static void done(run_result *r)
{
    free(r->out);
    free(r->err);
}

/* The exit code, and exactly one line on stderr when failing. */
static void expect_code(run_result r, int code, const char *what)
{
    ck_assert_msg(r.code == code, "%s: exit %d, expected %d; stderr: %s", what, r.code, code,
                  r.err);
    if (code >= 2) {
        ck_assert_msg(r.errlen > 0 && strchr(r.err, '\n') == r.err + r.errlen - 1,
                      "%s: stderr is not one line: '%s'", what, r.err);
        ck_assert_msg(r.outlen == 0, "%s: wrote to stdout on error", what);
    }
    done(&r);
}

/* The exit code and exactly this output. */
static void expect_out(run_result r, int code, const char *want)
{
    ck_assert_msg(r.code == code, "exit %d, expected %d; stderr: %s", r.code, code, r.err);
    ck_assert_str_eq(r.out, want);
    done(&r);
}

/* A clock for bk_set_clock: the time *ctx holds. */
static int64_t fixed_clock(void *ctx)
{
    return *(const int64_t *)ctx;
}

START_TEST(every_command_has_help)
{
    const char *cmds[] = {"plan",  "create", "add",   "check",    "remove",
                          "dedup", "info",   "merge", "intersect"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        run_result r = RUN(NULL, (char *)cmds[i], "--help");
        ck_assert_int_eq(r.code, 0);
        ck_assert_msg(strstr(r.out, "usage: bloomkit") != NULL, "%s --help: %s", cmds[i], r.out);
        done(&r);
    }
    run_result r = RUN(NULL, "--help");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "dedup"));
    done(&r);
    expect_code(RUN(NULL, "frobnicate"), 2, "unknown command");
}
END_TEST

START_TEST(plan_reports_the_worked_example)
{
    run_result r = RUN(NULL, "plan", "--capacity", "1000000", "--fpr", "0.0001");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "19170117"));
    ck_assert_ptr_nonnull(strstr(r.out, "2.29 MiB"));
    ck_assert_ptr_nonnull(strstr(r.out, "hashes (k)    13"));
    done(&r);
    r = RUN(NULL, "plan", "--json", "--fpr=0.0001", "--capacity=1000000");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\"bits\":19170117"));
    ck_assert_ptr_nonnull(strstr(r.out, "\"m\":19170117"));
    ck_assert_ptr_nonnull(strstr(r.out, "\"k\":13"));
    ck_assert(r.out[0] == '{' && r.out[r.outlen - 2] == '}' && r.out[r.outlen - 1] == '\n');
    done(&r);
    /* cells that are not bits are named for what they are (issue 44 point 7) */
    r = RUN(NULL, "plan", "--capacity", "5000", "--fpr", "0.1", "--variant", "cuckoo",
            "--fingerprint", "4");
    ck_assert_int_eq(r.code, 0);
    ck_assert_msg(strstr(r.out, "slots of 4-bit fingerprints") && !strstr(r.out, "bits (m)"), "%s",
                  r.out);
    done(&r);
    r = RUN(NULL, "plan", "--capacity", "5000", "--fpr", "0.1", "--variant", "counting");
    ck_assert_msg(strstr(r.out, " counters\n") && !strstr(r.out, "bits (m)"), "%s", r.out);
    done(&r);
    expect_code(RUN(NULL, "plan", "--capacity", "0", "--fpr", "0.1"), 2, "plan capacity 0");
    expect_code(RUN(NULL, "plan", "--capacity", "10"), 2, "plan without fpr");
    expect_code(RUN(NULL, "plan", "--capacity", "10", "--fpr", "nan"), 2, "plan fpr nan");
}
END_TEST

/* The calculator's three questions, and a pinned filter made, used and
 * shown by the command; contradicting keys are usage errors naming both. */
START_TEST(plan_and_create_take_pinned_bits_and_hashes)
{
    run_result r = RUN(NULL, "plan", "--bits", "1073741824", "--hashes", "6", "--capacity",
                       "100000000", "--json");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\"bits\":1073741824"));
    ck_assert_ptr_nonnull(strstr(r.out, "\"k\":6"));
    ck_assert_ptr_nonnull(strstr(r.out, "\"fpr\":null")); /* no target: a pinned rate */
    char want[64];
    snprintf(want, sizeof want, "\"expected_fpr\":%.6g",
             bk_rate_after(UINT64_C(1) << 30, 6, 100000000));
    ck_assert_msg(strstr(r.out, want), "%s lacks %s", r.out, want);
    done(&r);
    r = RUN(NULL, "plan", "--bits", "1073741824", "--fpr", "0.001");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "74681")); /* m (ln 2)^2 / ln 1000 = 74,681,xxx */
    ck_assert_ptr_nonnull(strstr(r.out, "hashes (k)    10"));
    done(&r);
    r = RUN(NULL, "plan", "--bits", "20000000", "--capacity", "1000000");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "hashes (k)    14"));
    done(&r);
    expect_code(RUN(NULL, "plan", "--bits", "1000"), 2, "plan --bits alone");
    expect_code(RUN(NULL, "plan", "--bits", "1000", "--fpr", "0.01", "--hashes", "3"), 2,
                "plan fit with --hashes");
    expect_code(RUN(NULL, "plan", "--bits", "1", "--fpr", "0.000001"), 2, "not even one key");
    char *pf = in_dir("pinned.bkf");
    r = RUN(NULL, "create", pf, "--bits", "65536", "--hashes", "5", "--fpr", "0.01");
    ck_assert_int_eq(r.code, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "fpr and bits contradict"));
    done(&r);
    r = RUN(NULL, "create", pf, "--config", "fpr=0.01", "--bits", "65536");
    ck_assert_int_eq(r.code, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "fpr and bits contradict"));
    done(&r);
    expect_code(RUN(NULL, "create", pf, "--config", "layout=blocked bits=1000"), 2,
                "blocked bits that are not whole blocks");
    expect_code(RUN(NULL, "create", pf, "--variant", "scalable", "--bits", "4096"), 2,
                "bits for a scalable chain");
    r = RUN(NULL, "create", pf, "--bits", "65536", "--hashes", "5", "--capacity", "2000");
    ck_assert_int_eq(r.code, 0);
    done(&r);
    r = RUN("a\nb\na\nc\n", "dedup", "--state", pf);
    ck_assert_int_eq(r.code, 0);
    ck_assert_str_eq(r.out, "a\nb\nc\n");
    done(&r);
    /* the state's pins agree with the same text, and not with others */
    r = RUN("a\nd\n", "dedup", "--state", pf, "--config", "bits=65536 hashes=5 capacity=2000");
    ck_assert_int_eq(r.code, 0);
    ck_assert_str_eq(r.out, "d\n");
    done(&r);
    r = RUN("e\n", "dedup", "--state", pf, "--config", "bits=65536 hashes=6 capacity=2000");
    ck_assert_int_eq(r.code, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "hashes"));
    done(&r);
    r = RUN(NULL, "info", pf, "--json");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\"bits\":65536"));
    ck_assert_ptr_nonnull(strstr(r.out, "\"k\":5"));
    done(&r);
}
END_TEST

/* --canonical-urls: spellings of one URL are one key, the line printed is
 * the first spelling as it was; lines that are not URLs are their own keys
 * and never stop the stream; add, check and remove agree. */
START_TEST(canonical_urls_decide_on_one_key_and_print_the_line)
{
    const char *in = "http://Example.com/a?b=2&a=1\n"
                     "HTTP://example.com:80/a?a=1&b=2#top\n"
                     "not a url\n"
                     "http://example.com/./a?a=%31&b=2\r\n"
                     "http://example.com:port/x\n"
                     "not a url\n"
                     "http://example.com:port/x\n"
                     "https://example.com/a?a=1&b=2\n";
    const char *want = "http://Example.com/a?b=2&a=1\n"
                       "not a url\n"
                       "http://example.com:port/x\n"
                       "https://example.com/a?a=1&b=2\n";
    for (int threads = 1; threads <= 2; threads++) {
        char t[16];
        snprintf(t, sizeof t, "%d", threads);
        run_result r = RUN(in, "dedup", "--canonical-urls", "--threads", t);
        ck_assert_int_eq(r.code, 0);
        ck_assert_str_eq(r.out, want);
        done(&r);
    }
    run_result r = RUN(in, "dedup"); /* without it, every spelling is new */
    ck_assert_int_eq(r.code, 0);
    ck_assert_uint_eq(r.outlen,
                      strlen(in) - strlen("not a url\n") - strlen("http://example.com:port/x\n"));
    done(&r);
    r = RUN("http://e.com/?b=1&a=2\nhttp://e.com/?a=2&b=1\n", "dedup", "--canonical-urls",
            "--keep-query-order");
    ck_assert_str_eq(r.out, "http://e.com/?b=1&a=2\nhttp://e.com/?a=2&b=1\n");
    done(&r);
    expect_code(RUN("x\n", "dedup", "--keep-query-order"), 2, "--keep-query-order alone");
    char *cf = in_dir("canon.bkf");
    expect_code(
        RUN(NULL, "create", cf, "--variant", "counting", "--capacity", "1000", "--canonical-urls"),
        0, "create");
    expect_code(RUN("HTTP://Example.com/a/b/../c\n", "add", cf, "--canonical-urls"), 0, "add");
    r = RUN("http://example.com/a/c#x\nhttp://example.com/a/b\n", "check", cf, "--canonical-urls");
    ck_assert_int_eq(r.code, 0);
    ck_assert_str_eq(r.out, "http://example.com/a/c#x\n");
    done(&r);
    expect_code(RUN("http://EXAMPLE.com:80/a/c\n", "remove", cf, "--canonical-urls"), 0,
                "remove by another spelling");
    expect_code(RUN("http://example.com/a/c\n", "check", cf, "--canonical-urls"), 1, "removed");
}
END_TEST

/* The rule is recorded in the filter (input=url or url-keep-query-order):
 * later runs apply it with or without the flag; a flag asking for another
 * rule, or --canonical-urls on a filter of raw lines, is a usage error that
 * names both and changes nothing; create records it too. */
START_TEST(canonical_urls_are_recorded_in_the_filter)
{
    char *sf = in_dir("canon-state.bkf");
    run_result r =
        RUN("http://Example.com/a?b=2&a=1\n", "dedup", "--state", sf, "--canonical-urls");
    ck_assert_int_eq(r.code, 0);
    done(&r);
    r = RUN(NULL, "info", sf);
    ck_assert_msg(strstr(r.out, "input") && strstr(r.out, "url\n"), "%s", r.out);
    done(&r);
    /* no flag: the recorded rule applies */
    expect_out(
        RUN("HTTP://example.com:80/a?a=1&b=2#top\nhttp://example.com/b\n", "dedup", "--state", sf),
        0, "http://example.com/b\n");
    expect_out(RUN("http://EXAMPLE.com/a?a=1&b=2\n", "check", sf), 0,
               "http://EXAMPLE.com/a?a=1&b=2\n");
    size_t before_len, after_len;
    uint8_t *before = tu_read_file(sf, &before_len);
    /* another rule: refused, named, the state unchanged */
    r = RUN("http://example.com/c\n", "dedup", "--state", sf, "--canonical-urls",
            "--keep-query-order");
    ck_assert_msg(r.code == 2 && strstr(r.err, "input=url") && strstr(r.err, "--keep-query-order"),
                  "%d %s", r.code, r.err);
    done(&r);
    expect_code(RUN("http://example.com/c\n", "add", sf, "--canonical-urls", "--keep-query-order"),
                2, "add with another rule");
    uint8_t *after = tu_read_file(sf, &after_len);
    ck_assert(before_len == after_len && memcmp(before, after, before_len) == 0);
    free(before);
    free(after);
    /* a filter of raw lines: --canonical-urls would look up other keys */
    char *rf = in_dir("canon-raw.bkf");
    expect_code(RUN("http://Example.com/\n", "dedup", "--state", rf), 0, "raw dedup");
    r = RUN("http://example.com/\n", "check", rf, "--canonical-urls");
    ck_assert_msg(r.code == 2 && strstr(r.err, "input=raw"), "%d %s", r.code, r.err);
    done(&r);
    expect_code(RUN("http://example.com/\n", "dedup", "--state", rf, "--canonical-urls"), 2,
                "raw state with the flag");
    /* created with the rule that keeps the query's order */
    char *kf = in_dir("canon-keep.bkf");
    expect_code(RUN(NULL, "create", kf, "--canonical-urls", "--keep-query-order"), 0, "create");
    expect_code(RUN("http://e.com/?b=1&a=2\n", "add", kf), 0, "add by the recorded rule");
    expect_out(RUN("HTTP://E.com/?b=1&a=2\nhttp://e.com/?a=2&b=1\n", "check", kf), 0,
               "HTTP://E.com/?b=1&a=2\n");
    expect_code(RUN("x\n", "check", kf, "--canonical-urls"), 2, "the sorting rule asked");
    /* the flag and a stated input that disagree */
    char *cf = in_dir("canon-conflict.bkf");
    expect_code(RUN(NULL, "create", cf, "--canonical-urls", "--input", "raw"), 2,
                "flag and --input disagree");
    ck_assert_int_ne(access(cf, F_OK), 0);
}
END_TEST

/* CRLF, empty lines, a last line without newline, repeats: exact bytes. */
START_TEST(dedup_streams_first_sightings_in_order)
{
    const char *in = "a\nb\r\na\nb\n\nc\n\n\xff\xfe\nlast";
    run_result r = RUN(in, "dedup");
    ck_assert_int_eq(r.code, 0);
    const char *want = "a\nb\r\n\nc\n\xff\xfe\nlast";
    ck_assert_uint_eq(r.outlen, strlen(want));
    ck_assert(memcmp(r.out, want, r.outlen) == 0);
    ck_assert_uint_eq(r.errlen, 0); /* not a terminator: no progress, nothing else */
    done(&r);
    /* Named inputs, '-' for stdin, options after arguments. */
    tu_write_file(in_dir("one.txt"), (const uint8_t *)"x\ny\n", 4);
    r = RUN("y\nz\n", "dedup", in_dir("one.txt"), "-", "--quiet");
    ck_assert_int_eq(r.code, 0);
    ck_assert_str_eq(r.out, "x\ny\nz\n");
    done(&r);
    expect_code(RUN(NULL, "dedup", in_dir("missing.txt")), 3, "missing input");
}
END_TEST

/* A chain for regular files starts at the records they hold (one slice
 * probed a key, not a chain grown to them); a capacity given wins. */
/* The configuration of the filter file at path. */
static bk_config saved_config(const char *path)
{
    bk_filter *f;
    ck_assert_int_eq(bk_load(path, &f), BK_OK);
    bk_config cfg;
    ck_assert_int_eq(bk_get_config(f, &cfg), BK_OK);
    bk_free(f);
    return cfg;
}

START_TEST(dedup_sizes_its_chain_from_regular_files)
{
    enum { LINES = 1100000 }; /* past the default capacity of 10^6 */
    char *text = malloc((size_t)LINES * 12), *p = text;
    ck_assert_ptr_nonnull(text);
    for (unsigned i = 0; i < LINES; i++)
        p += sprintf(p, "r%u\n", i);
    tu_write_file(in_dir("many.txt"), (const uint8_t *)text, (size_t)(p - text));
    free(text);
    const struct {
        const char *capacity; /* NULL: the default */
        unsigned long long at_least, at_most;
        unsigned slices;
    } cases[] = {{NULL, LINES, LINES + LINES / 10, 1}, {"5000", 5000, 5000, 2}};
    for (size_t c = 0; c < 2; c++) {
        char *state = in_dir(c ? "given.bkf" : "sized.bkf");
        run_result r = cases[c].capacity
                           ? RUN(NULL, "dedup", "--quiet", "--state", state, "--capacity",
                                 (char *)cases[c].capacity, in_dir("many.txt"))
                           : RUN(NULL, "dedup", "--quiet", "--state", state, in_dir("many.txt"));
        ck_assert_msg(r.code == 0, "%s", r.err);
        done(&r);
        bk_filter *f;
        ck_assert_int_eq(bk_load(state, &f), BK_OK);
        bk_config cfg;
        bk_get_config(f, &cfg);
        bk_filter_stats st;
        bk_stats(f, &st);
        ck_assert_uint_ge(cfg.capacity, cases[c].at_least);
        ck_assert_uint_le(cfg.capacity, cases[c].at_most);
        ck_assert_uint_ge(st.keys, LINES - LINES / 1000); /* all but false positives */
        ck_assert_uint_ge(st.slices, cases[c].slices);
        if (!cases[c].capacity)
            ck_assert_uint_eq(st.slices, 1);
        ck_assert_double_eq(cfg.tightening, 0.5); /* a count known: its first slice holds it */
        bk_free(f);
    }
    /* no count known (an input that is not a regular file): the expandable
     * filter, each doubling's adds 0.85 of the last's rate; asked for a
     * chain (--layout), a chain planned for growth, each slice 0.85 of the
     * last's rate */
    static const struct {
        const char *file, *flag, *value;
        bk_variant variant;
    } piped[] = {{"piped.bkf", NULL, NULL, BK_VARIANT_EXPANDABLE},
                 {"chain.bkf", "--layout", "blocked", BK_VARIANT_SCALABLE},
                 {"classic.bkf", "--variant", "scalable", BK_VARIANT_SCALABLE}};
    for (size_t c = 0; c < sizeof piped / sizeof *piped; c++) {
        run_result r =
            piped[c].flag
                ? RUN(NULL, "dedup", "--quiet", "--state", in_dir(piped[c].file),
                      (char *)piped[c].flag, (char *)piped[c].value, "/dev/null")
                : RUN(NULL, "dedup", "--quiet", "--state", in_dir(piped[c].file), "/dev/null");
        ck_assert_msg(r.code == 0, "%s", r.err);
        done(&r);
        const bk_config cfg = saved_config(in_dir(piped[c].file));
        ck_assert_int_eq(cfg.variant, piped[c].variant);
        ck_assert_double_eq(cfg.tightening, 0.85);
        ck_assert_uint_eq(cfg.capacity, 1000000);
        ck_assert_double_eq(cfg.fpr, 0.0001);
    }
    /* the expandable filter asked for with a count: made so (it has no
     * layout: the chain's blocked one is not laid over it) */
    run_result r = RUN(NULL, "dedup", "--quiet", "--state", in_dir("asked.bkf"), "--variant",
                       "expandable", "--capacity", "5000", "/dev/null");
    ck_assert_msg(r.code == 0, "%s", r.err);
    done(&r);
    const bk_config asked = saved_config(in_dir("asked.bkf"));
    ck_assert_int_eq(asked.variant, BK_VARIANT_EXPANDABLE);
    ck_assert_uint_eq(asked.capacity, 5000);
    /* a state file a chain made keeps being one: the saved filter's
     * parameters win over the new default */
    r = RUN(NULL, "dedup", "--quiet", "--state", in_dir("chain.bkf"), "/dev/null");
    ck_assert_msg(r.code == 0, "%s", r.err);
    done(&r);
    ck_assert_int_eq(saved_config(in_dir("chain.bkf")).variant, BK_VARIANT_SCALABLE);
}
END_TEST

START_TEST(dedup_keeps_huge_lines_whole_and_null_records)
{
    const size_t big = 3u << 20; /* 3 MB, longer than every buffer */
    char *in = malloc(2 * big + 8);
    ck_assert_ptr_nonnull(in);
    memset(in, 'u', big);
    in[big] = '\n';
    memcpy(in + big + 1, in, big + 1); /* the same line again */
    in[2 * big + 2] = '\0';
    run_result r = run_limited(in, 2 * big + 2, 0, (char *[]){"dedup", NULL});
    ck_assert_int_eq(r.code, 0);
    ck_assert_uint_eq(r.outlen, big + 1);
    ck_assert(memcmp(r.out, in, big + 1) == 0);
    done(&r);
    free(in);
    const char nul_in[] = "p\0q\0p\0a\nb\0";
    r = run_limited(nul_in, sizeof nul_in - 1, 0, (char *[]){"dedup", "--null", NULL});
    ck_assert_int_eq(r.code, 0);
    ck_assert_uint_eq(r.outlen, 8);
    ck_assert(memcmp(r.out, "p\0q\0a\nb\0", 8) == 0);
    done(&r);
}
END_TEST

static char *url_lines(uint64_t from, uint64_t to)
{
    char *buf = malloc((to - from) * 48 + 1), *p = buf;
    ck_assert_ptr_nonnull(buf);
    for (uint64_t i = from; i < to; i++)
        p += sprintf(p, "https://example.org/page/%llu\n", (unsigned long long)i);
    *p = '\0';
    return buf;
}

/* --threads changes the speed only: with the same key, 1, 2 and 4 threads
 * (and the default) write the same bytes, through a scalable chain that
 * grows, with a checkpointing state (whose batches are added in the call)
 * and without (added while the next batch is read). */
START_TEST(dedup_threads_change_nothing)
{
    enum { LINES = 120000 };
    char *in = malloc((size_t)LINES * 48 + 1), *p = in;
    ck_assert_ptr_nonnull(in);
    uint64_t seed = tu_seed("dedup_threads_change_nothing");
    for (int i = 0; i < LINES; i++) /* repeats of earlier and later lines */
        p += sprintf(p, "https://example.org/p/%llu\n",
                     (unsigned long long)(tu_next(&seed) % (LINES / 2)));
    const size_t inlen = (size_t)(p - in);
    const char *key = "--key=00112233445566778899aabbccddeeff";
    run_result one =
        run_limited(in, inlen, 0,
                    (char *[]){"dedup", "--threads", "1", "--capacity", "2000", (char *)key, NULL});
    ck_assert_int_eq(one.code, 0);
    ck_assert_uint_gt(one.outlen, 0);
    const char *threads[] = {"2", "4", NULL};
    for (int t = 0; t < 3; t++) {
        for (int ck = 0; ck < 2; ck++) {
            char *state = in_dir(ck ? "ck.bkf" : "st.bkf");
            unlink(state);
            char *argv[16] = {"dedup", "--capacity", "2000", (char *)key, "--state", state};
            int n = 6;
            if (threads[t]) {
                argv[n++] = "--threads";
                argv[n++] = (char *)threads[t];
            }
            if (ck) {
                argv[n++] = "--checkpoint";
                argv[n++] = "25000";
            }
            run_result r = run_limited(in, inlen, 0, argv);
            ck_assert_int_eq(r.code, 0);
            ck_assert_msg(r.outlen == one.outlen && memcmp(r.out, one.out, r.outlen) == 0,
                          "--threads %s%s: output differs from --threads 1",
                          threads[t] ? threads[t] : "(default)", ck ? " --checkpoint" : "");
            done(&r);
            r = run_limited(in, inlen, 0,
                            (char *[]){"dedup", "--state", state, "--threads", "2", NULL});
            ck_assert_int_eq(r.code, 0);
            ck_assert_uint_eq(r.outlen, 0); /* every line is in the saved state */
            done(&r);
        }
    }
    done(&one);
    free(in);
    expect_code(RUN("a\n", "dedup", "--threads", "0"), 2, "--threads 0");
    expect_code(RUN("a\n", "dedup", "--threads", "257"), 2, "--threads 257");
    expect_code(RUN("a\n", "dedup", "--threads", "two"), 2, "--threads two");
    expect_code(RUN("a\n", "dedup", "--threads", "2", "--redis", "redis://127.0.0.1:1/x"), 2,
                "--threads with --redis");
}
END_TEST

/* A crawl in two runs: the second prints only what the first never saw. */
START_TEST(two_run_crawl_with_state)
{
    char *state = in_dir("crawl.bkf");
    char *first = url_lines(0, 20000), *second = url_lines(10000, 30000);
    run_result r = RUN(first, "dedup", "--state", state);
    ck_assert_int_eq(r.code, 0);
    ck_assert_str_eq(r.out, first);
    done(&r);
    r = RUN(second, "dedup", "--state", state);
    ck_assert_int_eq(r.code, 0);
    char *want = url_lines(20000, 30000);
    /* Up to counted false positives, the output is exactly the new lines. */
    uint64_t printed = 0, old = 0;
    for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
        printed++;
        unsigned long long n = 0;
        sscanf(line, "https://example.org/page/%llu", &n);
        old += n < 20000;
    }
    fprintf(stderr, "[two-run crawl] second run printed %llu of 10000 new lines\n",
            (unsigned long long)printed);
    ck_assert_uint_eq(old, 0);
    ck_assert_uint_le(printed, 10000);
    ck_assert_uint_ge(printed, 9990); /* fpr 1e-4: a lost line is a counted false positive */
    done(&r);
    struct stat st;
    ck_assert_int_eq(stat(state, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    /* Its parameters win; an explicit conflicting config is an error. */
    expect_code(RUN("x\n", "dedup", "--state", state, "--config", "variant=standard"), 2,
                "conflicting --config");
    r = RUN("x\n", "dedup", "--state", state, "--config", "variant=scalable fpr=0.0001");
    ck_assert_int_eq(r.code, 0);
    done(&r);
    free(first);
    free(second);
    free(want);
}
END_TEST

/* The time the commands run next take as now (BLOOMKIT_NOW, ms since the
 * epoch; negative: the system's clock again), so that a window's tests hold
 * at any machine speed, under valgrind too. */
static void run_at(int64_t ms)
{
    char t[32];
    snprintf(t, sizeof t, "%lld", (long long)ms);
    if (ms < 0)
        unsetenv("BLOOMKIT_NOW");
    else
        setenv("BLOOMKIT_NOW", t, 1);
}

#define SOME_TIME INT64_C(1800000000000) /* 2027-01-15 08:00 UTC, a whole second */

/* dedup --window: a line comes out again once its window has passed, across
 * runs sharing --state (a window of 2 s, the runs at times set by
 * BLOOMKIT_NOW); info lists the generations and plan sizes the window. */
START_TEST(dedup_with_a_window_re_emits_after_it)
{
    char *state = in_dir("window.bkf");
    const char *lines = "a\nb\nc\n";
    run_at(SOME_TIME);
    run_result r = RUN(lines, "dedup", "--window", "2s", "--state", state);
    ck_assert_int_eq(r.code, 0);
    ck_assert_str_eq(r.out, lines);
    done(&r);
    run_at(SOME_TIME + 1900); /* inside the window */
    r = RUN("a\nd\nb\n", "dedup", "--window", "2s", "--state", state);
    ck_assert_int_eq(r.code, 0);
    ck_assert_str_eq(r.out, "d\n");
    done(&r);
    r = RUN(NULL, "info", state);
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "window        2s in 8 spans of 0.25s"));
    ck_assert_ptr_nonnull(strstr(r.out, "generation    "));
    done(&r);
    r = RUN(NULL, "info", "--json", state);
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\"window\":\"2s\""));
    ck_assert_ptr_nonnull(strstr(r.out, "\"generations\":[{\"start\":"));
    done(&r);
    /* a key is kept a window after its add, and forgotten by a window and a
     * span (9/8 of it) after: a, b and c (added at 0) are gone at 2.3 s, d
     * (added at 1.9 s) is still there at 3.85 s and gone at 4.2 s */
    run_at(SOME_TIME + 2300);
    r = RUN("a\nb\nc\nd\n", "check", state);
    ck_assert_str_eq(r.out, "d\n");
    done(&r);
    run_at(SOME_TIME + 3850);
    r = RUN("d\n", "check", state);
    ck_assert_str_eq(r.out, "d\n");
    done(&r);
    run_at(SOME_TIME + 4200);
    r = RUN("a\nb\nc\nd\n", "dedup", "--window", "2s", "--state", state);
    ck_assert_int_eq(r.code, 0);
    ck_assert_str_eq(r.out, "a\nb\nc\nd\n");
    done(&r);
    /* a time that is not one */
    const char *bad[] = {
        "", "soon", "-5", "12x", "1e12", "2305843009213693953", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("BLOOMKIT_NOW", bad[i], 1);
        r = RUN("a\n", "dedup", "--window", "2s", "--state", state);
        ck_assert_msg(r.code == 2 && strstr(r.err, "BLOOMKIT_NOW") && !*r.out, "'%s': %d %s",
                      bad[i], r.code, r.err);
        done(&r);
    }
    run_at(-1);
    /* the window's keys belong to variant=window */
    expect_code(RUN("x\n", "dedup", "--window", "2s", "--variant", "standard"), 2,
                "--window with another variant");
    /* a ceiling: exit 3 naming it, after the lines it took */
    char *many = url_lines(0, 20000);
    r = RUN(many, "dedup", "--config", "variant=scalable capacity=100 max_bytes=64k");
    ck_assert_int_eq(r.code, 3);
    ck_assert_ptr_nonnull(strstr(r.err, "max_bytes=65536"));
    /* what came out: input lines, in order (a false positive may skip one) */
    long last = -1, taken = 0;
    for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n"), taken++) {
        long page = -1;
        ck_assert_int_eq(sscanf(line, "https://example.org/page/%ld", &page), 1);
        ck_assert_int_gt(page, last);
        last = page;
    }
    ck_assert_int_gt(taken, 100);
    done(&r);
    free(many);
    r = RUN(NULL, "plan", "--capacity", "1000000", "--fpr", "0.0001", "--window", "30d");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "generations   9 live at once"));
    ck_assert_ptr_nonnull(strstr(r.out, "window        30d, forgotten 30d to 33d 18h"));
    done(&r);
}
END_TEST

/* SIGTERM / SIGINT: finish the line, save, exit 143 / 130. --checkpoint 1
 * flushes stdout after every line, so the test knows what was processed. */
START_TEST(dedup_saves_on_signals)
{
    const int sigs[] = {SIGTERM, SIGINT, SIGHUP}; /* HUP: a closed terminal */
    for (int s = 0; s < 3; s++) {
        char *state = in_dir(s == 0 ? "term.bkf" : s == 1 ? "int.bkf" : "hup.bkf");
        int to_child[2], from_child[2];
        ck_assert_int_eq(pipe(to_child), 0);
        ck_assert_int_eq(pipe(from_child), 0);
        const pid_t pid = fork();
        if (pid == 0) {
            dup2(to_child[0], 0);
            dup2(from_child[1], 1);
            close(to_child[1]);
            close(from_child[0]);
            execl(BK_CLI_PATH, BK_CLI_PATH, "dedup", "--state", state, "--checkpoint", "1",
                  (char *)NULL);
            _exit(98);
        }
        close(to_child[0]);
        close(from_child[1]);
        ck_assert_int_eq(write(to_child[1], "one\ntwo\nthree\n", 14), 14);
        char buf[64];
        size_t got = 0;
        while (got < 14) {
            const ssize_t n = read(from_child[0], buf + got, sizeof buf - got);
            ck_assert_int_gt(n, 0);
            got += (size_t)n;
        }
        kill(pid, sigs[s]); /* the child is blocked reading stdin */
        int status;
        waitpid(pid, &status, 0);
        close(to_child[1]);
        close(from_child[0]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 128 + sigs[s], "status %d",
                      status);
        bk_filter *f = NULL;
        ck_assert_int_eq(bk_load(state, &f), BK_OK);
        ck_assert_int_eq(bk_contains(f, "three", 5), 1);
        bk_free(f);
    }
}
END_TEST

/* `bloomkit add FILE` with one line. */
static void add_line(const char *line, char *file)
{
    run_result r = RUN(line, "add", file);
    done(&r);
}

/* `bloomkit CMD OUT A B` succeeds, and checking `probe` against OUT prints `want`. */
static void combine_and_check(char *cmd, char *out, char *a, char *b, const char *probe,
                              const char *want)
{
    run_result r = RUN(NULL, cmd, out, a, b);
    ck_assert_int_eq(r.code, 0);
    done(&r);
    r = RUN(probe, "check", out);
    ck_assert_str_eq(r.out, want);
    done(&r);
}

START_TEST(create_add_check_remove_info_merge_intersect)
{
    char *cf = in_dir("c.bkf"), *sf = in_dir("s.bkf"), *mf = in_dir("m.bkf");
    run_result r = RUN(NULL, "create", cf, "--variant", "counting", "--capacity", "5000");
    ck_assert_int_eq(r.code, 0);
    done(&r);
    expect_code(RUN(NULL, "create", cf), 2, "create over an existing file");
    r = RUN("apple\nbanana\ncherry\n", "add", cf);
    ck_assert_int_eq(r.code, 0);
    ck_assert_uint_eq(r.outlen, 0);
    done(&r);
    r = RUN("apple\nzebra\n", "check", cf);
    ck_assert_int_eq(r.code, 0);
    ck_assert_str_eq(r.out, "apple\n");
    done(&r);
    r = RUN("apple\nzebra\n", "check", "-v", cf);
    ck_assert_int_eq(r.code, 0);
    ck_assert_str_eq(r.out, "zebra\n");
    done(&r);
    r = RUN("zebra\n", "check", cf);
    ck_assert_int_eq(r.code, 1); /* found nothing, as grep */
    done(&r);
    r = RUN("apple\nzebra\n", "remove", cf);
    ck_assert_int_eq(r.code, 1); /* a line was absent */
    ck_assert_ptr_nonnull(strstr(r.err, "1 of 2 lines was not in the filter"));
    done(&r);
    r = RUN("apple\nbanana\n", "check", cf);
    ck_assert_str_eq(r.out, "banana\n");
    done(&r);
    r = RUN(NULL, "info", cf);
    ck_assert_int_eq(r.code, 0);
    const char *fields[] = {"variant       counting",
                            "k ",
                            "keys added    2",
                            "est. distinct",
                            "fill",
                            "est. fpr",
                            "slices        1",
                            "saturated     0",
                            "KiB"};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        ck_assert_msg(strstr(r.out, fields[i]) != NULL, "info lacks '%s': %s", fields[i], r.out);
    ck_assert_ptr_null(strstr(r.out, "key           "));
    done(&r);
    r = RUN(NULL, "info", cf, "--json", "--show-key");
    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\"variant\":\"counting\""));
    ck_assert_ptr_nonnull(strstr(r.out, "\"key\":\""));
    done(&r);
    /* remove on a standard filter: exit 2, file byte-identical. */
    r = RUN(NULL, "create", sf, "--config", "capacity=5000 key=000102030405060708090a0b0c0d0e0f");
    ck_assert_int_eq(r.code, 0);
    done(&r);
    size_t l1, l2;
    uint8_t *before = tu_read_file(sf, &l1);
    expect_code(RUN("apple\n", "remove", sf), 2, "remove on standard");
    uint8_t *after = tu_read_file(sf, &l2);
    ck_assert(l1 == l2 && memcmp(before, after, l1) == 0);
    free(before);
    free(after);
    /* merge: copies of one created filter, different keys added. */
    char *s2 = in_dir("s2.bkf");
    r = RUN(NULL, "create", s2, "--config", "capacity=5000 key=000102030405060708090a0b0c0d0e0f");
    done(&r);
    add_line("left\n", sf);
    add_line("right\n", s2);
    combine_and_check("merge", mf, sf, s2, "left\nright\nnone\n", "left\nright\n");
    r = RUN(NULL, "merge", mf, sf, cf);
    ck_assert_msg(strstr(r.err, "cannot be merged: ") && !strstr(r.err, "merged: merge:"),
                  "the operation named twice: %s", r.err);
    expect_code(r, 2, "merge incompatible");
    expect_code(RUN(NULL, "merge", mf, sf), 2, "merge one input");
    /* intersect: a key in both copies stays, a key in one goes (these few
     * keys in 5,000 slots share no bits by chance: the check is exact). */
    char *xf = in_dir("x.bkf");
    add_line("both\n", sf);
    add_line("both\n", s2);
    combine_and_check("intersect", xf, sf, s2, "left\nright\nboth\nnone\n", "both\n");
    r = RUN(NULL, "intersect", xf, sf, cf);
    ck_assert_msg(!strstr(r.err, "intersected: intersect:"), "the operation named twice: %s",
                  r.err);
    expect_code(r, 2, "intersect incompatible");
    expect_code(RUN(NULL, "intersect", xf, sf), 2, "intersect one input");
    expect_code(RUN(NULL, "intersect", xf, sf, in_dir("missing.bkf")), 3, "intersect missing");
    r = RUN("left\nright\nboth\nnone\n", "check", xf); /* a failed intersect kept OUT */
    ck_assert_str_eq(r.out, "both\n");
    done(&r);
}
END_TEST

/* Each error says what to do (issue 32): the command to run, the size
 * needed, the flag and both values, the nearest option, the file given. */
START_TEST(errors_say_what_to_do)
{
    struct {
        int code;
        const char *input, *const *args, *expect[3];
    } cases[] = {
        {3,
         "x\n",
         (const char *[]){"add", in_dir("none.bkf"), NULL},
         {"no such filter file", "bloomkit create", "dedup --state"}},
        {3,
         NULL,
         (const char *[]){"create", in_dir("huge.bkf"), "--capacity", "100000000000000", "--fpr",
                          "0.000001", NULL},
         {"TiB", "bytes)", "bloomkit plan"}},
        {2,
         NULL,
         (const char *[]){"create", in_dir("m.bkf"), "--variant", "scalable", "--max-bytes", "1k",
                          NULL},
         {"max_bytes=1024 is less than", "a capacity of at most 666", NULL}},
        {2, NULL, (const char *[]){"dedup", "--stat", "x", NULL}, {"did you mean --state?", NULL}},
        {2,
         NULL,
         (const char *[]){"create", "f", "--capacty", "9", NULL},
         {"did you mean --capacity?", NULL}},
        {2,
         NULL,
         (const char *[]){"add", "f", "--plot", "x", NULL},
         {"does not apply to add", NULL}},
        {3,
         NULL,
         (const char *[]){"create", "/nonexistent-dir/f.bkf", NULL},
         {"/nonexistent-dir/f.bkf: cannot take its writers' lock", NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *argv[12] = {0};
        for (int j = 0; cases[i].args[j]; j++)
            argv[j] = (char *)cases[i].args[j];
        run_result r = run_limited(cases[i].input, len_of(cases[i].input), 0, argv);
        for (int j = 0; j < 3 && cases[i].expect[j]; j++)
            ck_assert_msg(strstr(r.err, cases[i].expect[j]), "case %zu: '%s' lacks '%s'", i, r.err,
                          cases[i].expect[j]);
        ck_assert_msg(!strstr(r.err, ".lock"), "case %zu names the lock file: %s", i, r.err);
        expect_code(r, cases[i].code, cases[i].args[0]);
    }
    /* dedup --state with a flag the saved filter disagrees with */
    char *state = in_dir("s.bkf");
    expect_code(RUN("a\n", "dedup", "--state", state), 0, "dedup makes the state");
    run_result r = RUN("a\n", "dedup", "--state", state, "--fpr", "0.001");
    ck_assert_msg(
        strstr(r.err, "--fpr asks fpr=0.001, a different fpr than the saved filter's fpr=0.0001") &&
            strstr(r.err, "drop --fpr") && !strstr(r.err, "--config"),
        "%s", r.err);
    expect_code(r, 2, "dedup --fpr against its state");
    /* nothing was made by the failing commands */
    ck_assert_int_eq(access(in_dir("huge.bkf"), F_OK), -1);
    ck_assert_int_eq(access(in_dir("m.bkf"), F_OK), -1);
    ck_assert_int_eq(access(in_dir("none.bkf"), F_OK), -1);
}
END_TEST

START_TEST(errors_and_exit_codes)
{
    char *f = in_dir("f.bkf"), *bad = in_dir("bad.bkf");
    expect_code(RUN("x\n", "add", in_dir("missing.bkf")), 3, "add missing file");
    expect_code(RUN(NULL, "info", g_dir), 3, "info on a directory");
    tu_write_file(bad, (const uint8_t *)"not a filter at all", 19);
    expect_code(RUN("x\n", "check", bad), 3, "check corrupt file");
    expect_code(RUN(NULL, "info", bad), 3, "info corrupt file");
    expect_code(RUN(NULL, "create", f, "--fpr", "0.7"), 2, "create bad fpr");
    expect_code(RUN(NULL, "create", f, "--config", "colour=red"), 2, "create unknown key");
    expect_code(RUN(NULL, "create", f, "--config", "fpr=0.1", "--fpr", "0.2"), 2, "key twice");
    expect_code(RUN(NULL, "create", f, "--bogus"), 2, "unknown option");
    expect_code(RUN(NULL, "create", f, "--capacity"), 2, "option without value");
    expect_code(RUN(NULL, "create"), 2, "create without FILE");
    expect_code(RUN(NULL, "add"), 2, "add without FILE");
    expect_code(RUN(NULL, "dedup", "--checkpoint", "x", "--state", f), 2, "bad checkpoint");
    expect_code(RUN(NULL, "dedup", "--checkpoint", "5"), 2, "checkpoint without state");
    expect_code(RUN(NULL, "create", f, "--config-file", in_dir("none.cfg")), 3, "config-file");
    /* "--" ends options: a file named like an option. */
    run_result r = RUN(NULL, "create", "--capacity", "100", "--", in_dir("-odd.bkf"));
    ck_assert_int_eq(r.code, 0);
    done(&r);
    /* --config-file works and names the line of a bad value. */
    tu_write_file(in_dir("exp.cfg"), (const uint8_t *)"# test\nvariant=scalable\nfpr=9\n", 30);
    r = RUN(NULL, "create", in_dir("x.bkf"), "--config-file", in_dir("exp.cfg"));
    ck_assert_int_eq(r.code, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "line 3"));
    done(&r);
    /* Failed commands created nothing: only bad.bkf, -odd.bkf and exp.cfg. */
    ck_assert_int_eq(access(f, F_OK), -1);
    ck_assert_int_eq(access(in_dir("x.bkf"), F_OK), -1);
    ck_assert_int_eq(tu_count_files(g_dir), 3);
    /* a directory is named as one, not met with advice to --force */
    for (int force = 0; force < 2; force++) {
        r = force ? RUN(NULL, "create", g_dir, "--force") : RUN(NULL, "create", g_dir);
        ck_assert_msg(strstr(r.err, "is a directory") && !strstr(r.err, "--force"), "%s", r.err);
        expect_code(r, 2, "create on a directory");
    }
    /* -q is taken by every command */
    expect_code(RUN(NULL, "create", "-q", f, "--capacity", "100"), 0, "create -q");
    expect_code(RUN(NULL, "plan", "-q", "--capacity", "100", "--fpr", "0.01"), 0, "plan -q");
    expect_code(RUN(NULL, "info", "--quiet", f), 0, "info --quiet");
    /* tiny pinned filters get their exact rate (one bit, one key: 1, not 0.632) */
    r = RUN(NULL, "plan", "--bits", "1", "--capacity", "1");
    ck_assert_msg(strstr(r.out, "expected fpr  1 (after 1 key)") != NULL, "%s", r.out);
    expect_code(r, 0, "plan --bits 1");
    /* windows whose spans differ: merge names the spans */
    expect_code(RUN(NULL, "create", in_dir("w10.bkf"), "--window", "10s", "--config",
                    "key=000102030405060708090a0b0c0d0e0f"),
                0, "create w10");
    expect_code(RUN(NULL, "create", in_dir("w20.bkf"), "--window", "20s", "--config",
                    "key=000102030405060708090a0b0c0d0e0f"),
                0, "create w20");
    r = RUN(NULL, "merge", in_dir("w.bkf"), in_dir("w10.bkf"), in_dir("w20.bkf"));
    ck_assert_msg(strstr(r.err, "spans differ (1250 ms vs 2500 ms") != NULL, "%s", r.err);
    expect_code(r, 2, "merge windows of other spans");
    /* a URL's #fragment is no part of a name */
    r = RUN(NULL, "info", "--redis", "redis://127.0.0.1:1/name#frag");
    ck_assert_msg(strstr(r.err, BK_HAVE_HIREDIS ? "fragment" : "without hiredis") != NULL, "%s",
                  r.err);
    expect_code(r, 2, "a URL with a fragment");
}
END_TEST

/* Two names of one file (a hard link) would become two filters at the first
 * save (a rename gives the new file to one name): every writer refuses it,
 * naming the links, and nothing is written; readers go on. */
START_TEST(hard_links_are_refused_by_every_writer)
{
    char *a = in_dir("a.bkf"), *b = in_dir("b.bkf");
    expect_code(RUN(NULL, "create", a, "--capacity", "1000"), 0, "create");
    expect_code(RUN("k1\n", "add", a), 0, "add");
    ck_assert_int_eq(link(a, b), 0);
    size_t len0;
    uint8_t *before = tu_read_file(a, &len0);
    const char *writers[][5] = {{"add", "B", NULL},
                                {"remove", "B", NULL},
                                {"dedup", "--state", "B", NULL},
                                {"create", "B", "--force", NULL},
                                {"merge", "B", "A", "A", NULL}};
    for (size_t w = 0; w < sizeof writers / sizeof *writers; w++) {
        char *argv[6] = {NULL};
        for (int i = 0; writers[w][i]; i++)
            argv[i] = strcmp(writers[w][i], "B") == 0   ? b
                      : strcmp(writers[w][i], "A") == 0 ? a
                                                        : (char *)writers[w][i];
        run_result r = run_limited("k2\n", 3, 0, argv);
        ck_assert_msg(strstr(r.err, "2 hard links") != NULL, "%s: %s", writers[w][0], r.err);
        expect_code(r, 3, writers[w][0]);
        size_t len;
        uint8_t *now = tu_read_file(a, &len);
        ck_assert_msg(len == len0 && memcmp(now, before, len) == 0, "%s changed the file",
                      writers[w][0]);
        free(now);
    }
    run_result r = RUN("k1\n", "check", b); /* reading is fine */
    ck_assert_str_eq(r.out, "k1\n");
    done(&r);
    bk_filter *f = tu_filter("capacity=10");
    ck_assert_int_eq(bk_save(f, b), BK_EIO);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "hard links"));
    bk_file_lock *lock = NULL;
    ck_assert_int_eq(bk_lock_file(a, 0, &lock), BK_EIO);
    ck_assert_ptr_null(lock);
    bk_free(f);
    free(before);
}
END_TEST

/* A state file written under a clock ten years ahead: the next run under
 * the right clock says so (both times) and re-dates it, and the window runs
 * on: a line is forgotten a window later instead of for ten years. */
START_TEST(a_window_state_from_a_clock_ahead_is_redated_with_a_warning)
{
    char *state = in_dir("w.bkf");
    bk_config c;
    char err[128];
    ck_assert_int_eq(bk_config_parse(&c, "variant=window window=2s generations=2", err, sizeof err),
                     BK_OK);
    const int64_t ahead = INT64_C(3650) * 86400000;
    static int64_t at_ms;
    at_ms = SOME_TIME + ahead; /* the filter the command would make, written from the future: */
    bk_set_clock(fixed_clock, &at_ms);
    bk_filter *f = NULL;
    ck_assert_int_eq(bk_new(&c, &f), BK_OK);
    ck_assert_int_eq(bk_add(f, "y", 1), 1);
    ck_assert_int_eq(bk_save(f, state), BK_OK);
    bk_free(f);
    bk_set_clock(NULL, NULL);
    run_at(SOME_TIME);
    run_result r = RUN("y\nz\n", "dedup", "--state", state);
    ck_assert_int_eq(r.code, 0);
    ck_assert_str_eq(r.out, "z\n");
    ck_assert_msg(strstr(r.err, "warning") && strstr(r.err, "3650.0 days") &&
                      strstr(r.err, "re-dated"),
                  "%s", r.err);
    done(&r);
    run_at(SOME_TIME + 1900); /* re-dated once: no more warning */
    r = RUN("y\nz\n", "dedup", "--state", state);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "");
    done(&r);
    /* forgotten a window and a span (2 s + 1 s) after, not ten years */
    run_at(SOME_TIME + 1900 + 3000);
    r = RUN("y\nz\n", "dedup", "--state", state);
    ck_assert_str_eq(r.out, "y\nz\n");
    done(&r);
    run_at(-1);
}
END_TEST

/* A full disk (file-size limit) during add: exit 3, old file intact, no temp. */
START_TEST(full_disk_during_add)
{
    char *f = in_dir("big.bkf");
    run_result r = RUN(NULL, "create", f, "--capacity", "200000");
    ck_assert_int_eq(r.code, 0);
    done(&r);
    size_t l1, l2;
    uint8_t *before = tu_read_file(f, &l1);
    r = run_limited("k\n", 2, 64 * 1024, (char *[]){"add", f, NULL});
    ck_assert_int_eq(r.code, 3);
    ck_assert_ptr_nonnull(strstr(r.err, "big.bkf"));
    done(&r);
    uint8_t *after = tu_read_file(f, &l2);
    ck_assert(l1 == l2 && memcmp(before, after, l1) == 0);
    ck_assert_int_eq(tu_count_files(g_dir), 1);
    free(before);
    free(after);
}
END_TEST

START_TEST(progress_only_when_asked_or_on_a_terminal)
{
    setenv("BLOOMKIT_PROGRESS_DELAY", "0", 1);
    run_result r = RUN("a\nb\n", "dedup", "--progress");
    ck_assert_str_eq(r.out, "a\nb\n"); /* nothing mixed into stdout */
    ck_assert_ptr_nonnull(strstr(r.err, "2 lines"));
    ck_assert_ptr_nonnull(strstr(r.err, "keys"));
    ck_assert_ptr_nonnull(strstr(r.err, "fill"));
    done(&r);
    r = RUN("a\nb\n", "dedup", "--progress", "--quiet");
    ck_assert_uint_eq(r.errlen, 0);
    done(&r);
    r = RUN("a\nb\n", "dedup"); /* stderr is a file, not a terminal */
    ck_assert_uint_eq(r.errlen, 0);
    done(&r);
    /* create: the MiB written (a 2-MiB filter), only when asked here */
    r = RUN(NULL, "create", in_dir("p.bkf"), "--capacity", "2M", "--progress");
    ck_assert_msg(strstr(r.err, "MiB written (100%)"), "%s", r.err);
    expect_code(r, 0, "create --progress");
    r = RUN(NULL, "create", in_dir("p.bkf"), "--capacity", "2M", "--force");
    ck_assert_uint_eq(r.errlen, 0);
    expect_code(r, 0, "create, stderr not a terminal");
    unsetenv("BLOOMKIT_PROGRESS_DELAY");
}
END_TEST

/* Options are values, never config text (issue 16): text smuggled into an
 * option is that option's bad value, named as the user typed it; a NUL in
 * a config file is an error naming its place; nothing is created. */
START_TEST(options_are_values_never_config_text)
{
    char *f = in_dir("o.bkf");
    const struct {
        const char *opt, *val, *says;
    } cases[] = {{"--capacity", "1000 variant=counting key=000102030405060708090a0b0c0d0e0f",
                  "--capacity: '1000 variant"},
                 {"--variant", "counting#", "--variant: 'counting#'"},
                 {"--fpr", "0.1 capacity=20", "--fpr: '0.1 capacity=20'"},
                 {"--layout", "blocked,variant=counting", "--layout: 'blocked,variant"},
                 {"--key", "00 variant=counting", "--key: '00 variant"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        run_result r = RUN(NULL, "create", f, (char *)cases[i].opt, (char *)cases[i].val);
        ck_assert_msg(strstr(r.err, cases[i].says), "%s: '%s' lacks '%s'", cases[i].opt, r.err,
                      cases[i].says);
        expect_code(r, 2, cases[i].opt);
        ck_assert_int_eq(access(f, F_OK), -1);
    }
    /* the options still work, alone and over a text that does not state them */
    run_result r = RUN(NULL, "create", f, "--config", "capacity=1000", "--variant", "counting");
    expect_code(r, 0, "create with --config and --variant");
    r = RUN(NULL, "info", f, "--json");
    ck_assert_ptr_nonnull(strstr(r.out, "\"counting\""));
    ck_assert_ptr_nonnull(strstr(r.out, "\"est_fpr\":0,")); /* empty: 0, never -0 */
    done(&r);
    r = RUN(NULL, "info", f);
    ck_assert_ptr_nonnull(strstr(r.out, "est. fpr      0\n"));
    done(&r);
    /* a config file with a NUL: refused, naming line and offset */
    tu_write_file(in_dir("nul.cfg"), (const uint8_t *)"capacity=100\nfpr=0.1\0variant=counting\n",
                  35);
    r = RUN(NULL, "create", in_dir("n.bkf"), "--config-file", in_dir("nul.cfg"));
    ck_assert_ptr_nonnull(strstr(r.err, "line 2: a NUL byte at offset 20"));
    expect_code(r, 2, "NUL in --config-file");
    ck_assert_int_eq(access(in_dir("n.bkf"), F_OK), -1);
}
END_TEST

/* The hash key off the command line: from --key-file or BLOOMKIT_KEY; a
 * config text's own key wins over the environment; two explicit sources
 * are an error. */
START_TEST(key_from_file_or_environment)
{
    const char *hex = "000102030405060708090a0b0c0d0e0f", *env = "0f0e0d0c0b0a09080706050403020100";
    tu_write_file(in_dir("k.txt"), (const uint8_t *)"000102030405060708090a0b0c0d0e0f\n", 33);
    run_result r = RUN(NULL, "create", in_dir("a.bkf"), "--key-file", in_dir("k.txt"));
    expect_code(r, 0, "--key-file");
    r = RUN(NULL, "info", in_dir("a.bkf"), "--show-key");
    ck_assert_ptr_nonnull(strstr(r.out, hex));
    done(&r);
    setenv("BLOOMKIT_KEY", env, 1);
    r = RUN(NULL, "create", in_dir("b.bkf"));
    expect_code(r, 0, "BLOOMKIT_KEY");
    r = RUN(NULL, "info", in_dir("b.bkf"), "--show-key");
    ck_assert_ptr_nonnull(strstr(r.out, env));
    done(&r);
    r = RUN(NULL, "create", in_dir("c.bkf"), "--config", "key=000102030405060708090a0b0c0d0e0f");
    expect_code(r, 0, "text key over BLOOMKIT_KEY");
    r = RUN(NULL, "info", in_dir("c.bkf"), "--show-key");
    ck_assert_ptr_nonnull(strstr(r.out, hex));
    done(&r);
    setenv("BLOOMKIT_KEY", "not-a-key", 1);
    r = RUN(NULL, "create", in_dir("d.bkf"));
    ck_assert_ptr_nonnull(strstr(r.err, "BLOOMKIT_KEY"));
    expect_code(r, 2, "bad BLOOMKIT_KEY");
    unsetenv("BLOOMKIT_KEY");
    r = RUN(NULL, "create", in_dir("e.bkf"), "--key", (char *)hex, "--key-file", in_dir("k.txt"));
    expect_code(r, 2, "--key and --key-file");
    ck_assert_int_eq(access(in_dir("d.bkf"), F_OK), -1);
    ck_assert_int_eq(access(in_dir("e.bkf"), F_OK), -1);
}
END_TEST

/* A cuckoo filter through the command: made, added to, checked, removed
 * from, shown; dedup holds each line once (its copies would fill a table:
 * 50,000 lines of 5,000 distinct into a table for 5,000); plan --compare
 * lists every variant with what it costs. */
START_TEST(a_cuckoo_filter_through_the_command)
{
    char *f = in_dir("c.bkf");
    expect_code(
        RUN(NULL, "create", f, "--variant", "cuckoo", "--capacity", "1000", "--fpr", "0.001"), 0,
        "create cuckoo");
    expect_code(RUN("a\nb\nc\n", "add", f), 0, "add");
    run_result r = RUN("a\nb\nzz\n", "check", f);
    ck_assert_str_eq(r.out, "a\nb\n");
    done(&r);
    expect_code(RUN("a\n", "remove", f), 0, "remove a");
    r = RUN("a\nb\n", "check", f);
    ck_assert_str_eq(r.out, "b\n");
    done(&r);
    r = RUN(NULL, "info", f);
    ck_assert_msg(strstr(r.out, "variant       cuckoo") && strstr(r.out, "-bit fingerprints"), "%s",
                  r.out);
    done(&r);
    expect_code(RUN(NULL, "create", in_dir("s.bkf")), 0, "create standard");
    r = RUN("a\n", "remove", in_dir("s.bkf"));
    ck_assert_msg(strstr(r.err, "only counting, cuckoo or rbcuckoo filters can"), "%s", r.err);
    expect_code(r, 2, "remove from standard");
    /* dedup: every line once, its state a set */
    char *lines = malloc(50000 * 12), *at = lines;
    ck_assert_ptr_nonnull(lines);
    for (int i = 0; i < 50000; i++)
        at += sprintf(at, "l%d\n", i % 5000);
    char *state = in_dir("d.bkf");
    r = RUN(lines, "dedup", "--state", state, "--config", "variant=cuckoo capacity=5000 fpr=0.001");
    ck_assert_msg(r.code == 0, "dedup: %s", r.err);
    size_t out_lines = 0;
    for (const char *p = r.out; *p; p++)
        out_lines += *p == '\n';
    ck_assert_uint_le(out_lines, 5000);
    ck_assert_uint_ge(out_lines, 4980); /* false positives at 0.1% */
    done(&r);
    free(lines);
    bk_filter *g = NULL;
    ck_assert_int_eq(bk_load(state, &g), BK_OK);
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(g, &st), BK_OK);
    ck_assert_uint_eq(st.keys, out_lines); /* a copy per line printed, none per repeat */
    bk_free(g);
    r = RUN(NULL, "plan", "--capacity", "1000000", "--fpr", "0.01", "--compare");
    ck_assert_int_eq(r.code, 0);
    for (unsigned v = 0; v < tu_nvariants(); v++)
        ck_assert_msg(strstr(r.out, tu_variant(v)), "plan --compare lacks %s", tu_variant(v));
    done(&r);
}
END_TEST

/* roff of config key i's entry in the man page (its option, help and
 * values, as the key table has them), appended to out. 0 past the last. */
static int man_key_entry(unsigned i, char *out, size_t cap)
{
    char range[160];
    const char *help, *name = bk_config_key(i, range, sizeof range, &help);
    if (!name)
        return 0;
    size_t at = strlen(out);
    at += (size_t)snprintf(out + at, cap - at, ".TP\n.BI \\-\\-");
    for (const char *p = name; *p && at + 3 < cap; p++)
        at += (size_t)snprintf(out + at, cap - at, "%s", *p == '_' ? "\\-" : (char[]){*p, 0});
    snprintf(out + at, cap - at, " \" VALUE\"\n%s; %s.\n", help, range);
    return 1;
}

/* The block of file between the lines begin and end is entries, made
 * from a library table (make man writes them all: BK_WRITE_MAN=1). */
static void check_generated(const char *begin, const char *end, const char *file,
                            const char *entries)
{
    size_t len;
    char *text = (char *)tu_read_file(file, &len);
    text[len] = '\0';
    char *b = strstr(text, begin), *e = strstr(text, end);
    ck_assert_msg(b && e && e > b, "%s: no %s ... %s block", file, begin, end);
    b = strchr(b, '\n') + 1;
    if (getenv("BK_WRITE_MAN")) {
        FILE *fp = fopen(file, "w");
        ck_assert_ptr_nonnull(fp);
        fprintf(fp, "%.*s%s%s", (int)(b - text), text, entries, e);
        ck_assert_int_eq(fclose(fp), 0);
    } else {
        ck_assert_msg((size_t)(e - b) == strlen(entries) &&
                          memcmp(b, entries, (size_t)(e - b)) == 0,
                      "%s differs from the library's table: run make man", file);
    }
    free(text);
}

/* The table of figures (bk_figure_at) is docs/figures.md's list and every
 * name of info --json; the text form shows the rows meant for the variant. */
START_TEST(every_figure_is_documented_and_in_info)
{
    char doc[8192] = "| name | type | variants | meaning |\n|---|---|---|---|\n";
    static const char *const types[] = {"text", "integer", "number", "ms since the epoch"};
    bk_figure fig;
    unsigned n = 0;
    for (; bk_figure_at(n, NULL, NULL, &fig, sizeof fig) == 1; n++) {
        char vs[128] = "";
        for (int v = 0; bk_variant_name((bk_variant)v); v++)
            if ((fig.variants >> v) & 1u)
                snprintf(vs + strlen(vs), sizeof vs - strlen(vs), "%s%s", vs[0] ? ", " : "",
                         bk_variant_name((bk_variant)v));
        if (fig.variants == (1u << tu_nvariants()) - 1)
            snprintf(vs, sizeof vs, "all");
        snprintf(doc + strlen(doc), sizeof doc - strlen(doc), "| `%s` | %s | %s | %s |\n", fig.name,
                 types[fig.type], vs, fig.meaning);
    }
    ck_assert_uint_gt(n, 15);
    ck_assert_int_eq(bk_figure_at(0, NULL, NULL, NULL, sizeof fig), BK_EINVAL);
    check_generated("<!-- BEGIN FIGURES", "<!-- END FIGURES", "docs/figures.md", doc);
    for (unsigned v = 0; v < tu_nvariants(); v++) {
        char path[64];
        snprintf(path, sizeof path, "fig-%u.bkf", v);
        run_result r = RUN(NULL, "create", in_dir(path), "--variant", (char *)tu_variant(v));
        expect_code(r, 0, "create");
        r = RUN(NULL, "info", "--json", in_dir(path));
        run_result t = RUN(NULL, "info", in_dir(path));
        ck_assert_msg(r.code == 0 && t.code == 0, "info: %s%s", r.err, t.err);
        for (unsigned i = 0; bk_figure_at(i, NULL, NULL, &fig, sizeof fig) == 1; i++) {
            char name[64];
            snprintf(name, sizeof name, "\"%s\":", fig.name);
            ck_assert_msg(strstr(r.out, name), "info --json lacks %s", name);
            if (fig.label && fig.type != BK_FIGURE_MS && (fig.variants >> v) & 1u)
                ck_assert_msg(strstr(t.out, fig.label), "%s info lacks %s", tu_variant(v),
                              fig.label);
            else if (fig.label && !((fig.variants >> v) & 1u))
                ck_assert_msg(!strstr(t.out, fig.label), "%s info shows %s", tu_variant(v),
                              fig.label);
        }
        done(&r);
        done(&t);
    }
}
END_TEST

/* Every key of the configuration table is an option of the commands that
 * take a filter's configuration, in their --help and in the man page,
 * whose list is made from the table (make man: BK_WRITE_MAN=1) and
 * checked against it here. */
/* The help of the commands that make a crawler's filter states its rate as
 * the preset they start from has it (bk_config_preset, the one place the
 * default is written): the text cannot drift from the default. */
START_TEST(help_states_the_crawler_preset)
{
    bk_config c;
    char err[256], fpr[32], want[48];
    ck_assert_int_eq(bk_config_parse(&c, bk_config_preset("crawler"), err, sizeof err), BK_OK);
    ck_assert_int_gt(bk_config_get(&c, "fpr", fpr, sizeof fpr), 0);
    snprintf(want, sizeof want, "fpr=%s", fpr);
    const char *cmds[] = {"dedup", "import"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        run_result r = RUN(NULL, (char *)cmds[i], "--help");
        ck_assert_int_eq(r.code, 0);
        ck_assert_msg(strstr(r.out, want), "%s --help does not say %s", cmds[i], want);
        done(&r);
    }
}
END_TEST

START_TEST(every_config_key_is_an_option_in_help_and_man)
{
    char entries[16384] = "";
    unsigned n = 0;
    while (man_key_entry(n, entries, sizeof entries))
        n++;
    ck_assert_uint_gt(n, 10);
    const char *cmds[] = {"create", "dedup", "plan"};
    for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++) {
        run_result r = RUN(NULL, (char *)cmds[c], "--help");
        ck_assert_int_eq(r.code, 0);
        for (unsigned i = 0; i < n; i++) {
            char opt[64];
            snprintf(opt, sizeof opt, "--%s VALUE", bk_config_key(i, NULL, 0, NULL));
            for (char *p = opt + 2; *p; p++)
                *p = *p == '_' ? '-' : *p;
            ck_assert_msg(strstr(r.out, opt), "%s --help lacks %s", cmds[c], opt);
        }
        done(&r);
    }
    check_generated(".\\\" BEGIN KEYS", ".\\\" END KEYS", "docs/bloomkit.1", entries);
    /* an option of a key that had none before the table made them all */
    run_result r =
        RUN(NULL, "create", in_dir("m.bkf"), "--variant", "scalable", "--max-bytes", "64M");
    expect_code(r, 0, "create --max-bytes");
    bk_filter *f = NULL;
    bk_config c;
    ck_assert_int_eq(bk_load(in_dir("m.bkf"), &f), BK_OK);
    ck_assert_int_eq(bk_get_config(f, &c), BK_OK);
    ck_assert_uint_eq(c.max_bytes, UINT64_C(64) << 20);
    bk_free(f);
    r = RUN(NULL, "create", in_dir("s.bkf"), "--max-bytes", "1M");
    ck_assert_msg(strstr(r.err, "--max-bytes: applies to"), "%s", r.err);
    expect_code(r, 2, "--max-bytes on a standard filter");
}
END_TEST

/* Man-page text without roff's escapes of '-' ("\\-\\-redis" -> "--redis"). */
static void unescape_dashes(char *t)
{
    char *w = t;
    for (const char *r = t; *r; r++)
        if (!(r[0] == '\\' && r[1] == '-'))
            *w++ = *r;
    *w = '\0';
}

/* Every option of every command, as its --help lists them from the option
 * table, is in the man page's SYNOPSIS among that command's forms and has
 * an entry in OPTIONS; every command is in the SYNOPSIS. */
START_TEST(every_option_of_every_command_is_in_help_and_man)
{
    size_t len;
    char *man = (char *)tu_read_file("docs/bloomkit.1", &len);
    man[len] = '\0';
    unescape_dashes(man);
    char *syn = strstr(man, ".SH SYNOPSIS"), *desc = strstr(man, ".SH DESCRIPTION");
    char *opts = strstr(man, ".SH OPTIONS");
    ck_assert(syn && desc && opts && desc > syn);
    *desc = '\0';
    run_result top = RUN(NULL, "--help");
    unsigned commands = 0;
    for (char *line = strstr(top.out, "\n  "); line; line = strstr(line + 1, "\n  ")) {
        char cmd[32];
        if (sscanf(line + 3, "%31s", cmd) != 1)
            continue;
        commands++;
        /* the command's forms in the SYNOPSIS: from each ".B bloomkit CMD" to the next form */
        char form[48], text[8192] = "";
        snprintf(form, sizeof form, ".B bloomkit %s\n", cmd);
        for (char *f = strstr(syn, form); f; f = strstr(f + 1, form)) {
            char *next = strstr(f + 1, ".B bloomkit ");
            const size_t n = next ? (size_t)(next - f) : strlen(f);
            strncat(text, f,
                    n < sizeof text - strlen(text) - 1 ? n : sizeof text - strlen(text) - 1);
        }
        ck_assert_msg(text[0], "the man page's SYNOPSIS lacks bloomkit %s", cmd);
        run_result h = RUN(NULL, cmd, "--help");
        char *list = strstr(h.out, "Options of ");
        ck_assert_msg(list, "bloomkit %s --help lists no options", cmd);
        char *list_end = strstr(list, "\n\n");
        if (list_end)
            *list_end = '\0'; /* the list alone, not the filter options' header */
        for (char *o = strstr(list, "--"); o; o = strstr(o + 2, "--")) {
            char name[64], entry[80], entry2[80];
            if (sscanf(o, "%63[-a-z]", name) != 1 || strcmp(name, "--help") == 0 ||
                strcmp(name, "--quiet") == 0)
                continue;
            char with_space[70];
            snprintf(with_space, sizeof with_space, "%s ", name);
            char nl[70];
            snprintf(nl, sizeof nl, "%s\n", name);
            char br[70];
            snprintf(br, sizeof br, "%s]", name);
            char roman[70]; /* "\fB--config-file\fR" inside an .IR line */
            snprintf(roman, sizeof roman, "%s\\fR", name);
            ck_assert_msg(strstr(text, with_space) || strstr(text, nl) || strstr(text, br) ||
                              strstr(text, roman),
                          "the man page's SYNOPSIS of %s lacks %s", cmd, name);
            /* an entry: the line after a .TP names it */
            int found = 0;
            for (char *tp = strstr(opts, ".TP\n"); tp && !found; tp = strstr(tp + 1, ".TP\n")) {
                char *head = tp + 4, *end = strchr(head, '\n');
                const size_t n = end ? (size_t)(end - head) : strlen(head);
                snprintf(entry, sizeof entry, "%.*s", (int)(n < 79 ? n : 79), head);
                char *at = strstr(entry, name);
                found = at && strchr(" \",", at[strlen(name)]);
            }
            (void)entry2;
            ck_assert_msg(found, "the man page's OPTIONS has no entry for %s", name);
        }
        done(&h);
    }
    ck_assert_uint_ge(commands, 14);
    /* the exit statuses name remove's 1 */
    ck_assert_msg(strstr(top.out, "1 check found nothing or remove met lines"), "%s", top.out);
    done(&top);
    free(man);
}
END_TEST

Suite *cli_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("cli", "bloomkit", &tc);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, every_command_has_help);
    tcase_add_test(tc, plan_reports_the_worked_example);
    tcase_add_test(tc, plan_and_create_take_pinned_bits_and_hashes);
    tcase_add_test(tc, canonical_urls_decide_on_one_key_and_print_the_line);
    tcase_add_test(tc, canonical_urls_are_recorded_in_the_filter);
    tcase_add_test(tc, dedup_streams_first_sightings_in_order);
    tcase_add_test(tc, dedup_sizes_its_chain_from_regular_files);
    tcase_add_test(tc, dedup_keeps_huge_lines_whole_and_null_records);
    tcase_add_test(tc, two_run_crawl_with_state);
    tcase_add_test(tc, dedup_with_a_window_re_emits_after_it);
    tcase_add_test(tc, dedup_threads_change_nothing);
    tcase_add_test(tc, dedup_saves_on_signals);
    tcase_add_test(tc, create_add_check_remove_info_merge_intersect);
    tcase_add_test(tc, errors_and_exit_codes);
    tcase_add_test(tc, errors_say_what_to_do);
    tcase_add_test(tc, hard_links_are_refused_by_every_writer);
    tcase_add_test(tc, a_window_state_from_a_clock_ahead_is_redated_with_a_warning);
    tcase_add_test(tc, full_disk_during_add);
    tcase_add_test(tc, progress_only_when_asked_or_on_a_terminal);
    tcase_add_test(tc, options_are_values_never_config_text);
    tcase_add_test(tc, key_from_file_or_environment);
    tcase_add_test(tc, a_cuckoo_filter_through_the_command);
    /* a case of its own: make man runs it alone */
    TCase *man = tu_tcase("man");
    tcase_add_checked_fixture(man, setup, teardown);
    tcase_add_test(man, every_config_key_is_an_option_in_help_and_man);
    tcase_add_test(man, help_states_the_crawler_preset);
    tcase_add_test(man, every_figure_is_documented_and_in_info);
    tcase_add_test(man, every_option_of_every_command_is_in_help_and_man);
    suite_add_tcase(s, man);
    return s;
}
