/*
 * test_window.c - variant=window: a key is present for its whole window and
 * forgotten a span after it, under a clock the test moves (forward, backward,
 * past the whole window); the rate bound holds however many keys arrive; the
 * memory stays within 1.5x a standard filter's; files and mappings keep it.
 * Concurrent adds racing the clock are in test_threads.c (run under TSan).
 */
#include <math.h>
#include <stdatomic.h>

#include "io/format.h"
#include "suites.h"
#include "testutil.h"

static _Atomic int64_t now_ms;

static int64_t test_clock(void *ctx)
{
    (void)ctx;
    return atomic_load(&now_ms);
}

#define T0 INT64_C(1800000000000) /* a span boundary for spans of 1, 10 and 100 s */

static void setup(void)
{
    atomic_store(&now_ms, T0);
    bk_set_clock(test_clock, NULL);
}

static void teardown(void)
{
    bk_set_clock(NULL, NULL);
}

static void at(int64_t t)
{
    atomic_store(&now_ms, t);
}

/* P(X >= x) for X ~ Poisson(lambda). */
static double poisson_tail(uint64_t x, double lambda)
{
    double sum = 0.0;
    for (uint64_t j = 0; j < x; j++)
        sum += exp((double)j * log(lambda) - lambda - lgamma((double)j + 1.0));
    return sum < 1.0 ? 1.0 - sum : 0.0;
}

START_TEST(a_key_is_present_for_its_window_then_forgotten)
{
    /* window 80 s in 8 spans of 10 s; keys added at t = T0 + 0.5 s */
    bk_filter *f = tu_filter("variant=window window=80s generations=8 capacity=1000 fpr=0.001");
    at(T0 + 500);
    ck_assert_uint_ge(tu_add_keys(f, "k", 0, 500), 495); /* (a false positive hides a few) */
    for (int64_t d = 0; d <= 80000; d += 250) {          /* [t, t + window]: every key present */
        at(T0 + 500 + d);
        ck_assert_msg(tu_count_present(f, "k", 0, 500) == 500, "a key lost at t + %lld ms",
                      (long long)d);
    }
    at(T0 + 500 + 80000 + 10000); /* t + window + window / G: forgotten */
    const uint64_t left = tu_count_present(f, "k", 0, 500);
    ck_assert_msg(poisson_tail(left, 500 * 0.001) > 1e-6, "%llu of 500 keys still present",
                  (unsigned long long)left);
    /* ... and new again */
    const uint64_t again = tu_add_keys(f, "k", 0, 500); /* new again, but for false positives */
    ck_assert_uint_le(again, 500 - left);
    ck_assert_uint_ge(again + 5, 500 - left);
    bk_free(f);
}
END_TEST

/* bk_expire frees the generations a filter no longer consults, with no add:
 * nothing before they expire, the oldest once it has (its keys were already
 * forgotten: every answer stays), all but one emptied generation once all
 * have; never anything for variants without time. */
START_TEST(expire_frees_what_the_clock_aged_out)
{
    bk_filter *f = tu_filter("variant=window window=80s generations=8 capacity=1000 fpr=0.001");
    at(T0 + 500);
    tu_add_keys(f, "old", 0, 4000); /* past capacity: the generation's chain grows */
    at(T0 + 30500);
    const uint64_t added = tu_add_keys(f, "new", 0, 500); /* 500 but for false positives */
    bk_filter_stats a, b, c;
    ck_assert_int_eq(bk_stats(f, &a), BK_OK);
    ck_assert_int_eq(bk_expire(f), 0); /* nothing expired yet */
    at(T0 + 500 + 80000 + 10000);      /* the first generation forgotten */
    const uint64_t old_left = tu_count_present(f, "old", 0, 4000),
                   new_left = tu_count_present(f, "new", 0, 500);
    ck_assert_uint_ge(new_left, added); /* every key reported new is in its window */
    ck_assert_int_eq(bk_expire(f), 1);
    ck_assert_int_eq(bk_expire(f), 0); /* once */
    ck_assert_int_eq(bk_stats(f, &b), BK_OK);
    ck_assert_uint_lt(b.bytes * 2, a.bytes); /* the grown chain went */
    ck_assert_uint_eq(b.keys, added);        /* the old generation's keys went with it */
    ck_assert_uint_eq(tu_count_present(f, "old", 0, 4000), old_left); /* the same answers */
    ck_assert_uint_eq(tu_count_present(f, "new", 0, 500), new_left);
    at(T0 + 10 * 80000); /* everything forgotten: one empty generation stays */
    ck_assert_int_eq(bk_expire(f), 1);
    ck_assert_int_eq(bk_stats(f, &c), BK_OK);
    ck_assert_uint_eq(c.keys, 0);
    ck_assert_uint_eq(c.slices, 1);
    bk_filter *emptied;
    ck_assert_int_eq(bk_copy(f, &emptied), BK_OK);
    at(T0 + 20 * 80000); /* that generation, empty, expired again: nothing to free */
    ck_assert_int_eq(bk_expire(f), 0);
    ck_assert_msg(tu_same_filter(emptied, f), "a sweep that freed nothing changed the filter");
    bk_free(emptied);
    ck_assert_uint_eq(tu_add_keys(f, "new", 0, 500) >= 495, 1); /* and it takes keys again */
    bk_free(f);
    bk_filter *std = tu_filter("variant=standard capacity=1000");
    ck_assert_int_eq(bk_expire(std), 0);
    bk_free(std);
    ck_assert_int_eq(bk_expire(NULL), BK_EINVAL);
}
END_TEST

