/* inputs.c - the record loop shared by add, check, remove and dedup: records
 * are copied out of the line reader into one growing arena (the reader's
 * buffer moves on the next read) and handed over a batch at a time. */
#define _DEFAULT_SOURCE
#include "inputs.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The arena starts at this size, or room for a batch of records of this
 * many bytes (a long URL) if more, and grows only to hold one record longer
 * than what it has room for. */
#define ARENA_START      ((size_t)1 << 20)
#define ARENA_PER_RECORD 128

/* One batch's records: an arena and where each record starts in it. */
typedef struct batch_buf {
    uint8_t *arena;
    size_t cap, used;
    size_t *off;  /* record i at arena + off[i] (pointers move on growth) */
    record *recs; /* max of each */
} batch_buf;

/* One buffer more than the calls a batch's records must outlive theirs by
 * (the next batches are read into the others). */
typedef struct batcher {
    batch_buf buf[INPUT_OVERLAP_MAX + 1];
    unsigned cur, nbufs;
    size_t n, max;
} batcher;

static int flush(batcher *b, batch_fn fn, void *ctx, uint64_t *lines, progress *pg,
                 const bk_filter *f)
{
    if (b->n == 0)
        return 0;
    batch_buf *bb = &b->buf[b->cur];
    for (size_t i = 0; i < b->n; i++)
        bb->recs[i].raw = bb->arena + bb->off[i];
    const int rc = fn(ctx, bb->recs, b->n);
    *lines += b->n;
    progress_tick(pg, *lines, f);
    b->n = 0;
    b->cur = (b->cur + 1) % b->nbufs;
    b->buf[b->cur].used = 0;
    return rc;
}

/* Copy one record in; flushes first when the batch or the arena is full. */
static int push(batcher *b, const uint8_t *raw, size_t rawlen, size_t keylen, batch_fn fn,
                void *ctx, uint64_t *lines, progress *pg, const bk_filter *f, int *oom)
{
    int rc = 0;
    if (b->n == b->max || (b->n && b->buf[b->cur].cap - b->buf[b->cur].used < rawlen))
        rc = flush(b, fn, ctx, lines, pg, f);
    if (rc)
        return rc;
    batch_buf *bb = &b->buf[b->cur];
    if (bb->cap - bb->used < rawlen) { /* bb->used is 0 here: one record longer than cap */
        size_t cap = bb->cap;
        while (cap < rawlen)
            cap *= 2;
        uint8_t *grown = realloc(bb->arena, cap);
        if (!grown) {
            *oom = 1;
            return EXIT_IO;
        }
        bb->arena = grown;
        bb->cap = cap;
    }
    memcpy(bb->arena + bb->used, raw, rawlen);
    bb->off[b->n] = bb->used;
    bb->recs[b->n].rawlen = rawlen;
    bb->recs[b->n].keylen = keylen;
    bb->used += rawlen;
    b->n++;
    return 0;
}

/* 1 when a read of fd returns at once: a regular file (regular: known once
 * per input), or anything with data (or its end) waiting. */
static int input_ready(int fd, int regular)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return regular || poll(&p, 1, 0) > 0;
}

static int run_one(const cli_opts *o, int fd, const char *name, batcher *b, batch_fn fn, void *ctx,
                   const bk_filter *f, uint64_t *lines, progress *pg)
{
    line_reader lr;
    if (lr_init(&lr, fd, o->null_sep ? '\0' : '\n') != 0)
        return cli_fail(o, EXIT_IO, "out of memory");
    lr.stop = &cli_stop;
    struct stat st;
    const int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    int rc = 0, oom = 0;
    while (rc == 0) {
        const uint8_t *raw;
        size_t rawlen, keylen;
        int r = lr_next_buffered(&lr, &raw, &rawlen, &keylen);
        if (r == -3) {
            /* The next read may block (a pipe from a slow producer): finish
             * the pending records and let fn flush its output first, so a
             * pipeline sees every answer to the records sent so far. A
             * regular file, or a pipe with data waiting, does not block:
             * the batch goes on filling. */
            if (!input_ready(fd, regular)) {
                rc = flush(b, fn, ctx, lines, pg, f);
                if (rc == 0)
                    rc = fn(ctx, NULL, 0);
                if (rc)
                    break;
            }
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
    b->buf[b->cur].used = 0;
    lr_free(&lr);
    return rc;
}

int run_inputs(const cli_opts *o, char **inputs, int ninputs, batch_fn fn, void *ctx,
               const bk_filter *f, uint64_t *lines)
{
    return run_inputs_n(o, inputs, ninputs, INPUT_BATCH, 0, fn, ctx, f, lines);
}

static void free_bufs(batcher *b)
{
    for (unsigned i = 0; i < INPUT_OVERLAP_MAX + 1; i++) {
        free(b->buf[i].arena);
        free(b->buf[i].off);
        free(b->buf[i].recs);
    }
}

int run_inputs_n(const cli_opts *o, char **inputs, int ninputs, size_t batch, unsigned overlap,
                 batch_fn fn, void *ctx, const bk_filter *f, uint64_t *lines)
{
    static char *const stdin_only[] = {"-"};
    if (ninputs == 0) {
        inputs = (char **)stdin_only;
        ninputs = 1;
    }
    batcher b;
    memset(&b, 0, sizeof b);
    b.max = batch;
    b.nbufs = (overlap < INPUT_OVERLAP_MAX ? overlap : INPUT_OVERLAP_MAX) + 1;
    for (unsigned i = 0; i < b.nbufs; i++) {
        batch_buf *bb = &b.buf[i];
        bb->cap = batch * ARENA_PER_RECORD > ARENA_START ? batch * ARENA_PER_RECORD : ARENA_START;
        bb->arena = malloc(bb->cap);
        bb->off = malloc(batch * sizeof *bb->off);
        bb->recs = malloc(batch * sizeof *bb->recs);
        if (!bb->arena || !bb->off || !bb->recs) {
            free_bufs(&b);
            return cli_fail(o, EXIT_IO, "out of memory");
        }
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
        rc = run_one(o, fd, is_stdin ? "standard input" : inputs[i], &b, fn, ctx, f, lines, &pg);
        if (!is_stdin)
            close(fd);
    }
    if (overlap) { /* the last batches' calls may still hold records: let them finish */
        const int drc = fn(ctx, NULL, 0);
        if (drc && (rc == 0 || rc == INPUTS_STOPPED))
            rc = drc;
    }
    progress_done(&pg, *lines, f);
    free_bufs(&b);
    return rc;
}
