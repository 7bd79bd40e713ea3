/*
 * exp_keys.c - an experiment's keys: generated (crawler-like URLs, inserted
 * ones and probes from disjoint families) or read from files, and probes
 * that are also keys found and left out, so that no inserted key is counted
 * as a false positive.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiment.h"

int exp_keys_generate(exp_keys *k, const char *family, uint64_t n)
{
    k->n = (size_t)n;
    k->bytes = malloc((size_t)n * 64 + 1);
    k->off = malloc(((size_t)n + 1) * sizeof *k->off);
    if (!k->bytes || !k->off)
        return -1;
    size_t pos = 0;
    for (uint64_t i = 0; i < n; i++) {
        k->off[i] = pos;
        /* crawler-like: host, path, query; the family keeps sets disjoint */
        pos += (size_t)snprintf(k->bytes + pos, 64, "https://s%llu.example.org/%s/%llu?p=%llu",
                                (unsigned long long)(i % 997), family, (unsigned long long)i,
                                (unsigned long long)(i * 2654435761u % 100000));
    }
    k->off[n] = pos;
    return 0;
}

int exp_keys_load(exp_keys *k, const char *path)
{
    FILE *f = exp_open_regular(path); /* a directory: EISDIR, not "no keys" */
    if (!f)
        return -1;
    size_t cap = 1 << 20, len = 0, ncap = 1024;
    k->bytes = malloc(cap);
    k->off = malloc(ncap * sizeof *k->off);
    k->n = 0;
    if (!k->bytes || !k->off) {
        fclose(f);
        return -1;
    }
    int c, at_start = 1;
    while ((c = getc(f)) != EOF) {
        if (len + 2 > cap) {
            char *nb = realloc(k->bytes, cap *= 2);
            if (!nb) {
                fclose(f);
                return -1;
            }
            k->bytes = nb;
        }
        if (at_start) {
            if (k->n + 2 > ncap) {
                size_t *no = realloc(k->off, (ncap *= 2) * sizeof *no);
                if (!no) {
                    fclose(f);
                    return -1;
                }
                k->off = no;
            }
            k->off[k->n++] = len;
            at_start = 0;
        }
        if (c == '\n') {
            if (len > k->off[k->n - 1] && k->bytes[len - 1] == '\r')
                len--; /* CRLF: the CR is not part of the key */
            at_start = 1;
            continue;
        }
        k->bytes[len++] = (char)c;
    }
    fclose(f);
    if (!k->off)
        return -1;
    k->off[k->n] = len;
    return 0;
}

void exp_keys_free(exp_keys *k)
{
    free(k->bytes);
    free(k->off);
}

typedef struct {
    uint64_t h;
    size_t i;
} hashed;

static int by_hash(const void *a, const void *b)
{
    const uint64_t x = ((const hashed *)a)->h, y = ((const hashed *)b)->h;
    return (x > y) - (x < y);
}

static uint64_t key_hash(const exp_keys *k, size_t i)
{
    static const uint8_t seed[16] = {'e', 'x', 'p', '-', 'o', 'v', 'e', 'r', 'l', 'a', 'p'};
    uint8_t out[8];
    bk_siphash24(seed, k->bytes + k->off[i], k->off[i + 1] - k->off[i], out);
    uint64_t h;
    memcpy(&h, out, sizeof h);
    return h;
}

static int same(const exp_keys *a, size_t i, const exp_keys *b, size_t j)
{
    const size_t n = a->off[i + 1] - a->off[i];
    return n == b->off[j + 1] - b->off[j] &&
           memcmp(a->bytes + a->off[i], b->bytes + b->off[j], n) == 0;
}

long exp_keys_drop_inserted(exp_keys *probes, const exp_keys *ins)
{
    if (probes->n == 0 || ins->n == 0)
        return 0;
    hashed *t = malloc(ins->n * sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < ins->n; i++)
        t[i] = (hashed){key_hash(ins, i), i};
    qsort(t, ins->n, sizeof *t, by_hash);
    size_t kept = 0, pos = 0;
    for (size_t i = 0; i < probes->n; i++) {
        const hashed want = {key_hash(probes, i), 0};
        const hashed *hit = bsearch(&want, t, ins->n, sizeof *t, by_hash);
        int inserted = 0;
        if (hit) { /* every key of that hash, both ways from the one found */
            const hashed *lo = hit, *hi = hit;
            while (lo > t && lo[-1].h == want.h)
                lo--;
            while (hi + 1 < t + ins->n && hi[1].h == want.h)
                hi++;
            for (const hashed *c = lo; c <= hi && !inserted; c++)
                inserted = same(probes, i, ins, c->i);
        }
        if (inserted)
            continue;
        /* kept: moved down over the dropped ones (never past its own bytes) */
        const size_t len = probes->off[i + 1] - probes->off[i], from = probes->off[i];
        memmove(probes->bytes + pos, probes->bytes + from, len);
        probes->off[kept++] = pos;
        pos += len;
    }
    free(t);
    const long dropped = (long)(probes->n - kept);
    probes->off[kept] = pos;
    probes->n = kept;
    return dropped;
}