/* An add of a key in a live generation is not new and does not renew it;
 * with refresh=1 it renews it (still not new). */
START_TEST(a_sighting_renews_only_with_refresh)
{
    for (int refresh = 0; refresh < 2; refresh++) {
        at(T0);
        bk_filter *f =
            tu_filterf("variant=window window=8s generations=8 capacity=100 refresh=%d", refresh);
        ck_assert_int_eq(bk_add(f, "page", 4), 1);
        at(T0 + 5000);
        ck_assert_int_eq(bk_add(f, "page", 4), 0); /* seen, inside its window */
        at(T0 + 8000);
        ck_assert_int_eq(bk_contains(f, "page", 4), 1); /* t + window: still there */
        at(T0 + 9000);                                  /* t + window + span */
        ck_assert_int_eq(bk_contains(f, "page", 4), refresh);
        at(T0 + 5000 + 8000); /* the renewal's own window */
        ck_assert_int_eq(bk_contains(f, "page", 4), refresh);
        at(T0 + 5000 + 9000);
        ck_assert_int_eq(bk_contains(f, "page", 4), 0);
        ck_assert_int_eq(bk_add(f, "page", 4), 1); /* re-crawled */
        bk_free(f);
    }
}
END_TEST

/* A clock that steps back by up to a span freezes the filter's time:
 * nothing is dropped early, nothing revived; keys added meanwhile keep a
 * whole window. */
START_TEST(a_clock_stepping_back_drops_nothing)
{
    bk_filter *f = tu_filter("variant=window window=80s generations=8 capacity=1000 fpr=0.001");
    at(T0 + 70000);
    ck_assert_uint_ge(tu_add_keys(f, "late", 0, 100), 98); /* (a false positive may hide one) */
    at(T0 + 60500);                                        /* back by less than a span */
    ck_assert_uint_eq(tu_count_present(f, "late", 0, 100), 100);
    ck_assert_uint_ge(tu_add_keys(f, "back", 0, 100), 98); /* at the frozen time, T0 + 70 s */
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_int_eq(st.redated_from_ms, 0); /* not re-dated */
    at(T0 + 70000 + 80000);                  /* the clock catches up */
    ck_assert_uint_eq(tu_count_present(f, "late", 0, 100), 100);
    ck_assert_uint_eq(tu_count_present(f, "back", 0, 100), 100);
    at(T0 + 70000 + 90000);
    ck_assert_uint_le(tu_count_present(f, "late", 0, 100) + tu_count_present(f, "back", 0, 100), 3);
    bk_free(f);
}
END_TEST

START_TEST(a_jump_past_the_window_forgets_everything)
{
    bk_filter *f = tu_filter("variant=window window=8s generations=8 capacity=1000 fpr=0.001");
    ck_assert_uint_ge(tu_add_keys(f, "k", 0, 1000), 990);
    at(T0 + 10 * 8000);
    ck_assert_uint_le(tu_count_present(f, "k", 0, 1000), 8);
    const uint64_t again = tu_add_keys(f, "k", 0, 1000);
    ck_assert_uint_ge(again, 992);
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_uint_eq(st.keys, again); /* the old generations are gone */
    bk_free(f);
}
END_TEST

/* A model of the filter's promise (key -> time of its counted add) against
 * random adds, lookups and clock moves: forward, backward (by less than a
 * span: frozen; by more: re-dated), past the window.
 * No false negative inside the window, ever; forgotten keys answer present
 * at no more than the rate allows. */
