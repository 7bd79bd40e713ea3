/*
 * stream.h - the command's I/O: a line reader that never allocates per line,
 * a large output buffer, and the progress line.
 */
#ifndef BK_CLI_STREAM_H
#define BK_CLI_STREAM_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomkit.h"

/* Reads records ending in `delim` ('\n' or '\0') from fd through one buffer
 * (1 MiB, doubled only while a single record is longer: amortised, never per
 * line). A record is returned whole however long it is. */
typedef struct line_reader {
    int fd;
    char delim;
    uint8_t *buf;
    size_t cap, start, end;
    int eof;
    /* When set: a flag a SIGINT/SIGTERM handler raises. A read that would
     * block then waits with those signals deliverable only inside pselect,
     * so a signal that arrives at any moment before the wait stops it
     * (no lost wake-up between testing the flag and blocking). */
    volatile sig_atomic_t *stop;
} line_reader;

int lr_init(line_reader *lr, int fd, char delim); /* 0, or -1 (ENOMEM) */
void lr_free(line_reader *lr);

/* Next record: 1 and (*raw, *rawlen) = the bytes as read, terminator
 * included if there was one; *keylen = length of the key: the record without
 * its terminator and, for '\n' records, without a '\r' before it (also when
 * the last record has no terminator: a CRLF file whose last line lacks its
 * LF). 0 at end of
 * input, -1 on a read error (errno), -2 when a signal interrupted a read
 * (call again unless the command is stopping). */
int lr_next(line_reader *lr, const uint8_t **raw, size_t *rawlen, size_t *keylen);
/* The same without reading: -3 when the next record is not (all) buffered,
 * so the caller can finish its pending work before a read that may block. */
int lr_next_buffered(line_reader *lr, const uint8_t **raw, size_t *rawlen, size_t *keylen);

/* Buffered writes to fd (1 MiB). After an error every call fails. */
typedef struct out_buf {
    int fd;
    uint8_t *buf;
    size_t len, cap;
    int err; /* errno of the first failure, 0 if none */
} out_buf;

int out_init(out_buf *o, int fd);
int out_write(out_buf *o, const void *p, size_t n); /* 0 or -1 */
int out_flush(out_buf *o);                          /* 0 or -1 */
void out_free(out_buf *o);

/* One updating line on stderr: lines, lines/s, keys, fill, estimated rate,
 * the filter's memory, its bits a key so far and the rate it still bounds
 * (bk_filter_stats). Shown when enabled and the command has run longer than
 * a second. */
typedef struct progress {
    int enabled;
    int shown;
    double start, last;
    double delay;  /* seconds before the first display */
    uint64_t next; /* line count at which to look at the clock again */
} progress;

void progress_init(progress *p, int quiet, int force);
/* Cheap to call per line or per batch: looks at the clock every 64 Ki lines. */
void progress_tick(progress *p, uint64_t lines, const bk_filter *f);
/* Final figures and a newline if the line was ever shown. */
void progress_done(progress *p, uint64_t lines, const bk_filter *f);
/* For work of a known size: "done of total UNIT (x%)" (total 0: "done
 * UNIT"), at most twice a second; progress_end ends the line if shown. */
void progress_work(progress *p, uint64_t done, uint64_t total, const char *unit);
void progress_end(progress *p);

#endif
