/*
 * test_import.c - a Redis set's members into a shared filter
 * (bk_redis_import_set, `bloomkit import`), and what an opener says when a
 * filter's name holds someone else's data, against a real redis-server.
 *
 * What is proven: a set of request fingerprints (as scrapy-redis keeps
 * them) imported in place becomes a filter holding each fingerprint's 20
 * bytes, the set kept under the reported name; a second import resumes and
 * adds nothing twice, even to a counting filter; a stopped import keeps what
 * it added; a refused import (not fingerprints, no set, the kept name taken,
 * a filter of raw keys) changes nothing; a set or a bitmap at a filter's name
 * is named, with what to do, and left as it was; the command's exit codes.
 */
#include "suites.h"

#if !BK_HAVE_HIREDIS
#include <stdio.h>

Suite *import_suite(void)
{
    fprintf(stderr, "import suite: SKIPPED, built without hiredis (Debian package "
                    "libhiredis-dev)\n");
    return suite_create("import");
}
#else
#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "bloomkit_redis.h"
#include "redis_server.h"
#include "testutil.h"

#ifndef BK_CLI_PATH
#define BK_CLI_PATH "build/bloomkit"
#endif

#define MEMBERS 3000u

static test_redis srv;

static void start_server(void)
{
    if (test_redis_start(&srv, 0, NULL) != 0) {
        fprintf(stderr, "import suite: could not start redis-server\n");
        exit(1);
    }
}

static void stop_server(void)
{
    test_redis_stop(&srv);
}

static redisReply *cmd(const char *fmt, ...)
{
    redisContext *c = redisConnect("127.0.0.1", srv.port);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->err, 0);
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    redisFree(c);
    ck_assert_ptr_nonnull(r);
    return r;
}

static long long cmd_int(const char *fmt, const char *arg)
{
    redisReply *r = cmd(fmt, arg);
    ck_assert_int_eq(r->type, REDIS_REPLY_INTEGER);
    const long long n = r->integer;
    freeReplyObject(r);
    return n;
}

static void type_is(const char *key, const char *type)
{
    redisReply *r = cmd("TYPE %s", key);
    ck_assert_str_eq(r->str, type);
    freeReplyObject(r);
}

/* Fingerprint i of family fam: 20 bytes from the test's seed, and its hex. */
static void fingerprint(unsigned fam, unsigned i, uint8_t bytes[20], char hex[41])
{
    static uint64_t seed;
    if (!seed)
        seed = tu_seed("fingerprints") | 1;
    uint64_t s = seed ^ ((uint64_t)fam << 32 | i);
    for (int j = 0; j < 20; j += 4) {
        const uint64_t v = tu_next(&s);
        memcpy(bytes + j, &v, 4);
    }
    for (int j = 0; j < 20; j++)
        snprintf(hex + 2 * j, 3, "%02x", bytes[j]);
}

/* A set KEY of n fingerprints of family fam, as scrapy-redis keeps them. */
static void make_set(const char *key, unsigned fam, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        uint8_t b[20];
        char hex[41];
        fingerprint(fam, i, b, hex);
        redisReply *r = cmd("SADD %s %s", key, hex);
        freeReplyObject(r);
    }
}

static const char *url_of(const char *name, char *buf)
{
    return test_redis_url(&srv, name, NULL, buf, 256);
}

/* Fingerprints of family fam 0 .. n-1 the filter at url holds. */
static unsigned holding(const char *url, unsigned fam, unsigned n)
{
    bk_filter *f;
    ck_assert_int_eq(bk_redis_open_existing(url, &f), BK_OK);
    unsigned in = 0;
    for (unsigned i = 0; i < n; i++) {
        uint8_t b[20];
        char hex[41];
        fingerprint(fam, i, b, hex);
        const int rc = bk_contains(f, b, 20);
        ck_assert_int_ge(rc, 0);
        in += (unsigned)rc;
    }
    bk_free(f);
    return in;
}

static int calls, stop_at;
static int count_calls(uint64_t done, uint64_t total, void *arg)
{
    (void)arg;
    ck_assert_uint_le(done, total);
    ck_assert_uint_eq(total, MEMBERS);
    return ++calls == stop_at;
}

