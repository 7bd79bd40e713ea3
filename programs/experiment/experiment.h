/*
 * experiment.h - `bloomkit experiment` (internal to the CLI): the experiment
 * file, its workload, the rows it measures, and their outputs.
 *
 *   exp_file.c     reads EXP: configurations, workload, phases, checkpoints
 *   cmd_experiment.c  keys, the measuring loop, the command
 *   exp_output.c   the table, --csv, --json
 *   exp_time.c     a workload over simulated time (arrivals, revisits)
 *   exp_plot.c     --plot, drawn by gnuplot
 */
#ifndef BK_EXPERIMENT_H
#define BK_EXPERIMENT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "bloomkit.h"

#define EXP_MAX_CONFIGS     64
#define EXP_MAX_CHECKPOINTS 256
#define EXP_MAX_PHASES      16
#define EXP_NAME_MAX        64
#define EXP_MAX_AGES        16

/* One phase of the workload: insert the next `count` keys of the key list,
 * or remove the `count` oldest keys still inserted (counting only). */
typedef enum { EXP_INSERT, EXP_DELETE } exp_op;

typedef struct exp_phase {
    exp_op op;
    double pct;     /* amount as a percentage of the key count, or < 0 */
    uint64_t count; /* amount as a number (resolved from pct) */
} exp_phase;

typedef struct experiment {
    const char *path;
    char names[EXP_MAX_CONFIGS][EXP_NAME_MAX];
    int lines[EXP_MAX_CONFIGS]; /* where each configuration starts */
    bk_config cfgs[EXP_MAX_CONFIGS];
    int nconfigs;
    uint64_t nkeys, nprobes; /* generated counts (0 when from files) */
    char *keys_file, *probes_file;
    exp_phase phases[EXP_MAX_PHASES];
    int nphases, phline;                       /* 0: one phase inserting every key */
    uint64_t checkpoints[EXP_MAX_CHECKPOINTS]; /* in operations, ascending */
    int ncheckpoints;
    char ckspec[128];
    int ckline;
    unsigned workload_seen; /* workload keys met: bit i of exp_file.c's list */
    /* Simulated time (exp_time.c), when `arrivals` and `duration` are given:
     * key i arrives at i / arrivals_per_ms ms into a run of duration_ms, and
     * is seen again at each of the ages; checkpoints count ms of the run. */
    double arrivals_per_ms;
    uint64_t duration_ms;
    uint64_t ages_ms[EXP_MAX_AGES];
    int nages;
    int tline; /* the line of arrivals */
    /* the plot's: pixels (0: 1600 x 640), title (NULL: "bloomkit experiment
     * FILE"), and SVG instead of PNG (the name ends in .svg) */
    unsigned plot_w, plot_h;
    const char *plot_title;
    int plot_svg;
    /* told after each row is measured (the command's progress line), or NULL */
    void (*on_row)(void *arg, int rows);
    void *on_row_arg;
} experiment;

/* 1 when e runs over simulated time. */
static inline int exp_timed(const experiment *e)
{
    return e->duration_ms > 0;
}

/* The keys that arrive over simulated time: arrivals x duration, rounded up. */
static inline double exp_timed_keys(const experiment *e)
{
    return ceil(e->arrivals_per_ms * (double)e->duration_ms);
}

/* Keys of a workload: key i is bytes[off[i] .. off[i+1]). */
typedef struct exp_keys {
    char *bytes;
    size_t *off;
    size_t n;
} exp_keys;

/* exp_keys.c: n generated keys of a family ("insert", "probe": disjoint);
 * the lines of a file (CRLF or LF); freed. 0 or -1 (errno). */
int exp_keys_generate(exp_keys *k, const char *family, uint64_t n);
int exp_keys_load(exp_keys *k, const char *path);
void exp_keys_free(exp_keys *k);
/* Take out of probes every key that ins holds too (an inserted key read
 * present is no false positive); the probes keep their order. The number
 * taken out, or -1 (out of memory; probes unchanged). */
