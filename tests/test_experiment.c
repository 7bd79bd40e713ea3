/*
 * test_experiment.c - `bloomkit experiment`: the runner on a tiny workload
 * writes the documented CSV and JSON columns, the standard variant's measured
 * rate holds the model's rate inside its 95% interval, and a bad experiment
 * file is an error naming its line.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "suites.h"
#include "testutil.h"

#ifndef BK_CLI_PATH
#define BK_CLI_PATH "build/bloomkit"
#endif

/* A whole file as a NUL-terminated string (the caller frees it). */
static char *read_text(const char *path)
{
    size_t len;
    char *text = (char *)tu_read_file(path, &len);
    text[len] = '\0';
    return text;
}

/* PATH for the child when not NULL (to hide gnuplot). */
static const char *child_path;

/* Run `bloomkit experiment --config-file DIR/NAME [extra...]` in DIR;
 * stderr into err. */
static int run_exp_named(const char *dir, const char *name, const char *exp_text,
                         const char *const *extra, char **err)
{
    char exp[4096], errp[4096];
    snprintf(exp, sizeof exp, "%s/%s", dir, name);
    snprintf(errp, sizeof errp, "%s/stderr", dir);
    tu_write_file(exp, (const uint8_t *)exp_text, strlen(exp_text));
    char cli[4096]; /* the command runs in dir */
    ck_assert_ptr_nonnull(realpath(BK_CLI_PATH, cli));
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const int o = open("/dev/null", O_WRONLY),
                  e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(99);
        if ((child_path && setenv("PATH", child_path, 1) != 0) || chdir(dir) != 0)
            _exit(97);
        const char *argv[16] = {cli, "experiment", "--config-file", exp};
        int n = 4;
        for (int i = 0; extra && extra[i] && n < 15; i++)
            argv[n++] = extra[i];
        argv[n] = NULL;
        execv(cli, (char *const *)argv);
        _exit(98);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    *err = read_text(errp);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int run_exp(const char *dir, const char *exp_text, const char *const *extra, char **err)
{
    return run_exp_named(dir, "e.exp", exp_text, extra, err);
}

/* The CSV a successful run of exp_text writes (the caller frees it). */
static char *csv_of(const char *exp_text)
{
    char *dir = tu_tmpdir(), *csv = tu_path(dir, "out.csv");
    const char *extra[] = {"--csv", csv, NULL};
    char *err;
    ck_assert_int_eq(run_exp(dir, exp_text, extra, &err), 0);
    free(err);
    char *text = read_text(csv);
    free(csv);
    tu_rmtree(dir);
    return text;
}

START_TEST(tiny_workload_writes_every_column_and_matches_the_model)
{
    char *dir = tu_tmpdir(), *csv = tu_path(dir, "out.csv"), *json = tu_path(dir, "out.json");
    const char *exp =
        "# a tiny experiment\n"
        "[workload]\n"
        "keys = 20000\n"
        "probes = 200000\n"
        "checkpoints = list 5000 10000\n"
        "\n"
        "[std]\n"
        "variant=standard capacity=20000 fpr=0.01\n"
        "key=00112233445566778899aabbccddeeff\n"
        "cnt: variant=counting capacity=20000 fpr=0.01 key=00112233445566778899aabbccddeeff\n";
    const char *extra[] = {"--csv", csv, "--json", json, NULL};
    char *err;
    ck_assert_int_eq(run_exp(dir, exp, extra, &err), 0);
    free(err);
    char *text = read_text(csv);
    ck_assert_ptr_nonnull(strstr(text, "config,keys,probes,false_positives,fpr,fpr_ci_low,"
                                       "fpr_ci_high,model_fpr,bits_per_key,bytes,slices,"
                                       "saturated,ns_per_add,ns_per_lookup,phase,ops,"
                                       "ns_per_remove,time_ms,age_ms,revisits,reemitted,reemit,"
                                       "reemit_ci_low,reemit_ci_high,reemit_model\n"));
    /* 2 configurations x 3 checkpoints (5000, 10000 and the end) */
    int rows = 0, in_interval = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "config,", 7) == 0)
            continue;
        rows++;
        char name[16];
        unsigned long long keys;
        double fpr, lo, hi, model;
        ck_assert_int_eq(sscanf(line, "%15[^,],%llu,%*u,%*u,%lf,%lf,%lf,%lf", name, &keys, &fpr,
                                &lo, &hi, &model),
                         6);
        ck_assert(lo <= fpr && fpr <= hi);
        if (strcmp(name, "std") == 0 && keys == 20000) {
            /* at capacity the model says 1%; 200,000 probes measure it to
             * about +-0.05%: the model must lie inside the interval */
            ck_assert_double_ge(model, lo);
            ck_assert_double_le(model, hi);
            in_interval = 1;
        }
    }
    ck_assert_int_eq(rows, 6);
    ck_assert(in_interval);
    free(text);
    text = read_text(json);
    ck_assert_ptr_nonnull(
        strstr(text, "\"config\":\"cnt\",\"phase\":\"insert\",\"ops\":20000,\"keys\":20000"));
    ck_assert_ptr_nonnull(strstr(text, "\"model_fpr\":"));
    free(text);
    free(csv);
    free(json);
    tu_rmtree(dir);
}
END_TEST

