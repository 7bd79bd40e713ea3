/*
 * exp_plot.c - `bloomkit experiment --plot FILE.png` (experiment.h).
 *
 * gnuplot (Debian's gnuplot-nox) is run as a program, the script and the
 * data (inline datablocks) written to its standard input; no temporary
 * files. It draws into FILE.png.partXXXXXX, renamed over FILE.png only when
 * gnuplot succeeded (an SVG when the name ends in .svg). Two panels: the
 * false-positive rate (measured, with its 95% interval, and the model's as a
 * dashed line of the same colour, drawn smoothly between checkpoints) and
 * bits per key, each curve named at its end, so no legend is needed. Each
 * configuration has its own colour, point shape and dash pattern, so curves
 * that coincide still show; a measured rate of zero (no false positive among
 * the probes) is marked at the axis's floor, not dropped.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cli.h"
#include "experiment.h"

/* gnuplot's path on PATH, or 0 when there is none. */
static int find_gnuplot(char *buf, size_t len)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    while (*path) {
        const size_t n = strcspn(path, ":");
        if (n > 0 && (size_t)snprintf(buf, len, "%.*s/gnuplot", (int)n, path) < len &&
            access(buf, X_OK) == 0)
            return 1;
        path += n + (path[n] == ':');
    }
    return 0;
}

/* Single-quoted gnuplot string: a quote is written twice. */
/* Every text that reaches the script (file names, configuration names)
 * goes through here, as a single-quoted gnuplot string: inside one gnuplot
 * reads no escape, no macro (@name) and no backquote, and a quote is
 * doubled. A line break would end the command and start another (issue 16:
 * a file named `"; system "touch PWNED"; set title "` ran that command), so
 * control characters become '?'. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '\'')
            fputc('\'', f);
        fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
    }
    fputc('\'', f);
}

static void put_num(FILE *f, double v)
{
    if (v > 0 && isfinite(v))
        fprintf(f, " %.6g", v);
    else
        fputs(" NaN", f);
}

/* Rows of configuration c are rows[first[c] .. first[c + 1]). */
typedef struct layout {
    int first[EXP_MAX_CONFIGS + 1];
    int n;
} layout;

/* Labels at the curves' ends, pushed apart so that none overlaps the next:
 * y values (in the axis's own terms: log10 for log axes) sorted, each at
 * least `gap` above the one below, none above `top`. */
static void spread(double *y, int n, double gap, double top)
{
    int order[EXP_MAX_CONFIGS];
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 1; i < n; i++) /* insertion sort by y */
        for (int j = i; j > 0 && y[order[j]] < y[order[j - 1]]; j--) {
            const int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int i = 1; i < n; i++)
        if (y[order[i]] < y[order[i - 1]] + gap)
            y[order[i]] = y[order[i - 1]] + gap;
    /* pushed past the top: move the stack down instead */
    for (int i = n - 1; i >= 0; i--) {
        const double cap = i == n - 1 ? top : y[order[i + 1]] - gap;
        if (y[order[i]] > cap)
            y[order[i]] = cap;
    }
}

/* One panel's end labels (both panels have a log y axis), as `set label`
 * commands: names at (x, y). */
static void end_labels(FILE *f, const experiment *e, const layout *l, const exp_row *rows, int rate,
                       double lo, double hi)
{
    double y[EXP_MAX_CONFIGS] = {0}, x[EXP_MAX_CONFIGS] = {0};
    for (int c = 0; c < l->n; c++) {
        const exp_row *r = &rows[l->first[c + 1] - 1];
        double v = rate ? (r->fpr > 0 ? r->fpr : r->model) : r->bits_per_key;
        if (!(v > 0))
            v = lo;
        x[c] = (double)r->ops;
        y[c] = log10(v);
    }
    const double span = log10(hi) - log10(lo);
    spread(y, l->n, span * 0.045, log10(hi) - span * 0.03);
    for (int c = 0; c < l->n; c++) {
        fprintf(f, "set label %d ", c + 1);
        put_quoted(f, e->names[c]);
        fprintf(f, " at %.6g,%.6g left offset 1,0 tc lt %d noenhanced\n", x[c], pow(10, y[c]),
                c + 1);
    }
}

