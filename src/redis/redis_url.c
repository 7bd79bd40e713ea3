/* redis_url.c - parsing redis:// and unix:// URLs (see redis_url.h). */
#include "redis_url.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit_redis.h"
#include "../common/alloc.h"
#include "../common/hex.h"
#include "../common/error.h"

static char *dup_range(const bk_allocator *a, const char *s, size_t n)
{
    char *d = bk_mem_alloc(a, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* Decode %XX escapes of s[0..n) into a new string; NULL on a bad escape, an
 * escaped NUL or no memory (*bad tells which). */
static char *decode(const bk_allocator *a, const char *s, size_t n, int *bad)
{
    char *d = dup_range(a, s, n);
    *bad = 0;
    if (!d)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '%') {
            d[o++] = s[i];
            continue;
        }
        if (i + 2 >= n || bk_hex_value(s[i + 1]) < 0 || bk_hex_value(s[i + 2]) < 0) {
            *bad = 1;
            break;
        }
        const int v = bk_hex_value(s[i + 1]) * 16 + bk_hex_value(s[i + 2]);
        if (v == 0) {
            *bad = 1;
            break;
        }
        d[o++] = (char)v;
        i += 2;
    }
    if (*bad) {
        bk_mem_free(a, d);
        return NULL;
    }
    d[o] = '\0';
    return d;
}

/* Printable ASCII, no space, no braces (hash tags are ours), no '%', not
 * empty, at most BK_REDIS_NAME_MAX bytes. */
int bk_redis_name_valid(const char *name)
{
    const size_t n = strlen(name);
    if (n == 0 || n > BK_REDIS_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)name[i];
        if (c <= ' ' || c >= 0x7f || c == '{' || c == '}' || c == '%')
            return 0;
    }
    return 1;
}

