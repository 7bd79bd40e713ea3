/*
 * test_redisbloom.c - RedisBloom's structures (bloomkit_redisbloom.h)
 * against RedisBloom 2.6.28 itself: the hash vectors and worked sizes of
 * its formats, and the fixtures it wrote (tests/data/redisbloom/, its
 * README says how they were made: SCANDUMP chunks and the answers
 * RedisBloom gave). Each fixture filter is checked twice: loaded from its
 * chunks (every item and the exact list of false positives among 100,000
 * probes, its figures, and a SCANDUMP that gives back the same bytes), and
 * made again by replaying the commands that made it (the state equal to
 * RedisBloom's byte for byte: sizing, growth, eviction, deletion).
 */
#include <stdlib.h>
#include <string.h>

#include "bloomkit_redisbloom.h"
#include "common/murmur.h"
#include "rbchain/rbchain.h"
#include "rbcuckoo/rbcuckoo.h"
#include "suites.h"
#include "testutil.h"

/* Where the fixtures are: BK_REDISBLOOM_DATA, else the repository's copy (tests/data/redisbloom).
 */
static const char *data_dir(void)
{
    const char *d = getenv("BK_REDISBLOOM_DATA");
    return d && *d ? d : "tests/data/redisbloom";
}

/* The whole of fixture file `name` (malloc'd; *len its length). */
static uint8_t *slurp(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", data_dir(), name);
    FILE *fp = fopen(path, "rb");
    ck_assert_msg(fp != NULL, "cannot open %s (set BK_REDISBLOOM_DATA)", path);
    ck_assert_int_eq(fseek(fp, 0, SEEK_END), 0);
    const long n = ftell(fp);
    ck_assert_int_ge(n, 0);
    rewind(fp);
    uint8_t *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

/* One chunk of a fixture's SCANDUMP: the iterator given with it, its bytes. */
typedef struct chunk {
    long long it;
    uint8_t *data;
    size_t len;
} chunk;

/* The chunks of fixture `name` in order (NAME.chunks.txt); returns how many. */
static size_t chunks_of(const char *name, chunk *out, size_t max)
{
    char file[128];
    snprintf(file, sizeof file, "%s.chunks.txt", name);
    size_t len, n = 0;
    char *text = (char *)slurp(file, &len);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        long long it;
        char size[32], bin[128];
        if (line[0] == '#' || sscanf(line, "%lld %31s %127s", &it, size, bin) != 3 || it == 0)
            continue;
        ck_assert_uint_lt(n, max);
        out[n].it = it;
        out[n].data = slurp(bin, &out[n].len);
        ck_assert_uint_eq(out[n].len, strtoull(size, NULL, 10));
        n++;
    }
    free(text);
    return n;
}

static void chunks_free(chunk *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(c[i].data);
}

/* A filter's membership answer for a key. */
typedef int (*exists_fn)(const void *f, const char *key, size_t len);

static int chain_has(const void *f, const char *key, size_t len)
{
    return bk_rbchain_exists(f, key, len);
}

static int cuckoo_has(const void *f, const char *key, size_t len)
{
    return bk_rbcuckoo_exists(f, key, len);
}

/* Every line of NAME.fp.txt and NAME.items.txt against f: the false
 * positives among probe:0..99999 exactly RedisBloom's, and items
 * item:0..n-1 answering 1 but those listed as answering 0. */
static void check_answers(const char *name, const void *f, exists_fn has, unsigned items)
{
    char file[128], key[64];
    size_t len;
    snprintf(file, sizeof file, "%s.fp.txt", name);
    char *fp = (char *)slurp(file, &len);
    unsigned listed = 0, found = 0;
    char *p = fp;
    for (unsigned i = 0; i < 100000; i++) {
        const int n = snprintf(key, sizeof key, "probe:%u", i);
        if (!has(f, key, (size_t)n))
            continue;
        found++;
        /* the list is in probe order: the next line must be this key */
        while (*p == '#')
            p = strchr(p, '\n') + 1;
        ck_assert_msg(strncmp(p, key, (size_t)n) == 0 && p[n] == '\n',
                      "%s: %s answers 1, RedisBloom's next false positive is %.20s", name, key, p);
        p += n + 1;
        listed++;
    }
    while (*p == '#')
        p = strchr(p, '\n') + 1;
    ck_assert_msg(*p == '\0', "%s: RedisBloom also answered 1 to %.20s", name, p);
    ck_assert_uint_eq(found, listed);
    free(fp);
    snprintf(file, sizeof file, "%s.items.txt", name);
    char *zero = (char *)slurp(file, &len);
    const char *list = strstr(zero, "answering 0:");
    ck_assert_ptr_nonnull(list);
    for (unsigned i = 0; i < items; i++) {
        snprintf(key, sizeof key, "\nitem:%u\n", i);
        const int want = strstr(list, key) == NULL;
        ck_assert_msg(has(f, key + 1, strlen(key) - 2) == want, "%s: item:%u should answer %d",
                      name, i, want);
    }
    free(zero);
}

/* The value of "label: value" in NAME.info.txt. */
static long long info_value(const char *name, const char *label)
{
    char file[128];
    size_t len;
    snprintf(file, sizeof file, "%s.info.txt", name);
    char *text = (char *)slurp(file, &len);
    const char *at = strstr(text, label);
    ck_assert_msg(at != NULL, "%s: no %s", name, label);
    const long long v = strncmp(at + strlen(label) + 2, "None", 4) == 0
                            ? -1
                            : strtoll(at + strlen(label) + 2, NULL, 10);
    free(text);
    return v;
}

