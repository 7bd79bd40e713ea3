/*
 * test_pinned.c - pinned parameters: config `bits=M hashes=K` builds a filter
 * of exactly m cells and k probes (standard and counting, classic and
 * blocked), keys that contradict are errors naming both, the pins survive
 * format, diff, save and load (file and buffer), and bk_plan_capacity
 * answers the calculator's third question.
 */
#include <math.h>
#include <string.h>

#include "common/sizing.h"
#include "io/format.h"
#include "suites.h"
#include "testutil.h"

/* The text fails with BK_ECONFIG, and the message holds each of `words`. */
static void expect_refused(const char *text, const char *a, const char *b)
{
    bk_config c;
    char err[256] = "";
    ck_assert_msg(bk_config_parse(&c, text, err, sizeof err) == BK_ECONFIG, "'%s' accepted", text);
    ck_assert_msg(strstr(err, a) && (!b || strstr(err, b)), "'%s': message '%s' lacks %s / %s",
                  text, err, a, b ? b : "");
}

START_TEST(config_reads_pins_and_refuses_contradictions)
{
    bk_config c;
    char err[256];
    ck_assert_int_eq(bk_config_parse(&c, "bits=1073741824 hashes=6", err, sizeof err), BK_OK);
    ck_assert_uint_eq(c.bits, UINT64_C(1) << 30);
    ck_assert_uint_eq(c.hashes, 6);
    ck_assert_int_eq(bk_config_parse(&c, "variant=counting bits=4096", err, sizeof err), BK_OK);
    ck_assert_uint_eq(c.bits, 4096);
    ck_assert_uint_eq(c.hashes, 0);
    ck_assert_int_eq(bk_config_parse(&c, "bits=64 capacity=3", err, sizeof err), BK_OK);
    expect_refused("bits=1000 fpr=0.01", "fpr", "bits");
    expect_refused("fpr=0.01 bits=1000 hashes=3", "fpr", "bits");
    expect_refused("hashes=3", "hashes", "bits");
    expect_refused("bits=1000 hashes=2049", "hashes", "2048");
    expect_refused("bits=72057594037927937", "bits", "2^56");
    expect_refused("bits=-1", "bits", "2^56");
    expect_refused("variant=scalable bits=1000", "bits", "variant=standard or variant=counting");
    expect_refused("variant=window bits=1000 hashes=3", "bits", "variant=counting");
    /* one value at a time: fpr on a pinned config, hashes before bits */
    bk_config_init(&c);
    ck_assert_int_eq(bk_config_set(&c, "hashes", "4", err, sizeof err), BK_ECONFIG);
    ck_assert_ptr_nonnull(strstr(err, "bits"));
    ck_assert_int_eq(bk_config_set(&c, "bits", "8192", err, sizeof err), BK_OK);
    ck_assert_int_eq(bk_config_set(&c, "hashes", "4", err, sizeof err), BK_OK);
    const bk_config before = c;
    ck_assert_int_eq(bk_config_set(&c, "fpr", "0.001", err, sizeof err), BK_ECONFIG);
    ck_assert_ptr_nonnull(strstr(err, "bits"));
    ck_assert(memcmp(&c, &before, sizeof c) == 0);
}
END_TEST

START_TEST(format_and_diff_carry_the_pins)
{
    bk_config a, b;
    char text[512];
    ck_assert_int_eq(
        bk_config_parse(&a, "variant=counting bits=2048 hashes=5 capacity=100", NULL, 0), BK_OK);
    ck_assert_int_gt(bk_config_format(&a, 0, text, sizeof text), 0);
    ck_assert_ptr_nonnull(strstr(text, "bits=2048"));
    ck_assert_ptr_nonnull(strstr(text, "hashes=5"));
    ck_assert_ptr_null(strstr(text, "fpr=")); /* no parameter of a pinned filter */
    ck_assert_int_eq(bk_config_parse(&b, text, NULL, 0), BK_OK);
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    /* an unpinned config says nothing of bits or hashes */
    bk_config_init(&b);
    ck_assert_int_gt(bk_config_format(&b, 0, text, sizeof text), 0);
    ck_assert_ptr_null(strstr(text, "bits="));
    ck_assert_ptr_null(strstr(text, "hashes="));
    /* diff: the pins count, a pinned filter's fpr does not */
    ck_assert_int_eq(bk_config_parse(&a, "bits=4096 hashes=3", NULL, 0), BK_OK);
    b = a;
    b.fpr = 0.2;
    ck_assert_ptr_null(bk_config_diff(&a, &b));
    b.hashes = 4;
    ck_assert_str_eq(bk_config_diff(&a, &b), "hashes");
    b = a;
    b.bits = 8192;
    ck_assert_str_eq(bk_config_diff(&a, &b), "bits");
    bk_config_init(&b);
    ck_assert_str_eq(bk_config_diff(&a, &b), "bits"); /* pinned against sized */
}
END_TEST

