/*
 * standard.c - the classic Bloom filter: an m-bit array and k probes per key.
 *
 * Layout: bit i lives in byte i/8 under mask 0x80 >> (i % 8) (Redis's bit
 * order, see common/bits.h). The probes fall anywhere in the array (classic)
 * or all inside one 512-bit, 64-byte block (blocked; see common/hash.h).
 * Invariants: a bit once set is never cleared except by clear(); the striped
 * set count equals the population count of the array, because a bit is counted
 * only by the thread whose atomic OR turned it from 0 to 1.
 *
 * Concurrency: add and contains may run in any number of threads at once, with
 * no lock: add loads its probes (acquire) and ORs in only the clear bits
 * (release, atomic); contains only loads. The answer of add is exact under
 * races (see bk_std_slice_add). A key whose add has returned is visible to
 * every later contains in any thread that synchronises with the adder.
 *
 * Cost: add and contains compute all k positions, then load them together, so
 * their cache misses overlap (k lines for classic, one for blocked); contains
 * has no branch per probe, add none per probe either (it loops over the clear
 * bits only, and a present key costs no locked instruction).
 */
#include "standard.h"

#include <string.h>

#include "../common/alloc.h"
#include "../common/bits.h"
#include "../common/sizing.h"

int bk_std_slice_init(bk_std_slice *s, const bk_config *cfg, const bk_allocator *a)
{
    bk_slice_view shape;
    memset(&shape, 0, sizeof shape);
    shape.block = bk_block_cells(cfg->layout, 1);
    const int rc = bk_size_config(cfg, shape.block, &shape.m, &shape.k);
    if (rc != BK_OK)
        return rc;
    shape.capacity = cfg->capacity;
    shape.fpr = cfg->fpr;
    shape.nbytes = bk_bits_to_bytes(shape.m);
    return bk_std_slice_init_shape(s, &shape, a);
}

int bk_std_slice_init_shape(bk_std_slice *s, const bk_slice_view *shape, const bk_allocator *a)
{
    if (shape->nbytes > SIZE_MAX)
        return BK_ERANGE;
    _Atomic uint8_t *bits = bk_payload_alloc(a, (size_t)shape->nbytes);
    if (!bits)
        return BK_ENOMEM;
    bk_std_slice_adopt(s, shape, 0);
    s->bits = bits;
    bk_stripes_init(&s->counts, 0, 0);
    return BK_OK;
}

void bk_std_slice_adopt(bk_std_slice *s, const bk_slice_view *v, int borrowed)
{
    s->shape = *v;
    s->nblocks = v->block ? v->m / v->block : 0;
    s->block_shift = v->block ? 64 - bk_log2_u32(v->block) : 0;
    s->bits = (_Atomic uint8_t *)v->data;
    bk_stripes_init(&s->counts, v->set_bits, v->keys);
    s->borrowed = borrowed;
}

void bk_std_slice_view(const bk_std_slice *s, bk_slice_view *out)
{
    *out = s->shape;
    out->set_bits = bk_stripes_set(&s->counts);
    out->keys = bk_stripes_keys(&s->counts);
    out->saturated = 0;
    out->data = (uint8_t *)s->bits;
}

int bk_std_slice_same_shape(const bk_std_slice *a, const bk_std_slice *b)
{
    return bk_same_shape(&a->shape, &b->shape);
}

int bk_std_slice_combine(bk_std_slice *dst, const bk_std_slice *src, int op)
{
    if (!bk_std_slice_same_shape(dst, src))
        return BK_EINCOMPAT;
    const uint64_t set = bk_bits_combine((uint8_t *)dst->bits, (const uint8_t *)src->bits,
                                         (size_t)dst->shape.nbytes, op);
    const uint64_t dk = bk_stripes_keys(&dst->counts), sk = bk_stripes_keys(&src->counts);
    /* keys: adds reported new on either side (union), or at most the smaller
     * side (intersection): the figures bk_stats documents. */
    bk_stripes_init(&dst->counts, set, op == BK_BITS_OR ? dk + sk : (dk < sk ? dk : sk));
    return BK_OK;
}

