/*
 * cli.h - shared parts of the bloomkit command: options, exit codes, errors,
 * config building, signals. Each command lives in its own cmd_*.c.
 */
#ifndef BK_CLI_H
#define BK_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomkit_redis.h"

/* The contract's exit codes. */
enum {
    EXIT_OK = 0,
    EXIT_NOTHING = 1, /* check found nothing (as grep) */
    EXIT_USAGE = 2,   /* usage error or bad input */
    EXIT_IO = 3       /* I/O error, missing or corrupt file, full disk */
};

/* Option identifiers; a command lists the ones it accepts as a bit set. */
enum {
    O_CONFIG = 1u << 0,
    O_CONFIG_FILE = 1u << 1,
    O_VARIANT = 1u << 2,
    O_CAPACITY = 1u << 3,
    O_FPR = 1u << 4,
    O_GROWTH = 1u << 5,
    O_TIGHTENING = 1u << 6,
    O_HASH = 1u << 7,
    O_KEY = 1u << 8,
    O_STATE = 1u << 9,
    O_CHECKPOINT = 1u << 10,
    O_JSON = 1u << 11,
    O_QUIET = 1u << 12,
    O_PROGRESS = 1u << 13,
    O_NULL = 1u << 14,
    O_INVERT = 1u << 15,
    O_FORCE = 1u << 16,
    O_SHOW_KEY = 1u << 17,
    O_HELP = 1u << 18,
    O_LAYOUT = 1u << 19,
    O_REDIS = 1u << 20,
    O_CSV = 1u << 21,          /* experiment: --csv FILE */
    O_JSON_FILE = 1u << 22,    /* experiment: --json FILE */
    O_PLOT = 1u << 23,         /* experiment: --plot FILE.png */
    O_NO_WAIT = 1u << 24,      /* writers: fail at once when the file is locked */
    O_KEY_FILE = 1u << 25,     /* the hash key from a file (with O_KEY) */
    O_PASSWORD_FILE = 1u << 26 /* the Redis password from a file (with O_REDIS) */
};
#define O_FILTER_FLAGS                                                                             \
    (O_CONFIG | O_CONFIG_FILE | O_VARIANT | O_CAPACITY | O_FPR | O_GROWTH | O_TIGHTENING |         \
     O_HASH | O_LAYOUT | O_KEY)

typedef struct cli_opts {
    const char *cmd;
    const char *config_text, *config_file;
    const char *variant, *capacity, *fpr, *growth, *tightening, *hash, *layout, *key;
    const char *state;
    const char *redis;                  /* --redis URL: the filter lives in Redis */
    const char *csv, *json_file, *plot; /* experiment outputs */
    const char *key_file, *password_file;
    uint64_t checkpoint;
    int json, quiet, progress, null_sep, invert, force, show_key, help, no_wait;
    unsigned given; /* O_* bits seen on the command line */
    char **args;    /* positional arguments */
    int nargs;
} cli_opts;

/* Parse argv (after the command name) accepting only `allowed` options.
 * Options may come before or after positional arguments; "--" ends them.
 * Returns 0, or prints one line and returns EXIT_USAGE. */
int cli_parse(int argc, char **argv, const char *cmd, unsigned allowed, cli_opts *o);

/* "bloomkit CMD: <message>" on stderr, one line. Returns code. */
int cli_fail(const cli_opts *o, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Copy url into buf with its password (user:password@) replaced by ***,
 * for messages and reports. */
void cli_redact_url(const char *url, char *buf, size_t len);

/* Exit code for a library error: bad input 2, I/O and corrupt 3. */
int cli_exit_for(int rc);

/* Report a library error about `what` (a file name or an argument) and
 * return its exit code. Uses bk_last_error() detail when there is some. */
int cli_lib_fail(const cli_opts *o, int rc, const char *what);

/* Apply --config / --config-file and the filter flags over *cfg (which holds
 * the command's defaults or an existing filter's configuration). A key given
 * twice (in the text and as a flag) is an error. Returns 0 or EXIT_USAGE
 * (message printed). */
int cli_apply_config(const cli_opts *o, bk_config *cfg);

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
 * explicit ones are an error. Called by cli_parse. 0 or an exit code. */
int cli_resolve_secrets(cli_opts *o, unsigned allowed);

/* Print the command's help (usage text) to stdout; returns EXIT_OK. */
int cli_help(const char *usage);

/* SIGINT/SIGTERM: set cli_stop to the signal number; reads are interrupted
 * (no SA_RESTART) so a blocked command notices at once. SIGPIPE is ignored:
 * a closed stdout is an error we report, not a silent death. */
extern volatile sig_atomic_t cli_stop;
void cli_install_signals(void);
/* 128 + signal, the shell's convention (130 SIGINT, 143 SIGTERM). */
int cli_signal_exit(void);

/* "2.29 MiB" for a byte count. */
const char *cli_human_bytes(uint64_t bytes, char *buf, size_t n);

/* Commands. */
int cmd_plan(int argc, char **argv);
int cmd_create(int argc, char **argv);
int cmd_add(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_remove(int argc, char **argv);
int cmd_dedup(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_push(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_drop(int argc, char **argv);
int cmd_experiment(int argc, char **argv);

#endif
