/*
 * test_errors.c - the error model (bloomkit.h, at bk_last_error): every
 * public call that fails leaves its own detail, never an earlier call's.
 * Each function of both public headers that can fail is called with a bad
 * argument right after an unrelated failure, and the detail it leaves must
 * be its own; the headers are read so that a new function cannot be left
 * out of the table.
 */
#include <stdio.h>
#include <string.h>

#include "bloomkit.h"
#include "bloomkit_tools.h"
#include "bloomkit_redis.h"
#include "bloomkit_redisbloom.h"
#include "suites.h"
#include "testutil.h"

/* The unrelated failure each call follows: its detail names this path. */
#define STALE_PATH "/nonexistent-bloomkit-dir/stale.bkf"

static bk_filter *g_std;    /* a standard filter */
static bk_filter *g_cnt;    /* a counting filter */
static bk_workers *g_w;     /* two threads */
static char *g_dir, *g_tmp; /* a scratch directory, and a file's path in it */

static void setup(void)
{
    g_std = tu_filter("capacity=1000");
    g_cnt = tu_filter("variant=counting capacity=1000");
    ck_assert_int_eq(bk_workers_new(2, &g_w), BK_OK);
    g_dir = tu_tmpdir();
    g_tmp = tu_path(g_dir, "bk_errors.bkf");
}

static void teardown(void)
{
    bk_free(g_std);
    bk_free(g_cnt);
    bk_workers_free(g_w);
    free(g_tmp);
    tu_rmtree(g_dir);
}

/* Each row: the call with a bad argument, as a function returning its code. */
static const char *const no_key = NULL;
static const size_t len5 = 5;

static int call_new(void)
{
    return bk_new(NULL, NULL);
}
static int call_add(void)
{
    return bk_add(g_std, NULL, 5);
}
static int call_contains(void)
{
    return bk_contains(g_std, NULL, 5);
}
static int call_remove(void)
{
    return bk_remove(g_std, "k", 1);
}
static int call_remove_absent(void)
{
    return bk_remove(g_cnt, "never added", 11);
}
static int call_set_add_once(void)
{
    return bk_set_add_once(NULL, 1);
}

