/*
 * exp_file.c - the experiment file of `bloomkit experiment` (experiment.h).
 *
 * EXP holds a [workload] section and one section per configuration (INI
 * style: "[name]" then config text, any number of lines), or configurations
 * one per line as "name: config text". Workload keys:
 *   keys = N | keys_file = PATH       keys to insert (generated or one per line)
 *   probes = N | probes_file = PATH   keys never inserted, for the measured rate
 *   phases = insert 50%, delete 25%, insert 50%
 *                                     the operations, in order (default: insert
 *                                     every key); amounts are a percentage of
 *                                     the keys or a number; delete removes the
 *                                     oldest keys still inserted (variants that remove)
 *   checkpoints = 10% | geometric START FACTOR | list N1 N2 ...
 *                                     when to measure, counted in operations
 *                                     (inserts, with the default phases); every
 *                                     phase end is measured too
 *   arrivals = N/UNIT, duration = D   over simulated time (exp_time.c): N keys
 *                                     per s, m, h or d, for D (s, m, h, d);
 *                                     the key count follows (keys_file: its
 *                                     first keys), checkpoints are a share of
 *                                     D (default 2%), phases do not apply
 *   revisits = AGE ...                each key is seen again at these ages
 * Every error names the file and line.
 */
#define _DEFAULT_SOURCE
#include <ctype.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "experiment.h"

FILE *exp_open_regular(const char *path)
{
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return NULL;
    int e = 0;
    if (fstat(fd, &st) != 0)
        e = errno;
    else if (!S_ISREG(st.st_mode))
        e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL; /* EINVAL: a FIFO, a device */
    if (e) {
        close(fd);
        errno = e;
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f)
        close(fd);
    return f;
}

int exp_fail_at(const experiment *e, int line, const char *fmt, const char *a)
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

/* A count as the config text reads one (1000000, 1e6, 1M), below 10^15. */
static int parse_u64(const char *s, uint64_t *out)
{
    uint64_t v;
    if (bk_count_parse(s, &v) != BK_OK || v >= UINT64_C(1000000000000000))
        return -1;
    *out = v;
    return 0;
}

/* "90d": a whole number of s, m, h or d, in ms (0 < D <= 10 years). */
static int parse_age(const char *s, uint64_t *ms)
{
    static const char units[] = "smhd";
    static const uint64_t unit_ms[] = {1000, 60000, 3600000, 86400000};
    const size_t digits = strspn(s, "0123456789");
    const char *u = digits && s[digits] && !s[digits + 1] ? strchr(units, s[digits]) : NULL;
    if (!u || digits > 9)
        return -1;
    *ms = strtoull(s, NULL, 10) * unit_ms[u - units];
    return *ms > 0 && *ms <= UINT64_C(3650) * 86400000 ? 0 : -1;
}

/* A path named in the file at `exp`: relative to the file's directory, as
 * a reader of the file expects (absolute ones as they are). malloc'd. */
static char *beside(const char *exp, const char *path)
{
    const char *slash = strrchr(exp, '/');
    if (path[0] == '/' || !slash)
        return strdup(path);
    const size_t dir = (size_t)(slash - exp) + 1, n = dir + strlen(path) + 1;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%.*s%s", (int)dir, exp, path);
    return out;
}

/* Where a configuration's text came from: the file line of each of its
 * lines, and of its section's header. */
typedef struct text_lines {
    int header;
    int n;
    int at[512];
} text_lines;

/* A configuration's text, accumulated over its lines, then parsed: an error
 * names the file's line once (the parser's "line N: " of the text becomes
 * the file's line). */
static int finish_config(experiment *e, const char *text, const text_lines *tl)
{
    if (e->nconfigs == 0)
        return 0;
    char err[256];
    bk_config *c = &e->cfgs[e->nconfigs - 1];
    if (bk_config_parse(c, text, err, sizeof err) == BK_OK)
        return 0;
    int n = 0, used = 0;
    if (sscanf(err, "line %d: %n", &n, &used) == 1 && used > 0 && n >= 1 && n <= tl->n)
        return exp_fail_at(e, tl->at[n - 1], "%s", err + used);
    return exp_fail_at(e, tl->header, "%s", err);
}

