/*
 * bench_filter.c - bloomkit's filters against Debian's libbloom: same keys,
 * same n and p, same run. One table: variant x layout x operation -> ns per
 * operation one key at a time and in batches, the ratio to libbloom, bits per
 * key and the measured false-positive rate; beside it two floors measured in
 * the same run with no bloomkit code (the keys hashed alone with SipHash-2-4,
 * and one random 64-byte line touched per key), and every batch row's ratio
 * to them. Then what transparent huge pages
 * change, and two threads against one. Keys are synthetic crawler URLs
 * (urlgen.h, 59-83 bytes).
 *
 * usage: bench_filter [-n KEYS] [-p RATE] [-l LOOKUPS] [--smoke]
 *                     [--variant V] [--table-only] [--path-row] [--sweep FILE [--sweep-max N]]
 *   --smoke  a few seconds on small n; figures are printed, nothing asserted
 *   --variant  only that variant's rows; --table-only: no huge-page or thread
 *            sections (for n = 10^8: make bench BENCH_KEYS=100000000
 *            BENCH_ARGS="--variant standard --table-only")
 *   --path-row  four lines: the blocked standard filter's batch figures on the
 *            multi-key hash path BLOOMKIT_SIMD names, against the scalar hash;
 *            then that path's hash alone and the reference loop with it (no
 *            library around the hash), what bounds the first line; then the
 *            loop's memory traffic alone (same addresses, no hashing); then
 *            the classic layout's batch and its memory traffic alone
 *   --sweep  ns per operation for n = 10^4 .. sweep-max (default 10^8), one
 *            line per n and peer, to FILE (bench/plot.gp draws it)
 *
 * Without libbloom (built without HAVE_LIBBLOOM) its column says "n/a".
 */
#define _DEFAULT_SOURCE
#include <bloomkit.h>
#include <bloomkit_tools.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>
#include <sys/mman.h>

#ifdef HAVE_LIBBLOOM
#include <bloom.h>
#endif
#ifdef HAVE_SODIUM
#include <sodium.h>
#endif

#define XXH_STATIC_LINKING_ONLY /* XXH3_generateSecret */
#include <xxhash.h>

#include "bench_keys.h"
#include "textbook_siphash.h"
/* the multi-key SipHash, for the path row's reference (internal) */
#include "../src/common/siphash.h"

enum { OP_ADD, OP_PRESENT, OP_ABSENT, NOPS };
enum { SINGLE, BATCH, NMODES };
#define BATCH_KEYS 256

static const char *const op_names[NOPS] = {"add", "lookup present", "lookup absent"};

typedef struct run {
    double ns[NOPS];
    double fpr, bits_per_key;
    int ok;
} run;

/* The workload: n keys to add, and samples of present and absent keys. */
typedef struct workload {
    keyset in;      /* added */
    keyset absent;  /* never added */
    size_t lookups; /* lookups per kind */
    double p;
    keyset present; /* the added keys looked up, copied in lookup order */
} workload;

/* Present lookups sample the added keys evenly (not only the first ones:
 * in a scalable filter those sit in the oldest slice), copied end to end so
 * that they are read in order like the absent ones (each lookup would
 * otherwise first miss on its key's bytes, for every peer). */
static keyset present_sample(const keyset *in, size_t lookups)
{
    keyset k = keys_alloc(lookups);
    size_t pos = 0;
    for (size_t i = 0; i < lookups; i++) {
        const size_t j = (size_t)((double)i * (double)in->n / (double)lookups);
        k.off[i] = pos;
        memcpy(k.bytes + pos, key_at(in, j), key_len(in, j));
        pos += key_len(in, j);
    }
    k.off[lookups] = pos;
    return k;
}

/* ---------------------------------------------------------------- libbloom */

static run run_libbloom(const workload *w)
{
    run r = {{0}, 0, 0, 0};
#ifdef HAVE_LIBBLOOM
    struct bloom b;
    if (w->in.n > 0x7fffffff || bloom_init(&b, (int)w->in.n, w->p) != 0)
        return r;
    double t = now_ns();
    for (size_t i = 0; i < w->in.n; i++)
        bloom_add(&b, key_at(&w->in, i), (int)key_len(&w->in, i));
    r.ns[OP_ADD] = (now_ns() - t) / (double)w->in.n;
    size_t hits = 0;
    t = now_ns();
    for (size_t i = 0; i < w->lookups; i++) {
        hits += (size_t)bloom_check(&b, key_at(&w->present, i), (int)key_len(&w->present, i));
    }
    r.ns[OP_PRESENT] = (now_ns() - t) / (double)w->lookups;
    if (hits != w->lookups)
        fprintf(stderr, "libbloom: a false negative\n");
    hits = 0;
    t = now_ns();
    for (size_t i = 0; i < w->lookups; i++)
        hits += (size_t)bloom_check(&b, key_at(&w->absent, i), (int)key_len(&w->absent, i));
    r.ns[OP_ABSENT] = (now_ns() - t) / (double)w->lookups;
    r.fpr = (double)hits / (double)w->lookups;
    r.bits_per_key = 8.0 * (double)b.bytes / (double)w->in.n;
    r.ok = 1;
    bloom_free(&b);
#else
    (void)w;
#endif
    return r;
}

/* ---------------------------------------------------------------- bloomkit */

/* A chain starts at a quarter of n, so it grows twice while the keys go in
 * (slices of n/4, n/2 and n at the default growth) and ends with three
 * slices on every run: started at n, whether a second slice is opened at the
 * last keys would depend on chance, and the lookups with it. */
static bk_filter *make_filter(const char *cfgtext, size_t n, double p)
{
    char text[256];
    const size_t capacity = strstr(cfgtext, "scalable") && n >= 4 ? n / 4 : n;
    snprintf(text, sizeof text, "%s capacity=%zu fpr=%g", cfgtext, capacity, p);
    bk_config c;
    char err[200];
    bk_filter *f = NULL;
    if (bk_config_parse(&c, text, err, sizeof err) != BK_OK) {
        fprintf(stderr, "bench: %s\n", err);
        exit(1);
    }
    const int rc = bk_new(&c, &f);
    if (rc != BK_OK) {
        fprintf(stderr, "bench: bk_new(%s): %s\n", text, bk_strerror(rc));
        exit(1);
    }
    return f;
}