START_TEST(a_set_imported_in_place_becomes_the_filter_and_resumes)
{
    char url[256];
    make_set("crawl:dupefilter", 1, MEMBERS);
    url_of("crawl:dupefilter", url);
    /* stopped after its first batch: what it added stays, the set is kept */
    bk_redis_import_stats st;
    calls = 0, stop_at = 1;
    ck_assert_int_eq(bk_redis_import_set(url, "crawl:dupefilter", NULL, count_calls, NULL, &st),
                     BK_ECANCELED);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "stopped after"));
    ck_assert_str_eq(st.kept, "{crawl:dupefilter}:imported");
    ck_assert_uint_gt(st.members, 0);
    ck_assert_uint_lt(st.members, MEMBERS);
    const uint64_t first = st.added;
    type_is("crawl:dupefilter", "hash");
    type_is("{crawl:dupefilter}:imported", "set");
    ck_assert_uint_eq(holding(url, 1, MEMBERS) >= first, 1);
    /* run again: it resumes from the kept set, to the end */
    calls = 0, stop_at = 0;
    ck_assert_int_eq(bk_redis_import_set(url, "crawl:dupefilter", NULL, count_calls, NULL, &st),
                     BK_OK);
    ck_assert_uint_eq(st.members, MEMBERS);
    ck_assert_uint_eq(first + st.added, MEMBERS);
    ck_assert_int_ge(calls, 3); /* SSCAN's batches, each reported */
    ck_assert_uint_eq(holding(url, 1, MEMBERS), MEMBERS);
    /* the defaults of a crawl's filter, and what its keys are */
    bk_filter *f;
    ck_assert_int_eq(bk_redis_open_existing(url, &f), BK_OK);
    bk_config cfg;
    bk_get_config(f, &cfg);
    char input[32];
    ck_assert_int_eq(bk_get_setting(f, "input", input, sizeof input), 12);
    ck_assert_str_eq(input, "scrapy-redis");
    ck_assert_int_eq(cfg.variant, BK_VARIANT_SCALABLE);
    ck_assert_uint_eq(cfg.capacity, 1000000);
    bk_free(f);
    /* others rarely read present: the filter's rate, not the set's */
    ck_assert_uint_le(holding(url, 2, MEMBERS), 2);
    ck_assert_int_eq(cmd_int("SCARD %s", "{crawl:dupefilter}:imported"), MEMBERS);
    ck_assert_int_eq(bk_redis_drop(url), BK_OK);
    redisReply *r = cmd("DEL {crawl:dupefilter}:imported");
    freeReplyObject(r);
}
END_TEST

START_TEST(a_counting_import_adds_each_member_once)
{
    char url[256];
    make_set("counted", 3, 500);
    url_of("counts", url);
    bk_redis_import_stats st;
    for (int run = 0; run < 2; run++) {
        ck_assert_int_eq(
            bk_redis_import_set(url, "counted", "variant=counting capacity=10000", NULL, NULL, &st),
            BK_OK);
        ck_assert_uint_eq(st.members, 500);
        ck_assert_uint_eq(st.added, run == 0 ? 500 : 0);
        ck_assert_str_eq(st.kept, "");
    }
    type_is("counted", "set"); /* not in place: the set stays as it is */
    /* one removal takes each out: it was added once */
    bk_filter *f;
    ck_assert_int_eq(bk_redis_open_existing(url, &f), BK_OK);
    unsigned still = 0;
    for (unsigned i = 0; i < 500; i++) {
        uint8_t b[20];
        char hex[41];
        fingerprint(3, i, b, hex);
        ck_assert_int_eq(bk_remove(f, b, 20), BK_OK);
        still += (unsigned)bk_contains(f, b, 20);
    }
    ck_assert_uint_le(still, 2);
    bk_free(f);
    ck_assert_int_eq(bk_redis_drop(url), BK_OK);
    redisReply *r = cmd("DEL counted");
    freeReplyObject(r);
}
END_TEST

static int by_name(const void *a, const void *b)
{
    return strcmp((*(redisReply *const *)a)->str, (*(redisReply *const *)b)->str);
}

/* Every key on the server, sorted, as one text. */
static void all_keys(char *buf, size_t len)
{
    redisReply *r = cmd("KEYS *");
    ck_assert_int_eq(r->type, REDIS_REPLY_ARRAY);
    buf[0] = '\0';
    qsort(r->element, r->elements, sizeof *r->element, by_name);
    for (size_t i = 0; i < r->elements; i++) {
        strncat(buf, r->element[i]->str, len - strlen(buf) - 2);
        strncat(buf, " ", len - strlen(buf) - 1);
    }
    freeReplyObject(r);
}

