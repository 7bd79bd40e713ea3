/*
 * test_rbfilter.c - RedisBloom's structures as filters
 * (bloomkit_redisbloom.h and the optional calls of bloomkit.h): a filter
 * made from RedisBloom's fields and driven by bk_add, bk_remove, bk_count,
 * bk_compact and bk_chunked_* ends in the same bytes as the structure
 * driven by its own calls; the host's grow check is asked before every
 * growth and a refusal changes nothing; RedisBloom's own limits and a
 * file's are each kept where they were asked for.
 */
#include <stdlib.h>
#include <string.h>

#include "bloomkit_redisbloom.h"
#include "rbchain/rbchain.h"
#include "rbcuckoo/rbcuckoo.h"
#include "suites.h"
#include "testutil.h"

/* A dump: the header, then each chunk's iterator and bytes. */
typedef struct dump {
    uint8_t *bytes;
    size_t len;
} dump;

static void put(dump *d, const void *p, size_t n)
{
    d->bytes = realloc(d->bytes, d->len + n + 1);
    ck_assert_ptr_nonnull(d->bytes);
    memcpy(d->bytes + d->len, p, n);
    d->len += n;
}

static dump dump_of(const bk_filter *f)
{
    dump d = {NULL, 0};
    size_t hlen = 0;
    ck_assert_int_eq(bk_chunked_header(f, NULL, 0, &hlen), BK_OK);
    uint8_t *h = malloc(hlen);
    ck_assert_int_eq(bk_chunked_header(f, h, hlen, &hlen), BK_OK);
    put(&d, h, hlen);
    free(h);
    for (long long it = 1;;) {
        const uint8_t *data;
        size_t len;
        ck_assert_int_eq(bk_chunked_next(f, it, &data, &len, &it), BK_OK);
        if (!len)
            return d;
        put(&d, &it, sizeof it);
        put(&d, data, len);
    }
}

static void same_dump(dump a, dump b)
{
    ck_assert_uint_eq(a.len, b.len);
    ck_assert_mem_eq(a.bytes, b.bytes, a.len);
    free(a.bytes);
    free(b.bytes);
}

START_TEST(the_filter_path_is_the_structures_path)
{
    char key[32];
    /* the chain: BF.RESERVE's, grown over several links */
    bk_filter *f;
    bk_rbchain *c;
    ck_assert_int_eq(bk_filter_rbchain_new(100, 0.01, 2, 0, 0, &f), BK_OK);
    ck_assert_int_eq(bk_rbchain_new(100, 0.01, 2, 0, 0, &c), BK_OK);
    for (unsigned i = 0; i < 3000; i++) {
        const size_t n = tu_key(key, sizeof key, "bf", i);
        ck_assert_int_eq(bk_add(f, key, n), bk_rbchain_add(c, key, n, NULL));
    }
    for (unsigned i = 0; i < 6000; i++) {
        const size_t n = tu_key(key, sizeof key, "bf", i);
        ck_assert_int_eq(bk_contains(f, key, n), bk_rbchain_exists(c, key, n));
    }
    bk_rbchain_info a, b;
    ck_assert_int_eq(bk_rbchain_info_of(f, &a), BK_OK);
    bk_rb_chain_info(c, &b);
    ck_assert_mem_eq(&a, &b, sizeof a);
    ck_assert_uint_gt(a.links, 3);
    bk_filter *g; /* the structure, wrapped only to be dumped as filters are */
    ck_assert_int_eq(bk_filter_of_rbchain(c, 0, &g), BK_OK);
    same_dump(dump_of(f), dump_of(g));
    bk_free(f);
    bk_free(g);

    /* the cuckoo filter: CF.ADD and CF.ADDNX, CF.DEL, CF.COUNT, CF.COMPACT */
    bk_rbcuckoo *cf;
    ck_assert_int_eq(bk_filter_rbcuckoo_new(200, 2, 20, 1, 0, &f), BK_OK);
    ck_assert_int_eq(bk_rbcuckoo_new(200, 2, 20, 1, 0, &cf), BK_OK);
    for (unsigned i = 0; i < 900; i++) {
        const size_t n = tu_key(key, sizeof key, "cf", i % 700);
        const int once = i % 2;
        const int had = bk_rbcuckoo_exists(cf, key, n);
        const int raw = bk_rbcuckoo_add(cf, key, n, once ? BK_RB_NX : 0, NULL);
        ck_assert_int_eq(bk_set_add_once(f, once), BK_OK);
        /* bk_add says whether a copy was there; CF.ADD adds one either way */
        ck_assert_int_eq(bk_add(f, key, n), once ? raw : raw == 1 ? !had : raw);
    }
    for (unsigned i = 0; i < 700; i += 3) {
        const size_t n = tu_key(key, sizeof key, "cf", i);
        ck_assert_int_eq(bk_remove(f, key, n) == BK_OK, bk_rbcuckoo_remove(cf, key, n));
    }
    for (unsigned i = 0; i < 1400; i++) {
        const size_t n = tu_key(key, sizeof key, "cf", i);
        uint64_t copies;
        ck_assert_int_eq(bk_count(f, key, n, &copies), BK_OK);
        ck_assert_uint_eq(copies, bk_rbcuckoo_count(cf, key, n));
    }
    bk_rbcuckoo_info ci, cj;
    ck_assert_int_eq(bk_rbcuckoo_info_of(f, &ci), BK_OK);
    ck_assert_uint_gt(ci.filters, 1);
    ck_assert_int_eq(bk_compact(f), BK_OK);
    bk_rbcuckoo_compact(cf, 0);
    ck_assert_int_eq(bk_rbcuckoo_info_of(f, &ci), BK_OK);
    bk_rc_info(cf, &cj);
    ck_assert_mem_eq(&ci, &cj, sizeof ci);
    ck_assert_int_eq(bk_filter_of_rbcuckoo(cf, 0, &g), BK_OK);
    same_dump(dump_of(f), dump_of(g));
    bk_free(f);
    bk_free(g);
}
END_TEST