void bk_std_slice_move(bk_std_slice *s, const bk_allocator *a, bk_move_fn move, void *arg)
{
    s->bits = bk_own_move(a, (void *)s->bits, (size_t)s->shape.nbytes,
                          s->borrowed ? BK_OWN_NONE : BK_OWN_PAYLOAD, move, arg);
}

void bk_std_slice_release(bk_std_slice *s, const bk_allocator *a)
{
    if (!s->borrowed)
        bk_payload_free(a, (void *)s->bits, (size_t)s->shape.nbytes);
    s->bits = NULL;
}

/* Probes handled per round: positions are computed and their bytes loaded
 * together (independent loads, so the cache misses overlap). 32 covers every
 * k of a rate down to 2^-32 in one round; larger k take several. */
#define BK_STD_ROUND 32

/* Words of the bitmap of "seen clear" probes: k never exceeds BK_K_MAX. */
#define BK_STD_ZWORDS ((BK_K_MAX + 63) / 64)

/* The next n probes of pr as byte offsets and bit masks: the one loop that
 * gathers positions before any is loaded (add's two phases, contains). */
static void gather(bk_probes *pr, unsigned n, uint64_t *at, uint8_t *mask)
{
    for (unsigned i = 0; i < n; i++) {
        const uint64_t bit = bk_probes_next(pr);
        at[i] = bk_bit_byte(bit);
        mask[i] = bk_bit_mask(bit);
    }
}

/* 1 if a probe j < i that was also seen clear (set Z, bits of zero) is the
 * bit at byte `at`, mask `mask` (probe i's): then i finding its bit set is
 * our own doing, not another writer's. Only on that rare path; one walk of
 * the probes, leaving at the first match, so an add costs at most O(k^2)
 * probe steps even when a pinned k far over m repeats most bits (a walk
 * from the start for every j took O(k^3): the first add of k = 2048 over
 * 1024 bits 0.35 s at -O1, now 1.3 ms; a fuzzed file timed out). */
static int same_as_earlier(const bk_std_slice *s, const bk_hash *h, const uint64_t *zero,
                           unsigned i, uint64_t at, uint8_t mask)
{
    bk_probes pr = bk_probes_for(h, s->shape.m, s->shape.block, s->shape.probes);
    for (unsigned j = 0; j < i; j++) {
        const uint64_t bit = bk_probes_next(&pr);
        if ((zero[j / 64] >> (j % 64) & 1) && bk_bit_byte(bit) == at && bk_bit_mask(bit) == mask)
            return 1;
    }
    return 0;
}

/* --- the blocked layout, a 64-byte line at a time ------------------------
 *
 * With all k probes in one 512-bit block, add and contains work on the
 * block's eight 64-bit words, a probe at a time: contains leaves at the
 * first clear bit, and add sets only the bits it found clear, each with one
 * locked bit-test-and-set (eight masks ORed in a word at a time, the
 * earlier way, took a compare-and-swap loop per word: 2% slower, 10^7 URLs,
 * docs/performance.md). Bit i of the
 * block is byte i/8, mask 0x80 >> i%8 (Redis order), which in a
 * little-endian word is bit (i % 64) ^ 7. Big-endian hosts take the byte
 * path below, which is correct for either layout. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BK_STD_WORDS 1
typedef uint64_t __attribute__((may_alias)) bk_word; /* the payload bytes, as words */

/* The words of h's block in s: bk_probes_for's blocked base, with the
 * slice's block count kept rather than derived per key (a 64-bit division). */
static bk_word *block_of(const bk_std_slice *s, const bk_hash *h)
{
    const uint64_t base = bk_reduce(h->h1, s->nblocks) * s->shape.block;
    return (bk_word *)(void *)((uint8_t *)s->bits + base / 8);
}