START_TEST(a_refused_import_changes_nothing)
{
    char url[256], before[4096], after[4096];
    redisReply *r = cmd("SADD words apple pear");
    freeReplyObject(r);
    make_set("fps", 4, 10);
    r = cmd("SET bitmap xxxx");
    freeReplyObject(r);
    bk_redis_import_stats st;
    all_keys(before, sizeof before);
    /* members that are not fingerprints: in place and not */
    ck_assert_int_eq(bk_redis_import_set(url_of("words", url), "words", NULL, NULL, NULL, &st),
                     BK_ESERVER);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "not a request fingerprint"));
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "--input raw"));
    ck_assert_int_eq(bk_redis_import_set(url_of("new", url), "words", NULL, NULL, NULL, &st),
                     BK_ESERVER);
    /* no such set; not a set */
    ck_assert_int_eq(bk_redis_import_set(url_of("new", url), "nothing", NULL, NULL, NULL, &st),
                     BK_ENOTFOUND);
    ck_assert_int_eq(bk_redis_import_set(url_of("new", url), "bitmap", NULL, NULL, NULL, &st),
                     BK_ESERVER);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "bitmap is a string, not a set"));
    /* the name an in-place import would keep the set under is taken */
    r = cmd("SET {fps}:imported taken");
    freeReplyObject(r);
    all_keys(before, sizeof before);
    ck_assert_int_eq(bk_redis_import_set(url_of("fps", url), "fps", NULL, NULL, NULL, &st),
                     BK_ESERVER);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "exists already"));
    /* a bad config text */
    ck_assert_int_eq(bk_redis_import_set(url_of("new", url), "fps", "fpr=2", NULL, NULL, &st),
                     BK_ECONFIG);
    all_keys(after, sizeof after);
    ck_assert_str_eq(before, after);
    /* a filter of raw keys is not filled with fingerprints unless asked */
    ck_assert_int_eq(bk_redis_import_set(url_of("raw", url), "words", "input=raw", NULL, NULL, &st),
                     BK_OK);
    ck_assert_uint_eq(st.added, 2);
    ck_assert_int_eq(bk_redis_import_set(url_of("raw", url), "fps", NULL, NULL, NULL, &st),
                     BK_EINCOMPAT);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "input=raw"));
    ck_assert_int_eq(bk_redis_import_set(url_of("raw", url), "fps", "input=raw", NULL, NULL, &st),
                     BK_OK);
    ck_assert_int_eq(bk_redis_drop(url_of("raw", url)), BK_OK);
    ck_assert_int_eq(bk_redis_import_set(NULL, "fps", NULL, NULL, NULL, &st), BK_EINVAL);
    r = cmd("DEL words fps {fps}:imported bitmap");
    freeReplyObject(r);
}
END_TEST

START_TEST(a_set_or_a_bitmap_at_a_filters_name_is_named_and_left_alone)
{
    char url[256], before[4096], after[4096];
    make_set("legacy", 5, 7);
    redisReply *r = cmd("SETBIT recipe 8191 1");
    freeReplyObject(r);
    all_keys(before, sizeof before);
    bk_filter *f = NULL;
    ck_assert_int_eq(bk_redis_open(url_of("legacy", url), NULL, &f), BK_ESERVER);
    ck_assert_ptr_null(f);
    const char *e = bk_last_error();
    ck_assert_ptr_nonnull(strstr(e, "legacy is a set of 7 members"));
    ck_assert_ptr_nonnull(strstr(e, "bloomkit import --redis URL --from-set legacy"));
    ck_assert_int_eq(bk_redis_open_existing(url_of("legacy", url), &f), BK_ESERVER);
    ck_assert_int_eq(bk_redis_open(url_of("recipe", url), NULL, &f), BK_ESERVER);
    e = bk_last_error();
    ck_assert_ptr_nonnull(strstr(e, "recipe is a string of 1024 bytes"));
    ck_assert_ptr_nonnull(strstr(e, "cannot be imported"));
    r = cmd("LPUSH queue a");
    freeReplyObject(r);
    ck_assert_int_eq(bk_redis_open(url_of("queue", url), NULL, &f), BK_ESERVER);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "queue is a list"));
    r = cmd("DEL queue");
    freeReplyObject(r);
    all_keys(after, sizeof after);
    ck_assert_str_eq(before, after);
    /* what a tool that meets such keys can ask */
    char type[32];
    uint64_t size;
    ck_assert_int_eq(bk_redis_key_type(url, "legacy", type, sizeof type, &size), BK_OK);
    ck_assert_str_eq(type, "set");
    ck_assert_uint_eq(size, 7);
    ck_assert_int_eq(bk_redis_key_type(url, "recipe", type, sizeof type, &size), BK_OK);
    ck_assert_str_eq(type, "string");
    ck_assert_uint_eq(size, 1024);
    ck_assert_int_eq(bk_redis_key_type(url, "nothing", type, sizeof type, &size), BK_OK);
    ck_assert_str_eq(type, "none");
    ck_assert_int_eq(bk_redis_key_type(url, NULL, type, sizeof type, &size), BK_EINVAL);
    r = cmd("DEL legacy recipe");
    freeReplyObject(r);
}
END_TEST

