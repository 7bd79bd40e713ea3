/*
 * test_cuckoo.c - variant=cuckoo: its shape from the rate, a quarter of the
 * counting filter's memory at the same rate, the measured rate inside its
 * model's interval, every key of its capacity held, a full add that changes
 * nothing, removal's multiset and its hazard, sticky saturation, and the
 * blocked layout's lines. The properties every variant shares (files,
 * mappings, batches, threads, faults) are the registry-driven suites'.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuckoo/table.h"
#include "suites.h"
#include "testutil.h"

/* The value of a count key of f's configuration. */
static uint64_t key_of(const bk_filter *f, const char *name)
{
    bk_config c;
    char v[32];
    ck_assert_int_eq(bk_get_config(f, &c), BK_OK);
    ck_assert_int_gt(bk_config_get(&c, name, v, sizeof v), 0);
    return strtoull(v, NULL, 10);
}

/* The filter's one table, copied: to compare states byte for byte. */
static uint8_t *snapshot(const bk_filter *f, uint64_t *n)
{
    bk_slice_view v;
    f->ops->slice_view(f, 0, &v);
    uint8_t *copy = malloc(v.nbytes);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, v.data, v.nbytes);
    *n = v.nbytes;
    return copy;
}

/* Fingerprint and bucket come from the rate and are recorded in the filter
 * (and its file); pinned ones are kept; bk_config_resolve says the same
 * before any filter is made; a 0 asked matches any choice, a pinned value
 * must agree. */
START_TEST(shape_comes_from_the_rate_and_is_recorded)
{
    const struct {
        double fpr;
        unsigned f_min, f_max;
    } rates[] = {{0.1, 6, 8}, {0.01, 9, 11}, {0.001, 12, 14}, {1e-6, 22, 24}};
    unsigned last = 0;
    for (size_t i = 0; i < sizeof rates / sizeof *rates; i++) {
        bk_filter *f = tu_filterf("variant=cuckoo capacity=100000 fpr=%g", rates[i].fpr);
        const unsigned fbits = (unsigned)key_of(f, "fingerprint"),
                       b = (unsigned)key_of(f, "bucket");
        ck_assert_msg(fbits >= rates[i].f_min && fbits <= rates[i].f_max, "fpr %g: f = %u",
                      rates[i].fpr, fbits);
        ck_assert(b == 2 || b == 4 || b == 8);
        ck_assert_uint_gt(fbits, last); /* a lower rate, a longer fingerprint */
        last = fbits;
        bk_config asked, resolved, have;
        char text[64];
        snprintf(text, sizeof text, "variant=cuckoo capacity=100000 fpr=%g", rates[i].fpr);
        ck_assert_int_eq(bk_config_parse(&asked, text, NULL, 0), BK_OK);
        ck_assert_int_eq(bk_config_resolve(&asked, &resolved), BK_OK);
        ck_assert_int_eq(bk_get_config(f, &have), BK_OK);
        resolved.has_key = have.has_key; /* resolve draws no key */
        memcpy(resolved.key, have.key, 16);
        ck_assert_mem_eq(&resolved, &have, sizeof have);
        ck_assert_ptr_null(bk_config_diff(&asked, &have)); /* 0 asked: any choice */
        bk_filter_stats st;
        ck_assert_int_eq(bk_stats(f, &st), BK_OK);
        ck_assert_uint_eq(st.k, 2);
        bk_free(f);
    }
    bk_filter *f = tu_filter("variant=cuckoo capacity=1000 fingerprint=12 bucket=2");
    ck_assert_uint_eq(key_of(f, "fingerprint"), 12);
    ck_assert_uint_eq(key_of(f, "bucket"), 2);
    bk_config want;
    ck_assert_int_eq(bk_config_parse(&want, "variant=cuckoo capacity=1000 fingerprint=11", NULL, 0),
                     BK_OK);
    bk_config have;
    bk_get_config(f, &have);
    ck_assert_str_eq(bk_config_diff(&want, &have), "fingerprint");
    bk_free(f);
    /* a rate no fingerprint reaches, and keys of another variant */
    bk_config c;
    ck_assert_int_eq(bk_config_parse(&c, "variant=cuckoo fpr=1e-12", NULL, 0), BK_OK);
    f = (bk_filter *)&c;
    ck_assert_int_eq(bk_new(&c, &f), BK_ECONFIG);
    ck_assert_ptr_null(f);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "32 bits"));
    ck_assert_int_eq(bk_config_resolve(&c, &c), BK_ECONFIG);
    ck_assert_int_eq(bk_config_parse(&c, "variant=counting fingerprint=8", NULL, 0), BK_ECONFIG);
    ck_assert_int_eq(bk_config_parse(&c, "variant=cuckoo bucket=9", NULL, 0), BK_ECONFIG);
    ck_assert_int_eq(bk_config_parse(&c, "variant=cuckoo max_bytes=1M", NULL, 0), BK_ECONFIG);
}
END_TEST

