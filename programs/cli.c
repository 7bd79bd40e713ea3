/*
 * cli.c - option parsing, errors, config building and signals shared by every
 * command. The library never prints; this is the only layer that talks to the
 * user, always one line on stderr per error.
 */
#define _DEFAULT_SOURCE
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t cli_stop = 0;

/* The table of CLI_OPTIONS: a field's offset comes with a compile error when
 * its type is not the kind's (_Generic has no match), so set_opt's stores
 * through the offset are safe. */
enum { STR, FLAG, COUNT };
#define KIND_TYPE_STR   const char *
#define KIND_TYPE_FLAG  int
#define KIND_TYPE_COUNT uint64_t
#define CLI_OPTION_DEF(id, name, short_name, kind, field, arg)                                     \
    {name,                                                                                         \
     arg,                                                                                          \
     short_name,                                                                                   \
     kind,                                                                                         \
     (cli_optset)1 << id##_BIT,                                                                    \
     offsetof(cli_opts, field) +                                                                   \
         0 * sizeof(_Generic(((cli_opts *)0)->field, KIND_TYPE_##kind : 1))},
static const struct optdef {
    const char *name;
    const char *arg; /* its value's name in --help ("FILE"), "" for a flag */
    char short_name;
    int kind;
    cli_optset id;
    size_t field;
    /* (the sizeof of a _Generic above is a compile-time check of each field's type) */
} optdefs[] = {CLI_OPTIONS(CLI_OPTION_DEF)}; /* NOLINT(bugprone-sizeof-expression) */
#define NOPTS (sizeof optdefs / sizeof *optdefs)

int cli_fail(const cli_opts *o, int code, const char *fmt, ...)
{
    fflush(stdout);
    fprintf(stderr, "bloomkit %s: ", o && o->cmd ? o->cmd : "");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

int64_t cli_clock_at(void *ctx)
{
    return *(const int64_t *)ctx;
}

const char *cli_utc_time(int64_t ms, int iso, char *buf, size_t n)
{
    const int64_t secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    const int frac = (int)(ms - secs * 1000);
    const time_t t = (time_t)secs;
    struct tm tm;
    char whole[32];
    if (!gmtime_r(&t, &tm) ||
        strftime(whole, sizeof whole, iso ? "%Y-%m-%dT%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(whole, sizeof whole, "%lld s", (long long)secs);
    if (frac)
        snprintf(buf, n, "%s.%03d%s", whole, frac, iso ? "Z" : "");
    else
        snprintf(buf, n, "%s%s", whole, iso ? "Z" : "");
    return buf;
}

void cli_say_redated(const cli_opts *o, const bk_filter *f, const char *where)
{
    /* only a window keeps time (and bk_stats of another variant may read
     * every slot: an expandable file checks them whole then) */
    bk_config cfg;
    bk_filter_stats st;
    if (bk_get_config(f, &cfg) != BK_OK || cfg.variant != BK_VARIANT_WINDOW ||
        bk_stats(f, &st) != BK_OK || !st.redated_from_ms)
        return;
    char from[48], to[48];
    const double days = (double)(st.redated_from_ms - st.redated_to_ms) / 86400000.0;
    fflush(stdout);
    fprintf(stderr,
            "bloomkit %s: warning: %s: its newest generation starts at %s UTC, %.1f days after "
            "this clock's %s UTC (a clock ran ahead when it was written, or this one is "
            "behind): every generation is re-dated to now, so its keys are forgotten a window "
            "from now (docs/windows.md)\n",
            o->cmd, where, cli_utc_time(st.redated_from_ms, 0, from, sizeof from), days,
            cli_utc_time(st.redated_to_ms, 0, to, sizeof to));
}

int cli_out_fail(const cli_opts *o, int err)
{
    return cli_fail(o, EXIT_IO, "standard output: %s", strerror(err));
}

void cli_redact_url(const char *url, char *buf, size_t len)
{
    const char *scheme = strstr(url, "://");
    const char *body = scheme ? scheme + 3 : url;
    const char *at = strrchr(body, '@');
    const char *colon = at ? memchr(body, ':', (size_t)(at - body)) : NULL;
    if (!colon) {
        snprintf(buf, len, "%s", url);
        return;
    }
    snprintf(buf, len, "%.*s:***%s", (int)(colon - url), url, at);
}

int cli_exit_for(int rc)
{
    switch (rc) {
    case BK_EIO:
    case BK_ESERVER:
    case BK_ENOTFOUND: /* a missing shared filter, like a missing file */
    case BK_ECORRUPT:
    case BK_ENOMEM:
    case BK_ESYS:
    case BK_ERANGE:
    case BK_EBUSY:
    case BK_EFULL: /* max_bytes reached: the message names it */
        return EXIT_IO;
    default:
        return EXIT_USAGE;
    }
}

int cli_lib_fail(const cli_opts *o, int rc, const char *what)
{
    return cli_lib_fail_detail(o, rc, what, bk_last_error());
}

int cli_lib_fail_detail(const cli_opts *o, int rc, const char *what, const char *detail)
{
    if (detail && *detail && strstr(detail, what)) /* it names the file already */
        return cli_fail(o, cli_exit_for(rc), "%s", detail);
    if (detail && *detail)
        return cli_fail(o, cli_exit_for(rc), "%s: %s", what, detail);
    return cli_fail(o, cli_exit_for(rc), "%s: %s", what, bk_strerror(rc));
}

int cli_lock(const cli_opts *o, const char *path, bk_file_lock **lock)
{
    int rc = bk_lock_file(path, BK_LOCK_NOWAIT, lock);
    if (rc == BK_EBUSY && !o->no_wait) {
        if (!o->quiet)
            fprintf(stderr, "bloomkit %s: %s; waiting for it (--no-wait to fail instead)\n", o->cmd,
                    bk_last_error());
        rc = bk_lock_file(path, 0, lock);
    }
    return rc == BK_OK ? 0 : cli_fail(o, cli_exit_for(rc), "%s", bk_last_error());
}

/* Store the value of option d into o. */
static int set_opt(cli_opts *o, const struct optdef *d, const char *val)
{
    void *field = (char *)o + d->field;
    if (d->kind == STR) {
        *(const char **)field = val;
    } else if (d->kind == FLAG) {
        *(int *)field = 1;
    } else if (bk_count_parse(val, (uint64_t *)field) != BK_OK || *(uint64_t *)field == 0) {
        return cli_fail(o, EXIT_USAGE, "--%s: '%s' is not a whole number >= 1 (1000000, 1e6, 1M)",
                        d->name, val);
    }
    if (o->given & d->id && d->kind != FLAG)
        return cli_fail(o, EXIT_USAGE, "--%s given twice", d->name);
    o->given |= d->id;
    return 0;
}

/* The option named name[0..len): the one the command accepts when two share
 * a name (--json: a flag for plan and info, a FILE for experiment). */
static const struct optdef *find_long(const char *name, size_t len, cli_optset allowed)
{
    const struct optdef *any = NULL;
    for (size_t i = 0; i < NOPTS; i++)
        if (strlen(optdefs[i].name) == len && strncmp(optdefs[i].name, name, len) == 0) {
            if (optdefs[i].id & allowed)
                return &optdefs[i];
            any = &optdefs[i];
        }
    return any;
}

static const char *key_option(unsigned i, char *buf, size_t len);

/* Every option a command of spec->allowed takes: its own, --help and
 * --quiet, and the secrets' files wherever a secret is taken (the hash key
 * where a filter is made, the password with --redis). */
static cli_optset accepted(cli_optset allowed)
{
    allowed |= OPT(HELP) | OPT(QUIET);
    if ((allowed & OPT_KEYS) && (allowed & OPT(CONFIG))) /* a command that makes a filter */
        allowed |= OPT(KEY_FILE);
    if (allowed & OPT(REDIS))
        allowed |= OPT(PASSWORD_FILE);
    return allowed;
}

/* Levenshtein distance of a[0..n) and b, both short (options). */
static size_t distance(const char *a, size_t n, const char *b)
{
    const size_t m = strlen(b);
    if (n > 63 || m > 63)
        return 64;
    size_t row[64];
    for (size_t j = 0; j <= m; j++)
        row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0]; /* the row above, one column left */
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            const size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]); /* substitute (or keep) */
            if (up + 1 < best)
                best = up + 1; /* delete */
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1; /* insert */
            row[j] = best;
            diag = up;
        }
    }
    return row[m];
}

/* The option of the command (allowed) nearest to name[0..len), into buf
 * ("state"), or "" when none is near (a third of its letters, at least 2). */
static void nearest_option(const char *name, size_t len, cli_optset allowed, char *buf,
                           size_t buflen)
{
    size_t best = len / 3 > 2 ? len / 3 : 2;
    buf[0] = '\0';
    for (size_t i = 0; i < NOPTS; i++) {
        const size_t d = distance(name, len, optdefs[i].name);
        if ((optdefs[i].id & accepted(allowed)) && d <= best && d > 0) {
            best = d - 1; /* the first of the nearest wins */
            snprintf(buf, buflen, "%s", optdefs[i].name);
        }
    }
    char opt[64];
    for (unsigned i = 0; (allowed & OPT_KEYS) && key_option(i, opt, sizeof opt); i++) {
        const size_t d = distance(name, len, opt);
        if (d <= best && d > 0) {
            best = d - 1;
            snprintf(buf, buflen, "%s", opt);
        }
    }
}

static const struct optdef *find_short(char c)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (optdefs[i].short_name == c)
            return &optdefs[i];
    return NULL;
}

