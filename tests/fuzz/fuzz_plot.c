/* fuzz_plot.c - libFuzzer target: the gnuplot script of `bloomkit
 * experiment --plot` (programs/experiment/exp_plot.c). The input is the
 * experiment file's path and up to eight configuration names, NUL-separated,
 * any bytes (an odd length draws the plot of a run over simulated time).
 * Whatever they hold, the script must stay the script we write:
 * every line is one of our commands, a data line or a continuation, and
 * outside single-quoted strings (read by gnuplot's rules: '' is a quote, no
 * escapes, no macros) nothing but our own words appears. A name that could
 * end a string or a line and add a command (issue 16: `"; system "..."`)
 * aborts. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiment.h"

/* Lines of the script outside data blocks start with one of these. */
static int known_command(const char *line)
{
    static const char *const starts[] = {"set ", "unset ",  "plot ", "     $d", "$d", "     $t",
                                         "$t",   "     $r", "$r",    "EOD",     NULL};
    for (int i = 0; starts[i]; i++)
        if (strncmp(line, starts[i], strlen(starts[i])) == 0)
            return 1;
    return 0;
}

/* Check one line: single-quoted strings close on it, and outside them no
 * command separator, backquote, double quote or shell escape appears. */
static void check_line(const char *line, size_t len)
{
    int quoted = 0;
    for (size_t i = 0; i < len; i++) {
        const char c = line[i];
        if (quoted) {
            if (c == '\'' && i + 1 < len && line[i + 1] == '\'')
                i++;
            else if (c == '\'')
                quoted = 0;
            continue;
        }
        if (c == '\'')
            quoted = 1;
        else if (c == ';' || c == '`' || c == '"' || c == '!' || c == '@')
            abort(); /* only a quoted text could have brought it */
    }
    if (quoted)
        abort(); /* a string left open: the next line would be inside it */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static experiment e;
    static char path[1024];
    memset(&e, 0, sizeof e);
    size_t at = 0, n = 0;
    while (at < size && data[at] && n + 1 < sizeof path)
        path[n++] = (char)data[at++];
    path[n] = '\0';
    at++;
    e.path = path;
    while (at < size && e.nconfigs < 8) {
        size_t k = 0;
        while (at < size && data[at] && k + 1 < EXP_NAME_MAX)
            e.names[e.nconfigs][k++] = (char)data[at++];
        at++;
        e.nconfigs++;
    }
    if (e.nconfigs == 0)
        snprintf(e.names[e.nconfigs++], EXP_NAME_MAX, "only");
    const int timed = size & 1; /* the plot of a run over simulated time */
    if (timed) {
        e.duration_ms = 86400000;
        e.arrivals_per_ms = 1e-3;
    }
    exp_row rows[8 * 3];
    memset(rows, 0, sizeof rows);
    static char tags[8][16];
    int nrows = 0;
    for (int c = 0; c < e.nconfigs; c++) {
        snprintf(tags[c], sizeof tags[c], "c%d", c); /* distinct: one curve each */
        for (int j = 0; j < 3; j++, nrows++) {
            exp_row *r = &rows[nrows];
            r->config = tags[c];
            r->phase = !timed ? "insert" : j < 2 ? "time" : "revisit";
            r->time_ms = r->age_ms = (uint64_t)(j + 1) * 3600000;
            r->reemit = r->reemit_model = 0.5;
            r->reemit_lo = 0.4;
            r->reemit_hi = 0.6;
            r->ops = r->keys = (uint64_t)(j + 1) * 1000;
            r->probes = 10000;
            r->fpr = 0.01 * (j + 1);
            r->lo = r->fpr / 2;
            r->hi = r->fpr * 2;
            r->model = r->fpr;
            r->bits_per_key = 9.6;
        }
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return 0;
    exp_plot_script(f, &e, path, rows, nrows);
    fclose(f);
    int in_data = 0;
    for (char *line = buf; line < buf + len;) {
        char *end = memchr(line, '\n', (size_t)(buf + len - line));
        const size_t l = end ? (size_t)(end - line) : (size_t)(buf + len - line);
        if (in_data) {
            in_data = !(l == 3 && memcmp(line, "EOD", 3) == 0);
        } else {
            char save = line[l];
            line[l] = '\0';
            if (!known_command(line))
                abort();
            line[l] = save;
            check_line(line, l);
            in_data = l > 6 && line[0] == '$' && memcmp(line + l - 6, "<< EOD", 6) == 0;
        }
        line += l + 1;
    }
    free(buf);
    return 0;
}
