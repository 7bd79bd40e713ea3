/*
 * test_blocked.c - the blocked layout (layout=blocked): every probe of a key in
 * one 64-byte line, sizing that reaches the target rate under the Poisson
 * block model, measured rates that agree with it, every variant, and files
 * that keep the layout.
 */
#include <math.h>

#include "common/alloc.h"
#include "common/sizing.h"
#include "standard/standard.h"
#include "suites.h"
#include "testutil.h"

/* Every probe of a key falls in one 64-byte line of the payload (which starts
 * on a line): add one key at a time to an empty slice and look at which bytes
 * changed. */
START_TEST(probes_of_a_key_share_one_cache_line)
{
    const bk_allocator a = bk_current_allocator();
    bk_std_slice s;
    bk_config cfg;
    ck_assert_int_eq(bk_config_parse(&cfg, "capacity=100000 fpr=0.001 layout=blocked", NULL, 0),
                     BK_OK);
    ck_assert_int_eq(bk_std_slice_init(&s, &cfg, &a), BK_OK);
    ck_assert_uint_eq(s.shape.block, 512);
    ck_assert_uint_eq(s.shape.m % 512, 0);
    ck_assert_uint_eq((uintptr_t)s.bits % 64, 0);
    bk_hashkey key;
    const uint8_t kb[16] = {11, 0, 0, 0, 0, 0, 0, 0, 22};
    bk_hashkey_init(&key, kb);
    char buf[48];
    for (uint64_t n = 0; n < 300; n++) {
        bk_std_slice_clear(&s);
        bk_hash h;
        bk_hash_key(BK_HASH_SIPHASH24, &key, buf, tu_key(buf, sizeof buf, "line", n), &h);
        ck_assert_int_eq(bk_std_slice_add(&s, &h), 1);
        uint64_t first = UINT64_MAX, last = 0, set = 0;
        for (uint64_t i = 0; i < s.shape.nbytes; i++)
            if (atomic_load(&s.bits[i])) {
                first = first < i ? first : i;
                last = i;
                set += (uint64_t)__builtin_popcount(atomic_load(&s.bits[i]));
            }
        ck_assert_uint_eq(first / 64, last / 64);
        ck_assert_uint_ge(set, 1);
        ck_assert_uint_le(set, s.shape.k);
        ck_assert_uint_eq(bk_std_slice_contains(&s, &h), 1);
    }
    bk_std_slice_release(&s, &a);
}
END_TEST

/* Sizing: blocked m is whole blocks, its model rate reaches p, it needs more
 * bits than classic, and at classic's own m and k the model predicts a
 * higher rate than classic's (crowded blocks). */
START_TEST(sizing_accounts_for_blocks)
{
    const double ps[] = {0.1, 0.01, 1e-4, 1e-6};
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
        bk_config c;
        bk_config_init(&c);
        c.capacity = 1000000;
        c.fpr = ps[i];
        bk_plan classic, blocked;
        ck_assert_int_eq(bk_plan_config(&c, &classic), BK_OK);
        c.layout = BK_LAYOUT_BLOCKED;
        ck_assert_int_eq(bk_plan_config(&c, &blocked), BK_OK);
        ck_assert_uint_eq(blocked.bits % 512, 0);
        ck_assert_double_le(blocked.expected_fpr, ps[i]);
        /* the fewest blocks: one block less misses p */
        ck_assert_double_gt(bk_rate_blocked(blocked.bits - 512, blocked.k, c.capacity, 512), ps[i]);
        ck_assert_uint_gt(blocked.bits, classic.bits);
        ck_assert_double_gt(bk_rate_blocked(classic.bits / 512 * 512, classic.k, c.capacity, 512),
                            bk_rate_after(classic.bits / 512 * 512, classic.k, c.capacity));
        fprintf(stderr, "[blocked sizing] p=%g: classic %.2f bits/key k=%u, blocked %.2f k=%u\n",
                ps[i], classic.bits_per_key, classic.k, blocked.bits_per_key, blocked.k);
        /* counting: 128 four-bit counters per block, 4 bits per cell */
        c.variant = BK_VARIANT_COUNTING;
        bk_plan cnt;
        ck_assert_int_eq(bk_plan_config(&c, &cnt), BK_OK);
        ck_assert_uint_eq(cnt.bits % 128, 0);
        ck_assert_uint_eq(cnt.bytes, cnt.bits / 2);
        ck_assert_double_le(cnt.expected_fpr, ps[i]);
    }
    ck_assert_double_eq(bk_rate_blocked(100, 3, 10, 512), 1.0);
    ck_assert_double_eq(bk_rate_blocked(1024, 3, 0, 512), 0.0);
    ck_assert_int_eq(bk_plan_config(NULL, NULL), BK_EINVAL);
}
END_TEST

