/*
 * gen_urls.c - synthetic crawler URLs for benchmarks: N lines of 60-80 bytes,
 * a fraction `distinct` of them new and the rest repeats of earlier ones
 * (uniformly chosen), like the discovered-link stream of a crawler.
 * Deterministic for a given seed. Usage: gen_urls N [distinct=0.6] [seed=1]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "urlgen.h"

int main(int argc, char **argv)
{
    const uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000;
    const double distinct = argc > 2 ? strtod(argv[2], NULL) : 0.6;
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
    static char out[1 << 20];
    setvbuf(stdout, out, _IOFBF, sizeof out);
    uint64_t fresh = 0;
    char buf[128];
    for (uint64_t i = 0; i < n; i++) {
        const double r = (double)(urlgen_next(&seed) >> 11) / 9007199254740992.0;
        const uint64_t id = (fresh == 0 || r < distinct) ? fresh++ : urlgen_next(&seed) % fresh;
        const int len = urlgen_url(id, buf, sizeof buf);
        buf[len] = '\n';
        fwrite(buf, 1, (size_t)len + 1, stdout);
    }
    fprintf(stderr, "gen_urls: %llu lines, %llu distinct\n", (unsigned long long)n,
            (unsigned long long)fresh);
    return 0;
}
