/*
 * canonical.c - bk_url_canonical: one spelling for URLs that name the same
 * resource, so a crawler's filter sees them as one key (see bloomkit.h and
 * docs/urls.md for the rules, and where they differ from Scrapy's
 * canonicalize_url).
 *
 * The rules are RFC 3986 section 6.2.2 (syntax-based normalisation: case,
 * percent-encoding, dot segments) and 6.2.3 (scheme-based: default ports,
 * an empty path as "/"), plus what crawlers add: no fragment, query
 * parameters sorted. Only absolute URLs with an authority ("scheme://...")
 * are rewritten; anything else, or an authority that cannot be read (a port
 * that is not a number), is copied as it is: a line of a stream is never
 * refused, and never merged with another on a guess.
 *
 * One pass writes scheme, authority, path and query into the caller's
 * buffer, each component normalised on the way (a byte becomes at most three:
 * the bound BK_URL_CANONICAL_MAX); dot segments are then removed in place and
 * the query's parameters sorted (a stable merge sort of their spans).
 * The function is idempotent: its output, fed back, comes out unchanged
 * (tests/fuzz/fuzz_url.c checks it).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/hex.h"
#include "../common/error.h"
#include "bloomkit.h"

/* Which part a byte belongs to: what normalisation keeps raw. */
enum part { P_USER, P_HOST, P_PATH, P_QUERY };

/* Byte classes: C_UNRESERVED (RFC 3986: ALPHA DIGIT - . _ ~, decoded
 * wherever they appear encoded), C_ENCODE (bytes a URI never holds raw:
 * controls, space, non-ASCII, and " < > \\ ^ ` { | }, which RFC 3986
 * appendix A has no place for), C_PERCENT ('%'). One table lookup a
 * byte: the canonical form of a URL costs about one pass over it. */
enum { C_UNRESERVED = 1, C_ENCODE = 2, C_PERCENT = 8 };
static const unsigned char byte_class[256] = {
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* 00 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* 10 */
    2, 0, 2, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, /* 20 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 2, 0, 2, 0, /* 30 */
    0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 40 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 2, 0, 2, 1, /* 50 */
    2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 60 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 2, /* 70 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* 80 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* 90 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* a0 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* b0 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* c0 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* d0 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* e0 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* f0 */
};

static int is_alpha(unsigned c)
{
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}
static int is_digit(unsigned c)
{
    return c >= '0' && c <= '9';
}
static int is_unreserved(unsigned c)
{
    return byte_class[c] & C_UNRESERVED;
}
static int must_encode(unsigned c)
{
    return byte_class[c] & C_ENCODE;
}
static unsigned lower(unsigned c)
{
    return c >= 'A' && c <= 'Z' ? c | 0x20 : c;
}

static char *put_escape(char *w, unsigned c)
{
    static const char hex[] = "0123456789ABCDEF";
    *w++ = '%';
    *w++ = hex[c >> 4];
    *w++ = hex[c & 15];
    return w;
}

/* s[0..n) of part `part` into w, normalised: escapes of unreserved bytes
 * decoded, others' hex upper-cased; a '%' that begins no escape, and bytes
 * a URI never holds raw, encoded (the host keeps non-ASCII bytes: an IDN
 * host as given; the query writes a space as '+', as forms do); the host
 * lower-cased. Returns the end of what was written (at most 3n bytes). */
static char *normalise(char *w, const unsigned char *s, size_t n, enum part part)
{
    for (size_t i = 0; i < n; i++) {
        unsigned c = s[i];
        if (!(byte_class[c] & (C_ENCODE | C_PERCENT)) && part != P_HOST) {
            *w++ = (char)c; /* most bytes: as they are */
            continue;
        }
        const int hi = c == '%' && i + 2 < n ? bk_hex_value((char)s[i + 1]) : -1;
        const int lo = hi >= 0 ? bk_hex_value((char)s[i + 2]) : -1;
        if (lo >= 0) {
            c = (unsigned)(hi << 4 | lo);
            i += 2;
            if (is_unreserved(c))
                *w++ = (char)(part == P_HOST ? lower(c) : c);
            else if (c == ' ' && part == P_QUERY)
                *w++ = '+';
            else
                w = put_escape(w, c);
        } else if (c == '%') {
            w = put_escape(w, c);
        } else if (c == ' ' && part == P_QUERY) {
            *w++ = '+';
        } else if (must_encode(c) && !(part == P_HOST && c >= 0x80)) {
            w = put_escape(w, c);
        } else {
            *w++ = (char)(part == P_HOST ? lower(c) : c);
        }
    }
    return w;
}

/* RFC 3986 section 5.2.4 on the path at p[0..n), in place (the output never
 * outgrows what it has read). Returns the new length. */
