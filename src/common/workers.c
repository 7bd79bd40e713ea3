/*
 * workers.c - the thread pool behind bk_workers (see workers.h).
 *
 * A job is published by bumping `gen` (release) after storing fn and ctx;
 * each pool thread that sees the new generation (acquire) runs its part and
 * decrements `pending` (release); the caller, having run part 0, waits for
 * `pending` to reach 0 (acquire). Waiting is a bounded spin, then a sleep on
 * `wake`/`done` under `mu`: publishers and finishers take `mu` to broadcast,
 * and sleepers re-test the counter under `mu` before they wait, so no wake-up
 * is lost.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "error.h"
#include "workers.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

/* Spins before a waiting thread sleeps: about 100 us with x86's pause,
 * longer than the gap between the jobs of one batch call, far shorter than
 * a scheduler tick. */
#define BK_SPINS 2000

struct bk_workers {
    unsigned threads; /* the caller's included */
    pthread_t *tids;  /* threads - 1 */
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    _Atomic uint64_t gen;     /* jobs published */
    _Atomic unsigned pending; /* pool threads still running the current job */
    _Atomic int quit;
    _Atomic int active;       /* a job runs: helpers may join it */
    _Atomic unsigned helpers; /* threads from outside inside the job's fn */
    bk_job_fn fn;
    void *ctx;
    pthread_mutex_t call; /* one call at a time */
    void *scratch;
    size_t scratch_len;
};

typedef struct worker_arg {
    bk_workers *w;
    unsigned t;
} worker_arg;

/* Wait until w->gen differs from old; returns the new value. */
static uint64_t wait_gen(bk_workers *w, uint64_t old)
{
    uint64_t g;
    for (int i = 0; i < BK_SPINS; i++) {
        if ((g = atomic_load_explicit(&w->gen, memory_order_acquire)) != old)
            return g;
        bk_cpu_relax();
    }
    pthread_mutex_lock(&w->mu);
    while ((g = atomic_load_explicit(&w->gen, memory_order_acquire)) == old)
        pthread_cond_wait(&w->wake, &w->mu);
    pthread_mutex_unlock(&w->mu);
    return g;
}

static void *worker_main(void *p)
{
    worker_arg *a = p;
    bk_workers *w = a->w;
    const unsigned t = a->t;
    free(a);
    uint64_t seen = 0;
    for (;;) {
        seen = wait_gen(w, seen);
        if (atomic_load_explicit(&w->quit, memory_order_acquire))
            return NULL;
        (void)w->fn(w->ctx, t, w->threads);
        if (atomic_fetch_sub_explicit(&w->pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&w->mu);
            pthread_cond_signal(&w->done);
            pthread_mutex_unlock(&w->mu);
        }
    }
}

/* Publish the current fn/ctx (or quit) to the pool threads. */
static void publish(bk_workers *w)
{
    pthread_mutex_lock(&w->mu);
    atomic_fetch_add_explicit(&w->gen, 1, memory_order_release);
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->mu);
}

void bk_workers_run(bk_workers *w, bk_job_fn fn, void *ctx)
{
    w->fn = fn;
    w->ctx = ctx;
    atomic_store_explicit(&w->pending, w->threads - 1, memory_order_relaxed);
    atomic_store_explicit(&w->active, 1, memory_order_release);
    if (w->threads > 1) /* a pool of one has only helpers to wake */
        publish(w);
    (void)fn(ctx, 0, w->threads);
    int spins = 0;
    while (spins < BK_SPINS && atomic_load_explicit(&w->pending, memory_order_acquire) != 0) {
        bk_cpu_relax();
        spins++;
    }
    if (spins == BK_SPINS) {
        pthread_mutex_lock(&w->mu);
        while (atomic_load_explicit(&w->pending, memory_order_acquire) != 0)
            pthread_cond_wait(&w->done, &w->mu);
        pthread_mutex_unlock(&w->mu);
    }
    /* No helper joins from now on (it reads active after counting itself
     * in; both sequentially consistent, so one of the two sees the other),
     * and those inside finish before ctx goes away. */
    atomic_store(&w->active, 0);
    while (atomic_load(&w->helpers) != 0)
        bk_cpu_relax();
}