START_TEST(random_sequences_keep_the_promise)
{
    enum { KEYS = 3000, STEPS = 60000 };
    const int64_t window = 80000, span = 10000;
    const double fpr = 0.01;
    for (int refresh = 0; refresh < 2; refresh++) {
        uint64_t seed = tu_seed("window sequences") + (uint64_t)refresh;
        bk_filter *f = tu_filterf(
            "variant=window window=80s generations=8 capacity=2000 fpr=0.01 refresh=%d", refresh);
        static int64_t added[KEYS]; /* the filter's time of the counted add, or INT64_MIN */
        static int64_t asked[KEYS]; /* the add time a forgotten key was counted after */
        for (int i = 0; i < KEYS; i++)
            added[i] = INT64_MIN;
        /* One answer per key per add it was forgotten after counts: asking the
         * same forgotten key again finds the same bits, not a new trial. */
        for (int i = 0; i < KEYS; i++)
            asked[i] = INT64_MAX;
        int64_t clock = T0, seen = T0; /* the filter acts on the latest time it has seen */
        int64_t newest = T0 / span;    /* its newest generation: the span of the last add */
        at(clock);
        uint64_t forgotten_checks = 0, forgotten_present = 0;
        char key[32];
        for (int step = 0; step < STEPS; step++) {
            const uint64_t r = tu_next(&seed);
            if (r % 100 < 3) { /* the clock moves */
                const uint64_t how = (r >> 8) % 100;
                clock += how < 80   ? (int64_t)((r >> 16) % 3000)            /* forward */
                         : how < 95 ? -(int64_t)((r >> 16) % 200000)         /* back */
                                    : (int64_t)(window + (r >> 16) % 50000); /* past all */
                at(clock);
                continue;
            }
            const int k = (int)((r >> 8) % KEYS);
            const size_t len = tu_key(key, sizeof key, "m", (uint64_t)k);
            /* a call reads the clock: the filter never sees a time the clock
             * passed through between two calls */
            seen = clock > seen ? clock : seen;
            if (r % 100 < 50 && newest > clock / span + 1) {
                /* the clock more than a span behind the newest generation: this
                 * add re-dates every generation, and with them every add time */
                const int64_t by = newest - clock / span;
                for (int i = 0; i < KEYS; i++) { /* (INT64_MIN, INT64_MAX: no time) */
                    added[i] -= added[i] == INT64_MIN ? 0 : by * span;
                    asked[i] -= asked[i] == INT64_MIN || asked[i] == INT64_MAX ? 0 : by * span;
                }
                newest -= by;
                seen = clock;
            }
            const int64_t age = added[k] == INT64_MIN ? INT64_MAX : seen - added[k];
            const int live = age <= window, forgotten = age >= window + span;
            if (r % 100 < 50) {
                newest = seen / span > newest ? seen / span : newest;
                const int rc = bk_add(f, key, len);
                ck_assert_int_ge(rc, 0);
                ck_assert_msg(!(live && rc == 1), "step %d: key %d new again after %lld ms", step,
                              k, (long long)age);
                if (rc == 1 || (refresh && live))
                    added[k] = seen;
                if (forgotten && asked[k] != added[k]) {
                    asked[k] = added[k];
                    forgotten_checks++;
                    forgotten_present += rc == 0;
                }
                if (forgotten && rc == 0 && refresh)
                    added[k] = seen; /* a false positive renewed it */
            } else {
                const int rc = bk_contains(f, key, len);
                ck_assert_msg(!live || rc == 1, "step %d: key %d absent %lld ms after its add",
                              step, k, (long long)age);
                if (forgotten && asked[k] != added[k]) {
                    asked[k] = added[k];
                    forgotten_checks++;
                    forgotten_present += rc == 1;
                }
            }
        }
        fprintf(stderr,
                "[window sequences refresh=%d] %llu answers about forgotten keys, %llu present "
                "(rate %.4f, bound %.2f)\n",
                refresh, (unsigned long long)forgotten_checks,
                (unsigned long long)forgotten_present,
                (double)forgotten_present / (double)forgotten_checks, fpr);
        ck_assert_uint_gt(forgotten_checks, 3000);
        ck_assert_msg(poisson_tail(forgotten_present, (double)forgotten_checks * fpr) > 1e-6,
                      "forgotten keys answer present more than the rate allows");
        bk_free(f);
    }
}
END_TEST

/* However many keys arrive per span (here 20 times the capacity), every
 * generation grows as a scalable chain and a lookup's rate stays under fpr. */
START_TEST(the_rate_holds_whatever_the_arrival_rate)
{
    const double fpr = 0.001;
    bk_filter *f = tu_filter("variant=window window=80s generations=8 capacity=8000 fpr=0.001");
    uint64_t added = 0;
    for (int s = 0; s < 12; s++) { /* 12 spans of 10 s, 20000 keys each */
        at(T0 + s * 10000);
        added += tu_add_keys(f, "burst", (uint64_t)s * 20000, (uint64_t)(s + 1) * 20000);
    }
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    const uint64_t probes = 2000000;
    const uint64_t fp = tu_count_present(f, "absent", 0, probes);
    fprintf(stderr,
            "[window burst] %llu keys in 12 spans of 10 s (20x capacity): %llu slices, "
            "measured rate %.2e (%llu of %llu), bound %.0e, estimate %.2e\n",
            (unsigned long long)added, (unsigned long long)st.slices, (double)fp / probes,
            (unsigned long long)fp, (unsigned long long)probes, fpr, st.est_fpr);
    ck_assert_uint_gt(st.slices, 9); /* the generations grew */
    ck_assert_msg(poisson_tail(fp, probes * fpr) > 1e-6, "rate %.2e above %.0e",
                  (double)fp / probes, fpr);
    bk_free(f);
}
END_TEST

/* At the default G = 8 and p = 1e-4, keys arriving at the stated capacity:
 * the memory of every live generation, per key of the window, against a
 * standard filter for that many keys at that rate. The default (classic)
 * layout is held to 1.5x; the blocked one's figure is reported (its slices
 * are sized by the blocked model, whose cost grows faster as the rate
 * tightens). */
