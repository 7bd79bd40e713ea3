/*
 * save.c - bk_save and bk_save_progress: write a filter atomically (the
 * latter telling a callback the bytes written, which may stop it).
 *
 * The file is written to a temporary in the same directory (so rename stays on
 * one filesystem), fsync'd, renamed over the target and the directory fsync'd.
 * A crash or kill at any moment leaves the old file or the new one at path,
 * never a mix; a failure unlinks the temporary and leaves path untouched.
 * mkstemp creates the temporary with mode 0600: the file holds the hash key.
 *
 * The file system is respected (issue 16): a symbolic link is written
 * through, to its target (the temporary beside the target, renamed onto
 * it), so the link stays and the file it names gets the keys; anything at
 * the target that is not a regular file (a device, a FIFO, a directory) is
 * refused, never replaced; an existing file keeps its owner, group and mode
 * (the temporary gets them before the rename, and a save that cannot give
 * them fails rather than change them); a temporary left by a writer that
 * died is removed by a later save, which proves it dead by taking the lock
 * every writer holds on its temporary until it is renamed (flock: released
 * by death).
 *
 * Payloads are copied through a bounce buffer before they are checksummed and
 * written, so a standard filter that other threads keep adding to is saved as
 * a consistent snapshot of each chunk, with counts that match the bytes
 * written. The header is written last, at offset 0, once those are known.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <dirent.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "../common/alloc.h"
#include "../common/debug.h"
#include "../common/error.h"
#include "emit.h"
#include "fileutil.h"
#include "mapping.h"
#include "sysio.h"

#define TMP_MARK   ".tmp." /* .NAME.tmp.XXXXXX: what marks a temporary of NAME */
#define TMP_SUFFIX TMP_MARK "XXXXXX"

typedef struct save_job {
    const bk_filter *f;
    const char *path;
    char *target;    /* path, or the end of its symbolic links: what is replaced */
    char *tmp;       /* temporary file name, owned */
    char *dir;       /* its directory, owned */
    uint8_t *bounce; /* BK_EMIT_CHUNK bytes, owned */
    int fd;          /* the temporary, while open */
    int created;     /* the temporary exists on disk */
    bk_file_header h;
    bk_progress_fn progress; /* bk_save_progress: told every PROGRESS_STEP bytes */
    void *arg;
    uint64_t done, total, next;
    int stopped; /* progress said stop */
} save_job;

#define PROGRESS_STEP ((uint64_t)64 << 20)

static int io_fail(save_job *j, const char *what)
{
    char why[128];
    return bk_fail(BK_EIO, "save %s: %s: %s", j->path, what, bk_os_error(errno, why, sizeof why));
}

/* The target (path through its links), "<dir>/.<base>.tmp.XXXXXX" beside
 * it and "<dir>". */
static int make_names(save_job *j, const bk_allocator *a)
{
    int rc = bk_resolve_target(j->path, a, &j->target);
    if (rc != BK_OK)
        return rc;
    rc = bk_sibling_name(j->target, ".", TMP_SUFFIX, a, &j->tmp);
    if (rc != BK_OK)
        return rc;
    const char *slash = strrchr(j->target, '/');
    const size_t dirlen = slash ? (size_t)(slash - j->target) : 0;
    j->dir = bk_mem_alloc(a, dirlen + 2);
    if (!j->dir)
        return bk_fail(BK_ENOMEM, "save %s: out of memory", j->path);
    if (slash && dirlen == 0)
        strcpy(j->dir, "/");
    else if (slash) {
        memcpy(j->dir, j->target, dirlen);
        j->dir[dirlen] = '\0';
    } else
        strcpy(j->dir, ".");
    return BK_OK;
}

/* What is at the target: absent (*had = 0) or a regular file (*had = 1,
 * *st its owner, group and mode); anything else is refused. */
