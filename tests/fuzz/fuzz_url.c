/* fuzz_url.c - libFuzzer target: bk_url_canonical. Any input is either
 * canonicalised (1) or copied unchanged (0), never refused; the output fits
 * BK_URL_CANONICAL_MAX; and the canonical form is a fixed point: fed back,
 * it comes out the same, with and without BK_URL_KEEP_QUERY_ORDER. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit.h"

static void check(const uint8_t *data, size_t size, unsigned flags)
{
    const size_t cap = BK_URL_CANONICAL_MAX(size);
    char *out = malloc(cap), *again = NULL;
    if (!out)
        abort();
    size_t n = 0, m = 0;
    const int rc = bk_url_canonical((const char *)data, size, flags, out, cap, &n);
    if (rc != 0 && rc != 1)
        abort(); /* malformed input is never an error */
    if (n > cap || (rc == 0 && (n != size || memcmp(out, data, size) != 0)))
        abort(); /* passed through, yet changed */
    if (rc == 1) {
        if (!(again = malloc(BK_URL_CANONICAL_MAX(n))))
            abort();
        if (bk_url_canonical(out, n, flags, again, BK_URL_CANONICAL_MAX(n), &m) != 1 || m != n ||
            memcmp(out, again, n) != 0)
            abort(); /* not a fixed point */
    }
    free(out);
    free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check(data, size, 0);
    check(data, size, BK_URL_KEEP_QUERY_ORDER);
    return 0;
}
