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
#include "error.h"

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
/* The zeroing allocation of g_allocator (bk_set_allocator_zeroed), or NULL. */
static void *(*g_zalloc)(void *opaque, size_t size);

int bk_set_allocator(const bk_allocator *a)
{
    if (!a) {
        g_allocator.alloc = default_alloc;
        g_allocator.free = default_free;
        g_allocator.opaque = NULL;
        return BK_OK;
    }
    if (!a->alloc || !a->free)
        return bk_fail(BK_EINVAL, "set_allocator: the allocator has no alloc or no free");
    g_allocator = *a;
    g_zalloc = NULL;
    return BK_OK;
}

int bk_set_allocator_zeroed(const bk_allocator *a, void *(*zalloc)(void *opaque, size_t size))
{
    const int rc = bk_set_allocator(a);
    if (rc == BK_OK && a)
        g_zalloc = zalloc;
    return rc;
}

/* The zeroing allocation that goes with a: g_zalloc when a is the allocator it
 * was installed with. */
static void *(*zalloc_of(const bk_allocator *a))(void *, size_t)
{
    if (g_zalloc && a->alloc == g_allocator.alloc && a->free == g_allocator.free &&
        a->opaque == g_allocator.opaque)
        return g_zalloc;
    return NULL;
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
    void *(*zalloc)(void *, size_t) = zalloc_of(a);
    if (zalloc)
        return zalloc(a->opaque, n * size);
    void *p = a->alloc(a->opaque, n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void *bk_mem_zeroed(const bk_allocator *a, size_t n, size_t size)
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

int bk_full_arrays(uint64_t bytes, uint64_t max)
{
    return bk_fail(BK_EFULL, "arrays of %llu bytes pass the limit of %llu",
                   (unsigned long long)bytes, (unsigned long long)max);
}

void bk_mem_free(const bk_allocator *a, void *p)
{
    if (p)
        a->free(a->opaque, p);
}

static int uses_mapping(const bk_allocator *a, size_t size)
{
    return a->alloc == default_alloc && size >= BK_HUGE_PAYLOAD;
}

/* Over-allocate by the alignment and keep the allocator's own pointer just
 * below the aligned start, so any caller allocator serves aligned memory
 * (payloads on a cache line, XXH3's state on 64 bytes). */
void *bk_mem_calloc_aligned(const bk_allocator *a, size_t size, size_t align)
{
    if (size > SIZE_MAX - align - sizeof(void *))
        return NULL;
    uint8_t *raw = bk_mem_calloc(a, size + align + sizeof(void *), 1);
    if (!raw)
        return NULL;
    uint8_t *p =
        (uint8_t *)(((uintptr_t)(raw + sizeof(void *)) + align - 1) & ~(uintptr_t)(align - 1));
    memcpy(p - sizeof(void *), &raw, sizeof raw);
    return p;
}

void bk_mem_free_aligned(const bk_allocator *a, void *p)
{
    if (!p)
        return;
    void *raw;
    memcpy(&raw, (uint8_t *)p - sizeof(void *), sizeof raw);
    bk_mem_free(a, raw);
}

char *bk_mem_strdup(const bk_allocator *a, const char *s)
{
    if (!s)
        return NULL;
    const size_t n = strlen(s) + 1;
    char *d = bk_mem_alloc(a, n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static void *payload_alloc(const bk_allocator *a, size_t size)
{
    if (!uses_mapping(a, size))
        return bk_mem_calloc_aligned(a, size, BK_BLOCK_BYTES);
    if (size > SIZE_MAX - BK_HUGE_PAGE)
        return NULL;
    /* Over-map by the alignment, then trim head and tail so the payload
     * starts on a 2 MiB boundary (a huge page can only back aligned ranges). */
    const size_t span = size + BK_HUGE_PAGE;
    uint8_t *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uint8_t *p = (uint8_t *)(((uintptr_t)raw + BK_HUGE_PAGE - 1) & ~(uintptr_t)(BK_HUGE_PAGE - 1));
    const size_t head = (size_t)(p - raw), page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t used = (size + page - 1) / page * page;
    if (head)
        munmap(raw, head);
    if (span - head > used)
        munmap(p + used, span - head - used);
    madvise(p, used, MADV_HUGEPAGE); /* advice: failure (no THP) is harmless */
    return p;
}

void *bk_payload_alloc(const bk_allocator *a, size_t size)
{
    void *p = payload_alloc(a, size);
    if (!p) { /* the size the filter needs, for a message that says it */
        static const char unit[][4] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        double v = (double)size;
        unsigned u = 0;
        for (; v >= 1024 && u + 1 < sizeof unit / sizeof *unit; u++)
            v /= 1024;
        bk_fail(BK_ENOMEM,
                "out of memory: the filter's cells need %.4g %s (%zu bytes), more than this "
                "process can have; a smaller capacity or a larger fpr needs less (bloomkit plan "
                "shows the size)",
                v, unit[u], size);
    }
    return p;
}

void bk_payload_free(const bk_allocator *a, void *p, size_t size)
{
    if (!p)
        return;
    if (!uses_mapping(a, size)) {
        bk_mem_free_aligned(a, p);
        return;
    }
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    munmap(p, (size + page - 1) / page * page);
}

void bk_payload_discard(const bk_allocator *a, void *p, size_t size, size_t from, size_t upto)
{
    if (!p || !uses_mapping(a, size) || upto > size)
        return;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    from = (from + page - 1) / page * page;
    upto = upto / page * page;
    if (upto > from)
        madvise((uint8_t *)p + from, upto - from, MADV_DONTNEED); /* advice: failure keeps them */
}

void *bk_own_move(const bk_allocator *a, void *p, size_t size, int own, bk_move_fn move, void *arg)
{
    if (!p || own == BK_OWN_NONE || (own == BK_OWN_PAYLOAD && uses_mapping(a, size)))
        return p;
    if (own == BK_OWN_MEM) {
        void *moved = move(p, arg);
        return moved ? moved : p;
    }
    /* bk_mem_calloc_aligned's block: the allocator's pointer just below p */
    uint8_t *raw;
    memcpy(&raw, (uint8_t *)p - sizeof(void *), sizeof raw);
    const size_t at = (size_t)((uint8_t *)p - raw);
    uint8_t *block = move(raw, arg);
    if (!block)
        return p;
    uint8_t *q = (uint8_t *)(((uintptr_t)(block + sizeof(void *)) + BK_BLOCK_BYTES - 1) &
                             ~(uintptr_t)(BK_BLOCK_BYTES - 1));
    if ((size_t)(q - block) != at) /* the new block sits otherwise on its cache line */
        memmove(q, block + at, size);
    memcpy(q - sizeof(void *), &block, sizeof block);
    return q;
}

void bk_own_free(const bk_allocator *a, void *p, size_t size, int own)
{
    if (own == BK_OWN_MEM)
        bk_mem_free(a, p);
    else if (own == BK_OWN_PAYLOAD)
        bk_payload_free(a, p, size);
}
