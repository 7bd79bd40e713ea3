/* fuzz_module_payload.c - libFuzzer target: the Redis module's payload loader
 * (module/payload.c, module/modclock.c), what RDB loading, RESTORE and
 * BF.LOADCHUNK run on bytes from outside. Input: 8 bytes of saved time (any
 * int64: one outside 1970..9999 must be refused with a reason), then an
 * image. Tried raw and resealed (checksums recomputed, tests/fuzz/
 * fuzz_file.c's reason). An accepted filter then meets a sequence of
 * commands drawn from the input (adds, removes, the clock moving on, a
 * master's time replayed earlier, a sweep), and after each one the module's
 * own property must hold (issue 44 point 2): the value's payload, at the
 * time module.c's rdb_save gives it (bkm_value_time: the clock's time at
 * its last change, or the saved time it was loaded at), loads again to the
 * same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "modclock.h"
#include "io/format.h"
#include "payload.h"

void *bkm_alloc(size_t n)
{
    return malloc(n ? n : 1);
}

void bkm_free(void *p)
{
    free(p);
}

static uint64_t rng;

static uint64_t next(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return rng >> 11;
}

/* Saved at t and loaded again at t, the filter is the same bytes. */
static void saves_as_itself(const bk_filter *f, int64_t t)
{
    uint8_t *out, *again;
    size_t n, m;
    if (bkm_image(f, &out, &n) != BK_OK)
        return; /* out of memory: the save fails, the value stays */
    bk_filter *g;
    char err[300];
    if (bkm_image_load(out, n, t, UINT64_MAX, &g, err, sizeof err) != BK_OK)
        abort(); /* the module's own payload refused: an RDB it cannot load */
    if (bkm_image(g, &again, &m) == BK_OK) {
        if (m != n || memcmp(again, out, n) != 0)
            abort(); /* a save and load changed the value */
        free(again);
    }
    bk_free(g);
    free(out);
}

static void try_image(const uint8_t *img, size_t len, int64_t t)
{
    bk_filter *f;
    char err[300];
    err[0] = '\0';
    bkm_clock_init(t > 0 && t <= BKM_TIME_MAX ? t : 1700000000000);
    if (bkm_image_load(img, len, t, (uint64_t)64 << 20, &f, err, sizeof err) != BK_OK) {
        if (err[0] == '\0')
            abort(); /* refused without a reason */
        return;
    }
    if (!bkm_time_ok(t))
        abort(); /* a saved time outside 1970..9999 accepted */
    bk_config cfg;
    bk_get_config(f, &cfg);
    const int forgets = cfg.variant == BK_VARIANT_WINDOW;
    int64_t at = t; /* the value's time (module.c's bkm_value_changed) */
    saves_as_itself(f, at);
    for (int step = 0; step < 12; step++) {
        const uint64_t r = next();
        char key[24];
        const size_t kn = (size_t)(1 + r % 20);
        memset(key, 'a' + (int)(r >> 8) % 26, kn);
        switch ((r >> 16) % 5) {
        case 0: /* BF.ADD / BK.ADD */
        case 1: {
            const int rc = bk_add(f, key, kn);
            at = bkm_clock_now(); /* the module replicates every add that may change */
            if (rc >= 0 && bk_contains(f, key, kn) != 1)
                abort(); /* a key just added is absent (an add may fail: full) */
            break;
        }
        case 2: /* BK.REMOVE (where the variant can) */
            if (bk_remove(f, key, kn) == BK_OK)
                at = bkm_clock_now();
            break;
        case 3: { /* the clock moves on: a millisecond to years */
            const int64_t by =
                (int64_t)(next() % 4 == 0 ? next() % ((uint64_t)1 << 40) : next() % 100000);
            const int64_t now = bkm_clock_now();
            bkm_clock_set(now > BKM_TIME_MAX - by ? BKM_TIME_MAX : now + by);
            break;
        }
        default: { /* BK.AT: a master's write replayed at its (earlier) time */
            const int64_t now = bkm_clock_now(), back = (int64_t)(next() % 10000000);
            bkm_clock_pin(now > back ? now - back : 0);
            (void)bk_add(f, key, kn);
            at = bkm_clock_now();
            bkm_clock_unpin();
            break;
        }
        }
        if (forgets && (r >> 30) % 2 == 0 && bk_expire(f) > 0)
            at = bkm_clock_now(); /* the sweep, when it freed something */
        saves_as_itself(f, at);
    }
    bk_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8)
        return 0;
    int64_t t;
    memcpy(&t, data, 8);
    rng = (uint64_t)t ^ size;
    /* most inputs at a time the module takes (the corpus' own, or near):
     * others exercise the refusal */
    if ((uint64_t)t % 8 != 0)
        t = (int64_t)((uint64_t)t % ((uint64_t)BKM_TIME_MAX + 1));
    try_image(data + 8, size - 8, t);
    uint8_t *copy = malloc(size - 8 + 1);
    if (!copy)
        return 0;
    memcpy(copy, data + 8, size - 8);
    if (bk_file_reseal(copy, size - 8))
        try_image(copy, size - 8, t);
    free(copy);
    return 0;
}
