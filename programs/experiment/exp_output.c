/*
 * exp_output.c - the rows of `bloomkit experiment` as an aligned table, CSV
 * and JSON (experiment.h). Files are written to a temporary name beside
 * the target and renamed over it when complete, so a failed run never
 * leaves half a file where a whole one was.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "experiment.h"

/* Over simulated time: the checkpoints (time in days), then the revisits
 * of each age. */
static void print_timed(const exp_row *rows, int n, int w)
{
    printf("%-*s %9s %12s %11s %23s %11s %9s %12s %6s\n", w, "config", "day", "keys held", "fpr",
           "95% interval", "model", "bits/key", "bytes", "slices");
    for (int i = 0; i < n; i++) {
        const exp_row *r = &rows[i];
        if (strcmp(r->phase, "time") == 0)
            printf("%-*s %9.2f %12llu %11.4e [%10.4e,%10.4e] %11.4e %9.2f %12llu %6u\n", w,
                   r->config, (double)r->time_ms / 86400000.0, (unsigned long long)r->keys, r->fpr,
                   r->lo, r->hi, r->model, r->bits_per_key, (unsigned long long)r->bytes,
                   r->slices);
    }
    printf("\n%-*s %9s %12s %12s %11s %23s %11s\n", w, "config", "age (d)", "revisits", "new again",
           "share", "95% interval", "model");
    for (int i = 0; i < n; i++) {
        const exp_row *r = &rows[i];
        if (strcmp(r->phase, "revisit") == 0)
            printf("%-*s %9.2f %12llu %12llu %11.4e [%10.4e,%10.4e] %11.4e\n", w, r->config,
                   (double)r->age_ms / 86400000.0, (unsigned long long)r->revisits,
                   (unsigned long long)r->reemitted, r->reemit, r->reemit_lo, r->reemit_hi,
                   r->reemit_model);
    }
}

void exp_print_table(const exp_row *rows, int n)
{
    int w = 6; /* the widest configuration name sets the first column */
    for (int i = 0; i < n; i++)
        if ((int)strlen(rows[i].config) > w)
            w = (int)strlen(rows[i].config);
    if (n > 0 && (strcmp(rows[0].phase, "time") == 0 || strcmp(rows[0].phase, "revisit") == 0)) {
        print_timed(rows, n, w);
        return;
    }
    printf("%-*s %-6s %12s %12s %11s %23s %11s %9s %12s %6s %9s %8s %8s\n", w, "config", "phase",
           "ops", "keys", "fpr", "95% interval", "model", "bits/key", "bytes", "slices",
           "saturated", "ns/op", "ns/look");
    for (int i = 0; i < n; i++) {
        const exp_row *r = &rows[i];
        printf("%-*s %-6s %12llu %12llu %11.4e [%10.4e,%10.4e] %11.4e %9.2f %12llu %6u %9llu "
               "%8.1f %8.1f\n",
               w, r->config, r->phase, (unsigned long long)r->ops, (unsigned long long)r->keys,
               r->fpr, r->lo, r->hi, r->model, r->bits_per_key, (unsigned long long)r->bytes,
               r->slices, (unsigned long long)r->saturated,
               strcmp(r->phase, "delete") == 0 ? r->ns_remove : r->ns_add, r->ns_lookup);
    }
}

int exp_temp_beside(const char *path, char **tmp)
{
    const size_t n = strlen(path) + 16;
    if (!(*tmp = malloc(n)))
        return -1;
    snprintf(*tmp, n, "%s.partXXXXXX", path);
    const int fd = mkstemp(*tmp);
    if (fd < 0) {
        const int err = errno;
        free(*tmp);
        *tmp = NULL;
        errno = err;
        return -1;
    }
    const mode_t um = umask(0); /* mkstemp makes 0600; the result gets the usual mode */
    umask(um);
    fchmod(fd, 0666 & ~um);
    return fd;
}

/* Open a temporary file beside path; *tmp receives its name. */
static FILE *open_beside(const char *path, char **tmp)
{
    const int fd = exp_temp_beside(path, tmp);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        const int err = errno;
        close(fd);
        unlink(*tmp);
        free(*tmp);
        *tmp = NULL;
        errno = err;
    }
    return f;
}

