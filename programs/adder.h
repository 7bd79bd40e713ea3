/* adder.h - bk_add_batch_mt on a thread of its own, so that the command reads
 * the next batch and writes the last one's answers while this one is added. */
#ifndef BK_CLI_ADDER_H
#define BK_CLI_ADDER_H

#include <stddef.h>

#include "bloomkit.h"

typedef struct adder adder;

/* A thread that adds batches to f on the pool w (both borrowed: they must
 * outlive the adder). NULL when out of memory or the thread cannot start. */
adder *adder_start(bk_filter *f, bk_workers *w);

/* Batches submitted and not yet waited for, at most: one being added and
 * one queued behind it, so the thread goes from one to the next without
 * waiting for the caller. */
#define ADDER_DEPTH 2

/* Queue keys[0..n) to be added after the batches before it (the arrays stay
 * untouched by the caller until its adder_wait returns). At most
 * ADDER_DEPTH batches submitted and not waited for. Once a batch has failed,
 * those after it are not added at all (each result and the return: that
 * batch's error), so the filter holds nothing past the failure the caller
 * is told of first. */
void adder_submit(adder *a, const void *const *keys, const size_t *lens, size_t n, int *results);

/* A step the adding thread runs on a batch before adding it (filling in
 * keys the caller left to it): BK_OK, or an error code that fails the batch
 * as a failed add would (nothing of it added; detail: bk_last_error() or
 * bk_strerror of the code). */
typedef int (*adder_prep_fn)(void *ctx);

/* adder_submit with prep(ctx) run on the adding thread first; ctx stays
 * valid until the batch's adder_wait returns. */
void adder_submit_prep(adder *a, const void *const *keys, const size_t *lens, size_t n,
                       int *results, adder_prep_fn prep, void *ctx);

/* Lend the calling thread to the batch being added (bk_workers_help) until
 * none of its work is left to take, without waiting for it to end: 1 if it
 * took part, else 0. */
int adder_help(adder *a);

/* Wait for the oldest batch not yet waited for: bk_add_batch_mt's return;
 * *detail (if not NULL): its bk_last_error() on the adding thread when it
 * failed, else "" (valid until the next adder_wait). */
int adder_wait(adder *a, const char **detail);

/* Stop and join the thread, after the batches submitted; NULL: nothing. */
void adder_stop(adder *a);

#endif