/* bk_probes_for's blocked probes as offsets in the block: the next one of
 * *x, which advances (the slice's shift kept rather than derived per key). */
static inline uint64_t block_next(const bk_std_slice *s, uint64_t *x)
{
    const uint64_t off = *x >> s->block_shift;
    *x = *x * BK_LCG_MUL + BK_LCG_ADD;
    return off;
}

/* A probe's word in the block, and its bit in that word (see above). */
#define BLOCK_WORD(off) ((off) >> 6)
#define BLOCK_BIT(off)  (((off)&63) ^ 7)

/* Probe by probe, two at a time with one branch per pair, leaving at the
 * first pair with a clear bit: an absent key mostly stops after a pair or
 * two, and a present one builds no masks (measured with the block in cache,
 * k = 14: an absent key 16.6 -> 6.3 ns, a present one 18.7 -> 13.6 ns;
 * docs/performance.md). */
static int block_contains(const bk_std_slice *s, const bk_hash *h)
{
    const bk_word *words = block_of(s, h);
    const unsigned k = s->shape.k;
    uint64_t x = h->h2;
    unsigned i = 0;
    for (; i + 1 < k; i += 2) {
        const uint64_t a = block_next(s, &x), b = block_next(s, &x);
        const uint64_t wa = __atomic_load_n(&words[BLOCK_WORD(a)], __ATOMIC_RELAXED);
        const uint64_t wb = __atomic_load_n(&words[BLOCK_WORD(b)], __ATOMIC_RELAXED);
        if (!((wa >> BLOCK_BIT(a)) & (wb >> BLOCK_BIT(b)) & 1))
            return 0;
    }
    if (i == k)
        return 1;
    const uint64_t a = block_next(s, &x);
    return (int)(__atomic_load_n(&words[BLOCK_WORD(a)], __ATOMIC_RELAXED) >> BLOCK_BIT(a) & 1);
}

/* The same two phases and the same rule as bk_std_slice_add, probe by
 * probe: (1) load each probe's word and note the probes whose bit is clear;
 * (2) set each noted bit with one locked bit-test-and-set (no
 * compare-and-swap loop, no masks built), in probe order. New iff the last
 * noted bit (repeats counted once) was clear when set. */
static int block_add(bk_std_slice *s, const bk_hash *h, bk_tally *t)
{
    bk_word *words = block_of(s, h);
    uint16_t clear[BK_K_MAX]; /* any k a file may hold (k > 512 repeats bits) */
    unsigned nclear = 0;
    uint64_t x = h->h2;
    for (unsigned i = 0; i < s->shape.k; i++) {
        const uint64_t off = block_next(s, &x);
        const uint64_t w = __atomic_load_n(&words[BLOCK_WORD(off)], __ATOMIC_SEQ_CST);
        clear[nclear] = (uint16_t)off;
        nclear += (unsigned)(w >> BLOCK_BIT(off) & 1) ^ 1;
    }
    if (!nclear)
        return 0;
    uint64_t set = 0;
    int raced = 0;
    for (unsigned i = 0; i < nclear; i++) {
        const uint64_t bit = UINT64_C(1) << BLOCK_BIT(clear[i]);
        if (!(__atomic_fetch_or(&words[BLOCK_WORD(clear[i])], bit, __ATOMIC_SEQ_CST) & bit)) {
            set++;
            raced = 0; /* the last distinct bit decides */
        } else {
            unsigned j = 0;
            while (j < i && clear[j] != clear[i])
                j++;
            raced |= j == i; /* set by another thread, not by a repeat of ours */
        }
    }
    t->set += set;
    t->keys += (uint64_t)!raced;
    return !raced;
}

/* block_add for a caller that keeps every other writer away: plain loads
 * and stores (relaxed atomics: concurrent readers stay well defined), no
 * locked instruction, and a probe at a time with no masks built (measured
 * with the block in cache, k = 14: 20.1 -> 16.0 ns an add). New iff some
 * wanted bit was clear; a bit probed twice is counted once (the second probe
 * finds it set). */