/* A chain from fixture `name`'s chunks, as BF.LOADCHUNK takes them. */
static bk_rbchain *chain_from_chunks(const char *name)
{
    chunk c[16];
    const size_t n = chunks_of(name, c, 16);
    bk_rbchain *ch = NULL;
    ck_assert_int_eq(c[0].it, 1);
    ck_assert_int_eq(bk_rbchain_header_read(c[0].data, c[0].len, 0, &ch), BK_OK);
    for (size_t i = 1; i < n; i++)
        ck_assert_int_eq(bk_rbchain_load_chunk(ch, c[i].it, c[i].data, c[i].len), BK_OK);
    chunks_free(c, n);
    return ch;
}

/* ch's SCANDUMP equal to fixture `name`'s, header and chunks, byte for byte. */
static void chain_dumps_as(const bk_rbchain *ch, const char *name)
{
    chunk c[16];
    const size_t n = chunks_of(name, c, 16);
    uint8_t head[4096];
    ck_assert_uint_eq(bk_rbchain_header(ch, head, sizeof head), c[0].len);
    ck_assert_mem_eq(head, c[0].data, c[0].len);
    long long it = 1;
    for (size_t i = 1; i < n; i++) {
        const uint8_t *data;
        size_t len;
        bk_rbchain_chunk(ch, it, &data, &len, &it);
        ck_assert_int_eq(it, c[i].it);
        ck_assert_uint_eq(len, c[i].len);
        ck_assert_msg(memcmp(data, c[i].data, len) == 0, "%s: chunk %zu differs", name, i);
    }
    const uint8_t *data;
    size_t len;
    bk_rbchain_chunk(ch, it, &data, &len, &it);
    ck_assert_int_eq(it, 0);
    ck_assert_uint_eq(len, 0);
    chunks_free(c, n);
}

static void chain_info_is(const bk_rbchain *ch, const char *name)
{
    bk_rbchain_info in;
    bk_rb_chain_info(ch, &in);
    ck_assert_int_eq((long long)in.capacity, info_value(name, "Capacity"));
    ck_assert_int_eq(32 + 64 * (long long)in.links + (long long)in.bytes, info_value(name, "Size"));
    ck_assert_int_eq(in.links, info_value(name, "Number of filters"));
    ck_assert_int_eq((long long)in.size, info_value(name, "Number of items inserted"));
    ck_assert_int_eq(in.options & BK_RBCHAIN_NO_SCALING ? -1 : (long long)in.growth,
                     info_value(name, "Expansion rate"));
}

static void add_items(bk_rbchain *ch, unsigned from, unsigned to)
{
    char key[32];
    for (unsigned i = from; i < to; i++) {
        const int n = snprintf(key, sizeof key, "item:%u", i);
        ck_assert_int_ge(bk_rbchain_add(ch, key, (size_t)n, NULL), 0);
    }
}

/* Fixture `name`: from its chunks, then replayed from its commands. */
static void check_chain(const char *name, unsigned items, bk_rbchain *replayed)
{
    bk_rbchain *ch = chain_from_chunks(name);
    check_answers(name, ch, chain_has, items);
    chain_info_is(ch, name);
    chain_dumps_as(ch, name);
    bk_rbchain_free(ch);
    chain_info_is(replayed, name);
    chain_dumps_as(replayed, name);
    bk_rbchain_free(replayed);
}

/* Answers of a filter of variant rbchain or rbcuckoo (bk_contains). */
static int filter_has(const void *f, const char *key, size_t len)
{
    return bk_contains(f, key, len);
}

/* f saved to a file, then that file loaded and mapped: each of the three
 * passes check (which frees what it is given: f first, then the copies). */
static void through_files(bk_filter *f, void (*check)(bk_filter *, const char *), const char *name)
{
    char *dir = tu_tmpdir();
    char *path = tu_path(dir, name);
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    check(f, name);
    bk_filter *g;
    ck_assert_int_eq(bk_load(path, &g), BK_OK);
    check(g, name);
    ck_assert_int_eq(bk_open_mmap(path, 0, &g), BK_OK);
    check(g, name);
    free(path);
    tu_rmtree(dir);
}

START_TEST(murmur_vectors)
{
    ck_assert_uint_eq(bk_murmur64a("hello", 5, 0), UINT64_C(0x1e68d17c457bf117));
    ck_assert_uint_eq(bk_murmur64a("", 0, 0), 0);
    ck_assert_uint_eq(bk_murmur2("hello", 5, UINT32_C(0x9747b28c)), UINT32_C(0x7f1ddbbd));
    ck_assert_uint_eq(bk_murmur64a("item1", 5, UINT64_C(0xc6a4a7935bd1e995)),
                      UINT64_C(0xa053790e072b2e8b));
}
END_TEST

START_TEST(link_sizes_as_redisbloom)
{
    bk_rbchain_link l;
    ck_assert_int_eq(bk_rb_link_size(&l, 1000, 0.005, BK_RBCHAIN_NOROUND), BK_OK);
    ck_assert_uint_eq(l.bits, 11072);
    ck_assert_uint_eq(l.bytes, 1384);
    ck_assert_uint_eq(l.hashes, 8);
    ck_assert_double_eq(l.bpe, 11.027753418256411);
    ck_assert_int_eq(bk_rb_link_size(&l, 100, 0.005, 0), BK_OK);
    ck_assert_uint_eq(l.n2, 11);
    ck_assert_uint_eq(l.bits, 2048);
    ck_assert_uint_eq(l.entries, 185);
    ck_assert_int_eq(bk_rb_link_size(&l, 0, 0.01, 0), BK_ERANGE);
    ck_assert_int_eq(bk_rb_link_size(&l, 10, 1.0, 0), BK_ERANGE);
    /* a legacy chain scales by its rounded-up entries: 100, 185, 656, 2355, 8535 */
    ck_assert_int_eq(bk_rb_link_size(&l, 100, 0.005, 0), BK_OK);
    const bk_rbchain_info in = {.options = 0, .growth = 2};
    bk_rbchain *ch;
    ck_assert_int_eq(bk_rbchain_from(&in, &l, 1, BK_RB_STRICT, 0, &ch), BK_OK);
    add_items(ch, 0, 4000);
    static const uint64_t want[] = {185, 656, 2355, 8535};
    bk_rbchain_info got;
    bk_rb_chain_info(ch, &got);
    ck_assert_uint_eq(got.links, 4);
    for (uint32_t i = 0; i < 4; i++) {
        ck_assert_int_eq(bk_rb_chain_link(ch, i, &l), BK_OK);
        ck_assert_uint_eq(l.entries, want[i]);
    }
    bk_rbchain_free(ch);
}
END_TEST

