/*
 * cmd_experiment.c - `bloomkit experiment`: the same keys through several
 * named configurations, measured side by side at checkpoints.
 *
 * The experiment file (EXP) holds a [workload] section and one section per
 * configuration (INI style: "[name]" then config text, any number of lines),
 * or configurations one per line as "name: config text". Workload keys:
 *   keys = N | keys_file = PATH       keys to insert (generated or one per line)
 *   probes = N | probes_file = PATH   keys never inserted, for the measured rate
 *   checkpoints = 10% | geometric START FACTOR | list N1 N2 ...
 * Generated keys are crawler-like URLs, inserted ones and probes from disjoint
 * families. Every error names the file and line.
 */
#define _DEFAULT_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const char usage[] =
    "usage: bloomkit experiment --config-file EXP [--csv FILE] [--json FILE]\n"
    "Insert the workload's keys into every configuration of EXP and, at each\n"
    "checkpoint, measure the false-positive rate on keys never inserted (with its 95%\n"
    "confidence interval), beside the rate the sizing model predicts, bits per key,\n"
    "bytes, slices, saturated counters, ns per add and per lookup. An aligned table\n"
    "goes to standard output; --csv and --json write the same rows to files.\n"
    "EXP: a [workload] section (keys = N or keys_file = PATH, probes = N or\n"
    "probes_file = PATH, checkpoints = 10% | geometric START FACTOR | list N...)\n"
    "and one [name] section of config text per configuration (or 'name: config'\n"
    "lines).\n";

#define MAX_CONFIGS     64
#define MAX_CHECKPOINTS 256
#define NAME_MAX_LEN    64

typedef struct keys {
    char *bytes;
    size_t *off; /* key i is bytes[off[i] .. off[i+1]) */
    size_t n;
} keys;

typedef struct experiment {
    const char *path;
    char names[MAX_CONFIGS][NAME_MAX_LEN];
    bk_config cfgs[MAX_CONFIGS];
    int nconfigs;
    uint64_t nkeys, nprobes; /* generated counts (0 when from files) */
    char *keys_file, *probes_file;
    uint64_t checkpoints[MAX_CHECKPOINTS];
    int ncheckpoints;
    char ckspec[128];
    int ckline;
} experiment;

typedef struct row {
    const char *config;
    uint64_t keys, probes, false_pos, bytes, saturated;
    uint32_t slices;
    double fpr, lo, hi, model, bits_per_key, ns_add, ns_lookup;
} row;

static int fail_at(const experiment *e, int line, const char *fmt, const char *a)
{
    fprintf(stderr, "bloomkit experiment: %s:%d: ", e->path, line);
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    return EXIT_USAGE;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return s;
}

static int parse_u64(const char *s, uint64_t *out)
{
    if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 15)
        return -1;
    *out = strtoull(s, NULL, 10);
    return 0;
}

/* A configuration's text, accumulated over its lines, then parsed. */
static int finish_config(experiment *e, char *text, int line)
{
    if (e->nconfigs == 0)
        return 0;
    char err[256];
    bk_config *c = &e->cfgs[e->nconfigs - 1];
    if (bk_config_parse(c, text, err, sizeof err) != BK_OK)
        return fail_at(e, line, "%s", err);
    return 0;
}

static int add_config(experiment *e, const char *name, int line)
{
    if (e->nconfigs == MAX_CONFIGS)
        return fail_at(e, line, "more than %s configurations", "64");
    if (!*name || strlen(name) >= NAME_MAX_LEN || strpbrk(name, ",\"\\"))
        return fail_at(e, line, "configuration name '%s' must be 1-63 characters without , \" \\",
                       name);
    for (int i = 0; i < e->nconfigs; i++)
        if (strcmp(e->names[i], name) == 0)
            return fail_at(e, line, "configuration '%s' named twice", name);
    snprintf(e->names[e->nconfigs++], NAME_MAX_LEN, "%s", name);
    return 0;
}

/* Generated keys live in memory (64 bytes each): at most a billion. */
#define GEN_MAX UINT64_C(1000000000)

