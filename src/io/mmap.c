/*
 * mmap.c - bk_open_mmap / bk_sync: a filter whose payloads stay in the file.
 *
 * The whole file is mapped MAP_SHARED (read-only, or read-write with
 * BK_MAP_WRITE); the header is validated exactly as bk_load does, the payload
 * checksum and census are verified in one pass over the mapping unless
 * BK_MAP_NOVERIFY, and the variant adopts the payloads as *borrowed*: they are
 * never freed, the mapping is released after the filter by bk_free.
 *
 * Writable mappings: adds go straight to the page cache. bk_sync recomputes
 * the counts and checksum, rewrites the header in place and msyncs. Between an
 * add and the next sync the file's checksum is stale, so a crash then leaves a
 * file that bk_load refuses as corrupt; bk_open_mmap with BK_MAP_NOVERIFY
 * reopens it (touching no page: counts are the header's until bk_sync
 * recounts them) so it can be synced or saved again. For crash atomicity use bk_save. A scalable
 * filter that grows past the slices in its file, or whose file was replaced by bk_save, syncs by
 * saving anew (atomically) to the same path.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../common/alloc.h"
#include "../common/error.h"
#include "fileutil.h"
#include "format.h"
#include "mapping.h"
#include "sysio.h"

void bk_mapping_release(bk_mapping *map)
{
    if (!map)
        return;
    const bk_allocator a = map->alloc;
    bk_sys.munmap(map->base, map->size);
    bk_mem_free(&a, map->path);
    bk_mem_free(&a, map);
}

/* How the core syncs and releases a filter mapped here (store.h). */
static const bk_backing_ops mapped_file = {bk_sync, bk_mapping_release};

/* Verify the payloads by reading the file rather than the mapping: pread is
 * a kernel copy from the page cache, while first touches of a mapping cost a
 * page fault per page (most of the time of a naive verify). Queries then fault
 * pages in lazily, only those they need. */
typedef struct read_ctx {
    int fd;
    const bk_file_header *h;
    uint8_t *buf; /* the verification chunk */
} read_ctx;

static int64_t from_file(void *ctx, uint32_t i, uint64_t off, uint64_t want, const uint8_t **p)
{
    const read_ctx *rc = ctx;
    for (;;) {
        const ssize_t r =
            bk_sys.pread(rc->fd, rc->buf, (size_t)want, (off_t)(rc->h->offsets[i] + off));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            char why[128];
            return bk_fail(r == 0 ? BK_ECORRUPT : BK_EIO, "verify: read: %s",
                           r == 0 ? "file ended early" : bk_os_error(errno, why, sizeof why));
        }
        *p = rc->buf;
        return r;
    }
}

static int verify_by_read(int fd, bk_file_header *h, const bk_allocator *a)
{
    read_ctx ctx = {fd, h, bk_mem_alloc(a, BK_VERIFY_CHUNK)};
    const int rc = ctx.buf ? bk_file_verify_from(h, from_file, &ctx, 1, a)
                           : bk_fail(BK_ENOMEM, "no memory to verify the payload");
    bk_mem_free(a, ctx.buf);
    return rc;
}

/* Validate the mapped file and describe its slices (data pointing into it). */
static int check_mapped(int fd, const uint8_t *base, uint64_t size, unsigned flags,
                        bk_file_header *h, const bk_allocator *a)
{
    int rc = bk_file_decode_fixed(base, size, h);
    if (rc == BK_OK)
        rc = bk_file_decode(base, size, h);
    if (rc != BK_OK)
        return rc;
    uint64_t pos = h->header_size;
    for (uint32_t i = 0; i < h->nslices; i++) {
        if (!bk_file_is_zero(base + pos, h->offsets[i] - pos))
            return bk_fail(BK_ECORRUPT, "padding before slice %u is not zero", i);
        h->slices[i].data = (uint8_t *)base + h->offsets[i];
        pos = h->offsets[i] + h->slices[i].nbytes;
    }
    /* Unverified: O(1) open; the header's counts are trusted until bk_sync
     * recounts them. */
    if (flags & BK_MAP_NOVERIFY)
        return BK_OK;
    return verify_by_read(fd, h, a);
}

static int new_mapping(const char *path, uint8_t *base, uint64_t size, unsigned flags, uint64_t dev,
                       uint64_t ino, const bk_allocator *a, bk_mapping **out)
{
    bk_mapping *map = bk_mem_alloc(a, sizeof *map);
    char *p = bk_mem_strdup(a, path);
    if (!map || !p) {
        bk_mem_free(a, map);
        bk_mem_free(a, p);
        return bk_fail(BK_ENOMEM, "open %s: out of memory", path);
    }
    *map = (bk_mapping){.base = base,
                        .size = (size_t)size,
                        .writable = (flags & BK_MAP_WRITE) != 0,
                        .path = p,
                        .dev = (dev_t)dev,
                        .ino = (ino_t)ino,
                        .alloc = *a};
    *out = map;
    return BK_OK;
}