/* A grow check that counts its calls and refuses while `refuse` is set. */
typedef struct asked {
    unsigned calls;
    int refuse;
    uint64_t used, next;
} asked;

/* A check that refuses with a value that is no error code. */
static int refuse_positive(void *arg, uint64_t used, uint64_t next)
{
    (void)arg;
    (void)used;
    (void)next;
    return 7;
}

static int ask(void *arg, uint64_t used, uint64_t next)
{
    asked *a = arg;
    a->calls++;
    a->used = used;
    a->next = next;
    return a->refuse ? BK_EFULL : 0;
}

START_TEST(growth_asks_the_host_first)
{
    const char *texts[] = {"variant=rbchain capacity=50 fpr=0.01",
                           "variant=rbcuckoo capacity=64 bucket_size=2"};
    char key[32];
    for (int t = 0; t < 2; t++) {
        bk_filter *f = tu_filter(texts[t]);
        asked a = {0, 1, 0, 0};
        ck_assert_int_eq(bk_set_grow_check(f, ask, &a), BK_OK);
        uint64_t i = 0;
        int rc;
        while ((rc = bk_add(f, key, tu_key(key, sizeof key, "g", i))) >= 0)
            i++;
        ck_assert_int_eq(rc, BK_EFULL);
        ck_assert_uint_eq(a.calls, 1);
        ck_assert_uint_gt(a.next, 0);
        bk_filter_stats st;
        ck_assert_int_eq(bk_stats(f, &st), BK_OK);
        ck_assert_uint_eq(st.slices, 1);     /* nothing grew */
        ck_assert_uint_eq(a.used, st.bytes); /* told what it holds */
        a.refuse = 0;                        /* allowed: the same add grows the filter */
        ck_assert_int_ge(bk_add(f, key, tu_key(key, sizeof key, "g", i)), 0);
        ck_assert_uint_eq(a.calls, 2);
        ck_assert_int_eq(bk_stats(f, &st), BK_OK);
        ck_assert_uint_eq(st.slices, 2);
        ck_assert_uint_eq(tu_count_present(f, "g", 0, i + 1), i + 1);
        ck_assert_int_eq(bk_set_grow_check(f, NULL, NULL), BK_OK);
        bk_free(f);
    }
    /* a refusal other than an error code is BK_EFULL: bk_add never says 7 */
    bk_filter *g = tu_filter("variant=rbcuckoo capacity=64 bucket_size=2");
    ck_assert_int_eq(bk_set_grow_check(g, refuse_positive, NULL), BK_OK);
    int rc = 0;
    for (uint64_t i = 0; rc >= 0 && rc <= 1; i++)
        rc = bk_add(g, key, tu_key(key, sizeof key, "p", i));
    ck_assert_int_eq(rc, BK_EFULL);
    bk_free(g);
    bk_filter *std = tu_filter("capacity=100");
    ck_assert_int_eq(bk_set_grow_check(std, ask, NULL), BK_ENOTSUP);
    uint64_t n;
    ck_assert_int_eq(bk_count(std, "k", 1, &n), BK_ENOTSUP);
    ck_assert_int_eq(bk_compact(std), BK_ENOTSUP);
    bk_free(std);
}
END_TEST

