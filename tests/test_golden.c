/*
 * test_golden.c - files written by every format version must load forever.
 *
 * tests/data/golden/NAME.bkf are filters saved by the version the table
 * names; NAME.present lists the keys they hold, NAME.absent keys they
 * answered absent when written. A later change that breaks old files fails
 * here. `make golden` (BK_WRITE_GOLDEN=1) writes only the files of the
 * current version: older ones are kept as they were written.
 */
#include "core/filter_impl.h"
#include "io/format.h"
#include "suites.h"
#include "testutil.h"

#define GOLDEN_DIR "tests/data/golden"

static const struct golden {
    const char *name, *cfg;
    unsigned keys, removed; /* keys added; counting, cuckoo: the first `removed` removed again */
    unsigned version;       /* file format version that wrote it */
} goldens[] = {
    {"standard", "variant=standard capacity=500 fpr=0.01", 300, 0, 1},
    {"counting", "variant=counting capacity=500 fpr=0.01", 300, 50, 1},
    {"scalable", "variant=scalable capacity=100 fpr=0.01 growth=2 tightening=0.5", 1000, 0, 1},
    {"standard-siphash13", "variant=standard capacity=500 fpr=0.001 hash=siphash13", 300, 0, 1},
    {"v2-standard", "variant=standard capacity=500 fpr=0.01", 300, 0, 2},
    {"v2-counting", "variant=counting capacity=500 fpr=0.01", 300, 50, 2},
    {"v2-scalable", "variant=scalable capacity=100 fpr=0.01 growth=2 tightening=0.5", 1000, 0, 2},
    {"v2-scalable-blocked", "variant=scalable layout=blocked capacity=100 fpr=0.01", 1000, 0, 2},
    {"v3-window", "variant=window window=8d capacity=500 fpr=0.01", 1000, 0, 3},
    {"v3-standard-xxh3", "variant=standard capacity=500 fpr=0.001 hash=xxh3", 300, 0, 3},
    {"v3-standard-pinned", "variant=standard bits=4096 hashes=5 capacity=300", 300, 0, 3},
    {"v4-standard", "variant=standard capacity=500 fpr=0.01", 300, 0, 4},
    {"v4-counting", "variant=counting capacity=500 fpr=0.01 layout=blocked", 300, 50, 4},
    {"v4-scalable", "variant=scalable capacity=100 fpr=0.01 max_bytes=64k", 1000, 0, 4},
    {"v4-window", "variant=window window=8d capacity=500 fpr=0.01 hash=siphash13", 1000, 0, 4},
    {"v4-standard-pinned", "variant=standard bits=4096 hashes=5 capacity=300 hash=xxh3", 300, 0, 4},
    {"v4-cuckoo", "variant=cuckoo capacity=500 fpr=0.01 layout=blocked", 300, 50, 4},
    {"v4-expandable", "variant=expandable capacity=100 fpr=0.01", 1000, 0, 4},
};

/* Window goldens are written and read at a fixed time (their keys are not
 * forgotten by the years): keys go in over several days from GOLDEN_T0, and
 * reading happens at the last one. */
#define GOLDEN_T0  INT64_C(1790000000000)
#define GOLDEN_DAY INT64_C(86400000)
static int64_t golden_now = GOLDEN_T0;

static int64_t golden_clock(void *ctx)
{
    (void)ctx;
    return golden_now;
}

/* A chain 0.1.0 wrote (its slices sized by BK_SLICE_AVERAGE) goes on
 * growing as it did: its next slice has the size 0.1.0 gave it, so a copy
 * of it in Redis (whose clients size its slices from its configuration)
 * stays one chain. */
static void grows_as_it_was_sized(bk_filter *f, uint64_t slices)
{
    bk_slice_view v;
    bk_slice_limit l;
    ck_assert_int_eq(bk_chain_slice(&f->cfg, (uint32_t)slices, BK_SLICE_AVERAGE, &v, &l), BK_OK);
    bk_filter_stats before, after;
    bk_stats(f, &before);
    char key[48];
    for (unsigned i = 0; i < 1000000; i++) {
        ck_assert_int_ge(bk_add(f, key, tu_key(key, sizeof key, "grow", i)), 0);
        bk_stats(f, &after);
        if (after.slices > before.slices)
            break;
    }
    ck_assert_uint_eq(after.slices, slices + 1);
    ck_assert_uint_eq(after.bits - before.bits, v.m);
}

