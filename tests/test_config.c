/*
 * test_config.c - the config text: every key, separators and comments, every
 * kind of bad value (error names key and range, config untouched), round trip
 * through bk_config_format, and variant switching by text alone.
 */
#include <string.h>

#include <stddef.h>

#include "core/config.h"
#include "core/filter_impl.h"
#include "suites.h"
#include "testutil.h"

START_TEST(defaults)
{
    bk_config c;
    ck_assert_int_eq(bk_config_parse(&c, "", NULL, 0), BK_OK);
    ck_assert_int_eq(c.variant, BK_VARIANT_STANDARD);
    ck_assert_uint_eq(c.capacity, 1000000);
    ck_assert_double_eq(c.fpr, 0.01);
    ck_assert_double_eq(c.growth, 2.0);
    ck_assert_double_eq(c.tightening, 0.5);
    ck_assert_int_eq(c.hash, BK_HASH_SIPHASH24);
    ck_assert_int_eq(c.has_key, 0);
}
END_TEST

START_TEST(every_key_and_separator)
{
    bk_config c;
    char err[256];
    const char *text = "# experiment A\n"
                       "variant = scalable,capacity=5000\tfpr=1e-3  # trailing comment\r\n"
                       "growth=4 , tightening=0.9\n"
                       "hash=siphash13 key=000102030405060708090A0b0c0d0e0f\n";
    ck_assert_int_eq(bk_config_parse(&c, text, err, sizeof err), BK_OK);
    ck_assert_int_eq(c.variant, BK_VARIANT_SCALABLE);
    ck_assert_uint_eq(c.capacity, 5000);
    ck_assert_double_eq(c.fpr, 1e-3);
    ck_assert_double_eq(c.growth, 4.0);
    ck_assert_double_eq(c.tightening, 0.9);
    ck_assert_int_eq(c.hash, BK_HASH_SIPHASH13);
    ck_assert_int_eq(c.has_key, 1);
    for (int i = 0; i < 16; i++)
        ck_assert_uint_eq(c.key[i], i);
    ck_assert_int_eq(bk_config_parse(&c, "capacity=1e6 fpr=0.5", err, sizeof err), BK_OK);
    ck_assert_uint_eq(c.capacity, 1000000);
    ck_assert_int_eq(bk_config_parse(&c, "capacity=281474976710656", err, sizeof err), BK_OK);
    /* counts as people type them, the same through bk_count_parse */
    static const struct {
        const char *text;
        uint64_t v;
    } counts[] = {{"1000000", 1000000},
                  {"1e6", 1000000},
                  {"1M", 1000000},
                  {"2.5k", 2500},
                  {"3G", 3000000000},
                  {"1T", UINT64_C(1000000000000)},
                  {"0", 0}};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        uint64_t v = 7;
        ck_assert_int_eq(bk_count_parse(counts[i].text, &v), BK_OK);
        ck_assert_uint_eq(v, counts[i].v);
        char t[64];
        snprintf(t, sizeof t, "capacity=%s", counts[i].text);
        if (counts[i].v)
            ck_assert_int_eq(bk_config_parse(&c, t, err, sizeof err), BK_OK);
        ck_assert_uint_eq(c.capacity, counts[i].v ? counts[i].v : c.capacity);
    }
    static const char *const not_counts[] = {"1.5", "1MB", "M",    "-1", "1e19", "",
                                             "1 M", "1m",  "0x10", "1e", "k1",   "1.5e-3k"};
    for (size_t i = 0; i < sizeof not_counts / sizeof *not_counts; i++) {
        uint64_t v = 7;
        ck_assert_msg(bk_count_parse(not_counts[i], &v) == BK_EINVAL && v == 7, "'%s'",
                      not_counts[i]);
    }
    /* sizes keep their binary units */
    ck_assert_int_eq(bk_config_parse(&c, "variant=scalable max_bytes=1M", err, sizeof err), BK_OK);
    ck_assert_uint_eq(c.max_bytes, 1u << 20);
    ck_assert_int_eq(bk_config_parse(&c, "capacity=1 growth=2 growth_x=1", err, sizeof err),
                     BK_ECONFIG);
}
END_TEST

/* Each bad text: BK_ECONFIG, *cfg untouched, and the message names `key` and
 * contains `range` (the allowed values). */