static void write_script(FILE *f, const experiment *e, const char *out, const exp_row *rows, int n,
                         const layout *l);
static void write_timed(FILE *f, const experiment *e, const char *out, const exp_row *rows,
                        const layout *l);

void exp_plot_script(FILE *f, const experiment *e, const char *out, const exp_row *rows, int n)
{
    layout l = {{0}, 0};
    for (int i = 0; i < n && l.n < EXP_MAX_CONFIGS; i++)
        if (i == 0 || strcmp(rows[i].config, rows[i - 1].config) != 0)
            l.first[l.n++] = i;
    l.first[l.n] = n;
    if (exp_timed(e))
        write_timed(f, e, out, rows, &l);
    else
        write_script(f, e, out, rows, n, &l);
}

/* The opening every plot shares: terminal, output, title, colours. */
static void open_plot(FILE *f, const experiment *e, const char *out)
{
    const char *base = strrchr(e->path, '/') ? strrchr(e->path, '/') + 1 : e->path;
    fprintf(f, "set terminal %s size %u,%u font 'sans,10'\nset output ",
            e->plot_svg ? "svg dynamic" : "pngcairo", e->plot_w ? e->plot_w : 1600,
            e->plot_h ? e->plot_h : 640);
    put_quoted(f, out);
    fputs("\nset multiplot layout 1,2 title ", f);
    char title[4200];
    snprintf(title, sizeof title, "bloomkit experiment %s", base);
    put_quoted(f, e->plot_title ? e->plot_title : title);
    fputs(" noenhanced\n", f);
    /* eight dark colours that stay apart on white (ColorBrewer's Dark2) */
    static const char *const colours[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a",
                                          "#66a61e", "#a6761d", "#e6ab02", "#666666"};
    for (int i = 0; i < 8; i++)
        fprintf(f, "set linetype %d lc rgb '%s'\n", i + 1, colours[i]);
    fputs("set linetype cycle 8\nset grid xtics ytics\nset lmargin 11\nset rmargin 18\n", f);
}

/* Configuration c's point shape and dash pattern: apart from the colour,
 * so that curves drawn over each other still show each one. */
static int point_of(int c)
{
    static const int shapes[] = {7, 5, 9, 13, 11, 15, 4, 6}; /* circle, square, triangles ... */
    return shapes[c % 8];
}
static int dash_of(int c)
{
    return 1 + c % 5; /* solid, dashed, dotted, dash-dot, dash-dot-dot */
}

/* Where configuration c marks a measured zero: just above the floor lo of a
 * log axis, each configuration a little higher than the one before, so that
 * marks at one checkpoint do not hide each other. */
static double floor_mark(double lo, int c)
{
    return lo * pow(1.22, 1 + c % 8);
}

/* A log y axis a value can be read from: each decade labelled, 2 and 5
 * times each marked with a small label, minor ticks between. */
static void log_y_axis(FILE *f, double lo, double hi)
{
    fputs("set logscale y\nset format y '10^{%L}'\nset ytics\nset mytics 10\n", f);
    const int dlo = (int)floor(log10(lo)), dhi = (int)ceil(log10(hi));
    if (dhi - dlo <= 4) /* few decades: 2x and 5x labelled too */
        for (int d = dlo; d <= dhi; d++)
            fprintf(f, "set ytics add ('2·10^{%d}' %.6g 1, '5·10^{%d}' %.6g 1)\n", d,
                    2 * pow(10, d), d, 5 * pow(10, d));
}

/* One panel's plot command: per configuration, its datablock $<block><c>
 * (columns x, measured, low, high, model, measured zero) as points `style`
 * with their interval, titled with its name, the model dashed in its
 * colour, and with floor > 0 (a log axis from floor) measured zeros marked
 * there. */