START_TEST(own_limits_and_a_files_limits)
{
    /* RedisBloom's own: a cuckoo filter of one-slot sub-filters grows past
     * the 256 a file holds, and saving it says so */
    bk_filter *f;
    ck_assert_int_eq(bk_filter_rbcuckoo_new(2, 1, 1, 1, 0, &f), BK_OK);
    char key[32];
    bk_rbcuckoo_info in = {0};
    for (uint64_t i = 0; in.filters <= BK_SLICES_MAX; i++) {
        ck_assert_int_ge(bk_add(f, key, tu_key(key, sizeof key, "own", i)), 0);
        ck_assert_int_eq(bk_rbcuckoo_info_of(f, &in), BK_OK);
    }
    uint64_t size;
    ck_assert_int_eq(bk_save_size(f, &size), BK_ERANGE);
    /* its dump into a filter kept within a file: refused, said why */
    dump d = dump_of(f);
    bk_filter *g = NULL;
    ck_assert_int_eq(bk_chunked_new(BK_VARIANT_RBCUCKOO, d.bytes, 38, BK_RB_FILE, 0, &g),
                     BK_ENOTSUP);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "more than a bloomkit file holds"));
    ck_assert_ptr_null(g);
    ck_assert_int_eq(bk_chunked_new(BK_VARIANT_RBCUCKOO, d.bytes, 38, 0, 0, &g), BK_OK);
    free(d.bytes);
    bk_free(g);
    bk_free(f);

    /* a rate no configuration states: RedisBloom takes it, a file does not */
    ck_assert_int_eq(bk_filter_rbchain_new(100, 0.9, 2, 0, 0, &f), BK_OK);
    ck_assert_int_ge(bk_add(f, "x", 1), 0);
    ck_assert_int_eq(bk_contains(f, "x", 1), 1);
    ck_assert_int_eq(bk_save_size(f, &size), BK_ENOTSUP);
    bk_rbchain_info ci;
    bk_rbchain_link l;
    ck_assert_int_eq(bk_rbchain_info_of(f, &ci), BK_OK);
    ck_assert_int_eq(bk_rbchain_link_of(f, 0, &l), BK_OK);
    ck_assert_int_eq(bk_rbchain_link_of(f, 1, &l), BK_ERANGE);
    l.data = NULL;
    ck_assert_int_eq(bk_filter_rbchain_from(&ci, &l, 1, BK_RB_FILE, 0, &g), BK_ENOTSUP);
    ck_assert_int_eq(bk_filter_rbchain_from(&ci, &l, 1, 0, 0, &g), BK_OK);
    bk_free(g);
    bk_free(f);
}
END_TEST

START_TEST(chunks_refused_change_nothing)
{
    bk_filter *f = tu_filter("variant=rbchain hash=murmur capacity=100 fpr=0.01");
    char key[32];
    for (unsigned i = 0; i < 300; i++)
        ck_assert_int_ge(bk_add(f, key, tu_key(key, sizeof key, "c", i)), 0);
    dump before = dump_of(f);
    const uint8_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ck_assert_int_eq(bk_chunked_load(f, 0, junk, sizeof junk), BK_EINVAL);
    ck_assert_int_eq(bk_chunked_load(f, 1LL << 40, junk, sizeof junk), BK_ENOTFOUND);
    same_dump(before, dump_of(f));
    bk_filter *g = NULL;
    ck_assert_int_eq(bk_chunked_new(BK_VARIANT_STANDARD, junk, sizeof junk, 0, 0, &g), BK_ENOTSUP);
    ck_assert_int_eq(bk_chunked_new(BK_VARIANT_RBCHAIN, junk, sizeof junk, 0, 0, &g), BK_EINVAL);
    ck_assert_int_eq(bk_chunked_new(BK_VARIANT_RBCHAIN, junk, sizeof junk, 8, 0, &g), BK_EINVAL);
    ck_assert_ptr_null(g);
    bk_filter *std = tu_filter("capacity=100");
    size_t len;
    ck_assert_int_eq(bk_chunked_header(std, NULL, 0, &len), BK_ENOTSUP);
    bk_free(std);
    bk_free(f);
}
END_TEST

Suite *rbfilter_suite(void)
{
    Suite *s = suite_create("rbfilter");
    TCase *tc = tu_tcase("rbfilter");
    tcase_add_test(tc, the_filter_path_is_the_structures_path);
    tcase_add_test(tc, growth_asks_the_host_first);
    tcase_add_test(tc, own_limits_and_a_files_limits);
    tcase_add_test(tc, chunks_refused_change_nothing);
    suite_add_tcase(s, tc);
    return s;
}
