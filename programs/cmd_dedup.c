/*
 * cmd_dedup.c - the main job: write each record the first time it is seen.
 *
 * Records stream from the INPUTs (or stdin) to stdout in input order; memory is
 * the filter plus fixed buffers, whatever the input size. With --state FILE
 * the filter survives runs: loaded if FILE exists (its parameters win; an
 * explicit config that differs is an error), created otherwise, and saved
 * atomically at the end, every --checkpoint N records and on SIGINT/SIGTERM/SIGHUP
 * (after the current record; exit 130/143/129).
 *
 * Ordering invariant: stdout is flushed before every save, so a saved state
 * never holds a record that was not written out. If stdout fails (the reader
 * went away), the state is not saved again: the last saved state matches what
 * was delivered, and the next run re-emits the rest.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adder.h"
#include "keys.h"

static const char usage[] =
    "usage: bloomkit dedup [INPUT...] [--state FILE | --redis URL] [--checkpoint N]\n"
    "                      [--config TEXT | --config-file F] [filter options] [--null]\n"
    "                      [--threads N] [--canonical-urls [--keep-query-order]]\n"
    "                      [--no-wait] [--quiet | --progress]\n"
    "Copy each record of the INPUTs (default or '-': standard input) to standard output\n"
    "the first time it is seen, in input order. Default filter: fpr=0.0001, in memory;\n"
    "when no count is known (no --capacity, no capacity= in --config, no --config-file,\n"
    "no regular files as INPUTs, which make capacity = the records they hold, when more)\n"
    "variant=expandable capacity=1000000 (one table that doubles; with --redis, when\n"
    "the server has bloomkit's module), else, and with --variant, --layout or\n"
    "--growth, variant=scalable layout=blocked capacity=1000000 (tightening=0.85\n"
    "when no count is known).\n"
    "--state FILE keeps the filter across runs: loaded if FILE exists (its parameters\n"
    "win), created otherwise, saved atomically at the end, every N records with\n"
    "--checkpoint N, and on SIGINT/SIGTERM/SIGHUP. --redis URL deduplicates against a\n"
    "shared filter in Redis (created with the config if it does not exist), so that\n"
    "several processes on several machines emit each record once between them. Runs\n"
    "sharing one --state FILE take turns (a lock beside it; --no-wait: exit 3 at once\n"
    "instead).\n"
    "Lines end in LF or CRLF (CR not part of the key); --null: NUL-terminated records.\n"
    "--window T (30d, 12h, 90m, 2s): variant=window, a record is emitted again once\n"
    "T (to T + T/G) has passed since it was (see docs/windows.md).\n"
    "--threads N: hash and probe on N threads (default: the CPUs this process may\n"
    "use); the output is the same for every N.\n"
    "--canonical-urls: decide on each line's canonical URL (scheme and host lower-case,\n"
    "default port, fragment and dot segments gone, escapes normalised, query sorted;\n"
    "--keep-query-order keeps its order) while printing the line as it is; a line\n"
    "that is not a URL is its own key (docs/urls.md). A filter made with it records\n"
    "it (input=url) and applies it by itself in later runs.\n";

/* --canonical-urls with a thread adding in the background: the part of a
 * batch whose canonical URLs that thread makes before it adds them (the
 * reader makes the rest), so the two share the work. */
typedef struct canonical_rest {
    unsigned flags;
    key_arena arena;
    const record *recs;
    size_t n;
    const void **keys;
    size_t *lens;
} canonical_rest;

/* One batch's keys, lengths and answers (INPUT_BATCH_MT of each). */
typedef struct batch_arrays {
    const void **keys;
    size_t *lens;
    int *results;
    key_arena canonical; /* --canonical-urls: the keys' bytes */
    canonical_rest rest; /* ... and those the adding thread makes */
} batch_arrays;

/* adder_prep_fn: the canonical URLs of the rest of a batch. */
static int canonicalise_rest(void *ctx)
{
    canonical_rest *r = ctx;
    return cli_canonical_keys(r->flags, &r->arena, r->recs, r->n, r->keys, r->lens);
}

/* A batch handed to the adding thread and not yet written out. */
typedef struct in_flight {
    const record *recs;
    size_t n;
    unsigned arr; /* its keys, lengths and answers: arr[arr] */
} in_flight;

