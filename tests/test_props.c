/*
 * test_props.c - invariants under random operation sequences.
 *
 * Thousands of short random sequences of add, contains, remove, save, load,
 * merge and checkpoint (save, keep going, later reload and compare) run over
 * every variant and layout, each checked step by step against an exact
 * multiset kept beside the filter:
 *   - never a false negative: a key added (and, for counting, not removed as
 *     often as added) is always reported present, also after save/load, merge
 *     and from a checkpoint taken while it was present;
 *   - add answers "new" only for keys the exact set does not hold;
 *   - counting never goes below zero: a key whose counters are not all
 *     non-zero (looks absent) cannot be removed (BK_ENOTFOUND, nothing changed);
 *   - over all sequences, the measured false-positive rate of keys never added
 *     stays within its bound (the filters' own estimate, plus 4 sigma).
 * The seed is printed; BK_TEST_SEED=... replays a failure exactly.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit.h"
#include "common/hash.h"
#include "suites.h"
#include "testutil.h"

#define UNIVERSE  400 /* key ids a sequence draws from */
#define SEQUENCES 3000
/* The sequences run as this many tests of SEQUENCES / PARTS each, so that
 * none takes long on a slow, loaded machine under a sanitizer (one test of
 * all 3,000 took 150 s under ASan beside other work, half its timeout).
 * Under the sanitizers (tu_small) each part runs the first third of its
 * sequences: 1,000 in all, every variant and operation still met hundreds of
 * times. */
#define PARTS 6

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{
    return tu_next(&r->s); /* the shared test PRNG (testutil.h) */
}

static unsigned below(rng *r, unsigned n)
{
    return (unsigned)(next(r) % n);
}

static size_t key(char *buf, unsigned id)
{
    return (size_t)snprintf(buf, 48, "https://k.example/%u", id);
}

/* Every key the exact set holds must be reported present. */
static void assert_no_false_negative(bk_filter *f, const unsigned *count, const char *when,
                                     uint64_t seq)
{
    char buf[48];
    for (unsigned id = 0; id < UNIVERSE; id++)
        if (count[id])
            ck_assert_msg(bk_contains(f, buf, key(buf, id)) == 1,
                          "sequence %llu: key %u (held %u times) absent %s",
                          (unsigned long long)seq, id, count[id], when);
}

typedef struct totals {
    uint64_t probes, false_pos;
    double expected; /* sum of the filters' estimated rates over the probes */
} totals;