int cli_usage(const cli_opts *o, const char *msg)
{
    return cli_fail(o, EXIT_USAGE, "%s (see bloomkit %s --help)", msg, o->cmd);
}

static int parse_options(int argc, char **argv, const char *cmd, cli_optset allowed, cli_opts *o);

int cli_parse(int argc, char **argv, const cli_spec *spec, cli_opts *o)
{
    const cli_optset allowed = spec->allowed | OPT(HELP) | OPT(QUIET); /* every command */
    int rc = parse_options(argc, argv, spec->name, allowed, o);
    if (rc != 0)
        return rc;
    if (o->help)
        return cli_help(spec);
    if (o->keep_query_order && !o->canonical_urls)
        return cli_usage(o, "--keep-query-order needs --canonical-urls");
    if ((o->given & spec->required) != spec->required || o->nargs < spec->min_args ||
        (spec->max_args >= 0 && o->nargs > spec->max_args))
        return cli_usage(o, spec->give);
    o->allowed = allowed;
    return CLI_GO;
}

/* The option name of config key i into buf: its name with '-' for '_'
 * ("max-bytes"); NULL past the last key. */
static const char *key_option(unsigned i, char *buf, size_t len)
{
    const char *name = bk_config_key(i, NULL, 0, NULL);
    if (!name)
        return NULL;
    snprintf(buf, len, "%s", name);
    for (char *p = buf; *p; p++)
        if (*p == '_')
            *p = '-';
    return buf;
}

