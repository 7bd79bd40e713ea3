/* inputs.h - run a function over the records of the INPUT arguments (or
 * stdin), a batch at a time. */
#ifndef BK_CLI_INPUTS_H
#define BK_CLI_INPUTS_H

#include "cli.h"
#include "stream.h"

/* One record: the raw bytes as read (terminator included if there was one)
 * and the length of its key (without terminator and, for '\n' records, '\r'). */
typedef struct record {
    const uint8_t *raw;
    size_t rawlen, keylen;
} record;

/* Records handed over at once: enough for the batch calls to overlap many
 * keys' cache misses (bk_add_batch, bk_contains_batch). */
#define INPUT_BATCH 256
/* Records handed over at once to a batch call on several threads
 * (bk_add_batch_mt): enough that handing a batch between threads is a small
 * part of its work (measured: 8,192 to 65,536 within noise; 32,768 never
 * worse). */
#define INPUT_BATCH_MT 32768

/* Called with 1 .. INPUT_BATCH (or run_inputs_n's batch) consecutive
 * records, in input order; the records are valid only during the call
 * (run_inputs_n's overlap: and the next `overlap` calls). Called with (NULL,
 * 0) before a
 * read that may block, every earlier record having been handed over: the
 * moment to flush output. Returns 0 to go on or an exit code to stop with. */
typedef int (*batch_fn)(void *ctx, const record *recs, size_t n);

/* The value run_inputs returns when SIGINT/SIGTERM stopped it (after the
 * current batch, which is processed whole). */
#define INPUTS_STOPPED (-1)

/* Feed every record of every input (no inputs or "-": stdin) to fn, in order
 * and in batches (a batch never spans two inputs). *lines counts the records;
 * the progress line follows f. Returns 0, an exit code (a missing input: 3),
 * or INPUTS_STOPPED. */
int run_inputs(const cli_opts *o, char **inputs, int ninputs, batch_fn fn, void *ctx,
               const bk_filter *f, uint64_t *lines);
/* Calls a batch's records may outlive theirs by, at most. */
#define INPUT_OVERLAP_MAX 2

/* run_inputs with batches of up to `batch` records (>= 1) and records that
 * stay valid until the `overlap`-th call after theirs returns (0 ..
 * INPUT_OVERLAP_MAX: the next batches are read into buffers of their own),
 * so fn may hand a batch to another thread and finish it during a later
 * call. */
int run_inputs_n(const cli_opts *o, char **inputs, int ninputs, size_t batch, unsigned overlap,
                 batch_fn fn, void *ctx, const bk_filter *f, uint64_t *lines);

#endif