START_TEST(memory_is_within_one_and_a_half_standard_filters)
{
    for (int blocked = 0; blocked < 2; blocked++) {
        const char *layout = blocked ? "blocked" : "classic";
        at(T0); /* each filter starts its own time */
        bk_filter *f =
            tu_filterf("variant=window window=800s capacity=80000 fpr=0.0001 layout=%s", layout);
        bk_filter *s = tu_filterf("variant=standard capacity=80000 fpr=0.0001 layout=%s", layout);
        bk_filter_stats sw, ss;
        ck_assert_int_eq(bk_stats(s, &ss), BK_OK);
        double worst = 0.0;
        for (int span = 0; span < 20; span++) {
            at(T0 + span * 100000);
            tu_add_keys(f, "steady", (uint64_t)span * 10000, (uint64_t)(span + 1) * 10000);
            ck_assert_int_eq(bk_stats(f, &sw), BK_OK);
            const double ratio = (double)sw.bytes / (double)ss.bytes;
            if (span >= 8 && ratio > worst)
                worst = ratio;
        }
        fprintf(stderr,
                "[window memory %s] G=8, p=1e-4, 80000 keys per window: %.2f bits per key, "
                "%.3fx a standard filter's %.2f\n",
                layout, worst * 8.0 * (double)ss.bytes / 80000.0, worst,
                8.0 * (double)ss.bytes / 80000.0);
        if (!blocked)
            ck_assert_double_le(worst, 1.5);
        tu_free_all(f, s);
    }
}
END_TEST

/* Save, load and map give the same answers; what expired while the file was
 * stored is gone when it is opened. */
START_TEST(files_and_mappings_keep_the_generations)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "w.bkf");
    bk_filter *f = tu_filter("variant=window window=80s generations=8 capacity=1000 fpr=0.001");
    uint64_t late = 0; /* keys of spans 2 .. 5 whose add said new (the others were a false
                        * positive of an older generation, and go with it) */
    for (int s = 0; s < 6; s++) {
        at(T0 + s * 10000);
        const uint64_t n = tu_add_keys(f, "w", (uint64_t)s * 200, (uint64_t)(s + 1) * 200);
        late += s >= 2 ? n : 0;
    }
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    for (int mapped = 0; mapped < 2; mapped++) {
        bk_filter *g = NULL;
        ck_assert_int_eq(mapped ? bk_open_mmap(path, BK_MAP_READONLY, &g) : bk_load(path, &g),
                         BK_OK);
        ck_assert(tu_same_filter(f, g));
        ck_assert_uint_eq(tu_count_present(g, "w", 0, 1200), 1200);
        ck_assert_uint_eq(tu_count_present(g, "absent", 0, 20000),
                          tu_count_present(f, "absent", 0, 20000));
        bk_free(g);
    }
    /* at T0 + 100 s (span 10) the keys of spans 0 and 1 have expired: a
     * load drops their generations, a mapping leaves them unconsulted */
    at(T0 + 100000);
    for (int mapped = 0; mapped < 2; mapped++) {
        bk_filter *g = NULL;
        ck_assert_int_eq(mapped ? bk_open_mmap(path, BK_MAP_READONLY, &g) : bk_load(path, &g),
                         BK_OK);
        ck_assert_uint_le(tu_count_present(g, "w", 0, 400), 3);
        ck_assert_uint_ge(tu_count_present(g, "w", 400, 1200), late);
        bk_filter_stats st;
        ck_assert_int_eq(bk_stats(g, &st), BK_OK);
        if (!mapped)
            ck_assert_uint_eq(st.keys, late);
        bk_free(g);
    }
    /* a writable mapping that moves on to a new generation saves anew */
    bk_filter *g = NULL;
    ck_assert_int_eq(bk_open_mmap(path, BK_MAP_WRITE, &g), BK_OK);
    ck_assert_int_eq(bk_add(g, "fresh", 5), 1);
    ck_assert_int_eq(bk_sync(g), BK_OK);
    bk_free(g);
    ck_assert_int_eq(bk_load(path, &g), BK_OK);
    ck_assert_int_eq(bk_contains(g, "fresh", 5), 1);
    ck_assert_uint_ge(tu_count_present(g, "w", 400, 1200), late);
    tu_free_all(f, g);
    free(path);
    tu_rmtree(dir);
}
END_TEST

/* max_bytes covers every generation: a burst that would pass it fails with
 * BK_EFULL; once old generations expire their memory is free again. */
START_TEST(max_bytes_covers_every_generation)
{
    bk_filter *f =
        tu_filter("variant=window window=80s generations=8 capacity=8000 fpr=0.01 max_bytes=64k");
    char key[32];
    uint64_t n = 0;
    int rc = 0;
    for (int s = 0; s < 8 && rc >= 0; s++) {
        at(T0 + s * 10000);
        while ((rc = bk_add(f, key, tu_key(key, sizeof key, "b", n))) >= 0 && n % 5000 != 4999)
            n++;
        n += rc >= 0;
    }
    ck_assert_int_eq(rc, BK_EFULL);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "max_bytes=65536"));
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_uint_le(st.bytes, 65536);
    ck_assert_uint_eq(tu_count_present(f, "b", 0, n), n);
    at(T0 + 200000); /* everything expired: the generations go, and with them their bytes */
    ck_assert_int_eq(bk_add(f, "after", 5), 1);
    bk_free(f);
}
END_TEST

/* A file written on a machine whose clock ran ahead: its generations are not
 * in this machine's future; the filter's time starts at its newest one. */