/* A filter of cfg text has exactly m cells and k probes. */
static bk_filter *expect_shape(const char *text, uint64_t m, unsigned k)
{
    bk_filter *f = tu_filter(text);
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_msg(st.bits == m && st.k == k, "%s: m %llu k %u, want %llu %u", text,
                  (unsigned long long)st.bits, st.k, (unsigned long long)m, k);
    return f;
}

START_TEST(filters_have_exactly_the_pinned_m_and_k)
{
    /* the seed recipes: 2^30 bits and 6 hashes (a 128 MiB array); m/n = 20, k = 10 */
    bk_filter *f = expect_shape("bits=1073741824 hashes=6", UINT64_C(1) << 30, 6);
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_uint_eq(st.bytes, UINT64_C(1) << 27);
    bk_free(f);
    f = expect_shape("bits=2000000 hashes=10 capacity=100000", 2000000, 10);
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    /* the rate it was made for follows from m, k and n */
    ck_assert_double_eq_tol(st.fpr, bk_rate_after(2000000, 10, 100000), 1e-15);
    /* (a key may find its bits set already: a false positive of the add) */
    ck_assert_uint_ge(tu_add_keys(f, "pin", 0, 100000), 100000 - 30);
    ck_assert_uint_eq(tu_count_present(f, "pin", 0, 100000), 100000);
    /* and its measured rate is the model's (p ~ 8.9e-5: 0..30 in 10^5 absent keys) */
    const uint64_t fp = tu_count_present(f, "absent", 0, 100000);
    ck_assert_msg(fp <= 30, "%llu false positives in 10^5", (unsigned long long)fp);
    bk_free(f);
    /* counting: m counters */
    f = expect_shape("variant=counting bits=1000 hashes=3", 1000, 3);
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_uint_eq(st.bytes, 500);
    bk_free(f);
    /* blocked: whole blocks only, 512 bits or 128 counters */
    f = expect_shape("layout=blocked bits=1048576 hashes=8", 1048576, 8);
    bk_free(f);
    f = expect_shape("variant=counting layout=blocked bits=1280 hashes=4", 1280, 4);
    bk_free(f);
    bk_config c;
    ck_assert_int_eq(bk_config_parse(&c, "layout=blocked bits=1000 hashes=4", NULL, 0), BK_OK);
    f = NULL;
    ck_assert_int_eq(bk_new(&c, &f), BK_ECONFIG);
    ck_assert_ptr_null(f);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "multiple of 512"));
    bk_plan p;
    ck_assert_int_eq(bk_plan_config(&c, &p), BK_ECONFIG);
    /* bits alone: the best k for bits and capacity (m/n = 20: k = 14 classic) */
    f = expect_shape("bits=20000000 capacity=1000000", 20000000, 14);
    bk_free(f);
    ck_assert_uint_eq(bk_best_k(20000000, 1000000, 0), 14);
    const unsigned kb = bk_best_k(20000000 / 512 * 512, 1000000, 512);
    ck_assert_uint_le(kb, 14);
    for (unsigned k = 1; k <= 20; k++) /* no k does better */
        ck_assert_double_ge(bk_rate_blocked(20000000 / 512 * 512, k, 1000000, 512),
                            bk_rate_blocked(20000000 / 512 * 512, kb, 1000000, 512));
}
END_TEST