static int call_touch(void)
{
    return bk_touch(NULL);
}
static int call_set_single_writer(void)
{
    return bk_set_single_writer(NULL, 1);
}
static int call_clear(void)
{
    return bk_clear(NULL);
}
static int call_expire(void)
{
    return bk_expire(NULL);
}
static int call_add_batch(void)
{
    int r;
    return bk_add_batch(g_std, (const void *const *)&no_key, &len5, 1, &r);
}
static int call_contains_batch(void)
{
    return bk_contains_batch(g_std, NULL, NULL, 3, NULL);
}
static int call_add_batch_mt(void)
{
    int r;
    return bk_add_batch_mt(g_std, g_w, (const void *const *)&no_key, &len5, 1, &r);
}
static int call_contains_batch_mt(void)
{
    return bk_contains_batch_mt(g_std, g_w, NULL, NULL, 3, NULL);
}
static int call_workers_new(void)
{
    bk_workers *w;
    return bk_workers_new(BK_WORKERS_MAX + 1, &w);
}
static int call_stats(void)
{
    return bk_stats(NULL, NULL);
}
static int call_stats_sized(void)
{
    bk_filter_stats st;
    return bk_stats_sized(g_std, &st, 0);
}
static int call_slice_info(void)
{
    bk_slice_stats st;
    return bk_slice_info(g_std, 99, &st, sizeof st);
}
static int call_stats_held(void)
{
    return bk_stats_held(g_std, NULL, 0);
}
static int call_slice_held(void)
{
    bk_slice_stats st;
    return bk_slice_held(g_std, 99, &st, sizeof st);
}
static int call_figure_at(void)
{
    bk_filter_stats st;
    bk_figure fig;
    memset(&st, 0, sizeof st);
    return bk_figure_at(0, &st, NULL, &fig, sizeof fig);
}
static int call_copy(void)
{
    bk_filter *g;
    return bk_copy(NULL, &g);
}
static int call_get_config(void)
{
    return bk_get_config(NULL, NULL);
}
static int call_get_setting(void)
{
    char v[8];
    return bk_get_setting(NULL, "input", v, sizeof v);
}
static int call_equal(void)
{
    return bk_equal(NULL, g_std);
}
static int call_merge(void)
{
    return bk_merge(g_std, g_cnt);
}
static int call_intersect(void)
{
    return bk_intersect(g_cnt, g_cnt);
}
static int call_plan_size(void)
{
    bk_plan p;
    return bk_plan_size(0, 0.01, &p);
}
static int call_plan_config(void)
{
    bk_plan p;
    return bk_plan_config(NULL, &p);
}
static int call_plan_capacity(void)
{
    bk_config c;
    bk_config_init(&c);
    uint64_t n;
    bk_plan p;
    return bk_plan_capacity(&c, &n, &p); /* no bits pinned */
}
static int call_config_parse(void)
{
    bk_config c;
    return bk_config_parse(&c, "capacity=0", NULL, 0);
}
static int call_config_parse_over(void)
{
    bk_config c;
    bk_config_init(&c);
    return bk_config_parse_over(&c, "fpr=2", NULL, 0);
}
static int call_config_read(void)
{
    bk_config c;
    bk_config_init(&c);
    return bk_config_read(&c, "variant=cuckoo-not", NULL);
}
static int call_config_set(void)
{
    bk_config c;
    bk_config_init(&c);
    return bk_config_set(&c, "no_such_key", "1", NULL, 0);
}
static int call_config_validate(void)
{
    bk_config c;
    bk_config_init(&c);
    c.fpr = 2;
    return bk_config_validate(&c, NULL, 0);
}
static int call_config_build_text(void)
{
    bk_config_build b;
    bk_config_build_init(&b, NULL);
    return bk_config_build_text(&b, "capacity=apples", NULL);
}
static int call_config_build_set(void)
{
    bk_config_build b;
    bk_config_build_init(&b, NULL);
    return bk_config_build_set(&b, "no_such_key", "1", NULL, 0);
}
static int call_config_build_finish(void)
{
    bk_config_build b;
    bk_config c;
    bk_config_build_init(&b, NULL);
    bk_config_build_set(&b, "hashes", "3", NULL, 0);
    return bk_config_build_finish(&b, &c, NULL);
}
static int call_config_format(void)
{
    char buf[8];
    return bk_config_format(NULL, 0, buf, sizeof buf);
}
static int call_config_resolve(void)
{
    bk_config c;
    bk_config_init(&c);
    c.fpr = -1; /* invalid */
    return bk_config_resolve(&c, &c);
}
static int call_config_get(void)
{
    bk_config c;
    bk_config_init(&c);
    char buf[32];
    return bk_config_get(&c, "no_such_key", buf, sizeof buf);
}
static int call_url_canonical(void)
{
    size_t n;
    char out[4];
    return bk_url_canonical("http://example.com/", 19, 0, out, sizeof out, &n);
}
static int call_set_allocator(void)
{
    const bk_allocator a = {NULL, NULL, NULL};
    return bk_set_allocator(&a);
}
static int call_set_allocator_zeroed(void)
{
    const bk_allocator a = {NULL, NULL, NULL};
    return bk_set_allocator_zeroed(&a, NULL);
}
static int call_save(void)
{
    return bk_save(g_cnt, "");
}
static int call_load(void)
{
    bk_filter *g;
    return bk_load(NULL, &g);
}
static int call_save_size(void)
{
    return bk_save_size(g_std, NULL);
}
static int call_save_progress(void)
{
    return bk_save_progress(NULL, "/tmp/x.bkf", NULL, NULL);
}
static int call_save_buffer(void)
{
    char buf[16];
    size_t n;
    return bk_save_buffer(g_std, buf, sizeof buf, &n); /* too small */
}
static int call_load_buffer(void)
{
    bk_filter *g;
    return bk_load_buffer("not a filter", 12, &g);
}
static int call_image_size(void)
{
    uint64_t n;
    return bk_image_size("short", 5, &n);
}
static int call_lock_file(void)
{
    bk_file_lock *l;
    return bk_lock_file("", 0, &l);
}
static int call_open_mmap(void)
{
    bk_filter *g;
    return bk_open_mmap(g_tmp, 0, &g); /* no such file */
}
static int call_sync(void)
{
    return bk_sync(g_std);
} /* not mapped */
/* A mapped filter whose file another writer replaced: its sync fails. */
static int call_close(void)
{
    bk_filter *g;
    ck_assert_int_eq(bk_save(g_std, g_tmp), BK_OK);
    ck_assert_int_eq(bk_open_mmap(g_tmp, BK_MAP_WRITE, &g), BK_OK);
    ck_assert_int_eq(bk_save(g_cnt, g_tmp), BK_OK); /* replaced */
    ck_assert_int_eq(bk_add(g, "k", 1), 1);
    return bk_close(g);
}
static int call_redis_open(void)
{
    bk_filter *g;
    return bk_redis_open(NULL, NULL, &g);
}
static int call_redis_open_existing(void)
{
    bk_filter *g;
    return bk_redis_open_existing("not-a-url", &g);
}
static int call_redis_open_default(void)
{
    bk_filter *g;
    return bk_redis_open_default("redis://127.0.0.1:1/x", NULL, &g);
}
static int call_redis_open_config(void)
{
    bk_filter *g;
    return bk_redis_open_config("redis://127.0.0.1:1/x", "fpr=7", NULL, 0, &g);
}
static int call_redis_push(void)
{
    return bk_redis_push(NULL, "redis://127.0.0.1:1/x");
}
static int call_redis_pull(void)
{
    return bk_redis_pull("redis://127.0.0.1:1/x", NULL);
}
static int call_redis_drop(void)
{
    return bk_redis_drop(NULL);
}
static int call_count_parse(void)
{
    uint64_t v;
    return bk_count_parse("12 apples", &v);
}
static int call_redis_import_set(void)
{
    bk_redis_import_stats st;
    return bk_redis_import_set("redis://127.0.0.1:1/x", NULL, NULL, NULL, NULL, &st);
}
static int call_redis_key_type(void)
{
    char type[16];
    uint64_t size;
    return bk_redis_key_type("redis://127.0.0.1:1/x", "k", type, 0, &size);
}

