/* inputs.c - the record loop shared by add, check, remove and dedup: records
 * are copied out of the line reader into one growing arena (the reader's
 * buffer moves on the next read) and handed over INPUT_BATCH at a time. */
#define _DEFAULT_SOURCE
#include "inputs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The arena starts at this size and grows only to hold one record longer
 * than what it has room for. */
#define ARENA_START ((size_t)1 << 20)

typedef struct batcher {
    uint8_t *arena;
    size_t cap, used;
    size_t off[INPUT_BATCH]; /* record i at arena + off[i] (pointers move on growth) */
    record recs[INPUT_BATCH];
    size_t n;
} batcher;

static int flush(batcher *b, batch_fn fn, void *ctx, uint64_t *lines, progress *pg,
                 const bk_filter *f)
{
    if (b->n == 0)
        return 0;
    for (size_t i = 0; i < b->n; i++)
        b->recs[i].raw = b->arena + b->off[i];
    const int rc = fn(ctx, b->recs, b->n);
    *lines += b->n;
    progress_tick(pg, *lines, f);
    b->n = 0;
    b->used = 0;
    return rc;
}

/* Copy one record in; flushes first when the batch or the arena is full. */
static int push(batcher *b, const uint8_t *raw, size_t rawlen, size_t keylen, batch_fn fn,
                void *ctx, uint64_t *lines, progress *pg, const bk_filter *f, int *oom)
{
    int rc = 0;
    if (b->n == INPUT_BATCH || (b->n && b->cap - b->used < rawlen))
        rc = flush(b, fn, ctx, lines, pg, f);
    if (rc)
        return rc;
    if (b->cap - b->used < rawlen) { /* b->used is 0 here: one record longer than cap */
        size_t cap = b->cap;
        while (cap < rawlen)
            cap *= 2;
        uint8_t *grown = realloc(b->arena, cap);
        if (!grown) {
            *oom = 1;
            return EXIT_IO;
        }
        b->arena = grown;
        b->cap = cap;
    }
    memcpy(b->arena + b->used, raw, rawlen);
    b->off[b->n] = b->used;
    b->recs[b->n].rawlen = rawlen;
    b->recs[b->n].keylen = keylen;
    b->used += rawlen;
    b->n++;
    return 0;
}

static int run_one(const cli_opts *o, int fd, const char *name, batcher *b, batch_fn fn, void *ctx,
                   const bk_filter *f, uint64_t *lines, progress *pg)
{
    line_reader lr;
    if (lr_init(&lr, fd, o->null_sep ? '\0' : '\n') != 0)
        return cli_fail(o, EXIT_IO, "out of memory");
    lr.stop = &cli_stop;
    int rc = 0, oom = 0;
    while (rc == 0) {
        const uint8_t *raw;
        size_t rawlen, keylen;
        int r = lr_next_buffered(&lr, &raw, &rawlen, &keylen);
        if (r == -3) {
            /* The next read may block (a pipe from a slow producer): finish
             * the pending records and let fn flush its output first, so a
             * pipeline sees every answer to the records sent so far. */
            rc = flush(b, fn, ctx, lines, pg, f);
            if (rc == 0)
                rc = fn(ctx, NULL, 0);
            if (rc)
                break;
            r = lr_next(&lr, &raw, &rawlen, &keylen);
        }
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
        rc = push(b, raw, rawlen, keylen, fn, ctx, lines, pg, f, &oom);
        if (oom)
            rc = cli_fail(o, EXIT_IO, "%s: out of memory for a %zu-byte record", name, rawlen);
        if (rc == 0 && cli_stop)
            rc = INPUTS_STOPPED; /* after the records read so far */
    }
    /* What was read is processed, also when stopping on a signal; not after
     * an error, which ends the command. */
    if (rc == 0 || rc == INPUTS_STOPPED) {
        const int frc = flush(b, fn, ctx, lines, pg, f);
        if (frc)
            rc = frc;
    }
    b->n = 0;
    b->used = 0;
    lr_free(&lr);
    return rc;
}

int run_inputs(const cli_opts *o, char **inputs, int ninputs, batch_fn fn, void *ctx,
               const bk_filter *f, uint64_t *lines)
{
    static char *const stdin_only[] = {"-"};
    if (ninputs == 0) {
        inputs = (char **)stdin_only;
        ninputs = 1;
    }
    batcher b;
    memset(&b, 0, sizeof b);
    b.cap = ARENA_START;
    b.arena = malloc(b.cap);
    if (!b.arena)
        return cli_fail(o, EXIT_IO, "out of memory");
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
        rc = run_one(o, fd, is_stdin ? "standard input" : inputs[i], &b, fn, ctx, f, lines, &pg);
        if (!is_stdin)
            close(fd);
    }
    progress_done(&pg, *lines, f);
    free(b.arena);
    return rc;
}
