/* inputs.h - run a per-line function over the INPUT arguments (or stdin). */
#ifndef BK_CLI_INPUTS_H
#define BK_CLI_INPUTS_H

#include "cli.h"
#include "stream.h"

/* Called per record with the raw bytes and the key length; returns 0 to go
 * on or an exit code to stop with. */
typedef int (*line_fn)(void *ctx, const uint8_t *raw, size_t rawlen, size_t keylen);

/* The value run_inputs returns when SIGINT/SIGTERM stopped it (after the
 * current line). */
#define INPUTS_STOPPED (-1)

/* Feed every record of every input (no inputs or "-": stdin) to fn, in order.
 * Records end in '\n' (or '\0' with --null). *lines counts them; the
 * progress line follows f. Returns 0, an exit code (a missing input: 3), or
 * INPUTS_STOPPED. */
int run_inputs(const cli_opts *o, char **inputs, int ninputs, line_fn fn, void *ctx,
               const bk_filter *f, uint64_t *lines);

#endif