/* The calls only some variants answer, on a standard filter; RedisBloom's. */
static int call_count(void)
{
    uint64_t n;
    return bk_count(g_std, "k", 1, &n);
}
static int call_compact(void)
{
    return bk_compact(g_std);
}
static int call_set_grow_check(void)
{
    return bk_set_grow_check(g_std, NULL, NULL);
}
static void *no_move(void *block, void *arg)
{
    (void)arg;
    (void)block;
    return NULL;
}
static int call_defrag(void)
{
    return bk_defrag(g_std, 1, no_move, NULL); /* one array: 0 */
}
static int call_rbchain_new(void)
{
    bk_filter *f;
    return bk_filter_rbchain_new(0, 0.01, 2, 0, 0, &f);
}
static int call_rbchain_from(void)
{
    bk_filter *f;
    const bk_rbchain_info in = {0};
    return bk_filter_rbchain_from(&in, NULL, 0, 0, 0, &f);
}
static int call_rbchain_info_of(void)
{
    bk_rbchain_info in;
    return bk_rbchain_info_of(g_std, &in);
}
static int call_rbchain_link_of(void)
{
    bk_rbchain_link l;
    return bk_rbchain_link_of(g_std, 0, &l);
}
static int call_rbcuckoo_new(void)
{
    bk_filter *f;
    return bk_filter_rbcuckoo_new(1000, 0, 20, 1, 0, &f);
}
static int call_rbcuckoo_from(void)
{
    bk_filter *f;
    const bk_rbcuckoo_info in = {0};
    return bk_filter_rbcuckoo_from(&in, NULL, 0, 0, &f);
}
static int call_rbcuckoo_info_of(void)
{
    bk_rbcuckoo_info in;
    return bk_rbcuckoo_info_of(g_std, &in);
}
static int call_rbcuckoo_slots(void)
{
    uint8_t *data;
    uint64_t n;
    return bk_rbcuckoo_slots(g_std, 0, &data, &n);
}
static int call_chunked_header(void)
{
    size_t len;
    return bk_chunked_header(g_std, NULL, 0, &len);
}
static int call_chunked_next(void)
{
    const uint8_t *data;
    size_t len;
    long long next;
    return bk_chunked_next(g_std, 1, &data, &len, &next);
}
static int call_chunked_load(void)
{
    return bk_chunked_load(g_std, 2, "x", 1);
}
static int call_chunked_new(void)
{
    bk_filter *f;
    return bk_chunked_new(BK_VARIANT_RBCHAIN, "x", 1, 0, 0, &f);
}

/* What a Redis call's detail holds when this build has no hiredis. */
#if BK_HAVE_HIREDIS
#define REDIS_SAYS(word) word
#else
#define REDIS_SAYS(word) "without hiredis"
#endif

