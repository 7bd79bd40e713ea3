/*
 * bench_window.c - what a window filter's rotation costs (a new generation
 * each span), against its floor measured in the same run: the same add
 * without a rotation (the same filter, its G + 1 generations live), plus
 * allocating the generation's first array and freeing the one that expired
 * (calloc/free of the same bytes, and the first touch of one line).
 *
 * Every configuration of the documented ranges' corners (window 1s .. 3650d,
 * generations 2 .. 64, both layouts, a small and the default capacity) runs
 * under a clock this program moves by one span per add, so every add makes
 * a generation and drops one. The ratio rotating add / floor is the figure:
 * sizing a generation once per filter (not once per span) keeps it near 1
 * however small the window or many the generations (blocked tiny windows
 * once spent 3.6 to 7 ms sizing every span's generation).
 *
 *   bench_window [--smoke]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bloomkit.h"
#include "bloomkit_tools.h"

static int64_t now_ms;

static int64_t bench_clock(void *ctx)
{
    (void)ctx;
    return now_ms;
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static volatile uint8_t sink;

/* The floor of `rotations` rotations of generations of `bytes`: a live
 * table of `live` arrays, each new one allocated and touched once, the
 * oldest freed. */
static double floor_ns(size_t bytes, unsigned live, unsigned rotations)
{
    uint8_t **ring = calloc(live, sizeof *ring);
    const double t0 = seconds();
    for (unsigned i = 0; i < rotations; i++) {
        free(ring[i % live]);
        ring[i % live] = calloc(1, bytes);
        if (ring[i % live]) {
            ring[i % live][(i * 4099u) % bytes] = 1;
            sink = ring[i % live][0];
        }
    }
    const double ns = (seconds() - t0) * 1e9 / rotations;
    for (unsigned i = 0; i < live; i++)
        free(ring[i]);
    free(ring);
    return ns;
}

/* long: the runs in the order the report prints them, each a few lines. */
int main(int argc, char **argv)
{
    const int smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
    const unsigned rotations = smoke ? 40 : 400;
    static const char *const windows[] = {"1s", "1h", "30d", "3650d"};
    static const unsigned gens[] = {2, 8, 64};
    static const char *const layouts[] = {"classic", "blocked"};
    static const unsigned capacities[] = {1000, 1000000};
    bk_set_clock(bench_clock, NULL);
    printf("window rotation: one generation made and one dropped per add (%u adds each)\n",
           rotations);
    printf("%-8s %3s %-8s %8s %10s %12s %10s %10s %7s\n", "window", "G", "layout", "capacity",
           "gen. bytes", "rotating add", "plain add", "alloc", "ratio");
    double worst = 0.0;
    for (size_t w = 0; w < sizeof windows / sizeof *windows; w++)
        for (size_t g = 0; g < sizeof gens / sizeof *gens; g++)
            for (size_t l = 0; l < 2; l++)
                for (size_t c = 0; c < 2; c++) {
                    char text[160], err[128];
                    snprintf(text, sizeof text,
                             "variant=window window=%s generations=%u layout=%s capacity=%u "
                             "fpr=0.01",
                             windows[w], gens[g], layouts[l], capacities[c]);
                    bk_config cfg;
                    bk_filter *f;
                    if (bk_config_parse(&cfg, text, err, sizeof err) != BK_OK ||
                        bk_new(&cfg, &f) != BK_OK) {
                        fprintf(stderr, "bench_window: %s: %s\n", text, err);
                        return 1;
                    }
                    const int64_t span =
                        (int64_t)((cfg.window_ms + cfg.generations - 1) / cfg.generations);
                    now_ms = INT64_C(1800000000000);
                    char key[32];
                    const double t0 = seconds();
                    for (unsigned i = 0; i < rotations; i++) {
                        now_ms += span;
                        const int n = snprintf(key, sizeof key, "k%u", i);
                        if (bk_add(f, key, (size_t)n) < 0) {
                            fprintf(stderr, "bench_window: %s: %s\n", text, bk_last_error());
                            return 1;
                        }
                    }
                    const double rot = (seconds() - t0) * 1e9 / rotations;
                    /* The same adds with the clock standing: the current generation
                     * grows as such a generation does (a warm-up pass sizes its
                     * slices once, as the filter's earlier generations would have),
                     * then the timed pass in the next span. */
                    double plain = 0.0;
                    for (int pass = 0; pass < 2; pass++) {
                        now_ms += span;
                        const double t1 = seconds();
                        for (unsigned i = 0; i < rotations; i++) {
                            const int n = snprintf(key, sizeof key, "p%d.%u", pass, i);
                            if (bk_add(f, key, (size_t)n) < 0)
                                return 1;
                        }
                        plain = (seconds() - t1) * 1e9 / rotations;
                    }
                    bk_slice_stats s;
                    bk_slice_info(f, 0, &s, sizeof s);
                    bk_free(f);
                    const double fl = floor_ns((size_t)s.bytes, gens[g] + 1, rotations);
                    const double ratio = rot / (plain + fl);
                    worst = ratio > worst ? ratio : worst;
                    printf("%-8s %3u %-8s %8u %10llu %10.0f ns %7.0f ns %7.0f ns %6.2fx\n",
                           windows[w], gens[g], layouts[l], capacities[c],
                           (unsigned long long)s.bytes, rot, plain, fl, ratio);
                }
    printf("worst rotating add / (plain add + allocation): %.2fx\n", worst);
    return 0;
}