static int workload_key(experiment *e, char *k, char *v, int line)
{
    if (strcmp(k, "keys") == 0 && parse_u64(v, &e->nkeys) == 0 && e->nkeys > 0 &&
        e->nkeys <= GEN_MAX)
        return 0;
    if (strcmp(k, "probes") == 0 && parse_u64(v, &e->nprobes) == 0 && e->nprobes > 0 &&
        e->nprobes <= GEN_MAX)
        return 0;
    if (strcmp(k, "keys_file") == 0 && *v) {
        free(e->keys_file);
        e->keys_file = strdup(v);
        return 0;
    }
    if (strcmp(k, "probes_file") == 0 && *v) {
        free(e->probes_file);
        e->probes_file = strdup(v);
        return 0;
    }
    if (strcmp(k, "checkpoints") == 0 && strlen(v) < sizeof e->ckspec) {
        snprintf(e->ckspec, sizeof e->ckspec, "%s", v);
        e->ckline = line;
        return 0;
    }
    if (strcmp(k, "keys") && strcmp(k, "probes") && strcmp(k, "keys_file") &&
        strcmp(k, "probes_file") && strcmp(k, "checkpoints"))
        return fail_at(e, line,
                       "unknown workload key '%s' (keys, keys_file, probes, probes_file, "
                       "checkpoints)",
                       k);
    return fail_at(e, line, "bad value for workload key '%s' (a whole number 1 .. 10^9, or a path)",
                   k);
}

static int read_experiment(experiment *e)
{
    FILE *f = fopen(e->path, "r");
    if (!f) {
        fprintf(stderr, "bloomkit experiment: %s: %s\n", e->path, strerror(errno));
        return EXIT_IO;
    }
    char line[4096], text[8192] = "";
    int lineno = 0, in_workload = 0, rc = 0, text_line = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            rc = fail_at(e, lineno, "line longer than %s bytes", "4095");
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = trim(line);
        if (!*s)
            continue;
        if (*s == '[') {
            char *close = strchr(s, ']');
            if (!close || trim(close + 1)[0])
                rc = fail_at(e, lineno, "bad section header '%s'", s);
            if (rc)
                break;
            *close = '\0';
            if ((rc = finish_config(e, text, text_line)) != 0)
                break;
            text[0] = '\0';
            char *name = trim(s + 1);
            in_workload = strcmp(name, "workload") == 0;
            text_line = lineno;
            if (!in_workload)
                rc = add_config(e, name, lineno);
            continue;
        }
        if (in_workload) {
            char *eq = strchr(s, '=');
            if (!eq) {
                rc = fail_at(e, lineno, "expected key = value in [workload], got '%s'", s);
                break;
            }
            *eq = '\0';
            rc = workload_key(e, trim(s), trim(eq + 1), lineno);
            continue;
        }
        char *colon = strchr(s, ':');
        const char *eq = strchr(s, '=');
        if (colon && (!eq || colon < eq)) { /* "name: config text" */
            if ((rc = finish_config(e, text, text_line)) != 0)
                break;
            *colon = '\0';
            if ((rc = add_config(e, trim(s), lineno)) != 0)
                break;
            snprintf(text, sizeof text, "%s", trim(colon + 1));
            text_line = lineno;
            continue;
        }
        if (e->nconfigs == 0) {
            rc =
                fail_at(e, lineno, "'%s' outside any section (start with [workload] or [name])", s);
            break;
        }
        if (strlen(text) + strlen(s) + 2 >= sizeof text) {
            rc = fail_at(e, lineno, "configuration text longer than %s bytes", "8191");
            break;
        }
        strcat(text, " ");
        strcat(text, s);
    }
    if (!rc && ferror(f)) {
        fprintf(stderr, "bloomkit experiment: %s: read error\n", e->path);
        rc = EXIT_IO;
    }
    fclose(f);
    if (!rc)
        rc = finish_config(e, text, text_line);
    if (!rc && e->nconfigs == 0)
        rc = fail_at(e, lineno, "no configuration (add a [name] section of config %s)", "text");
    if (!rc && !e->nkeys && !e->keys_file)
        rc = fail_at(e, lineno, "the workload needs keys = N or %s", "keys_file = PATH");
    if (!rc && e->nkeys && e->keys_file)
        rc = fail_at(e, lineno, "give keys or keys_file, not %s", "both");
    if (!rc && !e->nprobes && !e->probes_file)
        e->nprobes = 100000;
    if (!rc && e->nprobes && e->probes_file)
        rc = fail_at(e, lineno, "give probes or probes_file, not %s", "both");
    return rc;
}

