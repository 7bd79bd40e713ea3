/* stream.c - line reader, output buffer and progress line (see stream.h). */
#define _DEFAULT_SOURCE
#include "stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#define READ_BUF       ((size_t)1 << 20)
#define OUT_BUF        ((size_t)1 << 20)
#define PROGRESS_EVERY 65536 /* lines between clock reads */

int lr_init(line_reader *lr, int fd, char delim)
{
    memset(lr, 0, sizeof *lr);
    lr->fd = fd;
    lr->delim = delim;
    lr->cap = READ_BUF;
    lr->buf = malloc(lr->cap);
    return lr->buf ? 0 : -1;
}

void lr_free(line_reader *lr)
{
    free(lr->buf);
    lr->buf = NULL;
}

/* Wait until lr->fd is readable (at once for regular files) or *lr->stop
 * is raised: -1 when stopping. SIGINT/SIGTERM/SIGHUP stay blocked from the test of
 * the flag until pselect unblocks them atomically for the wait. */
static int wait_readable(line_reader *lr)
{
    if (lr->fd >= FD_SETSIZE)
        return *lr->stop ? -1 : 0;
    sigset_t stops, before;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGHUP);
    if (sigprocmask(SIG_BLOCK, &stops, &before) != 0)
        return *lr->stop ? -1 : 0;
    int stopping = *lr->stop != 0;
    while (!stopping) {
        fd_set in;
        FD_ZERO(&in);
        FD_SET(lr->fd, &in);
        const int r = pselect(lr->fd + 1, &in, NULL, NULL, NULL, &before);
        stopping = *lr->stop != 0;
        if (r >= 0 || errno != EINTR)
            break; /* readable, or an error read() will report */
    }
    sigprocmask(SIG_SETMASK, &before, NULL);
    return stopping ? -1 : 0;
}

/* Make room and read more; 0 ok (maybe eof set), -1 error, -2 interrupted. */
static int fill(line_reader *lr)
{
    if (lr->start > 0) {
        memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
        lr->end -= lr->start;
        lr->start = 0;
    }
    if (lr->end == lr->cap) { /* one record fills the buffer: grow it */
        uint8_t *nb = realloc(lr->buf, lr->cap * 2);
        if (!nb) {
            errno = ENOMEM;
            return -1;
        }
        lr->buf = nb;
        lr->cap *= 2;
    }
    if (lr->stop && wait_readable(lr) != 0)
        return -2;
    const ssize_t r = read(lr->fd, lr->buf + lr->end, lr->cap - lr->end);
    if (r < 0)
        return errno == EINTR ? -2 : -1;
    if (r == 0)
        lr->eof = 1;
    lr->end += (size_t)r;
    return 0;
}

static int next(line_reader *lr, const uint8_t **raw, size_t *rawlen, size_t *keylen, int may_read)
{
    size_t scanned = 0; /* bytes already searched, so long records are scanned once */
    for (;;) {
        const uint8_t *from = lr->buf + lr->start + scanned;
        const uint8_t *nl = memchr(from, lr->delim, lr->end - lr->start - scanned);
        if (nl || (lr->eof && lr->end > lr->start)) {
            const uint8_t *rec = lr->buf + lr->start;
            const size_t len = nl ? (size_t)(nl - rec) + 1 : lr->end - lr->start;
            size_t key = nl ? len - 1 : len;
            if (lr->delim == '\n' && key > 0 && rec[key - 1] == '\r')
                key--;
            *raw = rec;
            *rawlen = len;
            *keylen = key;
            lr->start += len;
            return 1;
        }
        if (lr->eof)
            return 0;
        if (!may_read)
            return -3;
        scanned = lr->end - lr->start;
        const int rc = fill(lr);
        if (rc != 0)
            return rc;
    }
}

int lr_next(line_reader *lr, const uint8_t **raw, size_t *rawlen, size_t *keylen)
{
    return next(lr, raw, rawlen, keylen, 1);
}

