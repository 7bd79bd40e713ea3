/*
 * modclock.h - the module's clock (modclock.c); no server calls, so the payload
 * fuzzer links it too.
 */
#ifndef BKM_CLOCK_H
#define BKM_CLOCK_H

#include <stdint.h>

#include "bloomkit_tools.h"

/* The latest time the module takes from outside (a payload's saved time,
 * BK.AT's): the last millisecond of the year 9999. Anything later, or
 * before 1970, is refused as damaged: no time a value carries can move a
 * window filter's generations out of the range its loader accepts. */
#define BKM_TIME_MAX INT64_C(253402300799999)

/* 1 when ms is a time the module accepts from outside: 0 .. BKM_TIME_MAX. */
int bkm_time_ok(int64_t ms);

/* Make this clock the one bloomkit's filters read (bk_set_clock), at now. */
void bkm_clock_init(int64_t now);
/* Move the clock to now unless that is earlier (or the clock is pinned). */
void bkm_clock_set(int64_t now);
/* Act at ms until bkm_clock_unpin (BK.AT, a payload's load), even if earlier. */
void bkm_clock_pin(int64_t ms);
/* Back to exactly the time before the pin: a pinned time never moves the
 * clock (BK.AT moves it forward itself, with bkm_clock_set, for the master's
 * time it carries; a payload's saved time moves nothing but its own value). */
void bkm_clock_unpin(void);
int64_t bkm_clock_now(void);

#endif
