/*
 * test_alloc.c - fault injection on every allocation (SQLite's habit): fail
 * the N-th allocation for N = 1, 2, ... until the scenario succeeds; every
 * failure must return BK_ENOMEM, leave the filter as it was, and leak nothing.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit_redisbloom.h"
#include "suites.h"
#include "testutil.h"

/* Create a filter and add enough keys that scalable grows several times.
 * Returns 1 if an allocation failure was met (and handled), 0 if it ran clean. */
static int scenario(const char *variant)
{
    char cfg[96], key[32];
    snprintf(cfg, sizeof cfg, "variant=%s capacity=16 fpr=0.01", variant);
    bk_config c;
    ck_assert_int_eq(bk_config_parse(&c, cfg, NULL, 0), BK_OK);
    bk_filter *f = (bk_filter *)&c;
    const int rc = bk_new(&c, &f);
    if (rc != BK_OK) {
        ck_assert_int_eq(rc, BK_ENOMEM);
        ck_assert_ptr_null(f);
        ck_assert_int_eq(tu_alloc.live, 0);
        return 1;
    }
    int failed = 0;
    for (uint64_t i = 0; i < 400 && !failed; i++) {
        const size_t len = tu_key(key, sizeof key, "fi", i);
        bk_filter_stats before, after;
        bk_stats(f, &before);
        const int arc = bk_add(f, key, len);
        if (arc < 0) {
            ck_assert_int_eq(arc, BK_ENOMEM);
            bk_stats(f, &after);
            ck_assert_uint_eq(before.set_bits, after.set_bits);
            ck_assert_uint_eq(before.keys, after.keys);
            ck_assert_uint_eq(before.slices, after.slices);
            failed = 1;
        }
    }
    bk_free(f);
    ck_assert_int_eq(tu_alloc.live, 0);
    return failed;
}

START_TEST(every_allocation_failure_is_reported_and_leaks_nothing)
{
    const char *variant = _i == 0 ? "standard" : _i == 1 ? "counting" : "scalable";
    long n = 1;
    for (; n < 10000; n++) {
        const bk_allocator failing = tu_failing_allocator(n);
        ck_assert_int_eq(bk_set_allocator(&failing), BK_OK);
        if (!scenario(variant))
            break;
    }
    fprintf(stderr, "[alloc %s] %ld allocation points failed in turn, then a clean run of %ld\n",
            variant, n - 1, tu_alloc.calls);
    ck_assert_int_gt(n, 1);
    ck_assert_int_lt(n, 10000);
    if (_i == 2)
        ck_assert_int_gt(n, 4); /* scalable allocated slices while adding */
    bk_set_allocator(NULL);
}
END_TEST

/* A filter frees with the allocator it was created with. */
START_TEST(filter_keeps_its_allocator)
{
    const bk_allocator failing = tu_failing_allocator(-1);
    ck_assert_int_eq(bk_set_allocator(&failing), BK_OK);
    bk_filter *f = tu_filter("variant=scalable capacity=10");
    ck_assert_int_gt(tu_alloc.live, 0);
    ck_assert_int_eq(bk_set_allocator(NULL), BK_OK);
    tu_add_keys(f, "a", 0, 200);
    bk_free(f);
    ck_assert_int_eq(tu_alloc.live, 0);
    const bk_allocator half = {tu_failing_alloc, NULL, NULL};
    ck_assert_int_eq(bk_set_allocator(&half), BK_EINVAL);
}
END_TEST

/* An allocator that counts the bytes live. Each block carries its size and
 * lands 16, 32, 48 or 64 bytes past malloc's (in turn), so that blocks sit
 * differently on their cache lines. */
static size_t held_bytes, pad_turn;
static void *sized_alloc(void *opaque, size_t n)
{
    (void)opaque;
    const size_t pad = 16 * (1 + pad_turn++ % 4);
    unsigned char *raw = malloc(n + pad);
    if (!raw)
        return NULL;
    const size_t meta[2] = {n, pad};
    memcpy(raw + pad - sizeof meta, meta, sizeof meta);
    held_bytes += n;
    return raw + pad;
}
static size_t sized_meta(void *q, size_t *pad)
{
    size_t meta[2];
    memcpy(meta, (unsigned char *)q - sizeof meta, sizeof meta);
    *pad = meta[1];
    return meta[0];
}
static void sized_free(void *opaque, void *q)
{
    (void)opaque;
    if (!q)
        return;
    size_t pad;
    held_bytes -= sized_meta(q, &pad);
    free((unsigned char *)q - pad);
}

/* What bk_stats says a filter holds (its arrays, `bytes`, and its own
 * structures, `state_bytes`) is what it took from its allocator: hosts
 * (the Redis module's MEMORY USAGE) add the two. */