/* The config key whose option is name[0..len) (--max-bytes: max_bytes), or
 * -1. */
static int find_key(const char *name, size_t len)
{
    char opt[64];
    for (unsigned i = 0; i < CLI_KEYS_MAX && key_option(i, opt, sizeof opt); i++)
        if (strlen(opt) == len && strncmp(opt, name, len) == 0)
            return (int)i;
    return -1;
}

static int key_index(const char *name)
{
    for (unsigned i = 0; i < CLI_KEYS_MAX; i++) {
        const char *k = bk_config_key(i, NULL, 0, NULL);
        if (!k)
            break;
        if (strcmp(k, name) == 0)
            return (int)i;
    }
    return -1;
}

const char *cli_key(const cli_opts *o, const char *name)
{
    const int i = key_index(name);
    return i < 0 ? NULL : o->keys[i];
}

void cli_set_key(cli_opts *o, const char *name, const char *val)
{
    const int i = key_index(name);
    if (i >= 0)
        o->keys[i] = val;
}

/* --NAME val for config key i: 0 or EXIT_USAGE (message printed). */
static int set_key(cli_opts *o, int i, const char *opt, const char *val)
{
    if (o->keys[i])
        return cli_fail(o, EXIT_USAGE, "--%s given twice", opt);
    o->keys[i] = val;
    return 0;
}