START_TEST(chain_probes_and_header_as_redisbloom)
{
    /* BF.RESERVE bf 0.1 10; BF.ADD bf item1 (FORMATS.md 3.3 and 5.1) */
    bk_rbchain *ch;
    ck_assert_int_eq(bk_rbchain_new(10, 0.1, 2, 0, 0, &ch), BK_OK);
    ck_assert_int_eq(bk_rbchain_add(ch, "item1", 5, NULL), 1);
    ck_assert_int_eq(bk_rbchain_add(ch, "item1", 5, NULL), 0);
    static const uint8_t bits[] = {0x01, 0x08, 0x00, 0x80, 0x00, 0x04, 0x20, 0x00};
    const uint8_t *data;
    size_t len;
    long long next;
    bk_rbchain_chunk(ch, 1, &data, &len, &next);
    ck_assert_uint_eq(len, 8);
    ck_assert_int_eq(next, 9);
    ck_assert_mem_eq(data, bits, 8);
    static const uint8_t head[] = {
        0x01, 0,    0,    0,    0,    0,    0,    0,    0x01, 0,    0,    0,    0x05, 0,    0,
        0,    0x02, 0,    0,    0,    0x08, 0,    0,    0,    0,    0,    0,    0,    0x40, 0,
        0,    0,    0,    0,    0,    0,    0x01, 0,    0,    0,    0,    0,    0,    0,    0x9a,
        0x99, 0x99, 0x99, 0x99, 0x99, 0xa9, 0x3f, 0x4a, 0xf7, 0xd4, 0x9e, 0xde, 0xf0, 0x18, 0x40,
        0x05, 0,    0,    0,    0x0a, 0,    0,    0,    0,    0,    0,    0,    0x00};
    uint8_t got[sizeof head];
    ck_assert_uint_eq(bk_rbchain_header(ch, got, sizeof got), sizeof head);
    ck_assert_mem_eq(got, head, sizeof head);
    bk_rbchain_free(ch);
}
END_TEST

START_TEST(chain_growth_as_redisbloom)
{
    /* BF.RESERVE 0.01 1000 EXPANSION 2 and 20,000 adds: FORMATS.md 2.5's table */
    static const struct {
        uint64_t cap;
        double error;
        unsigned k;
        uint64_t bits;
    } want[] = {{1000, 0.005, 8, 11072},
                {2000, 0.0025, 9, 24960},
                {4000, 0.00125, 10, 55680},
                {8000, 0.000625, 11, 122880},
                {16000, 0.0003125, 12, 268800}};
    bk_rbchain *ch;
    ck_assert_int_eq(bk_rbchain_new(1000, 0.01, 2, 0, 0, &ch), BK_OK);
    add_items(ch, 0, 20000);
    bk_rbchain_info in;
    bk_rb_chain_info(ch, &in);
    ck_assert_uint_eq(in.links, 5);
    for (uint32_t i = 0; i < 5; i++) {
        bk_rbchain_link l;
        ck_assert_int_eq(bk_rb_chain_link(ch, i, &l), BK_OK);
        ck_assert_uint_eq(l.entries, want[i].cap);
        ck_assert_double_eq(l.error, want[i].error);
        ck_assert_uint_eq(l.hashes, want[i].k);
        ck_assert_uint_eq(l.bits, want[i].bits);
    }
    bk_rbchain_free(ch);
}
END_TEST

START_TEST(nonscaling_chain_fills)
{
    bk_rbchain *ch;
    ck_assert_int_eq(bk_rbchain_new(50, 0.01, 2, 1, 0, &ch), BK_OK);
    char key[32];
    unsigned ones = 0;
    int rc = 0;
    for (unsigned i = 0; i < 1000 && rc >= 0; i++) {
        const int n = snprintf(key, sizeof key, "k%u", i);
        rc = bk_rbchain_add(ch, key, (size_t)n, NULL);
        ones += rc == 1;
    }
    ck_assert_int_eq(rc, BK_EFULL);
    ck_assert_uint_eq(ones, 50); /* exactly its capacity of replies 1 */
    bk_rbchain_info in;
    bk_rb_chain_info(ch, &in);
    ck_assert_uint_eq(in.size, 50);
    ck_assert_uint_eq(in.links, 1);
    bk_rbchain_free(ch);
}
END_TEST

/* A grow check that refuses, and says what it was asked. */
typedef struct asked_grow {
    uint64_t used, next;
    unsigned asked;
} asked_grow;

static int refuse_growth(void *arg, uint64_t used, uint64_t next)
{
    asked_grow *a = arg;
    a->used = used;
    a->next = next;
    a->asked++;
    return BK_RB_GROW;
}