START_TEST(a_file_from_a_clock_ahead_answers_at_once)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "ahead.bkf");
    at(T0 + 3600000); /* an hour ahead */
    bk_filter *f = tu_filter("variant=window window=80s generations=8 capacity=1000 fpr=0.001");
    const uint64_t n = tu_add_keys(f, "ahead", 0, 300);
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    at(T0);
    bk_filter *g = NULL;
    ck_assert_int_eq(bk_load(path, &g), BK_OK);
    ck_assert_uint_ge(tu_count_present(g, "ahead", 0, 300), n);
    ck_assert_uint_eq(tu_add_keys(g, "ahead", 0, 300), 0); /* seen, not new again */
    ck_assert_int_eq(bk_add(g, "later", 5), 1);
    ck_assert_int_eq(bk_add(g, "later", 5), 0);
    tu_free_all(f, g);
    free(path);
    tu_rmtree(dir);
}
END_TEST

/* However its generations grow, a window keeps within the slices a file
 * holds: growth past them is BK_EFULL, and the filter still saves. */
START_TEST(generations_keep_within_what_a_file_holds)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "many.bkf");
    bk_filter *f = tu_filter("variant=window window=64s generations=64 capacity=64 fpr=0.01");
    int rc = 0;
    char key[32];
    uint64_t n = 0;
    for (int s = 0; s < 65 && rc >= 0; s++) {
        at(T0 + s * 1000);
        for (int i = 0; i < 60 && rc >= 0; i++)
            rc = bk_add(f, key, tu_key(key, sizeof key, "m", n++));
    }
    ck_assert_int_eq(rc, BK_EFULL);
    ck_assert_msg(strstr(bk_last_error(), "256 slices") != NULL, "%s", bk_last_error());
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_uint_le(st.slices, 256);
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    tu_assert_file_holds(path, f, "a window at its most slices");
    bk_free(f);
    free(path);
    tu_rmtree(dir);
}
END_TEST

/* A window of three spans of 10 s, a generation each, holding keys 0 .. 299
 * of a family (100 a span). */
static bk_filter *three_generations(const char *family)
{
    bk_filter *f = tu_filter("variant=window window=30s generations=3 capacity=1000 fpr=0.01");
    for (int s = 0; s < 3; s++) {
        at(T0 + s * 10000);
        tu_add_keys(f, family, (uint64_t)s * 100, (uint64_t)s * 100 + 100);
    }
    return f;
}

static uint8_t *saved(const bk_filter *f, const char *path, size_t *len)
{
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    return tu_read_file(path, len);
}

/* The generation number of slice i of a window file image (versions 3 and
 * 4: the numbers follow the slice entries), and a way to set it. */
static uint8_t *gen_field(uint8_t *buf, uint32_t i)
{
    uint32_t n;
    memcpy(&n, buf + 20, 4); /* slices, little-endian (the tests run on x86 and arm64) */
    return buf + 128 + 64 * n + 8 * i;
}

static void set_gen(uint8_t *buf, uint32_t i, int64_t g)
{
    memcpy(gen_field(buf, i), &g, 8);
}

/* The file image buf[0..*len) with its config text changed by `text`
 * (applied over it) and every checksum resealed: freed, and a new image
 * returned. */
static uint8_t *with_config(uint8_t *buf, size_t *len, const char *text)
{
    bk_file_header h;
    ck_assert_int_eq(bk_file_decode_fixed(buf, *len, &h), BK_OK);
    ck_assert_int_eq(bk_file_decode(buf, *len, &h), BK_OK);
    uint64_t from[BK_FILE_MAX_SLICES];
    memcpy(from, h.offsets, sizeof from);
    ck_assert_int_eq(bk_config_parse_over(&h.cfg, text, NULL, 0), BK_OK);
    h.config_len = 0; /* formatted anew by the layout */
    ck_assert_int_eq(bk_file_layout(&h), BK_OK);
    uint8_t *out = calloc(1, (size_t)h.file_size);
    ck_assert_ptr_nonnull(out);
    bk_file_encode(&h, out);
    for (uint32_t i = 0; i < h.nslices; i++)
        memcpy(out + h.offsets[i], buf + from[i], (size_t)h.slices[i].nbytes);
    *len = (size_t)h.file_size;
    free(buf);
    ck_assert_int_eq(bk_file_reseal(out, *len), 1);
    return out;
}

/* Every way of opening a crafted image (resealed, so that its checksums
 * pass and the checks behind them decide) must refuse it with
 * BK_ECORRUPT and leave nothing behind; AddressSanitizer watches the
 * frees. */
static void assert_refused(const char *path, uint8_t *buf, size_t len, int sealed, const char *what)
{
    ck_assert_int_eq(bk_file_reseal(buf, len), sealed);
    tu_write_file(path, buf, len);
    bk_filter *g = (bk_filter *)buf;
    ck_assert_msg(bk_load(path, &g) == BK_ECORRUPT, "%s: load", what);
    ck_assert_ptr_null(g);
    ck_assert_msg(strstr(bk_last_error(), "generation") != NULL, "%s: %s", what, bk_last_error());
    g = (bk_filter *)buf;
    ck_assert_msg(bk_load_buffer(buf, len, &g) == BK_ECORRUPT, "%s: load buffer", what);
    ck_assert_ptr_null(g);
    for (unsigned flags = BK_MAP_READONLY; flags <= BK_MAP_WRITE; flags++) {
        g = (bk_filter *)buf;
        ck_assert_msg(bk_open_mmap(path, flags, &g) == BK_ECORRUPT, "%s: mmap %u", what, flags);
        ck_assert_ptr_null(g);
    }
}