static void expect_bad(const char *text, const char *key, const char *range)
{
    bk_config c, before;
    memset(&c, 0xa5, sizeof c);
    before = c;
    char err[256] = "";
    ck_assert_msg(bk_config_parse(&c, text, err, sizeof err) == BK_ECONFIG, "'%s' accepted", text);
    ck_assert_msg(memcmp(&c, &before, sizeof c) == 0, "'%s' changed the config", text);
    ck_assert_msg(strstr(err, key) != NULL, "'%s': message '%s' does not name %s", text, err, key);
    ck_assert_msg(strstr(err, range) != NULL, "'%s': message '%s' lacks '%s'", text, err, range);
}

START_TEST(bad_values_are_rejected_with_key_and_range)
{
    expect_bad("capacity=0", "capacity", "1 .. 2^48");
    expect_bad("capacity=281474976710657", "capacity", "1 .. 2^48");
    expect_bad("capacity=99999999999999999999999", "capacity", "1 .. 2^48");
    expect_bad("capacity=1000x", "capacity", "1 .. 2^48");
    expect_bad("capacity=-5", "capacity", "1 .. 2^48");
    expect_bad("capacity=1.5", "capacity", "1 .. 2^48");
    expect_bad("capacity=", "capacity", "1 .. 2^48");
    expect_bad("fpr=0", "fpr", "(0, 0.5]");
    expect_bad("fpr=0.50001", "fpr", "(0, 0.5]");
    expect_bad("fpr=nan", "fpr", "(0, 0.5]");
    expect_bad("fpr=NaN", "fpr", "(0, 0.5]");
    expect_bad("fpr=inf", "fpr", "(0, 0.5]");
    expect_bad("fpr=-0.01", "fpr", "(0, 0.5]");
    expect_bad("fpr=+0.01", "fpr", "(0, 0.5]");
    expect_bad("fpr=0.01abc", "fpr", "(0, 0.5]");
    expect_bad("fpr=0x1p-4", "fpr", "(0, 0.5]");
    expect_bad("fpr=1e-400", "fpr", "(0, 0.5]");
    expect_bad("fpr=0.1.2", "fpr", "(0, 0.5]");
    expect_bad("growth=1.5", "growth", "[2, 16]");
    expect_bad("growth=17", "growth", "[2, 16]");
    expect_bad("tightening=0.05", "tightening", "[0.1, 0.95]");
    expect_bad("tightening=1", "tightening", "[0.1, 0.95]");
    expect_bad("hash=md5", "hash", "siphash24, siphash13");
    expect_bad("variant=quotient", "variant", "standard, counting, scalable, window, cuckoo");
    expect_bad("variant=Standard", "variant", "standard, counting, scalable");
    expect_bad("key=0011", "key", "32 hexadecimal digits");
    expect_bad("key=000102030405060708090a0b0c0d0e0g", "key", "32 hexadecimal digits");
    expect_bad("key=000102030405060708090a0b0c0d0e0f00", "key", "32 hexadecimal digits");
    /* structure: unknown or repeated keys, no '=', no key, the line */
    expect_bad("fpr=0.01 colour=blue", "colour", "known:");
    expect_bad("fpr=0.01 fpr=0.02", "fpr", "duplicate");
    expect_bad("capacity", "capacity", "=value");
    expect_bad("=5", "line 1", "unexpected character");
    expect_bad("variant=standard\n\nfpr=2", "line 3", "(0, 0.5]");
}
END_TEST

START_TEST(overlong_values_are_rejected)
{
    char longval[300];
    memset(longval, '1', sizeof longval);
    memcpy(longval, "capacity=", 9);
    longval[sizeof longval - 1] = '\0';
    expect_bad(longval, "capacity", "longer than");
}
END_TEST

START_TEST(null_arguments_and_small_error_buffers)
{
    bk_config c;
    char err[8];
    ck_assert_int_eq(bk_config_parse(NULL, "fpr=0.1", err, sizeof err), BK_EINVAL);
    ck_assert_int_eq(bk_config_parse(&c, NULL, err, sizeof err), BK_EINVAL);
    ck_assert_int_eq(bk_config_parse(&c, "fpr=7", err, sizeof err), BK_ECONFIG);
    ck_assert_uint_eq(strlen(err), sizeof err - 1); /* truncated, terminated */
    ck_assert_int_eq(bk_config_parse(&c, "fpr=7", NULL, 0), BK_ECONFIG);
    ck_assert_int_eq(bk_config_parse(&c, "fpr=7", err, 0), BK_ECONFIG);
}
END_TEST