/* Over simulated time: a 5-day window in 5 spans of a day, keys arriving
 * 400 a day for 20 days and seen again at 1, 5.5 and 6 days. A key that
 * came x days into its span is forgotten 6 - x days after it came. Nothing
 * comes back inside the window; at 5.5 days the keys of the second half of
 * their span come back (half), at 6 days the other half (the first half were
 * fetched again at 5.5 days: their window starts anew), less false
 * positives; a standard filter never re-emits; each share agrees with the
 * model within its 95% interval. */
START_TEST(simulated_time_measures_re_emission_against_the_model)
{
    char *text = csv_of("[workload]\n"
                        "arrivals = 400/d\n"
                        "duration = 20d\n"
                        "revisits = 1d 132h 6d\n"
                        "probes = 20000\n"
                        "checkpoints = 10%\n"
                        "win: variant=window window=5d generations=5 capacity=4000 fpr=0.01 "
                        "key=00112233445566778899aabbccddeeff\n"
                        "std: variant=standard capacity=8000 fpr=0.01 "
                        "key=00112233445566778899aabbccddeeff\n");
    int times = 0, revisit_rows = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char name[16], phase[16];
        unsigned long long age, revisits, again;
        double share, lo, hi, model, fpr, flo, fhi;
        if (sscanf(line,
                   "%15[^,],%*u,%*u,%*u,%lf,%lf,%lf,%*f,%*f,%*u,%*u,%*u,%*f,%*f,%15[^,],%*u,"
                   "%*f,%*u,%llu,%llu,%llu,%lf,%lf,%lf,%lf",
                   name, &fpr, &flo, &fhi, phase, &age, &revisits, &again, &share, &lo, &hi,
                   &model) != 12)
            continue; /* the header */
        if (strcmp(phase, "time") == 0) {
            times++;
            ck_assert_double_le(flo, 0.01); /* the window's bound holds over time */
            continue;
        }
        ck_assert_str_eq(phase, "revisit");
        revisit_rows++;
        ck_assert_uint_gt(revisits, 1000);
        const int win = strcmp(name, "win") == 0;
        if (!win || age == 86400000) {
            ck_assert_uint_eq(again, 0); /* never inside the window (nor ever, for std) */
            continue;
        }
        /* the model inside the measured interval, widened by the rate's share */
        ck_assert_msg(model >= lo - 0.01 && model <= hi + 0.01, "%s age %llu: %g not in [%g, %g]",
                      name, age, model, lo, hi);
        ck_assert_msg(share > 0.45 && share < 0.55, "%s age %llu: share %g", name, age, share);
    }
    ck_assert_int_eq(times, 2 * 10);
    ck_assert_int_eq(revisit_rows, 2 * 3);
    free(text);
}
END_TEST