static void plot_measured_and_model(FILE *f, const experiment *e, const layout *l, char block,
                                    const char *style, double floor)
{
    fputs("plot ", f);
    for (int c = 0; c < l->n; c++) {
        fprintf(f, "%s$%c%d using 1:2:3:4 with %s lt %d dt %d pt %d title ", c ? ", \\\n     " : "",
                block, c, style, c + 1, dash_of(c), point_of(c));
        put_quoted(f, e->names[c]);
        fprintf(f, ", $%c%d using 1:5 smooth mcsplines with lines lt %d lw 1.5 dt 2 notitle", block,
                c, c + 1);
        if (floor > 0) /* a log axis: a measured zero as an open mark at its floor */
            fprintf(f,
                    ", $%c%d using 1:($6 > 0 ? %.6g : NaN) with points lt %d pt %d ps 1.2 notitle",
                    block, c, floor_mark(floor, c), c + 1, point_of(c) - 1);
    }
    fputs("\n", f);
}

/* Over simulated time: the rate against the day (left) and the share of
 * revisits reported new again against their age, with the model's (right);
 * a legend names the configurations. */
static void write_timed(FILE *f, const experiment *e, const char *out, const exp_row *rows,
                        const layout *l)
{
    double yhi = 0, floor_rate = 1;
    for (int c = 0; c < l->n; c++) {
        fprintf(f, "$t%d << EOD\n", c);
        for (int i = l->first[c]; i < l->first[c + 1]; i++)
            if (strcmp(rows[i].phase, "time") == 0) {
                const exp_row *r = &rows[i];
                fprintf(f, "%.6g", (double)r->time_ms / 86400000.0);
                put_num(f, r->fpr);
                put_num(f, r->lo > 0 ? r->lo : r->fpr);
                put_num(f, r->hi);
                put_num(f, r->model);
                fprintf(f, " %d\n", r->probes > 0 && r->false_pos == 0); /* measured zero */
                yhi = fmax(yhi, fmax(r->hi, r->model));
                if (r->probes)
                    floor_rate = fmin(floor_rate, 1.0 / (double)r->probes);
            }
        fprintf(f, "EOD\n$r%d << EOD\n", c);
        for (int i = l->first[c]; i < l->first[c + 1]; i++)
            if (strcmp(rows[i].phase, "revisit") == 0)
                fprintf(f, "%.6g %.6g %.6g %.6g %.6g\n", (double)rows[i].age_ms / 86400000.0,
                        rows[i].reemit, rows[i].reemit_lo, rows[i].reemit_hi, rows[i].reemit_model);
        fputs("EOD\n", f);
    }
    open_plot(f, e, out);
    fputs("set key top left noenhanced\nset xlabel 'simulated day'\n", f);
    log_y_axis(f, floor_rate / 3, fmax(yhi * 3, floor_rate * 100));
    fputs("set ylabel 'false-positive rate'\n", f);
    fprintf(f, "set yrange [%.6g:%.6g]\n", floor_rate / 3, fmax(yhi * 3, floor_rate * 100));
    fputs("set title 'rate over time: measured (points, 95% interval), model (dashed); open "
          "marks at the floor: none measured' noenhanced\n",
          f);
    plot_measured_and_model(f, e, l, 't', "yerrorlines lw 1.5 ps 0.5", floor_rate / 3);
    fputs("unset logscale y\nunset ytics\nset ytics\nset format y '%g'\nset mytics 2\n"
          "set yrange [-0.03:1.08]\n",
          f);
    fputs("set xlabel 'age of the revisit (days since the key was first seen)'\n", f);
    fputs("set ylabel 'share reported new again'\nset key top left\n", f);
    fputs("set title 're-emission: measured (points, 95% interval), model (dashed)'\n", f);
    plot_measured_and_model(f, e, l, 'r', "yerrorbars ps 0.9", 0);
    fputs("unset multiplot\nset output\n", f);
}