START_TEST(parse_over_layers_on_existing_values)
{
    bk_config c;
    bk_config_init(&c);
    c.variant = BK_VARIANT_SCALABLE;
    c.fpr = 0.0001;
    ck_assert_int_eq(bk_config_parse_over(&c, "capacity=5000", NULL, 0), BK_OK);
    ck_assert_int_eq(c.variant, BK_VARIANT_SCALABLE);
    ck_assert_double_eq(c.fpr, 0.0001);
    ck_assert_uint_eq(c.capacity, 5000);
    const bk_config before = c;
    char err[128];
    ck_assert_int_eq(bk_config_parse_over(&c, "fpr=0.1 fpr=0.2", err, sizeof err), BK_ECONFIG);
    ck_assert(memcmp(&c, &before, sizeof c) == 0);
    c.fpr = 7;
    ck_assert_int_eq(bk_config_parse_over(&c, "capacity=5", err, sizeof err), BK_EINVAL);
    ck_assert_int_eq(bk_config_parse_over(NULL, "", err, sizeof err), BK_EINVAL);
}
END_TEST

START_TEST(format_round_trips)
{
    bk_config a, b;
    char text[512];
    const char *src = "variant=counting capacity=777 fpr=0.0123 growth=3.5 tightening=0.8 "
                      "hash=siphash13 key=ffeeddccbbaa99887766554433221100";
    ck_assert_int_eq(bk_config_parse(&a, src, NULL, 0), BK_OK);
    const int n = bk_config_format(&a, 1, text, sizeof text);
    ck_assert_int_gt(n, 0);
    ck_assert_int_lt(n, (int)sizeof text);
    ck_assert_int_eq(bk_config_parse(&b, text, NULL, 0), BK_OK);
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    ck_assert_int_eq(bk_config_format(&a, 0, text, sizeof text), (int)strlen(text));
    ck_assert_ptr_null(strstr(text, "key="));
    /* a subnormal rate is valid (in (0, 0.5]) and a filter can hold one (an
     * old file's binary header): its text must read back as the same value */
    a.fpr = 4.17201354948508e-309;
    ck_assert_int_gt(bk_config_format(&a, 1, text, sizeof text), 0);
    ck_assert_int_eq(bk_config_parse(&b, text, NULL, 0), BK_OK);
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    a.fpr = 2.0;
    ck_assert_int_eq(bk_config_format(&a, 0, text, sizeof text), BK_EINVAL);
}
END_TEST

/* The same program, only `variant=` changed, gets each filter type. */
START_TEST(variant_switch_by_text_alone)
{
    for (unsigned i = 0; i < tu_nvariants(); i++) {
        char text[64];
        snprintf(text, sizeof text, "variant=%s capacity=1000", tu_variant(i));
        bk_filter *f = tu_filter(text);
        ck_assert_int_eq(bk_add(f, "x", 1), 1);
        ck_assert_int_eq(bk_contains(f, "x", 1), 1);
        bk_filter_stats st;
        ck_assert_int_eq(bk_stats(f, &st), BK_OK);
        ck_assert_str_eq(st.variant, tu_variant(i));
        ck_assert_int_eq(bk_remove(f, "x", 1),
                         bk_variant_removes((bk_variant)i) ? BK_OK : BK_ENOTSUP);
        bk_free(f);
    }
}
END_TEST

/* The registry is BK_VARIANT_LIST: each line's descriptor sits at its
 * number, under its name, and what it says of itself holds: the keys it
 * lists are keys of the table a text of it may state, a key it does not
 * list (and not every variant's) is refused for it, its own default is
 * what a text of it gets, and the figures it names are rows it reports. */
