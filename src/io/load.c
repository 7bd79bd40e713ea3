/*
 * load.c - bk_load: read a filter file into memory.
 *
 * The framing and header are read and validated before any payload memory is
 * allocated (so a lying header cannot make us allocate or read beyond the
 * file), the payloads are read into memory of the current allocator, padding is
 * checked to be zero, and only after both checksums and the census agree is a
 * filter built around them. Any failure frees everything: no partial filter.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "../common/alloc.h"
#include "../common/error.h"
#include "fileutil.h"
#include "format.h"
#include "sysio.h"

static int read_fail(const char *path, int r, const char *what)
{
    char why[128];
    if (r == -2)
        return bk_fail(BK_ECORRUPT, "load %s: file ended early reading %s", path, what);
    return bk_fail(BK_EIO, "load %s: read %s: %s", path, what, bk_os_error(errno, why, sizeof why));
}

/* Read the header at the start of fd; validated into *h. */
static int read_header(int fd, const char *path, uint64_t size, bk_file_header *h)
{
    uint8_t buf[BK_FILE_HEADER_MAX];
    if (size < BK_FILE_FIXED)
        return bk_file_decode_fixed(NULL, size, h); /* reports the short file */
    int r = bk_read_all(fd, buf, BK_FILE_FIXED);
    if (r != 0)
        return read_fail(path, r, "header");
    int rc = bk_file_decode_fixed(buf, size, h);
    if (rc != BK_OK)
        return rc;
    r = bk_read_all(fd, buf + BK_FILE_FIXED, h->header_size - BK_FILE_FIXED);
    if (r != 0)
        return read_fail(path, r, "slice table");
    return bk_file_decode(buf, size, h);
}

/* Read padding and payloads in file order into data[]. */
static int read_payloads(int fd, const char *path, const bk_file_header *h, uint8_t **data)
{
    uint64_t pos = h->header_size;
    for (uint32_t i = 0; i < h->nslices; i++) {
        uint8_t pad[BK_FILE_ALIGN];
        const uint64_t npad = h->offsets[i] - pos;
        int r = bk_read_all(fd, pad, (size_t)npad);
        if (r != 0)
            return read_fail(path, r, "padding");
        if (!bk_file_is_zero(pad, npad))
            return bk_fail(BK_ECORRUPT, "load %s: padding before slice %u is not zero", path, i);
        r = bk_read_all(fd, data[i], (size_t)h->slices[i].nbytes);
        if (r != 0)
            return read_fail(path, r, "payload");
        pos = h->offsets[i] + h->slices[i].nbytes;
    }
    return BK_OK;
}

static int load_fd(int fd, const char *path, uint64_t size, bk_filter **out)
{
    bk_file_header h;
    int rc = read_header(fd, path, size, &h);
    if (rc != BK_OK)
        return rc;
    const bk_allocator a = bk_current_allocator();
    uint8_t *data[BK_FILE_MAX_SLICES] = {0};
    for (uint32_t i = 0; rc == BK_OK && i < h.nslices; i++)
        if (h.slices[i].nbytes > SIZE_MAX ||
            !(data[i] = bk_payload_alloc(&a, (size_t)h.slices[i].nbytes)))
            rc = bk_fail(BK_ENOMEM, "load %s: no memory for %llu bytes", path,
                         (unsigned long long)h.slices[i].nbytes);
    if (rc == BK_OK)
        rc = read_payloads(fd, path, &h, data);
    if (rc == BK_OK)
        rc = bk_file_verify_payloads(&h, data, 1, &a);
    if (rc == BK_OK) {
        for (uint32_t i = 0; i < h.nslices; i++)
            h.slices[i].data = data[i];
        rc = bk_variant_impl_for(h.cfg.variant)->adopt(&h.cfg, &a, h.slices, h.nslices, 0, out);
        if (rc != BK_OK)
            rc = bk_fail(rc, "load %s: %s", path, bk_strerror(rc));
    }
    if (rc != BK_OK)
        for (uint32_t i = 0; i < h.nslices; i++)
            bk_payload_free(&a, data[i], (size_t)h.slices[i].nbytes);
    return rc;
}

int bk_load(const char *path, bk_filter **out)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return bk_fail(BK_EINVAL, "load: no path or no output");
    int fd;
    uint64_t size, dev, ino;
    int rc = bk_open_regular(path, 0, &fd, &size, &dev, &ino);
    if (rc != BK_OK)
        return rc;
    rc = load_fd(fd, path, size, out);
    bk_sys.close(fd);
    return rc;
}
