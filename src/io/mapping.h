/* mapping.h - a filter file mapped into memory (internal to src/io). */
#ifndef BK_IO_MAPPING_H
#define BK_IO_MAPPING_H

#include <stdint.h>
#include <sys/types.h>

#include "../core/store.h"

struct bk_mapping {
    uint8_t *base; /* the whole file */
    size_t size;
    int writable;     /* mapped with BK_MAP_WRITE */
    int detached;     /* path no longer holds this inode: sync by saving anew */
    uint32_t nslices; /* slices that live in the mapping */
    char *path;       /* where bk_sync writes */
    dev_t dev;        /* identity of the mapped file */
    ino_t ino;
    bk_allocator alloc; /* frees path and this struct */
};

#endif