long exp_keys_drop_inserted(exp_keys *probes, const exp_keys *ins);

/* One measurement: a configuration after `ops` operations of the workload. */
typedef struct exp_row {
    const char *config;
    const char *phase; /* "insert" or "delete": the phase the row ends; over
                        * simulated time "time" (a checkpoint) or "revisit"
                        * (the sightings of keys at one age, over the run) */
    uint64_t ops, keys, probes, false_pos, bytes, saturated;
    uint32_t slices;
    double fpr, lo, hi, model, bits_per_key, ns_add, ns_remove, ns_lookup;
    /* simulated time: the checkpoint's ms into the run; a revisit row's age,
     * sightings of keys seen before (their last add reported new), how many
     * were reported new again, and the fraction the model expects (those
     * whose window had passed, less the false-positive rate) */
    uint64_t time_ms, age_ms, revisits, reemitted;
    double reemit, reemit_lo, reemit_hi, reemit_model;
} exp_row;

/* A monotonic clock in ns (exp_measure.c, as the two next). */
double exp_now_ns(void);
/* Wilson score interval (95%) for x successes in n trials. */
void exp_wilson(uint64_t x, uint64_t n, double *lo, double *hi);
/* The measurements that every row takes at a checkpoint: the probes'
 * false positives (timed: their ns per lookup) and f's figures. */
void exp_measure_row(bk_filter *f, const exp_keys *probes, exp_row *r);
/* Run configuration ci of a timed experiment over the keys: rows for every
 * checkpoint, then one per revisit age. 0 or an exit code (message
 * printed). */
int exp_run_timed(const experiment *e, int ci, const exp_keys *ins, const exp_keys *probes,
                  exp_row *rows, int *nrows);

/* path opened for reading if it is a regular file (without blocking on a
 * FIFO); NULL with errno (EISDIR for a directory, EINVAL for anything else
 * that is not a regular file). */
FILE *exp_open_regular(const char *path);

/* "bloomkit experiment: FILE:LINE: " + message on stderr; returns EXIT_USAGE. */
int exp_fail_at(const experiment *e, int line, const char *fmt, const char *a);

/* Read e->path into e (configurations and workload). 0 or an exit code
 * (message printed). Frees nothing on failure: call exp_free. */
int exp_read(experiment *e);
/* Resolve the phases against n keys (default: insert all n), then the
 * checkpoints against the operations they add up to (every phase end is one).
 * Checks that deletes are only asked of counting configurations. 0 or
 * EXIT_USAGE (message names the line). */
int exp_plan(experiment *e, uint64_t n);
/* Operations of the whole workload. */
uint64_t exp_total_ops(const experiment *e);
void exp_free(experiment *e);

/* Outputs of n rows. The table goes to stdout; the files are written whole
 * or not at all (0, or -1 with errno). */
void exp_print_table(const exp_row *rows, int n);
int exp_write_csv(const char *path, const exp_row *rows, int n);
int exp_write_json(const char *path, const exp_row *rows, int n);
/* Create an empty temporary file beside path (PATH.partXXXXXX, the usual
 * file mode), for writing a result whole and renaming it over path. Returns
 * its descriptor with *tmp its name (the caller frees it), or -1 with errno. */
int exp_temp_beside(const char *path, char **tmp);
/* Draw the rows into a PNG (an SVG when the name ends in .svg) with gnuplot
 * (measured rate and the model's against keys, or against operations when
 * the workload has several phases; bits per key beside it). 0, or an exit
 * code with the message printed (gnuplot missing: EXIT_IO, saying how to
 * install it). */
int exp_plot(const experiment *e, const char *png, const exp_row *rows, int n);
/* The gnuplot script exp_plot feeds gnuplot, drawing into `out`: its data
 * inline, every text single-quoted (tests/fuzz/fuzz_plot.c checks that no
 * name can add a command). */
void exp_plot_script(FILE *f, const experiment *e, const char *out, const exp_row *rows, int n);

#endif
