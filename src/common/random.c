/*
 * random.c - per-filter hash keys come from getrandom(2), which blocks only
 * until the kernel pool is first initialised and never returns weak bytes.
 * Kernels without it (ENOSYS) fall back to /dev/urandom.
 */
#define _DEFAULT_SOURCE
#include "random.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/random.h>
#include <unistd.h>

#include "bloomkit.h"

static int read_urandom(uint8_t *p, size_t len)
{
    const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return BK_ESYS;
    while (len > 0) {
        const ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            close(fd);
            return BK_ESYS;
        }
        p += r;
        len -= (size_t)r;
    }
    close(fd);
    return BK_OK;
}

int bk_random_bytes(void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len > 0) {
        const ssize_t r = getrandom(p, len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == ENOSYS)
            return read_urandom(p, len);
        if (r <= 0)
            return BK_ESYS;
        p += r;
        len -= (size_t)r;
    }
    return BK_OK;
}
