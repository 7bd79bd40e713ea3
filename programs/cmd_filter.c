/*
 * cmd_filter.c - add, check and remove: stream records against a filter file.
 *
 * add and remove load the file, apply every record and save atomically at the
 * end (or when SIGINT/SIGTERM/SIGHUP stops them after the current record), so the
 * file is always the old filter or the new one. check maps the file read-only
 * (verified), which opens even huge filters without reading them whole.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "keys.h"

static const char add_usage[] =
    "usage: bloomkit add FILE [INPUT...] [--null] [--no-wait] [--quiet | --progress]\n"
    "       bloomkit add --redis URL [INPUT...] [--null] [--quiet | --progress]\n"
    "       (and [--canonical-urls [--keep-query-order]]: the key of a line is its\n"
    "       canonical URL, docs/urls.md; a filter made with it records it and applies\n"
    "       it by itself, so add, check and remove need it only to make a filter)\n"
    "Add each line of the INPUTs (default or '-': standard input) to the filter in FILE\n"
    "and save it atomically, or to the shared filter at URL (each add applied on the\n"
    "server as it is made). Lines end in LF or CRLF (the CR is not part of the key);\n"
    "--null reads NUL-terminated records. Writers of one FILE take turns: another\n"
    "writer is waited for (--no-wait: exit 3 at once, naming it).\n";
static const char check_usage[] =
    "usage: bloomkit check FILE [INPUT...] [-v] [--null] [--quiet | --progress]\n"
    "       bloomkit check --redis URL [INPUT...] [-v] [--null] [--quiet | --progress]\n"
    "       (and [--canonical-urls [--keep-query-order]], as the filter records)\n"
    "Print each input line that may be in the filter (with -v: each line that is\n"
    "definitely not). Exit 0 if a line was printed, 1 if none, like grep.\n";
static const char remove_usage[] =
    "usage: bloomkit remove FILE [INPUT...] [--null] [--no-wait] [--quiet | --progress]\n"
    "       bloomkit remove --redis URL [INPUT...] [--null] [--quiet | --progress]\n"
    "       (and [--canonical-urls [--keep-query-order]], as the filter records)\n"
    "Remove each input line from a counting or cuckoo filter and save it atomically. Lines\n"
    "that are certainly absent change nothing; their number goes to standard error\n"
    "and the exit status is 1 (0 when every line was removed).\n"
    "Remove only lines you added: a line never added that the filter reports present\n"
    "(a false positive) is removed all the same, and that decrements counters of\n"
    "other keys, which can make keys you did add read absent.\n";

typedef struct filter_job {
    const cli_opts *o;
    bk_filter *f;
    out_buf out;
    uint64_t hits, misses;
    int op;              /* 0 add, 1 check, 2 remove */
    key_arena canonical; /* --canonical-urls: the keys' bytes */
} filter_job;

/* The batch's keys as the batch calls take them. */
typedef struct key_batch {
    const void *keys[INPUT_BATCH];
    size_t lens[INPUT_BATCH];
    int results[INPUT_BATCH];
} key_batch;

static int on_batch(void *ctx, const record *recs, size_t n)
{
    filter_job *j = ctx;
    if (n == 0) /* input idle: deliver what was decided */
        return out_flush(&j->out) == 0 ? 0 : cli_out_fail(j->o, j->out.err);
    key_batch kb = {{0}, {0}, {0}}; /* (n >= 1; the zeros only quiet gcc) */
    int rc = cli_record_keys(j->o, &j->canonical, recs, n, kb.keys, kb.lens);
    if (rc)
        return rc;
    switch (j->op) {
    case 0:
        rc = bk_add_batch(j->f, kb.keys, kb.lens, n, kb.results);
        if (rc < 0)
            return cli_lib_fail(j->o, rc, j->o->redis ? "--redis" : j->o->args[0]);
        for (size_t i = 0; i < n; i++)
            j->hits += (uint64_t)kb.results[i];
        return 0;
    case 1:
        rc = bk_contains_batch(j->f, kb.keys, kb.lens, n, kb.results);
        if (rc < 0)
            return cli_lib_fail(j->o, rc, j->o->redis ? "--redis" : j->o->args[0]);
        for (size_t i = 0; i < n; i++)
            if ((kb.results[i] == 1) != j->o->invert) {
                j->hits++;
                if (out_write(&j->out, recs[i].raw, recs[i].rawlen) != 0)
                    return cli_out_fail(j->o, j->out.err);
            }
        return 0;
    default: /* no batch call for removal: each one may roll back */
        for (size_t i = 0; i < n; i++) {
            rc = bk_remove(j->f, kb.keys[i], kb.lens[i]);
            if (rc == BK_OK)
                j->hits++;
            else if (rc == BK_ENOTFOUND)
                j->misses++;
            else
                return cli_lib_fail(j->o, rc, j->o->redis ? "--redis" : j->o->args[0]);
        }
        return 0;
    }
}