/* Keys first .. first+count-1 of ks, or (present) the evenly spread sample. */
typedef struct batcher {
    const void *kp[BATCH_KEYS];
    size_t kl[BATCH_KEYS];
    int res[BATCH_KEYS];
} batcher;

static size_t lookups_hit(bk_filter *f, const workload *w, int absent, int mode)
{
    size_t hits = 0;
    if (mode == SINGLE) {
        for (size_t i = 0; i < w->lookups; i++) {
            const keyset *ks = absent ? &w->absent : &w->present;
            hits += (size_t)(bk_contains(f, key_at(ks, i), key_len(ks, i)) == 1);
        }
        return hits;
    }
    batcher b;
    for (size_t i = 0; i < w->lookups; i += BATCH_KEYS) {
        const size_t g = w->lookups - i < BATCH_KEYS ? w->lookups - i : BATCH_KEYS;
        for (size_t x = 0; x < g; x++) {
            const keyset *ks = absent ? &w->absent : &w->present;
            b.kp[x] = key_at(ks, i + x);
            b.kl[x] = key_len(ks, i + x);
        }
        bk_contains_batch(f, b.kp, b.kl, g, b.res);
        for (size_t x = 0; x < g; x++)
            hits += (size_t)(b.res[x] == 1);
    }
    return hits;
}

static void add_range(bk_filter *f, const keyset *ks, size_t from, size_t to, int mode)
{
    if (mode == SINGLE) {
        for (size_t i = from; i < to; i++)
            bk_add(f, key_at(ks, i), key_len(ks, i));
        return;
    }
    batcher b;
    for (size_t i = from; i < to; i += BATCH_KEYS) {
        const size_t g = to - i < BATCH_KEYS ? to - i : BATCH_KEYS;
        for (size_t x = 0; x < g; x++) {
            b.kp[x] = key_at(ks, i + x);
            b.kl[x] = key_len(ks, i + x);
        }
        bk_add_batch(f, b.kp, b.kl, g, b.res);
    }
}

static run run_bloomkit(const char *cfgtext, const workload *w, int mode)
{
    run r = {{0}, 0, 0, 1};
    bk_filter *f = make_filter(cfgtext, w->in.n, w->p);
    double t = now_ns();
    add_range(f, &w->in, 0, w->in.n, mode);
    r.ns[OP_ADD] = (now_ns() - t) / (double)w->in.n;
    t = now_ns();
    const size_t present = lookups_hit(f, w, 0, mode);
    r.ns[OP_PRESENT] = (now_ns() - t) / (double)w->lookups;
    if (present != w->lookups)
        fprintf(stderr, "bloomkit %s: a false negative!\n", cfgtext);
    t = now_ns();
    const size_t fp = lookups_hit(f, w, 1, mode);
    r.ns[OP_ABSENT] = (now_ns() - t) / (double)w->lookups;
    r.fpr = (double)fp / (double)w->lookups;
    bk_filter_stats st;
    bk_stats(f, &st);
    r.bits_per_key = 8.0 * (double)st.bytes / (double)w->in.n;
    bk_free(f);
    return r;
}

/* ------------------------------------------------------------------ table */

/* layout is the column's text: the layout, and the hash when not the
 * default (hash=xxh3: for trusted keys, docs/security.md) */
static const struct {
    const char *variant, *layout, *hash;
} configs[] = {
    {"standard", "classic", "siphash24"}, {"standard", "blocked", "siphash24"},
    {"counting", "classic", "siphash24"}, {"counting", "blocked", "siphash24"},
    {"scalable", "classic", "siphash24"}, {"scalable", "blocked", "siphash24"},
    {"standard", "blocked+xxh3", "xxh3"},
};
#define NCONFIGS (sizeof configs / sizeof *configs)

static void config_text(size_t i, char *buf, size_t len)
{
    const size_t l = strcspn(configs[i].layout, "+");
    snprintf(buf, len, "variant=%s layout=%.*s hash=%s", configs[i].variant, (int)l,
             configs[i].layout, configs[i].hash);
}

static void print_table(const workload *w, const run *lb, run bk[][NMODES], const char *only)
{
    printf("n = %zu keys (synthetic URLs, 59-83 bytes), p = %g, hash siphash24 (+xxh3: xxh3), %zu "
           "lookups of "
           "each kind; libbloom %s\n",
           w->in.n, w->p, w->lookups,
           lb->ok ? "1.6 (Debian libbloom-dev), same keys, same run"
                  : "not built (install libbloom-dev): column n/a");
    printf("%-9s %-12s %-15s %9s %8s | %9s %8s %8s | %8s %9s\n", "variant", "layout", "operation",
           "single", "vs lb", "batch", "vs lb", "vs sgl", "bits/key", "fpr");
    printf("%-9s %-12s %-15s %9s %8s | %9s %8s %8s |\n", "", "", "", "ns/op", "", "ns/op", "", "");
    for (int op = 0; op < NOPS; op++) {
        if (lb->ok)
            printf("%-9s %-12s %-15s %9.1f %8s | %9s %8s %8s | %8.2f %9.2e\n", "libbloom", "-",
                   op_names[op], lb->ns[op], "1.00x", "-", "-", "-", lb->bits_per_key, lb->fpr);
        for (size_t c = 0; c < NCONFIGS; c++) {
            if (only && strcmp(only, configs[c].variant) != 0)
                continue;
            const run *s = &bk[c][SINGLE], *b = &bk[c][BATCH];
            char r1[16] = "n/a", r2[16] = "n/a";
            if (lb->ok) {
                snprintf(r1, sizeof r1, "%.2fx", lb->ns[op] / s->ns[op]);
                snprintf(r2, sizeof r2, "%.2fx", lb->ns[op] / b->ns[op]);
            }
            printf("%-9s %-12s %-15s %9.1f %8s | %9.1f %8s %7.2fx | %8.2f %9.2e\n",
                   configs[c].variant, configs[c].layout, op_names[op], s->ns[op], r1, b->ns[op],
                   r2, s->ns[op] / b->ns[op], s->bits_per_key, s->fpr);
        }
    }
}