int bk_workers_help(bk_workers *w)
{
    if (!w)
        return 0;
    atomic_fetch_add(&w->helpers, 1);
    const int took = atomic_load(&w->active) && w->fn(w->ctx, w->threads, w->threads);
    atomic_fetch_sub_explicit(&w->helpers, 1, memory_order_release);
    return took;
}

void bk_wait_step(unsigned *steps)
{
    if (++*steps % 1024 == 0)
        sched_yield();
    else
        bk_cpu_relax();
}

unsigned bk_workers_threads(const bk_workers *w)
{
    return w ? w->threads : 1;
}

void bk_workers_lock(bk_workers *w)
{
    pthread_mutex_lock(&w->call);
}

void bk_workers_unlock(bk_workers *w)
{
    pthread_mutex_unlock(&w->call);
}

void *bk_workers_scratch(bk_workers *w, size_t bytes)
{
    if (bytes > w->scratch_len) {
        void *p = realloc(w->scratch, bytes);
        if (!p)
            return NULL;
        w->scratch = p;
        w->scratch_len = bytes;
    }
    return w->scratch;
}

unsigned bk_workers_cpus(void)
{
    long n = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
    if (n <= 0)
        n = sysconf(_SC_NPROCESSORS_ONLN);
    return n <= 0 ? 1 : n > BK_WORKERS_MAX ? BK_WORKERS_MAX : (unsigned)n;
}

/* Stop and join the first `started` pool threads, free everything. */
static void teardown(bk_workers *w, unsigned started)
{
    if (started) {
        atomic_store_explicit(&w->quit, 1, memory_order_release);
        publish(w);
        for (unsigned i = 0; i < started; i++)
            pthread_join(w->tids[i], NULL);
    }
    pthread_cond_destroy(&w->done);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->call);
    pthread_mutex_destroy(&w->mu);
    free(w->scratch);
    free(w->tids);
    free(w);
}

int bk_workers_new(unsigned threads, bk_workers **out)
{
    if (!out)
        return bk_fail(BK_EINVAL, "workers_new: no result pointer");
    *out = NULL;
    if (threads == 0)
        threads = bk_workers_cpus();
    if (threads > BK_WORKERS_MAX)
        return bk_fail(BK_EINVAL, "workers_new: %u threads; at most %u", threads,
                       (unsigned)BK_WORKERS_MAX);
    bk_workers *w = calloc(1, sizeof *w);
    if (!w)
        return bk_fail(BK_ENOMEM, "workers_new: out of memory");
    w->threads = threads;
    w->tids = calloc(threads, sizeof *w->tids);
    if (!w->tids) {
        free(w);
        return bk_fail(BK_ENOMEM, "workers_new: out of memory");
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_mutex_init(&w->call, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->done, NULL);
    atomic_init(&w->gen, 0);
    atomic_init(&w->pending, 0);
    atomic_init(&w->quit, 0);
    atomic_init(&w->active, 0);
    atomic_init(&w->helpers, 0);
    for (unsigned i = 0; i + 1 < threads; i++) {
        worker_arg *a = malloc(sizeof *a);
        const int rc = a ? BK_ESYS : BK_ENOMEM;
        if (a) {
            a->w = w;
            a->t = i + 1;
        }
        if (!a || pthread_create(&w->tids[i], NULL, worker_main, a) != 0) {
            free(a);
            teardown(w, i);
            return bk_fail(rc, "workers_new: cannot start thread %u of %u", i + 2, threads);
        }
    }
    *out = w;
    return BK_OK;
}

void bk_workers_free(bk_workers *w)
{
    if (w)
        teardown(w, w->threads - 1);
}