static int parse_long(const char *s, size_t n, long long lo, long long hi, long long *out)
{
    if (n == 0 || n > 20)
        return 0;
    char buf[24];
    memcpy(buf, s, n);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (buf[i] < '0' || buf[i] > '9')
            return 0;
    errno = 0;
    const long long v = strtoll(buf, NULL, 10);
    if (errno || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

static int fail(bk_redis_url *u, const char *fmt, const char *part)
{
    bk_redis_url_free(u);
    return bk_fail(BK_EINVAL, fmt, part);
}

/* A part that could not be copied: a bad escape, or no memory. */
static int fail_copy(bk_redis_url *u, int bad, const char *part)
{
    bk_redis_url_free(u);
    return bad ? bk_fail(BK_EINVAL, "redis URL: bad escape in %s", part)
               : bk_fail(BK_ENOMEM, "redis URL: out of memory");
}

/* The query options: this table drives the lookup, the "given twice" check,
 * the ranges and their error texts. name is a string (decoded); the others
 * are integers from lo to hi, multiples of step. */
enum {
    OPT_NAME,
    OPT_CONNECT_TIMEOUT,
    OPT_TIMEOUT,
    OPT_RETRIES,
    OPT_DB,
    OPT_BLOCK_BYTES,
    OPT_SHARDS,
    OPT_N
};
static const struct url_option {
    const char *name;
    long long lo, hi, step;
    const char *unit;
    size_t field; /* offset of the int it sets (not name, block_bytes) */
} options[OPT_N] = {
    [OPT_NAME] = {"name", 0, 0, 0, "", 0},
    [OPT_CONNECT_TIMEOUT] = {"connect_timeout", 1, 3600000, 1, " ms",
                             offsetof(bk_redis_url, connect_timeout_ms)},
    [OPT_TIMEOUT] = {"timeout", 1, 3600000, 1, " ms", offsetof(bk_redis_url, timeout_ms)},
    [OPT_RETRIES] = {"retries", 0, 100, 1, "", offsetof(bk_redis_url, retries)},
    [OPT_DB] = {"db", 0, 65535, 1, "", offsetof(bk_redis_url, db)},
    [OPT_BLOCK_BYTES] = {"block_bytes", 64, (long long)BK_REDIS_BLOCK_MAX, 64, " bytes", 0},
    [OPT_SHARDS] = {"shards", 1, BK_REDIS_SHARDS_MAX, 1, "", offsetof(bk_redis_url, shards)},
};

static int set_name(bk_redis_url *u, const char *v, size_t vn)
{
    int bad;
    char *name = decode(&u->alloc, v, vn, &bad);
    if (!name)
        return bad ? bk_fail(BK_EINVAL, "redis URL: bad escape in name")
                   : bk_fail(BK_ENOMEM, "redis URL: out of memory");
    bk_mem_free(&u->alloc, u->name);
    u->name = name;
    return BK_OK;
}

/* One "name=value" of the query string; *seen: the options met so far (an
 * option given twice is an error, not "the last one wins"). */
static int apply_option(bk_redis_url *u, const char *s, size_t n, unsigned *seen)
{
    const char *eq = memchr(s, '=', n);
    if (!eq)
        return bk_fail(BK_EINVAL, "redis URL: option without '=' in the query");
    const size_t kn = (size_t)(eq - s), vn = n - kn - 1;
    const char *v = eq + 1;
    unsigned i = 0;
    while (i < OPT_N && !(kn == strlen(options[i].name) && memcmp(s, options[i].name, kn) == 0))
        i++;
    if (i == OPT_N) {
        char list[128] = "";
        for (unsigned j = 0; j < OPT_N; j++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "",
                     options[j].name);
        return bk_fail(BK_EINVAL, "redis URL: unknown option '%.*s' (known: %s)",
                       (int)(kn > 40 ? 40 : kn), s, list);
    }
    if (*seen & (1u << i))
        return bk_fail(BK_EINVAL, "redis URL: option %s given twice", options[i].name);
    *seen |= 1u << i;
    if (i == OPT_NAME)
        return set_name(u, v, vn);
    const struct url_option *o = &options[i];
    long long x;
    if (!parse_long(v, vn, o->lo, o->hi, &x) || x % o->step != 0)
        return o->step > 1 ? bk_fail(BK_EINVAL,
                                     "redis URL: %s must be a multiple of %lld from %lld to %lld%s",
                                     o->name, o->step, o->lo, o->hi, o->unit)
                           : bk_fail(BK_EINVAL, "redis URL: %s must be %lld .. %lld%s", o->name,
                                     o->lo, o->hi, o->unit);
    if (i == OPT_BLOCK_BYTES) {
        u->block_bytes = (uint64_t)x;
        u->block_bytes_given = 1;
    } else {
        *(int *)(void *)((char *)u + o->field) = (int)x;
    }
    return BK_OK;
}

static int parse_query(bk_redis_url *u, const char *q)
{
    unsigned seen = 0;
    while (*q) {
        const char *amp = strchr(q, '&');
        const size_t n = amp ? (size_t)(amp - q) : strlen(q);
        if (n) {
            const int rc = apply_option(u, q, n, &seen);
            if (rc != BK_OK)
                return rc;
        }
        q += n + (amp != NULL);
    }
    return BK_OK;
}

/* "[user]:password@" at the start of s[0..n): sets user/password, returns the
 * bytes consumed (0 when there is no '@'), -1 on error (bk_fail set: its code
 * is the error). */
static long parse_userinfo(bk_redis_url *u, const char *s, size_t n, int *err)
{
    const char *at = NULL;
    for (size_t i = n; i-- > 0;)
        if (s[i] == '@') {
            at = s + i;
            break;
        }
    if (!at)
        return 0;
    const char *colon = memchr(s, ':', (size_t)(at - s));
    int bad = 0;
    if (!colon) {
        *err = bk_fail(BK_EINVAL, "redis URL: credentials must be [user]:password@");
        return -1;
    }
    if (colon > s && !(u->user = decode(&u->alloc, s, (size_t)(colon - s), &bad))) {
        *err = bad ? bk_fail(BK_EINVAL, "redis URL: bad escape in user")
                   : bk_fail(BK_ENOMEM, "redis URL: out of memory");
        return -1;
    }
    if (!(u->password = decode(&u->alloc, colon + 1, (size_t)(at - colon - 1), &bad))) {
        *err = bad ? bk_fail(BK_EINVAL, "redis URL: bad escape in password")
                   : bk_fail(BK_ENOMEM, "redis URL: out of memory");
        return -1;
    }
    return (long)(at - s) + 1;
}

/* long: the URL's parts in order (scheme, user, host, port, db, key, query). */
int bk_redis_url_parse(const char *text, bk_redis_url *u)
{
    if (!u)
        return bk_fail(BK_EINVAL, "redis URL: no output");
    memset(u, 0, sizeof *u);
    u->alloc = bk_current_allocator();
    u->port = 6379;
    u->connect_timeout_ms = 2000;
    u->timeout_ms = 10000;
    u->retries = 5;
    u->block_bytes = BK_REDIS_BLOCK_MAX;
    if (!text)
        return fail(u, "redis URL: %s", "missing");
    if (strlen(text) > 4096)
        return fail(u, "redis URL: %s", "longer than 4096 bytes");
    if (strchr(text, '#'))
        return fail(u, "redis URL: %s",
                    "has a fragment ('#...'), which is no part of a server's address or a "
                    "filter's name: remove it (a '#' in a name or password is written %23)");
    const char *q = strchr(text, '?');
    const size_t body_len = q ? (size_t)(q - text) : strlen(text);
    const int is_unix = strncmp(text, "unix://", 7) == 0;
    if (!is_unix && strncmp(text, "redis://", 8) != 0)
        return fail(u, "redis URL: %s", "must start with redis:// or unix://");
    const char *s = text + (is_unix ? 7 : 8);
    size_t n = body_len - (size_t)(s - text);
    int uerr = BK_OK;
    const long used = parse_userinfo(u, s, n, &uerr);
    if (used < 0) {
        bk_redis_url_free(u);
        return uerr;
    }
    s += used;
    n -= (size_t)used;
    int bad = 0;
    if (is_unix) {
        if (n == 0 || s[0] != '/')
            return fail(u, "redis URL: %s", "unix:// needs an absolute socket path");
        if (!(u->path = decode(&u->alloc, s, n, &bad)))
            return fail_copy(u, bad, "the socket path");
    } else {
        const char *slash = memchr(s, '/', n);
        const size_t hn = slash ? (size_t)(slash - s) : n;
        const char *hostend = s + hn, *portsep = NULL;
        if (hn && s[0] == '[') {
            const char *rb = memchr(s, ']', hn);
            if (!rb)
                return fail(u, "redis URL: %s", "unclosed '[' in the host");
            if (!(u->host = dup_range(&u->alloc, s + 1, (size_t)(rb - s - 1))))
                return fail_copy(u, 0, "the host");
            if (rb + 1 < hostend) {
                if (rb[1] != ':')
                    return fail(u, "redis URL: %s", "junk after ']' in the host");
                portsep = rb + 1;
            }
        } else {
            portsep = memchr(s, ':', hn);
            u->host = dup_range(&u->alloc, s, portsep ? (size_t)(portsep - s) : hn);
        }
        if (!u->host)
            return fail_copy(u, 0, "the host");
        if (!u->host[0])
            return fail(u, "redis URL: %s", "no host");
        if (portsep) {
            long long port;
            if (!parse_long(portsep + 1, (size_t)(hostend - portsep - 1), 1, 65535, &port))
                return fail(u, "redis URL: %s", "port must be 1 .. 65535");
            u->port = (int)port;
        }
        if (slash && (size_t)(slash - s) + 1 < n) {
            if (!(u->name = decode(&u->alloc, slash + 1, n - hn - 1, &bad)))
                return fail_copy(u, bad, "the filter name");
        }
    }
    if (q) {
        const int rc = parse_query(u, q + 1);
        if (rc != BK_OK) {
            bk_redis_url_free(u);
            return rc;
        }
    }
    if (!u->name)
        return fail(u, "redis URL: %s",
                    is_unix ? "no filter name (unix:///path?name=NAME)"
                            : "no filter name (redis://host:port/NAME)");
    if (!bk_redis_name_valid(u->name))
        return fail(u, "redis URL: %s",
                    "filter name must be 1-200 printable characters without spaces, "
                    "braces or '%'");
    return BK_OK;
}

void bk_redis_url_free(bk_redis_url *u)
{
    if (!u)
        return;
    const bk_allocator *a = &u->alloc;
    bk_mem_free(a, u->host);
    bk_mem_free(a, u->path);
    bk_mem_free(a, u->user);
    if (u->password)
        memset(u->password, 0, strlen(u->password));
    bk_mem_free(a, u->password);
    bk_mem_free(a, u->name);
    u->host = u->path = u->user = u->password = u->name = NULL;
}

const char *bk_redis_url_where(const bk_redis_url *u, char *buf, size_t len)
{
    if (u->path)
        snprintf(buf, len, "%s", u->path);
    else
        snprintf(buf, len, "%s:%d", u->host ? u->host : "?", u->port);
    return buf;
}