/* ----------------------------------------------------------------- floors */

/* The floors a batch call cannot beat, measured without bloomkit: hashing
 * the keys (SipHash-2-4 with a 128-bit result, as bloomkit hashes them:
 * libsodium's when built, else the textbook code, whichever is faster), and
 * memory (one random 64-byte line per key in an array of a blocked standard
 * filter's size, prefetched BATCH_KEYS at a time as the batch calls do, then
 * read, or written). ns per key. */
typedef struct floors {
    double hash, xxh3, read, write; /* xxh3: the floor of the hash=xxh3 rows */
    const char *hash_by;
    double bytes;
    /* the reference loop (below), per hash (0 SipHash, 1 XXH3): add with
     * plain stores, add with a locked OR per changed word, lookups */
    double ref[2][NOPS + 1];
} floors;

/* The floors' and the reference loop's hash: SipHash-2-4 (libsodium's or the
 * textbook code) or XXH3-128 with a secret made from the same key, as
 * hash=xxh3 hashes (floor_secret is made before the first use). */
static const uint8_t floor_key[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static uint8_t floor_secret[192];
/* Where the floors' loops leave what they computed, so that no compiler
 * drops them as unused (a test of the sum against a constant did not stop
 * gcc from removing an inlined hash loop whose output it could see). */
static volatile uint64_t floor_sink;

static inline void floor_hash(const keyset *ks, size_t i, int xxh3, int sodium, uint64_t out[2])
{
    if (xxh3) {
        const XXH128_hash_t x = XXH3_128bits_withSecret(key_at(ks, i), key_len(ks, i), floor_secret,
                                                        sizeof floor_secret);
        out[0] = x.low64;
        out[1] = x.high64;
        return;
    }
#ifdef HAVE_SODIUM
    if (sodium) {
        crypto_shorthash_siphashx24((unsigned char *)out, (const unsigned char *)key_at(ks, i),
                                    key_len(ks, i), floor_key);
        return;
    }
#endif
    (void)sodium;
    textbook128(2, 4, floor_key, (const uint8_t *)key_at(ks, i), key_len(ks, i), out);
}

/* ns per key to hash every key of ks (xxh3: XXH3-128, else SipHash-2-4 by
 * libsodium when sodium, the textbook code otherwise). */
static double hash_all(const keyset *ks, int xxh3, int sodium)
{
    uint64_t sum = 0, out[2];
    const double t = now_ns();
    for (size_t i = 0; i < ks->n; i++) {
        floor_hash(ks, i, xxh3, sodium, out);
        sum += out[0] ^ out[1];
    }
    const double ns = (now_ns() - t) / (double)ks->n;
    floor_sink = sum; /* the hashes are used */
    return ns;
}

/* A random line for key i, without hashing a key (splitmix64 of i). */
static inline size_t line_of(size_t i, size_t lines)
{
    uint64_t z = (uint64_t)i + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (size_t)((z ^ (z >> 31)) % lines);
}

static double touch_lines(uint64_t *mem, size_t lines, size_t n, int write)
{
    size_t at[BATCH_KEYS];
    uint64_t sum = 0;
    const double t = now_ns();
    for (size_t i = 0; i < n; i += BATCH_KEYS) {
        const size_t g = n - i < BATCH_KEYS ? n - i : BATCH_KEYS;
        for (size_t x = 0; x < g; x++) {
            at[x] = line_of(i + x, lines) * 8;
            __builtin_prefetch(&mem[at[x]], 1);
        }
        for (size_t x = 0; x < g; x++) {
            if (write)
                mem[at[x]] |= UINT64_C(1) << (x & 63);
            else
                sum += mem[at[x]] & 1;
        }
    }
    const double ns = (now_ns() - t) / (double)n;
    floor_sink = sum;
    return ns;
}

/* ------------------------------------------------------- reference loop */

/* The simplest loop that does a blocked batch's work, with no bloomkit
 * code: hash key i + REF_AHEAD (the floor's SipHash, or XXH3) and prefetch
 * its 64-byte line, then set or test key i's k bits in its line (positions
 * from the second hash word by the same LCG steps as bloomkit's blocked
 * probes). It bounds what any library can do with this hash and this
 * layout on this machine: a batch row is compared with it ("/ ref"). */
#define REF_AHEAD 16
enum { REF_ADD_PLAIN, REF_ADD_LOCKED, REF_PRESENT, REF_ABSENT };

__extension__ typedef unsigned __int128 ref_u128;

/* The line of h1 (multiply-high, as bloomkit reduces). */
static inline uint64_t *ref_line(uint64_t *mem, size_t lines, uint64_t h1)
{
    return mem + (size_t)(((ref_u128)h1 * lines) >> 64) * 8;
}

/* The loops' k for rate p: about bloomkit's (blocked and classic). */
static unsigned ref_k(const workload *w)
{
    return (unsigned)lround(-log2(w->p));
}

/* The multiplier of bloomkit's probe generator (MMIX's LCG). */
#define REF_LCG_MUL UINT64_C(6364136223846793005)

/* The next probe of a key's line (bloomkit's blocked probes: the top 9
 * bits of an LCG on the second hash word) as word << 6 | bit. */
static inline unsigned ref_probe(uint64_t *x)
{
    const unsigned bit = (unsigned)(*x >> 55);
    *x = *x * REF_LCG_MUL + UINT64_C(1442695040888963407);
    return (bit & ~63u) | ((bit & 63) ^ 7);
}

/* Key h's work in its line in mode (REF_*): 1 when found (lookups) or new
 * (adds). */
static inline int ref_key(uint64_t *line, const uint64_t h[2], unsigned k, int mode)
{
    uint64_t x = h[1];
    if (mode == REF_PRESENT || mode == REF_ABSENT) {
        /* two probes a branch, leaving at the first pair with a clear bit
         * (an absent key mostly stops after one) */
        unsigned q = 0;
        for (; q + 1 < k; q += 2) {
            const unsigned a = ref_probe(&x), b = ref_probe(&x);
            if (!((line[a >> 6] >> (a & 63)) & (line[b >> 6] >> (b & 63)) & 1))
                return 0;
        }
        const unsigned a = ref_probe(&x);
        return q == k || (int)(line[a >> 6] >> (a & 63) & 1);
    }
    uint64_t want[8] = {0};
    for (unsigned q = 0; q < k; q++) {
        const unsigned p = ref_probe(&x);
        want[p >> 6] |= UINT64_C(1) << (p & 63);
    }
    /* no branch on the bits: words with a clear bit as a mask */
    unsigned todo = 0;
    for (unsigned w = 0; w < 8; w++)
        todo |= (unsigned)((want[w] & ~line[w]) != 0) << w;
    if (mode == REF_ADD_PLAIN) {
        for (unsigned w = 0; w < 8; w++)
            line[w] |= want[w];
    } else {
        for (unsigned left = todo; left; left &= left - 1)
            __atomic_fetch_or(&line[__builtin_ctz(left)], want[__builtin_ctz(left)],
                              __ATOMIC_SEQ_CST);
    }
    return todo != 0;
}

/* ns per key over ks in mode (REF_*); *hits counts keys found or new. */
static double ref_loop(const keyset *ks, uint64_t *mem, size_t lines, unsigned k, int mode,
                       int xxh3, int sodium, size_t *hits)
{
    uint64_t ring[REF_AHEAD + 1][2];
    size_t found = 0;
    const size_t n = ks->n;
    const double t = now_ns();
    for (size_t j = 0; j < n && j < REF_AHEAD; j++) {
        floor_hash(ks, j, xxh3, sodium, ring[j]);
        __builtin_prefetch(ref_line(mem, lines, ring[j][0]), 1, 0);
    }
    for (size_t i = 0; i < n; i++) {
        if (i + REF_AHEAD < n) {
            uint64_t *h = ring[(i + REF_AHEAD) % (REF_AHEAD + 1)];
            floor_hash(ks, i + REF_AHEAD, xxh3, sodium, h);
            __builtin_prefetch(ref_line(mem, lines, h[0]), 1, 0);
        }
        const uint64_t *h = ring[i % (REF_AHEAD + 1)];
        found += (size_t)ref_key(ref_line(mem, lines, h[0]), h, k, mode);
    }
    *hits = found;
    return (now_ns() - t) / (double)n;
}

/* ref_loop with the multi-key SipHash-2-4 of the path this process takes
 * (bloomkit's bk_sip_128_many, the one piece of bloomkit in it): BATCH_KEYS
 * keys hashed at once, then probed in order, REF_AHEAD lines prefetched
 * ahead. What a batch call can reach on this path with this layout: a
 * target below it is beyond the hash and the memory, not the library. With
 * mem NULL, the keys are hashed and nothing else. */
static double ref_loop_many(const keyset *ks, uint64_t *mem, size_t lines, unsigned k, int mode,
                            size_t *hits)
{
    const bk_sipkey key = bk_sipkey_from_bytes(floor_key);
    const void *kp[BATCH_KEYS];
    size_t kl[BATCH_KEYS], found = 0;
    uint64_t h[BATCH_KEYS][2], sum = 0;
    const double t = now_ns();
    for (size_t at = 0; at < ks->n; at += BATCH_KEYS) {
        const size_t g = ks->n - at < BATCH_KEYS ? ks->n - at : BATCH_KEYS;
        for (size_t i = 0; i < g; i++) {
            kp[i] = key_at(ks, at + i);
            kl[i] = key_len(ks, at + i);
        }
        bk_sip_128_many(&key, 2, kp, kl, g, h);
        if (!mem) {
            sum += h[0][0] ^ h[g - 1][1];
            continue;
        }
        for (size_t i = 0; i < g && i < REF_AHEAD; i++)
            __builtin_prefetch(ref_line(mem, lines, h[i][0]), 1, 0);
        for (size_t i = 0; i < g; i++) {
            if (i + REF_AHEAD < g)
                __builtin_prefetch(ref_line(mem, lines, h[i + REF_AHEAD][0]), 1, 0);
            found += (size_t)ref_key(ref_line(mem, lines, h[i][0]), h[i], k, mode);
        }
    }
    floor_sink = sum;
    *hits = found;
    return (now_ns() - t) / (double)ks->n;
}

/* Every key of ks hashed beforehand by this path's multi-key SipHash-2-4
 * (the floor's key): n digests, malloc'd, for the memory-alone loops. */
static uint64_t (*digests_of(const keyset *ks))[2]
{
    const bk_sipkey key = bk_sipkey_from_bytes(floor_key);
    uint64_t(*h)[2] = malloc(ks->n * sizeof *h);
    const void **kp = malloc(ks->n * sizeof *kp);
    size_t *kl = malloc(ks->n * sizeof *kl);
    if (!h || !kp || !kl) {
        fprintf(stderr, "bench: no memory for the digests\n");
        exit(1);
    }
    for (size_t i = 0; i < ks->n; i++) {
        kp[i] = key_at(ks, i);
        kl[i] = key_len(ks, i);
    }
    for (size_t at = 0; at < ks->n; at += BATCH_KEYS)
        bk_sip_128_many(&key, 2, kp + at, kl + at,
                        ks->n - at < BATCH_KEYS ? ks->n - at : BATCH_KEYS, h + at);
    free(kp);
    free(kl);
    return h;
}

/* The memory traffic of the reference loop alone: the same addresses and
 * bit work, on digests made beforehand (this path's multi-key SipHash),
 * nothing hashed while timed. Its four figures (modes as measure_ref's),
 * on memory zeroed before each add; what a batch call pays beyond its hash
 * at the least. */
static void measure_memory(const workload *w, uint64_t *mem, size_t lines, double out[NOPS + 1])
{
    const unsigned k = ref_k(w);
    static const int modes[NOPS + 1] = {REF_ADD_PLAIN, REF_ADD_LOCKED, REF_PRESENT, REF_ABSENT};
    for (int m = 0; m <= NOPS; m++) {
        const keyset *ks = m < 2 ? &w->in : m == 2 ? &w->present : &w->absent;
        uint64_t(*h)[2] = digests_of(ks);
        if (m < 2)
            memset(mem, 0, lines * 64);
        size_t found = 0;
        const double t = now_ns();
        for (size_t i = 0; i < ks->n && i < REF_AHEAD; i++)
            __builtin_prefetch(ref_line(mem, lines, h[i][0]), 1, 0);
        for (size_t i = 0; i < ks->n; i++) {
            if (i + REF_AHEAD < ks->n)
                __builtin_prefetch(ref_line(mem, lines, h[i + REF_AHEAD][0]), 1, 0);
            found += (size_t)ref_key(ref_line(mem, lines, h[i][0]), h[i], k, modes[m]);
        }
        out[m] = (now_ns() - t) / (double)ks->n;
        floor_sink = found;
        free(h);
    }
}

/* The reference loop's four figures for one hash (many: the multi-key
 * SipHash of ref_loop_many), on memory of the blocked filter's size (zeroed
 * before each add). */
static void measure_ref(const workload *w, uint64_t *mem, size_t lines, int xxh3, int sodium,
                        int many, double out[NOPS + 1])
{
    const unsigned k = ref_k(w);
    static const int modes[NOPS + 1] = {REF_ADD_PLAIN, REF_ADD_LOCKED, REF_PRESENT, REF_ABSENT};
    for (int i = 0; i <= NOPS; i++) {
        const keyset *ks = i < 2 ? &w->in : i == 2 ? &w->present : &w->absent;
        size_t hits;
        if (i < 2)
            memset(mem, 0, lines * 64);
        out[i] = many ? ref_loop_many(ks, mem, lines, k, modes[i], &hits)
                      : ref_loop(ks, mem, lines, k, modes[i], xxh3, sodium, &hits);
        if (i == 2 && hits != w->present.n)
            fprintf(stderr, "bench: the reference loop lost a key\n");
    }
}

/* Memory for the floors on huge pages where the system gives them, as
 * bloomkit maps a filter's payload: on 4 KiB pages a 240 MB array's TLB
 * misses alone cost more than the filter's loads do. */
#define FLOOR_HUGE ((size_t)2 << 20)
static uint64_t *floor_alloc(size_t bytes)
{
    const size_t size = (bytes + FLOOR_HUGE - 1) / FLOOR_HUGE * FLOOR_HUGE;
    uint64_t *mem = aligned_alloc(FLOOR_HUGE, size);
#ifdef MADV_HUGEPAGE
    if (mem)
        (void)madvise(mem, size, MADV_HUGEPAGE); /* advice only */
#endif
    return mem;
}

/* The floor of the SipHash rows: the keys hashed one at a time by the
 * faster of the textbook code and libsodium (when built); *by names it. */
static double scalar_hash(const workload *w, const char **by)
{
    double ns = hash_all(&w->in, 0, 0);
    *by = "textbook";
#ifdef HAVE_SODIUM
    if (sodium_init() >= 0) {
        const double so = hash_all(&w->in, 0, 1);
        if (so < ns) {
            ns = so;
            *by = "libsodium";
        }
    }
#endif
    return ns;
}

/* A standard filter's bits for w: m = -n ln p / ln^2 2. */
static double classic_bits(const workload *w)
{
    return -(double)w->in.n * log(w->p) / (log(2) * log(2));
}

/* The reference loop's memory: a blocked filter's (about 1.15 times the
 * classic size at these rates, as bloomkit sizes it), in *lines lines. */
static uint64_t *ref_alloc(const workload *w, size_t *lines)
{
    *lines = (size_t)(classic_bits(w) * 1.15 / 512) + 1;
    uint64_t *mem = floor_alloc(*lines * 64);
    if (!mem) {
        fprintf(stderr, "bench: out of memory for the reference loop\n");
        exit(1);
    }
    return mem;
}

static floors measure_floors(const workload *w)
{
    floors f = {0, 0, 0, 0, "textbook", 0, {{0}}};
    XXH3_generateSecret(floor_secret, sizeof floor_secret, floor_key, sizeof floor_key);
    f.hash = scalar_hash(w, &f.hash_by);
    f.xxh3 = hash_all(&w->in, 1, 0);
    /* a standard filter's size, in lines */
    const size_t lines = (size_t)(classic_bits(w) / 512) + 1;
    uint64_t *mem = floor_alloc(lines * 64);
    if (!mem) {
        fprintf(stderr, "bench: out of memory for the memory floor\n");
        exit(1);
    }
    memset(mem, 0, lines * 64);
    f.write = touch_lines(mem, lines, w->in.n, 1);
    f.read = touch_lines(mem, lines, w->in.n, 0);
    f.bytes = (double)lines * 64;
    free(mem);
    size_t blines;
    uint64_t *bmem = ref_alloc(w, &blines);
    const int sodium = strcmp(f.hash_by, "libsodium") == 0;
    measure_ref(w, bmem, blines, 0, sodium, 0, f.ref[0]);
    measure_ref(w, bmem, blines, 1, sodium, 0, f.ref[1]);
    free(bmem);
    return f;
}

static void print_floors(const floors *fl, run bk[][NMODES], const char *only)
{
    printf("\nfloors, same keys, same run, no bloomkit code: hashing alone (SipHash-2-4, 128-bit, "
           "%s) %.1f ns/key, XXH3-128 (libxxhash, the floor of hash=xxh3) %.1f ns/key; memory "
           "(one random 64-byte line per key, prefetched %d at a time, %.1f MB) read %.1f, "
           "write %.1f ns/key\n",
           fl->hash_by, fl->hash, fl->xxh3, BATCH_KEYS, fl->bytes / 1e6, fl->read, fl->write);
    for (int x = 0; x < 2; x++)
        printf("reference loop (%s, then k bits in one prefetched line, %d keys ahead, no bloomkit "
               "code): add %.1f (plain stores) / %.1f (locked OR per changed word), lookup "
               "present %.1f, absent %.1f ns/key = %.2fx / %.2fx / %.2fx / %.2fx the hash\n",
               x ? "XXH3-128" : "SipHash-2-4", REF_AHEAD, fl->ref[x][0], fl->ref[x][1],
               fl->ref[x][2], fl->ref[x][3], fl->ref[x][0] / (x ? fl->xxh3 : fl->hash),
               fl->ref[x][1] / (x ? fl->xxh3 : fl->hash), fl->ref[x][2] / (x ? fl->xxh3 : fl->hash),
               fl->ref[x][3] / (x ? fl->xxh3 : fl->hash));
    printf("%-9s %-12s %-15s %9s %9s %9s %9s\n", "variant", "layout", "operation", "batch ns",
           "/ hash", "/ memory", "/ ref");
    for (size_t c = 0; c < NCONFIGS; c++) {
        if (only && strcmp(only, configs[c].variant) != 0)
            continue;
        for (int op = 0; op < NOPS; op++) {
            const double ns = bk[c][BATCH].ns[op], mem = op == OP_ADD ? fl->write : fl->read;
            const int xxh3 = strcmp(configs[c].hash, "xxh3") == 0;
            const double hash = xxh3 ? fl->xxh3 : fl->hash;
            /* the reference does a blocked bit array's work: locked adds,
             * as bloomkit's thread-safe adds are */
            char ref[16] = "-";
            if (strncmp(configs[c].layout, "blocked", 7) == 0 &&
                strcmp(configs[c].variant, "counting") != 0)
                snprintf(ref, sizeof ref, "%.2fx", ns / fl->ref[xxh3][op == OP_ADD ? 1 : op + 1]);
            printf("%-9s %-12s %-15s %9.1f %8.2fx %8.2fx %9s\n", configs[c].variant,
                   configs[c].layout, op_names[op], ns, ns / hash, ns / mem, ref);
        }
    }
}

/* ------------------------------------------------- multi-key hash paths */

/* The classic layout's memory traffic alone: each key's k bits anywhere in
 * a classic filter's m bits, at bloomkit's classic probes (x_0 = h1,
 * x_{i+1} = a x_i + (h2 | 1), bit reduce(x_i, m), byte bit / 8), on digests
 * made beforehand, no hashing and no library code. A group of keys' lines
 * is prefetched (all k, or the first CLASSIC_FIRST for absent keys, which
 * mostly stop there) while the group before it is applied, about
 * CLASSIC_LINES lines in flight; adds store plainly, lookups only read and
 * stop at the first clear bit. out:
 * add, lookup present, absent, ns a key. The least a classic batch pays
 * beyond its hash: k misses a key. */
#define CLASSIC_LINES 24
#define CLASSIC_FIRST 2
static uint64_t classic_probe(uint64_t *x, uint64_t step, uint64_t m)
{
    const uint64_t v = *x;
    *x = v * REF_LCG_MUL + step;
    return (uint64_t)(((ref_u128)v * m) >> 64);
}

static void classic_prefetch(const uint8_t *bits, uint64_t m, const uint64_t h[2], unsigned lines)
{
    uint64_t x = h[0];
    for (unsigned q = 0; q < lines; q++)
        __builtin_prefetch(&bits[classic_probe(&x, h[1] | 1, m) / 8], 1, 0);
}

static int classic_key(uint8_t *bits, uint64_t m, const uint64_t h[2], unsigned k, int add)
{
    uint64_t x = h[0];
    int fresh = 0;
    for (unsigned q = 0; q < k; q++) {
        const uint64_t bit = classic_probe(&x, h[1] | 1, m);
        const uint8_t mask = (uint8_t)(0x80u >> (bit & 7)), old = bits[bit / 8];
        if (!(old & mask)) {
            if (!add)
                return 0;
            fresh = 1;
            bits[bit / 8] = (uint8_t)(old | mask);
        }
    }
    return add ? fresh : 1;
}

static void measure_classic_memory(const workload *w, double out[NOPS])
{
    const unsigned k = ref_k(w);
    const uint64_t m = (uint64_t)classic_bits(w);
    uint8_t *bits = (uint8_t *)floor_alloc(m / 8 + 64);
    if (!bits) {
        fprintf(stderr, "bench: out of memory for the classic memory loop\n");
        exit(1);
    }
    memset(bits, 0, m / 8 + 64);
    for (int op = 0; op < NOPS; op++) {
        const keyset *ks = op == OP_ADD ? &w->in : op == OP_PRESENT ? &w->present : &w->absent;
        uint64_t(*h)[2] = digests_of(ks);
        const unsigned lines = op == OP_ABSENT ? CLASSIC_FIRST : k;
        const size_t group = CLASSIC_LINES / lines ? CLASSIC_LINES / lines : 1;
        size_t found = 0;
        const double t = now_ns();
        for (size_t i = 0; i < ks->n && i < group; i++)
            classic_prefetch(bits, m, h[i], lines);
        for (size_t at = 0; at < ks->n; at += group) {
            for (size_t i = at + group; i < ks->n && i < at + 2 * group; i++)
                classic_prefetch(bits, m, h[i], lines);
            for (size_t i = at; i < ks->n && i < at + group; i++)
                found += (size_t)classic_key(bits, m, h[i], k, op == OP_ADD);
        }
        out[op] = (now_ns() - t) / (double)ks->n;
        if (op == OP_PRESENT && found != ks->n)
            fprintf(stderr, "bench: the classic memory loop lost a key\n");
        floor_sink = found;
        free(h);
    }
    free(bits);
}

/* One line for the path this process takes (BLOOMKIT_SIMD; the Makefile runs
 * --path-row once per path): a blocked standard filter's batch add and
 * lookups (SipHash-2-4) as ns and as multiples of the scalar hash alone (one
 * key at a time, the floor above), the targets beside them. A path
 * this CPU lacks prints so and measures nothing. */
static int print_path_row(const workload *w, const char *asked)
{
    const char *path = bk_simd_path();
    if (asked && strcmp(asked, path) != 0) {
        printf("path %-7s not on this CPU (it takes %s): not measured\n", asked, path);
        return 0;
    }
    const char *by;
    const double hash = scalar_hash(w, &by);
    const run r = run_bloomkit("variant=standard layout=blocked hash=siphash24", w, BATCH);
    printf("path %-7s blocked standard batch, n = %zu: add %.1f ns = %.2fx (target <= 0.9x), "
           "lookup present %.1f = %.2fx, absent %.1f = %.2fx (target <= 0.6x) the scalar "
           "SipHash-2-4 alone (%s, %.1f ns a key)\n",
           path, w->in.n, r.ns[OP_ADD], r.ns[OP_ADD] / hash, r.ns[OP_PRESENT],
           r.ns[OP_PRESENT] / hash, r.ns[OP_ABSENT], r.ns[OP_ABSENT] / hash, by, hash);
    /* the same work with no library around this path's hash: what bounds
     * the row above */
    size_t lines, hits;
    uint64_t *mem = ref_alloc(w, &lines);
    const double many = ref_loop_many(&w->in, NULL, 0, 0, REF_PRESENT, &hits);
    double ref[NOPS + 1], only[NOPS + 1];
    measure_ref(w, mem, lines, 0, 0, 1, ref);
    measure_memory(w, mem, lines, only);
    free(mem);
    printf("path %-7s its multi-key hash alone %.1f ns = %.2fx; the reference loop with it: add "
           "%.1f (plain) / %.1f (locked) = %.2fx / %.2fx, lookup present %.1f = %.2fx, absent "
           "%.1f = %.2fx the scalar hash\n",
           path, many, many / hash, ref[0], ref[1], ref[0] / hash, ref[1] / hash, ref[2],
           ref[2] / hash, ref[3], ref[3] / hash);
    /* the least a batch can cost: its hash and its memory traffic, were
     * they not to overlap at all */
    printf("path %-7s its memory traffic alone (same addresses, digests made beforehand): add "
           "%.1f (plain) / %.1f (locked), lookup present %.1f, absent %.1f ns; with the hash: "
           "%.2fx / %.2fx, %.2fx, %.2fx the scalar hash\n",
           path, only[0], only[1], only[2], only[3], (many + only[0]) / hash,
           (many + only[1]) / hash, (many + only[2]) / hash, (many + only[3]) / hash);
    /* the classic layout: k lines a key, whose misses alone pass the target */
    const run c = run_bloomkit("variant=standard layout=classic hash=siphash24", w, BATCH);
    double cm[NOPS];
    measure_classic_memory(w, cm);
    printf("path %-7s classic standard batch: add %.1f ns = %.2fx (target <= 0.9x), lookup "
           "present %.1f = %.2fx, absent %.1f = %.2fx (target <= 0.6x) the scalar hash; its "
           "memory traffic alone (its probes over as many bits, k lines a key, digests made "
           "beforehand): add "
           "%.1f = %.2fx, lookup present %.1f = %.2fx, absent %.1f = %.2fx\n",
           path, c.ns[OP_ADD], c.ns[OP_ADD] / hash, c.ns[OP_PRESENT], c.ns[OP_PRESENT] / hash,
           c.ns[OP_ABSENT], c.ns[OP_ABSENT] / hash, cm[OP_ADD], cm[OP_ADD] / hash, cm[OP_PRESENT],
           cm[OP_PRESENT] / hash, cm[OP_ABSENT], cm[OP_ABSENT] / hash);
    return 0;
}

/* ------------------------------------------------- transparent huge pages */

/* A caller allocator turns off bloomkit's huge-page mapping (it only maps
 * payloads itself for the default allocator), so the same filter lands on
 * ordinary 4 KiB pages. */
static void *plain_alloc(void *o, size_t n)
{
    (void)o;
    return malloc(n);
}
static void plain_free(void *o, void *p)
{
    (void)o;
    free(p);
}

static void print_thp(const workload *w)
{
    printf("\ntransparent huge pages (madvise), standard filter, n = %zu: ns per operation\n",
           w->in.n);
    printf("%-8s %-6s %-15s %10s %10s %8s\n", "layout", "mode", "operation", "huge", "4 KiB",
           "gain");
    const char *layouts[] = {"variant=standard layout=classic", "variant=standard layout=blocked"};
    for (int l = 0; l < 2; l++)
        for (int mode = 0; mode < NMODES; mode++) {
            const run huge = run_bloomkit(layouts[l], w, mode);
            const bk_allocator plain = {plain_alloc, plain_free, NULL};
            bk_set_allocator(&plain);
            const run small = run_bloomkit(layouts[l], w, mode);
            bk_set_allocator(NULL);
            for (int op = 0; op < NOPS; op++)
                printf("%-8s %-6s %-15s %10.1f %10.1f %7.2fx\n", l ? "blocked" : "classic",
                       mode ? "batch" : "single", op_names[op], huge.ns[op], small.ns[op],
                       small.ns[op] / huge.ns[op]);
        }
}

/* ---------------------------------------------------------------- threads */

typedef struct adder {
    bk_filter *f;
    const keyset *ks;
    size_t from, to;
    int mode;
} adder;

static void *adder_main(void *arg)
{
    const adder *a = arg;
    add_range(a->f, a->ks, a->from, a->to, a->mode);
    return NULL;
}

/* Wall time for `threads` threads to add disjoint slices of the keys. */
static double timed_adds(const char *cfgtext, const workload *w, int threads, int mode)
{
    bk_filter *f = make_filter(cfgtext, w->in.n, w->p);
    pthread_t tid[8];
    adder a[8];
    const double t = now_ns();
    for (int i = 0; i < threads; i++) {
        a[i] = (adder){f, &w->in, w->in.n * (size_t)i / (size_t)threads,
                       w->in.n * (size_t)(i + 1) / (size_t)threads, mode};
        pthread_create(&tid[i], NULL, adder_main, &a[i]);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], NULL);
    const double ns = now_ns() - t;
    bk_free(f);
    return ns;
}

