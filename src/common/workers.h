/*
 * workers.h - a fixed pool of threads that run one job at a time (internal;
 * the public handle is bk_workers, see bloomkit.h).
 *
 * bk_workers_run(w, fn, ctx) calls fn(ctx, t, n) once for every t in 0 .. n-1,
 * n = the pool's threads: t = 0 on the calling thread, the others on the
 * pool's, and returns when all have returned. Threads from outside that
 * call bk_workers_help meanwhile run fn(ctx, n, n) too: a job claims its
 * work in pieces (an atomic counter) rather than dealing it out by t, so
 * any number of threads may take part and a preempted one holds up the
 * others by one piece at most. Everything the caller wrote
 * before the call is visible to every fn, and everything every fn wrote is
 * visible to the caller after it (release/acquire on the job's counters).
 * Threads that wait for work spin briefly and then sleep on a condition
 * variable, so back-to-back jobs start in well under a microsecond while an
 * idle pool costs no CPU. One job at a time: the caller holds w's call lock.
 */
#ifndef BK_COMMON_WORKERS_H
#define BK_COMMON_WORKERS_H

#include "bloomkit.h"

/* Returns 1 when it took some of the job's work, 0 when none was left. */
typedef int (*bk_job_fn)(void *ctx, unsigned t, unsigned n);

/* Run fn on every thread of w (see above). Not reentrant: fn must not run a
 * job on w. */
void bk_workers_run(bk_workers *w, bk_job_fn fn, void *ctx);

/* Serialise callers of one pool: lock before the first run of a call, and
 * unlock after its last (the scratch below belongs to the holder). */
void bk_workers_lock(bk_workers *w);
void bk_workers_unlock(bk_workers *w);

/* Scratch memory owned by the pool, for the holder of its lock: at least
 * bytes, kept across calls (grown, never shrunk). NULL when out of memory. */
void *bk_workers_scratch(bk_workers *w, size_t bytes);

/* A spin-wait's pause (x86's `pause`: yields the core to its sibling). */
static inline void bk_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* One step of a wait for another thread's progress: a pause, and every
 * 1,024th step the CPU given up (sched_yield), so that a waiter sharing its
 * CPU with the thread it waits for (more threads than CPUs) lets it run
 * instead of spinning out its time slice. *steps counts the steps. */
void bk_wait_step(unsigned *steps);

#endif