/* Close f and rename tmp over path, or remove tmp: 0 or -1 with errno. */
static int close_beside(FILE *f, char *tmp, const char *path)
{
    const int bad = ferror(f);
    int rc = fclose(f) == 0 && !bad ? 0 : -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    const int err = rc ? (errno ? errno : EIO) : 0;
    if (rc)
        unlink(tmp);
    free(tmp);
    errno = err;
    return rc;
}

int exp_write_csv(const char *path, const exp_row *rows, int n)
{
    char *tmp;
    FILE *f = open_beside(path, &tmp);
    if (!f)
        return -1;
    fprintf(f, "config,keys,probes,false_positives,fpr,fpr_ci_low,fpr_ci_high,model_fpr,"
               "bits_per_key,bytes,slices,saturated,ns_per_add,ns_per_lookup,phase,ops,"
               "ns_per_remove,time_ms,age_ms,revisits,reemitted,reemit,reemit_ci_low,"
               "reemit_ci_high,reemit_model\n");
    for (int i = 0; i < n; i++) {
        const exp_row *r = &rows[i];
        fprintf(f,
                "%s,%llu,%llu,%llu,%.6g,%.6g,%.6g,%.6g,%.4f,%llu,%u,%llu,%.2f,%.2f,%s,%llu,%.2f,"
                "%llu,%llu,%llu,%llu,%.6g,%.6g,%.6g,%.6g\n",
                r->config, (unsigned long long)r->keys, (unsigned long long)r->probes,
                (unsigned long long)r->false_pos, r->fpr, r->lo, r->hi, r->model, r->bits_per_key,
                (unsigned long long)r->bytes, r->slices, (unsigned long long)r->saturated,
                r->ns_add, r->ns_lookup, r->phase, (unsigned long long)r->ops, r->ns_remove,
                (unsigned long long)r->time_ms, (unsigned long long)r->age_ms,
                (unsigned long long)r->revisits, (unsigned long long)r->reemitted, r->reemit,
                r->reemit_lo, r->reemit_hi, r->reemit_model);
    }
    return close_beside(f, tmp, path);
}

int exp_write_json(const char *path, const exp_row *rows, int n)
{
    char *tmp;
    FILE *f = open_beside(path, &tmp);
    if (!f)
        return -1;
    fprintf(f, "[");
    for (int i = 0; i < n; i++) {
        const exp_row *r = &rows[i];
        fprintf(f,
                "%s\n {\"config\":\"%s\",\"phase\":\"%s\",\"ops\":%llu,\"keys\":%llu,"
                "\"probes\":%llu,\"false_positives\":%llu,\"fpr\":%.6g,\"fpr_ci_low\":%.6g,"
                "\"fpr_ci_high\":%.6g,\"model_fpr\":%.6g,\"bits_per_key\":%.4f,\"bytes\":%llu,"
                "\"slices\":%u,\"saturated\":%llu,\"ns_per_add\":%.2f,\"ns_per_remove\":%.2f,"
                "\"ns_per_lookup\":%.2f,\"time_ms\":%llu,\"age_ms\":%llu,\"revisits\":%llu,"
                "\"reemitted\":%llu,\"reemit\":%.6g,\"reemit_ci_low\":%.6g,"
                "\"reemit_ci_high\":%.6g,\"reemit_model\":%.6g}",
                i ? "," : "", r->config, r->phase, (unsigned long long)r->ops,
                (unsigned long long)r->keys, (unsigned long long)r->probes,
                (unsigned long long)r->false_pos, r->fpr, r->lo, r->hi, r->model, r->bits_per_key,
                (unsigned long long)r->bytes, r->slices, (unsigned long long)r->saturated,
                r->ns_add, r->ns_remove, r->ns_lookup, (unsigned long long)r->time_ms,
                (unsigned long long)r->age_ms, (unsigned long long)r->revisits,
                (unsigned long long)r->reemitted, r->reemit, r->reemit_lo, r->reemit_hi,
                r->reemit_model);
    }
    fprintf(f, "\n]\n");
    return close_beside(f, tmp, path);
}