/* A generation out of range or out of order, wherever it stands among the
 * generations: refused, whatever was adopted before it (a double free
 * once: the adopted chains freed their payloads and the loader freed them
 * again). */
START_TEST(a_crafted_generation_is_refused_wherever_it_stands)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "w.bkf");
    bk_filter *f = three_generations("g");
    size_t len;
    uint8_t *clean = saved(f, path, &len), *buf = malloc(len);
    uint32_t n;
    memcpy(&n, clean + 20, 4);
    ck_assert_uint_eq(n, 3);
    static const int64_t bad[] = {INT64_C(1) << 56, -(INT64_C(1) << 56), INT64_MAX, INT64_MIN};
    for (uint32_t i = 0; i < n; i++)
        for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
            memcpy(buf, clean, len);
            set_gen(buf, i, bad[b]);
            char what[64];
            snprintf(what, sizeof what, "generation %u = %lld", i, (long long)bad[b]);
            /* in order (the last one too high, the first too low): the
             * format passes it, and the variant must refuse it after
             * adopting the generations before it */
            const int in_order = (i == n - 1 && bad[b] > 0) || (i == 0 && bad[b] < 0);
            assert_refused(path, buf, len, in_order, what);
        }
    /* the middle generation equal to the first: two chains of one span */
    memcpy(buf, clean, len);
    int64_t first;
    memcpy(&first, gen_field(buf, 0), 8);
    set_gen(buf, 1, first);
    ck_assert_int_eq(bk_file_reseal(buf, len), 1);
    bk_filter *g = NULL;
    ck_assert_int_eq(bk_load_buffer(buf, len, &g), BK_OK); /* one generation of two slices */
    ck_assert_uint_ge(tu_count_present(g, "g", 0, 300), 290);
    bk_free(g);
    free(buf);
    free(clean);
    bk_free(f);
    free(path);
    tu_rmtree(dir);
}
END_TEST

/* Every generation expired while stored, and no room for a new one: the
 * newest is emptied and becomes the current span's (loading allocates
 * nothing once the generations are adopted), so the load succeeds and the
 * filter works within its ceiling. */
START_TEST(a_file_whose_generations_all_expired_loads_without_room_for_more)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "w.bkf");
    bk_filter *f = three_generations("x");
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    size_t len;
    uint8_t *buf = saved(f, path, &len);
    const uint64_t ceiling = st.bytes / 3 + 1; /* one generation's worth: not one more */
    char text[64];
    snprintf(text, sizeof text, "max_bytes=%llu", (unsigned long long)ceiling);
    buf = with_config(buf, &len, text);
    at(T0 + 3600000);
    for (int mode = 0; mode < 2; mode++) {
        bk_filter *g = NULL;
        ck_assert_int_eq(mode ? bk_load_buffer(buf, len, &g)
                              : (tu_write_file(path, buf, len), bk_load(path, &g)),
                         BK_OK);
        ck_assert_uint_le(tu_count_present(g, "x", 0, 300), 3);
        ck_assert_int_eq(bk_stats(g, &st), BK_OK);
        ck_assert_uint_eq(st.keys, 0);
        ck_assert_int_eq(bk_add(g, "after", 5), 1);
        ck_assert_int_eq(bk_contains(g, "after", 5), 1);
        bk_free(g);
    }
    free(buf);
    bk_free(f);
    free(path);
    tu_rmtree(dir);
}
END_TEST

/* A filter whose max_bytes leaves no room for a new generation (a file
 * whose config says so), loaded while its generations are live: when the
 * clock passes them all, the next add reuses the last one, emptied, instead
 * of dropping every generation and then failing to make one (which left a
 * table with none: a save of 0 bytes, and the next add read before the
 * table; found by fuzz_module_payload's command sequences). */
START_TEST(a_window_with_no_room_for_a_generation_never_empties)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "w.bkf");
    bk_filter *f = three_generations("y");
    size_t len;
    uint8_t *buf = saved(f, path, &len);
    buf = with_config(buf, &len, "max_bytes=8");
    bk_filter *g = NULL;
    ck_assert_int_eq(bk_load_buffer(buf, len, &g), BK_OK);
    ck_assert_uint_gt(tu_count_present(g, "y", 0, 300), 0);
    at(T0 + 3600000); /* every generation expired */
    const int first = bk_add(g, "after", 5);
    ck_assert_msg(first == 1, "add: %d %s", first, bk_last_error());
    ck_assert_int_eq(bk_add(g, "again", 5), 1);
    ck_assert_int_eq(bk_contains(g, "after", 5), 1);
    uint64_t size;
    ck_assert_int_eq(bk_save_size(g, &size), BK_OK);
    ck_assert_uint_gt(size, 128);
    uint8_t *img = malloc((size_t)size);
    size_t n;
    ck_assert_int_eq(bk_save_buffer(g, img, (size_t)size, &n), BK_OK);
    bk_filter *h = NULL;
    ck_assert_int_eq(bk_load_buffer(img, n, &h), BK_OK);
    ck_assert_int_eq(bk_contains(h, "after", 5), 1);
    free(img);
    bk_free(h);
    bk_free(g);
    free(buf);
    bk_free(f);
    free(path);
    tu_rmtree(dir);
}
END_TEST