START_TEST(an_add_that_must_grow_asks_first)
{
    /* the add that needs a new link or sub-filter asks its grow check
     * before anything changes, told the bytes held and those growth takes;
     * refused, it answers the refusal and changes nothing */
    bk_rbchain *ch;
    ck_assert_int_eq(bk_rbchain_new(10, 0.01, 2, 0, 0, &ch), BK_OK);
    asked_grow a = {0, 0, 0};
    const bk_rb_grow refuse = {refuse_growth, &a};
    char key[32];
    int rc = 1, n = 0;
    for (unsigned i = 0; rc != BK_RB_GROW; i++) {
        n = snprintf(key, sizeof key, "k%u", i);
        rc = bk_rbchain_add(ch, key, (size_t)n, &refuse);
        ck_assert_int_ge(rc, 0);
    }
    ck_assert_uint_eq(a.asked, 1);
    bk_rbchain_info in;
    bk_rb_chain_info(ch, &in);
    ck_assert_uint_eq(in.links, 1);
    ck_assert_uint_eq(a.used, in.bytes);
    ck_assert_int_eq(bk_rbchain_exists(ch, key, (size_t)n), 0);
    ck_assert_int_eq(bk_rbchain_add(ch, key, (size_t)n, NULL), 1);
    bk_rbchain_link l;
    ck_assert_int_eq(bk_rb_chain_link(ch, 1, &l), BK_OK);
    ck_assert_uint_eq(l.bytes, a.next);
    bk_rbchain_free(ch);

    bk_rbcuckoo *cf;
    ck_assert_int_eq(bk_rbcuckoo_new(8, 2, 20, 2, 0, &cf), BK_OK);
    memset(&a, 0, sizeof a);
    rc = 1;
    for (unsigned i = 0; rc != BK_RB_GROW; i++) {
        n = snprintf(key, sizeof key, "k%u", i);
        rc = bk_rbcuckoo_add(cf, key, (size_t)n, 0, &refuse);
        ck_assert_int_ge(rc, 0);
    }
    ck_assert_uint_eq(a.asked, 1);
    bk_rbcuckoo_info ci;
    bk_rc_info(cf, &ci);
    ck_assert_uint_eq(ci.filters, 1);
    ck_assert_uint_eq(a.used, 8);
    ck_assert_uint_eq(a.next, 16);
    ck_assert_int_eq(bk_rbcuckoo_add(cf, key, (size_t)n, 0, NULL), 1);
    bk_rc_info(cf, &ci);
    ck_assert_uint_eq(ci.filters, 2);
    ck_assert_uint_eq(ci.bytes, 8 + 16);
    bk_rbcuckoo_free(cf);
}
END_TEST

START_TEST(bf_default_matches)
{
    bk_rbchain *ch; /* autocreated by BF.ADD: 100 items at 0.01, expansion 2 */
    ck_assert_int_eq(bk_rbchain_new(100, 0.01, 2, 0, 0, &ch), BK_OK);
    add_items(ch, 0, 5000);
    check_chain("bf_default", 5000, ch);
}
END_TEST

START_TEST(bf_nonscaling_matches)
{
    bk_rbchain *ch;
    ck_assert_int_eq(bk_rbchain_new(10000, 0.001, 2, 1, 0, &ch), BK_OK);
    add_items(ch, 0, 8000);
    check_chain("bf_nonscaling", 8000, ch);
}
END_TEST

START_TEST(bf_exp4_matches)
{
    bk_rbchain *ch;
    ck_assert_int_eq(bk_rbchain_new(1000, 0.0001, 4, 0, 0, &ch), BK_OK);
    add_items(ch, 0, 20000);
    check_chain("bf_exp4", 20000, ch);
}
END_TEST

START_TEST(bf_big_matches)
{
    bk_rbchain *ch;
    ck_assert_int_eq(bk_rbchain_new(1000000, 0.01, 2, 0, 0, &ch), BK_OK);
    add_items(ch, 0, 300000);
    check_chain("bf_big", 20000, ch);
}
END_TEST

START_TEST(chain_chunks_refused_as_redisbloom)
{
    bk_rbchain *ch;
    ck_assert_int_eq(bk_rbchain_new(100, 0.01, 2, 0, 0, &ch), BK_OK);
    uint8_t head[128], buf[8] = {0};
    const size_t n = bk_rbchain_header(ch, head, sizeof head);
    bk_rbchain *bad;
    ck_assert_int_eq(bk_rbchain_header_read(head, n - 1, 0, &bad), BK_EINVAL);
    head[12] |= 0x10; /* an unknown option bit */
    ck_assert_int_eq(bk_rbchain_header_read(head, n, 0, &bad), BK_EINVAL);
    head[12] &= (uint8_t)~0x10;
    head[0] = 7; /* the chain's size no longer its links' */
    ck_assert_int_eq(bk_rbchain_header_read(head, n, 0, &bad), BK_EINVAL);
    head[0] = 0;
    head[20 + 40] ^= 1; /* hashes that do not follow from bits per entry */
    ck_assert_int_eq(bk_rbchain_header_read(head, n, 0, &bad), BK_EINVAL);
    ck_assert_int_eq(bk_rbchain_load_chunk(ch, 0, buf, 1), BK_EINVAL);
    ck_assert_int_eq(bk_rbchain_load_chunk(ch, 4, buf, 8), BK_EINVAL);
    ck_assert_int_eq(bk_rbchain_load_chunk(ch, 8, buf, 8), BK_ENOTFOUND);
    ck_assert_int_eq(bk_rbchain_load_chunk(ch, 1000000, buf, 8), BK_ENOTFOUND);
    bk_rbchain_link l;
    ck_assert_int_eq(bk_rb_chain_link(ch, 0, &l), BK_OK);
    ck_assert_int_eq(bk_rbchain_load_chunk(ch, (long long)l.bytes + 1, buf, 8), BK_OK);
    ck_assert_int_eq(bk_rbchain_load_chunk(ch, (long long)l.bytes + 2, buf, 8), BK_ERANGE);
    bk_rbchain_free(ch);
}
END_TEST

/* ---- cuckoo ---- */