int bk_open_mmap(const char *path, unsigned flags, bk_filter **out)
{
    bk_call_begin();
    if (out)
        *out = NULL;
    if (!path || !out || (flags & ~(unsigned)(BK_MAP_WRITE | BK_MAP_NOVERIFY)))
        return bk_fail(BK_EINVAL, "open_mmap: no path, no output or unknown flags");
    const int writable = (flags & BK_MAP_WRITE) != 0;
    int fd;
    uint64_t size, dev, ino;
    int rc = bk_open_regular(path, writable, &fd, &size, &dev, &ino);
    if (rc != BK_OK)
        return bk_done(rc, "open_mmap");
    if (size < BK_FILE_FIXED || size > SIZE_MAX) {
        bk_sys.close(fd);
        bk_file_header h;
        return size < BK_FILE_FIXED ? bk_file_decode_fixed(NULL, size, &h)
                                    : bk_fail(BK_ERANGE, "open %s: too large to map", path);
    }
    void *base =
        bk_sys.mmap(NULL, (size_t)size, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        char why[128];
        const int e = errno;
        bk_sys.close(fd);
        return bk_fail(BK_EIO, "mmap %s: %s", path, bk_os_error(e, why, sizeof why));
    }
    const bk_allocator a = bk_current_allocator();
    bk_file_header h;
    bk_mapping *map = NULL;
    rc = check_mapped(fd, base, size, flags, &h, &a);
    bk_sys.close(fd); /* the mapping keeps the file */
    if (rc == BK_OK)
        rc = new_mapping(path, base, size, flags, dev, ino, &a, &map);
    if (rc == BK_OK)
        rc = bk_variant_adopt(&h.cfg, &a, h.slices, h.nslices, 1, out);
    if (rc != BK_OK) {
        if (map)
            bk_mapping_release(map);
        else
            bk_sys.munmap(base, (size_t)size);
        return bk_done(rc, "open_mmap");
    }
    map->nslices = h.nslices;
    bk_filter_attach(*out, map, &mapped_file, writable);
    return BK_OK;
}

/* Rewrite the counts and checksums in the header of a mapping whose slices
 * are all in the file, in the file's own version: nothing else of a header
 * changes as keys are added. */
static int sync_in_place(bk_filter *f, bk_mapping *map)
{
    bk_file_header h;
    int rc = bk_file_decode_fixed(map->base, map->size, &h);
    if (rc == BK_OK)
        rc = bk_file_decode(map->base, map->size, &h);
    if (rc != BK_OK)
        return bk_fail(rc, "sync %s: its header changed under the mapping: %s", map->path,
                       bk_last_error());
    uint8_t *data[BK_FILE_MAX_SLICES];
    bk_filter_settle(f);
    for (uint32_t i = 0; i < h.nslices; i++) {
        bk_slice_view v;
        bk_filter_slice(f, i, &v);
        h.slices[i].keys = v.keys;
        h.slices[i].gen = v.gen; /* what a variant's own word says now (the same for others) */
        data[i] = v.data;
    }
    /* Non-strict verification computes exactly the counts and checksum the
     * header must now carry. */
    rc = bk_file_verify_payloads(&h, data, 0, &map->alloc);
    if (rc != BK_OK)
        return rc;
    bk_file_patch_counts(&h, map->base);
    if (bk_sys.msync(map->base, map->size, MS_SYNC) != 0) {
        char why[128];
        return bk_fail(BK_EIO, "sync %s: msync: %s", map->path,
                       bk_os_error(errno, why, sizeof why));
    }
    return BK_OK;
}

/* 1 when f's slices are still exactly the mapped file's: as many, and every
 * one's cells in the mapping (a filter that grew, or a window that moved on
 * to new generations, holds cells elsewhere). */
static int all_in_mapping(const bk_filter *f, const bk_mapping *map)
{
    const uint32_t n = bk_filter_slices(f);
    if (n != map->nslices)
        return 0;
    const uintptr_t lo = (uintptr_t)map->base, hi = lo + (uintptr_t)map->size;
    for (uint32_t i = 0; i < n; i++) {
        bk_slice_view v;
        bk_filter_slice(f, i, &v);
        if ((uintptr_t)v.data < lo || (uintptr_t)v.data >= hi)
            return 0;
    }
    return 1;
}

int bk_sync(bk_filter *f)
{
    bk_call_begin();
    if (!f)
        return bk_fail(BK_EINVAL, "sync: no filter");
    bk_mapping *map = bk_filter_mapping(f);
    if (!map)
        return bk_fail(BK_EINVAL, "sync: filter is not mapped from a file (use bk_save)");
    if (!map->writable)
        return bk_fail(BK_EREADONLY, "sync %s: mapped read-only", map->path);
    struct stat st;
    if (!map->detached &&
        (stat(map->path, &st) != 0 || st.st_dev != map->dev || st.st_ino != map->ino))
        return bk_fail(BK_EIO,
                       "sync %s: the file was replaced or removed after it was mapped (by "
                       "another writer?), so this filter's changes would not reach it; they "
                       "are still in the filter: bk_save it",
                       map->path);
    if (map->detached || !all_in_mapping(f, map)) {
        const int rc = bk_save(f, map->path);
        if (rc == BK_OK)
            map->detached = 1;
        return bk_done(rc, "sync");
    }
    return bk_done(sync_in_place(f, map), "sync");
}