START_TEST(registry_is_the_variant_list)
{
    unsigned listed = 0;
#define CHECK_LINE(NAME, name, number)                                                             \
    do {                                                                                           \
        const bk_variant_desc *d = bk_variant_for(BK_VARIANT_##NAME);                              \
        ck_assert_ptr_nonnull(d);                                                                  \
        ck_assert_int_eq(d->variant, number);                                                      \
        ck_assert_str_eq(bk_variant_name(BK_VARIANT_##NAME), #name);                               \
        ck_assert_msg(d->summary &&strncmp(d->summary, #name, strlen(#name)) == 0,                 \
                      "%s: summary %s", #name, d->summary);                                        \
        listed++;                                                                                  \
    } while (0);
    BK_VARIANT_LIST(CHECK_LINE)
#undef CHECK_LINE
    ck_assert_uint_eq(listed, tu_nvariants());
    ck_assert_uint_eq(bk_variant_count(), tu_nvariants());
    ck_assert_ptr_null(bk_variant_for((bk_variant)bk_variant_count()));
    for (unsigned v = 0; v < tu_nvariants(); v++) {
        const bk_variant_desc *d = bk_variant_for((bk_variant)v);
        for (const bk_variant_key *r = d->keys; r && r->key; r++) {
            ck_assert_msg(bk_config_key_applies((bk_variant)v, r->key), "%s: %s", tu_variant(v),
                          r->key);
            char text[160], got[64];
            bk_config c;
            snprintf(text, sizeof text, "variant=%s", tu_variant(v));
            ck_assert_int_eq(bk_config_parse(&c, text, NULL, 0), BK_OK);
            if (r->def) {
                ck_assert_int_gt(bk_config_get(&c, r->key, got, sizeof got), 0);
                ck_assert_str_eq(got, r->def);
            }
        }
        char range[160];
        for (unsigned i = 0; bk_config_key(i, range, sizeof range, NULL); i++) {
            const char *key = bk_config_key(i, NULL, 0, NULL);
            int named = 0;
            for (const bk_variant_key *r = d->keys; r && r->key; r++)
                named |= strcmp(r->key, key) == 0;
            const int universal = !strcmp(key, "variant") || !strcmp(key, "capacity") ||
                                  !strcmp(key, "hash") || !strcmp(key, "key") ||
                                  !strcmp(key, "input");
            ck_assert_int_eq(bk_config_key_applies((bk_variant)v, key), named || universal);
        }
        for (unsigned i = 0;; i++) {
            bk_figure fig;
            bk_filter_stats st;
            memset(&st, 0, sizeof st);
            if (bk_figure_at(i, NULL, NULL, &fig, sizeof fig) != 1)
                break;
            if (d->figures && strstr(d->figures, fig.name))
                ck_assert_msg(fig.variants >> v & 1u, "%s: figure %s", tu_variant(v), fig.name);
        }
    }
}
END_TEST

/* A preset is a valid text (the crawler's: the expandable filter at 1 in
 * 10,000; the chain's, laid over it, the scalable chain planned for
 * growth, keeping its rate and capacity); an unknown name has none. */
START_TEST(presets_are_valid_texts)
{
    const char *text = bk_config_preset("crawler");
    ck_assert_ptr_nonnull(text);
    bk_config c;
    ck_assert_int_eq(bk_config_parse(&c, text, NULL, 0), BK_OK);
    ck_assert_int_eq(c.variant, BK_VARIANT_EXPANDABLE);
    ck_assert(c.fpr == 0.0001);
    ck_assert_int_eq(bk_config_parse_over(&c, bk_config_preset("chain"), NULL, 0), BK_OK);
    ck_assert_int_eq(c.variant, BK_VARIANT_SCALABLE);
    ck_assert_int_eq(c.layout, BK_LAYOUT_BLOCKED);
    ck_assert(c.fpr == 0.0001 && c.capacity == 1000000 && c.tightening == 0.85);
    ck_assert_ptr_null(bk_config_preset("nope"));
    ck_assert_ptr_null(bk_config_preset(NULL));
}
END_TEST

/* bk_new refuses an out-of-range struct filled by hand. */
START_TEST(new_validates_struct)
{
    bk_config c;
    bk_config_init(&c);
    bk_filter *f = (bk_filter *)&c;
    c.fpr = 0.9;
    ck_assert_int_eq(bk_new(&c, &f), BK_ECONFIG);
    ck_assert_ptr_null(f);
    bk_config_init(&c);
    c.variant = (bk_variant)9;
    ck_assert_int_eq(bk_new(&c, &f), BK_ECONFIG);
    ck_assert_int_eq(bk_new(&c, NULL), BK_EINVAL);
    ck_assert_ptr_null(bk_variant_name((bk_variant)9));
    ck_assert_str_eq(bk_variant_name(BK_VARIANT_COUNTING), "counting");
    ck_assert_str_eq(bk_hash_name(BK_HASH_SIPHASH13), "siphash13");
}
END_TEST

START_TEST(error_texts)
{
    ck_assert_str_eq(bk_strerror(BK_ENOMEM), "out of memory");
    ck_assert_str_eq(bk_err_name(BK_ENOTSUP), "BK_ENOTSUP");
    ck_assert_str_eq(bk_strerror(12345), "unknown error");
    ck_assert_str_eq(bk_err_name(-999), "BK_UNKNOWN");
    for (int code = 0; code >= BK_ESYS; code--)
        ck_assert_str_ne(bk_strerror(code), "unknown error");
    ck_assert_str_eq(bk_version(), BK_VERSION_STRING);
}
END_TEST

/* bk_config_set takes a value whole: text smuggled into it is a bad value,
 * never more keys; the error names the key; *cfg stays as it was. */
/* Layers (text, then single values) built by the library: each value
 * checked as it comes, a key stated once across the layers, what only the
 * whole says checked at the end, whatever layer stated each half; a stated
 * key keeps its value when a later layer changes the variant; a refused
 * layer leaves the build as it was. */
START_TEST(layers_build_one_configuration)
{
    char err[256];
    bk_config_build b, before;
    bk_config out, want;
    bk_config_build_init(&b, NULL);
    bk_config_error e;
    ck_assert_int_eq(bk_config_build_text(&b, "capacity=5000 tightening=0.5", &e), BK_OK);
    ck_assert_int_eq(bk_config_build_stated(&b, "capacity"), 1);
    ck_assert_int_eq(bk_config_build_stated(&b, "fpr"), 0);
    before = b;
    /* refused: a key of an earlier layer, a bad value, more text than one value */
    ck_assert_int_eq(bk_config_build_set(&b, "capacity", "10", err, sizeof err), BK_ECONFIG);
    ck_assert_ptr_nonnull(strstr(err, "capacity: given twice"));
    ck_assert_int_eq(bk_config_build_text(&b, "fpr=0.1\ncapacity=7", &e), BK_ECONFIG);
    ck_assert_ptr_nonnull(strstr(e.message, "duplicate key 'capacity'"));
    ck_assert_str_eq(e.key, "capacity");
    ck_assert_uint_eq(e.line, 2);
    ck_assert_int_eq(bk_config_build_set(&b, "fpr", "0.1 capacity=20", err, sizeof err),
                     BK_ECONFIG);
    ck_assert_mem_eq(&b, &before, sizeof b);
    /* the variant changes under a stated tightening: it stays (0.5, not window's 0.3) */
    ck_assert_int_eq(bk_config_build_set(&b, "variant", "window", err, sizeof err), BK_OK);
    ck_assert_int_eq(bk_config_build_finish(&b, &out, &e), BK_OK);
    ck_assert_int_eq(
        bk_config_parse(&want, "variant=window capacity=5000 tightening=0.5", err, sizeof err),
        BK_OK);
    ck_assert_mem_eq(&out, &want, sizeof out);
    /* fpr in one layer, bits in another: the whole refuses them, naming both */
    bk_config_build_init(&b, NULL);
    ck_assert_int_eq(bk_config_build_text(&b, "fpr=0.01", &e), BK_OK);
    ck_assert_int_eq(bk_config_build_set(&b, "bits", "65536", err, sizeof err), BK_OK);
    ck_assert_int_eq(bk_config_build_finish(&b, &out, &e), BK_ECONFIG);
    ck_assert_ptr_nonnull(strstr(e.message, "fpr and bits contradict"));
    ck_assert_str_eq(e.key, "fpr");
    /* hashes in the text, bits in a later layer: the whole is pinned, and valid */
    bk_config_build_init(&b, NULL);
    ck_assert_int_eq(bk_config_build_text(&b, "hashes=5", &e), BK_OK);
    ck_assert_int_eq(bk_config_build_finish(&b, &out, &e), BK_ECONFIG);
    ck_assert_int_eq(bk_config_build_set(&b, "bits", "65536", err, sizeof err), BK_OK);
    ck_assert_int_eq(bk_config_build_finish(&b, &out, &e), BK_OK);
    ck_assert_uint_eq(out.bits, 65536);
    ck_assert_uint_eq(out.hashes, 5);
    /* a start of the program's own (a preset) is under every layer, stated by none */
    bk_config start;
    ck_assert_int_eq(bk_config_parse(&start, bk_config_preset("crawler"), err, sizeof err), BK_OK);
    bk_config_build_init(&b, &start);
    ck_assert_int_eq(bk_config_build_stated(&b, "variant"), 0);
    ck_assert_int_eq(bk_config_build_set(&b, "fpr", "0.001", err, sizeof err), BK_OK);
    ck_assert_int_eq(bk_config_build_finish(&b, &out, &e), BK_OK);
    ck_assert_int_eq(out.variant, start.variant);
    ck_assert_double_eq(out.fpr, 0.001);
    ck_assert_int_eq(bk_config_build_set(NULL, "fpr", "0.1", err, sizeof err), BK_EINVAL);
    ck_assert_int_eq(bk_config_build_finish(&b, NULL, &e), BK_EINVAL);
}
END_TEST

/* A max_bytes too small for a growing filter's start is a configuration
 * error, before anything is made, that names what would fit: a capacity of
 * at most N makes the filter within it, and N + 1 does not. */
START_TEST(new_says_what_fits_max_bytes)
{
    const char *variants[] = {"scalable", "window", "expandable"};
    for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
        char text[128], err[256];
        bk_config c;
        snprintf(text, sizeof text, "variant=%s max_bytes=4k", variants[i]);
        ck_assert_int_eq(bk_config_parse(&c, text, err, sizeof err), BK_OK);
        bk_filter *f = NULL;
        ck_assert_int_eq(bk_new(&c, &f), BK_ECONFIG);
        ck_assert_ptr_null(f);
        const char *at = strstr(bk_last_error(), "a capacity of at most ");
        ck_assert_msg(at != NULL, "%s: %s", variants[i], bk_last_error());
        const uint64_t fit = strtoull(at + strlen("a capacity of at most "), NULL, 10);
        ck_assert_uint_gt(fit, 0);
        c.capacity = fit;
        ck_assert_msg(bk_new(&c, &f) == BK_OK, "%s at %llu: %s", variants[i],
                      (unsigned long long)fit, bk_last_error());
        bk_free(f);
        c.capacity = fit + 1;
        ck_assert_int_eq(bk_new(&c, &f), BK_ECONFIG);
    }
}
END_TEST

START_TEST(set_takes_one_value_whole)
{
    bk_config c, before;
    bk_config_init(&c);
    char err[256];
    ck_assert_int_eq(bk_config_set(&c, "capacity", "5000", err, sizeof err), BK_OK);
    ck_assert_uint_eq(c.capacity, 5000);
    ck_assert_int_eq(bk_config_set(&c, "key", "000102030405060708090a0b0c0d0e0f", err, sizeof err),
                     BK_OK);
    ck_assert_int_eq(c.has_key, 1);
    before = c;
    const char *bad[][2] = {
        {"capacity", "1000 variant=counting key=00112233445566778899aabbccddeeff"},
        {"variant", "counting#"},
        {"variant", "counting "},
        {"fpr", "0.1 capacity=20"},
        {"fpr", "0.1,capacity=20"},
        {"layout", "blocked\nvariant=counting"},
        {"capacity", ""},
        {"hash", "siphash24#x"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(bk_config_set(&c, bad[i][0], bad[i][1], err, sizeof err), BK_ECONFIG);
        ck_assert_msg(strncmp(err, bad[i][0], strlen(bad[i][0])) == 0, "'%s' lacks the key %s", err,
                      bad[i][0]);
        ck_assert_ptr_nonnull(strstr(err, "allowed"));
        ck_assert_mem_eq(&c, &before, sizeof c);
    }
    ck_assert_int_eq(bk_config_set(&c, "bogus", "1", err, sizeof err), BK_ECONFIG);
    ck_assert_ptr_nonnull(strstr(err, "unknown key 'bogus'"));
    ck_assert_int_eq(bk_config_set(NULL, "fpr", "0.1", err, sizeof err), BK_EINVAL);
    /* which keys a text states */
    ck_assert_int_eq(bk_config_text_sets("capacity=10 # fpr=0.1\nhash=siphash13", "capacity"), 1);
    ck_assert_int_eq(bk_config_text_sets("capacity=10 # fpr=0.1\nhash=siphash13", "hash"), 1);
    ck_assert_int_eq(bk_config_text_sets("capacity=10 # fpr=0.1\nhash=siphash13", "fpr"), 0);
    ck_assert_int_eq(bk_config_text_sets("capacity=banana", "capacity"), 0);
    ck_assert_int_eq(bk_config_text_sets("capacity=10", "nokey"), 0);
}
END_TEST

/* The key table is the one list: every key it has is in the README's
 * table of config keys, and the README lists no key it lacks (the man
 * page's list is made from the table: test_cli). bk_config_diff and
 * bk_config_read answer from it. */
START_TEST(docs_list_the_keys_of_the_table)
{
    size_t len;
    char *readme = (char *)tu_read_file("README.md", &len);
    readme[len] = '\0';
    const char *table = strstr(readme, "### Config text");
    ck_assert_ptr_nonnull(table);
    unsigned n = 0;
    char range[128], row[64];
    for (const char *name; (name = bk_config_key(n, range, sizeof range, NULL)); n++) {
        snprintf(row, sizeof row, "\n| %s |", name);
        ck_assert_msg(strstr(table, row), "README's config table lacks %s", name);
        ck_assert_uint_gt(strlen(range), 3);
    }
    ck_assert_uint_ge(n, 8);
    /* and the README's table has no other rows */
    const char *rows_at = strstr(table, "|---|"), *end = rows_at ? strstr(rows_at, "\n\n") : NULL;
    ck_assert_ptr_nonnull(end);
    unsigned rows = 0;
    for (const char *p = rows_at; (p = strstr(p, "\n| ")) && p < end; p++)
        rows++;
    ck_assert_uint_eq(rows, n);
    free(readme);
    /* one comparison, from the table */
    bk_config a, b;
    bk_config_init(&a);
    b = a;
    ck_assert_ptr_null(bk_config_diff(&a, &b));
    b.tightening = 0.9;
    ck_assert_str_eq(bk_config_diff(&a, &b), "tightening");
    b = a;
    b.has_key = 1;
    b.key[3] = 7;
    ck_assert_ptr_null(bk_config_diff(&a, &b)); /* the key counts when wanted */
    ck_assert_str_eq(bk_config_diff(&b, &a), "key");
    /* the structured error names key and line */
    bk_config_error e;
    bk_config_init(&a);
    ck_assert_int_eq(bk_config_read(&a, "capacity=10\n\nfpr=0.7", &e), BK_ECONFIG);
    ck_assert_str_eq(e.key, "fpr");
    ck_assert_uint_eq(e.line, 3);
    ck_assert_ptr_nonnull(strstr(e.message, "(0, 0.5]"));
    ck_assert_int_eq(bk_config_read(&a, "capacity=10 =", &e), BK_ECONFIG);
    ck_assert_str_eq(e.key, "");
}
END_TEST

/* What crosses the ABI carries its layout: a bk_config not made by
 * bk_config_init / bk_config_parse (or of another layout) is refused,
 * bk_stats_sized fills the caller's size and no more, and bk_abi_layout
 * reports sizes and offsets for bindings' mirrors. */
START_TEST(abi_structs_carry_their_layout)
{
    bk_config c;
    memset(&c, 0, sizeof c);
    c.capacity = 1000;
    c.fpr = 0.01;
    c.growth = 2;
    c.tightening = 0.5;
    bk_filter *f = NULL;
    ck_assert_int_eq(bk_new(&c, &f), BK_ECONFIG); /* struct_size 0: not initialised */
    ck_assert_ptr_null(f);
    bk_config_init(&c);
    ck_assert_uint_eq(c.struct_size, sizeof c);
    c.struct_size = (uint32_t)sizeof c - 8; /* as a smaller, older struct would say */
    ck_assert_int_eq(bk_new(&c, &f), BK_ECONFIG);
    bk_config_init(&c);
    ck_assert_int_eq(bk_new(&c, &f), BK_OK);
    /* stats into a caller's smaller struct: its prefix, nothing past it */
    unsigned char buf[sizeof(bk_filter_stats) + 16];
    memset(buf, 0xa5, sizeof buf);
    const size_t small = offsetof(bk_filter_stats, keys);
    ck_assert_int_eq(bk_stats_sized(f, (bk_filter_stats *)(void *)buf, small), BK_OK);
    for (size_t i = small; i < sizeof buf; i++)
        ck_assert_uint_eq(buf[i], 0xa5);
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats_sized(f, &st, sizeof st), BK_OK);
    ck_assert_uint_eq(st.capacity, 1000000);
    ck_assert_int_eq(bk_stats_sized(f, &st, 0), BK_EINVAL);
    bk_free(f);
    /* the layout, as bindings read it */
    ck_assert_uint_eq(bk_abi_layout("bk_config", NULL), sizeof(bk_config));
    ck_assert_uint_eq(bk_abi_layout("bk_config", "struct_size"), offsetof(bk_config, struct_size));
    ck_assert_uint_eq(bk_abi_layout("bk_filter_stats", "model_fpr"),
                      offsetof(bk_filter_stats, model_fpr));
    ck_assert_uint_eq(bk_abi_layout("bk_config_error", "message"),
                      offsetof(bk_config_error, message));
    ck_assert_uint_eq(bk_abi_layout("bk_plan", NULL), sizeof(bk_plan));
    ck_assert_uint_eq(bk_abi_layout("bk_nothing", NULL), (size_t)-1);
    ck_assert_uint_eq(bk_abi_layout("bk_config", "nothing"), (size_t)-1);
    ck_assert_uint_eq(bk_abi_layout(NULL, NULL), (size_t)-1);
}
END_TEST

/* Every key has storage of its own inside bk_config (a field of 0.1.0's or
 * a slot of more[]), and bk_config_get reads back what bk_config_set
 * wrote, in the text config gives it. */
START_TEST(every_key_has_its_own_storage)
{
    size_t offs[64] = {0};
    unsigned n = 0;
    for (size_t off; (off = bk_config_key_offset(n)) != (size_t)-1; n++) {
        ck_assert_uint_lt(n, 64);
        ck_assert_uint_lt(off, offsetof(bk_config, struct_size));
        for (unsigned j = 0; j < n; j++)
            ck_assert_msg(offs[j] != off, "keys %s and %s share storage",
                          bk_config_key(j, NULL, 0, NULL), bk_config_key(n, NULL, 0, NULL));
        offs[n] = off;
    }
    ck_assert_ptr_null(bk_config_key(n, NULL, 0, NULL));
    bk_config c;
    char v[64];
    ck_assert_int_eq(bk_config_parse(&c,
                                     "variant=window window=90m max_bytes=64M fpr=0.001 "
                                     "key=000102030405060708090a0b0c0d0e0f",
                                     NULL, 0),
                     BK_OK);
    const struct {
        const char *key, *value;
    } want[] = {{"variant", "window"}, {"window", "90m"},
                {"max_bytes", "64M"},  {"fpr", "0.001"},
                {"tightening", "0.3"}, {"key", "000102030405060708090a0b0c0d0e0f"}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        ck_assert_int_eq(bk_config_get(&c, want[i].key, v, sizeof v), (int)strlen(want[i].value));
        ck_assert_str_eq(v, want[i].value);
    }
    ck_assert_int_eq(bk_config_get(&c, "window", v, 3), 3); /* as snprintf: the length needed */
    ck_assert_str_eq(v, "90");
    ck_assert_int_eq(bk_config_get(&c, "nokey", v, sizeof v), BK_ECONFIG);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "known: variant"));
    ck_assert_int_eq(bk_config_get(NULL, "fpr", v, sizeof v), BK_EINVAL);
    ck_assert_int_eq(bk_config_get(&c, "fpr", NULL, 4), BK_EINVAL);
    c.key[0] = 0, c.has_key = 0;
    ck_assert_int_eq(bk_config_get(&c, "key", v, sizeof v), 0);
}
END_TEST

Suite *config_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("config", "parse", &tc);
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, registry_is_the_variant_list);
    tcase_add_test(tc, presets_are_valid_texts);
    tcase_add_test(tc, every_key_and_separator);
    tcase_add_test(tc, bad_values_are_rejected_with_key_and_range);
    tcase_add_test(tc, overlong_values_are_rejected);
    tcase_add_test(tc, null_arguments_and_small_error_buffers);
    tcase_add_test(tc, parse_over_layers_on_existing_values);
    tcase_add_test(tc, format_round_trips);
    tcase_add_test(tc, variant_switch_by_text_alone);
    tcase_add_test(tc, new_validates_struct);
    tcase_add_test(tc, error_texts);
    tcase_add_test(tc, set_takes_one_value_whole);
    tcase_add_test(tc, layers_build_one_configuration);
    tcase_add_test(tc, new_says_what_fits_max_bytes);
    tcase_add_test(tc, docs_list_the_keys_of_the_table);
    tcase_add_test(tc, abi_structs_carry_their_layout);
    tcase_add_test(tc, every_key_has_its_own_storage);
    return s;
}
