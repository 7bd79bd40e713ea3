/*
 * cli.h - shared parts of the bloomkit command: options, exit codes, errors,
 * config building, signals. The commands live in cmd_*.c, grouped by what
 * they do (cmd_filter.c: add, check, remove; cmd_file.c: whole filters;
 * cmd_report.c: plan, info; cmd_dedup.c; cmd_import.c; experiment/).
 */
#ifndef BK_CLI_H
#define BK_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomkit_redis.h"
#include "bloomkit_tools.h"

/* The contract's exit codes. */
enum {
    EXIT_OK = 0,
    EXIT_NOTHING = 1, /* check found nothing (as grep) */
    EXIT_USAGE = 2,   /* usage error or bad input */
    EXIT_IO = 3       /* I/O error, missing or corrupt file, full disk */
};

/* Every option of the command's own, written once: X(id, long name, short
 * letter or 0, kind, field of cli_opts, its value's name in --help). Kinds: STR takes a value (the
 * field, a string, points at it), FLAG takes none (the int field becomes
 * 1), COUNT takes a whole number (a uint64_t field). A command lists the
 * ids it accepts as a bit set; two options may share a name if no command
 * accepts both (--json). The filter's own options are not here: every key
 * of the configuration table is an option --KEY VALUE (max_bytes as
 * --max-bytes), taken by the commands whose set has OPT_KEYS (cli_key). */
#define CLI_OPTIONS(X)                                                                             \
    X(O_CONFIG, "config", 0, STR, config_text, "TEXT")                                             \
    X(O_CONFIG_FILE, "config-file", 0, STR, config_file, "F")                                      \
    X(O_STATE, "state", 0, STR, state, "FILE")                                                     \
    X(O_CHECKPOINT, "checkpoint", 0, COUNT, checkpoint, "N") /* lines, >= 1 */                     \
    X(O_JSON, "json", 0, FLAG, json, "")                     /* plan, info: JSON out */            \
    X(O_QUIET, "quiet", 'q', FLAG, quiet, "")                                                      \
    X(O_PROGRESS, "progress", 0, FLAG, progress, "")                                               \
    X(O_NULL, "null", '0', FLAG, null_sep, "")                                                     \
    X(O_INVERT, "invert", 'v', FLAG, invert, "")                                                   \
    X(O_FORCE, "force", 'f', FLAG, force, "")                                                      \
    X(O_SHOW_KEY, "show-key", 0, FLAG, show_key, "")                                               \
    X(O_HELP, "help", 'h', FLAG, help, "")                                                         \
    X(O_REDIS, "redis", 0, STR, redis, "URL")                                                      \
    X(O_CSV, "csv", 0, STR, csv, "FILE")              /* experiment: --csv FILE */                 \
    X(O_JSON_FILE, "json", 0, STR, json_file, "FILE") /* experiment: --json FILE */                \
    X(O_PLOT, "plot", 0, STR, plot, "FILE")           /* experiment: --plot FILE.png */            \
    X(O_NO_WAIT, "no-wait", 0, FLAG, no_wait,                                                      \
      "") /* writers: fail at once when the file is locked */                                      \
    X(O_KEY_FILE, "key-file", 0, STR, key_file, "F") /* the hash key from a file (with --key) */   \
    X(O_PASSWORD_FILE, "password-file", 0, STR, password_file, "F") /* Redis password (O_REDIS) */ \
    X(O_THREADS, "threads", 0, COUNT, threads, "N")                 /* dedup: threads, >= 1 */     \
    X(O_CANONICAL_URLS, "canonical-urls", 0, FLAG, canonical_urls,                                 \
      "") /* key: the canonical URL */                                                             \
    X(O_KEEP_QUERY_ORDER, "keep-query-order", 0, FLAG, keep_query_order, "")                       \
    X(O_COMPARE, "compare", 0, FLAG, compare, "")         /* plan: every variant side by side */   \
    X(O_FROM_SET, "from-set", 0, STR, from_set, "KEY")    /* import: the Redis set read */         \
    X(O_TITLE, "title", 0, STR, plot_title, "TEXT")       /* experiment: the plot's title */       \
    X(O_PLOT_SIZE, "plot-size", 0, STR, plot_size, "WxH") /* experiment: the plot's pixels */

#define CLI_OPTION_BIT(id, name, short_name, kind, field, arg) id##_BIT,
enum { CLI_OPTIONS(CLI_OPTION_BIT) CLI_NOPTS };
/* A set of options: bit O_X_BIT for --x; OPT(X) is the set of one. */
typedef uint64_t cli_optset;
#define OPT(name) ((cli_optset)1 << O_##name##_BIT)
_Static_assert(CLI_NOPTS < 64, "option ids are bits of a cli_optset, and OPT_KEYS the last");
/* Every key of the configuration table, as an option --KEY VALUE. */
#define OPT_KEYS ((cli_optset)1 << 63)
/* Most keys the table may have (cli_opts.keys). */
#define CLI_KEYS_MAX   48
#define O_FILTER_FLAGS (OPT(CONFIG) | OPT(CONFIG_FILE) | OPT_KEYS)

