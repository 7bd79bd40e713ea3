/*
 * test_golden.c - files written by format version 1 must load forever.
 *
 * tests/data/golden/NAME.bkf are filters saved by this version; NAME.present
 * lists the keys they hold, NAME.absent keys they answered absent when
 * written. A later change that breaks old files fails here. Regenerate (only
 * for a deliberate new format version, keeping the old files) with
 * `make golden`, which runs this suite with BK_WRITE_GOLDEN=1.
 */
#include "suites.h"
#include "testutil.h"

#define GOLDEN_DIR "tests/data/golden"

static const struct golden {
    const char *name, *cfg;
    unsigned keys, removed; /* keys added; counting: the first `removed` removed again */
} goldens[] = {
    {"standard", "variant=standard capacity=500 fpr=0.01", 300, 0},
    {"counting", "variant=counting capacity=500 fpr=0.01", 300, 50},
    {"scalable", "variant=scalable capacity=100 fpr=0.01 growth=2 tightening=0.5", 1000, 0},
    {"standard-siphash13", "variant=standard capacity=500 fpr=0.001 hash=siphash13", 300, 0},
};

static void write_golden(const struct golden *g)
{
    char cfg[256], path[256], key[48];
    snprintf(cfg, sizeof cfg, "%s key=6a09e667f3bcc908bb67ae8584caa73b", g->cfg);
    bk_filter *f = tu_filter(cfg);
    for (unsigned i = 0; i < g->keys; i++)
        bk_add(f, key, tu_key(key, sizeof key, "golden", i));
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
    if (getenv("BK_WRITE_GOLDEN"))
        write_golden(g);
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
        ck_assert_str_eq(st.variant, strncmp(g->name, "standard", 8) == 0 ? "standard" : g->name);
        if (strcmp(g->name, "scalable") == 0)
            ck_assert_uint_gt(st.slices, 3);
        bk_free(f);
    }
}
END_TEST

Suite *golden_suite(void)
{
    Suite *s = suite_create("golden");
    TCase *tc = tcase_create("format_v1");
    tcase_add_loop_test(tc, golden_files_load_and_answer_as_recorded, 0,
                        (int)(sizeof goldens / sizeof *goldens));
    suite_add_tcase(s, tc);
    return s;
}