static const struct row {
    const char *name; /* the public function */
    int (*call)(void);
    const char *says; /* a word its detail must hold */
} rows[] = {
    {"bk_new", call_new, "new"},
    {"bk_add", call_add, "add"},
    {"bk_contains", call_contains, "contains"},
    {"bk_remove", call_remove, "cannot remove"},
    {"bk_remove", call_remove_absent, "not in the filter"},
    {"bk_set_single_writer", call_set_single_writer, "single_writer"},
    {"bk_set_add_once", call_set_add_once, "add_once"},
    {"bk_touch", call_touch, "touch"},
    {"bk_count", call_count, "count"},
    {"bk_compact", call_compact, "compact"},
    {"bk_set_grow_check", call_set_grow_check, "set_grow_check"},
    {"bk_defrag", call_defrag, "no array 1"},
    {"bk_filter_rbchain_new", call_rbchain_new, "capacity"},
    {"bk_filter_rbchain_from", call_rbchain_from, "rbchain_from"},
    {"bk_rbchain_info_of", call_rbchain_info_of, "not rbchain"},
    {"bk_rbchain_link_of", call_rbchain_link_of, "not rbchain"},
    {"bk_filter_rbcuckoo_new", call_rbcuckoo_new, "bucket"},
    {"bk_filter_rbcuckoo_from", call_rbcuckoo_from, "sub-filter"},
    {"bk_rbcuckoo_info_of", call_rbcuckoo_info_of, "not rbcuckoo"},
    {"bk_rbcuckoo_slots", call_rbcuckoo_slots, "not rbcuckoo"},
    {"bk_chunked_header", call_chunked_header, "chunked dump"},
    {"bk_chunked_next", call_chunked_next, "chunked dump"},
    {"bk_chunked_load", call_chunked_load, "chunked load"},
    {"bk_chunked_new", call_chunked_new, "header"},
    {"bk_clear", call_clear, "clear"},
    {"bk_expire", call_expire, "expire"},
    {"bk_add_batch", call_add_batch, "key 0"},
    {"bk_contains_batch", call_contains_batch, "contains_batch"},
    {"bk_add_batch_mt", call_add_batch_mt, "add_batch_mt"},
    {"bk_contains_batch_mt", call_contains_batch_mt, "contains_batch_mt"},
    {"bk_workers_new", call_workers_new, "threads"},
    {"bk_stats", call_stats, "stats"},
    {"bk_stats_sized", call_stats_sized, "stats"},
    {"bk_slice_info", call_slice_info, "slice 99"},
    {"bk_stats_held", call_stats_held, "stats_held"},
    {"bk_slice_held", call_slice_held, "slice 99"},
    {"bk_figure_at", call_figure_at, "figure_at"},
    {"bk_copy", call_copy, "copy"},
    {"bk_get_config", call_get_config, "get_config"},
    {"bk_get_setting", call_get_setting, "get_setting"},
    {"bk_equal", call_equal, "equal"},
    {"bk_merge", call_merge, "variants differ"},
    {"bk_intersect", call_intersect, "counting"},
    {"bk_plan_size", call_plan_size, "capacity"},
    {"bk_plan_config", call_plan_config, "plan"},
    {"bk_plan_capacity", call_plan_capacity, "bits"},
    {"bk_config_parse", call_config_parse, "capacity"},
    {"bk_config_parse_over", call_config_parse_over, "fpr"},
    {"bk_config_read", call_config_read, "variant"},
    {"bk_config_set", call_config_set, "no_such_key"},
    {"bk_config_validate", call_config_validate, "fpr"},
    {"bk_config_build_text", call_config_build_text, "capacity"},
    {"bk_config_build_set", call_config_build_set, "no_such_key"},
    {"bk_config_build_finish", call_config_build_finish, "hashes"},
    {"bk_config_format", call_config_format, "config_format"},
    {"bk_config_get", call_config_get, "no_such_key"},
    {"bk_config_resolve", call_config_resolve, "fpr"},
    {"bk_count_parse", call_count_parse, "12 apples"},
    {"bk_url_canonical", call_url_canonical, "output"},
    {"bk_set_allocator", call_set_allocator, "allocator"},
    {"bk_set_allocator_zeroed", call_set_allocator_zeroed, "allocator"},
    {"bk_save", call_save, "save"},
    {"bk_save_progress", call_save_progress, "save"},
    {"bk_load", call_load, "load"},
    {"bk_save_size", call_save_size, "save size"},
    {"bk_save_buffer", call_save_buffer, "bytes needed"},
    {"bk_load_buffer", call_load_buffer, "128-byte header"},
    {"bk_image_size", call_image_size, "128 bytes"},
    {"bk_lock_file", call_lock_file, "lock"},
    {"bk_open_mmap", call_open_mmap, "bk_errors.bkf"},
    {"bk_sync", call_sync, "not mapped"},
    {"bk_close", call_close, "replaced"},
    {"bk_redis_open", call_redis_open, REDIS_SAYS("redis")},
    {"bk_redis_open_existing", call_redis_open_existing, REDIS_SAYS("redis://")},
    {"bk_redis_open_default", call_redis_open_default, REDIS_SAYS("no config")},
    {"bk_redis_open_config", call_redis_open_config, REDIS_SAYS("fpr")},
    {"bk_redis_push", call_redis_push, REDIS_SAYS("push")},
    {"bk_redis_pull", call_redis_pull, REDIS_SAYS("pull")},
    {"bk_redis_drop", call_redis_drop, REDIS_SAYS("redis")},
    {"bk_redis_import_set", call_redis_import_set, REDIS_SAYS("no url, set or stats")},
    {"bk_redis_key_type", call_redis_key_type, REDIS_SAYS("no url, key or output")},
};

