/*
 * load.c - bk_load and bk_load_buffer: read a filter file, or the same bytes
 * in memory, into memory.
 *
 * The framing and header are read and validated before any payload memory is
 * allocated (so a lying header cannot make us allocate or read beyond the
 * file), the payloads are read into memory of the current allocator, padding is
 * checked to be zero, and only after both checksums and the census agree is a
 * filter built around them. Any failure frees everything: no partial filter.
 * A file and a buffer are read through the same steps (a source).
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

/* Where the bytes come from: a file descriptor, or memory (fd < 0). */
typedef struct source {
    int fd;
    const uint8_t *mem;
    uint64_t len, pos;
    const char *name; /* for messages: the path, or "buffer" */
} source;

/* Read n bytes: 0, -1 (errno) or -2 (the bytes ended first). */
static int src_read(source *s, void *buf, size_t n)
{
    if (s->fd >= 0)
        return bk_read_all(s->fd, buf, n);
    if (n > s->len - s->pos)
        return -2;
    memcpy(buf, s->mem + s->pos, n);
    s->pos += n;
    return 0;
}

static int read_fail(const char *path, int r, const char *what)
{
    char why[128];
    if (r == -2)
        return bk_fail(BK_ECORRUPT, "load %s: file ended early reading %s", path, what);
    return bk_fail(BK_EIO, "load %s: read %s: %s", path, what, bk_os_error(errno, why, sizeof why));
}

/* Read the header at the start of the source; validated into *h. */
static int read_header(source *src, bk_file_header *h)
{
    uint8_t buf[BK_FILE_HEADER_MAX];
    if (src->len < BK_FILE_FIXED)
        return bk_file_decode_fixed(NULL, src->len, h); /* reports the short file */
    int r = src_read(src, buf, BK_FILE_FIXED);
    if (r != 0)
        return read_fail(src->name, r, "header");
    int rc = bk_file_decode_fixed(buf, src->len, h);
    if (rc != BK_OK)
        return rc;
    r = src_read(src, buf + BK_FILE_FIXED, h->header_size - BK_FILE_FIXED);
    if (r != 0)
        return read_fail(src->name, r, "slice table");
    return bk_file_decode(buf, src->len, h);
}

/* Read padding and payloads in file order into data[]. */
static int read_payloads(source *src, const bk_file_header *h, uint8_t **data)
{
    const char *path = src->name;
    uint64_t pos = h->header_size;
    for (uint32_t i = 0; i < h->nslices; i++) {
        uint8_t pad[BK_FILE_ALIGN];
        const uint64_t npad = h->offsets[i] - pos;
        int r = src_read(src, pad, (size_t)npad);
        if (r != 0)
            return read_fail(path, r, "padding");
        if (!bk_file_is_zero(pad, npad))
            return bk_fail(BK_ECORRUPT, "load %s: padding before slice %u is not zero", path, i);
        r = src_read(src, data[i], (size_t)h->slices[i].nbytes);
        if (r != 0)
            return read_fail(path, r, "payload");
        pos = h->offsets[i] + h->slices[i].nbytes;
    }
    return BK_OK;
}

static int load_from(source *src, bk_filter **out)
{
    const char *path = src->name;
    bk_file_header h;
    int rc = read_header(src, &h);
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
        rc = read_payloads(src, &h, data);
    if (rc == BK_OK)
        rc = bk_file_verify_payloads(&h, data, 1, &a);
    if (rc == BK_OK) {
        for (uint32_t i = 0; i < h.nslices; i++)
            h.slices[i].data = data[i];
        bk_detail_clear(); /* the variant says why, or nothing */
        rc = bk_variant_adopt(&h.cfg, &a, h.slices, h.nslices, 0, out);
        char why[256];
        if (rc != BK_OK)
            rc = bk_fail(rc, "load %s: %s", path, bk_detail_or(bk_strerror(rc), why, sizeof why));
    }
    if (rc != BK_OK)
        for (uint32_t i = 0; i < h.nslices; i++)
            bk_payload_free(&a, data[i], (size_t)h.slices[i].nbytes);
    return rc;
}

int bk_load(const char *path, bk_filter **out)
{
    bk_call_begin();
    if (out)
        *out = NULL;
    if (!path || !out)
        return bk_fail(BK_EINVAL, "load: no path or no output");
    int fd;
    uint64_t size, dev, ino;
    int rc = bk_open_regular(path, 0, &fd, &size, &dev, &ino);
    if (rc != BK_OK)
        return bk_done(rc, "load");
    source src = {.fd = fd, .len = size, .name = path};
    rc = load_from(&src, out);
    bk_sys.close(fd);
    return bk_done(rc, "load");
}

int bk_load_buffer(const void *buf, size_t len, bk_filter **out)
{
    bk_call_begin();
    if (out)
        *out = NULL;
    if (!buf || !out)
        return bk_fail(BK_EINVAL, "load buffer: no buffer or no output");
    source src = {.fd = -1, .mem = buf, .len = len, .name = "buffer"};
    return bk_done(load_from(&src, out), "load_buffer");
}

int bk_image_size(const void *head, size_t len, uint64_t *size)
{
    bk_call_begin();
    if (!head || !size || len < BK_FILE_FIXED)
        return bk_fail(BK_EINVAL, "image size: %s",
                       !head || !size ? "no buffer or no output" : "fewer than 128 bytes");
    bk_file_header h;
    int rc = bk_file_decode_fixed(head, UINT64_MAX, &h);
    if (rc != BK_OK)
        return bk_done(rc, "image_size");
    if (len < h.header_size)
        return bk_fail(BK_EINVAL, "image size: its header is %u bytes, %zu given", h.header_size,
                       len);
    const uint64_t declared = bk_file_declared_size(head);
    if (declared < h.header_size)
        return bk_fail(BK_ECORRUPT, "image declares %llu bytes, fewer than its %u-byte header",
                       (unsigned long long)declared, h.header_size);
    /* the whole header: its checksum, every field, a file of that size */
    if ((rc = bk_file_decode(head, declared, &h)) != BK_OK)
        return bk_done(rc, "image_size");
    *size = declared;
    return BK_OK;
}
