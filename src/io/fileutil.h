/* fileutil.h - small helpers shared by save, load and mmap (internal). */
#ifndef BK_IO_FILEUTIL_H
#define BK_IO_FILEUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "bloomkit.h"

/* Write/read exactly n bytes, retrying on EINTR and short transfers.
 * 0 on success; -1 with errno set (a write of 0 bytes sets ENOSPC; a read
 * that meets end of file sets 0 in errno and returns -2). */
int bk_write_all(int fd, const void *p, size_t n);
int bk_read_all(int fd, void *p, size_t n);
/* bk_write_all at file offset off (pwrite). */
int bk_pwrite_all(int fd, const void *p, size_t n, uint64_t off);

/* strerror(err) into buf, thread-safe; returns buf. */
const char *bk_os_error(int err, char *buf, size_t n);

/* Open path for reading (write=0) or reading and writing and check it is a
 * regular file; on success *fd and *size. BK_EIO with detail on failure. */
int bk_open_regular(const char *path, int write, int *fd, uint64_t *size, uint64_t *dev,
                    uint64_t *ino);

/* The file path finally names: path itself, or the end of its chain of
 * symbolic links (a relative target is taken from its link's directory), so
 * that writers replace the target and keep the link. The target need not
 * exist. *out is allocated with a. BK_EIO (a loop: more than 40 links, or
 * an unreadable link) or BK_ENOMEM, with detail. */
int bk_resolve_target(const char *path, const bk_allocator *a, char **out);

/* BK_OK unless the file path names has more than one hard link: then
 * BK_EIO naming `what` (the operation) and the remedy. A writer replaces a
 * filter file by rename, which gives one of its names the new file and
 * leaves the others the old one, so two names of one file would silently
 * become two filters; and a lock, named after the path, would not make
 * writers through different names take turns. Refused instead, before
 * anything is written. An absent file passes. */
int bk_refuse_hard_links(const char *what, const char *path);

/* "<dir>/<prefix><base><suffix>" for the target of path (bk_resolve_target):
 * a name beside the file that no rename of it replaces. BK_EINVAL when path
 * ends in '/'; as bk_resolve_target. */
int bk_sibling_name(const char *path, const char *prefix, const char *suffix, const bk_allocator *a,
                    char **out);

#endif