/* bg: batches in flight at most, plus the one being read. */
#define DEDUP_ARRAYS (ADDER_DEPTH + 1)

typedef struct dedup_job {
    const cli_opts *o;
    bk_filter *f;
    unsigned threads; /* --threads, or the CPUs: 1 means no pool */
    bk_workers *w;    /* NULL: one thread */
    adder *bg;        /* NULL: each batch is added within its call */
    batch_arrays arr[DEDUP_ARRAYS];
    unsigned next;                 /* bg: arr[next] takes the next batch */
    in_flight flying[ADDER_DEPTH]; /* bg: oldest first, nflying of them */
    unsigned nflying;
    out_buf out;
    uint64_t seen, emitted;
    int failed; /* the filter failed mid-batch: what it confirmed was written */
    int dead;   /* a call returned an error: nothing more is written */
} dedup_job;

/* Flush stdout, then save the state atomically. 0 or an exit code. */
static int checkpoint(dedup_job *j)
{
    if (out_flush(&j->out) != 0)
        return cli_out_fail(j->o, j->out.err);
    if (!j->o->state)
        return 0;
    const int rc = bk_save(j->f, j->o->state);
    return rc == BK_OK ? 0 : cli_lib_fail(j->o, rc, j->o->state);
}

/* Write the lines of recs[0..n) the filter took as new, in order, then
 * report rc, the batch call's return. Every line the filter took as new is
 * written, also when the batch failed part-way: its key is in the filter
 * now, and a line not written would never be written by any later run. */
static int emit(dedup_job *j, const record *recs, const int *results, size_t n, int rc,
                const char *detail)
{
    for (size_t i = 0; i < n; i++)
        if (results[i] == 1) {
            j->emitted++;
            if (out_write(&j->out, recs[i].raw, recs[i].rawlen) != 0)
                return cli_out_fail(j->o, j->out.err);
        }
    if (rc < 0) {
        j->failed = 1;
        return cli_lib_fail_detail(j->o, rc, j->o->redis ? "--redis" : "filter", detail);
    }
    return 0;
}

/* Add the batch's keys with one batch call, emit the lines that were new, in
 * order; split at every --checkpoint boundary, so a checkpoint covers
 * exactly the records before it. */
static int on_batch(void *ctx, const record *recs, size_t n)
{
    dedup_job *j = ctx;
    if (n == 0) /* input idle: deliver what was decided */
        return out_flush(&j->out) == 0 ? 0 : cli_out_fail(j->o, j->out.err);
    batch_arrays *a = &j->arr[0];
    const int krc = cli_record_keys(j->o, &a->canonical, recs, n, a->keys, a->lens);
    if (krc)
        return krc;
    const uint64_t every = j->o->checkpoint ? j->o->checkpoint : UINT64_MAX;
    size_t done = 0;
    while (done < n) {
        const uint64_t to_checkpoint = every - j->seen % every;
        const size_t take = to_checkpoint < n - done ? (size_t)to_checkpoint : n - done;
        const int rc =
            bk_add_batch_mt(j->f, j->w, a->keys + done, a->lens + done, take, a->results + done);
        const int erc = emit(j, recs + done, a->results + done, take, rc, bk_last_error());
        if (erc)
            return erc;
        j->seen += take;
        done += take;
        if (j->seen % every == 0) {
            const int crc = checkpoint(j);
            if (crc)
                return crc;
        }
    }
    return 0;
}

/* Wait for the oldest batch in flight and write the lines it took as new
 * (nothing once a call has failed: it is only waited for). */
static int land(dedup_job *j)
{
    const in_flight b = j->flying[0];
    for (unsigned i = 1; i < j->nflying; i++)
        j->flying[i - 1] = j->flying[i];
    j->nflying--;
    const char *detail = "";
    const int rc = adder_wait(j->bg, &detail);
    if (j->dead)
        return 0;
    const int erc = emit(j, b.recs, j->arr[b.arr].results, b.n, rc, detail);
    if (erc)
        j->dead = 1;
    return erc;
}

