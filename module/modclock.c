/*
 * modclock.c - the time every filter of the module reads (no server calls).
 *
 * Window filters read bk_now_ms(); in the module that is this clock, set
 * before each command (propagate.c): the master's own time on a master, the
 * master's time carried by BK.AT on a replica or in an AOF replay, and a
 * payload's save time while it loads. So a replica and a replay act at
 * exactly the times the master did and reach the same bytes. A pin ends
 * with the clock where it was: one RESTOREd value's time (a host whose
 * clock ran ahead, or a crafted payload) is that value's alone, never the
 * time every other window filter of the server acts at.
 */
#include "modclock.h"

#include <stddef.h>

#include "bloomkit.h"
#include "bloomkit_tools.h"

/* Pins nest (BK.AT pins the master's time, and a BF.LOADCHUNK it carries
 * pins the image's time inside it): each unpin gives back the time its pin
 * found, so the outer pin's time holds again until its own unpin. */
#define PIN_DEPTH 4

static int64_t g_now;              /* the time commands act at, ms */
static int64_t g_saved[PIN_DEPTH]; /* the clock each pin found */
static int g_pinned;               /* pins in force */

static int64_t module_clock(void *ctx)
{
    (void)ctx;
    return g_now;
}

int bkm_time_ok(int64_t ms)
{
    return ms >= 0 && ms <= BKM_TIME_MAX;
}

void bkm_clock_init(int64_t now)
{
    g_now = now;
    g_pinned = 0;
    bk_set_clock(module_clock, NULL);
}

void bkm_clock_set(int64_t now)
{
    if (!g_pinned && now > g_now) /* never back: time on a master only moves on */
        g_now = now;
}

void bkm_clock_pin(int64_t ms)
{
    if (g_pinned < PIN_DEPTH) /* two deep at most: BK.AT, then a load inside it */
        g_saved[g_pinned] = g_now;
    g_pinned++;
    g_now = ms;
}

void bkm_clock_unpin(void)
{
    if (g_pinned && --g_pinned < PIN_DEPTH)
        g_now = g_saved[g_pinned];
}

int64_t bkm_clock_now(void)
{
    return g_now;
}
