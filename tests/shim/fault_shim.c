/*
 * fault_shim.c - LD_PRELOAD library for the fault-injection tests of the
 * bloomkit command (tests/test_faults.c): the N-th call (BK_FAULT_AT=N) of
 * write to a file (not stdin/stdout/stderr), fsync, rename or mkstemp fails
 * with EIO; BK_FAULT_COUNT=FILE receives the number of such calls at exit,
 * so the test knows when N has passed them all. BK_FAULT_MMAP_MIN=B makes
 * every anonymous mmap of B bytes or more fail with ENOMEM (a filter's large
 * payloads; malloc's own mappings do not come through here), so a growing
 * filter fails mid-run (tests/test_writers.c). Built as a shared object;
 * never linked into bloomkit.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static long calls, fail_at = -1;
static int reporting; /* the count's own write must not count */

static int tick(void)
{
    if (fail_at < 0) {
        const char *e = getenv("BK_FAULT_AT");
        fail_at = e ? atol(e) : 0;
    }
    return ++calls == fail_at;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "write"); /* POSIX: dlsym gives functions as void * */
    if (fd > 2 && !reporting && tick()) {
        errno = EIO;
        return -1;
    }
    return real(fd, buf, n);
}

int fsync(int fd)
{
    static int (*real)(int);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "fsync"); /* POSIX: dlsym gives functions as void * */
    if (tick()) {
        errno = EIO;
        return -1;
    }
    return real(fd);
}

int rename(const char *from, const char *to)
{
    static int (*real)(const char *, const char *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "rename"); /* POSIX: dlsym gives functions as void * */
    if (tick()) {
        errno = EIO;
        return -1;
    }
    return real(from, to);
}

int mkstemp(char *tmpl)
{
    static int (*real)(char *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "mkstemp"); /* POSIX: dlsym gives functions as void * */
    if (tick()) {
        errno = EIO;
        return -1;
    }
    return real(tmpl);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    static void *(*real)(void *, size_t, int, int, int, off_t);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "mmap"); /* POSIX: dlsym gives functions as void * */
    const char *min = getenv("BK_FAULT_MMAP_MIN");
    if (min && (flags & MAP_ANONYMOUS) && len >= (size_t)atol(min)) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return real(addr, len, prot, flags, fd, off);
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("BK_FAULT_COUNT");
    if (!path)
        return;
    reporting = 1;
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%ld\n", calls);
        fclose(f);
    }
}