static size_t remove_dot_segments(char *p, size_t n)
{
    /* a dot segment is "." or ".." after a '/' or at the start: most paths
     * have none, and are left as they are after one memchr-paced look */
    int dots = n > 0 && p[0] == '.';
    for (const char *d = p; !dots && (d = memchr(d, '.', (size_t)(p + n - d))) != NULL; d++)
        dots = d > p && d[-1] == '/';
    if (!dots)
        return n;
    size_t r = 0, w = 0;
#define AT(lit) (n - r >= sizeof(lit) - 1 && memcmp(p + r, (lit), sizeof(lit) - 1) == 0)
#define IS(lit) (n - r == sizeof(lit) - 1 && memcmp(p + r, (lit), sizeof(lit) - 1) == 0)
    while (r < n) {
        if (AT("../")) {
            r += 3;
        } else if (AT("./")) {
            r += 2;
        } else if (AT("/./")) {
            r += 2; /* at the second '/' */
        } else if (IS("/.")) {
            p[w++] = '/';
            r = n;
        } else if (AT("/../") || IS("/..")) {
            const int last = IS("/..");
            r += 3;
            while (w > 0 && p[w - 1] != '/') /* drop the last segment and its '/' */
                w--;
            if (w > 0)
                w--;
            if (last)
                p[w++] = '/';
        } else if (IS(".") || IS("..")) {
            r = n;
        } else {
            do /* the first segment, with its '/' */
                p[w++] = p[r++];
            while (r < n && p[r] != '/');
        }
    }
#undef AT
#undef IS
    return w;
}

/* A query parameter: its bytes in the buffer, and the length of its key
 * (up to the first '=', or all of it). */
typedef struct span {
    size_t off, len, keylen;
} span;

/* Order of parameters: by key, then value, then length (a bare "a" before
 * "a="), bytewise. */
static int span_cmp(const char *q, const span *a, const span *b)
{
    const size_t ka = a->keylen, kb = b->keylen;
    int c = memcmp(q + a->off, q + b->off, ka < kb ? ka : kb);
    if (c || ka != kb)
        return c ? c : ka < kb ? -1 : 1;
    const size_t va = a->len - ka, vb = b->len - kb; /* values with their '=' */
    c = memcmp(q + a->off + ka, q + b->off + kb, va < vb ? va : vb);
    return c ? c : va < vb ? -1 : va > vb;
}

/* Stable bottom-up merge sort of s[0..n) by span_cmp, through tmp[0..n). */
static void sort_spans(const char *q, span *s, span *tmp, size_t n)
{
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            const size_t mid = lo + width < n ? lo + width : n;
            const size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = span_cmp(q, &s[j], &s[i]) < 0 ? s[j++] : s[i++];
            while (i < mid)
                tmp[k++] = s[i++];
            while (j < hi)
                tmp[k++] = s[j++];
        }
        memcpy(s, tmp, n * sizeof *s);
    }
}

/* The normalised query at q[0..n): empty parameters dropped and, unless
 * keep_order, the rest sorted. In place; returns the new length (0: no
 * query is left), or BK_ENOMEM. */
static long long finish_query(char *q, size_t n, int keep_order)
{
    size_t count = 1; /* parameters, at most */
    for (size_t i = 0; i < n; i++)
        count += q[i] == '&';
    enum { STACK_SPANS = 32, STACK_BYTES = 2048 };
    span stack_spans[2 * STACK_SPANS];
    char stack_bytes[STACK_BYTES];
    const bk_allocator a = bk_current_allocator();
    const int big = count > STACK_SPANS || n > STACK_BYTES;
    span *s = big ? bk_mem_alloc(&a, 2 * (count + 1) * sizeof *s) : stack_spans;
    char *out = big ? bk_mem_alloc(&a, n + 1) : stack_bytes;
    if (!s || !out) {
        if (big) {
            bk_mem_free(&a, s);
            bk_mem_free(&a, out);
        }
        return BK_ENOMEM;
    }
    size_t ns = 0;
    for (size_t start = 0; start <= n;) {
        size_t end = start;
        while (end < n && q[end] != '&')
            end++;
        if (end > start) { /* "&&" and a trailing '&' leave nothing */
            size_t key = start;
            while (key < end && q[key] != '=')
                key++;
            s[ns++] = (span){start, end - start, key - start};
        }
        start = end + 1;
    }
    if (!keep_order)
        sort_spans(q, s, s + ns, ns);
    size_t w = 0;
    for (size_t i = 0; i < ns; i++) {
        if (w)
            out[w++] = '&';
        memcpy(out + w, q + s[i].off, s[i].len);
        w += s[i].len;
    }
    memcpy(q, out, w);
    if (big) {
        bk_mem_free(&a, s);
        bk_mem_free(&a, out);
    }
    return (long long)w;
}

/* The default port of a scheme (lower case), or NULL. */
static const char *default_port(const char *scheme, size_t n)
{
    static const struct {
        const char *scheme, *port;
    } ports[] = {{"http", "80"}, {"https", "443"}, {"ws", "80"}, {"wss", "443"}, {"ftp", "21"}};
    for (size_t i = 0; i < sizeof ports / sizeof *ports; i++)
        if (strlen(ports[i].scheme) == n && memcmp(ports[i].scheme, scheme, n) == 0)
            return ports[i].port;
    return NULL;
}