static int block_add_owned(bk_std_slice *s, const bk_hash *h, bk_tally *t)
{
    bk_word *words = block_of(s, h);
    uint64_t x = h->h2, set = 0;
    for (unsigned i = 0; i < s->shape.k; i++) {
        const uint64_t off = block_next(s, &x);
        bk_word *word = &words[BLOCK_WORD(off)];
        const uint64_t old = __atomic_load_n(word, __ATOMIC_RELAXED);
        __atomic_store_n(word, old | UINT64_C(1) << BLOCK_BIT(off), __ATOMIC_RELAXED);
        set += (old >> BLOCK_BIT(off) & 1) ^ 1;
    }
    t->set += set;
    t->keys += set != 0;
    return set != 0;
}
#else
#define BK_STD_WORDS 0
#endif

/*
 * add, exact under races. Two phases: (1) load every probed bit and note the
 * probes whose bit is clear (set Z); (2) atomically OR in those bits, in probe
 * order. The key is reported new iff Z is not empty and the OR of the last
 * bit of Z (in probe order, repeats of a bit counted once) turned it from 0
 * to 1.
 * At most one of several concurrent adds T, R of one key is told new: with
 * zT < zR their last bits, T read zR as set (zR is past all of Z_T), so after
 * R's OR of zR, R's last step, which follows R's load of zT; R either saw zT
 * clear and ORed it before zR, so before T did (T's OR of zT follows its load
 * of zR), or saw it set, i.e. after T's OR of zT, which follows T's load of
 * zR: a cycle either way. At least one is: of the bits clear before the race,
 * the last one is ORed first by some thread that saw it clear, and it is that
 * thread's last bit. (Sequentially consistent loads and ORs make the orders
 * above exist in the C11 model; on x86 they are plain loads and the locked
 * ORs we pay anyway.) The price: an add racing with another key's add on the
 * very same bit may answer "present" for a new key, the harm of one false
 * positive. Guava's put() reports "changed" to every thread that flips any
 * bit, so racing threads can all be told a key is new.
 * The loop over Z has one iteration per clear bit (no branch per probe), and
 * a present key costs no locked instruction at all.
 */
int bk_std_slice_add_tally(bk_std_slice *s, const bk_hash *h, bk_tally *t)
{
#if BK_STD_WORDS
    if (s->shape.block)
        return block_add(s, h, t);
#endif
    uint64_t zero[BK_STD_ZWORDS];
    uint64_t at[BK_STD_ROUND];
    uint8_t mask[BK_STD_ROUND];
    const unsigned k = s->shape.k;
    /* the words k uses, not all of them: a string store of the whole
     * array cost more than the rest of a cached add */
    for (unsigned w = 0; w < (k + 63) / 64; w++)
        zero[w] = 0;
    bk_probes pr = bk_probes_for(h, s->shape.m, s->shape.block, s->shape.probes);
    int any = 0;
    for (unsigned done = 0; done < k; done += BK_STD_ROUND) {
        const unsigned n = k - done < BK_STD_ROUND ? k - done : BK_STD_ROUND;
        gather(&pr, n, at, mask);
        uint64_t z = 0;
        for (unsigned i = 0; i < n; i++)
            z |= (uint64_t) !(atomic_load_explicit(&s->bits[at[i]], memory_order_seq_cst) & mask[i])
                 << i;
        zero[done / 64] |= z << (done % 64);
        any |= z != 0;
    }
    if (!any)
        return 0;

    uint64_t changed = 0;
    int raced = 0;
    pr = bk_probes_for(h, s->shape.m, s->shape.block, s->shape.probes);
    for (unsigned done = 0; done < k; done += BK_STD_ROUND) {
        const unsigned n = k - done < BK_STD_ROUND ? k - done : BK_STD_ROUND;
        if (k > BK_STD_ROUND) /* one round keeps phase 1's positions */
            gather(&pr, n, at, mask);
        uint64_t z =
            (zero[done / 64] >> (done % 64)) & (n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1);
        while (z) {
            const unsigned i = (unsigned)__builtin_ctzll(z);
            z &= z - 1;
            const uint8_t old =
                atomic_fetch_or_explicit(&s->bits[at[i]], mask[i], memory_order_seq_cst);
            if (!(old & mask[i])) {
                changed++;
                raced = 0; /* the last distinct bit decides */
            } else if (!same_as_earlier(s, h, zero, done + i, at[i], mask[i])) {
                raced = 1;
            }
        }
    }
    t->set += changed;
    t->keys += (uint64_t)!raced;
    return !raced;
}

