/*
 * test_url.c - bk_url_canonical on a table of cases (each rule, malformed
 * input that passes through unchanged), spellings that must become one key,
 * the fixed point, and the arguments.
 */
#include <string.h>

#include "suites.h"
#include "testutil.h"

static const struct url_case {
    const char *in, *want; /* want NULL: passed through unchanged (0) */
    unsigned flags;
} cases[] = {
    /* case: scheme and host, not path or userinfo */
    {"HTTP://Example.COM/A/B", "http://example.com/A/B", 0},
    {"http://User:Pass@Example.com/", "http://User:Pass@example.com/", 0},
    {"http://%45xample.com/", "http://example.com/", 0},
    /* ports */
    {"http://example.com:80/x", "http://example.com/x", 0},
    {"https://example.com:443/", "https://example.com/", 0},
    {"https://example.com:80/", "https://example.com:80/", 0},
    {"http://example.com:0080/", "http://example.com/", 0},
    {"http://example.com:08080/", "http://example.com:8080/", 0},
    {"http://example.com:000/", "http://example.com:0/", 0},
    {"http://example.com:/", "http://example.com/", 0},
    {"ftp://example.com:21/x", "ftp://example.com/x", 0},
    {"wss://example.com:443/x", "wss://example.com/x", 0},
    {"http://example.com:65535/", "http://example.com:65535/", 0},
    {"http://[2001:DB8::1]:80/", "http://[2001:db8::1]/", 0},
    /* empty path, fragment */
    {"http://example.com", "http://example.com/", 0},
    {"http://example.com/a#frag", "http://example.com/a", 0},
    {"http://example.com#f", "http://example.com/", 0},
    {"http://example.com/a?b#c?d", "http://example.com/a?b", 0},
    /* dot segments (RFC 3986 5.2.4) */
    {"http://example.com/a/./b/../c", "http://example.com/a/c", 0},
    {"http://example.com/../a", "http://example.com/a", 0},
    {"http://example.com/a/b/..", "http://example.com/a/", 0},
    {"http://example.com/a/.", "http://example.com/a/", 0},
    {"http://example.com/a/b/../../../c", "http://example.com/c", 0},
    {"http://example.com/%2E%2E/x", "http://example.com/x", 0},
    {"http://example.com/a//b", "http://example.com/a//b", 0},
    {"http://example.com/a/..b/.c", "http://example.com/a/..b/.c", 0},
    /* percent-encoding */
    {"http://example.com/%7Euser/%61b", "http://example.com/~user/ab", 0},
    {"http://example.com/%41%42", "http://example.com/AB", 0},
    {"http://example.com/a%2fb", "http://example.com/a%2Fb", 0},
    {"http://example.com/caf\xc3\xa9", "http://example.com/caf%C3%A9", 0},
    {"http://example.com/caf%c3%a9", "http://example.com/caf%C3%A9", 0},
    {"http://example.com/a b", "http://example.com/a%20b", 0},
    {"http://example.com/100%", "http://example.com/100%25", 0},
    {"http://example.com/%zz", "http://example.com/%25zz", 0},
    {"http://example.com/%%41b", "http://example.com/%25Ab", 0},
    {"http://example.com/{x}|\"", "http://example.com/%7Bx%7D%7C%22", 0},
    /* IDN hosts as given (ASCII letters lower-cased) */
    {"http://B\xc3\xbc"
     "cher.EXAMPLE/",
     "http://b\xc3\xbc"
     "cher.example/",
     0},
    /* query: sorted by key then value, '+' for a space, empty parts dropped */
    {"http://example.com/?b=2&a=1", "http://example.com/?a=1&b=2", 0},
    {"http://example.com/?b=2&a=1", "http://example.com/?b=2&a=1", BK_URL_KEEP_QUERY_ORDER},
    {"http://example.com/?a=2&a=1", "http://example.com/?a=1&a=2", 0},
    {"http://example.com/?a-b=2&a=1", "http://example.com/?a=1&a-b=2", 0},
    {"http://example.com/?a&a=", "http://example.com/?a&a=", 0},
    {"http://example.com/?a=&a", "http://example.com/?a&a=", 0},
    {"http://example.com/?q=a%20b&r=c+d", "http://example.com/?q=a+b&r=c+d", 0},
    {"http://example.com/?q=a b", "http://example.com/?q=a+b", 0},
    {"http://example.com/?x=%2b&y=%26", "http://example.com/?x=%2B&y=%26", 0},
    {"http://example.com/x?y=\xff", "http://example.com/x?y=%FF", 0},
    {"http://example.com/?", "http://example.com/", 0},
    {"http://example.com/?&&a=1&", "http://example.com/?a=1", 0},
    {"http://example.com?z=1", "http://example.com/?z=1", 0},
    /* malformed, or not an absolute URL with an authority: as it is */
    {"", NULL, 0},
    {"not a url", NULL, 0},
    {"example.com/path", NULL, 0},
    {"/relative/path?b=1&a=2", NULL, 0},
    {"mailto:a@b.c", NULL, 0},
    {"urn:isbn:0451450523", NULL, 0},
    {"http:/one-slash", NULL, 0},
    {"1http://digit-first/", NULL, 0},
    {"http://example.com:port/", NULL, 0},
    {"http://example.com:99999/", NULL, 0},
    {"http://example.com:65536/", NULL, 0},
    {"http://[::1/", NULL, 0},
    {"http://[::1]x/", NULL, 0},
    {"\xff\xfe", NULL, 0},
};

