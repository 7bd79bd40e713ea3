/*
 * main.c - bloomkit: the command-line tool. Dispatches to the commands
 * (CLI_COMMANDS in cli.h; their code in cmd_*.c); the CLI contract
 * (commands, flags, exit codes) is in docs/bloomkit.1.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

static int run(int argc, char **argv)
{
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