/* ---- keys ---------------------------------------------------------------- */

static int keys_generate(keys *k, const char *family, uint64_t n)
{
    k->n = (size_t)n;
    k->bytes = malloc((size_t)n * 64 + 1);
    k->off = malloc(((size_t)n + 1) * sizeof *k->off);
    if (!k->bytes || !k->off)
        return -1;
    size_t pos = 0;
    for (uint64_t i = 0; i < n; i++) {
        k->off[i] = pos;
        /* crawler-like: host, path, query; the family keeps sets disjoint */
        pos += (size_t)snprintf(k->bytes + pos, 64, "https://s%llu.example.org/%s/%llu?p=%llu",
                                (unsigned long long)(i % 997), family, (unsigned long long)i,
                                (unsigned long long)(i * 2654435761u % 100000));
    }
    k->off[n] = pos;
    return 0;
}

static int keys_load(keys *k, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 1 << 20, len = 0, ncap = 1024;
    k->bytes = malloc(cap);
    k->off = malloc(ncap * sizeof *k->off);
    k->n = 0;
    if (!k->bytes || !k->off) {
        fclose(f);
        return -1;
    }
    int c, at_start = 1;
    while ((c = getc(f)) != EOF) {
        if (len + 2 > cap) {
            char *nb = realloc(k->bytes, cap *= 2);
            if (!nb) {
                fclose(f);
                return -1;
            }
            k->bytes = nb;
        }
        if (at_start) {
            if (k->n + 2 > ncap) {
                size_t *no = realloc(k->off, (ncap *= 2) * sizeof *no);
                if (!no) {
                    fclose(f);
                    return -1;
                }
                k->off = no;
            }
            k->off[k->n++] = len;
            at_start = 0;
        }
        if (c == '\n') {
            if (len > k->off[k->n - 1] && k->bytes[len - 1] == '\r')
                len--; /* CRLF: the CR is not part of the key */
            at_start = 1;
            continue;
        }
        k->bytes[len++] = (char)c;
    }
    fclose(f);
    if (!k->off)
        return -1;
    k->off[k->n] = len;
    return 0;
}

static void keys_free(keys *k)
{
    free(k->bytes);
    free(k->off);
}

/* ---- checkpoints ---------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int make_checkpoints(experiment *e, uint64_t n)
{
    const char *s = e->ckspec[0] ? e->ckspec : "10%";
    int cnt = 0;
    char *end;
    if (strncmp(s, "geometric", 9) == 0) {
        errno = 0;
        const double start = strtod(s + 9, &end), factor = strtod(end, &end);
        if (errno || *trim(end) || !(start >= 1) || !(factor > 1.0))
            return fail_at(e, e->ckline, "checkpoints: '%s' (geometric START >= 1 FACTOR > 1)", s);
        for (double v = start; v < (double)n && cnt < MAX_CHECKPOINTS - 1; v *= factor)
            e->checkpoints[cnt++] = (uint64_t)v;
    } else if (strncmp(s, "list", 4) == 0) {
        const char *p = s + 4;
        while (*p && cnt < MAX_CHECKPOINTS - 1) {
            while (isspace((unsigned char)*p))
                p++;
            if (!*p)
                break;
            errno = 0;
            const unsigned long long v = strtoull(p, &end, 10);
            if (end == p || errno || v == 0 || v > n)
                return fail_at(e, e->ckline,
                               "checkpoints: '%s' (list of whole numbers 1 .. the key count)", s);
            e->checkpoints[cnt++] = v;
            p = end;
        }
    } else {
        errno = 0;
        const double pct = strtod(s, &end);
        if (errno || strcmp(trim(end), "%") != 0 || !(pct > 0) || pct > 100)
            return fail_at(e, e->ckline, "checkpoints: '%s' (P%%, geometric or list)", s);
        const double step = (double)n * pct / 100.0;
        for (double v = step; v < (double)n && cnt < MAX_CHECKPOINTS - 1; v += step)
            if ((uint64_t)v > 0)
                e->checkpoints[cnt++] = (uint64_t)v;
    }
    e->checkpoints[cnt++] = n; /* always measure at the end */
    qsort(e->checkpoints, (size_t)cnt, sizeof e->checkpoints[0], cmp_u64);
    int u = 0;
    for (int i = 0; i < cnt; i++)
        if (i == 0 || e->checkpoints[i] != e->checkpoints[u - 1])
            e->checkpoints[u++] = e->checkpoints[i];
    e->ncheckpoints = u;
    return 0;
}