/* The options and arguments into o: 0 or EXIT_USAGE (message printed).
 * long: getopt's loop: one case per option kind. */
static int parse_options(int argc, char **argv, const char *cmd, cli_optset allowed, cli_opts *o)
{
    allowed = accepted(allowed);
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
    /* Kept reachable in a static so the process owns it until exit. */
    static char **args_store;
    free(args_store);
    o->args = args_store = calloc((size_t)argc + 1, sizeof *o->args);
    if (!o->args)
        return cli_fail(o, EXIT_IO, "out of memory");
    int only_args = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (only_args || a[0] != '-' || strcmp(a, "-") == 0) {
            o->args[o->nargs++] = argv[i];
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_args = 1;
            continue;
        }
        const struct optdef *d;
        const char *val = NULL;
        int key = -1;
        if (a[1] == '-') {
            const char *eq = strchr(a + 2, '=');
            const size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            d = find_long(a + 2, len, allowed);
            key = (allowed & OPT_KEYS) && !(d && (d->id & allowed)) ? find_key(a + 2, len) : -1;
            val = eq ? eq + 1 : NULL;
        } else {
            d = a[2] == '\0' ? find_short(a[1]) : NULL;
        }
        if (key >= 0) { /* a key of the configuration table */
            char opt[64];
            key_option((unsigned)key, opt, sizeof opt);
            if (!val && i + 1 >= argc)
                return cli_fail(o, EXIT_USAGE, "--%s needs a value", opt);
            const int rc = set_key(o, key, opt, val ? val : argv[++i]);
            if (rc)
                return rc;
            continue;
        }
        if (!d || !(d->id & allowed)) {
            char near[64] = "";
            if (a[1] == '-')
                nearest_option(a + 2, strcspn(a + 2, "="), allowed, near, sizeof near);
            if (d && !near[0])
                return cli_fail(o, EXIT_USAGE, "%s does not apply to %s (see bloomkit %s --help)",
                                a, cmd, cmd);
            if (near[0])
                return cli_fail(o, EXIT_USAGE,
                                "unknown option '%s': did you mean --%s? (see bloomkit %s --help)",
                                a, near, cmd);
            return cli_fail(o, EXIT_USAGE, "unknown option '%s' (see bloomkit %s --help)", a,
                            cmd); /* the option itself is the message: not cli_usage */
        }
        if (d->kind != FLAG && !val) {
            if (i + 1 >= argc)
                return cli_fail(o, EXIT_USAGE, "--%s needs a value", d->name);
            val = argv[++i];
        } else if (d->kind == FLAG && val) {
            return cli_fail(o, EXIT_USAGE, "--%s takes no value", d->name);
        }
        const int rc = set_opt(o, d, val);
        if (rc)
            return rc;
    }
    return 0;
}

/* The whole of a --config-file into a NUL-terminated string (malloc): a
 * regular file (opened without blocking, so a FIFO is refused, not waited
 * on) holding no NUL byte (the text would end there unseen). */
