/*
 * alloc.h - every allocation in the library goes through a bk_allocator that
 * the filter captured at creation (internal).
 */
#ifndef BK_COMMON_ALLOC_H
#define BK_COMMON_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "bloomkit.h"

/* The allocator bk_set_allocator() installed (malloc/free by default). */
bk_allocator bk_current_allocator(void);

/* size bytes, uninitialised; NULL on failure or size 0. */
void *bk_mem_alloc(const bk_allocator *a, size_t size);

/* n * size zeroed bytes; NULL on failure or overflow. With the default
 * allocator this is calloc(), so huge arrays get lazily-zeroed pages. */
void *bk_mem_calloc(const bk_allocator *a, size_t n, size_t size);

/* bk_mem_calloc, but through a's plain allocation and a memset, never the
 * zeroing allocation bk_set_allocator_zeroed installed: that one may abort
 * when it fails (the Redis server's does), so sizes that come from outside
 * (RedisBloom's data and commands) are allocated with this. */
void *bk_mem_zeroed(const bk_allocator *a, size_t n, size_t size);

/* BK_EFULL, with the detail that arrays of `bytes` pass the limit `max`:
 * for a structure refused before anything is allocated. */
int bk_full_arrays(uint64_t bytes, uint64_t max);

/* Free p (NULL is fine) with the allocator that made it. */
void bk_mem_free(const bk_allocator *a, void *p);

/* Zeroed memory aligned on `align` (a power of two) from any allocator; free
 * with bk_mem_free_aligned (NULL ignored). */
void *bk_mem_calloc_aligned(const bk_allocator *a, size_t size, size_t align);
void bk_mem_free_aligned(const bk_allocator *a, void *p);

/* A copy of s (NULL for NULL, or when out of memory) from a. */
char *bk_mem_strdup(const bk_allocator *a, const char *s);

/* A filter payload: size zeroed bytes, starting on a 64-byte boundary. With the default allocator,
 * payloads of BK_HUGE_PAYLOAD bytes or more come from an anonymous mapping aligned to 2 MiB and
 * advised MADV_HUGEPAGE (transparent huge pages: one TLB entry per 2 MiB instead of per 4 KiB,
 * where the kernel offers them), zeroed lazily by the kernel. Free only with bk_payload_free and
 * the same size. */
#define BK_HUGE_PAGE    ((size_t)2 << 20) /* a transparent huge page on x86-64 and arm64 */
#define BK_HUGE_PAYLOAD BK_HUGE_PAGE
void *bk_payload_alloc(const bk_allocator *a, size_t size);
void bk_payload_free(const bk_allocator *a, void *p, size_t size);
/* Give the memory of bytes [from, upto) of payload p (of size bytes) back to the system while p
 * stays allocated: those bytes read as zero from now on. Only for a payload the default allocator
 * mapped (whole pages inside the range); with any other allocator nothing happens. For a payload
 * being read once, front to back, into another (a table that doubles). */
void bk_payload_discard(const bk_allocator *a, void *p, size_t size, size_t from, size_t upto);

/* Who frees an array of a structure that holds arrays from several sources
 * (RedisBloom's, src/rbchain and src/rbcuckoo): the structure, with
 * bk_mem_free or bk_payload_free (a payload it took over from a file
 * load), or nobody (a file mapping's). */
#define BK_OWN_MEM     0
#define BK_OWN_PAYLOAD 1
#define BK_OWN_NONE    2
/* Offer array p (size bytes, owned as own says) to move (bk_defrag): a
 * BK_OWN_MEM block moves as it is; a payload's block moves and the payload
 * is put back on its 64-byte boundary inside it; BK_OWN_NONE and mapped
 * payloads stay. The array's address from now on (p when it stayed). */
void *bk_own_move(const bk_allocator *a, void *p, size_t size, int own, bk_move_fn move, void *arg);
/* Free p of size bytes as own says. */
void bk_own_free(const bk_allocator *a, void *p, size_t size, int own);

#endif
