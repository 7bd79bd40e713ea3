/*
 * alloc.c - the process-wide default allocator and the helpers filters use.
 *
 * A filter copies the allocator current at its creation (bk_current_allocator)
 * and frees with that copy, so bk_set_allocator() can change later without a
 * mismatched free. The default path uses calloc() for payloads: the kernel then
 * hands out zero pages lazily, so a 1 GiB filter costs only the pages touched.
 */
#define _DEFAULT_SOURCE
#include "alloc.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

static void *default_alloc(void *opaque, size_t size)
{
    (void)opaque;
    return malloc(size);
}

static void default_free(void *opaque, void *p)
{
    (void)opaque;
    free(p);
}

static bk_allocator g_allocator = {default_alloc, default_free, NULL};

int bk_set_allocator(const bk_allocator *a)
{
    if (!a) {
        g_allocator.alloc = default_alloc;
        g_allocator.free = default_free;
        g_allocator.opaque = NULL;
        return BK_OK;
    }
    if (!a->alloc || !a->free)
        return BK_EINVAL;
    g_allocator = *a;
    return BK_OK;
}

bk_allocator bk_current_allocator(void)
{
    return g_allocator;
}

void *bk_mem_alloc(const bk_allocator *a, size_t size)
{
    if (size == 0)
        return NULL;
    return a->alloc(a->opaque, size);
}

void *bk_mem_calloc(const bk_allocator *a, size_t n, size_t size)
{
    if (n == 0 || size == 0 || n > SIZE_MAX / size)
        return NULL;
    if (a->alloc == default_alloc)
        return calloc(n, size);
    void *p = a->alloc(a->opaque, n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void bk_mem_free(const bk_allocator *a, void *p)
{
    if (p)
        a->free(a->opaque, p);
}

/* Huge-page alignment of large payloads. */
#define HUGE_ALIGN ((size_t)2 << 20)

static int uses_mapping(const bk_allocator *a, size_t size)
{
    return a->alloc == default_alloc && size >= BK_HUGE_PAYLOAD;
}

/* Payloads start on a cache line, so a block of the blocked layout is one
 * line. Heap payloads are over-allocated and the allocator's pointer is kept
 * just below the aligned start. */
#define LINE ((size_t)64)

static void *aligned_calloc(const bk_allocator *a, size_t size)
{
    if (size > SIZE_MAX - LINE - sizeof(void *))
        return NULL;
    uint8_t *raw = bk_mem_calloc(a, size + LINE + sizeof(void *), 1);
    if (!raw)
        return NULL;
    uint8_t *p =
        (uint8_t *)(((uintptr_t)(raw + sizeof(void *)) + LINE - 1) & ~(uintptr_t)(LINE - 1));
    memcpy(p - sizeof(void *), &raw, sizeof raw);
    return p;
}

static void aligned_free(const bk_allocator *a, void *p)
{
    void *raw;
    memcpy(&raw, (uint8_t *)p - sizeof(void *), sizeof raw);
    bk_mem_free(a, raw);
}

void *bk_payload_alloc(const bk_allocator *a, size_t size)
{
    if (!uses_mapping(a, size))
        return aligned_calloc(a, size);
    if (size > SIZE_MAX - HUGE_ALIGN)
        return NULL;
    /* Over-map by the alignment, then trim head and tail so the payload
     * starts on a 2 MiB boundary (a huge page can only back aligned ranges). */
    const size_t span = size + HUGE_ALIGN;
    uint8_t *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uint8_t *p = (uint8_t *)(((uintptr_t)raw + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1));
    const size_t head = (size_t)(p - raw), page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t used = (size + page - 1) / page * page;
    if (head)
        munmap(raw, head);
    if (span - head > used)
        munmap(p + used, span - head - used);
    madvise(p, used, MADV_HUGEPAGE); /* advice: failure (no THP) is harmless */
    return p;
}

void bk_payload_free(const bk_allocator *a, void *p, size_t size)
{
    if (!p)
        return;
    if (!uses_mapping(a, size)) {
        aligned_free(a, p);
        return;
    }
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    munmap(p, (size + page - 1) / page * page);
}