static bk_rbcuckoo *cuckoo_from_chunks(const char *name)
{
    chunk c[16];
    const size_t n = chunks_of(name, c, 16);
    bk_rbcuckoo *cf = NULL;
    ck_assert_int_eq(c[0].it, 1);
    ck_assert_int_eq(bk_rbcuckoo_header_read(c[0].data, c[0].len, 0, &cf), BK_OK);
    for (size_t i = 1; i < n; i++)
        ck_assert_int_eq(bk_rbcuckoo_load_chunk(cf, c[i].it, c[i].data, c[i].len), BK_OK);
    chunks_free(c, n);
    return cf;
}

static void cuckoo_dumps_as(const bk_rbcuckoo *cf, const char *name)
{
    chunk c[16];
    const size_t n = chunks_of(name, c, 16);
    uint8_t head[38];
    ck_assert_uint_eq(bk_rbcuckoo_header(cf, head, sizeof head), c[0].len);
    ck_assert_mem_eq(head, c[0].data, c[0].len);
    long long it = 1;
    for (size_t i = 1; i < n; i++) {
        const uint8_t *data;
        size_t len;
        bk_rbcuckoo_chunk(cf, it, &data, &len, &it);
        ck_assert_int_eq(it, c[i].it);
        ck_assert_uint_eq(len, c[i].len);
        ck_assert_msg(memcmp(data, c[i].data, len) == 0, "%s: chunk %zu differs", name, i);
    }
    const uint8_t *data;
    size_t len;
    bk_rbcuckoo_chunk(cf, it, &data, &len, &it);
    ck_assert_int_eq(it, 0);
    chunks_free(c, n);
}

static void cuckoo_info_is(const bk_rbcuckoo *cf, const char *name)
{
    bk_rbcuckoo_info in;
    bk_rc_info(cf, &in);
    ck_assert_int_eq(40 + 16 * (long long)in.filters + (long long)in.bytes,
                     info_value(name, "Size"));
    ck_assert_int_eq((long long)in.buckets, info_value(name, "Number of buckets"));
    ck_assert_int_eq(in.filters, info_value(name, "Number of filters"));
    ck_assert_int_eq((long long)in.items, info_value(name, "Number of items inserted"));
    ck_assert_int_eq((long long)in.deletes, info_value(name, "Number of items deleted"));
    ck_assert_int_eq(in.bucket_size, info_value(name, "Bucket size"));
    ck_assert_int_eq(in.expansion, info_value(name, "Expansion rate"));
    ck_assert_int_eq(in.max_iterations, info_value(name, "Max iterations"));
}

/* CF.COUNT of item:0..199 as NAME.count.txt lists them ("item:i count"). */
static void check_counts(const char *name, const bk_rbcuckoo *cf)
{
    char file[128], key[32];
    size_t len;
    snprintf(file, sizeof file, "%s.count.txt", name);
    char *text = (char *)slurp(file, &len);
    unsigned checked = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned i;
        unsigned long long want;
        if (line[0] == '#' || sscanf(line, "item:%u %llu", &i, &want) != 2)
            continue;
        const int n = snprintf(key, sizeof key, "item:%u", i);
        ck_assert_msg(bk_rbcuckoo_count(cf, key, (size_t)n) == want, "%s: CF.COUNT %s", name, key);
        checked++;
    }
    ck_assert_uint_eq(checked, 200);
    free(text);
}

static void cuckoo_add_items(bk_rbcuckoo *cf, unsigned from, unsigned to)
{
    char key[32];
    for (unsigned i = from; i < to; i++) {
        const int n = snprintf(key, sizeof key, "item:%u", i);
        ck_assert_int_eq(bk_rbcuckoo_add(cf, key, (size_t)n, 0, NULL), 1);
    }
}

static void check_cuckoo(const char *name, unsigned items, bk_rbcuckoo *replayed)
{
    bk_rbcuckoo *cf = cuckoo_from_chunks(name);
    check_answers(name, cf, cuckoo_has, items);
    check_counts(name, cf);
    cuckoo_info_is(cf, name);
    cuckoo_dumps_as(cf, name);
    bk_rbcuckoo_free(cf);
    cuckoo_info_is(replayed, name);
    cuckoo_dumps_as(replayed, name);
    bk_rbcuckoo_free(replayed);
}

/* bf_default as variant rbchain, hash=murmur, made by bk_add: every
 * answer, figure and dump RedisBloom's, also from its file and mapped. */
static void chain_filter_is_bf_default(bk_filter *f, const char *name)
{
    check_answers(name, f, filter_has, 5000);
    const bk_rbchain *ch = bk_filter_rbchain(f);
    ck_assert_ptr_nonnull(ch);
    chain_info_is(ch, name);
    chain_dumps_as(ch, name);
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_int_eq((long long)st.keys, info_value(name, "Number of items inserted"));
    ck_assert_uint_eq(st.slices, info_value(name, "Number of filters"));
    ck_assert_str_eq(st.hash, "murmur");
    bk_free(f);
}

START_TEST(the_variants_are_redisbloom_in_files)
{
    bk_filter *f = tu_filter("variant=rbchain hash=murmur capacity=100 fpr=0.01");
    ck_assert_ptr_null(bk_filter_rbcuckoo(f));
    char key[32];
    for (unsigned i = 0; i < 5000; i++)
        ck_assert_int_ge(bk_add(f, key, tu_key(key, sizeof key, "item", i)), 0);
    through_files(f, chain_filter_is_bf_default, "bf_default");
}
END_TEST