static void run_sequence(uint64_t seed, uint64_t seq, const char *dir, totals *t)
{
    rng r = {seed ^ (seq * UINT64_C(0x2545f4914f6cdd1d))};
    const unsigned v = below(&r, tu_nvariants());
    const int blocked = below(&r, 2);
    const unsigned capacity = 20 + below(&r, 200);
    bk_filter *f =
        tu_filterf("variant=%s capacity=%llu fpr=%g layout=%s key=%016llx%016llx", tu_variant(v),
                   (unsigned long long)tu_capacity_for(v, capacity, 300), /* adds */
                   0.001 * (1 + below(&r, 50)), blocked ? "blocked" : "classic",
                   (unsigned long long)next(&r), (unsigned long long)next(&r));
    unsigned count[UNIVERSE] = {0}, at_checkpoint[UNIVERSE] = {0};
    int have_checkpoint = 0;
    char path[512], ckpt[512], buf[48];
    snprintf(path, sizeof path, "%s/seq.bkf", dir);
    snprintf(ckpt, sizeof ckpt, "%s/ckpt.bkf", dir);
    const unsigned ops = 20 + below(&r, 120);
    for (unsigned op = 0; op < ops; op++) {
        const unsigned id = below(&r, UNIVERSE);
        const size_t len = key(buf, id);
        const unsigned what = below(&r, 100);
        if (what < 45) { /* add */
            const int rc = bk_add(f, buf, len);
            ck_assert_int_ge(rc, 0);
            if (count[id])
                ck_assert_msg(rc == 0, "sequence %llu: add of held key %u said new",
                              (unsigned long long)seq, id);
            count[id]++;
        } else if (what < 70) { /* contains */
            const int rc = bk_contains(f, buf, len);
            ck_assert_int_ge(rc, 0);
            if (count[id])
                ck_assert_msg(rc == 1, "sequence %llu: held key %u absent", (unsigned long long)seq,
                              id);
        } else if (what < 82) { /* remove */
            const int looked = bk_contains(f, buf, len);
            const int rc = bk_remove(f, buf, len);
            if (!bk_variant_removes((bk_variant)v)) {
                ck_assert_int_eq(rc, BK_ENOTSUP);
            } else if (count[id]) {
                ck_assert_int_eq(rc, BK_OK);
                count[id]--;
            } else if (!looked) {
                /* no underflow: a key that looks absent cannot be removed */
                ck_assert_int_eq(rc, BK_ENOTFOUND);
            } else {
                /* a false positive removed: the documented hazard of counting
                 * filters (it takes counts from other keys); undo by adding
                 * it back, which restores every counter below 15 */
                if (rc == BK_OK)
                    ck_assert_int_ge(bk_add(f, buf, len), 0);
            }
        } else if (what < 88) { /* save, load */
            ck_assert_int_eq(bk_save(f, path), BK_OK);
            bk_filter *g = NULL;
            ck_assert_int_eq(bk_load(path, &g), BK_OK);
            bk_free(f);
            f = g;
            assert_no_false_negative(f, count, "after save and load", seq);
        } else if (what < 94) { /* merge a second filter of the same shape */
            bk_config cfg;
            bk_get_config(f, &cfg);
            bk_filter *g = NULL;
            ck_assert_int_eq(bk_new(&cfg, &g), BK_OK);
            unsigned add[UNIVERSE] = {0};
            for (unsigned n = below(&r, 30); n > 0; n--) {
                const unsigned gid = below(&r, UNIVERSE);
                ck_assert_int_ge(bk_add(g, buf, key(buf, gid)), 0);
                add[gid]++;
            }
            const int rc = bk_merge(f, g);
            if (rc == BK_OK) {
                for (unsigned k = 0; k < UNIVERSE; k++)
                    count[k] += add[k];
            } else if (rc != BK_ENOTSUP) { /* a variant that cannot merge says so */
                /* only chains of different lengths may refuse */
                bk_filter_stats sf, sg;
                ck_assert_int_eq(bk_stats(f, &sf), BK_OK);
                ck_assert_int_eq(bk_stats(g, &sg), BK_OK);
                ck_assert_uint_ne(sf.slices, sg.slices);
                ck_assert_int_eq(rc, BK_EINCOMPAT);
            }
            bk_free(g);
            assert_no_false_negative(f, count, "after merge", seq);
        } else { /* checkpoint: saved aside, compared at the end */
            ck_assert_int_eq(bk_save(f, ckpt), BK_OK);
            memcpy(at_checkpoint, count, sizeof count);
            have_checkpoint = 1;
        }
    }
    assert_no_false_negative(f, count, "at the end", seq);
    if (have_checkpoint) {
        bk_filter *c = NULL;
        ck_assert_int_eq(bk_load(ckpt, &c), BK_OK);
        assert_no_false_negative(c, at_checkpoint, "in the checkpoint", seq);
        bk_free(c);
    }
    /* false positives: keys outside the universe were never added */
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    for (unsigned n = 0; n < 50; n++) {
        const size_t len = key(buf, UNIVERSE + 1000 + (unsigned)(next(&r) % 1000000));
        t->false_pos += bk_contains(f, buf, len) == 1;
        t->probes++;
        t->expected += st.est_fpr;
    }
    bk_free(f);
}