/* With a thread adding in the background (no --checkpoint), ADDER_DEPTH
 * batches in flight: this call writes out the oldest (read two calls ago;
 * records stay valid that long, run_inputs_n's overlap), queues this one,
 * and helps hash the one being added before it returns to read the next
 * batch. So the reading happens while the adding thread applies the end of
 * a batch, which only it can do, rather than while it hashes alone
 * (measured: docs/performance.md). (NULL, 0), when the input idles and at
 * its end: land every batch in flight and flush. After an error nothing
 * more is written or queued. */
static int on_batch_bg(void *ctx, const record *recs, size_t n)
{
    dedup_job *j = ctx;
    int erc = 0;
    if (n > 0) {
        if (j->nflying == ADDER_DEPTH)
            erc = land(j);
        if (j->dead)
            return erc;
        batch_arrays *a = &j->arr[j->next];
        /* canonical URLs: the reader makes the first half, the adding
         * thread the rest (measured: docs/urls.md) */
        const size_t mine = j->o->canonical_urls ? n / 2 : n;
        if ((erc = cli_record_keys(j->o, &a->canonical, recs, mine, a->keys, a->lens)) != 0) {
            while (j->nflying > 0 && !j->dead) /* what is in flight is written out */
                land(j);
            j->dead = j->failed = 1; /* nothing more is queued; the state is saved */
            return erc;
        }
        a->rest.flags = cli_canonical_flags(j->o);
        a->rest.recs = recs + mine;
        a->rest.n = n - mine;
        a->rest.keys = a->keys + mine;
        a->rest.lens = a->lens + mine;
        adder_submit_prep(j->bg, a->keys, a->lens, n, a->results,
                          mine < n ? canonicalise_rest : NULL, &a->rest);
        j->flying[j->nflying++] = (in_flight){recs, n, j->next};
        j->next = (j->next + 1) % DEDUP_ARRAYS;
        j->seen += n;
        adder_help(j->bg);
        return 0;
    }
    while (j->nflying > 0) {
        const int lrc = land(j);
        if (!erc)
            erc = lrc;
    }
    if (!j->dead && out_flush(&j->out) != 0) {
        erc = cli_out_fail(j->o, j->out.err);
        j->dead = 1;
    }
    return erc;
}

/* An existing filter's parameters win; an explicit config must agree with
 * them. 0, or an exit code (message printed, *f freed). */
static int keep_if_agreeing(const cli_opts *o, bk_filter **f, const char *what)
{
    const int krc = cli_keys_agree(o, *f, what); /* --canonical-urls, in its own words */
    if (krc) {
        bk_free(*f);
        *f = NULL;
        return krc;
    }
    bk_config have, asked;
    bk_get_config(*f, &have);
    asked = have;
    const int rc = cli_apply_config(o, &asked);
    const char *diff = rc ? NULL : bk_config_diff(&asked, &have);
    if (rc || diff) {
        char saved[64] = "", given[64] = "", flag[80];
        if (!rc) {
            bk_config_get(&have, diff, saved, sizeof saved);
            /* asked mixes the saved filter's values with the stated ones, and
             * may hold keys of another variant: the stated value then */
            if (bk_config_get(&asked, diff, given, sizeof given) < 0)
                snprintf(given, sizeof given, "%s",
                         strcmp(diff, "variant") == 0 ? bk_variant_name(asked.variant)
                         : cli_key(o, diff)           ? cli_key(o, diff)
                                                      : "(as stated)");
            if (cli_key(o, diff)) { /* --max-bytes for max_bytes */
                snprintf(flag, sizeof flag, "--%s", diff);
                for (char *c = strchr(flag, '_'); c; c = strchr(c, '_'))
                    *c = '-';
            } else
                snprintf(flag, sizeof flag, "%s's %s", o->config_file ? o->config_file : "--config",
                         diff);
        }
        bk_free(*f);
        *f = NULL;
        return rc ? rc
                  : cli_fail(o, EXIT_USAGE,
                             "%s: %s asks %s=%s, a different %s than the saved filter's %s=%s "
                             "(a filter keeps the parameters it was made with): drop %s to go "
                             "on with the saved filter, or %s to start a new one",
                             what, flag, diff, given, diff, diff, saved, flag,
                             strcmp(what, "--redis") == 0 ? "name another filter in --redis"
                                                          : "give another --state");
    }
    return 0;
}

/* The records a regular file holds, estimated from its size and the mean
 * record of 64 KiB read at 8 places spread over it (records numbered in
 * order grow longer down a file: its head alone overcounts); 0 when fd is
 * not a regular file or holds nothing. Reads with pread: the position
 * stays where it was. */