START_TEST(bad_experiment_files_name_the_line)
{
    static const struct {
        const char *text, *expect;
    } bad[] = {
        {"[workload]\nkeys = 10\ncolour = blue\n[a]\nvariant=standard\n",
         "e.exp:3: unknown workload key 'colour'"},
        /* the line of the key at fault, named once (not the text's own "line 2") */
        {"[workload]\nkeys = 10\n[a]\nvariant=standard\nfpr=2\n",
         "e.exp:5: fpr: invalid value '2'"},
        {"[workload]\nkeys = ten\n[a]\nvariant=standard\n",
         "e.exp:2: bad value for workload key 'keys'"},
        {"variant=standard\n", "e.exp:1: 'variant=standard' outside any section"},
        {"[workload]\nkeys = 10\n[a\n", "e.exp:3: bad section header"},
        {"[workload]\nkeys = 10\n[a]\nvariant=standard\n[a]\nvariant=counting\n",
         "e.exp:5: configuration 'a' named twice"},
        {"[workload]\nkeys = 10\ncheckpoints = sometimes\n[a]\nvariant=standard\n",
         "e.exp:3: checkpoints"},
        {"[workload]\nprobes = 10\n[a]\nvariant=standard\n", "the workload needs keys"},
        {"[workload]\nkeys = 10\nphases = insert 50%, remove 10%\n[a]\nvariant=counting\n",
         "e.exp:3: phases: 'remove' is not insert or delete"},
        {"[workload]\nkeys = 100\nphases = insert 10, delete 11\n[a]\nvariant=counting\n",
         "e.exp:3: phases: a delete of more keys than are inserted"},
        {"[workload]\nkeys = 100\nphases = insert 60%, insert 50%\n[a]\nvariant=counting\n",
         "e.exp:3: phases: the inserts need more keys"},
        {"[workload]\nkeys = 100\nphases = insert 50%, delete 10%\n[c]\nvariant=counting\n"
         "[s]\nvariant=standard\n",
         "e.exp:6: configuration 's' cannot delete"},
        {"[workload]\narrivals = 10/w\nduration = 5d\n[a]\nvariant=window\n",
         "e.exp:2: arrivals: '10/w'"},
        {"[workload]\narrivals = 10/d\nduration = 5 days\n[a]\nvariant=window\n",
         "e.exp:3: duration: '5 days'"},
        {"[workload]\nkeys = 10\nrevisits = 3d\n[a]\nvariant=window\n",
         "revisits need simulated time"},
        {"[workload]\narrivals = 10/d\n[a]\nvariant=window\n", "needs both arrivals and duration"},
        {"[workload]\nkeys = 10\narrivals = 10/d\nduration = 5d\n[a]\nvariant=window\n",
         "drop keys"},
        {"[workload]\narrivals = 10/d\nduration = 5d\nrevisits = 1d 0d\n[a]\nvariant=window\n",
         "e.exp:4: revisits: '0d'"},
    };
    char *dir = tu_tmpdir();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *err;
        ck_assert_int_eq(run_exp(dir, bad[i].text, NULL, &err), 2);
        ck_assert_msg(strstr(err, bad[i].expect), "case %zu: '%s' lacks '%s'", i, err,
                      bad[i].expect);
        ck_assert_msg(!strstr(err, ": line "), "case %zu: '%s' names its place twice", i, err);
        free(err);
    }
    tu_rmtree(dir);
}
END_TEST

/* Insert, delete the older half, insert again: the rows follow the phases,
 * keys count what is in the filter, and after the deletes the counting
 * filter's measured rate still holds the model's (exact removal). */
START_TEST(phases_insert_delete_insert)
{
    char *text = csv_of("[workload]\n"
                        "keys = 40000\n"
                        "probes = 200000\n"
                        "phases = insert 50%, delete 25%, insert 50%\n"
                        "checkpoints = list 10000\n"
                        "cnt: variant=counting capacity=20000 fpr=0.01 "
                        "key=00112233445566778899aabbccddeeff\n");
    /* rows: 10000 (a checkpoint), 20000, 30000, 50000 (the phase ends) */
    static const struct {
        unsigned long long ops, keys;
        const char *phase;
    } want[] = {{10000, 10000, "insert"},
                {20000, 20000, "insert"},
                {30000, 10000, "delete"},
                {50000, 30000, "insert"}};
    int rows = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "config,", 7) == 0)
            continue;
        unsigned long long keys, ops;
        double fpr, lo, hi, model;
        char phase[16];
        ck_assert_int_eq(
            sscanf(line, "cnt,%llu,%*u,%*u,%lf,%lf,%lf,%lf,%*f,%*u,%*u,%*u,%*f,%*f,%15[a-z],%llu",
                   &keys, &fpr, &lo, &hi, &model, phase, &ops),
            7);
        ck_assert_int_lt(rows, 4);
        ck_assert_uint_eq(ops, want[rows].ops);
        ck_assert_uint_eq(keys, want[rows].keys);
        ck_assert_str_eq(phase, want[rows].phase);
        if (rows == 2) { /* after the deletes: 10000 keys, the model inside */
            ck_assert_double_ge(model, lo);
            ck_assert_double_le(model, hi);
        }
        rows++;
    }
    ck_assert_int_eq(rows, 4);
    free(text);
}
END_TEST

