/*
 * cmd_file.c - the commands that move whole filters: create, merge and
 * intersect (a filter file written whole), push, pull and drop (a filter
 * between a file and Redis).
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "stream.h"

static const char create_usage[] =
    "usage: bloomkit create FILE [--config TEXT | --config-file F] [filter options]\n"
    "                       [--key-file F] [--force] [--no-wait]\n"
    "                       [--canonical-urls [--keep-query-order]]\n"
    "       bloomkit create --redis URL [the same config and filter options]\n"
    "Create an empty filter and save it to FILE (mode 0600: it holds the hash key).\n"
    "--canonical-urls: its keys are lines' canonical URLs (input=url), which add,\n"
    "check and remove then make by themselves (docs/urls.md).\n"
    "Defaults: variant=standard capacity=1000000 fpr=0.01. An existing FILE is kept\n"
    "unless --force. Writers of one FILE take turns (a lock beside it, .FILE.lock);\n"
    "--no-wait fails with exit 3 instead of waiting for another writer. Writing a\n"
    "large filter shows the MiB written on a terminal (--progress: anywhere).\n";
static const char merge_usage[] =
    "usage: bloomkit merge OUT IN1 IN2...\n"
    "Write to OUT the union of the input filters, which must have the same variant,\n"
    "size, hash and key (for example copies of one created filter). OUT is written\n"
    "atomically and may be one of the inputs; another writer of OUT is waited for\n"
    "(--no-wait: exit 3 at once).\n";
static const char intersect_usage[] =
    "usage: bloomkit intersect OUT IN1 IN2...\n"
    "Write to OUT the intersection of the input filters: standard filters with the\n"
    "same size, hash and key (for example copies of one created filter); a key\n"
    "added to every input is present in OUT (a key of only some may still read\n"
    "present: the intersection of the bits, not of the key sets). OUT is written\n"
    "atomically and may be one of the inputs; another writer of OUT is waited for\n"
    "(--no-wait: exit 3 at once).\n";

static const char push_usage[] =
    "usage: bloomkit push FILE --redis URL\n"
    "Copy the filter in FILE into Redis under the URL's name, which must be new: same\n"
    "configuration, hash key, cells and counts, so the shared filter answers every\n"
    "key as FILE does.\n";
static const char pull_usage[] =
    "usage: bloomkit pull --redis URL FILE [--force]\n"
    "Copy the shared filter at URL into FILE (atomically, mode 0600): it answers\n"
    "every key as the shared one does. An existing FILE is kept unless --force;\n"
    "another writer of FILE is waited for (--no-wait: exit 3 at once).\n"
    "Pause the filter's writers meanwhile.\n";

static const char drop_usage[] =
    "usage: bloomkit drop --redis URL\n"
    "Delete the shared filter at URL: its metadata and every key of its cells and\n"
    "counts, and nothing else; also a name left half-made by a push that was\n"
    "killed. A name that does not exist is not an error.\n";

const cli_spec cmd_drop_spec =
    CLI_SPEC("drop", drop_usage, OPT(REDIS), OPT(REDIS), 0, 0, "give --redis URL");

int cmd_drop(cli_opts *o)
{
    int rc;
    rc = bk_redis_drop(o->redis);
    return rc == BK_OK ? EXIT_OK : cli_lib_fail(o, rc, "--redis");
}

const cli_spec cmd_push_spec =
    CLI_SPEC("push", push_usage, OPT(REDIS), OPT(REDIS), 1, 1, "give FILE and --redis URL");

int cmd_push(cli_opts *o)
{
    int rc;
    bk_filter *f;
    rc = bk_load(o->args[0], &f);
    if (rc != BK_OK)
        return cli_lib_fail(o, rc, o->args[0]);
    rc = bk_redis_push(f, o->redis);
    bk_free(f);
    return rc == BK_OK ? EXIT_OK : cli_lib_fail(o, rc, "--redis");
}

/* The bytes a save has written, on a terminal after a second (a filter of
 * gigabytes takes a while). */
static int save_tick(uint64_t done, uint64_t total, void *arg)
{
    progress_work(arg, done >> 20, total >> 20, "MiB written");
    return cli_stop != 0;
}

/* Write a new filter file at o->args[0] under the file's writer lock: an
 * existing file is kept unless --force; the filter comes from make(arg),
 * whose failure is reported about `source`. 0 or an exit code. */