/* long: gnuplot's script, one panel after another, as it prints. */
static void write_script(FILE *f, const experiment *e, const char *out, const exp_row *rows, int n,
                         const layout *l)
{
    const int phased = e->nphases > 1;
    double xmax = 0, xmin = INFINITY, ylo = INFINITY, yhi = 0, blo = INFINITY, bhi = 0;
    for (int c = 0; c < l->n; c++)
        for (int i = l->first[c]; i < l->first[c + 1]; i++) {
            const exp_row *r = &rows[i];
            xmax = fmax(xmax, (double)r->ops);
            xmin = fmin(xmin, (double)r->ops);
            const double v[3] = {r->fpr, r->model, r->hi};
            for (int j = 0; j < 3; j++)
                if (v[j] > 0) {
                    ylo = fmin(ylo, v[j]);
                    yhi = fmax(yhi, v[j]);
                }
            blo = fmin(blo, r->bits_per_key);
            bhi = fmax(bhi, r->bits_per_key);
        }
    /* below one false positive in all the probes nothing can be measured:
     * the axis stops a little under that (model curves leave through it) */
    double floor_rate = 1;
    for (int i = 0; i < n; i++)
        if (rows[i].probes)
            floor_rate = fmin(floor_rate, 1.0 / (double)rows[i].probes);
    ylo = fmax(isfinite(ylo) ? ylo : floor_rate, floor_rate / 3);
    if (!(ylo < yhi))
        yhi = ylo * 100;
    ylo /= 1.5;
    yhi = fmin(1.5, yhi * 2);
    blo = fmax(0.5, blo / 1.3);
    bhi = fmax(bhi * 1.3, blo * 4);
    for (int c = 0; c < l->n; c++) {
        fprintf(f, "$d%d << EOD\n", c);
        for (int i = l->first[c]; i < l->first[c + 1]; i++) {
            const exp_row *r = &rows[i];
            fprintf(f, "%llu", (unsigned long long)r->ops);
            put_num(f, r->fpr);
            put_num(f, r->lo > 0 ? r->lo : r->fpr);
            put_num(f, r->hi);
            put_num(f, r->model);
            put_num(f, r->bits_per_key);
            fprintf(f, " %d", r->probes > 0 && r->false_pos == 0); /* measured zero */
            fputc('\n', f);
        }
        fputs("EOD\n", f);
    }
    open_plot(f, e, out);
    fputs("unset key\n", f);
    if (phased) {
        fputs("set xlabel \"operations (the workload's phases, in order)\"\n", f);
        fprintf(f, "set xrange [0:%.6g]\n", xmax * 1.02);
        uint64_t at = 0;
        for (int p = 0; p < e->nphases; p++) {
            const uint64_t from = at;
            at += e->phases[p].count;
            if (p + 1 < e->nphases)
                fprintf(f,
                        "set arrow from %llu, graph 0 to %llu, graph 1 nohead dt 3 lc 'gray40'\n",
                        (unsigned long long)at, (unsigned long long)at);
            fprintf(f, "set label %d '%s' at %.6g, graph 0.96 center tc 'gray30'\n", 100 + p,
                    e->phases[p].op == EXP_INSERT ? "insert" : "delete", (double)(from + at) / 2);
        }
    } else {
        fputs("set logscale x\nset format x '10^{%L}'\nset xlabel 'keys inserted'\n", f);
        fprintf(f, "set xrange [%.6g:%.6g]\n", xmin / 1.3, xmax * 1.3);
    }
    /* left: rates */
    log_y_axis(f, ylo, yhi);
    fputs("set ylabel 'false-positive rate'\n", f);
    fprintf(f, "set yrange [%.6g:%.6g]\n", ylo, yhi);
    fputs("set title 'measured (points, 95% interval), model (thin); open marks at the floor: "
          "no false positive measured' noenhanced\n",
          f);
    end_labels(f, e, l, rows, 1, ylo, yhi);
    fputs("plot ", f);
    /* a measured zero: at the floor (just above the axis), an open mark */
    for (int c = 0; c < l->n; c++)
        fprintf(f,
                "%s$d%d using 1:2:3:4 with yerrorlines lt %d lw 1.5 dt %d pt %d ps 0.7, "
                "$d%d using 1:5 smooth mcsplines with lines lt %d lw 1 dt 2, "
                "$d%d using 1:($7 > 0 ? %.6g : NaN) with points lt %d pt %d ps 1.2",
                c ? ", \\\n     " : "", c, c + 1, dash_of(c), point_of(c), c, c + 1, c,
                floor_mark(ylo, c), c + 1, point_of(c) - 1);
    fputs("\n", f);
    /* right: bits per key (the phase labels stay) */
    for (int c = 0; c < l->n; c++)
        fprintf(f, "unset label %d\n", c + 1);
    fputs("unset ytics\nset ytics\nset format y '%g'\nset ytics 1, 2\nset mytics 2\n"
          "set ylabel 'bits per key'\n",
          f);
    fprintf(f, "set yrange [%.6g:%.6g]\n", blo, bhi);
    fputs("set title 'memory: bytes x 8 / keys in the filter'\n", f);
    end_labels(f, e, l, rows, 0, blo, bhi);
    fputs("plot ", f);
    for (int c = 0; c < l->n; c++)
        fprintf(f, "%s$d%d using 1:6 with linespoints lt %d lw 1.5 dt %d pt %d ps 0.7",
                c ? ", \\\n     " : "", c, c + 1, dash_of(c), point_of(c));
    fputs("\nunset multiplot\nset output\n", f);
}