/* The clock's two errors, each more than a span: a file written under a
 * clock ten years ahead, read by a right one; and a file written by a
 * right clock, read under one ten years behind that is then put right.
 * Either way the table is re-dated (bk_stats says from when to when), its
 * keys are kept a window from the re-dating and forgotten after, and the
 * filter never freezes. */
START_TEST(a_clock_error_past_a_span_redates_instead_of_freezing)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "w.bkf");
    const int64_t years = INT64_C(3650) * 86400000;
    const char *cfg = "variant=window window=80s generations=8 capacity=1000 fpr=0.001";
    for (int dir_ = 0; dir_ < 2; dir_++) {
        const int64_t written = dir_ == 0 ? T0 + years : T0, read = dir_ == 0 ? T0 : T0 - years;
        at(written);
        bk_filter *f = tu_filter(cfg);
        ck_assert_uint_ge(tu_add_keys(f, "skew", 0, 100), 98);
        ck_assert_int_eq(bk_save(f, path), BK_OK);
        bk_free(f);
        at(read);
        bk_filter *g = NULL;
        ck_assert_int_eq(bk_load(path, &g), BK_OK);
        bk_filter_stats st;
        ck_assert_int_eq(bk_stats(g, &st), BK_OK);
        ck_assert_int_eq(st.redated_from_ms, written);
        ck_assert_int_eq(st.redated_to_ms, read);
        ck_assert_uint_eq(tu_count_present(g, "skew", 0, 100), 100);
        ck_assert_uint_ge(tu_add_keys(g, "fresh", 0, 100), 98);
        at(read + 80000); /* a window later: all still there */
        ck_assert_uint_eq(tu_count_present(g, "skew", 0, 100), 100);
        ck_assert_uint_eq(tu_count_present(g, "fresh", 0, 100), 100);
        at(read + 90000); /* a window and a span: forgotten, not frozen */
        ck_assert_uint_le(
            tu_count_present(g, "skew", 0, 100) + tu_count_present(g, "fresh", 0, 100), 3);
        ck_assert_uint_ge(tu_add_keys(g, "skew", 0, 100), 97);
        if (dir_ == 1) { /* the clock put right: the re-dated keys are long gone */
            at(T0 + 1000);
            ck_assert_uint_le(tu_count_present(g, "skew", 0, 100), 3);
            ck_assert_uint_ge(tu_add_keys(g, "skew", 0, 100), 97);
        }
        bk_free(g);
    }
    free(path);
    tu_rmtree(dir);
}
END_TEST

/* In a running filter: a clock that steps back by less than a span
 * freezes the filter's time (nothing dropped, nothing revived), one that
 * steps back further re-dates it at the next add. */
START_TEST(a_clock_stepping_back_past_a_span_redates_a_running_filter)
{
    bk_filter *f = tu_filter("variant=window window=80s generations=8 capacity=1000 fpr=0.001");
    at(T0 + 70000);
    ck_assert_uint_ge(tu_add_keys(f, "late", 0, 100), 98);
    at(T0 - 1000000);                                            /* back by more than a window */
    ck_assert_uint_eq(tu_count_present(f, "late", 0, 100), 100); /* lookups: frozen */
    ck_assert_uint_ge(tu_add_keys(f, "back", 0, 100), 98);       /* re-dated to T0 - 1000 s */
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_int_eq(st.redated_from_ms, T0 + 70000);
    ck_assert_int_eq(st.redated_to_ms, T0 - 1000000);
    at(T0 - 1000000 + 80000);
    ck_assert_uint_eq(tu_count_present(f, "late", 0, 100), 100);
    ck_assert_uint_eq(tu_count_present(f, "back", 0, 100), 100);
    at(T0 - 1000000 + 90000);
    ck_assert_uint_le(tu_count_present(f, "late", 0, 100) + tu_count_present(f, "back", 0, 100), 3);
    bk_free(f);
}
END_TEST

/* Whatever the clock says (INT64_MAX, INT64_MIN, a time near either), a
 * window filter's adds make generations its own loader accepts: the image
 * loads again, at the same clock, to the same bytes, holding every key.
 * (A clock past 2^63 - 1 made a generation the loader refused: a Redis
 * server could then not load its own RDB.) */
static uint8_t *image_of(const bk_filter *f, size_t *len)
{
    uint64_t size;
    ck_assert_int_eq(bk_save_size(f, &size), BK_OK);
    uint8_t *buf = malloc((size_t)size);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(bk_save_buffer(f, buf, (size_t)size, len), BK_OK);
    return buf;
}

