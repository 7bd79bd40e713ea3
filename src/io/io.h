/* io.h - what the rest of the library needs from src/io (internal). */
#ifndef BK_IO_IO_H
#define BK_IO_IO_H

#include "../core/filter_impl.h"

/* Unmap and forget a mapping after its filter is gone; NULL does nothing. */
void bk_mapping_release(bk_mapping *map);

#endif
