/*
 * compact.c - deletes and compaction of RedisBloom's cuckoo filter
 * (FORMATS.md 4.5): a delete zeroes the first copy of the fingerprint,
 * newest sub-filter first; past 10% deletes a filter of several sub-filters
 * compacts, moving fingerprints down into older sub-filters and dropping
 * the newest once it is empty.
 *
 * RedisBloom's compaction is quadratic in the sub-filters (each moved
 * fingerprint tries every older one): a crafted value of 30,000 one-bucket
 * sub-filters held its server for seconds. Here one compaction does at
 * most COMPACT_WORK slot checks (a few tenths of a second), then stops as
 * when a fingerprint finds no room: what it moved stays moved, the rest
 * stays where it was and is still found. Below that bound (every filter
 * the commands make of a few sub-filters, and far larger ones) the result
 * is RedisBloom's, byte for byte.
 */
#include "rbcuckoo.h"

#define COMPACT_WORK (UINT64_C(1) << 26)

/* Move fingerprint f of bucket b (of a newer sub-filter) into the first
 * sub-filter below `below` with room in bucket b or its alternate: 1
 * moved, 0 no room. *work counts the slots it checks. */
static int relocate(const bk_rbcuckoo *c, uint32_t below, uint64_t b, unsigned f, uint64_t *work)
{
    const uint64_t alt = b ^ (f * RC_MUL);
    for (uint32_t j = 0; j < below; j++) {
        *work += 2 * (uint64_t)c->bucket_size;
        const rc_sub *s = &c->subs[j];
        uint8_t *x = bk_rc_bucket(c, s, bk_rc_index(s, b)),
                *y = bk_rc_bucket(c, s, bk_rc_index(s, alt));
        for (unsigned v = 0; v < c->bucket_size; v++)
            if (x[v] == 0) {
                x[v] = (uint8_t)f;
                return 1;
            }
        for (unsigned v = 0; v < c->bucket_size; v++)
            if (y[v] == 0) {
                y[v] = (uint8_t)f;
                return 1;
            }
    }
    return 0;
}

void bk_rbcuckoo_compact(bk_rbcuckoo *c, int stop_on_failure)
{
    if (!c)
        return;
    uint64_t work = 0;
    for (uint32_t i = c->filters; i-- > 1;) {
        const rc_sub *s = &c->subs[i];
        int failed = 0;
        for (uint64_t b = 0; b < s->n && work < COMPACT_WORK; b++) {
            uint8_t *slot = bk_rc_bucket(c, s, b);
            work += c->bucket_size;
            for (unsigned v = 0; v < c->bucket_size; v++) {
                if (slot[v] == 0)
                    continue;
                if (relocate(c, i, b, slot[v], &work))
                    slot[v] = 0;
                else
                    failed = 1;
            }
        }
        if (work >= COMPACT_WORK) /* out of work: the rest stays where it is */
            break;
        if (!failed && i == c->filters - 1)
            bk_rc_pop(c);
        if (failed && stop_on_failure)
            break;
    }
    c->deletes = 0;
}

int bk_rbcuckoo_remove(bk_rbcuckoo *c, const void *item, size_t len)
{
    if (!c || (!item && len))
        return 0;
    const rc_key k = bk_rc_key_of(c, item, len);
    return bk_rc_remove(c, &k);
}

int bk_rc_remove(bk_rbcuckoo *c, const rc_key *k)
{
    for (uint32_t i = c->filters; i-- > 0;) {
        const rc_sub *s = &c->subs[i];
        const uint64_t js[2] = {bk_rc_index(s, k->i1), bk_rc_index(s, k->i2)};
        for (int w = 0; w < 2; w++) {
            uint8_t *slot = bk_rc_bucket(c, s, js[w]);
            for (unsigned v = 0; v < c->bucket_size; v++) {
                if (slot[v] != k->fp)
                    continue;
                slot[v] = 0;
                c->items--;
                c->deletes++;
                if (c->filters > 1 && (double)c->deletes > 0.10 * (double)c->items)
                    bk_rbcuckoo_compact(c, 1);
                return 1;
            }
        }
    }
    return 0;
}