int lr_next_buffered(line_reader *lr, const uint8_t **raw, size_t *rawlen, size_t *keylen)
{
    return next(lr, raw, rawlen, keylen, 0);
}

int out_init(out_buf *o, int fd)
{
    memset(o, 0, sizeof *o);
    o->fd = fd;
    o->cap = OUT_BUF;
    o->buf = malloc(o->cap);
    return o->buf ? 0 : -1;
}

/* Write all of p unless an earlier write failed; remembers the first errno. */
static void write_fully(out_buf *o, const uint8_t *p, size_t n)
{
    while (n > 0 && !o->err) {
        const ssize_t w = write(o->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            o->err = w < 0 ? errno : EIO;
        else {
            p += w;
            n -= (size_t)w;
        }
    }
}

int out_flush(out_buf *o)
{
    write_fully(o, o->buf, o->len);
    o->len = 0;
    return o->err ? -1 : 0;
}

int out_write(out_buf *o, const void *p, size_t n)
{
    if (o->err)
        return -1;
    if (o->len + n > o->cap && out_flush(o) != 0)
        return -1;
    if (n > o->cap) { /* a record larger than the buffer goes straight out */
        write_fully(o, p, n);
        return o->err ? -1 : 0;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    return 0;
}

void out_free(out_buf *o)
{
    free(o->buf);
    o->buf = NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_init(progress *p, int quiet, int force)
{
    memset(p, 0, sizeof *p);
    p->enabled = !quiet && (force || isatty(STDERR_FILENO));
    p->start = p->last = now_s();
    p->next = PROGRESS_EVERY;
    /* BLOOMKIT_PROGRESS_DELAY: seconds before the line appears (default 1). */
    const char *d = getenv("BLOOMKIT_PROGRESS_DELAY");
    p->delay = d ? strtod(d, NULL) : 1.0;
    if (!(p->delay >= 0.0))
        p->delay = 1.0;
}

static void show(progress *p, uint64_t lines, const bk_filter *f, double t)
{
    bk_filter_stats st;
    bk_stats(f, &st);
    const double dt = t - p->start;
    fprintf(stderr,
            "\r%llu line%s, %.0f lines/s, %llu key%s, fill %.3f, est. rate %.2e, %.1f MiB, "
            "%.1f bits/key, rate bound %.2e   ",
            (unsigned long long)lines, lines == 1 ? "" : "s", dt > 0 ? (double)lines / dt : 0.0,
            (unsigned long long)st.keys, st.keys == 1 ? "" : "s", st.fill, st.est_fpr,
            (double)st.bytes / 1048576.0, st.bits_per_key, st.rate_bound);
    fflush(stderr);
    p->shown = 1;
    p->last = t;
}

void progress_tick(progress *p, uint64_t lines, const bk_filter *f)
{
    if (!p->enabled || lines < p->next)
        return;
    p->next = lines + PROGRESS_EVERY;
    const double t = now_s();
    if (t - p->start >= p->delay && t - p->last >= 0.5)
        show(p, lines, f, t);
}

void progress_work(progress *p, uint64_t done, uint64_t total, const char *unit)
{
    if (!p->enabled)
        return;
    const double t = now_s();
    if (t - p->start < p->delay || (p->shown && t - p->last < 0.5 && done != total))
        return;
    if (total)
        fprintf(stderr, "\r%llu of %llu %s (%.0f%%)   ", (unsigned long long)done,
                (unsigned long long)total, unit, 100.0 * (double)done / (double)total);
    else
        fprintf(stderr, "\r%llu %s   ", (unsigned long long)done, unit);
    fflush(stderr);
    p->shown = 1;
    p->last = t;
}

void progress_end(progress *p)
{
    if (p->enabled && p->shown)
        fputc('\n', stderr);
}

void progress_done(progress *p, uint64_t lines, const bk_filter *f)
{
    if (!p->enabled)
        return;
    if (!p->shown && now_s() - p->start < p->delay)
        return;
    show(p, lines, f, now_s());
    fputc('\n', stderr);
}