void bk_std_slice_count(bk_std_slice *s, const bk_tally *t)
{
    if (t->set || t->keys)
        bk_stripes_add(&s->counts, t->set, t->keys);
}

int bk_std_slice_add(bk_std_slice *s, const bk_hash *h)
{
    bk_tally t = {0, 0};
    const int rc = bk_std_slice_add_tally(s, h, &t);
    bk_std_slice_count(s, &t);
    return rc;
}

/* The classic add for a caller that keeps every other writer away: probe by
 * probe, a plain load and store each (relaxed atomics), no locked
 * instruction, and no branch per probe (dh a constant of each caller): the
 * next position does not wait for a load, so the k misses overlap. New iff
 * some probe found its bit clear; a bit probed twice is counted once (the
 * second probe finds it set). (Measured against positions gathered into an
 * array first: 462 -> 294 instructions an add of k = 11, cachegrind.) */
static inline uint64_t classic_set_owned(_Atomic uint8_t *bits, bk_probes *pr, unsigned k, int dh)
{
    uint64_t set = 0;
    for (unsigned i = 0; i < k; i++) {
        const uint64_t bit = bk_probes_next_classic(pr, dh);
        _Atomic uint8_t *at = &bits[bk_bit_byte(bit)];
        const uint8_t mask = bk_bit_mask(bit);
        const uint8_t old = atomic_load_explicit(at, memory_order_relaxed);
        atomic_store_explicit(at, (uint8_t)(old | mask), memory_order_relaxed);
        set += !(old & mask);
    }
    return set;
}

static int classic_add_owned(bk_std_slice *s, const bk_hash *h, bk_tally *t)
{
    bk_probes pr = bk_probes_for(h, s->shape.m, 0, s->shape.probes);
    const uint64_t set = pr.dh ? classic_set_owned(s->bits, &pr, s->shape.k, 1)
                               : classic_set_owned(s->bits, &pr, s->shape.k, 0);
    t->set += set;
    t->keys += set != 0;
    return set != 0;
}

int bk_std_slice_add_owned(bk_std_slice *s, const bk_hash *h, bk_tally *t)
{
#if BK_STD_WORDS
    if (s->shape.block)
        return block_add_owned(s, h, t);
#endif
    return s->shape.block ? bk_std_slice_add_tally(s, h, t) : classic_add_owned(s, h, t);
}

int bk_std_slice_add_alone(bk_std_slice *s, const bk_hash *h)
{
    bk_tally t = {0, 0};
    const int rc = bk_std_slice_add_owned(s, h, &t);
    if (rc)
        bk_stripes_add_alone(&s->counts, t.set, t.keys);
    return rc;
}

uint64_t bk_std_slice_block(const bk_std_slice *s, const bk_hash *h)
{
    BK_ASSERT(s->shape.block != 0);
    return bk_reduce(h->h1, s->nblocks); /* as bk_probes_for finds it */
}