/* Run `bloomkit ARGS...` with stdin from in, stdout to out, stderr to err;
 * its exit status. */
static int cli_io(const char *in, const char *out, const char *err, const char *const *args)
{
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        const int i = open(in, O_RDONLY), o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (e < 0 || i < 0 || o < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        const char *argv[16] = {BK_CLI_PATH};
        for (int i = 0; args[i] && i < 14; i++)
            argv[i + 1] = args[i];
        execv(BK_CLI_PATH, (char *const *)argv);
        _exit(127);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static int cli(const char *err, const char *const *args)
{
    return cli_io("/dev/null", "/dev/null", err, args);
}

START_TEST(the_command_imports_and_says_what_it_did)
{
    char *dir = tu_tmpdir(), *err = tu_path(dir, "err");
    char url[256];
    make_set("spider:dupefilter", 6, 1200);
    url_of("spider:dupefilter", url);
    const char *ok[] = {"import", "--redis", url, "--from-set", "spider:dupefilter", NULL};
    ck_assert_int_eq(cli(err, ok), 0);
    size_t len;
    char *text = (char *)tu_read_file(err, &len);
    ck_assert_ptr_nonnull(strstr(text, "1200 members of {spider:dupefilter}:imported, 1200 of "
                                       "them new to the filter; the set is kept as "
                                       "{spider:dupefilter}:imported"));
    free(text);
    ck_assert_uint_eq(holding(url, 6, 1200), 1200);
    /* usage errors: 2; what the server refuses: 3 */
    const char *no_set[] = {"import", "--redis", url, NULL};
    ck_assert_int_eq(cli(err, no_set), 2);
    const char *bad_key[] = {"import", "--redis", url, "--from-set", "x", "--fpr", "7", NULL};
    ck_assert_int_eq(cli(err, bad_key), 2);
    const char *missing[] = {"import", "--redis", url, "--from-set", "none", NULL};
    ck_assert_int_eq(cli(err, missing), 3);
    text = (char *)tu_read_file(err, &len);
    ck_assert_ptr_nonnull(strstr(text, "there is no key none"));
    free(text);
    /* the filter's keys are shown by info, and check reads them in hex */
    char *in = tu_path(dir, "in"), *out = tu_path(dir, "out");
    const char *info[] = {"info", "--json", "--redis", url, NULL};
    ck_assert_int_eq(cli_io("/dev/null", out, err, info), 0);
    text = (char *)tu_read_file(out, &len);
    ck_assert_ptr_nonnull(strstr(text, "\"input\":\"scrapy-redis\""));
    free(text);
    uint8_t b[20];
    char hex[41], lines[200];
    fingerprint(6, 17, b, hex);
    snprintf(lines, sizeof lines, "%s\n%s\n", hex, "00112233445566778899aabbccddeeff00112233");
    tu_write_file(in, (const uint8_t *)lines, strlen(lines));
    const char *check[] = {"check", "--redis", url, NULL};
    ck_assert_int_eq(cli_io(in, out, err, check), 0);
    text = (char *)tu_read_file(out, &len);
    ck_assert_uint_eq(len, 41);
    ck_assert(strncmp(text, hex, 40) == 0);
    free(text);
    tu_write_file(in, (const uint8_t *)"not hex\n", 8);
    ck_assert_int_eq(cli_io(in, out, err, check), 2);
    text = (char *)tu_read_file(err, &len);
    ck_assert_ptr_nonnull(strstr(text, "not a request fingerprint"));
    free(text);
    const char *dedup[] = {"dedup", "--redis", url, NULL};
    ck_assert_int_eq(cli_io(in, out, err, dedup), 2);
    free(in);
    free(out);
    ck_assert_int_eq(bk_redis_drop(url), BK_OK);
    redisReply *r = cmd("DEL {spider:dupefilter}:imported");
    freeReplyObject(r);
    free(err);
    tu_rmtree(dir);
}
END_TEST

Suite *import_suite(void)
{
    Suite *s = suite_create("import");
    if (!test_redis_available()) {
        fprintf(stderr, "import suite: SKIPPED, redis-server is not installed (Debian package "
                        "redis-server)\n");
        return s;
    }
    TCase *tc = tu_tcase("import");
    tcase_add_unchecked_fixture(tc, start_server, stop_server);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_set_imported_in_place_becomes_the_filter_and_resumes);
    tcase_add_test(tc, a_counting_import_adds_each_member_once);
    tcase_add_test(tc, a_refused_import_changes_nothing);
    tcase_add_test(tc, a_set_or_a_bitmap_at_a_filters_name_is_named_and_left_alone);
    tcase_add_test(tc, the_command_imports_and_says_what_it_did);
    suite_add_tcase(s, tc);
    return s;
}
#endif