/* add, check and remove: op 0, 1, 2. Every argument is an input with
 * --redis; else the first is the filter FILE.
 * long: add, check and remove share one loop; their differences are a line each. */
static int run(cli_opts *o, int op)
{
    if (o->nargs < 1 && !o->redis)
        return cli_usage(o, "missing FILE");
    int rc;
    filter_job j = {.o = o, .op = op};
    /* With --redis every argument is an input and nothing is saved at the
     * end: each add is applied on the server as it is made. */
    const char *path = o->redis ? "--redis" : o->args[0];
    const int first_input = o->redis ? 0 : 1;
    bk_file_lock *lock = NULL; /* add, remove: one writer of the file at a time */
    if (!o->redis && (rc = cli_no_such_file(o, path)) != 0)
        return rc;
    if (op != 1 && !o->redis && (rc = cli_lock(o, path, &lock)) != 0)
        return rc;
    if (o->redis)
        rc = bk_redis_open_existing(o->redis, &j.f);
    else
        rc = op == 1 ? bk_open_mmap(path, BK_MAP_READONLY, &j.f) : bk_load(path, &j.f);
    if (rc != BK_OK) {
        bk_unlock_file(lock);
        return cli_lib_fail(o, rc, path);
    }
    cli_say_redated(o, j.f, path);
    if ((rc = cli_keys_agree(o, j.f, path)) != 0) {
        bk_free(j.f);
        bk_unlock_file(lock);
        return rc;
    }
    cli_keys_follow(o, j.f); /* a filter of canonical URLs: by its rule */
    if (op == 2) {
        bk_config cfg;
        bk_get_config(j.f, &cfg);
        if (!bk_variant_removes(cfg.variant)) {
            char can[64];
            bk_free(j.f);
            bk_unlock_file(lock);
            return cli_fail(o, EXIT_USAGE,
                            "%s: a %s filter cannot remove keys (only %s filters can); "
                            "%s unchanged",
                            path, bk_variant_name(cfg.variant),
                            cli_removing_variants(can, sizeof can), o->redis ? "filter" : "file");
        }
    }
    if (out_init(&j.out, STDOUT_FILENO) != 0) {
        bk_free(j.f);
        bk_unlock_file(lock);
        return cli_fail(o, EXIT_IO, "out of memory");
    }
    cli_install_signals();
    uint64_t lines = 0;
    rc = run_inputs(o, o->args + first_input, o->nargs - first_input, on_batch, &j, j.f, &lines);
    const int stopped = rc == INPUTS_STOPPED;
    if (out_flush(&j.out) != 0 && (rc == 0 || stopped))
        rc = cli_out_fail(o, j.out.err);
    if ((rc == 0 || rc == INPUTS_STOPPED) && op != 1 && !o->redis) {
        const int src = bk_save(j.f, path);
        if (src != BK_OK)
            rc = cli_lib_fail(o, src, path);
    }
    if (op == 2 && j.misses && !o->quiet)
        fprintf(stderr,
                "bloomkit remove: %llu of %llu line%s %s not in the filter (nothing "
                "changed for %s; exit 1)\n",
                (unsigned long long)j.misses, (unsigned long long)lines, lines == 1 ? "" : "s",
                j.misses == 1 ? "was" : "were", j.misses == 1 ? "it" : "them");
    out_free(&j.out);
    key_arena_free(&j.canonical);
    bk_free(j.f);
    bk_unlock_file(lock);
    if (rc == INPUTS_STOPPED)
        return cli_signal_exit();
    if (rc)
        return rc;
    if (op == 1 && j.hits == 0)
        return EXIT_NOTHING;                             /* check printed nothing, as grep */
    return op == 2 && j.misses ? EXIT_NOTHING : EXIT_OK; /* remove met absent lines */
}

#define FILTER_OPTS (OPT(NULL) | OPT(QUIET) | OPT(PROGRESS) | OPT(REDIS) | O_URL_FLAGS)
const cli_spec cmd_add_spec =
    CLI_SPEC("add", add_usage, FILTER_OPTS | OPT(NO_WAIT), 0, 0, -1, NULL);
const cli_spec cmd_check_spec =
    CLI_SPEC("check", check_usage, FILTER_OPTS | OPT(INVERT), 0, 0, -1, NULL);
const cli_spec cmd_remove_spec =
    CLI_SPEC("remove", remove_usage, FILTER_OPTS | OPT(NO_WAIT), 0, 0, -1, NULL);

int cmd_add(cli_opts *o)
{
    return run(o, 0);
}

int cmd_check(cli_opts *o)
{
    return run(o, 1);
}

int cmd_remove(cli_opts *o)
{
    return run(o, 2);
}