START_TEST(cf_default_matches)
{
    bk_rbcuckoo *cf;
    ck_assert_int_eq(bk_rbcuckoo_new(1000, 2, 20, 1, 0, &cf), BK_OK);
    cuckoo_add_items(cf, 0, 1500);
    char key[32];
    for (unsigned i = 0; i < 100; i++) {
        const int n = snprintf(key, sizeof key, "item:%u", i);
        ck_assert_int_eq(bk_rbcuckoo_remove(cf, key, (size_t)n), 1);
    }
    check_cuckoo("cf_default", 1500, cf);
}
END_TEST

/* cf_default as variant rbcuckoo, hash=murmur, made by bk_add and
 * bk_remove: answers, counts, figures (deletes kept) and dump RedisBloom's,
 * also from its file and mapped. */
static void cuckoo_filter_is_cf_default(bk_filter *f, const char *name)
{
    check_answers(name, f, filter_has, 1500);
    const bk_rbcuckoo *cf = bk_filter_rbcuckoo(f);
    ck_assert_ptr_nonnull(cf);
    check_counts(name, cf);
    cuckoo_info_is(cf, name);
    cuckoo_dumps_as(cf, name);
    bk_free(f);
}

START_TEST(the_cuckoo_variant_is_redisbloom_in_files)
{
    bk_filter *f = tu_filter(
        "variant=rbcuckoo hash=murmur capacity=1000 bucket_size=2 iterations=20 expansion=1");
    char key[32];
    for (unsigned i = 0; i < 1500; i++)
        ck_assert_int_ge(bk_add(f, key, tu_key(key, sizeof key, "item", i)), 0);
    for (unsigned i = 0; i < 100; i++)
        ck_assert_int_eq(bk_remove(f, key, tu_key(key, sizeof key, "item", i)), BK_OK);
    through_files(f, cuckoo_filter_is_cf_default, "cf_default");
}
END_TEST

/* Keyed: the structure's own calls hash with the filter's key, so they
 * and bk_add reach the same slots. */
START_TEST(keyed_variants_hash_with_their_key)
{
    const char *texts[] = {"variant=rbcuckoo capacity=1000 key=000102030405060708090a0b0c0d0e0f",
                           "variant=rbchain capacity=1000 key=000102030405060708090a0b0c0d0e0f"};
    for (int t = 0; t < 2; t++) {
        bk_filter *f = tu_filter(texts[t]);
        ck_assert_int_eq(t ? bk_rbchain_add(bk_filter_rbchain(f), "x", 1, NULL)
                           : bk_rbcuckoo_add(bk_filter_rbcuckoo(f), "x", 1, 0, NULL),
                         1);
        ck_assert_int_eq(bk_contains(f, "x", 1), 1);
        ck_assert_int_eq(bk_add(f, "y", 1), 1);
        ck_assert_int_eq(t ? bk_rbchain_exists(bk_filter_rbchain(f), "y", 1)
                           : bk_rbcuckoo_exists(bk_filter_rbcuckoo(f), "y", 1),
                         1);
        /* under hash=murmur the structure's calls hash as RedisBloom does,
         * and so does bk_add: the same slots again */
        bk_filter *m = tu_filterf("%s hash=murmur", texts[t]);
        ck_assert_int_eq(bk_add(m, "x", 1), 1);
        ck_assert_int_eq(t ? bk_rbchain_exists(bk_filter_rbchain(m), "x", 1)
                           : bk_rbcuckoo_exists(bk_filter_rbcuckoo(m), "x", 1),
                         1);
        bk_free(m);
        bk_free(f);
    }
}
END_TEST

START_TEST(cf_b4_matches)
{
    bk_rbcuckoo *cf;
    ck_assert_int_eq(bk_rbcuckoo_new(10000, 4, 50, 2, 0, &cf), BK_OK);
    cuckoo_add_items(cf, 0, 9000);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(bk_rbcuckoo_add(cf, "item:5", 6, 0, NULL), 1);
    ck_assert_uint_eq(bk_rbcuckoo_count(cf, "item:5", 6), 4);
    ck_assert_int_eq(bk_rbcuckoo_add(cf, "item:5", 6, BK_RB_NX, NULL), 0);
    check_cuckoo("cf_b4", 9000, cf);
}
END_TEST

START_TEST(cuckoo_full_and_compaction)
{
    /* expansion 0: an add that finds no room fails and changes nothing */
    bk_rbcuckoo *cf;
    ck_assert_int_eq(bk_rbcuckoo_new(8, 2, 20, 0, 0, &cf), BK_OK);
    char key[32];
    int rc = 1;
    unsigned added = 0;
    for (unsigned i = 0; i < 100 && rc == 1; i++) {
        const int n = snprintf(key, sizeof key, "k%u", i);
        rc = bk_rbcuckoo_add(cf, key, (size_t)n, 0, NULL);
        added += rc == 1;
    }
    ck_assert_int_eq(rc, BK_EFULL);
    uint8_t *before, *after;
    uint64_t nb;
    ck_assert_int_eq(bk_rc_sub(cf, 0, &before, &nb), BK_OK);
    uint8_t copy[8];
    memcpy(copy, before, 8);
    ck_assert_int_eq(bk_rbcuckoo_add(cf, key, strlen(key), 0, NULL), BK_EFULL); /* the same again */
    ck_assert_int_eq(bk_rc_sub(cf, 0, &after, &nb), BK_OK);
    ck_assert_mem_eq(copy, after, 8);
    bk_rbcuckoo_info in;
    bk_rc_info(cf, &in);
    ck_assert_uint_eq(in.items, added);
    bk_rbcuckoo_free(cf);
    /* a grown filter whose items are deleted compacts back to one sub-filter */
    ck_assert_int_eq(bk_rbcuckoo_new(64, 2, 20, 1, 0, &cf), BK_OK);
    for (unsigned i = 0; i < 200; i++) {
        const int n = snprintf(key, sizeof key, "k%u", i);
        ck_assert_int_eq(bk_rbcuckoo_add(cf, key, (size_t)n, 0, NULL), 1);
    }
    bk_rc_info(cf, &in);
    ck_assert_uint_gt(in.filters, 2);
    for (unsigned i = 0; i < 170; i++) {
        const int n = snprintf(key, sizeof key, "k%u", i);
        ck_assert_int_eq(bk_rbcuckoo_remove(cf, key, (size_t)n), 1);
    }
    bk_rc_info(cf, &in);
    ck_assert_uint_eq(in.filters, 1);
    ck_assert_uint_eq(in.items, 30);
    for (unsigned i = 170; i < 200; i++) {
        const int n = snprintf(key, sizeof key, "k%u", i);
        ck_assert_int_eq(bk_rbcuckoo_exists(cf, key, (size_t)n), 1);
    }
    bk_rbcuckoo_free(cf);
}
END_TEST