/* A blocked key's line, as block_of finds it: one prefetch per key. */
void bk_std_slice_prefetch(const bk_std_slice *s, const bk_hash *hs, size_t n, int all)
{
#if BK_STD_WORDS
    if (s->shape.block) {
        for (size_t i = 0; i < n; i++)
            bk_prefetch_w(block_of(s, &hs[i]));
        return;
    }
#endif
    for (size_t i = 0; i < n; i++) {
        bk_probes pr = bk_probes_for(&hs[i], s->shape.m, s->shape.block, s->shape.probes);
        if (s->shape.block) { /* one cache line (payloads are 64-byte aligned) */
            bk_prefetch_w(&s->bits[bk_bit_byte(pr.base)]);
            continue;
        }
        const unsigned lines = all || s->shape.k < BK_LOOKUP_LINES ? s->shape.k : BK_LOOKUP_LINES;
        for (unsigned j = 0; j < lines; j++)
            bk_prefetch_w(&s->bits[bk_bit_byte(bk_probes_next(&pr))]);
    }
}

/* Probe by probe, leaving at the first clear bit. The loads still overlap:
 * the core runs ahead on the predicted "set" and issues the next probes'
 * loads before the first returns, and an absent key stops after a probe or
 * two instead of loading all k lines (measured, 10^7 keys, batches: classic
 * lookups 175-183 -> 113-128 ns present, 168-194 -> 125 ns absent, against
 * loading every probe of a round before testing any; a chain's classic
 * lookups 5-10% faster). */
int bk_std_slice_contains(const bk_std_slice *s, const bk_hash *h)
{
#if BK_STD_WORDS
    if (s->shape.block)
        return block_contains(s, h);
#endif
    bk_probes pr = bk_probes_for(h, s->shape.m, s->shape.block, s->shape.probes);
    for (unsigned i = 0; i < s->shape.k; i++) {
        const uint64_t bit = bk_probes_next(&pr);
        if (!(atomic_load_explicit(&s->bits[bk_bit_byte(bit)], memory_order_relaxed) &
              bk_bit_mask(bit)))
            return 0;
    }
    return 1;
}

void bk_std_slice_clear(bk_std_slice *s)
{
    memset((void *)s->bits, 0, (size_t)s->shape.nbytes);
    bk_stripes_init(&s->counts, 0, 0);
}

uint64_t bk_std_slice_set(const bk_std_slice *s)
{
    return bk_stripes_set(&s->counts);
}

uint64_t bk_std_slice_keys(const bk_std_slice *s)
{
    return bk_stripes_keys(&s->counts);
}

/* --- the standard variant: one slice behind the vtable ------------------- */

typedef struct bk_standard {
    bk_filter base; /* first: a bk_standard* is a bk_filter* */
    bk_std_slice slice;
} bk_standard;

_Static_assert(offsetof(bk_standard, base) == 0, "bk_filter must be the first member");

static int std_add(bk_filter *f, const bk_hash *h)
{
    bk_std_slice *s = &((bk_standard *)f)->slice;
    return f->single_writer ? bk_std_slice_add_alone(s, h) : bk_std_slice_add(s, h);
}

static int std_contains(const bk_filter *f, const bk_hash *h)
{
    return bk_std_slice_contains(&((const bk_standard *)f)->slice, h);
}

static int std_clear(bk_filter *f)
{
    bk_std_slice_clear(&((bk_standard *)f)->slice);
    return BK_OK;
}

static void std_destroy(bk_filter *f)
{
    bk_standard *sf = (bk_standard *)f;
    const bk_allocator a = f->alloc;
    bk_std_slice_release(&sf->slice, &a);
    bk_mem_free(&a, sf);
}

static void std_slice_view(const bk_filter *f, uint32_t i, bk_slice_view *out)
{
    (void)i;
    bk_std_slice_view(&((const bk_standard *)f)->slice, out);
}

static void std_defrag(bk_filter *f, uint32_t i, bk_move_fn move, void *arg)
{
    (void)i;
    bk_std_slice_move(&((bk_standard *)f)->slice, &f->alloc, move, arg);
}

static void std_prefetch(const bk_filter *f, const bk_hash *hs, size_t n, int all)
{
    bk_std_slice_prefetch(&((const bk_standard *)f)->slice, hs, n, all);
}

