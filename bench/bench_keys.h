/* bench_keys.h - key sets for the benchmarks: synthetic crawler URLs (urlgen.h)
 * packed end to end, with their offsets, generated once and reused by every
 * peer so all of them see the same bytes. */
#ifndef BK_BENCH_KEYS_H
#define BK_BENCH_KEYS_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "urlgen.h"

typedef struct keyset {
    char *bytes;
    size_t *off; /* key i is bytes[off[i] .. off[i+1]) */
    size_t n;
} keyset;

#define KEY_MAX 84

/* Room for n keys of at most KEY_MAX bytes (exits when there is none). */
static inline keyset keys_alloc(size_t n)
{
    keyset k = {malloc(n * KEY_MAX + 1), malloc((n + 1) * sizeof(size_t)), n};
    if (!k.bytes || !k.off) {
        fprintf(stderr, "bench: out of memory for %zu keys\n", n);
        exit(1);
    }
    return k;
}

/* URLs first .. first+n-1 (ids from 2^40 on never meet ids below). */
static inline keyset keys_make(uint64_t first, size_t n)
{
    keyset k = keys_alloc(n);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        k.off[i] = pos;
        pos += (size_t)urlgen_url(first + i, k.bytes + pos, KEY_MAX);
    }
    k.off[n] = pos;
    return k;
}

static inline void keys_free(keyset *k)
{
    free(k->bytes);
    free(k->off);
    k->bytes = NULL;
    k->off = NULL;
}

static inline const char *key_at(const keyset *k, size_t i)
{
    return k->bytes + k->off[i];
}

static inline size_t key_len(const keyset *k, size_t i)
{
    return k->off[i + 1] - k->off[i];
}

static inline double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#endif