static int check_target(save_job *j, struct stat *st, int *had)
{
    *had = 0;
    if (lstat(j->target, st) != 0) {
        if (errno == ENOENT)
            return BK_OK;
        return io_fail(j, "stat");
    }
    if (!S_ISREG(st->st_mode))
        return bk_fail(BK_EIO, "save %s: %s is %s, not a regular file: not replaced", j->path,
                       j->target,
                       S_ISDIR(st->st_mode)                           ? "a directory"
                       : S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ? "a device"
                       : S_ISFIFO(st->st_mode)                        ? "a FIFO"
                       : S_ISSOCK(st->st_mode)                        ? "a socket"
                                                                      : "something else");
    *had = 1;
    return st->st_nlink > 1 ? bk_refuse_hard_links("save", j->target) : BK_OK;
}

/* Remove the temporaries of this target that writers which died left
 * behind: a live writer holds flock on its temporary until it is renamed,
 * so one we can lock has no writer. Best effort: nothing here fails a save. */
static void sweep_stale(const save_job *j)
{
    const char *tbase = strrchr(j->tmp, '/') ? strrchr(j->tmp, '/') + 1 : j->tmp;
    const size_t plen = strlen(tbase) - (sizeof TMP_SUFFIX - 1) + (sizeof TMP_MARK - 1);
    DIR *d = opendir(j->dir);
    if (!d)
        return;
    const int dfd = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, tbase, plen) != 0 || strlen(e->d_name) != strlen(tbase))
            continue;
        const int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
            continue;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0)
            unlinkat(dfd, e->d_name, 0); /* still locked by us: nobody starts on it now */
        close(fd);
    }
    closedir(d);
}

/* The replaced file's owner, group and mode onto the temporary. */
static int keep_owner_and_mode(save_job *j, const struct stat *st)
{
    if ((st->st_uid != geteuid() || st->st_gid != getegid()) &&
        fchown(j->fd, st->st_uid, st->st_gid) != 0)
        return io_fail(j, "keep the file's owner and group (they would change)");
    if (fchmod(j->fd, st->st_mode & 07777) != 0)
        return io_fail(j, "keep the file's mode");
    return BK_OK;
}

static int write_sink(void *ctx, const void *p, size_t n)
{
    save_job *j = ctx;
    const int rc = bk_write_all(j->fd, p, n);
    j->done += n;
    if (rc == 0 && j->progress && j->done >= j->next) {
        j->next = j->done + PROGRESS_STEP;
        if (j->progress(j->done, j->total, j->arg) != 0) {
            j->stopped = 1;
            return -1;
        }
    }
    return rc;
}

static int write_file(save_job *j, const bk_allocator *a)
{
    if (lseek(j->fd, (off_t)j->h.header_size, SEEK_SET) < 0)
        return io_fail(j, "seek");
    j->done = j->h.header_size;
    j->next = j->done + PROGRESS_STEP;
    const int rc = bk_emit_payloads(j->f, &j->h, j->bounce, write_sink, j, a);
    if (j->stopped)
        return bk_fail(BK_ECANCELED, "save %s: stopped after %llu of %llu bytes; nothing changed",
                       j->path, (unsigned long long)j->done, (unsigned long long)j->total);
    if (rc == BK_ENOMEM)
        return bk_fail(BK_ENOMEM, "save %s: out of memory", j->path);
    if (rc != BK_OK)
        return io_fail(j, "write");
    uint8_t hdr[BK_FILE_HEADER_MAX];
    bk_file_encode(&j->h, hdr);
    if (bk_pwrite_all(j->fd, hdr, j->h.header_size, 0) != 0)
        return io_fail(j, "write header");
    if (bk_sys.fsync(j->fd) != 0)
        return io_fail(j, "fsync");
    if (j->progress)
        j->progress(j->total, j->total, j->arg); /* done: its answer no longer matters */
    return BK_OK;
}

/* After the rename: make the directory entry durable. Filesystems that cannot
 * fsync a directory say EINVAL; that is not a failure of the save. */