START_TEST(random_sequences_keep_every_invariant)
{
    const uint64_t seed = tu_seed("property sequences");
    /* saves fsync: on tmpfs that costs nothing, and thousands of saves stay
     * cheap (the disk path is covered by the io and crash suites) */
    char shm[] = "/dev/shm/bk-props-XXXXXX";
    char *dir = mkdtemp(shm) ? strdup(shm) : tu_tmpdir();
    totals t = {0, 0, 0.0};
    const uint64_t per = SEQUENCES / PARTS / (tu_small() ? 3 : 1),
                   first = (uint64_t)_i * (SEQUENCES / PARTS);
    for (uint64_t seq = first; seq < first + per; seq++)
        run_sequence(seed, seq, dir, &t);
    /* the rate measured over every probe against the filters' own estimate
     * (from their fill: exact for classic, the block model for blocked) */
    const double mean = t.expected, sd = sqrt(t.expected > 1 ? t.expected : 1);
    fprintf(stderr,
            "[property sequences %d/%d] %llu sequences; %llu false positives in %llu probes, "
            "%.1f expected\n",
            _i + 1, PARTS, (unsigned long long)per, (unsigned long long)t.false_pos,
            (unsigned long long)t.probes, mean);
    ck_assert_double_le((double)t.false_pos, mean + 4 * sd + 5);
    tu_rmtree(dir);
}
END_TEST

/* Chosen keys: an adversary who knows hash key A finds URLs that all land on
 * one cache line of a blocked filter (so that each add costs it nothing and
 * the line saturates: the keys then "look seen"). Under another key B, the
 * same URLs scatter like any others. With a per-filter random key the
 * adversary does not know B (docs/security.md). */
START_TEST(keys_crafted_for_one_hash_key_do_not_collide_under_another)
{
    enum { WANT = 40, LINES = 4096 };
    const uint8_t ka[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    const uint8_t kb[16] = {16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    bk_hashkey a, b;
    bk_hashkey_init(&a, ka);
    bk_hashkey_init(&b, kb);
    static char crafted[WANT][48];
    unsigned found = 0;
    char buf[48];
    for (unsigned i = 0; found < WANT; i++) {
        const size_t len = (size_t)snprintf(buf, sizeof buf, "https://evil.example/%u", i);
        bk_hash h;
        bk_hash_key(BK_HASH_SIPHASH24, &a, buf, len, &h);
        const bk_probes p = bk_probes_for(&h, (uint64_t)LINES * 512, 512, BK_PROBES_LCG);
        if (p.base / 512 == 7) /* the chosen line */
            memcpy(crafted[found++], buf, len + 1);
    }
    /* under key A they share one line; under key B count their lines */
    unsigned lines_b[WANT], distinct = 0;
    for (unsigned i = 0; i < WANT; i++) {
        bk_hash h;
        bk_hash_key(BK_HASH_SIPHASH24, &a, crafted[i], strlen(crafted[i]), &h);
        ck_assert_uint_eq(bk_probes_for(&h, (uint64_t)LINES * 512, 512, BK_PROBES_LCG).base / 512,
                          7);
        bk_hash_key(BK_HASH_SIPHASH24, &b, crafted[i], strlen(crafted[i]), &h);
        lines_b[i] =
            (unsigned)(bk_probes_for(&h, (uint64_t)LINES * 512, 512, BK_PROBES_LCG).base / 512);
        unsigned seen = 0;
        for (unsigned j = 0; j < i; j++)
            seen |= lines_b[j] == lines_b[i];
        distinct += !seen;
    }
    /* 40 keys into 4096 lines: about 0.2 pairs share a line by chance */
    ck_assert_uint_ge(distinct, WANT - 3);
    /* and through the public API: a filter keyed B holds them like any keys */
    char text[128];
    snprintf(text, sizeof text,
             "capacity=200 fpr=0.01 layout=blocked key=100f0e0d0c0b0a090807060504030201");
    bk_filter *f = tu_filter(text);
    for (unsigned i = 0; i < WANT; i++)
        ck_assert_int_eq(bk_add(f, crafted[i], strlen(crafted[i])), 1);
    bk_free(f);
}
END_TEST

Suite *props_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("props", "props", &tc);
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, random_sequences_keep_every_invariant, 0, PARTS);
    tcase_add_test(tc, keys_crafted_for_one_hash_key_do_not_collide_under_another);
    return s;
}
