/*
 * bench_hash.c - bloomkit's SipHash against other portable C SipHash code, same
 * messages, same run: ns per key and cycles per byte at 16, 64 and 256 bytes.
 *
 * Peers: libsodium's crypto_shorthash_siphash24 / siphashx24 (64- and 128-bit
 * SipHash-2-4; Debian's libsodium-dev, skipped when absent), and a textbook
 * implementation below written from the paper the way portable C SipHash is
 * usually written (byte-assembled little-endian loads, a round macro, the
 * tail through a switch), for SipHash-1-3 as well, which libsodium lacks.
 *
 * Cycles are time-stamp-counter ticks (x86) per byte; elsewhere "n/a".
 *
 * usage: bench_hash [--smoke]
 */
#define _DEFAULT_SOURCE
#include <bloomkit.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_SODIUM
#include <sodium.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

#include "bench_keys.h"
#include "textbook_siphash.h"

/* ------------------------------------------------------------ the runner */

typedef void (*hash_fn)(const uint8_t *key, const uint8_t *msg, size_t len, uint8_t *out);

static void bk24(const uint8_t *k, const uint8_t *m, size_t n, uint8_t *o)
{
    bk_siphash24_128(k, m, n, o);
}
static void bk13(const uint8_t *k, const uint8_t *m, size_t n, uint8_t *o)
{
    bk_siphash13_128(k, m, n, o);
}
static void bk24_64(const uint8_t *k, const uint8_t *m, size_t n, uint8_t *o)
{
    bk_siphash24(k, m, n, o);
}
static void tb24(const uint8_t *k, const uint8_t *m, size_t n, uint8_t *o)
{
    uint64_t w[2];
    textbook128(2, 4, k, m, n, w);
    memcpy(o, w, 16);
}
static void tb13(const uint8_t *k, const uint8_t *m, size_t n, uint8_t *o)
{
    uint64_t w[2];
    textbook128(1, 3, k, m, n, w);
    memcpy(o, w, 16);
}
#ifdef HAVE_SODIUM
static void na24_128(const uint8_t *k, const uint8_t *m, size_t n, uint8_t *o)
{
    crypto_shorthash_siphashx24(o, m, n, k);
}
static void na24_64(const uint8_t *k, const uint8_t *m, size_t n, uint8_t *o)
{
    crypto_shorthash_siphash24(o, m, n, k);
}
#endif

typedef struct peer {
    const char *name;
    hash_fn fn;
} peer;

/* Best of `reps` timings of `count` hashes of len-byte messages taken at
 * varying offsets of buf (independent inputs: throughput, as a filter's
 * batch sees it). */
static void measure(hash_fn fn, const uint8_t *buf, size_t len, size_t count, int reps, double *ns,
                    double *cpb)
{
    const uint8_t key[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    uint8_t out[16], acc = 0;
    *ns = 1e300;
    *cpb = -1;
    for (int r = 0; r < reps; r++) {
#ifdef HAVE_TSC
        const uint64_t c0 = __rdtsc();
#endif
        const double t = now_ns();
        for (size_t i = 0; i < count; i++) {
            fn(key, buf + (i * 61) % 4096, len, out);
            acc ^= out[0];
        }
        const double dt = (now_ns() - t) / (double)count;
#ifdef HAVE_TSC
        const double cycles = (double)(__rdtsc() - c0) / (double)count;
#else
        const double cycles = -1;
#endif
        if (dt < *ns) {
            *ns = dt;
            *cpb = cycles < 0 ? -1 : cycles / (double)len;
        }
    }
    if (acc == 0x5a)
        fputc('\0', stderr); /* keeps the outputs alive */
}

/* long: the runs in the order the report prints them, each a few lines. */
int main(int argc, char **argv)
{
    const int smoke = argc > 1 && !strcmp(argv[1], "--smoke");
    const size_t count = smoke ? 20000 : 2000000;
    const int reps = smoke ? 1 : 5;
    uint8_t *buf = malloc(4096 + 256);
    for (size_t i = 0; i < 4096 + 256; i++)
        buf[i] = (uint8_t)(i * 131 + 7);
    const size_t lens[] = {16, 64, 256};
    struct {
        const char *alg;
        peer ours;
        peer peers[3];
    } rows[] = {
        {"SipHash-2-4 128-bit",
         {"bloomkit", bk24},
         {{"textbook C", tb24},
#ifdef HAVE_SODIUM
          {"libsodium", na24_128},
#else
          {"libsodium (not built)", NULL},
#endif
          {NULL, NULL}}},
        {"SipHash-2-4 64-bit",
         {"bloomkit", bk24_64},
         {
#ifdef HAVE_SODIUM
             {"libsodium", na24_64},
#else
             {"libsodium (not built)", NULL},
#endif
             {NULL, NULL}}},
        {"SipHash-1-3 128-bit", {"bloomkit", bk13}, {{"textbook C", tb13}, {NULL, NULL}}},
    };
    printf("SipHash: best of %d runs of %zu hashes, same run; cycles are TSC ticks per byte\n",
           reps, count);
    printf("%-20s %-22s %6s %9s %9s %10s\n", "algorithm", "implementation", "bytes", "ns/key",
           "cyc/byte", "bloomkit is");
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++)
        for (size_t l = 0; l < 3; l++) {
            double ns_ours, cpb_ours;
            measure(rows[r].ours.fn, buf, lens[l], count, reps, &ns_ours, &cpb_ours);
            printf("%-20s %-22s %6zu %9.2f %9.3f %10s\n", rows[r].alg, rows[r].ours.name, lens[l],
                   ns_ours, cpb_ours, "");
            for (const peer *p = rows[r].peers; p->name; p++) {
                if (!p->fn) {
                    printf("%-20s %-22s %6zu %9s %9s %10s\n", "", p->name, lens[l], "n/a", "n/a",
                           "");
                    continue;
                }
                double ns, cpb;
                measure(p->fn, buf, lens[l], count, reps, &ns, &cpb);
                char faster[24];
                snprintf(faster, sizeof faster, "%.2fx", ns / ns_ours);
                printf("%-20s %-22s %6zu %9.2f %9.3f %10s\n", "", p->name, lens[l], ns, cpb,
                       faster);
            }
        }
    free(buf);
    return 0;
}