static int sync_dir(save_job *j)
{
    const int dfd = bk_sys.open(j->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (dfd < 0)
        return io_fail(j, "open directory");
    int rc = BK_OK;
    if (bk_sys.fsync(dfd) != 0 && errno != EINVAL)
        rc = io_fail(j, "fsync directory (the new file is in place)");
    bk_sys.close(dfd);
    return rc;
}

/* Fill the header from the filter: config, slice shapes, keys. */
static int describe(save_job *j)
{
    const int rc = bk_emit_describe(j->f, &j->h);
    if (rc == BK_OK || rc == BK_ENOTSUP)
        return rc;
    if (j->h.nslices > BK_FILE_MAX_SLICES)
        return bk_fail(BK_ERANGE, "save %s: %u slices, more than the format holds", j->path,
                       j->h.nslices);
    return bk_fail(BK_ERANGE, "save %s: filter too large for the format", j->path);
}

/* If f is mapped from the file now at path, that inode is about to be
 * replaced: later syncs must save anew rather than write the old inode. */
static int replaces_mapping(const save_job *j)
{
    const bk_mapping *map = bk_filter_mapping(j->f);
    struct stat st;
    return map && !map->detached && stat(j->target, &st) == 0 && st.st_dev == map->dev &&
           st.st_ino == map->ino;
}

static int save(const bk_filter *f, const char *path, bk_progress_fn progress, void *arg)
{
    if (!f || !path || !*path)
        return bk_fail(BK_EINVAL, "save: no filter or no path");
    if (!bk_filter_in_memory(f))
        return bk_fail(BK_ENOTSUP,
                       "save %s: the filter lives on a server; copy it with "
                       "bk_redis_pull (bloomkit pull)",
                       path);
    const bk_allocator a = bk_filter_allocator(f);
    save_job j = {.f = f, .path = path, .fd = -1, .progress = progress, .arg = arg};
    struct stat old;
    int had = 0;
    int rc = describe(&j);
    if (rc == BK_OK && progress)
        rc = bk_save_size(f, &j.total);
    if (rc == BK_OK)
        rc = make_names(&j, &a);
    if (rc == BK_OK)
        rc = check_target(&j, &old, &had);
    if (rc == BK_OK)
        sweep_stale(&j);
    if (rc == BK_OK && !(j.bounce = bk_mem_alloc(&a, BK_EMIT_CHUNK)))
        rc = bk_fail(BK_ENOMEM, "save %s: out of memory", path);
    if (rc == BK_OK && (j.fd = bk_sys.mkstemp(j.tmp)) < 0)
        rc = io_fail(&j, "create temporary file");
    j.created = j.fd >= 0;
    if (rc == BK_OK)
        flock(j.fd, LOCK_EX | LOCK_NB); /* "a writer is alive": see sweep_stale */
    if (rc == BK_OK && had)
        rc = keep_owner_and_mode(&j, &old);
    if (rc == BK_OK)
        rc = write_file(&j, &a);
    const int replacing = rc == BK_OK && replaces_mapping(&j);
    if (rc == BK_OK && bk_sys.rename(j.tmp, j.target) != 0)
        rc = io_fail(&j, "rename");
    if (rc != BK_OK && j.created)
        bk_sys.unlink(j.tmp);
    /* Closed after the rename, so the lock covered the temporary to the end.
     * Its data was fsync'd before the rename: a close error now cannot
     * concern it (and the new file is in place), so it is not reported. */
    if (j.fd >= 0)
        bk_sys.close(j.fd);
    if (rc == BK_OK) {
        if (replacing)
            bk_filter_mapping(f)->detached = 1;
        rc = sync_dir(&j);
    }
    bk_mem_free(&a, j.bounce);
    bk_mem_free(&a, j.target);
    bk_mem_free(&a, j.tmp);
    bk_mem_free(&a, j.dir);
    return rc;
}

int bk_save(const bk_filter *f, const char *path)
{
    bk_call_begin();
    return bk_done(save(f, path, NULL, NULL), "save");
}

int bk_save_progress(const bk_filter *f, const char *path, bk_progress_fn progress, void *arg)
{
    bk_call_begin();
    return bk_done(save(f, path, progress, arg), "save");
}