/* A keyed cuckoo filter made for N items holds N without growing, at the
 * loads its sizing is closest to its limit (N just under what 512 .. 4096
 * buckets take) and at N it rounds up far from it; its bytes are its
 * buckets', at most twice what N needs. A walk that finds no room (expansion
 * 0) is undone: every item placed before stays found. */
START_TEST(keyed_cuckoo_holds_its_capacity)
{
    static const struct {
        unsigned b;
        double load;
    } sizes[] = {{2, 0.80}, {3, 0.90}, {4, 0.93}, {8, 0.95}};
    const int runs = tu_small() ? 5 : 25;
    char key[32];
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (uint64_t buckets = 512; buckets <= 4096; buckets *= 2)
            for (int r = 0; r < runs; r++) {
                const unsigned b = sizes[s].b;
                const uint64_t n = r % 5 == 4 ? buckets * b / 2 + 1
                                              : (uint64_t)((double)(buckets * b) * sizes[s].load);
                bk_filter *f =
                    tu_filterf("variant=rbcuckoo capacity=%llu bucket_size=%u expansion=1",
                               (unsigned long long)n, b);
                bk_rbcuckoo *c = bk_filter_rbcuckoo(f); /* CF.ADD: every item takes a slot */
                for (uint64_t i = 0; i < n; i++)
                    ck_assert_int_eq(
                        bk_rbcuckoo_add(c, key, tu_key(key, sizeof key, "held", i), 0, NULL), 1);
                bk_rbcuckoo_info in;
                bk_rc_info(c, &in);
                ck_assert_msg(in.filters == 1, "b=%u capacity %llu grew after %llu items", b,
                              (unsigned long long)n, (unsigned long long)in.items);
                ck_assert_uint_eq(in.items, n);
                ck_assert_uint_eq(in.buckets, buckets);
                ck_assert_uint_eq(in.bytes, buckets * b);
                ck_assert_uint_eq(in.max_iterations, 500); /* the default a keyed walk needs */
                bk_free(f);
            }
    bk_filter *f = tu_filter("variant=rbcuckoo capacity=800 bucket_size=2 expansion=0");
    bk_rbcuckoo *c = bk_filter_rbcuckoo(f);
    uint64_t added = 0;
    int rc = 1;
    while (rc == 1)
        rc = bk_rbcuckoo_add(c, key, tu_key(key, sizeof key, "full", added++), 0, NULL);
    ck_assert_int_eq(rc, BK_EFULL);
    added--;
    ck_assert_uint_gt(added, 800);
    for (uint64_t i = 0; i < added; i++)
        ck_assert_int_eq(bk_contains(f, key, tu_key(key, sizeof key, "full", i)), 1);
    bk_free(f);
}
END_TEST

START_TEST(limits_are_checked_before_memory_is_taken)
{
    bk_rbchain *ch = NULL;
    bk_rbcuckoo *cf = NULL;
    /* 1000 items at 0.005: 1384 bytes; 1024 buckets of 2 */
    ck_assert_int_eq(bk_rbchain_new(1000, 0.01, 2, 0, 1383, &ch), BK_EFULL);
    ck_assert_ptr_null(ch);
    ck_assert_int_eq(bk_rbchain_new(1000, 0.01, 2, 0, 1384, &ch), BK_OK);
    uint8_t head[128];
    const size_t n = bk_rbchain_header(ch, head, sizeof head);
    bk_rbchain *copy = NULL;
    ck_assert_int_eq(bk_rbchain_header_read(head, n, 1000, &copy), BK_EFULL);
    ck_assert_ptr_null(copy);
    bk_rbchain_free(ch);
    ck_assert_int_eq(bk_rbcuckoo_new(2048, 2, 20, 1, 2047, &cf), BK_EFULL);
    ck_assert_int_eq(bk_rbcuckoo_new(2048, 2, 20, 1, 2048, &cf), BK_OK);
    uint8_t h[38];
    bk_rbcuckoo_header(cf, h, sizeof h);
    bk_rbcuckoo *again = NULL;
    ck_assert_int_eq(bk_rbcuckoo_header_read(h, 38, 100, &again), BK_EFULL);
    ck_assert_ptr_null(again);
    /* a header claiming 2^50 bytes is refused, not allocated */
    memset(h + 8, 0, 8);
    h[8 + 6] = 0x04; /* 2^50 buckets */
    ck_assert_int_eq(bk_rbcuckoo_header_read(h, 38, UINT64_C(1) << 30, &again), BK_EFULL);
    bk_rbcuckoo_free(cf);
}
END_TEST