static void print_threads(const workload *w)
{
    printf("\nthreads: standard filter, n = %zu keys added by 1 thread, then split over 2 "
           "(disjoint halves, atomic OR, no lock)\n",
           w->in.n);
    printf("%-8s %-6s %12s %12s %8s\n", "layout", "mode", "1 thread s", "2 threads s", "speedup");
    const char *layouts[] = {"variant=standard layout=classic", "variant=standard layout=blocked"};
    for (int l = 0; l < 2; l++)
        for (int mode = 0; mode < NMODES; mode++) {
            const double one = timed_adds(layouts[l], w, 1, mode);
            const double two = timed_adds(layouts[l], w, 2, mode);
            printf("%-8s %-6s %12.3f %12.3f %7.2fx\n", l ? "blocked" : "classic",
                   mode ? "batch" : "single", one / 1e9, two / 1e9, one / two);
        }
}

/* ------------------------------------------------------------------ sweep */

/* ns per operation (single calls) for n = 10^4 .. max, every peer: the data
 * of the plot in docs/performance.md. Lookups: min(n, 10^6) of each kind. */
static void sweep(const char *path, size_t max, double p)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        perror(path);
        exit(1);
    }
    fprintf(out, "# n peer add_ns present_ns absent_ns bits_per_key fpr\n");
    keyset all = keys_make(0, max);
    const size_t nlook = max < 1000000 ? max : 1000000;
    keyset absent = keys_make(UINT64_C(1) << 40, nlook);
    for (size_t n = 10000; n <= max; n *= 10) {
        keyset in = all;
        in.n = n; /* a prefix of the same keys */
        workload w = {in, absent, n < nlook ? n : nlook, p, {0, 0, 0}};
        w.present = present_sample(&in, w.lookups);
        const run lb = run_libbloom(&w);
        if (lb.ok)
            fprintf(out, "%zu libbloom %.2f %.2f %.2f %.3f %.3e\n", n, lb.ns[0], lb.ns[1], lb.ns[2],
                    lb.bits_per_key, lb.fpr);
        for (size_t c = 0; c < NCONFIGS; c++) {
            char text[96];
            config_text(c, text, sizeof text);
            const run r = run_bloomkit(text, &w, SINGLE);
            fprintf(out, "%zu %s-%s %.2f %.2f %.2f %.3f %.3e\n", n, configs[c].variant,
                    configs[c].layout, r.ns[0], r.ns[1], r.ns[2], r.bits_per_key, r.fpr);
        }
        keys_free(&w.present);
        fflush(out);
        fprintf(stderr, "sweep: n = %zu done\n", n);
    }
    fclose(out);
    keys_free(&all);
    keys_free(&absent);
}

