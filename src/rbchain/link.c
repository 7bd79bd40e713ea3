/*
 * link.c - one link of RedisBloom's chain: how RedisBloom sizes it
 * (LinkInit), checks a stored one, and probes it. Every step follows
 * FORMATS.md sections 2.3 and 3 (doubles where RedisBloom computes in
 * doubles, so a link made here after a load is the one RedisBloom makes).
 */
#include "rbchain.h"

#include <math.h>

#include "../common/error.h"

/* (ln 2)^2 and ln 2 as RedisBloom writes them (truncated: its checks use
 * exactly these). */
#define LN2_SQUARED 0.480453013918201
#define LN2         0.693147180559945
#define TWO_TO_64   18446744073709551616.0
/* The most bits per entry a stored link may claim: any rate a double holds
 * needs under 1,600; past this a crafted value's thousands of probes per
 * item would stall the server. */
#define BPE_MAX 8192.0

double bk_rb_bpe(double error)
{
    return fabs(log(error) / LN2_SQUARED);
}

int bk_rb_link_size(bk_rbchain_link *l, uint64_t capacity, double error, uint32_t options)
{
    if (capacity < 1 || !(error > 0) || !(error < 1))
        return bk_fail(BK_ERANGE, "a link needs capacity >= 1 and an error rate in (0, 1)");
    const double bpe = bk_rb_bpe(error);
    uint64_t bits, entries = capacity;
    unsigned n2 = 0;
    if (options & BK_RBCHAIN_ENTS_IS_BITS) {
        if (capacity > 63) /* RedisBloom allows 64, where its shift is undefined */
            return bk_fail(BK_ERANGE, "a link of 2^%llu bits", (unsigned long long)capacity);
        n2 = (unsigned)capacity;
        bits = UINT64_C(1) << n2;
        entries = (uint64_t)((double)bits / bpe);
    } else {
        const double x = (double)capacity * bpe;
        if (!(x < TWO_TO_64 / 2))
            return bk_fail(BK_ERANGE, "a link of %.0f bits", x);
        if (options & BK_RBCHAIN_NOROUND) {
            bits = (uint64_t)x;
            if (bits == 0)
                bits = 1;
        } else {
            if (!(x >= 1)) /* RedisBloom's shift would be undefined */
                return bk_fail(BK_ERANGE, "a power-of-two link of %g bits", x);
            n2 = (unsigned)ilogb(x) + 1;
            bits = UINT64_C(1) << n2;
            entries = capacity + (uint64_t)((double)(uint64_t)((double)bits - x) / bpe);
        }
    }
    const uint64_t bytes = (bits + 63) / 64 * 8;
    if (bytes > SIZE_MAX / 2)
        return bk_fail(BK_ERANGE, "a link of %llu bytes", (unsigned long long)bytes);
    l->entries = entries;
    l->error = error;
    l->bpe = bpe;
    l->hashes = (unsigned)ceil(LN2 * bpe);
    l->bits = bytes * 8;
    l->bytes = bytes;
    l->n2 = n2;
    l->size = 0;
    l->data = NULL;
    return BK_OK;
}

int bk_rb_link_check(const bk_rbchain_link *l, uint32_t i)
{
    const char *why = NULL;
    if (!(l->error > 0) || !(l->error < 1))
        why = "its error rate is not in (0, 1)";
    else if (l->n2 > 63)
        why = "n2 is over 63";
    else if (l->n2 > 0 && l->bits < (UINT64_C(1) << l->n2))
        why = "it has fewer bits than 2^n2";
    else if (l->bits == 0 || l->bytes > UINT64_MAX / 8 || l->bits != 8 * l->bytes)
        why = "its bit count is not 8 times its bytes";
    else if (!(l->bpe >= 0) || l->bpe > BPE_MAX || l->hashes != (unsigned)ceil(LN2 * l->bpe))
        why = "its hashes do not match its bits per entry (or are over 5,678)";
    return why ? bk_fail(BK_EINVAL, "link %u: %s", i, why) : BK_OK;
}

/* The modulus of l's positions. */
static uint64_t position(const bk_rbchain_link *l, const rb_pair *p, unsigned i)
{
    const uint64_t x = p->a + (uint64_t)i * p->b;
    return l->n2 ? x & ((UINT64_C(1) << l->n2) - 1) : x % l->bits;
}

int bk_rb_link_has(const bk_rbchain_link *l, const rb_pair *p)
{
    for (unsigned i = 0; i < l->hashes; i++) {
        const uint64_t x = position(l, p, i);
        if (!(l->data[x >> 3] & (1u << (x & 7))))
            return 0;
    }
    return 1;
}

unsigned bk_rb_link_set(bk_rbchain_link *l, const rb_pair *p)
{
    unsigned changed = 0;
    for (unsigned i = 0; i < l->hashes; i++) {
        const uint64_t x = position(l, p, i);
        const uint8_t bit = (uint8_t)(1u << (x & 7));
        changed += !(l->data[x >> 3] & bit);
        l->data[x >> 3] |= bit;
    }
    return changed;
}