static void write_golden(const struct golden *g)
{
    char path[256], key[48];
    bk_filter *f = tu_filterf("%s key=6a09e667f3bcc908bb67ae8584caa73b", g->cfg);
    for (unsigned i = 0; i < g->keys; i++) {
        golden_now = GOLDEN_T0 + (int64_t)(i / 250) * GOLDEN_DAY; /* window: 4 generations */
        bk_add(f, key, tu_key(key, sizeof key, "golden", i));
    }
    for (unsigned i = 0; i < g->removed; i++)
        ck_assert_int_eq(bk_remove(f, key, tu_key(key, sizeof key, "golden", i)), BK_OK);
    snprintf(path, sizeof path, GOLDEN_DIR "/%s.bkf", g->name);
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    snprintf(path, sizeof path, GOLDEN_DIR "/%s.present", g->name);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    for (unsigned i = g->removed; i < g->keys; i++)
        fprintf(fp, "golden:%u\n", i);
    fclose(fp);
    snprintf(path, sizeof path, GOLDEN_DIR "/%s.absent", g->name);
    fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    for (unsigned i = 0; i < 2000; i++)
        if (bk_contains(f, key, tu_key(key, sizeof key, "absent", i)) == 0)
            fprintf(fp, "absent:%u\n", i);
    fclose(fp);
    bk_free(f);
}

/* Every line of list must answer `want`; returns the number of lines. */
static unsigned check_list(const bk_filter *f, const char *name, const char *ext, int want)
{
    char path[256], line[128];
    snprintf(path, sizeof path, GOLDEN_DIR "/%s.%s", name, ext);
    FILE *fp = fopen(path, "r");
    ck_assert_msg(fp != NULL, "missing %s", path);
    unsigned n = 0;
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = '\0';
        ck_assert_msg(bk_contains(f, line, strlen(line)) == want, "%s: '%s' should be %s", path,
                      line, want ? "present" : "absent");
        n++;
    }
    fclose(fp);
    return n;
}

START_TEST(golden_files_load_and_answer_as_recorded)
{
    const struct golden *g = &goldens[_i];
    bk_set_clock(golden_clock, NULL);
    if (getenv("BK_WRITE_GOLDEN") && g->version == BK_FILE_VERSION)
        write_golden(g);
    golden_now = GOLDEN_T0 + (int64_t)((g->keys - 1) / 250) * GOLDEN_DAY;
    char path[256];
    snprintf(path, sizeof path, GOLDEN_DIR "/%s.bkf", g->name);
    for (int use_mmap = 0; use_mmap < 2; use_mmap++) {
        bk_filter *f = NULL;
        const int rc = use_mmap ? bk_open_mmap(path, BK_MAP_READONLY, &f) : bk_load(path, &f);
        ck_assert_msg(rc == BK_OK, "%s: %s", path, bk_last_error());
        const unsigned present = check_list(f, g->name, "present", 1);
        const unsigned absent = check_list(f, g->name, "absent", 0);
        ck_assert_uint_eq(present, g->keys - g->removed);
        ck_assert_uint_gt(absent, 1900);
        bk_filter_stats st;
        bk_stats(f, &st);
        const char *base = g->version > 1 ? g->name + 3 : g->name;
        ck_assert_str_eq(st.variant, strncmp(base, "standard", 8) == 0   ? "standard"
                                     : strncmp(base, "scalable", 8) == 0 ? "scalable"
                                                                         : base);
        if (strcmp(st.variant, "scalable") == 0 || strcmp(st.variant, "window") == 0)
            ck_assert_uint_gt(st.slices, 3);
        if (!use_mmap) { /* the version on disk, and a resave keeps the probes */
            uint8_t head[12];
            FILE *fp = fopen(path, "rb");
            ck_assert_ptr_nonnull(fp);
            ck_assert_uint_eq(fread(head, 1, sizeof head, fp), sizeof head);
            fclose(fp);
            ck_assert_uint_eq(head[8], g->version);
            char *dir = tu_tmpdir(), *again = tu_path(dir, "again.bkf");
            ck_assert_int_eq(bk_save(f, again), BK_OK);
            bk_filter *h = NULL;
            ck_assert_int_eq(bk_load(again, &h), BK_OK);
            ck_assert_uint_eq(check_list(h, g->name, "present", 1), g->keys - g->removed);
            check_list(h, g->name, "absent", 0);
            if (strcmp(st.variant, "scalable") == 0 && g->version > 1)
                grows_as_it_was_sized(h, st.slices);
            /* a new filter of the same config merges with a new file's filter
             * (scalable: not with a longer chain; a variant without merge,
             * cuckoo and expandable: never) and never with an old one's: their
             * probes differ */
            bk_free(h);
            bk_config c;
            ck_assert_int_eq(bk_get_config(f, &c), BK_OK);
            ck_assert_int_eq(bk_new(&c, &h), BK_OK);
            if (!f->ops->merge)
                ck_assert_int_eq(bk_merge(h, f), BK_ENOTSUP);
            else if (g->version == 1 ||
                     (strcmp(st.variant, "scalable") != 0 && strcmp(st.variant, "window") != 0))
                ck_assert_int_eq(bk_merge(h, f), g->version == 1 ? BK_EINCOMPAT : BK_OK);
            bk_free(h);
            free(again);
            tu_rmtree(dir);
        }
        bk_free(f);
    }
    bk_set_clock(NULL, NULL);
}
END_TEST

Suite *golden_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("golden", "formats", &tc);
    tcase_add_loop_test(tc, golden_files_load_and_answer_as_recorded, 0,
                        (int)(sizeof goldens / sizeof *goldens));
    return s;
}
