/*
 * bench_table.c - the expandable filter's two tables side by side (issue
 * 60: "measure before choosing"): the slot table it uses (three run bits a
 * slot, a run found by walking slots; src/expandable/qtable.h) and the
 * rank-and-select table (a run found by counting bits;
 * src/expandable/rqtable.h), each grown from 2^16 homes to N keys by
 * doubling whenever it reaches its load limit, the same keys in the same
 * order, prefetched as the filter's batches prefetch them (a group of 16
 * keys' lines two groups ahead). For each: ns an add (doublings included),
 * ns an absent lookup, the doublings' share, the table's bits a key at the
 * end and at its emptiest (just after a doubling), and the share of absent
 * keys found (its false positives; a key added and not found stops the
 * program). Both tables at 3/4 (the filter's limit), 0.9 and 0.95.
 *
 *   bench_table [-n N] [-r FIELD_BITS] [--smoke]
 *
 * Internal headers: this program measures the tables, not the library's
 * public calls (bench_filter and `make bench-scale` do that).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/alloc.h"
#include "expandable/qtable.h"
#include "expandable/rqtable.h"

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The i-th key's digest (splitmix64 of i and of ~i): the same keys for
 * every table. */
static uint64_t mix(uint64_t z)
{
    z += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static bk_hash key(uint64_t i)
{
    return (bk_hash){mix(i), mix(~i)};
}

/* One table of either kind, what the loop below asks of it. */
typedef struct table {
    int rank; /* 1: rq, 0: xp */
    xp_table x;
    rq_table r;
} table;

static bk_allocator alloc;

static void *zeroed(uint64_t n)
{
    void *p = bk_payload_alloc(&alloc, (size_t)n); /* the filter's own: huge pages, zeroed */
    if (!p) {
        fprintf(stderr, "bench_table: no memory for %llu bytes\n", (unsigned long long)n);
        exit(1);
    }
    return p;
}

static void make(table *t, int rank, unsigned q, unsigned r)
{
    memset(t, 0, sizeof *t);
    t->rank = rank;
    if (rank) {
        t->r.q = q;
        t->r.r = r;
        t->r.blocks = ((UINT64_C(1) << q) + xp_slack(q) + RQ_MASK) / RQ_SLOTS;
        t->r.slots = t->r.blocks * RQ_SLOTS;
        t->r.nbytes = rq_bytes(t->r.blocks, r);
        t->r.data = zeroed(t->r.nbytes);
    } else {
        t->x.q = q;
        t->x.r = r;
        t->x.w = r + XP_META;
        t->x.nbytes = xp_bytes((UINT64_C(1) << q) + xp_slack(q), t->x.w);
        t->x.slots = xp_slots_in(t->x.nbytes, t->x.w);
        t->x.data = zeroed(t->x.nbytes);
    }
}

static void grow(table *t)
{
    if (t->rank) {
        rq_table n = t->r;
        n.q++;
        n.blocks = rq_double_blocks(&t->r);
        n.slots = n.blocks * RQ_SLOTS;
        n.nbytes = rq_bytes(n.blocks, n.r);
        n.data = zeroed(n.nbytes);
        rq_double(&t->r, &n);
        bk_payload_free(&alloc, t->r.data, (size_t)t->r.nbytes);
        t->r = n;
    } else {
        xp_table n = t->x;
        n.q++;
        n.nbytes = xp_bytes(xp_double_slots(&t->x), n.w);
        n.slots = xp_slots_in(n.nbytes, n.w);
        n.data = zeroed(n.nbytes);
        xp_double(&t->x, &n, NULL, NULL);
        bk_payload_free(&alloc, t->x.data, (size_t)t->x.nbytes);
        t->x = n;
    }
}

static uint64_t entries(const table *t)
{
    return t->rank ? t->r.entries : t->x.entries;
}

static unsigned qbits(const table *t)
{
    return t->rank ? t->r.q : t->x.q;
}

static uint64_t nbytes(const table *t)
{
    return t->rank ? t->r.nbytes : t->x.nbytes;
}

/* The lines a key's add reads first: the slot table's home and the 8
 * slots before it, where the walk back to its cluster's start goes (as the
 * filter's batches load them); the rank-and-select table's block words and
 * the next block's (a run pushed past its block ends in the next), and its
 * home's field and the fields after it. */
static void prefetch(const table *t, const bk_hash *h)
{
    const uint64_t x = h->h1 >> (64 - qbits(t));
    if (t->rank) {
        const uint64_t bb = rq_block_bytes(t->r.r);
        const uint8_t *b = t->r.data + (x >> RQ_SHIFT) * bb,
                      *f = b + RQ_HEAD + (x & RQ_MASK) * t->r.r / 8;
        __builtin_prefetch(b, 1, 3);
        __builtin_prefetch(b + bb, 1, 3);
        __builtin_prefetch(f, 1, 3);
        __builtin_prefetch(f + 64, 1, 3);
    } else {
        const uint64_t back = x < 8 ? x : 8;
        const uint8_t *p = t->x.data + (x * t->x.w >> 3);
        __builtin_prefetch(t->x.data + ((x - back) * t->x.w >> 3), 1, 3);
        __builtin_prefetch(p, 1, 3);
        __builtin_prefetch(p + 7, 1, 3);
    }
    __asm__ volatile(""); /* kept: a function that only prefetches is dropped (bk_prefetch_w) */
}

static int add(table *t, const bk_hash *h)
{
    const unsigned q = qbits(t);
    const uint64_t x = h->h1 >> (64 - q);
    if (t->rank) {
        const uint64_t probe = xp_bits(h, q, t->r.r - 1) << 1;
        return rq_add(&t->r, x, probe, probe | 1);
    }
    const uint64_t probe = xp_probe(&t->x, h);
    return xp_add(&t->x, x, probe, probe | 1);
}

static int lookup(const table *t, const bk_hash *h)
{
    const unsigned q = qbits(t);
    const uint64_t x = h->h1 >> (64 - q);
    if (t->rank)
        return rq_lookup(&t->r, x, xp_bits(h, q, t->r.r - 1) << 1);
    return xp_lookup(&t->x, x, xp_probe(&t->x, h));
}

/* As the filter's batches go (src/expandable/expandable.c, apply_batch):
 * CHUNK keys' digests made first, then applied GROUP at a time, the lines
 * of the group AHEAD groups on loaded before this one is applied. */
#define CHUNK 512
#define GROUP 16
#define AHEAD 2

/* Lookups that answered "may be there" (kept: their work is not dropped). */
static uint64_t found;

/* One key through `adds` (an add, the table grown at `load` and when it
 * has no room) or a lookup; the seconds a growth took added to *doubling. */
static void apply(table *t, const bk_hash *h, double load, int adds, double *doubling)
{
    if (!adds) {
        found += (uint64_t)lookup(t, h);
        return;
    }
    for (int tries = 0; tries < 3; tries++) {
        if ((double)entries(t) < load * (double)(UINT64_C(1) << qbits(t)) &&
            add(t, h) != XP_NO_ROOM)
            return;
        const double s = seconds();
        grow(t);
        *doubling += seconds() - s;
    }
}

/* Keys from .. to-1 added (growing at `load`) or looked up. Returns the
 * seconds spent doubling. */
static double run(table *t, uint64_t from, uint64_t to, double load, int adds)
{
    double doubling = 0;
    bk_hash hs[CHUNK];
    for (uint64_t c = from; c < to; c += CHUNK) {
        const size_t n = to - c < CHUNK ? (size_t)(to - c) : CHUNK;
        for (size_t i = 0; i < n; i++)
            hs[i] = key(c + i);
        for (size_t i = 0; i < n && i < GROUP * AHEAD; i++)
            prefetch(t, &hs[i]);
        for (size_t at = 0; at < n; at += GROUP) {
            for (size_t i = at + GROUP * AHEAD; i < n && i < at + GROUP * (AHEAD + 1); i++)
                prefetch(t, &hs[i]);
            for (size_t i = at; i < n && i < at + GROUP; i++)
                apply(t, &hs[i], load, adds, &doubling);
        }
    }
    return doubling;
}

/* One table of kind `rank` grown to n keys at `load`, measured and printed
 * as a row (first_add: the first row's add, the ratio's base). 0, or 1
 * when a key added was not found. */
static int measure(const char *name, int rank, double load, unsigned r, uint64_t n,
                   double *first_add)
{
    table t;
    make(&t, rank, 16, r);
    const double s = seconds();
    const double dbl = run(&t, 0, n, load, 1);
    const double add_ns = (seconds() - s) * 1e9 / (double)n;
    const double l = seconds();
    found = 0;
    run(&t, n, 2 * n, 0, 0);
    const double look_ns = (seconds() - l) * 1e9 / (double)n;
    int lost = 0;
    for (uint64_t i = 0; i < n && !lost; i += 97) { /* no false negative */
        const bk_hash h = key(i);
        lost = !lookup(&t, &h);
        if (lost)
            fprintf(stderr, "bench_table: %s lost key %llu\n", name, (unsigned long long)i);
    }
    const double bits = (double)nbytes(&t) * 8 / (double)entries(&t);
    /* just after a doubling the same table holds load/2 of its homes */
    const double emptiest =
        bits * (double)entries(&t) / (load / 2 * (double)(UINT64_C(1) << qbits(&t)));
    printf("  %-24s %10.1f %10.1f %10.1f %12.1f %12.1f %10.1e\n", name, add_ns,
           dbl * 1e9 / (double)n, look_ns, bits, emptiest, (double)found / (double)n);
    if (*first_add == 0)
        *first_add = add_ns;
    else
        printf("  %-24s add %.2fx the slot table's\n", "", add_ns / *first_add);
    bk_payload_free(&alloc, t.rank ? (void *)t.r.data : (void *)t.x.data, (size_t)nbytes(&t));
    return lost;
}

int main(int argc, char **argv)
{
    uint64_t n = 30000000;
    unsigned r = 18;
    alloc = bk_current_allocator();
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            r = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--smoke"))
            n = 200000;
        else {
            fprintf(stderr, "usage: bench_table [-n N] [-r FIELD_BITS] [--smoke]\n");
            return 2;
        }
    }
    if (n < 1000 || r < 4 || r > 40) {
        fprintf(stderr, "bench_table: -n at least 1000, -r 4 .. 40\n");
        return 2;
    }
    static const struct {
        int rank;
        double load;
        const char *name;
    } runs[] = {{0, 0.75, "slot table, load 3/4"},  {0, 0.90, "slot table, load 0.9"},
                {0, 0.95, "slot table, load 0.95"}, {1, 0.75, "rank-select, load 3/4"},
                {1, 0.90, "rank-select, load 0.9"}, {1, 0.95, "rank-select, load 0.95"}};
    printf("bench_table: %llu keys from 2^16 homes, %u-bit fields, doubling at the load limit\n",
           (unsigned long long)n, r);
    printf("  %-24s %10s %10s %10s %12s %12s %10s\n", "table", "add ns", "of which", "absent ns",
           "bits/key", "emptiest", "absent");
    printf("  %-24s %10s %10s %10s %12s %12s %10s\n", "", "", "doubling", "", "(end)",
           "(after dbl)", "found");
    double first_add = 0;
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++)
        if (measure(runs[k].name, runs[k].rank, runs[k].load, r, n, &first_add))
            return 1;
    return 0;
}