/* Deleting at a quarter of the memory: bits per key of the cuckoo filter
 * and of the counting filter sized for the same keys and rate. */
START_TEST(a_quarter_of_countings_memory)
{
    const double rates[] = {0.05, 0.01, 0.001, 0.0001};
    for (size_t i = 0; i < sizeof rates / sizeof *rates; i++) {
        bk_filter *ck = tu_filterf("variant=cuckoo capacity=1000000 fpr=%g", rates[i]);
        bk_filter *cnt = tu_filterf("variant=counting capacity=1000000 fpr=%g", rates[i]);
        bk_filter_stats a, b;
        ck_assert_int_eq(bk_stats(ck, &a), BK_OK);
        ck_assert_int_eq(bk_stats(cnt, &b), BK_OK);
        const double ratio = (double)a.bytes / (double)b.bytes;
        fprintf(stderr, "[cuckoo memory] fpr %g: %.2f bits/key, counting %.2f: %.3f of it\n",
                rates[i], 8.0 * (double)a.bytes / 1e6, 8.0 * (double)b.bytes / 1e6, ratio);
        ck_assert_double_le(ratio, 0.36);
        ck_assert_double_ge(ratio, 0.2);
        tu_free_all(ck, cnt);
    }
}
END_TEST

/* The rate on keys never added, in both layouts and at several rates, is
 * within the binomial interval (5 sigma) of the model's rate for the keys
 * held, and never above the rate asked; every added key is present. */
START_TEST(measured_rate_within_the_models_interval)
{
    enum { N = 50000, PROBES = 1000000 };
    const double rates[] = {0.05, 0.01, 0.002};
    for (int blocked = 0; blocked < 2; blocked++)
        for (size_t r = 0; r < sizeof rates / sizeof *rates; r++) {
            bk_filter *f = tu_filterf("variant=cuckoo capacity=%d fpr=%g layout=%s", N, rates[r],
                                      blocked ? "blocked" : "classic");
            tu_add_keys(f, "in", 0, N);
            ck_assert_uint_eq(tu_count_present(f, "in", 0, N), N);
            const uint64_t fp = tu_count_present(f, "out", 0, PROBES);
            bk_filter_stats st;
            ck_assert_int_eq(bk_stats(f, &st), BK_OK);
            const double rate = (double)fp / PROBES, model = st.model_fpr;
            const double sigma = sqrt(model * (1 - model) / PROBES);
            fprintf(stderr, "[cuckoo rate] %s fpr %g: measured %.5f, model %.5f (%.1f sigma)\n",
                    blocked ? "blocked" : "classic", rates[r], rate, model, (rate - model) / sigma);
            ck_assert_double_le(fabs(rate - model), 5 * sigma);
            ck_assert_double_le(model, rates[r]);
            ck_assert_double_le(rate, rates[r] + 5 * sigma);
            ck_assert_uint_eq(st.keys, N);
            ck_assert_double_eq(st.est_cardinality, (double)N);
            bk_free(f);
        }
}
END_TEST

/* Every key of the capacity fits, for small and large tables, and the
 * first add that does not fit comes past it. */
START_TEST(capacity_keys_always_fit)
{
    const uint64_t seed = tu_seed("cuckoo capacity");
    const unsigned caps[] = {1, 2, 3, 7, 10, 30, 100, 1000, 20000};
    for (size_t c = 0; c < sizeof caps / sizeof *caps; c++)
        for (unsigned rep = 0; rep < (caps[c] < 1000 ? 60u : 4u); rep++) {
            bk_filter *f =
                tu_filterf("variant=cuckoo capacity=%u fpr=0.01 layout=%s key=%016llx%016llx",
                           caps[c], rep % 2 ? "blocked" : "classic",
                           (unsigned long long)(seed + rep), (unsigned long long)(c * 1000 + rep));
            char key[32];
            uint64_t i = 0;
            int rc;
            while ((rc = bk_add(f, key, tu_key(key, sizeof key, "cap", i))) >= 0)
                i++;
            ck_assert_int_eq(rc, BK_EFULL);
            ck_assert_msg(i >= caps[c], "capacity %u, try %u: full after %llu keys", caps[c], rep,
                          (unsigned long long)i);
            bk_free(f);
        }
}
END_TEST