START_TEST(any_clock_saves_what_it_loads)
{
    const int64_t clocks[] = {INT64_MAX,
                              INT64_MAX - 1,
                              INT64_C(1) << 62,
                              INT64_C(1) << 61,
                              INT64_MIN,
                              INT64_MIN + 1,
                              -(INT64_C(1) << 62),
                              0,
                              -1,
                              T0};
    for (size_t c = 0; c < sizeof clocks / sizeof *clocks; c++) {
        at(clocks[c]);
        bk_filter *f = tu_filter("variant=window window=80s generations=8 capacity=1000");
        ck_assert_uint_ge(tu_add_keys(f, "edge", 0, 100), 98);
        at(T0); /* then a right clock: re-dated by the next add */
        ck_assert_uint_ge(tu_add_keys(f, "right", 0, 100), 98);
        at(clocks[c]); /* and back */
        ck_assert_uint_ge(tu_add_keys(f, "back", 0, 100), 98);
        size_t len, len2;
        uint8_t *img = image_of(f, &len);
        bk_filter *g = NULL;
        ck_assert_msg(bk_load_buffer(img, len, &g) == BK_OK, "clock %lld: %s", (long long)clocks[c],
                      bk_last_error());
        uint8_t *again = image_of(g, &len2);
        ck_assert_uint_eq(len, len2);
        ck_assert_int_eq(memcmp(img, again, len), 0);
        ck_assert_uint_eq(tu_count_present(g, "back", 0, 100), 100);
        free(img);
        free(again);
        bk_free(g);
        bk_free(f);
    }
}
END_TEST

START_TEST(config_keys_and_their_errors)
{
    bk_config c;
    char err[256], text[512];
    ck_assert_int_eq(bk_config_parse(&c, "variant=window window=30d", err, sizeof err), BK_OK);
    ck_assert_uint_eq(c.window_ms, UINT64_C(30) * 86400000);
    ck_assert_uint_eq(c.generations, 8);
    ck_assert_uint_eq(c.refresh, 0);
    ck_assert_double_eq(c.tightening, 0.3); /* the window's default */
    ck_assert_int_gt(bk_config_format(&c, 0, text, sizeof text), 0);
    ck_assert_ptr_nonnull(strstr(text, "window=30d"));
    bk_config back;
    ck_assert_int_eq(bk_config_parse(&back, text, err, sizeof err), BK_OK);
    ck_assert_ptr_null(bk_config_diff(&c, &back));
    /* other variants neither show nor take the window's keys */
    ck_assert_int_eq(bk_config_parse(&c, "variant=scalable", err, sizeof err), BK_OK);
    ck_assert_double_eq(c.tightening, 0.5);
    ck_assert_int_gt(bk_config_format(&c, 0, text, sizeof text), 0);
    ck_assert_ptr_null(strstr(text, "window"));
    static const struct {
        const char *text, *key;
    } bad[] = {
        {"variant=standard window=30d", "window"},
        {"generations=4", "generations"},
        {"variant=window window=30", "window"},
        {"variant=window window=0s", "window"},
        {"variant=window window=1.5d", "window"},
        {"variant=window window=3651d", "window"},
        {"variant=window window=30x", "window"},
        {"variant=window generations=1", "generations"},
        {"variant=window generations=65", "generations"},
        {"variant=window refresh=2", "refresh"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_msg(bk_config_parse(&c, bad[i].text, err, sizeof err) == BK_ECONFIG, "%s",
                      bad[i].text);
        ck_assert_msg(strstr(err, bad[i].key) != NULL, "'%s': '%s'", bad[i].text, err);
    }
}
END_TEST

Suite *window_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("window", "time", &tc);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_key_is_present_for_its_window_then_forgotten);
    tcase_add_test(tc, expire_frees_what_the_clock_aged_out);
    tcase_add_test(tc, a_sighting_renews_only_with_refresh);
    tcase_add_test(tc, a_clock_stepping_back_drops_nothing);
    tcase_add_test(tc, a_jump_past_the_window_forgets_everything);
    tcase_add_test(tc, random_sequences_keep_the_promise);
    tcase_add_test(tc, the_rate_holds_whatever_the_arrival_rate);
    tcase_add_test(tc, memory_is_within_one_and_a_half_standard_filters);
    tcase_add_test(tc, files_and_mappings_keep_the_generations);
    tcase_add_test(tc, max_bytes_covers_every_generation);
    tcase_add_test(tc, a_file_from_a_clock_ahead_answers_at_once);
    tcase_add_test(tc, generations_keep_within_what_a_file_holds);
    tcase_add_test(tc, config_keys_and_their_errors);
    tcase_add_test(tc, a_crafted_generation_is_refused_wherever_it_stands);
    tcase_add_test(tc, a_file_whose_generations_all_expired_loads_without_room_for_more);
    tcase_add_test(tc, a_clock_error_past_a_span_redates_instead_of_freezing);
    tcase_add_test(tc, a_clock_stepping_back_past_a_span_redates_a_running_filter);
    tcase_add_test(tc, any_clock_saves_what_it_loads);
    tcase_add_test(tc, a_window_with_no_room_for_a_generation_never_empties);
    return s;
}
