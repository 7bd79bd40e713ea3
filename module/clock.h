/*
 * clock.h - the module's clock (clock.c); no server calls, so the payload
 * fuzzer links it too.
 */
#ifndef BKM_CLOCK_H
#define BKM_CLOCK_H

#include <stdint.h>

/* Make this clock the one bloomkit's filters read (bk_set_clock), at now. */
void bkm_clock_init(int64_t now);
/* Move the clock to now unless that is earlier (or the clock is pinned). */
void bkm_clock_set(int64_t now);
/* Act at ms until bkm_clock_unpin (BK.AT, a payload's load), even if earlier. */
void bkm_clock_pin(int64_t ms);
/* Back to the clock's own time (the later of it and the pinned time). */
void bkm_clock_unpin(void);
int64_t bkm_clock_now(void);

#endif
