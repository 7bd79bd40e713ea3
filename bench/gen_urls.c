/*
 * gen_urls.c - synthetic crawler URLs for benchmarks: N lines of 60-80 bytes,
 * a fraction `distinct` of them new and the rest repeats of earlier ones
 * (uniformly chosen), like the discovered-link stream of a crawler.
 * Deterministic for a given seed. Usage: gen_urls N [distinct=0.6] [seed=1]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static const char *const words[] = {"news",  "blog",   "wiki",   "shop",    "docs",  "forum",
                                    "media", "events", "people", "archive", "tags",  "search",
                                    "about", "posts",  "items",  "reviews", "store", "catalog"};
static const char *const tlds[] = {"com", "org", "net", "de", "fr", "io", "co.uk", "info"};

/* URL number id, 60-80 bytes, a pure function of id. */
static int url(uint64_t id, char *buf, size_t n)
{
    uint64_t s = id * 0x2545F4914F6CDD1DULL + 7;
    const uint64_t a = next(&s), b = next(&s), c = next(&s);
    const int w1 = (int)(a % 18), w2 = (int)((a >> 8) % 18), t = (int)((a >> 16) % 8);
    const unsigned dom = (unsigned)((a >> 24) % 50000);
    const int pad = 8 + (int)(b % 12);
    return snprintf(buf, n, "https://www.site%05u.%s/%s/%s/%012llx%.*s?p=%llu", dom, tlds[t],
                    words[w1], words[w2], (unsigned long long)(c & 0xffffffffffffULL), pad,
                    "abcdefghijklmnopqrst", (unsigned long long)(id % 100000));
}

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
        const double r = (double)(next(&seed) >> 11) / 9007199254740992.0;
        const uint64_t id = (fresh == 0 || r < distinct) ? fresh++ : next(&seed) % fresh;
        const int len = url(id, buf, sizeof buf);
        buf[len] = '\n';
        fwrite(buf, 1, (size_t)len + 1, stdout);
    }
    fprintf(stderr, "gen_urls: %llu lines, %llu distinct\n", (unsigned long long)n,
            (unsigned long long)fresh);
    return 0;
}