/* The canonical form of s (with flags) into buf; the return code. */
static int canon(const char *s, size_t len, unsigned flags, char *buf, size_t *n)
{
    return bk_url_canonical(s, len, flags, buf, BK_URL_CANONICAL_MAX(len), n);
}

START_TEST(table_of_cases)
{
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const struct url_case *c = &cases[i];
        const size_t len = strlen(c->in);
        char out[512], again[1600];
        size_t n = 0, m = 0;
        const int rc = canon(c->in, len, c->flags, out, &n);
        const char *want = c->want ? c->want : c->in;
        ck_assert_msg(rc == (c->want ? 1 : 0), "'%s': rc %d", c->in, rc);
        ck_assert_msg(n == strlen(want) && memcmp(out, want, n) == 0, "'%s' -> '%.*s', want '%s'",
                      c->in, (int)n, out, want);
        ck_assert_uint_le(n, BK_URL_CANONICAL_MAX(len));
        if (rc == 1) { /* a fixed point */
            ck_assert_int_eq(canon(out, n, c->flags, again, &m), 1);
            ck_assert_msg(m == n && memcmp(out, again, n) == 0, "'%s' is not a fixed point", want);
        }
    }
}
END_TEST

/* Spellings of one resource, as crawlers meet them, become one key; and
 * different resources stay apart. */
START_TEST(spellings_of_one_page_are_one_key)
{
    static const char *const same[][5] = {
        {"http://example.com/a/b?x=1&y=2", "HTTP://EXAMPLE.COM:80/a/./b?y=2&x=1#top",
         "http://example.com/a/c/../b?x=1&y=2&", "http://example.com/%61/b?x=%31&y=2", NULL},
        {"http://example.com/", "http://example.com", "http://example.com:80",
         "http://example.com/?", "http://example.com/#"},
        {"https://example.com/caf\xc3\xa9?q=a+b", "https://example.com/caf%C3%A9?q=a%20b",
         "https://example.com:443/caf%c3%a9?q=a b", NULL, NULL},
    };
    static const char *const apart[] = {
        "http://example.com/a",      "http://example.com/A",   "https://example.com/a",
        "http://example.com:8080/a", "http://example.com/a/",  "http://example.com/a?x=1",
        "http://example.com/a%2Fb",  "http://example.com/a/b", "http://user@example.com/a",
    };
    char first[256], out[256];
    size_t fn, n;
    for (size_t g = 0; g < sizeof same / sizeof *same; g++) {
        ck_assert_int_eq(canon(same[g][0], strlen(same[g][0]), 0, first, &fn), 1);
        for (size_t i = 1; i < 5 && same[g][i]; i++) {
            ck_assert_int_eq(canon(same[g][i], strlen(same[g][i]), 0, out, &n), 1);
            ck_assert_msg(n == fn && memcmp(out, first, n) == 0, "'%s' -> '%.*s', not '%.*s'",
                          same[g][i], (int)n, out, (int)fn, first);
        }
    }
    char keys[sizeof apart / sizeof *apart][256];
    size_t lens[sizeof apart / sizeof *apart];
    for (size_t i = 0; i < sizeof apart / sizeof *apart; i++) {
        ck_assert_int_eq(canon(apart[i], strlen(apart[i]), 0, keys[i], &lens[i]), 1);
        for (size_t j = 0; j < i; j++)
            ck_assert_msg(lens[i] != lens[j] || memcmp(keys[i], keys[j], lens[i]) != 0,
                          "'%s' and '%s' became one key", apart[i], apart[j]);
    }
}
END_TEST

