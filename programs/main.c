/*
 * main.c - bloomkit: the command-line tool. Dispatches to the commands
 * (CLI_COMMANDS in cli.h; their code in cmd_*.c); the CLI contract
 * (commands, flags, exit codes) is in docs/bloomkit.1.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit_tools.h"
#include "cli.h"

#define COMMAND_ROW(name, summary) {#name, &cmd_##name##_spec, cmd_##name, summary},
static const struct command {
    const char *name;
    const cli_spec *spec;
    int (*run)(cli_opts *o);
    const char *summary;
} commands[] = {CLI_COMMANDS(COMMAND_ROW)};

static int usage(FILE *to, int code)
{
    fprintf(to, "usage: bloomkit COMMAND [ARGS...]   (bloomkit COMMAND --help for details)\n\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(to, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(to, "\nExit status: 0 success, 1 check found nothing or remove met lines that\n"
                "were not in the filter, 2 usage or bad input, 3 I/O error or corrupt file,\n"
                "128+N stopped by signal N.\n");
    return code;
}

/* BLOOMKIT_NOW: the time every window filter of this run takes as now, in
 * milliseconds since the Unix epoch (replays and tests: a run at a time of
 * its own choosing, whatever the machine's speed); unset, the system's. */
static int64_t fixed_now_ms;

static int set_clock_from_env(void)
{
    const char *t = getenv("BLOOMKIT_NOW");
    if (!t)
        return EXIT_OK;
    const int64_t limit = INT64_C(1) << 61; /* the window's own edge */
    int64_t v = 0;
    const char *p = t;
    for (; *p >= '0' && *p <= '9' && v <= limit / 10; p++)
        v = v * 10 + (*p - '0');
    if (p == t || *p || v > limit) {
        fprintf(stderr,
                "bloomkit: BLOOMKIT_NOW: '%s' is not a time in milliseconds since the epoch "
                "(digits only, at most 2^61)\n",
                t);
        return EXIT_USAGE;
    }
    fixed_now_ms = v;
    bk_set_clock(cli_clock_at, &fixed_now_ms);
    return EXIT_OK;
}

static int run(int argc, char **argv)
{
    if (set_clock_from_env() != EXIT_OK)
        return EXIT_USAGE;
    if (argc < 2)
        return usage(stderr, EXIT_USAGE);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0)
        return usage(stdout, EXIT_OK);
    if (strcmp(argv[1], "--version") == 0) {
        printf("bloomkit %s (batches hash with %s)\n", bk_version(), bk_simd_path());
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(argv[1], commands[i].name) == 0) {
            cli_opts o;
            int rc = cli_parse(argc - 2, argv + 2, commands[i].spec, &o);
            if (rc != CLI_GO)
                return rc;
            rc = cli_resolve_secrets(&o);
            return rc ? rc : commands[i].run(&o);
        }
    fprintf(stderr, "bloomkit: unknown command '%s' (see bloomkit --help)\n", argv[1]);
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    const int rc = run(argc, argv);
    /* What went to stdout through stdio (reports, help, the version) must
     * have been written: a full disk or a closed pipe is an error, exit 3,
     * not a silent success. (Streams the commands write themselves report
     * their own errors.) */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        const int e = errno;
        if (rc == EXIT_OK || rc == EXIT_NOTHING) {
            fprintf(stderr, "bloomkit: standard output: %s\n", e ? strerror(e) : "write error");
            return EXIT_IO;
        }
    }
    return rc;
}