static uint64_t records_in(int fd, int sep)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
        return 0;
    enum { PLACES = 8, EACH = 8192 };
    char sample[EACH];
    uint64_t bytes = 0, seps = 0;
    for (int i = 0; i < PLACES; i++) {
        const off_t at = (off_t)((double)st.st_size * i / PLACES);
        const ssize_t got = pread(fd, sample, sizeof sample, at);
        for (ssize_t b = 0; b < got; b++)
            seps += sample[b] == sep;
        bytes += got > 0 ? (uint64_t)got : 0;
    }
    if (bytes == 0)
        return 0;
    const double mean = seps ? (double)bytes / (double)seps : (double)bytes;
    return (uint64_t)((double)st.st_size / mean) + 1;
}

/* The records the inputs hold when every one is a regular file (standard
 * input redirected from one included), else 0: a chain sized for them from
 * the start probes one slice a key where one grown to them probes several
 * (10^8 lines: 6 slices from the default 10^6). */
static uint64_t records_in_inputs(const cli_opts *o)
{
    const int sep = o->null_sep ? '\0' : '\n';
    if (o->nargs == 0)
        return records_in(STDIN_FILENO, sep);
    uint64_t total = 0;
    for (int i = 0; i < o->nargs; i++) {
        uint64_t n;
        if (strcmp(o->args[i], "-") == 0) {
            n = records_in(STDIN_FILENO, sep);
        } else {
            const int fd = open(o->args[i], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
            n = fd >= 0 ? records_in(fd, sep) : 0;
            if (fd >= 0)
                close(fd);
        }
        if (n == 0)
            return 0;
        total += n;
    }
    return total;
}

/* 1 when the command line states key `name` (an option, or --config's
 * text). */
static int states(const cli_opts *o, const char *name)
{
    return cli_key(o, name) || (o->config_text && bk_config_text_sets(o->config_text, name));
}

/* dedup's defaults with the command line's config over them. A chain of
 * local memory starts at the inputs' record count when they are regular
 * files (a capacity given wins; bk_new may still refuse it: open_local then
 * starts at the default). */
static int new_config(const cli_opts *o, bk_config *cfg, int sized)
{
    bk_config_init(cfg);
    if (bk_config_parse_over(cfg, bk_config_preset("crawler"), NULL, 0) != BK_OK)
        return cli_fail(o, EXIT_USAGE, "the crawler preset does not parse"); /* cannot happen */
    int count_known = states(o, "capacity") || o->config_file;
    if (sized) {
        const uint64_t n = records_in_inputs(o);
        if (n > cfg->capacity)
            cfg->capacity = n;
        count_known |= n > 0;
    }
    /* No count known (a pipe, a crawler's stream) and no filter asked for:
     * the preset's expandable filter, one table that doubles, so a new key
     * costs one lookup however far the count goes, where a chain probes
     * every slice (docs/performance.md, "Not knowing the count"); through
     * Redis too, where the module keeps it (bk_redis_open_default makes
     * the chain on a server without it). */
    if (!count_known && !states(o, "variant") && !states(o, "layout") && !states(o, "growth") &&
        !cli_key(o, "window"))
        return cli_apply_config(o, cfg);
    /* A variant asked for that has no layout (expandable with a count,
     * RedisBloom's): the command line over the preset, as it is. */
    if (states(o, "variant")) {
        bk_config asked = *cfg;
        const int rc = cli_apply_config(o, &asked);
        if (rc != 0 || !bk_config_key_applies(asked.variant, "layout")) {
            *cfg = asked;
            return rc;
        }
    }
    /* Else a chain (the preset's: one cache line per key and slice, as
     * dedup is a throughput job and the blocked layout makes it ~1.4x
     * faster for ~15% more memory, docs/performance.md; --layout classic
     * gives the other trade). With no count known it plans for growth
     * that may reach 10^9: each slice gets 0.85 of the last's rate, not
     * 0.5, so the later slices, which hold most keys, spend about 0.34
     * bits a key more each instead of 1.44 (Almeida et al. advise 0.8-0.9
     * for large growth). With a count (--capacity, a config, files) the
     * first slice should hold it and keeps half the rate, as 0.5 gives it. */
    if (bk_config_parse_over(cfg, bk_config_preset("chain"), NULL, 0) != BK_OK ||
        (count_known && bk_config_set(cfg, "tightening", "0.5", NULL, 0) != BK_OK))
        return cli_fail(o, EXIT_USAGE, "the chain preset does not parse"); /* cannot happen */
    return cli_apply_config(o, cfg);
}

/* The shared filter at --redis: adopted if it exists, else created from the
 * config (bk_redis_open_default: two processes creating one name at once,
 * the loser adopts). */
static int open_redis(const cli_opts *o, bk_filter **f)
{
    if (o->state)
        return cli_fail(o, EXIT_USAGE,
                        "--redis and --state exclude each other (a shared filter is kept by "
                        "the server)");
    bk_config cfg;
    int rc = new_config(o, &cfg, 0);
    if (rc != 0)
        return rc;
    if ((rc = bk_redis_open_default(o->redis, &cfg, f)) != BK_OK)
        return cli_lib_fail(o, rc, "--redis");
    cli_say_redated(o, *f, "--redis");
    return keep_if_agreeing(o, f, "--redis");
}

/* The filter: loaded from --state if it exists, else new from the config.
 * Either lives in this process's memory and only the adding thread writes
 * it, a batch at a time: its single writer (plain stores, no locked
 * instruction). It holds each line once (bk_set_add_once): dedup asks only
 * "first sight?", so a counting filter does not count sightings and a
 * cuckoo filter does not fill its buckets with copies. */
static int open_local(const cli_opts *o, bk_filter **f)
{
    struct stat st;
    if (o->state && stat(o->state, &st) == 0) {
        const int rc = bk_load(o->state, f);
        if (rc != BK_OK)
            return cli_lib_fail(o, rc, o->state);
        cli_say_redated(o, *f, o->state);
        return keep_if_agreeing(o, f, o->state);
    }
    if (o->state && errno != ENOENT)
        return cli_fail(o, EXIT_IO, "%s: %s", o->state, strerror(errno));
    bk_config cfg;
    int rc = new_config(o, &cfg, 1);
    if (rc)
        return rc;
    rc = bk_new(&cfg, f);
    bk_config plain;
    if ((rc == BK_ENOMEM || rc == BK_ERANGE) && new_config(o, &plain, 0) == 0 &&
        plain.capacity != cfg.capacity) /* the inputs' count too many for memory */
        rc = bk_new(&plain, f);
    return rc == BK_OK ? 0 : cli_lib_fail(o, rc, "filter");
}

static int open_filter(const cli_opts *o, bk_filter **f)
{
    if (o->redis)
        return open_redis(o, f);
    const int rc = open_local(o, f);
    if (rc == 0) {
        bk_set_single_writer(*f, 1);
        bk_set_add_once(*f, 1);
    }
    return rc;
}

const cli_spec cmd_dedup_spec =
    CLI_SPEC("dedup", usage,
             O_FILTER_FLAGS | OPT(STATE) | OPT(REDIS) | OPT(CHECKPOINT) | OPT(NULL) | OPT(QUIET) |
                 OPT(PROGRESS) | OPT(NO_WAIT) | OPT(THREADS) | O_URL_FLAGS,
             0, 0, -1, NULL);

/* The batch arrays, and a pool when more than one thread is asked for or,
 * without --threads, available (a Redis filter decides on the server: one
 * thread). Without --checkpoint the batches are added on a thread of their
 * own while the reader, between reading and writing, helps: the pool has one
 * thread fewer than asked for, so that N threads are busy, never N + 1 on N
 * CPUs (measured: 10% faster on 2 CPUs, docs/performance.md). 0 or an exit
 * code. */
static int start_threads(const cli_opts *o, dedup_job *j)
{
    if (o->threads > BK_WORKERS_MAX)
        return cli_fail(o, EXIT_USAGE, "--threads: at most %d", BK_WORKERS_MAX);
    if (o->redis && o->threads > 1)
        return cli_fail(o, EXIT_USAGE,
                        "--threads %llu with --redis: a shared filter decides each chunk of "
                        "keys on the server, in one script call, from one thread",
                        (unsigned long long)o->threads);
    j->threads = o->redis ? 1 : o->given & OPT(THREADS) ? (unsigned)o->threads : bk_workers_cpus();
    if (j->threads > 1) {
        const int rc = bk_workers_new(o->checkpoint ? j->threads : j->threads - 1, &j->w);
        if (rc != BK_OK)
            return cli_lib_fail(o, rc, "--threads");
    }
    const size_t batch = j->threads > 1 ? INPUT_BATCH_MT : INPUT_BATCH;
    for (unsigned i = 0; i < DEDUP_ARRAYS; i++) {
        batch_arrays *a = &j->arr[i];
        a->keys = malloc(batch * sizeof *a->keys);
        a->lens = malloc(batch * sizeof *a->lens);
        a->results = malloc(batch * sizeof *a->results);
        if (!a->keys || !a->lens || !a->results)
            return cli_fail(o, EXIT_IO, "out of memory");
    }
    return 0;
}

static void stop_threads(dedup_job *j)
{
    adder_stop(j->bg);
    bk_workers_free(j->w);
    for (unsigned i = 0; i < DEDUP_ARRAYS; i++) {
        free(j->arr[i].keys);
        free(j->arr[i].lens);
        free(j->arr[i].results);
        key_arena_free(&j->arr[i].canonical);
        key_arena_free(&j->arr[i].rest.arena);
    }
}

/* long: the run's steps in order: open, read, dedup, checkpoint, save, report. */
int cmd_dedup(cli_opts *o)
{
    int rc;
    if (o->checkpoint && !o->state)
        return cli_fail(o, EXIT_USAGE, "--checkpoint needs --state FILE");
    dedup_job j = {.o = o};
    if ((rc = start_threads(o, &j)) != 0) {
        stop_threads(&j);
        return rc;
    }
    /* The state's writer lock, for the whole run: before any input is read,
     * so a state that cannot be written (a missing directory) fails first. */
    bk_file_lock *lock = NULL;
    if (o->state && (rc = cli_lock(o, o->state, &lock)) != 0) {
        stop_threads(&j);
        return rc;
    }
    rc = open_filter(o, &j.f);
    if (rc == 0)
        cli_keys_follow(o, j.f); /* a filter of canonical URLs: by its rule */
    if (rc == 0 && o->fingerprints) {
        bk_free(j.f);
        rc = cli_fail(o, EXIT_USAGE,
                      "%s: the filter's keys are request fingerprints (input=scrapy-redis: "
                      "imported from scrapy-redis's set), which dedup does not make of its "
                      "lines; check or add fingerprints (40 hex digits) with bloomkit check "
                      "and add",
                      o->redis   ? "--redis"
                      : o->state ? o->state
                                 : "dedup");
    }
    if (rc == 0 && out_init(&j.out, STDOUT_FILENO) != 0) {
        bk_free(j.f);
        rc = cli_fail(o, EXIT_IO, "out of memory");
    }
    if (rc) {
        bk_unlock_file(lock);
        stop_threads(&j);
        return rc;
    }
    /* Several threads and no --checkpoint: a batch is added while the next is
     * read (checkpoints need the batches before them added, so they run in
     * the call). */
    const int many = j.threads > 1;
    if (many && !o->checkpoint && (j.bg = adder_start(j.f, j.w)) == NULL) {
        bk_free(j.f);
        bk_unlock_file(lock);
        stop_threads(&j);
        return cli_fail(o, EXIT_IO, "cannot start a thread");
    }
    cli_install_signals();
    uint64_t lines = 0;
    rc = run_inputs_n(o, o->args, o->nargs, many ? INPUT_BATCH_MT : INPUT_BATCH,
                      j.bg ? ADDER_DEPTH : 0, j.bg ? on_batch_bg : on_batch, &j, j.f, &lines);
    if (rc == 0 || rc == INPUTS_STOPPED || j.failed) {
        /* Also after a filter error: the lines it confirmed were written,
         * and the state a later run loads must hold every written line. */
        const int crc = checkpoint(&j);
        if (crc && !j.failed)
            rc = crc;
    } else {
        out_flush(&j.out); /* stdout failed: the state stays as last saved */
    }
    out_free(&j.out);
    stop_threads(&j); /* before the filter it adds to */
    bk_free(j.f);
    bk_unlock_file(lock);
    return rc == INPUTS_STOPPED ? cli_signal_exit() : rc;
}
