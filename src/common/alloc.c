/*
 * alloc.c - the process-wide default allocator and the helpers filters use.
 *
 * A filter copies the allocator current at its creation (bk_current_allocator)
 * and frees with that copy, so bk_set_allocator() can change later without a
 * mismatched free. The default path uses calloc() for payloads: the kernel then
 * hands out zero pages lazily, so a 1 GiB filter costs only the pages touched.
 */
#include "alloc.h"

#include <stdint.h>
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