/* Public functions that return int but cannot fail: they answer 0 or 1
 * (bk_config_text_sets, bk_variant_removes, bk_variant_grows, bk_workers_help). */
static const char *const never_fail[] = {"bk_config_text_sets",   "bk_variant_removes",
                                         "bk_variant_grows",      "bk_workers_help",
                                         "bk_config_key_applies", "bk_config_build_stated"};

/* Leave a detail that no call of the table would write. */
static void fail_unrelated(void)
{
    bk_filter *g;
    ck_assert_int_eq(bk_load(STALE_PATH, &g), BK_EIO);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "stale.bkf"));
}

START_TEST(each_failure_leaves_its_own_detail)
{
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        fail_unrelated();
        const int rc = rows[i].call();
        const char *d = bk_last_error();
        ck_assert_msg(rc < 0, "%s: returned %d, not a failure", rows[i].name, rc);
        ck_assert_msg(strstr(d, "stale.bkf") == NULL, "%s (%s): the detail is stale: %s",
                      rows[i].name, bk_err_name(rc), d);
        ck_assert_msg(strstr(d, rows[i].says) != NULL, "%s (%s): '%s' does not say '%s'",
                      rows[i].name, bk_err_name(rc), d, rows[i].says);
    }
}
END_TEST

/* Growth that fails deep inside bk_add (a chain at its max_bytes) says so,
 * whatever failed before. */
START_TEST(a_deep_failure_of_add_is_fresh)
{
    bk_filter *f = tu_filter("variant=scalable capacity=100 max_bytes=4k");
    int rc = 0;
    char key[32];
    for (unsigned i = 0; rc >= 0 && i < 100000; i++) {
        if (i % 64 == 0)
            fail_unrelated();
        rc = bk_add(f, key, (size_t)snprintf(key, sizeof key, "k%u", i));
    }
    ck_assert_int_eq(rc, BK_EFULL);
    ck_assert_msg(strstr(bk_last_error(), "max_bytes") != NULL, "%s", bk_last_error());
    bk_free(f);
}
END_TEST

/* Names of the int-returning functions a header declares. */
static size_t declared(const char *path, char names[][64], size_t cap)
{
    FILE *fp = fopen(path, "r");
    ck_assert_msg(fp != NULL, "open %s", path);
    char line[512];
    size_t n = 0;
    while (fgets(line, sizeof line, fp)) {
        char name[60];
        if (sscanf(line, "BK_API int bk_%59[a-z0-9_](", name) == 1 && n < cap)
            snprintf(names[n++], sizeof names[0], "bk_%s", name);
    }
    fclose(fp);
    return n;
}

START_TEST(the_table_covers_every_header)
{
    static char names[256][64];
    size_t n = declared("include/bloomkit.h", names, 256);
    n += declared("include/bloomkit_tools.h", names + n, 256 - n);
    n += declared("include/bloomkit_redis.h", names + n, 256 - n);
    n += declared("include/bloomkit_redisbloom.h", names + n, 256 - n);
    ck_assert_uint_gt(n, 40);
    for (size_t i = 0; i < n; i++) {
        int found = 0;
        for (size_t j = 0; j < sizeof rows / sizeof *rows && !found; j++)
            found = strcmp(rows[j].name, names[i]) == 0;
        for (size_t j = 0; j < sizeof never_fail / sizeof *never_fail && !found; j++)
            found = strcmp(never_fail[j], names[i]) == 0;
        ck_assert_msg(found, "%s: not in test_errors.c's table", names[i]);
    }
}
END_TEST

Suite *errors_suite(void)
{
    Suite *s = suite_create("errors");
    TCase *tc = tu_tcase("errors");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, each_failure_leaves_its_own_detail);
    tcase_add_test(tc, a_deep_failure_of_add_is_fresh);
    tcase_add_test(tc, the_table_covers_every_header);
    suite_add_tcase(s, tc);
    return s;
}
