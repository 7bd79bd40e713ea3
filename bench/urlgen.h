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

/* Appends: the string s, and v as `width` digits (zero-padded) in base 10
 * or 16. */
static inline char *urlgen_str(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

static inline char *urlgen_num(char *p, uint64_t v, int width, unsigned base)
{
    char d[20];
    int n = 0;
    do {
        d[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    while (n < width)
        d[n++] = '0';
    while (n)
        *p++ = d[--n];
    return p;
}

/* URL number id into buf (at least 84 bytes; NUL-terminated): its length.
 * Formatted by hand, byte for byte what
 * "https://www.site%05u.%s/%s/%s/%012llx%.*s?p=%llu" gives: snprintf took
 * four fifths of a line's time, and the generator bounded the benchmarks
 * that pipe it. */
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
    if (n < 84)
        return snprintf(buf, n, "%s", "");
    char *p = urlgen_str(buf, "https://www.site");
    p = urlgen_num(p, dom, 5, 10);
    *p++ = '.';
    p = urlgen_str(p, tlds[t]);
    *p++ = '/';
    p = urlgen_str(p, words[w1]);
    *p++ = '/';
    p = urlgen_str(p, words[w2]);
    *p++ = '/';
    p = urlgen_num(p, c & 0xffffffffffffULL, 12, 16);
    for (int i = 0; i < pad; i++)
        *p++ = "abcdefghijklmnopqrst"[i];
    p = urlgen_str(p, "?p=");
    p = urlgen_num(p, id % 100000, 1, 10);
    *p = '\0';
    return (int)(p - buf);
}

#endif
