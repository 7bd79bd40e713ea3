/*
 * cmd_experiment.c - `bloomkit experiment`: the same keys through several
 * named configurations, measured side by side at checkpoints (the file
 * format is in exp_file.c, the outputs in exp_output.c and exp_plot.c).
 *
 * Keys come from exp_keys.c.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cli.h"
#include "../stream.h"
#include "experiment.h"

static const char usage[] =
    "usage: bloomkit experiment --config-file EXP [--csv FILE] [--json FILE] [--plot FILE.png]\n"
    "                           [--title TEXT] [--plot-size WxH] [--no-wait]\n"
    "                           [--quiet | --progress]\n"
    "Run the workload of EXP through every configuration of EXP and, at each\n"
    "checkpoint, measure the false-positive rate on keys never inserted (with its 95%\n"
    "confidence interval), beside the rate the sizing model predicts, bits per key,\n"
    "bytes, slices, saturated counters, ns per add (or remove) and per lookup. An\n"
    "aligned table goes to standard output; --csv and --json write the same rows to\n"
    "files; --plot draws the rates and bits per key with gnuplot (PNG, or SVG for a\n"
    "name ending in .svg; --title and --plot-size 1600x640 shape it).\n"
    "EXP: a [workload] section (keys = N or keys_file = PATH, probes = N or\n"
    "probes_file = PATH, phases = insert P%, delete P%, ... (default: insert all),\n"
    "checkpoints = 10% | geometric START FACTOR | list N...) and one [name] section\n"
    "of config text per configuration (or 'name: config' lines).\n"
    "Over simulated time (for variant=window): arrivals = N/UNIT (keys per s, m, h or\n"
    "d), duration = D (e.g. 90d), revisits = AGE... (each key is seen again at these\n"
    "ages), checkpoints = P% of the duration; the rows add the share of revisits\n"
    "reported new again at each age beside the share the model expects.\n";

/* ---- measuring ------------------------------------------------------------ */

/* Where the workload stands: keys [deleted, inserted) are in the filter. */
typedef struct cursor {
    size_t inserted, deleted;
    uint64_t ops;
    int phase;
    uint64_t phase_end;
} cursor;

/* Run operations up to `upto` (inside one phase); ns per operation. */
static int run_ops(const experiment *e, bk_filter *f, const exp_keys *ins, cursor *cur,
                   uint64_t upto, double *ns)
{
    const exp_op op = e->phases[cur->phase].op;
    const uint64_t todo = upto - cur->ops;
    int rc = BK_OK;
    const double t0 = exp_now_ns();
    for (uint64_t i = 0; i < todo && rc >= 0; i++) {
        const size_t at = op == EXP_INSERT ? cur->inserted++ : cur->deleted++;
        const char *key = ins->bytes + ins->off[at];
        const size_t len = ins->off[at + 1] - ins->off[at];
        rc = op == EXP_INSERT ? bk_add(f, key, len) : bk_remove(f, key, len);
    }
    *ns = todo ? (exp_now_ns() - t0) / (double)todo : 0;
    cur->ops = upto;
    return rc < 0 ? rc : BK_OK;
}

static int measure(const experiment *e, int ci, const exp_keys *ins, const exp_keys *probes,
                   exp_row *rows, int *nrows)
{
    bk_filter *f;
    int rc = bk_new(&e->cfgs[ci], &f);
    if (rc != BK_OK) {
        fprintf(stderr, "bloomkit experiment: configuration '%s': %s\n", e->names[ci],
                bk_strerror(rc));
        return cli_exit_for(rc);
    }
    cursor cur = {0, 0, 0, 0, e->phases[0].count};
    for (int c = 0; c < e->ncheckpoints; c++) {
        const uint64_t upto = e->checkpoints[c];
        while (cur.ops == cur.phase_end && cur.phase + 1 < e->nphases)
            cur.phase_end += e->phases[++cur.phase].count;
        const exp_op op = e->phases[cur.phase].op;
        double ns_op;
        rc = run_ops(e, f, ins, &cur, upto, &ns_op);
        if (rc != BK_OK) {
            fprintf(stderr, "bloomkit experiment: configuration '%s': %s: %s\n", e->names[ci],
                    op == EXP_INSERT ? "add" : "remove", bk_strerror(rc));
            bk_free(f);
            return cli_exit_for(rc);
        }
        exp_row *r = &rows[(*nrows)++];
        memset(r, 0, sizeof *r);
        r->config = e->names[ci];
        r->phase = op == EXP_INSERT ? "insert" : "delete";
        r->ops = upto;
        r->keys = cur.inserted - cur.deleted;
        exp_measure_row(f, probes, r);
        if (op == EXP_INSERT)
            r->ns_add = ns_op;
        else
            r->ns_remove = ns_op;
        if (e->on_row)
            e->on_row(e->on_row_arg, *nrows);
    }
    bk_free(f);
    return 0;
}

const cli_spec cmd_experiment_spec =
    CLI_SPEC("experiment", usage,
             OPT(CONFIG_FILE) | OPT(CSV) | OPT(JSON_FILE) | OPT(PLOT) | OPT(NO_WAIT) | OPT(TITLE) |
                 OPT(PLOT_SIZE) | OPT(PROGRESS),
             OPT(CONFIG_FILE), 0, 0, "give --config-file EXP");

/* The progress line: checkpoints measured of all (every configuration's). */
typedef struct shown_progress {
    progress *pg;
    uint64_t total;
} shown_progress;