START_TEST(stats_count_what_a_filter_holds)
{
    static const char *const variants[] = {"standard", "counting",   "scalable", "window",
                                           "cuckoo",   "expandable", "rbchain",  "rbcuckoo"};
    const char *variant = variants[_i];
    const bk_allocator sized = {sized_alloc, sized_free, NULL};
    ck_assert_int_eq(bk_set_allocator(&sized), BK_OK);
    held_bytes = 0;
    char cfg[128];
    snprintf(cfg, sizeof cfg, "variant=%s capacity=%s fpr=0.01", variant,
             strcmp(variant, "scalable") == 0 || strcmp(variant, "window") == 0 ? "2000"
                                                                                : "100000");
    bk_filter *f = tu_filter(cfg);
    tu_add_keys(f, "h", 0, 20000); /* scalable and window grow slices */
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    const uint64_t counted = st.state_bytes + st.bytes;
    fprintf(stderr, "[alloc %s] held %zu bytes, stats count %llu (%u slices)\n", variant,
            held_bytes, (unsigned long long)counted, st.slices);
    ck_assert_uint_gt(st.state_bytes, 0);
    ck_assert_uint_le(counted, held_bytes);
    /* the rest: alignment (BK_BLOCK_BYTES and a pointer an array) and small tables */
    ck_assert_uint_le(held_bytes, counted + counted / 20 + 200 * (uint64_t)st.slices);
    bk_free(f);
    ck_assert_uint_eq(held_bytes, 0);
    bk_set_allocator(NULL);
}
END_TEST

/* A host's move (as RedisModule_DefragAlloc): the block copied into a new
 * one and freed; every other block left where it is when *arg is 1. */
static long moves, offers;
static void *move_block(void *block, void *arg)
{
    offers++;
    if (*(const int *)arg && offers % 2 == 0)
        return NULL;
    size_t pad;
    const size_t n = sized_meta(block, &pad);
    void *to = sized_alloc(NULL, n);
    if (!to)
        return NULL;
    memcpy(to, block, n);
    sized_free(NULL, block);
    moves++;
    return to;
}

/* bk_defrag moves a filter's arrays, each array's contents and every
 * answer unchanged, whichever of them the host moves and however the new
 * blocks sit on their cache lines; nothing leaks or is freed twice, and the
 * filter goes on growing and answering after. */
START_TEST(defrag_moves_arrays_and_changes_no_answer)
{
    static const char *const configs[] = {
        "variant=standard capacity=20000",        "variant=standard capacity=20000 layout=blocked",
        "variant=counting capacity=20000",        "variant=scalable capacity=500",
        "variant=window window=1h capacity=2000", "variant=cuckoo capacity=20000",
        "variant=expandable capacity=500",        "variant=rbchain capacity=500",
        "variant=rbcuckoo capacity=2000",         NULL /* RedisBloom's own cuckoo filter */};
    const bk_allocator sized = {sized_alloc, sized_free, NULL};
    ck_assert_int_eq(bk_set_allocator(&sized), BK_OK);
    held_bytes = 0;
    bk_filter *f = NULL;
    if (configs[_i / 2])
        f = tu_filter(configs[_i / 2]);
    else
        ck_assert_int_eq(bk_filter_rbcuckoo_new(2000, 2, 20, 1, 0, &f), BK_OK);
    tu_add_keys(f, "d", 0, 6000); /* chains grow several arrays */
    bk_filter_stats before;
    ck_assert_int_eq(bk_stats(f, &before), BK_OK);
    const size_t held = held_bytes;
    uint64_t size;
    ck_assert_int_eq(bk_save_size(f, &size), BK_OK);
    unsigned char *image = malloc((size_t)size), *again = malloc((size_t)size);
    size_t len, len2;
    ck_assert_ptr_nonnull(image);
    ck_assert_ptr_nonnull(again);
    ck_assert_int_eq(bk_save_buffer(f, image, (size_t)size, &len), BK_OK);
    int some = _i % 2; /* 1: every other block stays */
    moves = offers = 0;
    uint32_t i = 0;
    while (bk_defrag(f, i, move_block, &some) == BK_OK)
        i++;
    ck_assert_uint_eq(i, before.slices);
    ck_assert_int_eq(bk_defrag(f, i, move_block, &some), BK_ERANGE);
    ck_assert_int_eq(offers, (long)before.slices);
    ck_assert_int_eq(moves, some ? (long)(before.slices + 1) / 2 : (long)before.slices);
    ck_assert_uint_eq(held_bytes, held);
    ck_assert_int_eq(bk_save_buffer(f, again, (size_t)size, &len2), BK_OK);
    ck_assert_uint_eq(len, len2);
    if (!strstr(configs[_i / 2] ? configs[_i / 2] : "",
                "window")) /* a window's image dates itself */
        ck_assert_mem_eq(image, again, len);
    ck_assert_uint_eq(tu_count_present(f, "d", 0, 6000), 6000);
    tu_add_keys(f, "e", 0, 3000);
    ck_assert_uint_eq(tu_count_present(f, "e", 0, 3000), 3000);
    free(image);
    free(again);
    bk_free(f);
    ck_assert_uint_eq(held_bytes, 0);
    ck_assert_int_eq(bk_defrag(NULL, 0, move_block, &some), BK_EINVAL);
    bk_set_allocator(NULL);
}
END_TEST

Suite *alloc_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("alloc", "fault_injection", &tc);
    tcase_add_loop_test(tc, every_allocation_failure_is_reported_and_leaks_nothing, 0, 3);
    tcase_add_test(tc, filter_keeps_its_allocator);
    tcase_add_loop_test(tc, stats_count_what_a_filter_holds, 0, 8);
    tcase_add_loop_test(tc, defrag_moves_arrays_and_changes_no_answer, 0, 20);
    return s;
}
