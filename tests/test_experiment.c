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
#include <sys/wait.h>
#include <unistd.h>

#include "suites.h"
#include "testutil.h"

#ifndef BK_CLI_PATH
#define BK_CLI_PATH "build/bloomkit"
#endif

/* Run `bloomkit experiment --config-file exp [extra...]`; stderr into err. */
static int run_exp(const char *dir, const char *exp_text, const char *const *extra, char **err)
{
    char exp[4096], errp[4096];
    snprintf(exp, sizeof exp, "%s/e.exp", dir);
    snprintf(errp, sizeof errp, "%s/stderr", dir);
    tu_write_file(exp, (const uint8_t *)exp_text, strlen(exp_text));
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const int o = open("/dev/null", O_WRONLY),
                  e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(99);
        const char *argv[16] = {BK_CLI_PATH, "experiment", "--config-file", exp};
        int n = 4;
        for (int i = 0; extra && extra[i] && n < 15; i++)
            argv[n++] = extra[i];
        argv[n] = NULL;
        execv(BK_CLI_PATH, (char *const *)argv);
        _exit(98);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    size_t len;
    *err = (char *)tu_read_file(errp, &len);
    (*err)[len] = '\0';
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
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
    size_t len;
    char *text = (char *)tu_read_file(csv, &len);
    text[len] = '\0';
    ck_assert_ptr_nonnull(strstr(text, "config,keys,probes,false_positives,fpr,fpr_ci_low,"
                                       "fpr_ci_high,model_fpr,bits_per_key,bytes,slices,"
                                       "saturated,ns_per_add,ns_per_lookup\n"));
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
    text = (char *)tu_read_file(json, &len);
    text[len] = '\0';
    ck_assert_ptr_nonnull(strstr(text, "\"config\":\"cnt\",\"keys\":20000"));
    ck_assert_ptr_nonnull(strstr(text, "\"model_fpr\":"));
    free(text);
    free(csv);
    free(json);
    tu_rmtree(dir);
}
END_TEST

START_TEST(bad_experiment_files_name_the_line)
{
    static const struct {
        const char *text, *expect;
    } bad[] = {
        {"[workload]\nkeys = 10\ncolour = blue\n[a]\nvariant=standard\n",
         "e.exp:3: unknown workload key 'colour'"},
        {"[workload]\nkeys = 10\n[a]\nvariant=standard\nfpr=2\n", "e.exp:3: "},
        {"[workload]\nkeys = ten\n[a]\nvariant=standard\n",
         "e.exp:2: bad value for workload key 'keys'"},
        {"variant=standard\n", "e.exp:1: 'variant=standard' outside any section"},
        {"[workload]\nkeys = 10\n[a\n", "e.exp:3: bad section header"},
        {"[workload]\nkeys = 10\n[a]\nvariant=standard\n[a]\nvariant=counting\n",
         "e.exp:5: configuration 'a' named twice"},
        {"[workload]\nkeys = 10\ncheckpoints = sometimes\n[a]\nvariant=standard\n",
         "e.exp:3: checkpoints"},
        {"[workload]\nprobes = 10\n[a]\nvariant=standard\n", "the workload needs keys"},
    };
    char *dir = tu_tmpdir();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *err;
        ck_assert_int_eq(run_exp(dir, bad[i].text, NULL, &err), 2);
        ck_assert_msg(strstr(err, bad[i].expect), "case %zu: '%s' lacks '%s'", i, err,
                      bad[i].expect);
        free(err);
    }
    tu_rmtree(dir);
}
END_TEST

Suite *experiment_suite(void)
{
    Suite *s = suite_create("experiment");
    TCase *tc = tcase_create("experiment");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, tiny_workload_writes_every_column_and_matches_the_model);
    tcase_add_test(tc, bad_experiment_files_name_the_line);
    suite_add_tcase(s, tc);
    return s;
}