char *cli_read_text_file(const cli_opts *o, const char *path, int *rc)
{
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        *rc = cli_fail(o, EXIT_IO, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        *rc = cli_fail(o, EXIT_IO, "%s: %s", path,
                       S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
        close(fd);
        return NULL;
    }
    FILE *fp = fdopen(fd, "r");
    if (!fp) {
        *rc = cli_fail(o, EXIT_IO, "%s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + len, 1, cap - len - 1, fp)) > 0) {
        len += r;
        if (len + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    const int bad = ferror(fp);
    fclose(fp);
    if (!buf || bad) {
        free(buf);
        *rc = cli_fail(o, EXIT_IO, "%s: cannot read", path);
        return NULL;
    }
    buf[len] = '\0';
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        size_t line = 1;
        for (const char *p = buf; p < nul; p++)
            line += *p == '\n';
        *rc = cli_fail(o, EXIT_USAGE,
                       "%s: line %zu: a NUL byte at offset %zu (config text holds "
                       "none)",
                       path, line, (size_t)(nul - buf));
        free(buf);
        return NULL;
    }
    return buf;
}

/* A library message about key `name` ("max_bytes: ...") without that
 * name, so that the option can lead it ("--max-bytes: ..."). */
static const char *without_key(const char *msg, const char *name)
{
    const size_t n = strlen(name);
    return strncmp(msg, name, n) == 0 && msg[n] == ':' ? msg + n + 1 + (msg[n + 1] == ' ') : msg;
}

/* The configuration the options state, over *start, built and checked in
 * *b (the library's builder: each value checked once, as it comes, and the
 * whole once at the end). 0 or EXIT_USAGE (message printed).
 * long: config text, file and options layered in their documented order. */
static int build(const cli_opts *o, const bk_config *start, bk_config_build *b)
{
    if (o->config_text && o->config_file)
        return cli_fail(o, EXIT_USAGE, "give --config or --config-file, not both");
    int rc = 0;
    char *file_text = o->config_file ? cli_read_text_file(o, o->config_file, &rc) : NULL;
    if (rc)
        return rc;
    const char *base = file_text ? file_text : o->config_text ? o->config_text : "";
    const char *source = o->config_file ? o->config_file : "--config";
    char err[256];
    bk_config_build_init(b, start);
    bk_config_error e;
    rc = bk_config_build_text(b, base, &e) != BK_OK
             ? cli_fail(o, EXIT_USAGE, "%s: %s", source, e.message)
             : 0;
    free(file_text);
    /* Each option is one value of one field, set and checked alone: never
     * text for the parser, so "--capacity '1000 variant=counting'" is a bad
     * capacity, not a counting filter. */
    /* BLOOMKIT_KEY: the key of a filter made here when neither an option
     * nor the config text gives one (docs/security.md) */
    const char *env_key = getenv("BLOOMKIT_KEY");
    if (rc == 0 && !cli_key(o, "key") && env_key && *env_key && !bk_config_build_stated(b, "key") &&
        bk_config_build_set(b, "key", env_key, err, sizeof err) != BK_OK)
        rc = cli_fail(o, EXIT_USAGE, "BLOOMKIT_KEY: %s", err);
    /* --window T alone means variant=window window=T */
    if (rc == 0 && cli_key(o, "window") && !cli_key(o, "variant") &&
        !bk_config_build_stated(b, "variant") &&
        bk_config_build_set(b, "variant", "window", err, sizeof err) != BK_OK)
        rc = cli_fail(o, EXIT_USAGE, "--window: %s", err);
    /* in the table's order: the variant first, then the keys of a variant,
     * bits before hashes */
    char opt[64];
    for (unsigned i = 0; i < CLI_KEYS_MAX && rc == 0 && key_option(i, opt, sizeof opt); i++) {
        const char *name = bk_config_key(i, NULL, 0, NULL);
        if (!o->keys[i])
            continue;
        if (bk_config_build_stated(b, name))
            rc = cli_fail(o, EXIT_USAGE, "--%s repeats a key that %s already sets", opt, source);
        else if (bk_config_build_set(b, name, o->keys[i], err, sizeof err) != BK_OK)
            rc = cli_fail(o, EXIT_USAGE, "--%s: %s", opt, without_key(err, name));
    }
    /* --canonical-urls [--keep-query-order]: the keys are canonical URLs,
     * which a filter made here records (input) and applies by itself */
    if (rc == 0 && o->canonical_urls) {
        const char *rule = o->keep_query_order ? "url-keep-query-order" : "url";
        char stated[32] = "";
        if (!bk_config_build_stated(b, "input"))
            bk_config_build_set(b, "input", rule, NULL, 0);
        else if (bk_config_get(&b->cfg, "input", stated, sizeof stated) < 0 ||
                 strcmp(stated, rule) != 0)
            rc = cli_fail(o, EXIT_USAGE,
                          "--canonical-urls%s makes the keys canonical URLs (input=%s), and "
                          "input=%s is stated too: give one of the two",
                          o->keep_query_order ? " --keep-query-order" : "", rule, stated);
    }
    return rc;
}

/* The configuration *b built, into *cfg: 0, or EXIT_USAGE with what the
 * whole says is wrong, led by the option that stated the key at fault. */
static int finish(const cli_opts *o, const bk_config_build *b, bk_config *cfg)
{
    bk_config_error e;
    char opt[64];
    if (bk_config_build_finish(b, cfg, &e) == BK_OK)
        return 0;
    for (unsigned i = 0; i < CLI_KEYS_MAX && key_option(i, opt, sizeof opt); i++) {
        const char *name = bk_config_key(i, NULL, 0, NULL);
        if (o->keys[i] && strcmp(e.key, name) == 0 && without_key(e.message, name) != e.message)
            return cli_fail(o, EXIT_USAGE, "--%s: %s", opt, without_key(e.message, name));
    }
    return cli_fail(o, EXIT_USAGE, "%s", e.message);
}

int cli_apply_config(const cli_opts *o, bk_config *cfg)
{
    bk_config_build b;
    const int rc = build(o, cfg, &b);
    return rc ? rc : finish(o, &b, cfg);
}

int cli_no_such_file(const cli_opts *o, const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 || errno != ENOENT)
        return 0;
    return cli_fail(o, EXIT_IO,
                    "%s: no such filter file; make it first: bloomkit create %s [options] (or "
                    "bloomkit dedup --state %s, which creates it)",
                    path, path, path);
}

int cli_config_text(const cli_opts *o, char **text)
{
    bk_config_build b;
    bk_config c;
    int rc = build(o, NULL, &b);
    if (rc || (rc = finish(o, &b, &c)) != 0)
        return rc;
    /* the stated keys only, as config text writes their values */
    size_t n = 1;
    for (unsigned i = 0; bk_config_key(i, NULL, 0, NULL); i++)
        n += strlen(bk_config_key(i, NULL, 0, NULL)) + 72;
    char *t = malloc(n);
    if (!t)
        return cli_fail(o, EXIT_IO, "out of memory");
    size_t len = 0;
    t[0] = '\0';
    for (unsigned i = 0; bk_config_key(i, NULL, 0, NULL); i++) {
        const char *name = bk_config_key(i, NULL, 0, NULL);
        char v[64];
        if (bk_config_build_stated(&b, name) && bk_config_get(&c, name, v, sizeof v) > 0)
            len += (size_t)snprintf(t + len, n - len, "%s%s=%s", len ? " " : "", name, v);
    }
    *text = t;
    return 0;
}

/* The filter's options, one entry per key of the configuration table:
 * "--NAME VALUE" then its help and the values it takes. */
static void print_keys(void)
{
    fputs("\nFilter options, one per key of the config text (--config), with its values:\n",
          stdout);
    char opt[64], range[160], text[512];
    const char *help;
    for (unsigned i = 0; i < CLI_KEYS_MAX && key_option(i, opt, sizeof opt); i++) {
        bk_config_key(i, range, sizeof range, &help);
        printf("  --%s VALUE\n", opt);
        snprintf(text, sizeof text, "%s; %s.", help, range);
        cli_wrap(text, 6, 79);
    }
}

void cli_wrap(const char *text, int indent, int width)
{
    const char *p = text;
    while (*p) {
        int room = width - indent, len = 0, last_space = -1;
        while (len < room && p[len]) {
            if (p[len] == ' ')
                last_space = len;
            len++;
        }
        if (p[len] && last_space > 0)
            len = last_space; /* break at the last blank that fits */
        printf("%*s%.*s\n", indent, "", len, p);
        p += len;
        while (*p == ' ')
            p++;
    }
}

/* The command's options, every one, from the table: "--name ARG" (-x). */
static void print_options(const cli_spec *spec)
{
    const cli_optset allowed = accepted(spec->allowed);
    char line[4096];
    size_t at = 0;
    at += (size_t)snprintf(line + at, sizeof line - at, "Options of %s: ", spec->name);
    int first = 1;
    for (size_t i = 0; i < NOPTS && at < sizeof line; i++) {
        if (!(optdefs[i].id & allowed))
            continue;
        at += (size_t)snprintf(line + at, sizeof line - at, "%s--%s%s%s", first ? "" : ", ",
                               optdefs[i].name, optdefs[i].arg[0] ? " " : "", optdefs[i].arg);
        if (optdefs[i].short_name && at < sizeof line)
            at += (size_t)snprintf(line + at, sizeof line - at, " (-%c)", optdefs[i].short_name);
        first = 0;
    }
    if ((spec->allowed & OPT_KEYS) && at < sizeof line)
        snprintf(line + at, sizeof line - at, ", and the filter options below");
    fputc('\n', stdout);
    cli_wrap(line, 0, 79);
}

int cli_help(const cli_spec *spec)
{
    fputs(spec->usage, stdout);
    print_options(spec);
    if (spec->allowed & OPT_KEYS)
        print_keys();
    return EXIT_OK;
}

static void on_signal(int sig)
{
    cli_stop = sig;
}

void cli_install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: a blocked read returns EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL); /* a closed terminal: saved as INT and TERM are */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN); /* a file-size limit is a write error, not a kill */
}

