/*
 * test_mmap.c - mapped filters: read-only refuses writes, read-write adds reach
 * the file through bk_sync (and bk_free), recovery of a writable mapping that
 * crashed before syncing, scalable growth past the mapped slices, and the size
 * figures: a filter of more than 2^32 bits, and a 2 GB filter mapped without
 * growing the heap.
 */
#include <malloc.h>
#include <sys/wait.h>
#include <time.h>

#include "suites.h"
#include "common/bits.h"
#include "testutil.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t heap_in_use(void)
{
    const struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* Each test's scratch directory and the filter file in it (a checked
 * fixture: made before and removed after every test). */
static char *dir, *path;

static void setup(void)
{
    dir = tu_tmpdir();
    path = tu_path(dir, "f.bkf");
}

static void teardown(void)
{
    free(path);
    tu_rmtree(dir);
}

START_TEST(readonly_mapping_answers_and_refuses_writes)
{
    char cfgs[16][TU_CFG_MAX];
    const size_t ncfgs = tu_every_variant(cfgs, 16, 1000, 3000, "");
    for (size_t v = 0; v < ncfgs; v++) {
        bk_filter *f = tu_filter(cfgs[v]), *g = NULL;
        char key[32];
        tu_add_keys(f, "m", 0, 3000);
        ck_assert_int_eq(bk_save(f, path), BK_OK);
        ck_assert_int_eq(bk_open_mmap(path, BK_MAP_READONLY, &g), BK_OK);
        ck_assert(tu_same_filter(f, g));
        for (uint64_t i = 0; i < 3000; i++)
            ck_assert_int_eq(bk_contains(g, key, tu_key(key, sizeof key, "m", i)), 1);
        ck_assert_int_eq(bk_add(g, "new", 3), BK_EREADONLY);
        ck_assert_int_eq(bk_clear(g), BK_EREADONLY);
        bk_config c;
        ck_assert_int_eq(bk_get_config(g, &c), BK_OK);
        ck_assert_int_eq(bk_remove(g, "m:1", 3),
                         bk_variant_removes(c.variant) ? BK_EREADONLY : BK_ENOTSUP);
        ck_assert_int_eq(bk_merge(g, f), BK_EREADONLY);
        ck_assert_int_eq(bk_sync(g), BK_EREADONLY);
        bk_free(g);
        bk_free(f);
    }
}
END_TEST

START_TEST(writable_mapping_persists_through_sync_and_free)
{
    for (int v = 0; v < 2; v++) {
        bk_filter *f = tu_filter(v ? "variant=counting capacity=20000" : "capacity=20000");
        bk_filter *g = NULL, *h = NULL;
        ck_assert_int_eq(bk_save(f, path), BK_OK);
        ck_assert_int_eq(bk_open_mmap(path, BK_MAP_WRITE, &g), BK_OK);
        char key[32];
        for (uint64_t i = 0; i < 5000; i++) {
            const size_t n = tu_key(key, sizeof key, "w", i);
            ck_assert_int_eq(bk_add(g, key, n), bk_add(f, key, n));
        }
        ck_assert_int_eq(bk_sync(g), BK_OK);
        ck_assert_int_eq(bk_load(path, &h), BK_OK); /* checksums valid after sync */
        ck_assert(tu_same_filter(f, h));
        bk_free(h);
        for (uint64_t i = 5000; i < 6000; i++) {
            const size_t n = tu_key(key, sizeof key, "w", i);
            bk_add(g, key, n);
            bk_add(f, key, n);
        }
        if (v)
            ck_assert_int_eq(bk_remove(g, "w:7", 3), bk_remove(f, "w:7", 3));
        bk_free(g); /* syncs */
        tu_assert_file_holds(path, f, "synced at bk_free");
        bk_free(f);
    }
}
END_TEST

/* A process that adds through a writable mapping and dies before syncing:
 * the stale checksum is caught; BK_MAP_NOVERIFY recovers every key. */
START_TEST(crashed_writable_mapping_is_recoverable)
{
    bk_filter *f = tu_filter("capacity=10000");
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    const pid_t pid = fork();
    if (pid == 0) {
        bk_filter *g = NULL;
        if (bk_open_mmap(path, BK_MAP_WRITE, &g) != BK_OK)
            _exit(1);
        char key[32];
        for (uint64_t i = 0; i < 1000; i++)
            bk_add(g, key, tu_key(key, sizeof key, "c", i));
        _exit(0); /* no sync, no free: a crash */
    }
    int status;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    bk_filter *g = NULL;
    ck_assert_int_eq(bk_load(path, &g), BK_ECORRUPT);
    ck_assert_int_eq(bk_open_mmap(path, BK_MAP_READONLY, &g), BK_ECORRUPT);
    ck_assert_int_eq(bk_open_mmap(path, BK_MAP_WRITE | BK_MAP_NOVERIFY, &g), BK_OK);
    char key[32];
    for (uint64_t i = 0; i < 1000; i++)
        ck_assert_int_eq(bk_contains(g, key, tu_key(key, sizeof key, "c", i)), 1);
    ck_assert_int_eq(bk_sync(g), BK_OK); /* recounts and re-checksums */
    bk_free(g);
    ck_assert_int_eq(bk_load(path, &g), BK_OK);
    bk_filter_stats st;
    bk_stats(g, &st);
    ck_assert_uint_gt(st.set_bits, 1000); /* the crashed process's bits, counted */
    for (uint64_t i = 0; i < 1000; i++)
        ck_assert_int_eq(bk_contains(g, key, tu_key(key, sizeof key, "c", i)), 1);
    bk_free(g);
    bk_free(f);
}
END_TEST