/* k far over m: most of a key's probes repeat bits it set itself. The first
 * add is still "new" (a repeat found set is the key's own doing, not another
 * writer's) and counted once; the second is "present". (The classic add had
 * walked the probes from the start for every repeat, O(k^3): a fuzzed file
 * of this shape timed out; it is a regression input of tests/fuzz, whose
 * timeout watches its time.) */
START_TEST(a_key_whose_probes_repeat_bits_is_new_once)
{
    static const struct {
        const char *text;
        uint64_t m;
    } pins[] = {{"bits=1024 hashes=2048 capacity=1", 1024},
                {"bits=64 hashes=2048 capacity=1", 64},
                {"layout=blocked bits=512 hashes=2048 capacity=1", 512},
                {"variant=counting bits=1024 hashes=2048 capacity=1", 1024}};
    for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++) {
        bk_filter *f = expect_shape(pins[i].text, pins[i].m, 2048);
        ck_assert_msg(bk_add(f, "first", 5) == 1, "%s: first add not new", pins[i].text);
        bk_filter_stats st;
        ck_assert_int_eq(bk_stats(f, &st), BK_OK);
        ck_assert_msg(st.keys == 1, "%s: %llu keys", pins[i].text, (unsigned long long)st.keys);
        ck_assert_int_eq(bk_add(f, "first", 5), 0);
        ck_assert_int_eq(bk_contains(f, "first", 5), 1);
        bk_free(f);
    }
}
END_TEST

/* Saved and loaded (file and buffer), a pinned filter keeps its pins, keys
 * and shape, and bk_get_config says bits and hashes again. */
START_TEST(pins_survive_save_and_load)
{
    char *dir = tu_tmpdir();
    char *path = tu_path(dir, "pinned.bkf");
    const char *texts[] = {"bits=65536 hashes=7 capacity=3000", "variant=counting bits=65536",
                           "layout=blocked bits=65536 hashes=5 capacity=3000"};
    for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
        bk_filter *f = tu_holding(texts[t], "k", 0, 3000), *g = NULL, *h = NULL;
        bk_config want, got;
        ck_assert_int_eq(bk_get_config(f, &want), BK_OK);
        ck_assert_int_eq(bk_save(f, path), BK_OK);
        ck_assert_int_eq(bk_load(path, &g), BK_OK);
        ck_assert_int_eq(bk_get_config(g, &got), BK_OK);
        ck_assert_uint_eq(got.bits, want.bits);
        ck_assert_uint_eq(got.hashes, want.hashes);
        ck_assert_ptr_null(bk_config_diff(&want, &got));
        ck_assert(tu_same_filter(f, g));
        size_t len;
        uint8_t *bytes = tu_read_file(path, &len);
        ck_assert_uint_eq(bytes[8], 4); /* version 4: the pins are in the config text */
        ck_assert_ptr_nonnull(tu_find(bytes, len, " bits=65536"));
        ck_assert((tu_find(bytes, len, " hashes=") != NULL) == (want.hashes != 0));
        ck_assert_int_eq(bk_load_buffer(bytes, len, &h), BK_OK);
        ck_assert(tu_same_filter(f, h));
        /* a text whose pinned bits are not slice 0's m is corrupt */
        uint8_t *bits = tu_find(bytes, len, " bits=65536");
        memcpy(bits, " bits=65535", 11);
        bk_filter *bad = NULL;
        ck_assert_int_eq(bk_load_buffer(bytes, len, &bad), BK_ECORRUPT); /* checksum first */
        ck_assert_int_eq(bk_file_reseal(bytes, len), 0);
        ck_assert_int_eq(bk_load_buffer(bytes, len, &bad), BK_ECORRUPT);
        ck_assert_msg(strstr(bk_last_error(), "pinned bits or hashes"), "%s", bk_last_error());
        free(bytes);
        tu_free_all(f, g, h);
    }
    /* an unpinned filter's text states neither */
    bk_filter *f = tu_filter("capacity=1000");
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    size_t len;
    uint8_t *bytes = tu_read_file(path, &len);
    ck_assert_uint_eq(bytes[8], 4);
    ck_assert_ptr_null(tu_find(bytes, len, " bits="));
    ck_assert_ptr_null(tu_find(bytes, len, " hashes="));
    free(bytes);
    bk_free(f);
    unlink(path);
    free(path);
    tu_rmtree(dir);
}
END_TEST

