/*
 * exp_time.c - an experiment over simulated time (experiment.h): keys arrive
 * at a steady rate and are seen again at chosen ages, under a clock the run
 * drives itself (bk_set_clock), so a 90-day crawl takes seconds.
 *
 * Key i arrives at START + i / rate; its revisit at age a comes at that time
 * plus a. Every arrival and revisit is one bk_add, in time order. The model
 * beside the measurements is the exact one of a key's life (the property
 * tests' model): each key's counted add is the last add that reported it
 * new; a window forgets a key counted at time t from the end of its span
 * plus the window, (floor(t / span) + G + 1) x span, and never before; a
 * filter without a window never forgets. A revisit after that is expected
 * new unless a false positive answers it (at most the configured rate); one
 * before it is expected "seen". With refresh=1 every sighting counts. A key
 * whose arrival, or a revisit after it was forgotten, met a false positive
 * leaves the count (where its bits are then, the model cannot say).
 */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "experiment.h"

/* 2026-01-01 00:00 UTC: spans are numbered from the epoch, so a start on a
 * day boundary makes the run's days the filter's. */
#define START_MS INT64_C(1767225600000)

/* Revisit counts of one age. */
typedef struct age_stats {
    uint64_t revisits, reemitted, forgotten;
} age_stats;

typedef struct sim {
    const experiment *e;
    const bk_config *cfg;
    bk_filter *f;
    int64_t now, span; /* span 0: the filter never forgets */
    int64_t *counted;  /* key i's counted add, ms; -1: none (a false positive met it) */
    age_stats ages[EXP_MAX_AGES];
} sim;

/* When a key counted at t is forgotten (the model). */
static int64_t forgotten_at(const sim *s, int64_t t)
{
    if (!s->span)
        return INT64_MAX;
    return (t / s->span + (int64_t)s->cfg->generations + 1) * s->span;
}

/* Time of event k of stream j (0: arrivals, j > 0: revisits at age j - 1). */
static int64_t event_time(const sim *s, int j, uint64_t k)
{
    const int64_t shift = j ? (int64_t)s->e->ages_ms[j - 1] : 0;
    return START_MS + (int64_t)floor((double)k / s->e->arrivals_per_ms) + shift;
}

static int one_event(sim *s, int j, size_t k, const exp_keys *ins)
{
    s->now = event_time(s, j, k);
    const int rc = bk_add(s->f, ins->bytes + ins->off[k], ins->off[k + 1] - ins->off[k]);
    if (rc < 0)
        return rc;
    if (j == 0) {
        s->counted[k] = rc == 1 ? s->now : -1;
        return BK_OK;
    }
    if (s->counted[k] < 0)
        return BK_OK; /* never counted: its arrival met a false positive */
    age_stats *a = &s->ages[j - 1];
    const int forgotten = s->now >= forgotten_at(s, s->counted[k]);
    a->revisits++;
    a->forgotten += forgotten;
    a->reemitted += rc == 1;
    if (rc == 1 || s->cfg->refresh)
        s->counted[k] = s->now;
    else if (forgotten)
        s->counted[k] = -1; /* a false positive answered: its bits stay in a newer generation
                               for a time the model cannot tell, so it leaves the count */
    return BK_OK;
}

static void checkpoint_row(sim *s, uint64_t at_ms, uint64_t events, const exp_keys *probes,
                           exp_row *r, const char *name)
{
    s->now = START_MS + (int64_t)at_ms;
    bk_filter_stats st;
    bk_stats(s->f, &st);
    memset(r, 0, sizeof *r);
    r->config = name;
    r->phase = "time";
    r->ops = events;
    r->time_ms = at_ms;
    r->keys = st.keys; /* what the filter holds: a window's recent keys */
    exp_measure_row(s->f, probes, r);
}

static void revisit_rows(const sim *s, exp_row *rows, int *nrows, const char *name)
{
    for (int j = 0; j < s->e->nages; j++) {
        const age_stats *a = &s->ages[j];
        exp_row *r = &rows[(*nrows)++];
        memset(r, 0, sizeof *r);
        r->config = name;
        r->phase = "revisit";
        r->age_ms = s->e->ages_ms[j];
        r->revisits = a->revisits;
        r->reemitted = a->reemitted;
        if (a->revisits) {
            r->reemit = (double)a->reemitted / (double)a->revisits;
            exp_wilson(a->reemitted, a->revisits, &r->reemit_lo, &r->reemit_hi);
            r->reemit_model = (double)a->forgotten * (1.0 - s->cfg->fpr) / (double)a->revisits;
        }
    }
}

/* The span of f's generations (0 for a filter without a window). */
static int64_t span_of(const bk_filter *f)
{
    bk_slice_stats si;
    if (bk_slice_info(f, 0, &si, sizeof si) != BK_OK)
        return 0;
    return si.span_end_ms - si.span_start_ms;
}

int exp_run_timed(const experiment *e, int ci, const exp_keys *ins, const exp_keys *probes,
                  exp_row *rows, int *nrows)
{
    sim s;
    memset(&s, 0, sizeof s);
    s.e = e;
    s.cfg = &e->cfgs[ci];
    s.now = START_MS;
    const size_t n = (size_t)exp_timed_keys(e);
    s.counted = malloc((n ? n : 1) * sizeof *s.counted);
    if (!s.counted) {
        fprintf(stderr, "bloomkit experiment: out of memory for %zu keys\n", n);
        return EXIT_IO;
    }
    bk_set_clock(cli_clock_at, &s.now); /* the library's clock is the run's */
    int rc = bk_new(s.cfg, &s.f);
    if (rc == BK_OK)
        s.span = span_of(s.f);
    const int64_t end = START_MS + (int64_t)e->duration_ms;
    uint64_t next[1 + EXP_MAX_AGES] = {0}, events = 0;
    int c = 0;
    while (rc == BK_OK) {
        int j = -1; /* the stream whose next event comes first */
        int64_t t = end;
        for (int i = 0; i <= e->nages; i++)
            if (next[i] < n && event_time(&s, i, next[i]) < t)
                t = event_time(&s, i, next[j = i]);
        for (; c < e->ncheckpoints && START_MS + (int64_t)e->checkpoints[c] <= t; c++) {
            checkpoint_row(&s, e->checkpoints[c], events, probes, &rows[(*nrows)++], e->names[ci]);
            if (e->on_row)
                e->on_row(e->on_row_arg, *nrows);
        }
        if (j < 0)
            break;
        rc = one_event(&s, j, (size_t)next[j]++, ins);
        events++;
    }
    if (rc == BK_OK)
        revisit_rows(&s, rows, nrows, e->names[ci]);
    bk_set_clock(NULL, NULL);
    bk_free(s.f);
    free(s.counted);
    if (rc != BK_OK) {
        fprintf(stderr, "bloomkit experiment: configuration '%s': %s\n", e->names[ci],
                bk_strerror(rc));
        return cli_exit_for(rc);
    }
    return 0;
}
