/* fileutil.c - retrying I/O and thread-safe error text for src/io. */
#define _DEFAULT_SOURCE
#include "fileutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/alloc.h"
#include "../common/error.h"
#include "bloomkit.h"
#include "sysio.h"

/* Large transfers are split so no single call exceeds what Linux moves at
 * once (0x7ffff000 bytes) and the loop stays uniform. */
#define IO_STEP (UINT64_C(1) << 30)

/* Write all n bytes, at the file position (off < 0) or at offset off. */
static int write_out(int fd, const void *p, size_t n, int64_t off)
{
    const uint8_t *b = p;
    while (n > 0) {
        const size_t step = n < IO_STEP ? n : (size_t)IO_STEP;
        const ssize_t w =
            off < 0 ? bk_sys.write(fd, b, step) : bk_sys.pwrite(fd, b, step, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {
            errno = ENOSPC;
            return -1;
        }
        b += w;
        n -= (size_t)w;
        if (off >= 0)
            off += w;
    }
    return 0;
}

int bk_write_all(int fd, const void *p, size_t n)
{
    return write_out(fd, p, n, -1);
}

int bk_pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
    return write_out(fd, p, n, (int64_t)off);
}

int bk_read_all(int fd, void *p, size_t n)
{
    uint8_t *b = p;
    while (n > 0) {
        const size_t step = n < IO_STEP ? n : (size_t)IO_STEP;
        const ssize_t r = bk_sys.read(fd, b, step);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0) {
            errno = 0;
            return -2;
        }
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

const char *bk_os_error(int err, char *buf, size_t n)
{
    if (strerror_r(err, buf, n) != 0)
        snprintf(buf, n, "error %d", err);
    return buf;
}

int bk_open_regular(const char *path, int write, int *fd_out, uint64_t *size, uint64_t *dev,
                    uint64_t *ino)
{
    char why[128];
    /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever;
     * it is refused below like any file that is not regular (the flag does
     * nothing to a regular file's reads). */
    const int fd = bk_sys.open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK, 0);
    if (fd < 0)
        return bk_fail(BK_EIO, "open %s: %s", path, bk_os_error(errno, why, sizeof why));
    struct stat st;
    if (bk_sys.fstat(fd, &st) != 0) {
        const int e = errno;
        bk_sys.close(fd);
        return bk_fail(BK_EIO, "stat %s: %s", path, bk_os_error(e, why, sizeof why));
    }
    if (!S_ISREG(st.st_mode)) {
        bk_sys.close(fd);
        return bk_fail(BK_EIO, "%s: %s", path,
                       S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
    }
    *fd_out = fd;
    *size = (uint64_t)st.st_size;
    *dev = (uint64_t)st.st_dev;
    *ino = (uint64_t)st.st_ino;
    return BK_OK;
}

/* Links followed before a chain counts as a loop (Linux's own limit). */
#define BK_MAX_LINKS 40

int bk_resolve_target(const char *path, const bk_allocator *a, char **out)
{
    size_t len = strlen(path);
    char *cur = bk_mem_alloc(a, len + 1);
    if (!cur)
        return bk_fail(BK_ENOMEM, "%s: out of memory", path);
    memcpy(cur, path, len + 1);
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) {
            *out = cur;
            return BK_OK;
        }
        char why[128];
        if (hops == BK_MAX_LINKS) {
            bk_mem_free(a, cur);
            return bk_fail(BK_EIO, "%s: more than %d symbolic links (a loop?)", path, BK_MAX_LINKS);
        }
        char link[4096];
        const ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n <= 0 || (size_t)n >= sizeof link - 1) {
            const int e = n < 0 ? errno : ENAMETOOLONG;
            bk_mem_free(a, cur);
            return bk_fail(BK_EIO, "%s: read symbolic link: %s", path,
                           bk_os_error(e, why, sizeof why));
        }
        link[n] = '\0';
        const char *slash = strrchr(cur, '/');
        const size_t dirlen = link[0] != '/' && slash ? (size_t)(slash - cur) + 1 : 0;
        char *next = bk_mem_alloc(a, dirlen + (size_t)n + 1);
        if (!next) {
            bk_mem_free(a, cur);
            return bk_fail(BK_ENOMEM, "%s: out of memory", path);
        }
        memcpy(next, cur, dirlen);
        memcpy(next + dirlen, link, (size_t)n + 1);
        bk_mem_free(a, cur);
        cur = next;
    }
}

int bk_sibling_name(const char *path, const char *prefix, const char *suffix, const bk_allocator *a,
                    char **out)
{
    char *target;
    int rc = bk_resolve_target(path, a, &target);
    if (rc != BK_OK)
        return rc;
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    if (*base == '\0') {
        bk_mem_free(a, target);
        return bk_fail(BK_EINVAL, "%s: names a directory, not a file", path);
    }
    const size_t dirlen = (size_t)(base - target);
    const size_t need = dirlen + strlen(prefix) + strlen(base) + strlen(suffix) + 1;
    char *name = bk_mem_alloc(a, need);
    if (!name) {
        bk_mem_free(a, target);
        return bk_fail(BK_ENOMEM, "%s: out of memory", path);
    }
    memcpy(name, target, dirlen);
    snprintf(name + dirlen, need - dirlen, "%s%s%s", prefix, base, suffix);
    bk_mem_free(a, target);
    *out = name;
    return BK_OK;
}

int bk_refuse_hard_links(const char *what, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink <= 1)
        return BK_OK;
    return bk_fail(BK_EIO,
                   "%s %s: the file has %ju hard links; a save replaces it by rename, which "
                   "would leave its other names holding the old filter (two filters from then "
                   "on): remove the other links (or write to a copy)",
                   what, path, (uintmax_t)st.st_nlink);
}