static int add_config(experiment *e, const char *name, int line)
{
    if (e->nconfigs == EXP_MAX_CONFIGS)
        return exp_fail_at(e, line, "more than %s configurations", "64");
    if (!*name || strlen(name) >= EXP_NAME_MAX || strpbrk(name, ",\"\\"))
        return exp_fail_at(e, line,
                           "configuration name '%s' must be 1-63 characters without , \" \\", name);
    for (int i = 0; i < e->nconfigs; i++)
        if (strcmp(e->names[i], name) == 0)
            return exp_fail_at(e, line, "configuration '%s' named twice", name);
    e->lines[e->nconfigs] = line;
    snprintf(e->names[e->nconfigs++], EXP_NAME_MAX, "%s", name);
    return 0;
}

/* Generated keys live in memory (64 bytes each): at most a billion. */
#define GEN_MAX UINT64_C(1000000000)

/* "insert 50%, delete 25%, insert 50%": ops and amounts (percent of the
 * keys, or numbers), resolved by exp_plan once the key count is known. */
static int parse_phases(experiment *e, char *v, int line)
{
    e->nphases = 0;
    e->phline = line;
    char *save = NULL;
    for (char *item = strtok_r(v, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *s = trim(item), *amount = s + strcspn(s, " \t");
        if (*amount)
            *amount++ = '\0';
        amount = trim(amount);
        exp_phase *ph = &e->phases[e->nphases];
        if (e->nphases == EXP_MAX_PHASES)
            return exp_fail_at(e, line, "phases: more than %s", "16");
        if (strcmp(s, "insert") == 0)
            ph->op = EXP_INSERT;
        else if (strcmp(s, "delete") == 0)
            ph->op = EXP_DELETE;
        else
            return exp_fail_at(e, line, "phases: '%s' is not insert or delete", s);
        char *end;
        errno = 0;
        const size_t n = strlen(amount);
        if (n > 1 && amount[n - 1] == '%') {
            ph->pct = strtod(amount, &end);
            ph->count = 0;
            if (errno || end != amount + n - 1 || !(ph->pct > 0) || ph->pct > 100)
                return exp_fail_at(e, line, "phases: amount '%s' (a percentage 0 < P <= 100)",
                                   amount);
        } else {
            ph->pct = -1;
            if (parse_u64(amount, &ph->count) != 0 || ph->count == 0)
                return exp_fail_at(e, line,
                                   "phases: amount '%s' (a whole number >= 1, or P%% of the keys)",
                                   amount);
        }
        e->nphases++;
    }
    if (e->nphases == 0)
        return exp_fail_at(e, line, "phases: empty (for example: %s)", "insert 50%, delete 25%");
    return 0;
}

/* The keys of simulated time: arrivals, duration, revisits. */
static int time_key(experiment *e, const char *k, char *v, int line)
{
    if (strcmp(k, "duration") == 0) {
        if (parse_age(v, &e->duration_ms) != 0)
            return exp_fail_at(e, line, "duration: '%s' (a whole number of s, m, h or d)", v);
        return 0;
    }
    if (strcmp(k, "arrivals") == 0) {
        char given[64];
        snprintf(given, sizeof given, "%s", v);
        char *slash = strchr(v, '/');
        uint64_t n, per;
        char unit[3] = {0};
        if (slash && slash[1] && !slash[2]) {
            unit[0] = '1';
            unit[1] = slash[1];
            *slash = '\0';
        }
        if (!slash || parse_u64(v, &n) != 0 || n == 0 || n > GEN_MAX || parse_age(unit, &per) != 0)
            return exp_fail_at(e, line, "arrivals: '%s' (keys per unit: N/s, N/m, N/h or N/d)",
                               given);
        e->arrivals_per_ms = (double)n / (double)per;
        e->tline = line;
        return 0;
    }
    e->nages = 0; /* revisits */
    char *save = NULL;
    for (char *a = strtok_r(v, " \t,", &save); a; a = strtok_r(NULL, " \t,", &save)) {
        if (e->nages == EXP_MAX_AGES)
            return exp_fail_at(e, line, "revisits: more than %s ages", "16");
        if (parse_age(a, &e->ages_ms[e->nages++]) != 0)
            return exp_fail_at(e, line, "revisits: '%s' (ages such as 7d 29d 31d)", a);
    }
    return e->nages ? 0 : exp_fail_at(e, line, "revisits: no age (for example: %s)", "7d 31d");
}

static int workload_key(experiment *e, char *k, char *v, int line)
{
    static const char *const known[] = {"keys",        "keys_file", "probes",
                                        "probes_file", "phases",    "checkpoints",
                                        "arrivals",    "duration",  "revisits"};
    for (int i = 0; i < 9; i++)
        if (strcmp(k, known[i]) == 0) {
            if (e->workload_seen & (1u << i))
                return exp_fail_at(e, line, "workload key '%s' given twice", k);
            e->workload_seen |= 1u << i;
            /* keys and keys_file (probes and probes_file) say one thing twice */
            if (i < 4 && (e->workload_seen & (1u << (i ^ 1)))) {
                char msg[64];
                snprintf(msg, sizeof msg, "give %s or %s, not both", known[i & ~1], known[i | 1]);
                return exp_fail_at(e, line, "%s", msg);
            }
        }
    if (strcmp(k, "phases") == 0)
        return parse_phases(e, v, line);
    if (strcmp(k, "arrivals") == 0 || strcmp(k, "duration") == 0 || strcmp(k, "revisits") == 0)
        return time_key(e, k, v, line);
    if (strcmp(k, "keys") == 0 && parse_u64(v, &e->nkeys) == 0 && e->nkeys > 0 &&
        e->nkeys <= GEN_MAX)
        return 0;
    if (strcmp(k, "probes") == 0 && parse_u64(v, &e->nprobes) == 0 && e->nprobes > 0 &&
        e->nprobes <= GEN_MAX)
        return 0;
    if ((strcmp(k, "keys_file") == 0 || strcmp(k, "probes_file") == 0) && *v) {
        char **field = k[0] == 'k' ? &e->keys_file : &e->probes_file;
        free(*field);
        if (!(*field = beside(e->path, v)))
            return exp_fail_at(e, line, "out of memory%s", "");
        return 0;
    }
    if (strcmp(k, "checkpoints") == 0 && strlen(v) < sizeof e->ckspec) {
        snprintf(e->ckspec, sizeof e->ckspec, "%s", v);
        e->ckline = line;
        return 0;
    }
    if (strcmp(k, "keys") != 0 && strcmp(k, "probes") != 0 && strcmp(k, "keys_file") != 0 &&
        strcmp(k, "probes_file") != 0 && strcmp(k, "checkpoints") != 0)
        return exp_fail_at(e, line,
                           "unknown workload key '%s' (keys, keys_file, probes, probes_file, "
                           "phases, checkpoints, arrivals, duration, revisits)",
                           k);
    return exp_fail_at(e, line,
                       "bad value for workload key '%s' (a whole number 1 .. 10^9, or a path)", k);
}

/* long: one loop over the file's lines, a case per section and key. */
int exp_read(experiment *e)
{
    FILE *f = exp_open_regular(e->path);
    if (!f) {
        fprintf(stderr, "bloomkit experiment: %s: %s\n", e->path, strerror(errno));
        return EXIT_IO;
    }
    char line[4096], text[8192] = "";
    int lineno = 0, in_workload = 0, rc = 0;
    text_lines tl = {0, 0, {0}};
    long at = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        const long next = ftell(f);
        if (next - at != (long)strlen(line)) { /* fgets read past a NUL byte */
            rc = exp_fail_at(e, lineno, "a NUL byte in the line%s", "");
            break;
        }
        at = next;
        if (!strchr(line, '\n') && !feof(f)) {
            rc = exp_fail_at(e, lineno, "line longer than %s bytes", "4095");
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
                rc = exp_fail_at(e, lineno, "bad section header '%s'", s);
            if (rc)
                break;
            *close = '\0';
            if ((rc = finish_config(e, text, &tl)) != 0)
                break;
            text[0] = '\0';
            char *name = trim(s + 1);
            in_workload = strcmp(name, "workload") == 0;
            tl.header = lineno;
            tl.n = 0;
            if (!in_workload)
                rc = add_config(e, name, lineno);
            continue;
        }
        char *colon = strchr(s, ':');
        if (in_workload && colon && (!strchr(s, '=') || colon < strchr(s, '=')))
            in_workload = 0; /* a "name: config" line ends the workload */
        if (in_workload) {
            char *eq = strchr(s, '=');
            if (!eq) {
                rc = exp_fail_at(e, lineno, "expected key = value in [workload], got '%s'", s);
                break;
            }
            *eq = '\0';
            rc = workload_key(e, trim(s), trim(eq + 1), lineno);
            continue;
        }
        const char *eq = strchr(s, '=');
        if (colon && (!eq || colon < eq)) { /* "name: config text" */
            if ((rc = finish_config(e, text, &tl)) != 0)
                break;
            *colon = '\0';
            if ((rc = add_config(e, trim(s), lineno)) != 0)
                break;
            snprintf(text, sizeof text, "%s", trim(colon + 1));
            tl.header = lineno;
            tl.n = 1;
            tl.at[0] = lineno;
            continue;
        }
        if (e->nconfigs == 0) {
            rc = exp_fail_at(e, lineno,
                             "'%s' outside any section (start with [workload] or [name])", s);
            break;
        }
        if (strlen(text) + strlen(s) + 2 >= sizeof text) {
            rc = exp_fail_at(e, lineno, "configuration text longer than %s bytes", "8191");
            break;
        }
        if (text[0])
            strcat(text, "\n");
        strcat(text, s);
        if (tl.n < (int)(sizeof tl.at / sizeof *tl.at))
            tl.at[tl.n++] = lineno;
    }
    if (!rc && ferror(f)) {
        fprintf(stderr, "bloomkit experiment: %s: read error\n", e->path);
        rc = EXIT_IO;
    }
    fclose(f);
    if (!rc)
        rc = finish_config(e, text, &tl);
    if (!rc && e->nconfigs == 0)
        rc = exp_fail_at(e, lineno, "no configuration (add a [name] section of config %s)", "text");
    if (!rc && (e->arrivals_per_ms > 0) != (e->duration_ms > 0))
        rc = exp_fail_at(e, lineno, "simulated time needs both arrivals and %s", "duration");
    if (!rc && e->nages && !exp_timed(e))
        rc = exp_fail_at(e, lineno, "revisits need simulated time (arrivals and %s)", "duration");
    if (!rc && exp_timed(e) && (e->nkeys || e->nphases))
        rc = exp_fail_at(e, lineno,
                         "over simulated time the keys follow from arrivals and "
                         "duration: drop %s",
                         e->nkeys ? "keys" : "phases");
    if (!rc && exp_timed(e)) {
        const double n = exp_timed_keys(e);
        if (n > (double)GEN_MAX)
            rc = exp_fail_at(e, lineno, "arrivals x duration is more than %s keys", "10^9");
        else if (!e->keys_file)
            e->nkeys = (uint64_t)n;
    }
    if (!rc && !e->nkeys && !e->keys_file)
        rc = exp_fail_at(e, lineno, "the workload needs keys = N or %s", "keys_file = PATH");
    if (!rc && e->nkeys && e->keys_file)
        rc = exp_fail_at(e, lineno, "give keys or keys_file, not %s", "both");
    if (!rc && !e->nprobes && !e->probes_file)
        e->nprobes = 100000;
    if (!rc && e->nprobes && e->probes_file)
        rc = exp_fail_at(e, lineno, "give probes or probes_file, not %s", "both");
    return rc;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int make_checkpoints(experiment *e, uint64_t n)
{
    const char *s = e->ckspec[0] ? e->ckspec : "10%";
    const int room = EXP_MAX_CHECKPOINTS - EXP_MAX_PHASES;
    int cnt = 0;
    char *end;
    if (strncmp(s, "geometric", 9) == 0) {
        errno = 0;
        const double start = strtod(s + 9, &end), factor = strtod(end, &end);
        if (errno || *trim(end) || !(start >= 1) || !(factor > 1.0))
            return exp_fail_at(e, e->ckline, "checkpoints: '%s' (geometric START >= 1 FACTOR > 1)",
                               s);
        for (double v = start; v < (double)n && cnt < room; v *= factor)
            e->checkpoints[cnt++] = (uint64_t)v;
    } else if (strncmp(s, "list", 4) == 0) {
        const char *p = s + 4;
        while (*p && cnt < room) {
            while (isspace((unsigned char)*p))
                p++;
            if (!*p)
                break;
            errno = 0;
            const unsigned long long v = strtoull(p, &end, 10);
            if (end == p || errno || v == 0 || v > n)
                return exp_fail_at(
                    e, e->ckline,
                    "checkpoints: '%s' (list of whole numbers 1 .. the operation count)", s);
            e->checkpoints[cnt++] = v;
            p = end;
        }
    } else {
        errno = 0;
        const double pct = strtod(s, &end);
        if (errno || strcmp(trim(end), "%") != 0 || !(pct > 0) || pct > 100)
            return exp_fail_at(e, e->ckline, "checkpoints: '%s' (P%%, geometric or list)", s);
        const double step = (double)n * pct / 100.0;
        for (double v = step; v < (double)n && cnt < room; v += step)
            if ((uint64_t)v > 0)
                e->checkpoints[cnt++] = (uint64_t)v;
    }
    uint64_t end_of = 0; /* every phase end, the last one included */
    for (int i = 0; i < e->nphases; i++)
        e->checkpoints[cnt++] = end_of += e->phases[i].count;
    qsort(e->checkpoints, (size_t)cnt, sizeof e->checkpoints[0], cmp_u64);
    int u = 0;
    for (int i = 0; i < cnt; i++)
        if (i == 0 || e->checkpoints[i] != e->checkpoints[u - 1])
            e->checkpoints[u++] = e->checkpoints[i];
    e->ncheckpoints = u;
    return 0;
}

uint64_t exp_total_ops(const experiment *e)
{
    uint64_t t = 0;
    for (int i = 0; i < e->nphases; i++)
        t += e->phases[i].count;
    return t;
}

int exp_plan(experiment *e, uint64_t n)
{
    if (exp_timed(e)) { /* one insert phase, its checkpoints in ms of the run */
        if ((double)n < exp_timed_keys(e))
            return exp_fail_at(e, e->tline, "%s has fewer keys than arrivals x duration",
                               e->keys_file);
        if (!e->ckspec[0])
            snprintf(e->ckspec, sizeof e->ckspec, "2%%");
        e->phases[0] = (exp_phase){EXP_INSERT, -1, e->duration_ms}; /* its end: a checkpoint */
        e->nphases = 1;
        return make_checkpoints(e, e->duration_ms);
    }
    if (e->nphases == 0) {
        e->phases[0] = (exp_phase){EXP_INSERT, 100.0, 0};
        e->nphases = 1;
    }
    uint64_t inserted = 0, present = 0;
    int deletes = 0;
    for (int i = 0; i < e->nphases; i++) {
        exp_phase *ph = &e->phases[i];
        if (ph->pct > 0)
            ph->count = (uint64_t)((double)n * ph->pct / 100.0 + 0.5);
        if (ph->count == 0)
            return exp_fail_at(e, e->phline, "phases: phase %s has no keys (too few keys)",
                               ph->op == EXP_INSERT ? "insert" : "delete");
        if (ph->op == EXP_INSERT) {
            if (ph->count > n - inserted)
                return exp_fail_at(e, e->phline,
                                   "phases: the inserts need more keys than the workload has "
                                   "(%s)",
                                   e->keys_file ? e->keys_file : "keys = N");
            inserted += ph->count;
            present += ph->count;
        } else {
            if (ph->count > present)
                return exp_fail_at(e, e->phline,
                                   "phases: a delete of more keys than are inserted at that %s",
                                   "point");
            present -= ph->count;
            deletes = 1;
        }
    }
    char why[256], can[64];
    for (int c = 0; deletes && c < e->nconfigs; c++)
        if (!bk_variant_removes(e->cfgs[c].variant)) {
            snprintf(why, sizeof why,
                     "configuration '%s' cannot delete (only %s filters can); the workload's "
                     "phases delete",
                     e->names[c], cli_removing_variants(can, sizeof can));
            return exp_fail_at(e, e->lines[c], "%s", why);
        }
    return make_checkpoints(e, exp_total_ops(e));
}

void exp_free(experiment *e)
{
    free(e->keys_file);
    free(e->probes_file);
    e->keys_file = e->probes_file = NULL;
}