/* An add that finds no room changes nothing: the table, its counts and
 * every answer are as before, and the detail says what happened. */
START_TEST(a_full_add_changes_nothing)
{
    bk_filter *f = tu_filter("variant=cuckoo capacity=2000 fpr=0.01");
    char key[32];
    uint64_t i = 0;
    for (;; i++) {
        uint64_t n;
        uint8_t *before = snapshot(f, &n);
        bk_filter_stats a, b;
        bk_stats(f, &a);
        const int rc = bk_add(f, key, tu_key(key, sizeof key, "full", i));
        if (rc >= 0) {
            free(before);
            continue;
        }
        ck_assert_int_eq(rc, BK_EFULL);
        ck_assert_ptr_nonnull(strstr(bk_last_error(), "nothing was changed"));
        uint64_t m;
        uint8_t *after = snapshot(f, &m);
        ck_assert_uint_eq(m, n);
        ck_assert_mem_eq(before, after, n);
        bk_stats(f, &b);
        ck_assert_uint_eq(a.keys, b.keys);
        ck_assert_uint_eq(a.set_bits, b.set_bits);
        ck_assert_uint_eq(tu_count_present(f, "full", 0, i), i);
        free(before);
        free(after);
        break;
    }
    ck_assert_uint_ge(i, 2000);
    /* the keys that fit can still go, and then others fit again */
    char k2[32];
    for (uint64_t j = 0; j < 100; j++)
        ck_assert_int_eq(bk_remove(f, k2, tu_key(k2, sizeof k2, "full", j)), BK_OK);
    ck_assert_int_ge(bk_add(f, key, strlen(key)), 0);
    bk_free(f);
}
END_TEST

/* A multiset, as counting: a key added twice is removed twice. Removing a
 * key never added: BK_ENOTFOUND when it reads absent (nothing changes); when
 * it reads present (a false positive), it takes an added key's fingerprint,
 * and that key can read absent after: the documented hazard. */
START_TEST(removal_is_exact_for_added_keys_and_hazardous_for_others)
{
    bk_filter *f = tu_filter("variant=cuckoo capacity=20000 fpr=0.05");
    tu_assert_multiset(f, "twice");
    tu_add_keys(f, "k", 0, 20000);
    /* A key whose two buckets are full of its own fingerprint (other keys'
     * copies) is saturated: sticky, an add or a remove of it changes
     * nothing (a_saturated_key_is_sticky). Rare at this size: at most a
     * few, and the counts follow exactly what was stored and taken. */
    bk_filter_stats st;
    bk_stats(f, &st);
    const uint64_t stored = st.keys;
    ck_assert_uint_eq(st.set_bits, stored);
    ck_assert_uint_ge(stored, 20000 - 4);
    uint64_t taken = 0;
    for (uint64_t i = 0; i < 20000; i += 2) {
        char key[32];
        ck_assert_int_eq(bk_remove(f, key, tu_key(key, sizeof key, "k", i)), BK_OK);
        bk_stats(f, &st);
        taken += st.keys < stored - taken;
    }
    ck_assert_uint_ge(taken, 10000 - 4);
    for (uint64_t i = 1; i < 20000; i += 2) {
        char key[32];
        ck_assert_int_eq(bk_contains(f, key, tu_key(key, sizeof key, "k", i)), 1);
    }
    bk_stats(f, &st);
    ck_assert_uint_eq(st.keys, stored - taken);
    ck_assert_uint_eq(st.set_bits, stored - taken);
    uint64_t absent = 0, removed = 0;
    for (uint64_t i = 0; i < 20000; i++) {
        char key[32];
        const size_t len = tu_key(key, sizeof key, "never", i);
        const int looked = bk_contains(f, key, len), rc = bk_remove(f, key, len);
        if (!looked) {
            ck_assert_int_eq(rc, BK_ENOTFOUND);
            absent++;
        } else {
            ck_assert_int_eq(rc, BK_OK);
            removed++;
        }
    }
    uint64_t lost = 0; /* of the odd keys, still added */
    for (uint64_t i = 1; i < 20000; i += 2) {
        char key[32];
        lost += bk_contains(f, key, tu_key(key, sizeof key, "k", i)) == 0;
    }
    fprintf(stderr,
            "[cuckoo hazard] %llu never-added keys read present and were removed: %llu added "
            "keys lost (saturated, unchanged: %llu adds, %llu removes)\n",
            (unsigned long long)removed, (unsigned long long)lost,
            (unsigned long long)(20000 - stored), (unsigned long long)(10000 - taken));
    ck_assert_uint_gt(removed, 0);
    ck_assert_uint_gt(lost, 0);
    ck_assert_uint_le(lost, removed);
    ck_assert_uint_gt(absent, removed); /* most never-added keys read absent */
    bk_free(f);
}
END_TEST