/* ---- measuring ------------------------------------------------------------ */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Wilson score interval for x successes in n trials, 95%. */
static void wilson(uint64_t x, uint64_t n, double *lo, double *hi)
{
    const double z = 1.959963984540054, p = (double)x / (double)n, nn = (double)n;
    const double den = 1 + z * z / nn, mid = (p + z * z / (2 * nn)) / den;
    const double half = z * sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / den;
    *lo = mid - half < 0 ? 0 : mid - half;
    *hi = mid + half > 1 ? 1 : mid + half;
}

static int measure(const experiment *e, int ci, const keys *ins, const keys *probes, row *rows,
                   int *nrows)
{
    bk_filter *f;
    int rc = bk_new(&e->cfgs[ci], &f);
    if (rc != BK_OK) {
        fprintf(stderr, "bloomkit experiment: configuration '%s': %s\n", e->names[ci],
                bk_strerror(rc));
        return cli_exit_for(rc);
    }
    size_t done = 0;
    for (int c = 0; c < e->ncheckpoints; c++) {
        const size_t upto = (size_t)e->checkpoints[c];
        const double t0 = now_ns();
        for (; done < upto; done++) {
            rc = bk_add(f, ins->bytes + ins->off[done], ins->off[done + 1] - ins->off[done]);
            if (rc < 0)
                break;
        }
        const double t1 = now_ns();
        if (rc < 0) {
            fprintf(stderr, "bloomkit experiment: configuration '%s': add: %s\n", e->names[ci],
                    bk_strerror(rc));
            bk_free(f);
            return cli_exit_for(rc);
        }
        uint64_t fp = 0;
        for (size_t i = 0; i < probes->n; i++)
            fp += bk_contains(f, probes->bytes + probes->off[i],
                              probes->off[i + 1] - probes->off[i]) == 1;
        const double t2 = now_ns();
        bk_filter_stats st;
        bk_stats(f, &st);
        row *r = &rows[(*nrows)++];
        r->config = e->names[ci];
        r->keys = upto;
        r->probes = probes->n;
        r->false_pos = fp;
        r->fpr = probes->n ? (double)fp / (double)probes->n : 0;
        wilson(fp, probes->n ? probes->n : 1, &r->lo, &r->hi);
        r->model = st.model_fpr;
        r->bytes = st.bytes;
        r->bits_per_key = upto ? 8.0 * (double)st.bytes / (double)upto : 0;
        r->slices = st.slices;
        r->saturated = st.saturated;
        const size_t added = upto - (c ? (size_t)e->checkpoints[c - 1] : 0);
        r->ns_add = added ? (t1 - t0) / (double)added : 0;
        r->ns_lookup = probes->n ? (t2 - t1) / (double)probes->n : 0;
    }
    bk_free(f);
    return 0;
}

/* ---- output --------------------------------------------------------------- */

static void print_table(const row *rows, int n)
{
    printf("%-16s %12s %11s %23s %11s %9s %12s %6s %9s %8s %8s\n", "config", "keys", "fpr",
           "95% interval", "model", "bits/key", "bytes", "slices", "saturated", "ns/add",
           "ns/look");
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        printf("%-16s %12llu %11.4e [%10.4e,%10.4e] %11.4e %9.2f %12llu %6u %9llu %8.1f %8.1f\n",
               r->config, (unsigned long long)r->keys, r->fpr, r->lo, r->hi, r->model,
               r->bits_per_key, (unsigned long long)r->bytes, r->slices,
               (unsigned long long)r->saturated, r->ns_add, r->ns_lookup);
    }
}