static int have_gnuplot(void)
{
    const char *path = getenv("PATH");
    char buf[4096];
    while (path && *path) {
        const size_t n = strcspn(path, ":");
        snprintf(buf, sizeof buf, "%.*s/gnuplot", (int)n, path);
        if (n && access(buf, X_OK) == 0)
            return 1;
        path += n + (path[n] == ':');
    }
    return 0;
}

/* --plot writes a PNG when gnuplot is installed; without it (PATH holding
 * no gnuplot) the command says how to get it, exits 3 and leaves no file,
 * while the CSV asked beside it is written. */
START_TEST(plot_writes_a_png_or_says_gnuplot_is_missing)
{
    char *dir = tu_tmpdir(), *png = tu_path(dir, "out.png"), *csv = tu_path(dir, "out.csv");
    const char *exp = "[workload]\nkeys = 5000\nprobes = 20000\n"
                      "a: variant=standard capacity=5000 fpr=0.01\n"
                      "b: variant=counting capacity=5000 fpr=0.01\n";
    const char *extra[] = {"--plot", png, "--csv", csv, NULL};
    char *err;
    size_t len;
    if (have_gnuplot()) {
        ck_assert_int_eq(run_exp(dir, exp, extra, &err), 0);
        free(err);
        uint8_t *bytes = tu_read_file(png, &len);
        ck_assert_uint_gt(len, 10000);
        ck_assert_int_eq(memcmp(bytes, "\x89PNG\r\n\x1a\n", 8), 0);
        /* the default size, from the PNG's header: 1600 x 640 */
        ck_assert_uint_eq((unsigned)bytes[18] << 8 | bytes[19], 1600);
        ck_assert_uint_eq((unsigned)bytes[22] << 8 | bytes[23], 640);
        free(bytes);
        unlink(png);
        unlink(csv);
        /* a size and a title asked; SVG for a name ending in .svg */
        const char *sized[] = {"--plot",  png,         "--plot-size", "800x300",
                               "--title", "T <&> 'q'", NULL};
        ck_assert_int_eq(run_exp(dir, exp, sized, &err), 0);
        free(err);
        bytes = tu_read_file(png, &len);
        ck_assert_uint_eq((unsigned)bytes[18] << 8 | bytes[19], 800);
        ck_assert_uint_eq((unsigned)bytes[22] << 8 | bytes[23], 300);
        free(bytes);
        char *svg = tu_path(dir, "out.svg");
        const char *as_svg[] = {"--plot", svg, "--title", "T <&> 'q'", NULL};
        ck_assert_int_eq(run_exp(dir, exp, as_svg, &err), 0);
        free(err);
        char *text = read_text(svg);
        ck_assert_msg(strstr(text, "<svg") && strstr(text, "T &lt;&amp;"), "%.300s", text);
        free(text);
        free(svg);
        const char *bad[] = {"--plot", png, "--plot-size", "800", NULL};
        ck_assert_int_eq(run_exp(dir, exp, bad, &err), 2);
        ck_assert_ptr_nonnull(strstr(err, "WIDTHxHEIGHT"));
        free(err);
        unlink(png);
    } else {
        fprintf(stderr, "[experiment] gnuplot is not installed: the PNG check is skipped\n");
    }
    child_path = "/nonexistent-bloomkit-test-dir";
    ck_assert_int_eq(run_exp(dir, exp, extra, &err), 3);
    child_path = NULL;
    ck_assert_ptr_nonnull(strstr(err, "--plot needs gnuplot"));
    ck_assert_ptr_nonnull(strstr(err, "gnuplot-nox"));
    free(err);
    ck_assert_int_ne(access(png, F_OK), 0);
    ck_assert_int_eq(access(csv, F_OK), 0);
    free(png);
    free(csv);
    tu_rmtree(dir);
}
END_TEST

/* Names are data, never gnuplot commands: experiment files named with
 * quotes, backslashes, line breaks, backquotes, macros and `system`, and
 * configurations with the quotes, backquotes and macros their names may
 * hold, draw their PNG and run nothing (issue 16: the file name went
 * unescaped into a title and ran `touch PWNED`). */
