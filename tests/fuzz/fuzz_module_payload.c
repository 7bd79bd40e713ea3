/* fuzz_module_payload.c - libFuzzer target: the Redis module's payload loader
 * (module/payload.c), what RDB loading, RESTORE and BF.LOADCHUNK run on
 * bytes from outside. Input: 8 bytes of save time, then an image. Tried raw
 * and resealed (checksums recomputed, tests/fuzz/fuzz_file.c's reason): a
 * loaded filter is used, saved again, and must load again to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

static void try_image(const uint8_t *img, size_t len, int64_t t)
{
    bk_filter *f;
    char err[300];
    if (bkm_image_load(img, len, t, (uint64_t)64 << 20, &f, err, sizeof err) != BK_OK) {
        if (err[0] == '\0')
            abort(); /* refused without a reason */
        return;
    }
    if (bk_add(f, "k", 1) >= 0 && bk_contains(f, "k", 1) != 1)
        abort(); /* a key just added is absent (an add may fail: a full filter) */
    uint8_t *out;
    size_t n;
    if (bkm_image(f, &out, &n) == BK_OK) {
        bk_filter *g;
        if (bkm_image_load(out, n, t, UINT64_MAX, &g, err, sizeof err) != BK_OK)
            abort(); /* the module's own image refused */
        uint8_t *again;
        size_t m;
        if (bkm_image(g, &again, &m) == BK_OK) {
            if (m != n || memcmp(again, out, n) != 0)
                abort(); /* a round trip changed the filter */
            free(again);
        }
        bk_free(g);
        free(out);
    }
    bk_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8)
        return 0;
    int64_t t;
    memcpy(&t, data, 8);
    t &= ((int64_t)1 << 50) - 1; /* a time of the next 30,000 years */
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