static int write_csv(const char *path, const row *rows, int n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "config,keys,probes,false_positives,fpr,fpr_ci_low,fpr_ci_high,model_fpr,"
               "bits_per_key,bytes,slices,saturated,ns_per_add,ns_per_lookup\n");
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        fprintf(f, "%s,%llu,%llu,%llu,%.6g,%.6g,%.6g,%.6g,%.4f,%llu,%u,%llu,%.2f,%.2f\n", r->config,
                (unsigned long long)r->keys, (unsigned long long)r->probes,
                (unsigned long long)r->false_pos, r->fpr, r->lo, r->hi, r->model, r->bits_per_key,
                (unsigned long long)r->bytes, r->slices, (unsigned long long)r->saturated,
                r->ns_add, r->ns_lookup);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static int write_json(const char *path, const row *rows, int n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "[");
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        fprintf(f,
                "%s\n {\"config\":\"%s\",\"keys\":%llu,\"probes\":%llu,\"false_positives\":%llu,"
                "\"fpr\":%.6g,\"fpr_ci_low\":%.6g,\"fpr_ci_high\":%.6g,\"model_fpr\":%.6g,"
                "\"bits_per_key\":%.4f,\"bytes\":%llu,\"slices\":%u,\"saturated\":%llu,"
                "\"ns_per_add\":%.2f,\"ns_per_lookup\":%.2f}",
                i ? "," : "", r->config, (unsigned long long)r->keys, (unsigned long long)r->probes,
                (unsigned long long)r->false_pos, r->fpr, r->lo, r->hi, r->model, r->bits_per_key,
                (unsigned long long)r->bytes, r->slices, (unsigned long long)r->saturated,
                r->ns_add, r->ns_lookup);
    }
    fprintf(f, "\n]\n");
    return fclose(f) == 0 ? 0 : -1;
}

int cmd_experiment(int argc, char **argv)
{
    cli_opts o;
    int rc = cli_parse(argc, argv, "experiment", O_CONFIG_FILE | O_CSV | O_JSON_FILE | O_HELP, &o);
    if (rc || o.help)
        return rc ? rc : cli_help(usage);
    if (!o.config_file || o.nargs)
        return cli_fail(&o, EXIT_USAGE, "give --config-file EXP (see bloomkit experiment --help)");
    experiment *e = calloc(1, sizeof *e);
    if (!e)
        return cli_fail(&o, EXIT_IO, "out of memory");
    e->path = o.config_file;
    keys ins = {0}, probes = {0};
    row *rows = NULL;
    int nrows = 0;
    rc = read_experiment(e);
    if (!rc && (e->keys_file ? keys_load(&ins, e->keys_file)
                             : keys_generate(&ins, "insert", e->nkeys)) != 0)
        rc = e->keys_file ? cli_fail(&o, EXIT_IO, "%s: %s", e->keys_file, strerror(errno))
                          : cli_fail(&o, EXIT_IO, "out of memory for %llu keys",
                                     (unsigned long long)e->nkeys);
    if (!rc && (e->probes_file ? keys_load(&probes, e->probes_file)
                               : keys_generate(&probes, "probe", e->nprobes)) != 0)
        rc = e->probes_file ? cli_fail(&o, EXIT_IO, "%s: %s", e->probes_file, strerror(errno))
                            : cli_fail(&o, EXIT_IO, "out of memory for %llu probes",
                                       (unsigned long long)e->nprobes);
    if (!rc && ins.n == 0)
        rc = cli_fail(&o, EXIT_USAGE, "the workload has no keys to insert");
    if (!rc)
        rc = make_checkpoints(e, ins.n);
    if (!rc && !(rows = calloc((size_t)e->nconfigs * (size_t)e->ncheckpoints, sizeof *rows)))
        rc = cli_fail(&o, EXIT_IO, "out of memory");
    for (int c = 0; !rc && c < e->nconfigs; c++)
        rc = measure(e, c, &ins, &probes, rows, &nrows);
    if (!rc) {
        print_table(rows, nrows);
        if (o.csv && write_csv(o.csv, rows, nrows) != 0)
            rc = cli_fail(&o, EXIT_IO, "%s: %s", o.csv, strerror(errno));
        if (!rc && o.json_file && write_json(o.json_file, rows, nrows) != 0)
            rc = cli_fail(&o, EXIT_IO, "%s: %s", o.json_file, strerror(errno));
    }
    free(rows);
    keys_free(&ins);
    keys_free(&probes);
    free(e->keys_file);
    free(e->probes_file);
    free(e);
    return rc;
}
