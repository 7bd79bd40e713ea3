/*
 * lock.c - bk_lock_file / bk_unlock_file: one writer at a time per filter
 * file (see bloomkit.h).
 *
 * The lock is flock(2) on a lock file ".NAME.lock" beside the file (beside
 * its target when NAME is a symbolic link), never on the filter file itself:
 * bk_save replaces that file by rename, so a lock on its inode would be lost
 * with the old inode while a second writer waits on it. The lock file holds
 * the holder's pid (for the message of a writer that does not wait), is
 * created 0600 without following a symbolic link, and is removed by the
 * holder on release, so none is left behind. A file with several hard
 * links is refused (bk_refuse_hard_links): its names would not share the
 * lock, and the first save would split them into two filters. Removal is safe by the usual
 * protocol: a writer that obtains the lock checks that the name still
 * refers to the inode it locked, and starts again when it does not (it
 * waited on a file its holder removed). flock locks belong to the open file
 * description: released when the process exits or is killed, so a crash
 * never leaves a file locked (only, at worst, an unlocked lock file that
 * the next writer takes over).
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/alloc.h"
#include "../common/error.h"
#include "bloomkit.h"
#include "fileutil.h"
#include "sysio.h"

struct bk_file_lock {
    int fd;
    char *name; /* the lock file, removed on release */
    bk_allocator alloc;
};

/* The pid written in the lock file, or 0 when it holds none. */
static long holder_of(int fd)
{
    char buf[24] = {0};
    const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return 0;
    char *end;
    const long pid = strtol(buf, &end, 10);
    return pid > 0 && (*end == '\n' || *end == '\0') ? pid : 0;
}

/* long: open, try, wait, the stale holder's check: each with its error and cleanup. */
int bk_lock_file(const char *path, unsigned flags, bk_file_lock **out)
{
    bk_call_begin();
    if (out)
        *out = NULL;
    if (!path || !*path || !out || (flags & ~BK_LOCK_NOWAIT))
        return bk_fail(BK_EINVAL, "lock: no path, no result pointer or unknown flags");
    int rc = bk_refuse_hard_links("lock", path);
    if (rc != BK_OK)
        return bk_done(rc, "lock");
    const bk_allocator a = bk_current_allocator();
    char *name = NULL;
    rc = bk_sibling_name(path, ".", ".lock", &a, &name);
    if (rc != BK_OK)
        return bk_done(rc, "lock");
    char why[128];
    int fd, got;
    for (;;) {
        fd = bk_sys.open(name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            /* the user named path: the lock beside it is ours to explain */
            rc = bk_fail(BK_EIO,
                         "%s: cannot take its writers' lock (a file beside it, in its "
                         "directory): %s",
                         path, bk_os_error(errno, why, sizeof why));
            bk_mem_free(&a, name);
            return bk_done(rc, "lock");
        }
        while ((got = flock(fd, LOCK_EX | (flags & BK_LOCK_NOWAIT ? LOCK_NB : 0))) != 0 &&
               errno == EINTR)
            ;
        struct stat mine, now;
        if (got != 0 || (fstat(fd, &mine) == 0 && stat(name, &now) == 0 &&
                         mine.st_dev == now.st_dev && mine.st_ino == now.st_ino))
            break;
        bk_sys.close(fd); /* its holder removed it while we waited: again */
    }
    if (got != 0) {
        const int e = errno;
        const long pid = e == EWOULDBLOCK ? holder_of(fd) : 0;
        if (e != EWOULDBLOCK)
            rc = bk_fail(BK_EIO, "%s: cannot take its writers' lock: %s", path,
                         bk_os_error(e, why, sizeof why));
        else if (pid)
            rc = bk_fail(BK_EBUSY, "%s is being written by process %ld", path, pid);
        else
            rc = bk_fail(BK_EBUSY, "%s is being written by another process", path);
        bk_sys.close(fd);
        bk_mem_free(&a, name);
        return bk_done(rc, "lock");
    }
    bk_file_lock *l = bk_mem_alloc(&a, sizeof *l);
    if (!l) {
        bk_sys.close(fd); /* releases the lock */
        bk_mem_free(&a, name);
        return bk_fail(BK_ENOMEM, "lock %s: out of memory", path);
    }
    char pid[24];
    const int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    /* Who holds it is a courtesy for the message: a failure here is not one
     * of the lock. */
    if (ftruncate(fd, 0) == 0)
        (void)!bk_pwrite_all(fd, pid, (size_t)n, 0);
    l->fd = fd;
    l->name = name;
    l->alloc = a;
    *out = l;
    return BK_OK;
}

void bk_unlock_file(bk_file_lock *l)
{
    if (!l)
        return;
    const bk_allocator a = l->alloc;
    bk_sys.unlink(l->name); /* while held: a waiter on it sees it gone and retries */
    bk_sys.close(l->fd);
    bk_mem_free(&a, l->name);
    bk_mem_free(&a, l);
}
