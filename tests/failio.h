/*
 * failio.h - failing system calls for the io layer's table (src/io/sysio.h),
 * shared by the crash and fault tests: with them installed, call number
 * tu_io.fail_at of those made (counting from 1) fails with a plausible
 * errno. tu_io.calls counts them, so a test knows when no call
 * failed. A close fails after really closing, as close(2) may.
 */
#ifndef BK_TEST_FAILIO_H
#define BK_TEST_FAILIO_H

#include <errno.h>
#include <sys/mman.h>

#include "io/sysio.h"
#include "testutil.h"

static struct {
    long calls, fail_at;
    bk_sysio real; /* the table before the failing entries went in */
} tu_io;

static inline int tu_io_tick(void)
{
    return ++tu_io.calls == tu_io.fail_at;
}

/* Every call that can fail: X(name, type, failed value, errno, parameters,
 * arguments). close is apart (it fails after closing). */
/* clang-format off */
#define TU_FAILING_CALLS(X)                                                                        \
    X(open, int, -1, EIO, (const char *p, int fl, mode_t m), (p, fl, m))                           \
    X(mkstemp, int, -1, EMFILE, (char *t), (t))                                                    \
    X(read, ssize_t, -1, EIO, (int fd, void *b, size_t n), (fd, b, n))                             \
    X(pread, ssize_t, -1, EIO, (int fd, void *b, size_t n, off_t o), (fd, b, n, o))                \
    X(write, ssize_t, -1, ENOSPC, (int fd, const void *b, size_t n), (fd, b, n))                   \
    X(pwrite, ssize_t, -1, EIO, (int fd, const void *b, size_t n, off_t o), (fd, b, n, o))         \
    X(fsync, int, -1, EIO, (int fd), (fd))                                                         \
    X(rename, int, -1, EXDEV, (const char *from, const char *to), (from, to))                      \
    X(fstat, int, -1, EIO, (int fd, struct stat *st), (fd, st))                                    \
    X(mmap, void *, MAP_FAILED, ENOMEM, (void *a, size_t n, int p, int fl, int fd, off_t o),       \
      (a, n, p, fl, fd, o))
#define TU_FAILING(name, type, failed, err, params, args)                                          \
    static type tu_fail_##name params                                                              \
    {                                                                                              \
        if (tu_io_tick()) {                                                                        \
            errno = err;                                                                           \
            return failed;                                                                         \
        }                                                                                          \
        return tu_io.real.name args;                                                               \
    }
TU_FAILING_CALLS(TU_FAILING)
#define TU_INSTALL(name, ...) bk_sys.name = tu_fail_##name;
/* clang-format on */

static int tu_fail_close(int fd)
{
    const int r = tu_io.real.close(fd);
    if (tu_io_tick()) {
        errno = EIO;
        return -1;
    }
    return r;
}

/* From the real table, every call above fails in its turn: call number
 * fail_at of them (counting afresh from 1) fails. */
static inline void tu_io_fail(long fail_at)
{
    bk_sysio_defaults();
    tu_io.real = bk_sys;
    tu_io.calls = 0;
    tu_io.fail_at = fail_at;
    TU_FAILING_CALLS(TU_INSTALL)
    bk_sys.close = tu_fail_close;
}

/* Save f at path and return the file's bytes (*len; free them): what every
 * failed save after it must leave in place. */
static inline uint8_t *tu_saved_bytes(const bk_filter *f, const char *path, size_t *len)
{
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    return tu_read_file(path, len);
}

#endif
