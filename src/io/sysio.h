/*
 * sysio.h - every system call the io layer makes goes through this table
 * (internal). Production code never changes it; tests replace entries to make
 * the N-th write, fsync, rename, mmap ... fail and check that nothing is lost,
 * corrupted or left behind (SQLite's VFS fault-injection habit).
 */
#ifndef BK_IO_SYSIO_H
#define BK_IO_SYSIO_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

typedef struct bk_sysio {
    int (*open)(const char *path, int flags, mode_t mode);
    int (*mkstemp)(char *tmpl);
    ssize_t (*read)(int fd, void *buf, size_t n);
    ssize_t (*write)(int fd, const void *buf, size_t n);
    ssize_t (*pwrite)(int fd, const void *buf, size_t n, off_t off);
    int (*fsync)(int fd);
    int (*close)(int fd);
    int (*rename)(const char *from, const char *to);
    int (*unlink)(const char *path);
    int (*fstat)(int fd, struct stat *st);
    void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off);
    int (*munmap)(void *addr, size_t len);
    int (*msync)(void *addr, size_t len, int flags);
    ssize_t (*pread)(int fd, void *buf, size_t n, off_t off); /* last: tables only grow */
} bk_sysio;

/* The table in use; bk_sysio_defaults() restores the real calls. */
extern bk_sysio bk_sys;
void bk_sysio_defaults(void);

#endif