/* A key added more times than its two buckets hold saturates: further adds
 * and removes change nothing and it stays present (no count runs out under
 * it, as with a counter at 15); other keys still go in and out. */
START_TEST(a_saturated_key_is_sticky)
{
    bk_filter *f = tu_filter("variant=cuckoo capacity=1000 fpr=0.01");
    const unsigned b = (unsigned)key_of(f, "bucket");
    ck_assert_int_eq(bk_add(f, "hot", 3), 1);
    for (unsigned i = 1; i < 3 * b; i++)
        ck_assert_int_eq(bk_add(f, "hot", 3), 0);
    bk_filter_stats st;
    bk_stats(f, &st);
    ck_assert_uint_le(st.set_bits, 2 * b); /* no more copies than its buckets hold */
    uint64_t n;
    uint8_t *before = snapshot(f, &n), *after;
    ck_assert_int_eq(bk_add(f, "hot", 3), 0);
    for (unsigned i = 0; i < 4 * b; i++)
        ck_assert_int_eq(bk_remove(f, "hot", 3), BK_OK);
    ck_assert_int_eq(bk_contains(f, "hot", 3), 1);
    after = snapshot(f, &n);
    ck_assert_mem_eq(before, after, n);
    /* other keys still go in, all but a key whose two buckets are both hot's
     * (about one seed in 50 meets one among these 500: 2 of the table's
     * buckets, and an alternate index that leads to the other): every slot
     * it could take holds a copy of hot, so it fails with BK_EFULL and
     * changes nothing, as an add into a full filter does */
    char key[32];
    unsigned refused = 0;
    for (uint64_t i = 0; i < 500; i++) {
        const size_t len = tu_key(key, sizeof key, "cold", i);
        uint8_t *pre = snapshot(f, &n);
        const int rc = bk_add(f, key, len);
        if (rc == BK_EFULL) {
            refused++;
            uint8_t *post = snapshot(f, &n);
            ck_assert_mem_eq(pre, post, n);
            free(post);
        } else {
            ck_assert_msg(rc >= 0, "cold:%llu: %s", (unsigned long long)i, bk_last_error());
        }
        free(pre);
    }
    ck_assert_uint_le(refused, 2);
    ck_assert_uint_ge(tu_count_present(f, "cold", 0, 500), 500 - refused);
    free(before);
    free(after);
    bk_free(f);
}
END_TEST

/* The same adds in the same order make the same table, relocations
 * included (a Redis replica replays them); the blocked layout's buckets
 * never straddle a 64-byte line. */
