/* stripes.c - per-thread stripe choice and the sums (see stripes.h). */
#include "stripes.h"

#include <string.h>

static _Atomic unsigned next_stripe;
static _Thread_local unsigned my_stripe; /* 0: not chosen yet, else stripe + 1 */

unsigned bk_thread_stripe(void)
{
    if (!my_stripe)
        my_stripe =
            atomic_fetch_add_explicit(&next_stripe, 1, memory_order_relaxed) % BK_STRIPES + 1;
    return my_stripe - 1;
}

void bk_stripes_init(bk_stripes *st, uint64_t set, uint64_t keys)
{
    const uintptr_t at = ((uintptr_t)st->mem + BK_LINE - 1) & ~(uintptr_t)(BK_LINE - 1);
    st->s = (bk_stripe *)at;
    for (unsigned i = 0; i < BK_STRIPES; i++) {
        atomic_init(&st->s[i].set, i == 0 ? set : 0);
        atomic_init(&st->s[i].keys, i == 0 ? keys : 0);
    }
}

uint64_t bk_stripes_set(const bk_stripes *st)
{
    uint64_t set, keys;
    bk_stripes_sums(st, &set, &keys);
    return set;
}

uint64_t bk_stripes_keys(const bk_stripes *st)
{
    uint64_t set, keys;
    bk_stripes_sums(st, &set, &keys);
    return keys;
}