static void on_row(void *arg, int rows)
{
    const shown_progress *s = arg;
    progress_work(s->pg, (uint64_t)rows, s->total, "checkpoints measured");
}

/* --plot's options into e: the size ("1200x480", each 200 .. 10000), the
 * title, SVG for a name ending in .svg. 0 or EXIT_USAGE. */
static int plot_options(const cli_opts *o, experiment *e)
{
    if ((o->plot_size || o->plot_title) && !o->plot)
        return cli_fail(o, EXIT_USAGE, "--%s applies to the plot: give --plot FILE too",
                        o->plot_size ? "plot-size" : "title");
    if (o->plot_size) {
        unsigned w, h;
        int used = 0;
        if (sscanf(o->plot_size, "%5ux%5u%n", &w, &h, &used) != 2 || o->plot_size[used] != '\0' ||
            w < 200 || h < 200 || w > 10000 || h > 10000)
            return cli_fail(o, EXIT_USAGE,
                            "--plot-size: '%s' is not WIDTHxHEIGHT in pixels, each 200 .. 10000 "
                            "(1600x640)",
                            o->plot_size);
        e->plot_w = w;
        e->plot_h = h;
    }
    e->plot_title = o->plot_title;
    const size_t n = o->plot ? strlen(o->plot) : 0;
    e->plot_svg = n > 4 && strcmp(o->plot + n - 4, ".svg") == 0;
    return 0;
}

/* long: the run's steps in order: read, measure, write, plot. */
int cmd_experiment(cli_opts *o)
{
    int rc;
    experiment *e = calloc(1, sizeof *e);
    if (!e)
        return cli_fail(o, EXIT_IO, "out of memory");
    e->path = o->config_file;
    if ((rc = plot_options(o, e)) != 0) {
        free(e);
        return rc;
    }
    exp_keys ins = {0}, probes = {0};
    exp_row *rows = NULL;
    int nrows = 0;
    rc = exp_read(e);
    if (!rc && (e->keys_file ? exp_keys_load(&ins, e->keys_file)
                             : exp_keys_generate(&ins, "insert", e->nkeys)) != 0)
        rc = e->keys_file ? cli_fail(o, EXIT_IO, "%s: %s", e->keys_file, strerror(errno))
                          : cli_fail(o, EXIT_IO, "out of memory for %llu keys",
                                     (unsigned long long)e->nkeys);
    if (!rc && (e->probes_file ? exp_keys_load(&probes, e->probes_file)
                               : exp_keys_generate(&probes, "probe", e->nprobes)) != 0)
        rc = e->probes_file ? cli_fail(o, EXIT_IO, "%s: %s", e->probes_file, strerror(errno))
                            : cli_fail(o, EXIT_IO, "out of memory for %llu probes",
                                       (unsigned long long)e->nprobes);
    if (!rc && ins.n == 0)
        rc = cli_fail(o, EXIT_USAGE, "the workload has no keys to insert");
    if (!rc && (e->keys_file || e->probes_file)) { /* generated ones are disjoint */
        const long both = exp_keys_drop_inserted(&probes, &ins);
        if (both < 0)
            rc = cli_fail(o, EXIT_IO, "out of memory");
        else if (both > 0 && !o->quiet)
            fprintf(stderr,
                    "bloomkit experiment: %ld probe%s also among the keys inserted: left out "
                    "of the false-positive count (an inserted key read present is no false "
                    "positive); %zu probe%s remain\n",
                    both, both == 1 ? " is" : "s are", probes.n, probes.n == 1 ? "" : "s");
        if (!rc && probes.n == 0)
            rc = cli_fail(o, EXIT_USAGE,
                          "every probe is also a key inserted: no false positive can be "
                          "measured (give probes that are never inserted)");
    }
    if (!rc)
        rc = exp_plan(e, ins.n);
    if (!rc &&
        !(rows = calloc((size_t)e->nconfigs * (size_t)(e->ncheckpoints + e->nages), sizeof *rows)))
        rc = cli_fail(o, EXIT_IO, "out of memory");
    progress pg;
    progress_init(&pg, o->quiet, o->progress);
    shown_progress show = {&pg, (uint64_t)e->nconfigs * (uint64_t)e->ncheckpoints};
    e->on_row = on_row;
    e->on_row_arg = &show;
    for (int c = 0; !rc && c < e->nconfigs; c++)
        rc = exp_timed(e) ? exp_run_timed(e, c, &ins, &probes, rows, &nrows)
                          : measure(e, c, &ins, &probes, rows, &nrows);
    progress_end(&pg);
    /* Each output's writer lock while the outputs are written (two runs
     * writing one file take turns). */
    const char *outs[3] = {o->csv, o->json_file, o->plot};
    bk_file_lock *locks[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3 && !rc; i++)
        if (outs[i])
            rc = cli_lock(o, outs[i], &locks[i]);
    if (!rc) {
        exp_print_table(rows, nrows);
        if (o->csv && exp_write_csv(o->csv, rows, nrows) != 0)
            rc = cli_fail(o, EXIT_IO, "%s: %s", o->csv, strerror(errno));
        if (!rc && o->json_file && exp_write_json(o->json_file, rows, nrows) != 0)
            rc = cli_fail(o, EXIT_IO, "%s: %s", o->json_file, strerror(errno));
        if (!rc && o->plot)
            rc = exp_plot(e, o->plot, rows, nrows);
    }
    for (int i = 0; i < 3; i++)
        bk_unlock_file(locks[i]);
    free(rows);
    exp_keys_free(&ins);
    exp_keys_free(&probes);
    exp_free(e);
    free(e);
    return rc;
}
