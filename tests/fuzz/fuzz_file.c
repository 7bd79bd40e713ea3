/* fuzz_file.c - libFuzzer target: bk_load and bk_load_buffer (FUZZ_MMAP
 * undefined) or bk_open_mmap (FUZZ_MMAP defined) on arbitrary bytes. Every
 * input is either refused with an error or gives a filter that answers
 * lookups and reports stats (an expandable table, checked lazily, may
 * refuse them instead: BK_ECORRUPT) without reading out of bounds (AddressSanitizer
 * watches: the buffer is the fuzzer's own, exactly size bytes); a file and
 * the same bytes in memory get the same verdict. Each input is tried twice:
 * as it is, and resealed (bk_file_reseal: its checksums and counts made to
 * pass), so that a mutation reaches every range check, and every variant's
 * adopt path, behind the checksums instead of stopping at them. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bloomkit.h"
#include "bloomkit_tools.h"
#include "io/format.h"

static char path[64];

/* A fixed time inside the seeds' windows (window.bkf: 8 days of generations
 * from 1790000000000 ms), so window filters come back with live generations;
 * mutated generation numbers fall anywhere around it. */
static int64_t fixed_clock(void *ctx)
{
    (void)ctx;
    return INT64_C(1790000000000) + 2 * INT64_C(86400000);
}

/* A call's result: an answer, or for an expandable table (checked lazily,
 * a block before a lookup first reads it, whole for bk_stats) BK_ECORRUPT. */
static void ok_or_lazily_refused(const bk_filter *f, int rc)
{
    bk_config cfg;
    if (rc < 0 && !(rc == BK_ECORRUPT && bk_get_config(f, &cfg) == BK_OK &&
                    cfg.variant == BK_VARIANT_EXPANDABLE))
        abort();
}

static void use(bk_filter *f)
{
    static const char *const keys[] = {"", "a", "https://example.org/", "zzzzzzzzzzzzzzzzz"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ok_or_lazily_refused(f, bk_contains(f, keys[i], strlen(keys[i])));
    bk_filter_stats st;
    ok_or_lazily_refused(f, bk_stats(f, &st));
    (void)bk_add(f, "new key", 7); /* may fail (a read-only mapping), never crash */
}

static void try_image(const uint8_t *data, size_t size)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return;
    if (size && fwrite(data, 1, size, fp) != size) {
        fclose(fp);
        return;
    }
    fclose(fp);
    bk_filter *f = NULL;
#ifdef FUZZ_MMAP
    for (unsigned flags = 0; flags <= BK_MAP_NOVERIFY; flags += BK_MAP_NOVERIFY) {
        if (bk_open_mmap(path, flags, &f) == BK_OK) {
            use(f);
            bk_free(f);
        } else if (f) {
            abort(); /* *out must be NULL on error */
        }
    }
#else
    const int from_file = bk_load(path, &f);
    if (from_file == BK_OK) {
        use(f);
        bk_free(f);
    } else if (f) {
        abort();
    }
    f = NULL;
    const int from_memory = bk_load_buffer(data, size, &f);
    if ((from_memory == BK_OK) != (from_file == BK_OK))
        abort(); /* one format, one verdict */
    if (from_memory == BK_OK) {
        use(f);
        bk_free(f);
    } else if (f) {
        abort();
    }
#endif
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/bk-fuzz-%ld.bkf", (long)getpid());
        bk_set_clock(fixed_clock, NULL);
    }
    try_image(data, size);
    uint8_t *sealed = malloc(size ? size : 1);
    if (!sealed)
        return 0;
    memcpy(sealed, data, size);
    bk_file_reseal(sealed, size);
    if (memcmp(sealed, data, size) != 0)
        try_image(sealed, size);
    free(sealed);
    return 0;
}