/* Every variant: no false negative, the cardinality estimate within 0.5%,
 * and the rate measured on 400,000 absent keys within 5 standard
 * deviations (plus 10%) of its model's prediction at the number of keys
 * added, and of what bk_stats estimates from the cells. */
START_TEST(measured_rate_matches_the_model)
{
    enum { N = 40000, PROBES = 400000 };
    for (unsigned v = 0; v < tu_nvariants(); v++) {
        if (!bk_config_key_applies((bk_variant)v, "layout"))
            continue; /* RedisBloom's structures: their one layout */
        char text[160];
        snprintf(text, sizeof text, "variant=%s layout=blocked capacity=%d fpr=0.01", tu_variant(v),
                 N);
        bk_filter *f = tu_filter(text);
        char key[48];
        for (uint64_t i = 0; i < N; i++)
            ck_assert_int_ge(bk_add(f, key, tu_key(key, sizeof key, "in", i)), 0);
        ck_assert_uint_eq(tu_count_present(f, "in", 0, N), N);
        uint64_t fp = 0;
        for (uint64_t i = 0; i < PROBES; i++)
            fp += bk_contains(f, key, tu_key(key, sizeof key, "out", i)) == 1;
        bk_filter_stats st;
        ck_assert_int_eq(bk_stats(f, &st), BK_OK);
        const double rate = (double)fp / PROBES;
        for (uint32_t i = 0; i < st.slices; i++) {
            bk_slice_view sv;
            f->ops->slice_view(f, i, &sv);
            ck_assert_uint_gt(sv.block, 0);
            ck_assert_uint_eq(sv.m % sv.block, 0);
        }
        /* the variant's own model at the keys added (a Bloom array's is
         * bk_rate_blocked, compounded over a chain's slices) */
        const double model = st.model_fpr;
        const double sigma = sqrt(model * (1 - model) / PROBES);
        fprintf(stderr, "[blocked %s] measured %.5f, model %.5f, bk_stats %.5f, %.2f bits/key\n",
                tu_variant(v), rate, model, st.est_fpr, 8.0 * (double)st.bytes / N);
        ck_assert_double_le(fabs(rate - model), 5 * sigma + 0.1 * model);
        ck_assert_double_le(fabs(st.est_fpr - model), 0.25 * model);
        ck_assert_double_le(rate, 0.0125);
        /* The cardinality estimate counts the in-block collisions of a key's
         * own probes (the classic formula reads ~1% low here). */
        ck_assert_double_le(fabs(st.est_cardinality - N), 0.005 * N);
        bk_free(f);
    }
}
END_TEST

/* Counting keeps removal exact in the blocked layout. */
START_TEST(counting_blocked_removes_exactly)
{
    bk_filter *f =
        tu_holding("variant=counting layout=blocked capacity=20000 fpr=0.001", "k", 0, 20000);
    char key[48];
    for (uint64_t i = 0; i < 20000; i += 2)
        ck_assert_int_eq(bk_remove(f, key, tu_key(key, sizeof key, "k", i)), BK_OK);
    for (uint64_t i = 1; i < 20000; i += 2)
        ck_assert_int_eq(bk_contains(f, key, tu_key(key, sizeof key, "k", i)), 1);
    bk_filter_stats st;
    bk_stats(f, &st);
    ck_assert_uint_eq(st.keys, 10000);
    bk_free(f);
}
END_TEST

/* More probes than a block has bits (k pinned with m: a block's bits are
 * probed again) still add, answer and count as one key each, singly and in
 * batches. */