START_TEST(cuckoo_headers_and_chunks_refused)
{
    bk_rbcuckoo *cf, *bad;
    ck_assert_int_eq(bk_rbcuckoo_new(1000, 2, 20, 1, 0, &cf), BK_OK);
    uint8_t head[38], buf[16] = {0};
    ck_assert_uint_eq(bk_rbcuckoo_header(cf, head, sizeof head), 38);
    ck_assert_int_eq(bk_rbcuckoo_header_read(head, 37, 0, &bad), BK_EINVAL);
    head[8] = 3; /* 512 + 3 buckets: not a power of two */
    ck_assert_int_eq(bk_rbcuckoo_header_read(head, 38, 0, &bad), BK_ECORRUPT);
    head[8] = 0;
    head[32] = 0; /* bucket size 0 */
    ck_assert_int_eq(bk_rbcuckoo_header_read(head, 38, 0, &bad), BK_ECORRUPT);
    head[32] = 2;
    head[34] = head[35] = 0; /* no iterations */
    ck_assert_int_eq(bk_rbcuckoo_header_read(head, 38, 0, &bad), BK_ECORRUPT);
    ck_assert_int_eq(bk_rbcuckoo_load_chunk(cf, 0, buf, 1), BK_EINVAL);
    ck_assert_int_eq(bk_rbcuckoo_load_chunk(cf, 5, buf, 0), BK_EINVAL);
    ck_assert_int_eq(bk_rbcuckoo_load_chunk(cf, 5, buf, 16), BK_EINVAL);
    ck_assert_int_eq(bk_rbcuckoo_load_chunk(cf, 1024 + 1, buf, 16), BK_OK);
    ck_assert_int_eq(bk_rbcuckoo_load_chunk(cf, 1024 + 2, buf, 16), BK_EINVAL);
    bk_rbcuckoo_free(cf);
}
END_TEST

/* No state an add can reach fails to save: a RedisBloom structure as a
 * variant grows to what a file (or a bloomkit key) holds, BK_SLICES_MAX
 * slices, and then refuses the add that needs one more with BK_EFULL,
 * nothing changed; the filter at that limit saves and loads back whole.
 * (Before the limit, cuckoo capacity=4 expansion=1 reached 294 sub-filters
 * and its save failed with BK_ERANGE, the file holding nothing.) */
START_TEST(growth_stops_where_the_file_format_stops)
{
    static const char *const cfgs[] = {
        "variant=rbcuckoo capacity=4 expansion=1",
        "variant=rbchain capacity=1 expansion=1 fpr=0.1",
        "variant=rbcuckoo capacity=4 expansion=1 hash=murmur",
    };
    for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++) {
        bk_filter *f = tu_filter(cfgs[c]);
        uint64_t i = 0, added = 0;
        int rc = BK_OK;
        char key[64];
        for (; i < 2000000; i++) {
            const size_t len = tu_key(key, sizeof key, "grow", i);
            if ((rc = bk_add(f, key, len)) < 0)
                break;
            added++;
        }
        ck_assert_msg(rc == BK_EFULL, "%s: %s after %llu adds", cfgs[c], bk_strerror(rc),
                      (unsigned long long)added);
        ck_assert_ptr_nonnull(strstr(bk_last_error(), "the most a bloomkit file or key holds"));
        ck_assert_uint_eq(f->ops->slice_count(f), BK_SLICES_MAX);
        /* the refused add changed nothing, and every add before it holds */
        size_t len = tu_key(key, sizeof key, "grow", i), size = 0;
        uint64_t need;
        ck_assert_int_eq(bk_save_size(f, &need), BK_OK);
        uint8_t *a = malloc((size_t)need), *b = malloc((size_t)need);
        ck_assert_int_eq(bk_save_buffer(f, a, (size_t)need, &size), BK_OK);
        ck_assert_int_eq(bk_add(f, key, len), BK_EFULL);
        ck_assert_int_eq(bk_save_buffer(f, b, (size_t)need, &size), BK_OK);
        ck_assert_uint_eq(size, need);
        ck_assert_mem_eq(a, b, size);
        bk_filter *back;
        ck_assert_int_eq(bk_load_buffer(a, size, &back), BK_OK);
        ck_assert(tu_same_filter(f, back));
        ck_assert_uint_eq(tu_count_present(back, "grow", 0, added), added);
        free(a);
        free(b);
        bk_free(back);
        bk_free(f);
    }
}
END_TEST

Suite *redisbloom_suite(void)
{
    Suite *s = suite_create("redisbloom");
    TCase *tc = tcase_create("redisbloom");
    tcase_set_timeout(tc, BK_TEST_TIMEOUT);
    tcase_add_test(tc, murmur_vectors);
    tcase_add_test(tc, link_sizes_as_redisbloom);
    tcase_add_test(tc, chain_probes_and_header_as_redisbloom);
    tcase_add_test(tc, chain_growth_as_redisbloom);
    tcase_add_test(tc, nonscaling_chain_fills);
    tcase_add_test(tc, an_add_that_must_grow_asks_first);
    tcase_add_test(tc, bf_default_matches);
    tcase_add_test(tc, bf_nonscaling_matches);
    tcase_add_test(tc, bf_exp4_matches);
    tcase_add_test(tc, bf_big_matches);
    tcase_add_test(tc, chain_chunks_refused_as_redisbloom);
    tcase_add_test(tc, the_variants_are_redisbloom_in_files);
    tcase_add_test(tc, cf_default_matches);
    tcase_add_test(tc, the_cuckoo_variant_is_redisbloom_in_files);
    tcase_add_test(tc, keyed_variants_hash_with_their_key);
    tcase_add_test(tc, cf_b4_matches);
    tcase_add_test(tc, cuckoo_full_and_compaction);
    tcase_add_test(tc, keyed_cuckoo_holds_its_capacity);
    tcase_add_test(tc, limits_are_checked_before_memory_is_taken);
    tcase_add_test(tc, cuckoo_headers_and_chunks_refused);
    tcase_add_test(tc, growth_stops_where_the_file_format_stops);
    suite_add_tcase(s, tc);
    return s;
}