START_TEST(hostile_names_never_reach_gnuplot_as_commands)
{
    if (!have_gnuplot()) {
        fprintf(stderr, "[experiment] gnuplot is not installed: the hostile-name check runs in "
                        "the fuzz target only\n");
        return;
    }
    char *dir = tu_tmpdir(), *png = tu_path(dir, "out.png");
    const char *files[] = {"\"; system \"touch PWNED1\"; set title \"x.exp",
                           "a'; system 'touch PWNED2'; b'.exp",
                           "new\nsystem \"touch PWNED3\"\nline.exp", "`touch PWNED4`@x\\.exp"};
    const char *exp = "[workload]\nkeys = 2000\nprobes = 5000\n"
                      "it's: variant=standard capacity=2000 fpr=0.01\n"
                      "x'; system 'touch PWNED5'; y: variant=standard capacity=2000 fpr=0.02\n"
                      "`touch PWNED6` @m: variant=standard capacity=2000 fpr=0.05\n";
    const char *extra[] = {"--plot", png, NULL};
    for (int i = 0; i < 4; i++) {
        char *err;
        const int code = run_exp_named(dir, files[i], exp, extra, &err);
        ck_assert_msg(code == 0, "%s: exit %d: %s", files[i], code, err);
        free(err);
        size_t len;
        uint8_t *bytes = tu_read_file(png, &len);
        ck_assert_int_eq(memcmp(bytes, "\x89PNG\r\n\x1a\n", 8), 0);
        free(bytes);
        for (int p = 1; p <= 6; p++) {
            char pwned[4096];
            snprintf(pwned, sizeof pwned, "%s/PWNED%d", dir, p);
            ck_assert_msg(access(pwned, F_OK) != 0, "%s ran a command (PWNED%d)", files[i], p);
        }
    }
    free(png);
    tu_rmtree(dir);
}
END_TEST

/* Key and probe files are named relative to the .exp file (the command
 * runs elsewhere), and probes that are also keys are left out of the
 * false-positive count, saying how many. */
START_TEST(files_beside_the_exp_and_probes_that_are_keys)
{
    char *dir = tu_tmpdir(), sub[4096], path[4200], *err;
    snprintf(sub, sizeof sub, "%s/sub", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    char keys[16384] = "", probes[16384] = "";
    for (int i = 1; i <= 1000; i++)
        snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "k%d\n", i);
    for (int i = 990; i <= 1500; i++) /* k990 .. k1000: 11 of them inserted too */
        snprintf(probes + strlen(probes), sizeof probes - strlen(probes), "k%d\n", i);
    snprintf(path, sizeof path, "%s/keys.txt", sub);
    tu_write_file(path, (const uint8_t *)keys, strlen(keys));
    snprintf(path, sizeof path, "%s/probes.txt", sub);
    tu_write_file(path, (const uint8_t *)probes, strlen(probes));
    char csv[4200];
    snprintf(csv, sizeof csv, "%s/out.csv", dir);
    const char *extra[] = {"--csv", csv, NULL};
    ck_assert_int_eq(run_exp_named(dir, "sub/e.exp",
                                   "[workload]\nkeys_file = keys.txt\nprobes_file = probes.txt\n"
                                   "checkpoints = list 1000\n[a]\nvariant=standard capacity=1000 "
                                   "fpr=0.01\n",
                                   extra, &err),
                     0);
    ck_assert_msg(strstr(err, "11 probes are also among the keys inserted") &&
                      strstr(err, "500 probes remain"),
                  "%s", err);
    free(err);
    char *out = read_text(csv);
    ck_assert_msg(strstr(out, "\na,1000,500,"), "%s", out); /* config, keys, probes */
    free(out);
    tu_rmtree(dir);
}
END_TEST

Suite *experiment_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("experiment", "experiment", &tc);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, tiny_workload_writes_every_column_and_matches_the_model);
    tcase_add_test(tc, bad_experiment_files_name_the_line);
    tcase_add_test(tc, files_beside_the_exp_and_probes_that_are_keys);
    tcase_add_test(tc, simulated_time_measures_re_emission_against_the_model);
    tcase_add_test(tc, phases_insert_delete_insert);
    tcase_add_test(tc, plot_writes_a_png_or_says_gnuplot_is_missing);
    tcase_add_test(tc, hostile_names_never_reach_gnuplot_as_commands);
    return s;
}