int cli_signal_exit(void)
{
    return 128 + (int)cli_stop;
}

const char *cli_human_duration(uint64_t ms, char *buf, size_t n)
{
    static const struct {
        char unit;
        uint64_t ms;
    } units[] = {{'d', 86400000}, {'h', 3600000}, {'m', 60000}, {'s', 1000}};
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof units / sizeof *units && at < n; i++) {
        const uint64_t whole = ms / units[i].ms;
        if (whole == 0 && !(i + 1 == sizeof units / sizeof *units && at == 0))
            continue;
        ms -= whole * units[i].ms;
        if (i + 1 == sizeof units / sizeof *units && ms) /* seconds keep their fraction */
            at += (size_t)snprintf(buf + at, n - at, "%s%.3g%c", at ? " " : "",
                                   (double)whole + (double)ms / 1000.0, units[i].unit);
        else
            at += (size_t)snprintf(buf + at, n - at, "%s%llu%c", at ? " " : "",
                                   (unsigned long long)whole, units[i].unit);
    }
    return buf;
}

const char *cli_removing_variants(char *buf, size_t n)
{
    size_t at = 0, count = 0;
    buf[0] = '\0';
    for (int v = 0; bk_variant_name((bk_variant)v); v++)
        count += bk_variant_removes((bk_variant)v) != 0;
    for (int v = 0, seen = 0; bk_variant_name((bk_variant)v) && at < n; v++)
        if (bk_variant_removes((bk_variant)v)) {
            seen++;
            at += (size_t)snprintf(buf + at, n - at, "%s%s",
                                   seen == 1            ? ""
                                   : seen == (int)count ? " or "
                                                        : ", ",
                                   bk_variant_name((bk_variant)v));
        }
    return buf;
}

const char *cli_human_bytes(uint64_t bytes, char *buf, size_t n)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof units / sizeof *units) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, n, "%.2f %s", v, units[u]);
    return buf;
}