/* A long query (past the stack scratch) sorts the same way, stably; its
 * scratch memory comes from the allocator, and a failure is BK_ENOMEM with
 * nothing leaked. */
START_TEST(long_queries_and_arguments)
{
    enum { PARAMS = 500 };
    char *in = malloc(16 * PARAMS + 64), *out = malloc(BK_URL_CANONICAL_MAX(16 * PARAMS + 64));
    size_t len = (size_t)sprintf(in, "http://example.com/?");
    for (int i = PARAMS - 1; i >= 0; i--)
        len += (size_t)sprintf(in + len, "k%04d=%d&", i % 250, i);
    size_t n;
    ck_assert_int_eq(canon(in, len, 0, out, &n), 1);
    out[n] = '\0';
    const char *p = strchr(out, '?') + 1;
    for (int i = 0; i < PARAMS; i++) { /* k0000=0&k0000=250&k0001=1&..., values bytewise */
        char a[16], b[16], want[32];
        sprintf(a, "%d", i / 2);
        sprintf(b, "%d", i / 2 + 250);
        const int first_a = strcmp(a, b) < 0;
        const int w = sprintf(want, "k%04d=%s", i / 2, (i % 2 == 0) == first_a ? a : b);
        ck_assert_msg(strncmp(p, want, (size_t)w) == 0, "parameter %d: '%.20s', want %s", i, p,
                      want);
        p += w + (i + 1 < PARAMS);
    }
    bk_allocator fail = tu_failing_allocator(1);
    ck_assert_int_eq(bk_set_allocator(&fail), BK_OK);
    ck_assert_int_eq(canon(in, len, 0, out, &n), BK_ENOMEM);
    bk_set_allocator(NULL);
    ck_assert_int_eq(tu_alloc.live, 0);
    /* arguments */
    ck_assert_int_eq(bk_url_canonical("http://a/", 9, 0, out, 27, &n), BK_ERANGE);
    ck_assert_int_eq(bk_url_canonical("http://a/", 9, 0, out, 28, &n), 1);
    ck_assert_int_eq(bk_url_canonical("http://a/", 9, 4, out, 28, &n), BK_EINVAL);
    ck_assert_int_eq(bk_url_canonical(NULL, 1, 0, out, 28, &n), BK_EINVAL);
    ck_assert_int_eq(bk_url_canonical(NULL, 0, 0, out, 28, &n), 0);
    ck_assert_int_eq(bk_url_canonical("x", 1, 0, NULL, 28, &n), BK_EINVAL);
    ck_assert_int_eq(bk_url_canonical("x", 1, 0, out, 28, NULL), BK_EINVAL);
    free(in);
    free(out);
}
END_TEST

Suite *url_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("url", "canonical", &tc);
    tcase_add_test(tc, table_of_cases);
    tcase_add_test(tc, spellings_of_one_page_are_one_key);
    tcase_add_test(tc, long_queries_and_arguments);
    return s;
}