/* The options that make keys canonical URLs (add, check, remove, dedup). */
#define O_URL_FLAGS (OPT(CANONICAL_URLS) | OPT(KEEP_QUERY_ORDER))

typedef struct cli_opts {
    const char *cmd;
    const char *config_text, *config_file;
    const char *keys[CLI_KEYS_MAX]; /* --KEY VALUE: the value of config key i (bk_config_key),
                                     * or NULL; read them with cli_key */
    const char *state;
    const char *redis;                  /* --redis URL: the filter lives in Redis */
    const char *csv, *json_file, *plot; /* experiment outputs */
    const char *key_file, *password_file;
    const char *from_set;               /* import --from-set KEY */
    const char *plot_title, *plot_size; /* experiment --title TEXT --plot-size WxH */
    uint64_t checkpoint, threads;
    int json, quiet, progress, null_sep, invert, force, show_key, help, no_wait;
    int canonical_urls, keep_query_order; /* keys are canonical URLs (bk_url_canonical) */
    int fingerprints;   /* set by the command: the filter's keys are fingerprints (keys.h) */
    int compare;        /* plan --compare */
    cli_optset given;   /* options seen on the command line */
    cli_optset allowed; /* the options its command takes (cli_parse) */
    char **args;        /* positional arguments */
    int nargs;
} cli_opts;

/* What cli_parse returns when the command should go on. */
#define CLI_GO (-1)

/* What a command accepts and needs, for cli_parse to check. */
typedef struct cli_spec {
    const char *name;       /* "dedup" */
    const char *usage;      /* its --help text */
    cli_optset allowed;     /* options it accepts (--help and --quiet always) */
    cli_optset required;    /* options it cannot run without */
    int min_args, max_args; /* positional arguments; max_args -1: no limit */
    const char *give;       /* the usage error when required or the counts fail */
} cli_spec;
/* A spec's initialiser, its fields in the order above. */
#define CLI_SPEC(name, usage, allowed, required, min_args, max_args, give)                         \
    {                                                                                              \
        name, usage, allowed, required, min_args, max_args, give                                   \
    }

/* Parse argv (after the command name) as spec says: only its options and
 * --help (which prints its usage), then its required options and argument
 * counts. Options may come before or after positional arguments; "--" ends
 * them. Returns CLI_GO, or the command's exit code: EXIT_OK after --help,
 * EXIT_USAGE after an error (one line printed). Secrets are not read here:
 * cli_resolve_secrets does, next. */
int cli_parse(int argc, char **argv, const cli_spec *spec, cli_opts *o);

/* A usage error: "bloomkit CMD: <msg> (see bloomkit CMD --help)" on
 * stderr. Returns EXIT_USAGE. */
int cli_usage(const cli_opts *o, const char *msg);