/* long: the script written, gnuplot run, and each failure's cleanup. */
int exp_plot(const experiment *e, const char *png, const exp_row *rows, int n)
{
    char prog[4096];
    if (!find_gnuplot(prog, sizeof prog)) {
        fprintf(stderr, "bloomkit experiment: --plot needs gnuplot, which is not on PATH "
                        "(Debian: apt-get install gnuplot-nox); the other outputs were "
                        "written\n");
        return EXIT_IO;
    }
    if (strpbrk(png, "\n\r")) {
        fprintf(stderr, "bloomkit experiment: --plot: the file name holds a line break\n");
        return EXIT_USAGE;
    }
    char *tmp;
    const int tfd = exp_temp_beside(png, &tmp);
    if (tfd < 0) {
        fprintf(stderr, "bloomkit experiment: --plot %s: %s\n", png, strerror(errno));
        return EXIT_IO;
    }
    close(tfd); /* gnuplot writes it by name */

    int fds[2] = {-1, -1};
    pid_t pid = -1;
    if (pipe(fds) == 0 && (pid = fork()) < 0) {
        close(fds[0]);
        close(fds[1]);
    } else if (pid == 0) {
        close(fds[1]);
        const int devnull = open("/dev/null", O_WRONLY);
        if (dup2(fds[0], 0) < 0 || devnull < 0 || dup2(devnull, 1) < 0)
            _exit(127);
        execl(prog, "gnuplot", (char *)NULL);
        _exit(127);
    }
    int rc = EXIT_OK;
    if (pid < 0) {
        fprintf(stderr, "bloomkit experiment: --plot: cannot run gnuplot: %s\n", strerror(errno));
        rc = EXIT_IO;
    } else {
        close(fds[0]);
        FILE *f = fdopen(fds[1], "w");
        if (f) {
            exp_plot_script(f, e, tmp, rows, n);
            fclose(f); /* a gnuplot that died early shows in its status */
        } else {
            close(fds[1]);
        }
        int st = 0;
        pid_t w;
        while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
            ;
        if (w < 0)
            st = 127 << 8; /* lost track of it: treat as failed */
        struct stat sb;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || stat(tmp, &sb) != 0 || sb.st_size == 0) {
            fprintf(stderr,
                    "bloomkit experiment: --plot: gnuplot failed (%s %d); %s was not "
                    "written\n",
                    WIFEXITED(st) ? "exit status" : "signal",
                    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), png);
            rc = EXIT_IO;
        } else if (rename(tmp, png) != 0) {
            fprintf(stderr, "bloomkit experiment: --plot %s: %s\n", png, strerror(errno));
            rc = EXIT_IO;
        }
    }
    if (rc != EXIT_OK)
        unlink(tmp);
    free(tmp);
    return rc;
}
