/*
 * clock.c - the one clock of the library (bk_now_ms): wall-clock time in
 * milliseconds, replaceable by bk_set_clock for tests and simulations. Only
 * the window variant reads it.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "bloomkit.h"
#include "bloomkit_tools.h"

static int64_t real_clock(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bk_clock_fn clock_fn = real_clock;
static void *clock_ctx;

void bk_set_clock(bk_clock_fn fn, void *ctx)
{
    clock_fn = fn ? fn : real_clock;
    clock_ctx = fn ? ctx : NULL;
}

int64_t bk_now_ms(void)
{
    return clock_fn(clock_ctx);
}