static int write_new(const cli_opts *o, int (*make)(const void *arg, bk_filter **f),
                     const void *arg, const char *source)
{
    bk_file_lock *lock;
    int rc = cli_lock(o, o->args[0], &lock);
    if (rc != 0)
        return rc;
    struct stat st;
    bk_filter *f = NULL;
    if (stat(o->args[0], &st) == 0 && !S_ISREG(st.st_mode))
        rc = cli_fail(o, EXIT_USAGE, "%s: is %s, not a filter file: give a file's name", o->args[0],
                      S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
    else if (!o->force && stat(o->args[0], &st) == 0)
        rc = cli_fail(o, EXIT_USAGE, "%s: already exists (use --force to replace it)", o->args[0]);
    else if ((rc = make(arg, &f)) != BK_OK)
        rc = cli_lib_fail(o, rc, source);
    else {
        progress pg;
        progress_init(&pg, o->quiet, o->progress);
        cli_install_signals();
        rc = bk_save_progress(f, o->args[0], save_tick, &pg);
        progress_end(&pg);
        rc = rc == BK_ECANCELED ? cli_signal_exit() : rc ? cli_lib_fail(o, rc, o->args[0]) : 0;
    }
    bk_free(f);
    bk_unlock_file(lock);
    return rc;
}

static int pull_filter(const void *url, bk_filter **f)
{
    return bk_redis_pull(url, f);
}

static int new_filter(const void *cfg, bk_filter **f)
{
    return bk_new(cfg, f);
}

const cli_spec cmd_pull_spec =
    CLI_SPEC("pull", pull_usage, OPT(REDIS) | OPT(FORCE) | OPT(NO_WAIT) | OPT(PROGRESS), OPT(REDIS),
             1, 1, "give --redis URL and FILE");

int cmd_pull(cli_opts *o)
{
    return write_new(o, pull_filter, o->redis, "--redis");
}

/* create --redis URL: a new shared filter; an existing name is never changed. */
static int create_redis(cli_opts *o)
{
    if (o->nargs != 0)
        return cli_fail(o, EXIT_USAGE, "give FILE or --redis URL, not both");
    if (o->force)
        return cli_fail(o, EXIT_USAGE,
                        "--force does not replace a shared filter: drop it first (bloomkit drop "
                        "--redis URL)");
    bk_config cfg;
    bk_config_init(&cfg);
    int rc = cli_apply_config(o, &cfg);
    if (rc)
        return rc;
    bk_filter *f;
    rc = bk_redis_open_existing(o->redis, &f);
    if (rc == BK_OK) {
        bk_free(f);
        return cli_fail(o, EXIT_USAGE, "--redis: the filter already exists (left unchanged)");
    }
    if (rc != BK_ENOTFOUND)
        return cli_lib_fail(o, rc, "--redis");
    rc = bk_redis_open(o->redis, &cfg, &f);
    if (rc != BK_OK)
        return cli_lib_fail(o, rc, "--redis");
    bk_free(f);
    return EXIT_OK;
}

const cli_spec cmd_create_spec =
    CLI_SPEC("create", create_usage,
             O_FILTER_FLAGS | OPT(FORCE) | OPT(REDIS) | OPT(NO_WAIT) | OPT(PROGRESS) | O_URL_FLAGS,
             0, 0, 1, "give exactly one FILE or --redis URL");

int cmd_create(cli_opts *o)
{
    int rc;
    if (o->redis)
        return create_redis(o);
    if (o->nargs != 1)
        return cli_usage(o, cmd_create_spec.give);
    bk_config cfg;
    bk_config_init(&cfg);
    rc = cli_apply_config(o, &cfg);
    if (rc)
        return rc;
    return write_new(o, new_filter, &cfg, "filter");
}

const cli_spec cmd_merge_spec =
    CLI_SPEC("merge", merge_usage, OPT(NO_WAIT), 0, 3, -1, "give OUT and at least two inputs");
const cli_spec cmd_intersect_spec = CLI_SPEC("intersect", intersect_usage, OPT(NO_WAIT), 0, 3, -1,
                                             "give OUT and at least two inputs");

/* OUT = IN1 op IN2 op ...: the first input loaded, the others mapped
 * read-only and combined into it, the result saved atomically under OUT's
 * writer lock. */
static int combine(cli_opts *o, int (*op)(bk_filter *, const bk_filter *), const char *name,
                   const char *done)
{
    int rc;
    bk_file_lock *lock;
    if ((rc = cli_lock(o, o->args[0], &lock)) != 0)
        return rc;
    bk_filter *dst = NULL;
    rc = bk_load(o->args[1], &dst);
    if (rc != BK_OK)
        rc = cli_lib_fail(o, rc, o->args[1]);
    else
        cli_say_redated(o, dst, o->args[1]);
    for (int i = 2; i < o->nargs && rc == 0; i++) {
        bk_filter *src;
        rc = bk_open_mmap(o->args[i], BK_MAP_READONLY, &src);
        if (rc != BK_OK) {
            rc = cli_lib_fail(o, rc, o->args[i]);
            break;
        }
        cli_say_redated(o, src, o->args[i]);
        rc = op(dst, src);
        bk_free(src);
        if (rc != BK_OK) { /* the library's "merge: " (or "intersect: ") said once, by us */
            const char *why = bk_last_error();
            const size_t nl = strlen(name);
            if (strncmp(why, name, nl) == 0 && strncmp(why + nl, ": ", 2) == 0)
                why += nl + 2;
            rc = cli_fail(o, cli_exit_for(rc), "%s and %s cannot be %s: %s", o->args[1], o->args[i],
                          done, why);
        }
    }
    if (rc == 0 && (rc = bk_save(dst, o->args[0])) != BK_OK)
        rc = cli_lib_fail(o, rc, o->args[0]);
    bk_free(dst);
    bk_unlock_file(lock);
    return rc;
}

int cmd_merge(cli_opts *o)
{
    return combine(o, bk_merge, "merge", "merged");
}

int cmd_intersect(cli_opts *o)
{
    return combine(o, bk_intersect, "intersect", "intersected");
}
