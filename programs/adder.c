/* adder.c - bk_add_batch_mt on a thread of its own (see adder.h). */
#include "adder.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

/* Yields in a row with no job to help with before the waiting caller
 * sleeps until its batch is added. */
#define ADDER_YIELDS 64

typedef struct adder_batch {
    const void *const *keys;
    const size_t *lens;
    size_t n;
    int *results;
    adder_prep_fn prep; /* NULL, or run on the adding thread before the add */
    void *prep_ctx;
    int rc;
    char detail[256]; /* bk_last_error() when rc < 0 */
} adder_batch;

/* Batches are numbered from 0 in the order submitted; batch b sits in
 * slot b % ADDER_DEPTH. */
struct adder {
    bk_filter *f;
    bk_workers *w;
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    adder_batch slot[ADDER_DEPTH];
    unsigned long submitted, added, waited; /* batches */
    int failed; /* the first failed batch's code (the adding thread's) */
    int quit;
};

static void *adder_main(void *p)
{
    adder *a = p;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (a->added == a->submitted && !a->quit)
            pthread_cond_wait(&a->cv, &a->mu);
        if (a->added == a->submitted)
            break; /* quit, nothing pending */
        adder_batch *b = &a->slot[a->added % ADDER_DEPTH];
        pthread_mutex_unlock(&a->mu);
        if (a->failed < 0) { /* after a failed batch nothing is added */
            for (size_t i = 0; i < b->n; i++)
                b->results[i] = a->failed;
            b->rc = a->failed;
            snprintf(b->detail, sizeof b->detail, "not added after an earlier error");
        } else {
            const int prc = b->prep ? b->prep(b->prep_ctx) : BK_OK;
            if (prc < 0) {
                for (size_t i = 0; i < b->n; i++)
                    b->results[i] = prc;
                b->rc = prc;
            } else {
                b->rc = bk_add_batch_mt(a->f, a->w, b->keys, b->lens, b->n, b->results);
            }
            snprintf(b->detail, sizeof b->detail, "%s",
                     prc < 0     ? bk_strerror(prc)
                     : b->rc < 0 ? bk_last_error()
                                 : "");
            if (b->rc < 0)
                a->failed = b->rc;
        }
        pthread_mutex_lock(&a->mu);
        a->added++;
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

adder *adder_start(bk_filter *f, bk_workers *w)
{
    adder *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->f = f;
    a->w = w;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    if (pthread_create(&a->tid, NULL, adder_main, a) != 0) {
        pthread_cond_destroy(&a->cv);
        pthread_mutex_destroy(&a->mu);
        free(a);
        return NULL;
    }
    return a;
}

void adder_submit(adder *a, const void *const *keys, const size_t *lens, size_t n, int *results)
{
    adder_submit_prep(a, keys, lens, n, results, NULL, NULL);
}

void adder_submit_prep(adder *a, const void *const *keys, const size_t *lens, size_t n,
                       int *results, adder_prep_fn prep, void *ctx)
{
    pthread_mutex_lock(&a->mu);
    /* the caller waits for a batch before it submits past the depth */
    adder_batch *b = &a->slot[a->submitted % ADDER_DEPTH];
    b->keys = keys;
    b->lens = lens;
    b->n = n;
    b->results = results;
    b->prep = prep;
    b->prep_ctx = ctx;
    a->submitted++;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

int adder_help(adder *a)
{
    int took = 0;
    while (bk_workers_help(a->w))
        took = 1;
    return took;
}

int adder_wait(adder *a, const char **detail)
{
    /* Help with the batches ahead while they are added; sleep only when
     * nothing is left to help with. */
    pthread_mutex_lock(&a->mu);
    const unsigned long want = a->waited;
    unsigned idle = 0; /* tries in a row with nothing to help with */
    while (a->added <= want) {
        pthread_mutex_unlock(&a->mu);
        if (bk_workers_help(a->w))
            idle = 0;
        else if (++idle < ADDER_YIELDS)
            sched_yield();
        pthread_mutex_lock(&a->mu);
        if (idle >= ADDER_YIELDS && a->added <= want) {
            pthread_cond_wait(&a->cv, &a->mu);
            idle = 0;
        }
    }
    const int rc = a->slot[want % ADDER_DEPTH].rc;
    if (detail) /* the slot is not reused before the next adder_wait */
        *detail = a->slot[want % ADDER_DEPTH].detail;
    a->waited++;
    pthread_mutex_unlock(&a->mu);
    return rc;
}

void adder_stop(adder *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    a->quit = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->tid, NULL);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    free(a);
}