/* bk_plan_capacity: the most keys m bits hold at rate p. Classic: the
 * closed form n = m (ln 2)^2 / ln(1/p); in every layout, n keys are at
 * most p and n + 1 keys are above it, with the best k. */
START_TEST(plan_capacity_is_the_calculators_third_question)
{
    const double p = 0.001;
    bk_config c;
    bk_plan plan;
    uint64_t n;
    ck_assert_int_eq(bk_config_parse(&c, "bits=1073741824", NULL, 0), BK_OK);
    c.fpr = p; /* the one call that reads both */
    ck_assert_int_eq(bk_plan_capacity(&c, &n, &plan), BK_OK);
    const double closed = 1073741824.0 * log(2) * log(2) / log(1 / p);
    ck_assert_msg(fabs((double)n - closed) / closed < 0.002, "n %llu, closed form %.0f",
                  (unsigned long long)n, closed);
    ck_assert_uint_eq(plan.bits, UINT64_C(1) << 30);
    ck_assert_uint_eq(plan.k, 10);
    ck_assert_double_le(plan.expected_fpr, p);
    const char *layouts[] = {"bits=1073741824", "variant=counting bits=1048576",
                             "layout=blocked bits=1048576",
                             "variant=counting layout=blocked bits=1048576"};
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++) {
        ck_assert_int_eq(bk_config_parse(&c, layouts[i], NULL, 0), BK_OK);
        c.fpr = p;
        ck_assert_int_eq(bk_plan_capacity(&c, &n, &plan), BK_OK);
        const unsigned block =
            c.layout == BK_LAYOUT_BLOCKED ? (c.variant == BK_VARIANT_COUNTING ? 128 : 512) : 0;
        ck_assert_double_le(bk_rate_for(c.bits, plan.k, n, block), p);
        ck_assert_double_gt(bk_rate_for(c.bits, bk_best_k(c.bits, n + 1, block), n + 1, block), p);
        /* and sizing n keys at p the usual way needs no more than these bits */
        bk_config sized;
        bk_config_init(&sized);
        sized.variant = c.variant;
        sized.layout = c.layout;
        sized.capacity = n;
        sized.fpr = p;
        bk_plan back;
        ck_assert_int_eq(bk_plan_config(&sized, &back), BK_OK);
        ck_assert_uint_le(back.bits, c.bits);
    }
    /* errors: nothing pinned, not even one key, not whole blocks */
    bk_config_init(&c);
    ck_assert_int_eq(bk_plan_capacity(&c, &n, &plan), BK_EINVAL);
    ck_assert_int_eq(bk_config_parse(&c, "bits=1", NULL, 0), BK_OK);
    c.fpr = 1e-6;
    ck_assert_int_eq(bk_plan_capacity(&c, &n, &plan), BK_ERANGE);
    ck_assert_int_eq(bk_config_parse(&c, "layout=blocked bits=1000", NULL, 0), BK_OK);
    ck_assert_int_eq(bk_plan_capacity(&c, &n, &plan), BK_ECONFIG);
    ck_assert_int_eq(bk_plan_capacity(NULL, &n, &plan), BK_EINVAL);
}
END_TEST

Suite *pinned_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("pinned", "bits and hashes", &tc);
    tcase_add_test(tc, config_reads_pins_and_refuses_contradictions);
    tcase_add_test(tc, format_and_diff_carry_the_pins);
    tcase_add_test(tc, filters_have_exactly_the_pinned_m_and_k);
    tcase_add_test(tc, a_key_whose_probes_repeat_bits_is_new_once);
    tcase_add_test(tc, pins_survive_save_and_load);
    tcase_add_test(tc, plan_capacity_is_the_calculators_third_question);
    return s;
}
