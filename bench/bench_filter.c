/*
 * bench_filter.c - bloomkit against Debian's libbloom, same keys, same n and p,
 * same run: ns per add, per present lookup and per absent lookup, and the
 * ratios. Keys are synthetic crawler URLs (urlgen.h), 59-83 bytes.
 *
 * usage: bench_filter [N=10000000] [P=0.0001]
 */
#define _DEFAULT_SOURCE
#include <bloom.h>
#include <bloomkit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "urlgen.h"

typedef struct keyset {
    char *bytes;
    size_t *off; /* key i is bytes[off[i] .. off[i+1]) */
    size_t n;
} keyset;

static keyset make_keys(uint64_t first, size_t n)
{
    keyset k = {malloc(n * 84), malloc((n + 1) * sizeof(size_t)), n};
    if (!k.bytes || !k.off) {
        fprintf(stderr, "bench_filter: out of memory\n");
        exit(1);
    }
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        k.off[i] = pos;
        pos += (size_t)urlgen_url(first + i, k.bytes + pos, 84);
    }
    k.off[n] = pos;
    return k;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define KEY(ks, i) ((ks).bytes + (ks).off[i]), ((ks).off[(i) + 1] - (ks).off[i])

int main(int argc, char **argv)
{
    const size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    const double p = argc > 2 ? strtod(argv[2], NULL) : 0.0001;
    const keyset in = make_keys(0, n), out = make_keys(UINT64_C(1) << 40, n);
    double t, lb[3], bk[3];
    size_t hits;

    struct bloom b;
    if (bloom_init(&b, (int)n, p) != 0)
        return 1;
    t = now_ns();
    for (size_t i = 0; i < n; i++)
        bloom_add(&b, KEY(in, i));
    lb[0] = (now_ns() - t) / (double)n;
    t = now_ns();
    hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += (size_t)bloom_check(&b, KEY(in, i));
    lb[1] = (now_ns() - t) / (double)n;
    if (hits != n)
        fprintf(stderr, "libbloom: %zu of %zu present\n", hits, n);
    t = now_ns();
    hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += (size_t)bloom_check(&b, KEY(out, i));
    lb[2] = (now_ns() - t) / (double)n;
    const double lb_fpr = (double)hits / (double)n;
    const double lb_bytes = (double)b.bytes;
    bloom_free(&b);

    char cfg[128];
    snprintf(cfg, sizeof cfg, "variant=standard capacity=%zu fpr=%g", n, p);
    bk_config c;
    bk_filter *f;
    if (bk_config_parse(&c, cfg, NULL, 0) != BK_OK || bk_new(&c, &f) != BK_OK)
        return 1;
    t = now_ns();
    for (size_t i = 0; i < n; i++)
        bk_add(f, KEY(in, i));
    bk[0] = (now_ns() - t) / (double)n;
    t = now_ns();
    hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += (size_t)(bk_contains(f, KEY(in, i)) == 1);
    bk[1] = (now_ns() - t) / (double)n;
    if (hits != n)
        fprintf(stderr, "bloomkit: %zu of %zu present\n", hits, n);
    t = now_ns();
    hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += (size_t)(bk_contains(f, KEY(out, i)) == 1);
    bk[2] = (now_ns() - t) / (double)n;
    bk_filter_stats st;
    bk_stats(f, &st);
    bk_free(f);

    /* The same three operations through the batch calls, on a fresh filter. */
    enum { BATCH = 256 };
    const void *kp[BATCH];
    size_t kl[BATCH];
    int res[BATCH];
    double bt[3];
    if (bk_new(&c, &f) != BK_OK)
        return 1;
    for (int op = 0; op < 3; op++) {
        const keyset *ks = op == 2 ? &out : &in;
        t = now_ns();
        for (size_t i = 0; i < n; i += BATCH) {
            const size_t g = n - i < BATCH ? n - i : BATCH;
            for (size_t j = 0; j < g; j++) {
                kp[j] = ks->bytes + ks->off[i + j];
                kl[j] = ks->off[i + j + 1] - ks->off[i + j];
            }
            if (op == 0)
                bk_add_batch(f, kp, kl, g, res);
            else
                bk_contains_batch(f, kp, kl, g, res);
        }
        bt[op] = (now_ns() - t) / (double)n;
    }
    bk_free(f);

    printf("n = %zu keys (59-83 byte URLs), p = %g, one key at a time, same run\n", n, p);
    printf("%-22s %10s %10s %8s\n", "ns per operation", "libbloom", "bloomkit", "ratio");
    const char *what[] = {"add", "lookup (present)", "lookup (absent)"};
    for (int i = 0; i < 3; i++)
        printf("%-22s %10.1f %10.1f %7.2fx\n", what[i], lb[i], bk[i], lb[i] / bk[i]);
    for (int i = 0; i < 3; i++)
        printf("%-22s %10.1f %10.1f %7.2fx   (batches of %d; %.2fx own single calls)\n", what[i],
               lb[i], bt[i], lb[i] / bt[i], BATCH, bk[i] / bt[i]);
    printf("%-22s %10.0f %10llu\n", "bytes", lb_bytes, (unsigned long long)st.bytes);
    printf("%-22s %10.2e %10.2e\n", "measured fpr", lb_fpr, (double)hits / (double)n);
    return 0;
}