/* A mapped scalable filter that grows beyond its file's slices is saved anew. */
START_TEST(mapped_scalable_growth_saves_anew)
{
    bk_filter *f = tu_filter("variant=scalable capacity=100"), *g = NULL, *h = NULL;
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    ck_assert_int_eq(bk_open_mmap(path, BK_MAP_WRITE, &g), BK_OK);
    char key[32];
    for (uint64_t i = 0; i < 2000; i++)
        ck_assert_int_ge(bk_add(g, key, tu_key(key, sizeof key, "g", i)), 0);
    ck_assert_int_eq(bk_sync(g), BK_OK);
    for (uint64_t i = 2000; i < 2100; i++)
        bk_add(g, key, tu_key(key, sizeof key, "g", i));
    ck_assert_int_eq(bk_sync(g), BK_OK); /* detached: saves again */
    ck_assert_int_eq(bk_load(path, &h), BK_OK);
    ck_assert(tu_same_filter(g, h));
    bk_filter_stats st;
    bk_stats(h, &st);
    ck_assert_uint_gt(st.slices, 3);
    bk_free(g);
    bk_free(h);
    bk_free(f);
    ck_assert_int_eq(tu_count_files(dir), 1);
}
END_TEST

/* More than 2^32 bits: saves, loads and maps, keys probing beyond bit 2^32. */
START_TEST(filter_beyond_2_pow_32_bits)
{
    bk_filter *f = tu_filter("capacity=450000000 fpr=0.01 key=0f0e0d0c0b0a09080706050403020100");
    bk_filter_stats st;
    bk_stats(f, &st);
    ck_assert_uint_gt(st.bits, UINT64_C(1) << 32);
    char key[32];
    tu_add_keys(f, "b", 0, 100000);
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    bk_filter *g = NULL, *h = NULL;
    ck_assert_int_eq(bk_load(path, &g), BK_OK);
    ck_assert_int_eq(bk_open_mmap(path, BK_MAP_READONLY, &h), BK_OK);
    ck_assert(tu_same_filter(f, g));
    ck_assert(tu_same_filter(f, h));
    for (uint64_t i = 0; i < 100000; i++) {
        const size_t n = tu_key(key, sizeof key, "b", i);
        ck_assert_int_eq(bk_contains(g, key, n), 1);
        ck_assert_int_eq(bk_contains(h, key, n), 1);
    }
    /* Bits past 2^32 are really set in the saved payload. */
    bk_slice_view v;
    g->ops->slice_view(g, 0, &v);
    const uint64_t high =
        bk_popcount(v.data + (UINT64_C(1) << 29), (size_t)(v.nbytes - (UINT64_C(1) << 29)));
    fprintf(stderr, "[2^32+] m = %llu bits, %llu bytes on disk, %llu bits set beyond bit 2^32\n",
            (unsigned long long)st.bits, (unsigned long long)v.nbytes, (unsigned long long)high);
    ck_assert_uint_gt(high, 1000);
    bk_free(f);
    bk_free(g);
    bk_free(h);
}
END_TEST

/* A 2 GB standard filter maps in well under a second (checksum verified) and
 * does not grow the heap by its size. Figures printed; sizes asserted. */
START_TEST(two_gigabyte_filter_maps_without_heap)
{
    bk_filter *f = tu_holding("capacity=1800000000 fpr=0.01", "t", 0, 10000);
    char key[32];
    double t0 = now_s();
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    const double save_s = now_s() - t0;
    bk_free(f);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_ge(st.st_size, INT64_C(2) << 30);

    const size_t heap0 = heap_in_use();
    bk_filter *g = NULL;
    t0 = now_s();
    ck_assert_int_eq(bk_open_mmap(path, BK_MAP_READONLY, &g), BK_OK);
    const double open_s = now_s() - t0;
    const size_t heap1 = heap_in_use();
    t0 = now_s();
    bk_filter *h = NULL;
    ck_assert_int_eq(bk_open_mmap(path, BK_MAP_READONLY | BK_MAP_NOVERIFY, &h), BK_OK);
    const double open_nv_s = now_s() - t0;
    for (uint64_t i = 0; i < 10000; i++)
        ck_assert_int_eq(bk_contains(g, key, tu_key(key, sizeof key, "t", i)), 1);
    fprintf(stderr,
            "[mmap 2 GB] file %lld bytes; save %.2f s; bk_open_mmap with checksum %.3f s, "
            "without %.3f s; heap growth %zu bytes\n",
            (long long)st.st_size, save_s, open_s, open_nv_s, heap1 - heap0);
    ck_assert_uint_lt(heap1 - heap0, 1 << 20);
    bk_free(g);
    bk_free(h);
}
END_TEST

Suite *mmap_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("mmap", "mapped", &tc);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, readonly_mapping_answers_and_refuses_writes);
    tcase_add_test(tc, writable_mapping_persists_through_sync_and_free);
    tcase_add_test(tc, crashed_writable_mapping_is_recoverable);
    tcase_add_test(tc, mapped_scalable_growth_saves_anew);
    TCase *big = tu_tcase("big");
    tcase_add_checked_fixture(big, setup, teardown);
    tcase_add_test(big, filter_beyond_2_pow_32_bits);
    tcase_add_test(big, two_gigabyte_filter_maps_without_heap);
    /* Multi-gigabyte files cost I/O, not coverage: the sanitizer builds
     * skip them (BK_TEST_SKIP_BIG=1); make check runs them. */
    if (getenv("BK_TEST_SKIP_BIG"))
        fprintf(stderr, "mmap: the big-file tests are skipped here (BK_TEST_SKIP_BIG)\n");
    else
        suite_add_tcase(s, big);
    return s;
}