/* Copy in[0..len) to out as it is: not a URL this canonicalises. */
static int pass_through(const char *in, size_t len, char *out, size_t *outlen)
{
    if (len)
        memcpy(out, in, len);
    *outlen = len;
    return 0;
}

/* long: the URL steps in order (scheme, host, port, path, query), each short. */
int bk_url_canonical(const char *in, size_t len, unsigned flags, char *out, size_t cap,
                     size_t *outlen)
{
    if ((!in && len) || !out || !outlen || (flags & ~(unsigned)BK_URL_KEEP_QUERY_ORDER))
        return bk_fail(BK_EINVAL, "url_canonical: no input, no output or unknown flags");
    if (len > (SIZE_MAX - 1) / 3 || cap < BK_URL_CANONICAL_MAX(len))
        return bk_fail(BK_ERANGE, "url_canonical: a URL of %zu bytes needs an output of %zu", len,
                       len > (SIZE_MAX - 1) / 3 ? SIZE_MAX : BK_URL_CANONICAL_MAX(len));
    const unsigned char *s = (const unsigned char *)in;
    /* scheme ":" "//" */
    size_t i = 0;
    if (len == 0 || !is_alpha(s[0]))
        return pass_through(in, len, out, outlen);
    while (i < len &&
           (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.'))
        i++;
    if (len - i < 3 || memcmp(in + i, "://", 3) != 0)
        return pass_through(in, len, out, outlen);
    const size_t scheme_len = i;
    /* authority: up to '/', '?', '#' or the end; userinfo to its last '@' */
    const size_t auth = i + 3;
    size_t auth_end = auth;
    while (auth_end < len && s[auth_end] != '/' && s[auth_end] != '?' && s[auth_end] != '#')
        auth_end++;
    size_t host = auth;
    for (size_t j = auth; j < auth_end; j++)
        if (s[j] == '@')
            host = j + 1;
    size_t host_end = host;
    if (host < auth_end && s[host] == '[') { /* IP literal */
        while (host_end < auth_end && s[host_end] != ']')
            host_end++;
        if (host_end == auth_end)
            return pass_through(in, len, out, outlen);
        host_end++;
    } else {
        while (host_end < auth_end && s[host_end] != ':')
            host_end++;
    }
    /* port: digits or nothing; leading zeros (not the last digit) and a
     * default port dropped */
    const char *digits = NULL;
    size_t ndigits = 0;
    if (host_end < auth_end) {
        if (s[host_end] != ':')
            return pass_through(in, len, out, outlen);
        for (size_t j = host_end + 1; j < auth_end; j++)
            if (!is_digit(s[j]))
                return pass_through(in, len, out, outlen);
        size_t j = host_end + 1;
        while (j + 1 < auth_end && s[j] == '0')
            j++;
        digits = in + j;
        ndigits = auth_end - j;
        if (ndigits > 5 || (ndigits == 5 && memcmp(digits, "65535", 5) > 0))
            return pass_through(in, len, out, outlen);
    }
    char *w = out;
    for (size_t j = 0; j < scheme_len; j++)
        *w++ = (char)lower(s[j]);
    const char *scheme = out;
    memcpy(w, "://", 3); /* NOLINT(bugprone-not-null-terminated-result): w goes on */
    w += 3;
    if (host > auth) { /* userinfo and its '@' */
        w = normalise(w, s + auth, host - 1 - auth, P_USER);
        *w++ = '@';
    }
    w = normalise(w, s + host, host_end - host, P_HOST);
    const char *dport = default_port(scheme, scheme_len);
    if (ndigits && !(dport && strlen(dport) == ndigits && memcmp(dport, digits, ndigits) == 0)) {
        *w++ = ':';
        memcpy(w, digits, ndigits);
        w += ndigits;
    }
    /* path: normalised, dot segments removed, "/" when empty */
    size_t path_end = auth_end;
    while (path_end < len && s[path_end] != '?' && s[path_end] != '#')
        path_end++;
    char *path = w;
    w = normalise(w, s + auth_end, path_end - auth_end, P_PATH);
    w = path + remove_dot_segments(path, (size_t)(w - path));
    if (w == path)
        *w++ = '/';
    /* query: normalised, empty parameters dropped, sorted; the fragment goes */
    if (path_end < len && s[path_end] == '?') {
        size_t query_end = path_end + 1;
        while (query_end < len && s[query_end] != '#')
            query_end++;
        char *q = w + 1;
        char *qe = normalise(q, s + path_end + 1, query_end - path_end - 1, P_QUERY);
        const long long qn =
            finish_query(q, (size_t)(qe - q), (flags & BK_URL_KEEP_QUERY_ORDER) != 0);
        if (qn < 0)
            return bk_fail((int)qn, "url_canonical: %s", bk_strerror((int)qn));
        if (qn > 0) {
            *w = '?';
            w = q + qn;
        }
    }
    *outlen = (size_t)(w - out);
    return 1;
}