/* Blocked: a key writes one block only, so blocks are the shards. */
static int std_shard_begin(bk_filter *f, size_t n)
{
    (void)n;
    return ((const bk_standard *)f)->slice.shape.block != 0;
}

static uint64_t std_shard_of(const bk_filter *f, const bk_hash *h)
{
    return bk_std_slice_block(&((const bk_standard *)f)->slice, h);
}

/* Other threads may add to the same block meanwhile (the locked path),
 * unless the batch is the filter's single writer: then each block has one
 * writer, its shard's thread. */
static int std_shard_add(bk_filter *f, const bk_hash *h, bk_tally *t)
{
    bk_std_slice *s = &((bk_standard *)f)->slice;
    return f->single_writer ? bk_std_slice_add_owned(s, h, t) : bk_std_slice_add_tally(s, h, t);
}

static void std_shard_end(bk_filter *f, const bk_tally *t)
{
    bk_std_slice_count(&((bk_standard *)f)->slice, t);
}

static int std_merge(bk_filter *dst, const bk_filter *src)
{
    return bk_std_slice_combine(&((bk_standard *)dst)->slice, &((const bk_standard *)src)->slice,
                                BK_BITS_OR);
}

static int std_intersect(bk_filter *dst, const bk_filter *src)
{
    return bk_std_slice_combine(&((bk_standard *)dst)->slice, &((const bk_standard *)src)->slice,
                                BK_BITS_AND);
}

/* The operations grouped by role, as in a SQLite methods table. remove is NULL: a bit array cannot
 * forget a key. */
/* clang-format off */
static const bk_filter_perf standard_perf = {
    BK_PERF_TABLE, .prefetch = std_prefetch, .shard_begin = std_shard_begin,
    .shard_of = std_shard_of, .shard_add = std_shard_add, .shard_end = std_shard_end,
};
static const bk_filter_ops standard_ops = {
    BK_MEMORY_OPS, .add = std_add, .contains = std_contains, .clear = std_clear,
    .merge = std_merge, .intersect = std_intersect, .destroy = std_destroy,
    .slice_count = bk_one_slice, .slice_view = std_slice_view, .defrag = std_defrag,
    .perf = &standard_perf,
};
/* clang-format on */

static int bk_standard_create(const bk_config *cfg, const bk_allocator *a, bk_filter **out)
{
    bk_standard *sf;
    int rc = bk_filter_new(sizeof *sf, 0, &standard_ops, cfg, a, &sf);
    if (rc != BK_OK)
        return rc;
    rc = bk_std_slice_init(&sf->slice, cfg, a);
    if (rc != BK_OK) {
        bk_mem_free(a, sf);
        return rc;
    }
    *out = &sf->base;
    return BK_OK;
}

static int bk_standard_adopt(const bk_config *cfg, const bk_allocator *a,
                             const bk_slice_view *slices, uint32_t n, int borrowed, bk_filter **out)
{
    if (n != 1)
        return BK_EINVAL;
    bk_standard *sf;
    const int rc = bk_filter_new(sizeof *sf, 0, &standard_ops, cfg, a, &sf);
    if (rc != BK_OK)
        return rc;
    bk_std_slice_adopt(&sf->slice, &slices[0], borrowed);
    *out = &sf->base;
    return BK_OK;
}

static int bk_standard_plan(const bk_config *cfg, bk_plan *out)
{
    return bk_plan_array(cfg, 1, out);
}

/* Its payload's cells: bits, in 64-byte blocks when blocked. */
static bk_cells standard_cells(const bk_config *cfg)
{
    return bk_bloom_cells(cfg, 1, 0);
}

/* The configuration keys it takes: a Bloom array's. */
#define standard_keys bk_bloom_keys

const bk_variant_desc bk_standard_desc = {
    BK_DESC_NAMED(STANDARD, standard, "standard"),
    .estimate = bk_bloom_estimate,
    .max_slices = 1,
};
