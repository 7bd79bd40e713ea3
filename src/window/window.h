/* window.h - the time-window variant's descriptor (internal). What it
 * promises, how it is sized and its concurrency rules are explained once, in
 * window.c's opening comment; docs/windows.md is the user's account. */
#ifndef BK_WINDOW_WINDOW_H
#define BK_WINDOW_WINDOW_H

#include "../core/filter_impl.h"

/* Generations live at once: G spans of the window, and the current one. */
#define BK_WINDOW_MAX_LIVE (BK_GENERATIONS_MAX + 1)

/* The window variant's descriptor (bk_window_desc): its adopt
 * takes the slices of every generation, oldest first, each slice's view
 * naming its generation (gen); generations that expired while the payloads
 * were stored are dropped at once (a borrowed, mapped one is kept but never
 * consulted). Its plan is the whole window at its stated rate (every live
 * generation's first slice), not one generation. Its stats report the
 * capacity of one window. */

/* The configuration of one generation's chain (a scalable chain): capacity
 * capacity / G and 1% more, rate fpr / (G + 1), the window's growth,
 * tightening, hash, layout and key. */
void bk_window_chain_config(const bk_config *cfg, bk_config *out);

/* A span's length in ms: window / G, rounded up to a whole ms (so G spans
 * cover at least the window). */
int64_t bk_window_span_ms(const bk_config *cfg);

/* The most slices a window filter may hold (its generations' chains). */
#define BK_WINDOW_MAX_SLICES 256

#endif
