/* sysio.c - the real system calls behind bk_sys (see sysio.h). */
#define _DEFAULT_SOURCE
#include "sysio.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static int sys_open(const char *path, int flags, mode_t mode)
{
    return open(path, flags, mode);
}

/* mkstemp (mode 0600), then close-on-exec so a child never inherits it. */
static int sys_mkstemp(char *tmpl)
{
    const int fd = mkstemp(tmpl);
    if (fd >= 0)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
}

static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap(addr, len, prot, flags, fd, off);
}

static int sys_msync(void *addr, size_t len, int flags)
{
    return msync(addr, len, flags);
}

#define BK_SYSIO_REAL                                                                              \
    {                                                                                              \
        sys_open, sys_mkstemp, read, write, pwrite, fsync, close, rename, unlink, fstat, sys_mmap, \
            munmap, sys_msync, pread                                                               \
    }

bk_sysio bk_sys = BK_SYSIO_REAL;

void bk_sysio_defaults(void)
{
    const bk_sysio real = BK_SYSIO_REAL;
    bk_sys = real;
}
