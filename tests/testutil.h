/*
 * testutil.h - helpers shared by the Check suites: a seeded PRNG (one seed a
 * run, printed, and BK_TEST_SEED=... replays it), key generators, and a
 * filter constructor that fails the test on error.
 */
#ifndef BK_TESTUTIL_H
#define BK_TESTUTIL_H

#include <check.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bloomkit.h"
#include "bloomkit_tools.h"
#include "leaks.h"

/* A passing assertion records nothing. Check's own ck_assert_msg (and every
 * ck_assert_* built on it) sends the forked test's runner a "last point
 * reached" message on each pass, which the runner then reads back and
 * unpacks one by one: the suites' hot loops pass millions of assertions, and
 * under AddressSanitizer that read-back (through the sanitizer's byte-wise
 * memmove) was 40% of a suite's time. A failing assertion reports exactly as
 * Check's does; a crash is placed by the sanitizers' and Check's own reports
 * (a test that wants a marker still calls mark_point()). */
#undef ck_assert_msg
#define ck_assert_msg(expr, ...)                                                                   \
    ((expr) ? (void)0                                                                              \
            : _ck_assert_failed(__FILE__, __LINE__, "Assertion '" #expr "' failed", __VA_ARGS__))

/* Generous per-test limit: the statistical tests insert ~10^6 keys, several
 * times slower under sanitizers. */
#define BK_TEST_TIMEOUT 600

/* splitmix64 (Steele, Lea & Flood 2014): tiny, good enough for test data. */
static inline uint64_t tu_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Fault injection on every allocation (SQLite's habit): an allocator that
 * fails call number tu_alloc.fail_at (counting from 1; 0 or -1: never), or
 * every call for which tu_alloc.fails() says so when that is set, and counts
 * the blocks it has live (a leak shows as live != 0 after a release). */
typedef struct tu_alloc_state {
    long calls, fail_at, live;
    int (*fails)(void);
} tu_alloc_state;
static tu_alloc_state tu_alloc;

static inline void *tu_failing_alloc(void *opaque, size_t size)
{
    (void)opaque;
    tu_alloc.calls++;
    if (tu_alloc.fails ? tu_alloc.fails() : tu_alloc.calls == tu_alloc.fail_at)
        return NULL;
    void *p = malloc(size);
    tu_alloc.live += p != NULL;
    return p;
}

static inline void tu_counting_free(void *opaque, void *p)
{
    (void)opaque;
    if (p) {
        tu_alloc.live--;
        free(p);
    }
}

/* The allocator to hand bk_set_allocator, with the state reset. */
static inline bk_allocator tu_failing_allocator(long fail_at)
{
    tu_alloc.calls = tu_alloc.live = 0;
    tu_alloc.fail_at = fail_at;
    const bk_allocator a = {tu_failing_alloc, tu_counting_free, NULL};
    return a;
}

/* The seed of this run: BK_TEST_SEED, which main.c sets once for the whole
 * run (drawn from the clock unless given) before any test process starts,
 * so that every draw of every test (its keys, and the hash keys tu_filter
 * gives filters made without one) replays from that one value; main.c
 * prints it, and for each failure the command that replays it. what names
 * the draw in a verbose run (CK_VERBOSITY=verbose). */
static inline uint64_t tu_seed(const char *what)
{
    const char *env = getenv("BK_TEST_SEED");
    const uint64_t seed = env ? strtoull(env, NULL, 0) : 0;
    const char *verbosity = getenv("CK_VERBOSITY");
    if (verbosity && strcmp(verbosity, "verbose") == 0)
        fprintf(stderr, "[%s] seed %llu\n", what, (unsigned long long)seed);
    return seed;
}

/* 1 in the sanitizer builds (make check-asan, check-clang-asan, check-tsan
 * and check-clang-tsan set BK_TEST_SKIP_BIG): what those builds prove is that
 * every path is free of memory errors, undefined behaviour and data races,
 * so the statistical and stress tests run there the same paths at smaller
 * sizes and on fewer repetitions; the plain build (make check) runs them in
 * full, which is where their figures (rates, counts, kills) are proven. */
static inline int tu_small(void)
{
    return getenv("BK_TEST_SKIP_BIG") != NULL;
}

/* The first place needle[0 .. strlen) stands in buf[0..len) (a file image,
 * which holds NUL bytes), or NULL. */
static inline uint8_t *tu_find(uint8_t *buf, size_t len, const char *needle)
{
    const size_t n = strlen(needle);
    for (size_t i = 0; n <= len && i <= len - n; i++)
        if (memcmp(buf + i, needle, n) == 0)
            return buf + i;
    return NULL;
}

/* Key number i of a family: "<family>:<i>". Distinct families never collide. */
static inline size_t tu_key(char *buf, size_t cap, const char *family, uint64_t i)
{
    const int n = snprintf(buf, cap, "%s:%llu", family, (unsigned long long)i);
    return n < 0 ? 0 : (size_t)n;
}

/* The variants, as the library's registry lists them (bk_variant_name of
 * 0, 1, ... until NULL): every "every variant" test iterates these, so a new
 * variant is tested without a line here. */
static inline unsigned tu_nvariants(void)
{
    unsigned n = 0;
    while (bk_variant_name((bk_variant)n))
        n++;
    return n;
}

static inline const char *tu_variant(unsigned v)
{
    return bk_variant_name((bk_variant)v);
}

/* 1 when filters of variant v refuse adds (BK_EFULL) once they hold their
 * capacity, found by trying (a filter of capacity 1 given 64 keys): such a
 * variant (cuckoo) cannot be overloaded the way a Bloom array can. */
static inline int tu_variant_bounded(unsigned v)
{
    char text[64], key[16];
    bk_config c;
    bk_filter *f = NULL;
    snprintf(text, sizeof text, "variant=%s capacity=1", tu_variant(v));
    int full = 0;
    if (bk_config_parse(&c, text, NULL, 0) == BK_OK && bk_new(&c, &f) == BK_OK)
        for (int i = 0; i < 64 && !full; i++)
            full = bk_add(f, key, (size_t)snprintf(key, sizeof key, "%d", i)) == BK_EFULL;
    bk_free(f);
    return full;
}

/* The capacity a test that makes `keys` adds gives variant v: its own
 * `capacity` (an array it overloads, a chain it makes grow), or, for a
 * bounded variant, room for every add four times over: a cuckoo table
 * keeps a copy per add, and the copies of one key share its two buckets,
 * so adds that repeat keys (the batch tests repeat each about twice) fill
 * it at about a third of its slots (docs/history.md, "The cuckoo filter"). */
static inline uint64_t tu_capacity_for(unsigned v, uint64_t capacity, uint64_t keys)
{
    return tu_variant_bounded(v) && capacity < 4 * keys ? 4 * keys : capacity;
}

/* The config texts "variant=V layout=L capacity=C <rest>" of every variant
 * in both layouts (in its one layout when it takes no layout key; keys it
 * does not take left out: tu_for_variant), into cfgs (room for max), for a test that adds `keys`
 * keys (C: tu_capacity_for): how many. */
static inline const char *tu_for_variant(const char *text, char *out, size_t cap);
#define TU_CFG_MAX 160
static inline size_t tu_every_variant(char cfgs[][TU_CFG_MAX], size_t max, uint64_t capacity,
                                      uint64_t keys, const char *rest)
{
    size_t n = 0;
    for (unsigned v = 0; v < tu_nvariants(); v++)
        for (int blocked = 0; blocked < 2 && n < max; blocked++) {
            if (blocked && !bk_config_key_applies((bk_variant)v, "layout"))
                continue; /* one layout: once */
            char text[TU_CFG_MAX];
            snprintf(text, sizeof text, "variant=%s layout=%s capacity=%llu %s", tu_variant(v),
                     blocked ? "blocked" : "classic",
                     (unsigned long long)tu_capacity_for(v, capacity, keys), rest);
            tu_for_variant(text, cfgs[n++], TU_CFG_MAX);
        }
    return n;
}

static inline bk_filter *tu_filter(const char *text);

/* tu_filter of a printf-formatted config text. */
static inline bk_filter *tu_filterf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline bk_filter *tu_filterf(const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return tu_filter(text);
}

/* Add keys from .. to-1 of a family (an error fails the test); returns how
 * many were reported new. */
static inline uint64_t tu_add_keys(bk_filter *f, const char *family, uint64_t from, uint64_t to)
{
    char key[64];
    uint64_t added = 0;
    for (uint64_t i = from; i < to; i++) {
        const int rc = bk_add(f, key, tu_key(key, sizeof key, family, i));
        ck_assert_msg(rc >= 0, "adding %s: %s", key, bk_err_name(rc));
        added += rc == 1;
    }
    return added;
}

/* A test case with the standard timeout, whose tests' allocations (not
 * Check's) LeakSanitizer tracks (leaks.h). */
static inline TCase *tu_tcase(const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, BK_TEST_TIMEOUT);
    tcase_add_checked_fixture(tc, tu_leaks_on, tu_leaks_off);
    return tc;
}

/* A suite of one test case (named tcase, in *tc, tu_tcase's) for the caller
 * to fill with tcase_add_test. */
static inline Suite *tu_suite(const char *name, const char *tcase, TCase **tc)
{
    Suite *s = suite_create(name);
    *tc = tu_tcase(tcase);
    suite_add_tcase(s, *tc);
    return s;
}

/* bk_free each filter of a list: tu_free_all(f, g, h). */
static inline void tu_free_array(bk_filter *const *fs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        bk_free(fs[i]);
}
#define tu_free_all(...)                                                                           \
    tu_free_array((bk_filter *const[]){__VA_ARGS__},                                               \
                  sizeof((bk_filter *const[]){__VA_ARGS__}) / sizeof(bk_filter *))

/* tu_filter(text) holding keys from .. to-1 of a family. */
static inline bk_filter *tu_holding(const char *text, const char *family, uint64_t from,
                                    uint64_t to)
{
    bk_filter *f = tu_filter(text);
    tu_add_keys(f, family, from, to);
    return f;
}

/* f's image (bk_save_buffer), malloc'd; its length in *len. */
static inline uint8_t *tu_image(const bk_filter *f, size_t *len)
{
    uint64_t size = 0;
    ck_assert_int_eq(bk_save_size(f, &size), BK_OK);
    uint8_t *buf = malloc((size_t)size);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(bk_save_buffer(f, buf, (size_t)size, len), BK_OK);
    return buf;
}

/* A new filter read back from f's image (bk_save_buffer, bk_load_buffer). */
static inline bk_filter *tu_reloaded(const bk_filter *f)
{
    size_t len = 0;
    uint8_t *buf = tu_image(f, &len);
    bk_filter *g = NULL;
    ck_assert_int_eq(bk_load_buffer(buf, len, &g), BK_OK);
    free(buf);
    return g;
}

/* How many of keys from .. to-1 of a family f reports present. */
static inline uint64_t tu_count_present(const bk_filter *f, const char *family, uint64_t from,
                                        uint64_t to)
{
    char key[64];
    uint64_t n = 0;
    for (uint64_t i = from; i < to; i++)
        n += bk_contains(f, key, tu_key(key, sizeof key, family, i)) == 1;
    return n;
}

/* A counting filter holds a multiset: key (new to f) added twice and removed
 * once is still there; removed again, it is gone. */
static inline void tu_assert_multiset(bk_filter *f, const char *key)
{
    const size_t n = strlen(key);
    ck_assert_int_eq(bk_add(f, key, n), 1);
    ck_assert_int_eq(bk_add(f, key, n), 0);
    ck_assert_int_eq(bk_remove(f, key, n), BK_OK);
    ck_assert_int_eq(bk_contains(f, key, n), 1);
    ck_assert_int_eq(bk_remove(f, key, n), BK_OK);
    ck_assert_int_eq(bk_contains(f, key, n), 0);
}

/* A filter from config text, failing the test on any error. */
/* A hash key for a filter whose config text gives none, drawn from the
 * test's seed (tu_seed, printed once per test), not from getrandom: a
 * statistical test that fails replays with its hash keys. */
static inline void tu_hash_key(bk_config *cfg)
{
    static uint64_t state;
    static int seeded;
    if (!seeded) {
        state = tu_seed("hash keys") ^ UINT64_C(0x68617368206b6579);
        seeded = 1;
    }
    for (int i = 0; i < 16; i += 8) {
        const uint64_t x = tu_next(&state);
        memcpy(cfg->key + i, &x, 8);
    }
    cfg->has_key = 1;
}

/* text with the keys its variant does not take left out (the key table
 * says which: bk_config_key_applies), into out: one text ("... fpr=0.01
 * layout=blocked") then serves every variant, each taking what it can
 * (RedisBloom's structures size as RedisBloom does: no fpr for rbcuckoo,
 * no layout for either). Keys are "key=value" words separated by spaces. */
static inline const char *tu_for_variant(const char *text, char *out, size_t cap)
{
    const char *v = strstr(text, "variant=");
    bk_variant variant = BK_VARIANT_STANDARD;
    if (v) {
        for (unsigned i = 0; bk_variant_name((bk_variant)i); i++) {
            const size_t n = strlen(bk_variant_name((bk_variant)i));
            if (strncmp(v + 8, bk_variant_name((bk_variant)i), n) == 0 &&
                (v[8 + n] == '\0' || v[8 + n] == ' '))
                variant = (bk_variant)i;
        }
    }
    size_t at = 0;
    out[0] = '\0';
    for (const char *p = text; *p;) {
        while (*p == ' ')
            p++;
        const char *end = p + strcspn(p, " "), *eq = memchr(p, '=', (size_t)(end - p));
        char key[32] = "";
        if (eq && (size_t)(eq - p) < sizeof key)
            memcpy(key, p, (size_t)(eq - p)), key[eq - p] = '\0';
        if (end > p && (!eq || bk_config_key_applies(variant, key)) && at < cap)
            at += (size_t)snprintf(out + at, cap - at, "%s%.*s", at ? " " : "", (int)(end - p), p);
        p = end;
    }
    return out;
}

static inline bk_filter *tu_filter(const char *given)
{
    bk_config cfg;
    char err[256], text[512];
    tu_for_variant(given, text, sizeof text);
    const int rc = bk_config_parse(&cfg, text, err, sizeof err);
    ck_assert_msg(rc == BK_OK, "config '%s': %s", text, err);
    if (!cfg.has_key)
        tu_hash_key(&cfg);
    bk_filter *f = NULL;
    const int nrc = bk_new(&cfg, &f);
    ck_assert_msg(nrc == BK_OK, "bk_new(%s): %s", text, bk_strerror(nrc));
    return f;
}

/* ---- files and filter comparison (persistence suites) ---- */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/filter_impl.h"

/* A fresh private directory under $TMPDIR (or /tmp); remove with tu_rmtree. */
static inline char *tu_tmpdir(void)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *path = malloc(strlen(base) + 32);
    ck_assert_ptr_nonnull(path);
    sprintf(path, "%s/bktest.XXXXXX", base);
    ck_assert_ptr_nonnull(mkdtemp(path));
    return path;
}

/* "dir/name" in a new malloc'd string. */
static inline char *tu_path(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    ck_assert_ptr_nonnull(p);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

/* Remove every file in dir (one level) and dir itself; frees dir. */
static inline void tu_rmtree(char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[4096];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(dir);
    free(dir);
}

/* Number of entries in dir other than . and .. */
static inline int tu_count_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

/* Whole file into memory (malloc); *len its size. */
static inline uint8_t *tu_read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    ck_assert_msg(fp != NULL, "cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    const long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    *len = (size_t)n;
    return buf;
}

static inline void tu_write_file(const char *path, const uint8_t *buf, size_t len)
{
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(buf, 1, len, fp), len);
    ck_assert_int_eq(fclose(fp), 0);
}

/* 1 when a and b have the same configuration, hash key, slices and payload
 * bytes: then they answer every query identically. */
static inline int tu_same_filter(const bk_filter *a, const bk_filter *b)
{
    if (a->ops != b->ops || memcmp(&a->cfg, &b->cfg, sizeof a->cfg) != 0)
        return 0;
    const uint32_t n = a->ops->slice_count(a);
    if (b->ops->slice_count(b) != n)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        bk_slice_view x, y;
        a->ops->slice_view(a, i, &x);
        b->ops->slice_view(b, i, &y);
        if (x.m != y.m || x.k != y.k || x.nbytes != y.nbytes || x.set_bits != y.set_bits ||
            x.saturated != y.saturated || memcmp(x.data, y.data, (size_t)x.nbytes) != 0)
            return 0;
    }
    return 1;
}

/* The file at path loads as a filter that answers every key as f does
 * (tu_same_filter); what names the case in the failure message. */
static inline void tu_assert_file_holds(const char *path, const bk_filter *f, const char *what)
{
    bk_filter *g = NULL;
    ck_assert_int_eq(bk_load(path, &g), BK_OK);
    ck_assert_msg(tu_same_filter(f, g), "%s: %s does not hold the filter", what, path);
    bk_free(g);
}

#endif
