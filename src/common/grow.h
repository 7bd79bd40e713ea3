/*
 * grow.h - what an add asks before a structure that grows by itself
 * (RedisBloom's chain, src/rbchain, and cuckoo filter, src/rbcuckoo) adds
 * an array (internal).
 */
#ifndef BK_COMMON_GROW_H
#define BK_COMMON_GROW_H

#include <stdint.h>

/* check(arg, used, next) at the one place the structure grows, before
 * anything is allocated or moved: `used` the bytes of the arrays it holds,
 * `next` those of the array it would add (0: none can be made, and the add
 * fails as it would have). 0 lets it grow, exactly as RedisBloom would;
 * any other value refuses and is the add's result, nothing changed. An add
 * given NULL grows bounded by memory alone. The variants pass
 * bk_max_bytes_check (src/core/filter_impl.h), which asks the filter's
 * max_bytes and the host's bk_set_grow_check. */
typedef struct bk_rb_grow {
    int (*check)(void *arg, uint64_t used, uint64_t next);
    void *arg;
} bk_rb_grow;
/* A refusal a caller that says why itself may return (positive: not a BK_E* code). */
#define BK_RB_GROW 2

#endif
