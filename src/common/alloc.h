/*
 * alloc.h - every allocation in the library goes through a bk_allocator that
 * the filter captured at creation (internal).
 */
#ifndef BK_COMMON_ALLOC_H
#define BK_COMMON_ALLOC_H

#include <stddef.h>

#include "bloomkit.h"

/* The allocator bk_set_allocator() installed (malloc/free by default). */
bk_allocator bk_current_allocator(void);

/* size bytes, uninitialised; NULL on failure or size 0. */
void *bk_mem_alloc(const bk_allocator *a, size_t size);

/* n * size zeroed bytes; NULL on failure or overflow. With the default
 * allocator this is calloc(), so huge arrays get lazily-zeroed pages. */
void *bk_mem_calloc(const bk_allocator *a, size_t n, size_t size);

/* Free p (NULL is fine) with the allocator that made it. */
void bk_mem_free(const bk_allocator *a, void *p);

#endif