/* long: the runs in the order the report prints them, each a few lines. */
int main(int argc, char **argv)
{
    size_t n = 10000000, lookups = 2000000, sweep_max = 100000000;
    double p = 0.0001;
    int smoke = 0, table_only = 0, path_row = 0;
    const char *sweep_path = NULL, *only = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--smoke"))
            smoke = 1;
        else if (!strcmp(a, "-n") && v)
            n = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "-p") && v)
            p = strtod(argv[++i], NULL);
        else if (!strcmp(a, "-l") && v)
            lookups = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--sweep") && v)
            sweep_path = argv[++i];
        else if (!strcmp(a, "--sweep-max") && v)
            sweep_max = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--variant") && v)
            only = argv[++i];
        else if (!strcmp(a, "--table-only"))
            table_only = 1;
        else if (!strcmp(a, "--path-row"))
            path_row = 1;
        else {
            fprintf(stderr, "usage: bench_filter [-n KEYS] [-p RATE] [-l LOOKUPS] [--smoke] "
                            "[--variant V] [--table-only] [--path-row] "
                            "[--sweep FILE [--sweep-max N]]\n");
            return 2;
        }
    }
    if (sweep_path) {
        sweep(sweep_path, sweep_max, p);
        return 0;
    }
    if (smoke) {
        n = 20000;
        lookups = 20000;
    }
    if (n == 0 || lookups == 0 || !(p > 0 && p < 0.5)) {
        fprintf(stderr, "bench_filter: n, lookups and p must be positive (p < 0.5)\n");
        return 2;
    }
    if (lookups > n)
        lookups = n;
    workload w = {keys_make(0, n), keys_make(UINT64_C(1) << 40, lookups), lookups, p, {0, 0, 0}};
    w.present = present_sample(&w.in, lookups);
    if (path_row) {
        const int rc = print_path_row(&w, getenv("BLOOMKIT_SIMD"));
        keyset in = w.in, ab = w.absent, pr = w.present;
        keys_free(&in);
        keys_free(&pr);
        keys_free(&ab);
        return rc;
    }
    const run lb = run_libbloom(&w);
    run bk[NCONFIGS][NMODES];
    for (size_t c = 0; c < NCONFIGS; c++)
        for (int mode = 0; mode < NMODES && (!only || !strcmp(only, configs[c].variant)); mode++) {
            char text[96];
            config_text(c, text, sizeof text);
            bk[c][mode] = run_bloomkit(text, &w, mode);
        }
    print_table(&w, &lb, bk, only);
    const floors fl = measure_floors(&w);
    print_floors(&fl, bk, only);
    if (!table_only) {
        print_thp(&w);
        print_threads(&w);
    }
    keyset in = w.in, ab = w.absent, pr = w.present;
    keys_free(&in);
    keys_free(&pr);
    keys_free(&ab);
    return 0;
}