START_TEST(more_probes_than_a_block_has_bits)
{
    bk_filter *f = tu_holding("variant=standard layout=blocked bits=4096 hashes=1000 capacity=8",
                              "many", 0, 4);
    ck_assert_uint_eq(tu_count_present(f, "many", 0, 4), 4);
    const void *keys[] = {"batch-a", "batch-b"};
    const size_t lens[] = {7, 7};
    int res[2];
    ck_assert_int_eq(bk_add_batch(f, keys, lens, 2, res), BK_OK);
    ck_assert_int_eq(bk_contains(f, "batch-b", 7), 1);
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_uint_eq(st.keys, 4 + (uint64_t)res[0] + (uint64_t)res[1]);
    bk_free(f);
}
END_TEST

/* Files keep the layout (header byte 18 = 1) and every answer, through load
 * and both mappings; the layout shows in the config read back. */
START_TEST(files_keep_the_layout)
{
    char *dir = tu_tmpdir();
    for (unsigned v = 0; v < tu_nvariants(); v++) {
        if (!bk_config_key_applies((bk_variant)v, "layout"))
            continue; /* RedisBloom's structures: their one layout */
        char text[160];
        snprintf(text, sizeof text, "variant=%s layout=blocked capacity=3000 fpr=0.01",
                 tu_variant(v));
        bk_filter *f = tu_filter(text);
        char key[48];
        for (uint64_t i = 0; i < 9000; i++) /* scalable: several slices */
            bk_add(f, key, tu_key(key, sizeof key, "in", i));
        char *path = tu_path(dir, tu_variant(v));
        ck_assert_int_eq(bk_save(f, path), BK_OK);
        size_t len;
        uint8_t *bytes = tu_read_file(path, &len);
        ck_assert_ptr_nonnull(tu_find(bytes, len, " layout=blocked")); /* the text says */
        free(bytes);
        for (int how = 0; how < 3; how++) {
            bk_filter *g = NULL;
            const int rc = how == 0   ? bk_load(path, &g)
                           : how == 1 ? bk_open_mmap(path, BK_MAP_READONLY, &g)
                                      : bk_open_mmap(path, BK_MAP_WRITE, &g);
            ck_assert_int_eq(rc, BK_OK);
            bk_config c;
            bk_get_config(g, &c);
            ck_assert_int_eq(c.layout, BK_LAYOUT_BLOCKED);
            ck_assert(tu_same_filter(f, g));
            for (uint64_t i = 0; i < 20000; i++) {
                const size_t n = tu_key(key, sizeof key, i < 9000 ? "in" : "out", i);
                ck_assert_int_eq(bk_contains(g, key, n), bk_contains(f, key, n));
            }
            bk_free(g);
        }
        free(path);
        bk_free(f);
    }
    tu_rmtree(dir);
}
END_TEST

START_TEST(config_names_the_layout)
{
    bk_config c;
    char err[200];
    ck_assert_int_eq(bk_config_parse(&c, "layout=blocked", err, sizeof err), BK_OK);
    ck_assert_int_eq(c.layout, BK_LAYOUT_BLOCKED);
    char text[300];
    ck_assert_int_gt(bk_config_format(&c, 0, text, sizeof text), 0);
    ck_assert_ptr_nonnull(strstr(text, "layout=blocked"));
    ck_assert_int_eq(bk_config_parse(&c, "layout=striped", err, sizeof err), BK_ECONFIG);
    ck_assert_ptr_nonnull(strstr(err, "layout"));
    ck_assert_ptr_nonnull(strstr(err, "classic, blocked"));
    ck_assert_int_eq(c.layout, BK_LAYOUT_BLOCKED); /* untouched */
    ck_assert_str_eq(bk_layout_name(BK_LAYOUT_CLASSIC), "classic");
    ck_assert_ptr_null(bk_layout_name((bk_layout)7));
}
END_TEST

Suite *blocked_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("blocked", "layout", &tc);
    tcase_add_test(tc, probes_of_a_key_share_one_cache_line);
    tcase_add_test(tc, sizing_accounts_for_blocks);
    tcase_add_test(tc, measured_rate_matches_the_model);
    tcase_add_test(tc, counting_blocked_removes_exactly);
    tcase_add_test(tc, more_probes_than_a_block_has_bits);
    tcase_add_test(tc, files_keep_the_layout);
    tcase_add_test(tc, config_names_the_layout);
    return s;
}