START_TEST(tables_are_deterministic_and_lines_hold_whole_buckets)
{
    const char *cfg =
        "variant=cuckoo capacity=30000 fpr=0.001 key=00112233445566778899aabbccddeeff";
    bk_filter *a = tu_holding(cfg, "d", 0, 31000), *b = tu_holding(cfg, "d", 0, 31000);
    ck_assert(tu_same_filter(a, b));
    tu_free_all(a, b);
    for (unsigned fbits = 1; fbits <= CK_FINGERPRINT_MAX; fbits++)
        for (unsigned bk = 1; bk <= CK_BUCKET_MAX; bk++) {
            bk_config c;
            char text[128];
            snprintf(text, sizeof text,
                     "variant=cuckoo layout=blocked capacity=5000 fingerprint=%u bucket=%u", fbits,
                     bk);
            ck_assert_int_eq(bk_config_parse(&c, text, NULL, 0), BK_OK);
            ck_shape s;
            ck_assert_int_eq(ck_shape_of(&c, &s), BK_OK);
            ck_assert_uint_gt(s.per_line, 0);
            ck_assert_uint_eq(s.buckets % s.per_line, 0);
            for (uint64_t i = 0; i < 3 * s.per_line; i++)
                ck_assert_uint_eq(ck_bit(&s, i, 0) / 512,
                                  (ck_bit(&s, i, bk - 1) + fbits - 1) / 512);
            ck_assert_uint_eq(ck_bytes(&s), s.buckets / s.per_line * 64);
            /* the other bucket's other bucket is the bucket, and never the
             * bucket itself (a key always has 2b slots) */
            ck_assert_uint_eq(s.buckets % 2, 0);
            for (uint64_t i = 0; i < 200; i++)
                for (unsigned fp = 1; fp < 50 && fp < (UINT64_C(1) << fbits) - 1; fp += 7) {
                    ck_assert_uint_ne(ck_other(&s, i, fp), i);
                    ck_assert_uint_eq(ck_other(&s, ck_other(&s, i, fp), fp), i);
                }
        }
    for (unsigned cap = 1; cap <= 64; cap++) { /* packed tables too, of any size */
        bk_config c;
        char text[128];
        snprintf(text, sizeof text, "variant=cuckoo capacity=%u bucket=%u", cap, cap % 8 + 1);
        ck_assert_int_eq(bk_config_parse(&c, text, NULL, 0), BK_OK);
        ck_shape s;
        ck_assert_int_eq(ck_shape_of(&c, &s), BK_OK);
        ck_assert_uint_eq(s.buckets % 2, 0);
        ck_assert_uint_ne(ck_other(&s, cap % s.buckets, cap), cap % s.buckets);
    }
}
END_TEST

/* bk_set_add_once, on every variant that removes (the ones whose add
 * counts copies): repeats add nothing, alone or in batches, so one removal
 * takes a key out; off again, adds count copies again. Not for Redis. */
START_TEST(add_once_holds_a_set)
{
    for (unsigned v = 0; v < tu_nvariants(); v++) {
        if (!bk_variant_removes((bk_variant)v))
            continue;
        bk_filter *f = tu_filterf("variant=%s capacity=10000", tu_variant(v));
        ck_assert_int_eq(bk_set_add_once(f, 1), BK_OK);
        for (int i = 0; i < 40; i++)
            ck_assert_int_eq(bk_add(f, "x", 1), i == 0);
        const void *keys[64];
        size_t lens[64];
        int results[64];
        for (int i = 0; i < 64; i++) {
            keys[i] = i % 2 ? "y" : "z";
            lens[i] = 1;
        }
        ck_assert_int_eq(bk_add_batch(f, keys, lens, 64, results), BK_OK);
        ck_assert_int_eq(results[0] + results[1], 2);
        for (int i = 2; i < 64; i++)
            ck_assert_int_eq(results[i], 0);
        bk_filter_stats st;
        ck_assert_int_eq(bk_stats(f, &st), BK_OK);
        ck_assert_uint_eq(st.keys, 3);
        for (const char *k = "xyz"; *k; k++) {
            ck_assert_int_eq(bk_remove(f, k, 1), BK_OK);
            ck_assert_int_eq(bk_contains(f, k, 1), 0);
        }
        ck_assert_int_eq(bk_set_add_once(f, 0), BK_OK);
        tu_assert_multiset(f, "w");
        bk_free(f);
    }
    ck_assert_int_eq(bk_set_add_once(NULL, 1), BK_EINVAL);
}
END_TEST

Suite *cuckoo_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("cuckoo", "cuckoo", &tc);
    tcase_add_test(tc, shape_comes_from_the_rate_and_is_recorded);
    tcase_add_test(tc, a_quarter_of_countings_memory);
    tcase_add_test(tc, measured_rate_within_the_models_interval);
    tcase_add_test(tc, capacity_keys_always_fit);
    tcase_add_test(tc, a_full_add_changes_nothing);
    tcase_add_test(tc, removal_is_exact_for_added_keys_and_hazardous_for_others);
    tcase_add_test(tc, a_saturated_key_is_sticky);
    tcase_add_test(tc, tables_are_deterministic_and_lines_hold_whole_buckets);
    tcase_add_test(tc, add_once_holds_a_set);
    return s;
}