/* "bloomkit CMD: <message>" on stderr, one line. Returns code. */
int cli_fail(const cli_opts *o, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Copy url into buf with its password (user:password@) replaced by ***,
 * for messages and reports. */
void cli_redact_url(const char *url, char *buf, size_t len);

/* A failed write to standard output (err: its errno). Returns EXIT_IO. */
int cli_out_fail(const cli_opts *o, int err);

/* Exit code for a library error: bad input 2, I/O and corrupt 3. */
int cli_exit_for(int rc);

/* Report a library error about `what` (a file name or an argument) and
 * return its exit code. Uses bk_last_error() detail when there is some. */
int cli_lib_fail(const cli_opts *o, int rc, const char *what);
/* UTC time of ms since the epoch into buf: "2026-11-23 18:00:00", or with
 * iso "2026-11-23T18:00:00Z" (RFC 3339); milliseconds when there are some. */
const char *cli_utc_time(int64_t ms, int iso, char *buf, size_t n);
/* A clock for bk_set_clock that reads the time the int64_t at ctx holds (ms
 * since the epoch): BLOOMKIT_NOW's, and the experiments' simulated one. */
int64_t cli_clock_at(void *ctx);
/* After opening f (a file or a --redis name, `where`): a warning on stderr
 * when it is a window filter whose generations lay in this clock's future
 * and were re-dated on the way in (bk_filter_stats.redated_from_ms). */
void cli_say_redated(const cli_opts *o, const bk_filter *f, const char *where);
/* cli_lib_fail with the detail given (bk_last_error() of the thread where
 * the call failed; may be empty). */
int cli_lib_fail_detail(const cli_opts *o, int rc, const char *what, const char *detail);

/* The value given as --NAME for the config key NAME ("fpr", "max_bytes"),
 * or NULL. */
const char *cli_key(const cli_opts *o, const char *name);
/* Give the config key NAME the value val, as --NAME val would (NULL: not
 * given). */
void cli_set_key(cli_opts *o, const char *name, const char *val);

/* Apply --config / --config-file and the filter flags over *cfg (which holds
 * the command's defaults or an existing filter's configuration). A key given
 * twice (in the text and as a flag) is an error. Returns 0 or EXIT_USAGE
 * (message printed). */
int cli_apply_config(const cli_opts *o, bk_config *cfg);
/* When path does not exist: a message naming it and the commands that make
 * one (create, dedup --state), and EXIT_IO; else 0 (other errors are the
 * opener's to report). */
int cli_no_such_file(const cli_opts *o, const char *path);

/* What the options state of the configuration, as config text (*text,
 * malloc, "" when nothing): --config or --config-file, then each filter
 * option, checked as cli_apply_config checks them. For calls that take the
 * text (a filter made elsewhere, with defaults of its own). 0 or EXIT_USAGE
 * (message printed). */
int cli_config_text(const cli_opts *o, char **text);

/* Take the writer's lock of the file at path (bk_lock_file) for the whole
 * read-modify-write: waits, saying once who holds it, or with --no-wait
 * fails at once. Take it before cli_install_signals, so Ctrl-C ends a wait.
 * Returns 0 (*lock set) or an exit code (message printed). */
int cli_lock(const cli_opts *o, const char *path, bk_file_lock **lock);

/* The whole of a small text file (a --config-file, a key or password file)
 * into a NUL-terminated string (malloc): a regular file (opened without
 * blocking, so a FIFO is refused, not waited on) holding no NUL byte. NULL
 * with *rc set to an exit code (message printed). */
char *cli_read_text_file(const cli_opts *o, const char *path, int *rc);

/* Secrets kept off the command line (secrets.c, docs/security.md): the hash
 * key from --key-file or BLOOMKIT_KEY into o->key, the Redis password from
 * --password-file or REDISCLI_AUTH into o->redis. One source each; two
 * explicit ones are an error. Called after cli_parse (main.c), with the
 * options the command allows (o->allowed). 0 or an exit code. */
int cli_resolve_secrets(cli_opts *o);

/* Print the command's help to stdout: its usage text, then, when it takes
 * the filter's options (OPT_KEYS), one entry per key of the configuration
 * table. Returns EXIT_OK. */
int cli_help(const cli_spec *spec);
/* text on stdout in lines of at most width columns, each indented by
 * indent blanks, broken at blanks. */
void cli_wrap(const char *text, int indent, int width);

/* SIGINT/SIGTERM: set cli_stop to the signal number; reads are interrupted
 * (no SA_RESTART) so a blocked command notices at once. SIGPIPE is ignored:
 * a closed stdout is an error we report, not a silent death. */
extern volatile sig_atomic_t cli_stop;
void cli_install_signals(void);
/* 128 + signal, the shell's convention (130 SIGINT, 143 SIGTERM). */
int cli_signal_exit(void);

/* The variants that can remove keys, as the library lists them:
 * "counting or cuckoo". */
const char *cli_removing_variants(char *buf, size_t n);

/* "2.29 MiB" for a byte count. */
const char *cli_human_bytes(uint64_t bytes, char *buf, size_t n);
/* "30d", "33d 18h", "2.25s" for a duration in ms. */
const char *cli_human_duration(uint64_t ms, char *buf, size_t n);

/* Every command, written once: X(name, summary for bloomkit --help). Its
 * file defines cmd_<name>_spec (what it accepts and needs) and cmd_<name>,
 * which main.c calls with the options cli_parse made of the spec. */
#define CLI_COMMANDS(X)                                                                            \
    X(plan, "size a filter: bits, bytes, k, expected rate")                                        \
    X(create, "create an empty filter file")                                                       \
    X(add, "add lines to a filter file")                                                           \
    X(check, "print lines that may be in a filter (-v: that are not)")                             \
    X(remove, "remove lines from a counting filter file")                                          \
    X(dedup, "copy each line the first time it is seen (--state FILE)")                            \
    X(info, "show a filter file's figures (--json)")                                               \
    X(merge, "write the union of compatible filter files")                                         \
    X(intersect, "write the intersection of compatible standard filter files")                     \
    X(push, "copy a filter file into Redis (--redis URL)")                                         \
    X(pull, "copy a filter from Redis into a file (--redis URL)")                                  \
    X(drop, "delete a shared filter and all its keys (--redis URL)")                               \
    X(import, "add a Redis set's members to a shared filter (--from-set KEY)")                     \
    X(experiment, "measure configurations side by side (--config-file EXP)")

#define CLI_COMMAND_DECL(name, summary)                                                            \
    extern const cli_spec cmd_##name##_spec;                                                       \
    int cmd_##name(cli_opts *o);
CLI_COMMANDS(CLI_COMMAND_DECL)

#endif
