/* inputs.c - the record loop shared by add, check, remove and dedup. */
#define _DEFAULT_SOURCE
#include "inputs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static int run_one(const cli_opts *o, int fd, const char *name, line_fn fn, void *ctx,
                   const bk_filter *f, uint64_t *lines, progress *pg)
{
    line_reader lr;
    if (lr_init(&lr, fd, o->null_sep ? '\0' : '\n') != 0)
        return cli_fail(o, EXIT_IO, "out of memory");
    int rc = 0;
    while (rc == 0) {
        const uint8_t *raw;
        size_t rawlen, keylen;
        const int r = lr_next(&lr, &raw, &rawlen, &keylen);
        if (r == 0)
            break;
        if (r == -2) {
            if (cli_stop)
                rc = INPUTS_STOPPED;
            continue;
        }
        if (r < 0) {
            rc = cli_fail(o, EXIT_IO, "%s: %s", name, strerror(errno));
            break;
        }
        rc = fn(ctx, raw, rawlen, keylen);
        ++*lines;
        progress_tick(pg, *lines, f);
        if (rc == 0 && cli_stop)
            rc = INPUTS_STOPPED; /* the current line is finished */
    }
    lr_free(&lr);
    return rc;
}

int run_inputs(const cli_opts *o, char **inputs, int ninputs, line_fn fn, void *ctx,
               const bk_filter *f, uint64_t *lines)
{
    static char *const stdin_only[] = {"-"};
    if (ninputs == 0) {
        inputs = (char **)stdin_only;
        ninputs = 1;
    }
    progress pg;
    progress_init(&pg, o->quiet, o->progress);
    int rc = 0;
    for (int i = 0; rc == 0 && i < ninputs; i++) {
        const int is_stdin = strcmp(inputs[i], "-") == 0;
        const int fd = is_stdin ? STDIN_FILENO : open(inputs[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            rc = cli_fail(o, EXIT_IO, "%s: %s", inputs[i], strerror(errno));
            break;
        }
        rc = run_one(o, fd, is_stdin ? "standard input" : inputs[i], fn, ctx, f, lines, &pg);
        if (!is_stdin)
            close(fd);
    }
    progress_done(&pg, *lines, f);
    return rc;
}
