/* urlgen.h - synthetic crawler URLs shared by the benchmarks: URL number id is
 * a pure function of id, 59-83 bytes. */
#ifndef BK_BENCH_URLGEN_H
#define BK_BENCH_URLGEN_H

#include <stdint.h>
#include <stdio.h>

/* splitmix64 */
static inline uint64_t urlgen_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline int urlgen_url(uint64_t id, char *buf, size_t n)
{
    static const char *const words[] = {"news",  "blog",   "wiki",   "shop",    "docs",  "forum",
                                        "media", "events", "people", "archive", "tags",  "search",
                                        "about", "posts",  "items",  "reviews", "store", "catalog"};
    static const char *const tlds[] = {"com", "org", "net", "de", "fr", "io", "co.uk", "info"};
    uint64_t s = id * 0x2545F4914F6CDD1DULL + 7;
    const uint64_t a = urlgen_next(&s), b = urlgen_next(&s), c = urlgen_next(&s);
    const int w1 = (int)(a % 18), w2 = (int)((a >> 8) % 18), t = (int)((a >> 16) % 8);
    const unsigned dom = (unsigned)((a >> 24) % 50000);
    const int pad = 8 + (int)(b % 12);
    return snprintf(buf, n, "https://www.site%05u.%s/%s/%s/%012llx%.*s?p=%llu", dom, tlds[t],
                    words[w1], words[w2], (unsigned long long)(c & 0xffffffffffffULL), pad,
                    "abcdefghijklmnopqrst", (unsigned long long)(id % 100000));
}

#endif
