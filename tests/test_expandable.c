/*
 * test_expandable.c - variant=expandable: one table that doubles (no
 * second array however far it grows), every key kept across doublings,
 * the measured rate under the target and at the model's, its file and
 * mapping taking the grown table, max_bytes refusing a doubling with
 * nothing changed, and a crafted table refused. The properties every
 * variant shares (files, batches, threads, faults) are the registry-driven
 * suites'.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/bits.h"
#include "expandable/qtable.h"
#include "expandable/rqtable.h"
#include "suites.h"
#include "testutil.h"

/* The one table's view. */
static bk_slice_view view_of(const bk_filter *f)
{
    ck_assert_uint_eq(f->ops->slice_count(f), 1);
    bk_slice_view v;
    f->ops->slice_view(f, 0, &v);
    return v;
}

/* The set bits of the table's payload, counted afresh: what a file's
 * census checks the filter's own count against. */
static uint64_t ones_of(const bk_filter *f)
{
    const bk_slice_view v = view_of(f);
    return bk_popcount(v.data, (size_t)v.nbytes);
}

/* An empty table of 2^q homes, r-bit fields and at least `slots` slots in
 * whole words, shaped as the filter shapes its own (calloc'd data). */
static xp_table empty_table(unsigned q, unsigned r, uint64_t slots)
{
    xp_table t;
    memset(&t, 0, sizeof t);
    t.q = q;
    t.r = r;
    t.w = r + XP_META;
    t.nbytes = xp_bytes(slots, t.w);
    t.slots = xp_slots_in(t.nbytes, t.w);
    t.data = calloc(1, (size_t)t.nbytes);
    ck_assert_ptr_nonnull(t.data);
    return t;
}

/* Put key h's entry in t with a fingerprint of its first len bits (as a
 * doubling leaves an older entry), through the table's own add. */
static void add_entry(xp_table *t, const bk_hash *h, unsigned len)
{
    const uint64_t probe = xp_probe(t, h);
    const uint64_t field = (probe >> (t->r - len) << (t->r - len)) | UINT64_C(1)
                                                                         << (t->r - 1 - len);
    ck_assert_int_ne(xp_add(t, xp_home(t, h), probe, field), XP_NO_ROOM);
}

/* A table of entries of every kind doubled, through the table's own
 * calls (src/expandable/qtable.h): random homes near full load, one home
 * holding a run longer than a doubling holds while it reads a run (its
 * upper half's entries are read again), a stretch of consecutive homes
 * making one long cluster, and fingerprints of 0 to 2 bits (a 0-bit one
 * goes to both halves). The doubled table checks sound, holds one entry
 * more for each 0-bit one, and answers every key added. */
START_TEST(a_doubling_moves_clusters_of_every_length)
{
    uint64_t state = tu_seed("doubling") ^ UINT64_C(0x646f75626c65);
    xp_table t = empty_table(12, 14, (UINT64_C(1) << 12) + xp_slack(12));
    enum { N = 3000 };
    static bk_hash keys[N];
    for (unsigned i = 0; i < N; i++) {
        bk_hash h = {tu_next(&state), tu_next(&state)};
        if (i < 300) /* one run of about 300 at home 77 */
            h.h1 = (h.h1 >> t.q) | UINT64_C(77) << (64 - t.q);
        else if (i < 700) /* 400 over homes 2000 .. 2199: a cluster of about 400 */
            h.h1 = (h.h1 >> t.q) | (2000 + (uint64_t)i % 200) << (64 - t.q);
        add_entry(&t, &h, i >= 700 && i % 97 == 0 ? i % 3 : t.r - 1); /* a few short ones */
        keys[i] = h;
    }
    xp_table to = empty_table(t.q + 1, t.r + 1, xp_double_slots(&t));
    xp_double(&t, &to, NULL, NULL);
    ck_assert_uint_eq(to.entries, t.entries + t.by_len[0]);
    ck_assert_uint_gt(t.by_len[0], 0);
    xp_table checked = to;
    ck_assert_int_eq(xp_check(&checked), BK_OK);
    ck_assert_uint_eq(checked.entries, to.entries);
    ck_assert_uint_eq(checked.ones, to.ones);
    for (unsigned i = 0; i < N; i++)
        ck_assert_int_eq(xp_lookup(&to, xp_home(&to, &keys[i]), xp_probe(&to, &keys[i])), 1);
    free(t.data);
    free(to.data);
}
END_TEST

/* An empty rank-and-select table of 2^q homes, r-bit fields and `blocks`
 * blocks in all (calloc'd data). */
static rq_table empty_rq(unsigned q, unsigned r, uint64_t blocks)
{
    rq_table t;
    memset(&t, 0, sizeof t);
    t.q = q;
    t.r = r;
    t.blocks = blocks;
    t.slots = blocks * RQ_SLOTS;
    t.nbytes = rq_bytes(blocks, r);
    t.data = calloc(1, (size_t)t.nbytes);
    ck_assert_ptr_nonnull(t.data);
    return t;
}

/* The `bits` bits (<= 57) at bit `at` of p, read little-endian as the
 * tables' layouts say (qtable.h, rqtable.h). */
static uint64_t bits_of(const uint8_t *p, uint64_t at, unsigned bits)
{
    return bk_le_get(p + at / 8, 8) >> (at % 8) & ((UINT64_C(1) << bits) - 1);
}

/* Both tables hold the same entries in the same places (both put runs in
 * their homes' order, each as far left as it can go, a run's entries in
 * the order they came): slot by slot the same field, a home occupied in
 * both or neither, a run end where the slot table's next slot does not go
 * on with the run; the same answer for `n` keys drawn from `state` and
 * for every key in keys[0 .. added); the same counts. */
static void tables_agree(const xp_table *a, const rq_table *b, const bk_hash *keys, unsigned added,
                         uint64_t *state, unsigned n)
{
    ck_assert_uint_eq(a->entries, b->entries);
    ck_assert_int_eq(memcmp(a->by_len, b->by_len, sizeof a->by_len), 0);
    for (uint64_t s = 0; s < b->slots; s++) {
        const uint8_t *blk = b->data + (s / RQ_SLOTS) * rq_block_bytes(b->r);
        const uint64_t f = bits_of(blk + RQ_HEAD, s % RQ_SLOTS * b->r, b->r);
        const uint64_t v = s < a->slots ? bits_of(a->data, s * a->w, a->w) : 0;
        const uint64_t next = s + 1 < a->slots ? bits_of(a->data, (s + 1) * a->w, a->w) : 0;
        ck_assert_uint_eq(f, v >> XP_META);
        ck_assert_uint_eq(bits_of(blk, s % RQ_SLOTS, 1), v & XP_OCC);
        ck_assert_uint_eq(bits_of(blk + RQ_END, s % RQ_SLOTS, 1), f && !(next & XP_CONT));
    }
    for (unsigned i = 0; i < added + n; i++) {
        const bk_hash h = i < added ? keys[i] : (bk_hash){tu_next(state), tu_next(state)};
        const uint64_t x = xp_home(a, &h), probe = xp_probe(a, &h);
        const int want = xp_lookup(a, x, probe);
        ck_assert_int_eq(rq_lookup(b, x, probe), want);
        if (i < added)
            ck_assert_int_eq(want, 1);
    }
}

/* The rank-and-select table (rqtable.h) answers as the slot table does,
 * add by add and lookup by lookup, through two doublings: random homes up
 * to 0.95 load, one home's run of about 300, a cluster over 300
 * consecutive homes across blocks, fingerprints of 0 to 2 bits (a 0-bit
 * one goes to both halves), and keys added twice. */
START_TEST(the_rank_select_table_answers_as_the_slot_table)
{
    uint64_t state = tu_seed("rank-select") ^ UINT64_C(0x72616e6b);
    const unsigned q = 10, r = 12;
    xp_table a = empty_table(q, r, (UINT64_C(1) << q) + 1024);
    rq_table b = empty_rq(q, r, ((UINT64_C(1) << q) + 1024) / RQ_SLOTS);
    enum { N = 3 * 1024 };
    static bk_hash keys[N];
    unsigned added = 0;
    for (int round = 0; round < 3; round++) {
        const uint64_t homes = UINT64_C(1) << a.q, until = homes * 95 / 100;
        for (unsigned i = 0; a.entries < until && added < N; i++) {
            bk_hash h = {tu_next(&state), tu_next(&state)};
            if (i < 300 && round == 0) /* one run of about 300 at home 77 */
                h.h1 = (h.h1 >> a.q) | UINT64_C(77) << (64 - a.q);
            else if (i < 600 && round == 0) /* homes 500 .. 799: one long cluster */
                h.h1 = (h.h1 >> a.q) | (200 + (uint64_t)i) << (64 - a.q);
            else if (i % 50 == 7 && added > 0) /* a key added before */
                h = keys[tu_next(&state) % added];
            const uint64_t x = xp_home(&a, &h), probe = xp_probe(&a, &h);
            const unsigned len = i >= 600 && i % 97 == 0 ? i % 3 : a.r - 1; /* a few short ones */
            const uint64_t f = (probe >> (a.r - len) << (a.r - len)) | UINT64_C(1)
                                                                           << (a.r - 1 - len);
            const int want = xp_add(&a, x, probe, f);
            ck_assert_int_ne(want, XP_NO_ROOM);
            ck_assert_int_eq(rq_add(&b, x, probe, f), want);
            if (want == XP_ADDED)
                keys[added++] = h;
        }
        tables_agree(&a, &b, keys, added, &state, 4000);
        if (round == 2)
            break;
        xp_table a2 = empty_table(a.q + 1, a.r + 1, xp_double_slots(&a) + 1024);
        xp_double(&a, &a2, NULL, NULL);
        rq_table b2 = empty_rq(b.q + 1, b.r + 1, rq_double_blocks(&b) + 16);
        rq_double(&b, &b2);
        tables_agree(&a2, &b2, keys, added, &state, 4000);
        free(a.data);
        free(b.data);
        a = a2;
        b = b2;
    }
    ck_assert_uint_gt(added, 2000);
    free(a.data);
    free(b.data);
}
END_TEST

/* A rank-and-select table with one block past its homes takes the last
 * home's run to the table's end and no further: the next new key of that
 * home answers XP_NO_ROOM and changes no byte; the home before it, still
 * free, takes a key in place; every key added is found, and added again
 * is present (a run that ends at the last slot is a run, not an error). */
START_TEST(the_rank_select_table_refuses_past_its_end)
{
    uint64_t state = tu_seed("rank-select-end") ^ UINT64_C(0x656e64);
    const unsigned q = 6, r = 10;
    const uint64_t last = (UINT64_C(1) << q) - 1;
    rq_table t = empty_rq(q, r, (last + 1) / RQ_SLOTS + 1);
    uint64_t probes[RQ_SLOTS + 2];
    unsigned n = 0;
    for (int rc = XP_ADDED; rc != XP_NO_ROOM;) {
        const uint64_t probe = (tu_next(&state) >> (64 - r)) & ~UINT64_C(1);
        rc = rq_add(&t, last, probe, probe | 1);
        if (rc == XP_ADDED)
            probes[n++] = probe;
        ck_assert_uint_le(n, RQ_SLOTS + 1);
    }
    ck_assert_uint_eq(n, t.slots - last); /* slots last .. the end */
    uint8_t *copy = malloc((size_t)t.nbytes);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, t.data, (size_t)t.nbytes);
    uint64_t fresh = 0;
    for (int i = 0; i < 64 && !fresh; i++) { /* a probe of no entry */
        const uint64_t p = (tu_next(&state) >> (64 - r)) & ~UINT64_C(1);
        fresh = rq_lookup(&t, last, p) ? 0 : p;
    }
    ck_assert_uint_ne(fresh, 0);
    ck_assert_int_eq(rq_add(&t, last, fresh, fresh | 1), XP_NO_ROOM);
    ck_assert_uint_eq(t.entries, n);
    ck_assert_int_eq(memcmp(copy, t.data, (size_t)t.nbytes), 0);
    ck_assert_int_eq(rq_add(&t, last - 1, fresh, fresh | 1), XP_ADDED);
    ck_assert_int_eq(rq_lookup(&t, last - 1, fresh), 1);
    for (unsigned i = 0; i < n; i++)
        ck_assert_int_eq(rq_lookup(&t, last, probes[i]), 1);
    /* a key of the run that ends at the last slot is there, not refused */
    ck_assert_int_eq(rq_add(&t, last, probes[n - 1], probes[n - 1] | 1), XP_PRESENT);
    free(copy);
    free(t.data);
}
END_TEST

/* The one-pass check (xp_check) and the slot-by-slot walk that names the
 * broken slot (xp_explain) give one verdict on every table: a table of
 * long runs, a long cluster, short fingerprints and random homes near
 * full load, checked untouched (sound, its entries and lengths what its
 * adds counted), then with one to three bits flipped, most of them run
 * bits of nearby slots (where the run rules are), some anywhere in the
 * slots. Both verdicts occur. */
START_TEST(the_one_pass_check_agrees_with_the_walk)
{
    uint64_t state = tu_seed("check agrees") ^ UINT64_C(0x636865636b);
    xp_table t = empty_table(10, 9, (UINT64_C(1) << 10) + xp_slack(10));
    for (unsigned i = 0; i < 760; i++) {
        bk_hash h = {tu_next(&state), tu_next(&state)};
        if (i < 40) /* one run of about 40 at home 77 */
            h.h1 = (h.h1 >> t.q) | UINT64_C(77) << (64 - t.q);
        else if (i < 140) /* 100 over homes 500 .. 549: one long cluster */
            h.h1 = (h.h1 >> t.q) | (500 + (uint64_t)i % 50) << (64 - t.q);
        add_entry(&t, &h, i % 13 == 0 ? i % 3 : t.r - 1); /* a few short ones */
    }
    xp_table c = t;
    ck_assert_int_eq(xp_check(&c), BK_OK);
    ck_assert_uint_eq(c.entries, t.entries);
    for (unsigned len = 0; len < XP_FIELD_MAX; len++)
        ck_assert_uint_eq(c.by_len[len], t.by_len[len]);
    uint8_t *buf = malloc((size_t)t.nbytes);
    ck_assert_ptr_nonnull(buf);
    uint64_t sound = 0, broken = 0;
    for (int round = 0; round < 20000; round++) {
        memcpy(buf, t.data, (size_t)t.nbytes);
        const uint64_t near = tu_next(&state) % t.slots;
        const int flips = 1 + (int)(tu_next(&state) % 3);
        for (int k = 0; k < flips; k++) {
            const uint64_t r = tu_next(&state);
            uint64_t bit = (near + r % 8) % t.slots * t.w + (r >> 8) % XP_META;
            if (r % 4 == 0) /* anywhere in the slots */
                bit = (r >> 16) % (t.slots * t.w);
            buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        c = t;
        c.data = buf;
        const int fast = xp_check(&c), walk = xp_explain(&c, 0, c.slots);
        ck_assert_msg((fast == BK_OK) == (walk == BK_OK), "round %d: check %d, walk %d", round,
                      fast, walk);
        sound += fast == BK_OK;
        broken += fast != BK_OK;
    }
    printf("[expandable check] 20000 crafted tables: %llu sound, %llu broken\n",
           (unsigned long long)sound, (unsigned long long)broken);
    ck_assert_uint_gt(sound, 1000);
    ck_assert_uint_gt(broken, 1000);
    free(buf);
    free(t.data);
}
END_TEST

/* From 100 keys to 200,000 (eleven doublings): every key added is present,
 * the table stays one array whose memory about doubles, and the rate measured on
 * absent keys is under fpr and within five standard deviations of the
 * rate the filter reports (its model: the sum over entries). */
START_TEST(grows_by_doubling_and_keeps_every_key_under_its_rate)
{
    const uint64_t n = tu_small() ? 50000 : 200000, probes = 400000;
    bk_filter *f = tu_filter("variant=expandable capacity=100 fpr=0.001");
    uint64_t last = view_of(f).nbytes, doublings = 0;
    char key[64];
    for (uint64_t i = 0; i < n; i++) {
        ck_assert_int_eq(bk_add(f, key, tu_key(key, sizeof key, "in", i)) >= 0, 1);
        const uint64_t now = view_of(f).nbytes;
        if (now != last) {
            /* twice the slots; a bit more when its fingerprints widen */
            ck_assert_msg(now >= last * 19 / 10 && now <= last * 23 / 10, "%llu -> %llu bytes",
                          (unsigned long long)last, (unsigned long long)now);
            doublings++;
            last = now;
            ck_assert_uint_eq(view_of(f).set_bits, ones_of(f)); /* the doubling's count */
        }
    }
    ck_assert_uint_eq(view_of(f).set_bits, ones_of(f)); /* and the adds' since */
    ck_assert_uint_ge(doublings, tu_small() ? 8 : 10);
    ck_assert_uint_eq(tu_count_present(f, "in", 0, n), n);
    const uint64_t fp = tu_count_present(f, "out", 0, probes);
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    const double measured = (double)fp / (double)probes;
    const double sd = sqrt(st.est_fpr * (1 - st.est_fpr) / (double)probes);
    printf("[expandable 100 -> %llu keys] %llu doublings, measured %.2e, model %.2e, fpr 1e-3, "
           "%.1f bits/key\n",
           (unsigned long long)n, (unsigned long long)doublings, measured, st.est_fpr,
           st.bits_per_key);
    ck_assert_double_lt(st.est_fpr, 0.001);
    ck_assert_double_lt(measured, 0.001);
    ck_assert_double_lt(fabs(measured - st.est_fpr), 5 * sd + 1e-6);
    ck_assert_uint_eq(st.slices, 1);
    ck_assert_uint_eq(st.k, 1);
    bk_free(f);
}
END_TEST

/* Fingerprints that run out of bits: at fpr 0.5 with tightening 0.1 the
 * first entries have 2 bits and lose one a doubling, so after two
 * doublings they match every key of their home and go to both halves of
 * each later one. Every key stays present, the rate stays under fpr, and
 * the table checks out as a file. */
START_TEST(entries_with_no_bit_left_go_to_both_halves)
{
    bk_filter *f =
        tu_holding("variant=expandable capacity=1 fpr=0.5 tightening=0.1", "v", 0, 20000);
    ck_assert_uint_eq(tu_count_present(f, "v", 0, 20000), 20000);
    const uint64_t fp = tu_count_present(f, "w", 0, 20000);
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_double_lt(st.est_fpr, 0.5);
    ck_assert_uint_lt(fp, 10000);
    bk_filter *g = tu_reloaded(f);
    ck_assert_int_eq(tu_same_filter(f, g), 1);
    tu_free_all(f, g);
}
END_TEST

/* A file holds the grown table; loaded, mapped, and mapped then grown
 * past the file (which bk_sync then saves anew), it answers as before and
 * keeps every key. */
START_TEST(files_and_mappings_take_the_grown_table)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "x.bkf");
    bk_filter *f = tu_holding("variant=expandable capacity=1000 fpr=0.0001", "a", 0, 20000);
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    tu_assert_file_holds(path, f, "saved");
    bk_filter *m = NULL;
    ck_assert_int_eq(bk_open_mmap(path, BK_MAP_WRITE, &m), BK_OK);
    ck_assert_int_eq(tu_same_filter(f, m), 1);
    const uint64_t before = view_of(m).nbytes;
    tu_add_keys(m, "b", 0, 60000); /* past the mapped table: it doubles into memory */
    ck_assert_uint_gt(view_of(m).nbytes, before);
    ck_assert_int_eq(bk_sync(m), BK_OK);
    bk_filter *g = NULL;
    ck_assert_int_eq(bk_load(path, &g), BK_OK);
    ck_assert_uint_eq(tu_count_present(g, "a", 0, 20000), 20000);
    ck_assert_uint_eq(tu_count_present(g, "b", 0, 60000), 60000);
    ck_assert_int_eq(tu_same_filter(m, g), 1);
    tu_free_all(f, m, g);
    free(path);
    tu_rmtree(dir);
}
END_TEST

static void assert_same_image(const bk_filter *a, const uint8_t *img, size_t len, const char *what)
{
    size_t n = 0;
    uint8_t *mine = tu_image(a, &n);
    ck_assert_msg(n == len && memcmp(mine, img, len) == 0, "%s: the images differ", what);
    free(mine);
}

/* A table read back and not yet checked saves the bytes of the table it
 * was, and after the same adds the bytes of a table that took them all
 * (a replica's or a reloaded server's image equal to the master's): the
 * image's own word (the rate from every entry's length) is counted before
 * it is written, by bk_save_buffer, bk_save and a mapping's bk_sync. */
START_TEST(a_table_read_back_saves_the_bytes_of_one_built)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "x.bkf");
    bk_filter *f = tu_holding("variant=expandable capacity=1000 fpr=0.001", "a", 0, 2500);
    size_t len = 0;
    uint8_t *img = tu_image(f, &len);
    bk_filter *g = NULL;
    ck_assert_int_eq(bk_load_buffer(img, len, &g), BK_OK);
    assert_same_image(g, img, len, "read back"); /* which checked it whole */
    bk_free(g);
    ck_assert_int_eq(bk_load_buffer(img, len, &g), BK_OK); /* unchecked again */
    free(img);
    const uint64_t bytes = view_of(f).nbytes;
    tu_add_keys(f, "b", 0, 100);
    tu_add_keys(g, "b", 0, 100);
    ck_assert_uint_eq(view_of(f).nbytes, bytes); /* no doubling: no whole check */
    img = tu_image(f, &len);
    assert_same_image(g, img, len, "after the same adds");
    ck_assert_int_eq(bk_save(g, path), BK_OK);
    size_t flen = 0;
    uint8_t *file = tu_read_file(path, &flen);
    ck_assert(flen == len && memcmp(file, img, len) == 0);
    free(file);
    bk_filter *m = NULL; /* mapped, unchecked, given adds, synced */
    ck_assert_int_eq(bk_open_mmap(path, BK_MAP_WRITE, &m), BK_OK);
    tu_add_keys(f, "c", 0, 100);
    tu_add_keys(m, "c", 0, 100);
    ck_assert_int_eq(bk_sync(m), BK_OK);
    free(img);
    img = tu_image(f, &len);
    file = tu_read_file(path, &flen);
    ck_assert_msg(flen == len && memcmp(file, img, len) == 0, "synced: the images differ");
    free(file);
    free(img);
    tu_free_all(f, g, m);
    free(path);
    tu_rmtree(dir);
}
END_TEST

/* A doubling past max_bytes is refused with BK_EFULL and changes nothing:
 * the same table, every key still there, lookups and adds of present keys
 * as before. */
START_TEST(max_bytes_refuses_a_doubling_and_changes_nothing)
{
    bk_filter *f = tu_filter("variant=expandable capacity=1000 fpr=0.001 max_bytes=16k");
    char key[64];
    uint64_t i = 0;
    int rc;
    while ((rc = bk_add(f, key, tu_key(key, sizeof key, "k", i))) >= 0)
        i++;
    ck_assert_int_eq(rc, BK_EFULL);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "max_bytes"));
    const bk_slice_view v = view_of(f);
    ck_assert_uint_le(v.nbytes, 16384);
    ck_assert_uint_eq(tu_count_present(f, "k", 0, i), i);
    ck_assert_int_eq(bk_add(f, key, tu_key(key, sizeof key, "k", 0)), 0);
    ck_assert_int_eq(bk_contains(f, key, tu_key(key, sizeof key, "k", i)), 0);
    ck_assert_uint_eq(view_of(f).nbytes, v.nbytes);
    bk_free(f);
}
END_TEST

/* The same through a batch: bk_add_batch returns the refused doubling's
 * BK_EFULL, every key before it has the answer single adds give a twin
 * (the same hash key), and every key from it on has the code: none is
 * left unanswered. */
START_TEST(a_batch_stopped_by_max_bytes_answers_every_key)
{
    const char *cfg = "variant=expandable capacity=1000 fpr=0.001 max_bytes=16k "
                      "key=00112233445566778899aabbccddeeff";
    enum { N = 20000, UNSET = 12345 };
    static char keybuf[N][32];
    static const void *keys[N];
    static size_t lens[N];
    static int got[N];
    for (size_t i = 0; i < N; i++) {
        lens[i] = tu_key(keybuf[i], sizeof keybuf[i], "b", i);
        keys[i] = keybuf[i];
        got[i] = UNSET;
    }
    bk_filter *f = tu_filter(cfg), *twin = tu_filter(cfg);
    ck_assert_int_eq(bk_add_batch(f, keys, lens, N, got), BK_EFULL);
    size_t i = 0;
    for (; i < N && got[i] >= 0; i++)
        ck_assert_int_eq(got[i], bk_add(twin, keys[i], lens[i]));
    ck_assert_msg(i > 1000 && i < N, "stopped at key %zu", i);
    ck_assert_int_eq(bk_add(twin, keys[i], lens[i]), BK_EFULL); /* the twin stops there too */
    for (; i < N; i++)
        ck_assert_msg(got[i] == BK_EFULL, "key %zu: %d", i, got[i]);
    ck_assert_msg(tu_same_filter(f, twin), "the batch and single adds left different filters");
    bk_free(f);
    bk_free(twin);
}
END_TEST

/* The filter's table as an adopt would take it, over a copy of data: the
 * new filter (owning the copy), or NULL with *rc the error. */
static bk_filter *adopt_copy(const bk_filter *f, const uint8_t *data, int *rc)
{
    bk_slice_view v = view_of(f);
    const bk_allocator a = f->alloc;
    uint8_t *copy = bk_payload_alloc(&a, (size_t)v.nbytes);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, data, (size_t)v.nbytes);
    v.data = copy;
    bk_filter *g = NULL;
    *rc = bk_variant_for(BK_VARIANT_EXPANDABLE)->adopt(&f->cfg, &a, &v, 1, 0, &g);
    if (*rc != BK_OK)
        bk_payload_free(&a, copy, (size_t)v.nbytes);
    return g;
}

/* The answers of keys tag 0 .. n-1: how many present, absent, refused
 * (BK_ECORRUPT); any other result fails. */
typedef struct answers {
    uint64_t yes, no, refused;
} answers;

static answers ask(const bk_filter *g, const char *tag, uint64_t n)
{
    answers a = {0, 0, 0};
    char key[64];
    for (uint64_t i = 0; i < n; i++) {
        const int r = bk_contains(g, key, tu_key(key, sizeof key, tag, i));
        ck_assert_msg(r == 0 || r == 1 || r == BK_ECORRUPT, "lookup %d", r);
        a.yes += r == 1;
        a.no += r == 0;
        a.refused += r == BK_ECORRUPT;
    }
    return a;
}

/* Crafted tables, checked lazily (an adopted table's slots are checked a
 * block at a time before a lookup or add first reads them, whole before a
 * doubling or bk_stats): any single bit flipped, the table either checks
 * out whole, and then answers every lookup and add, or bk_stats refuses it
 * and a key the table held is never answered absent (a lookup that reads
 * the broken part is refused, BK_ECORRUPT); bits past the last slot are
 * refused at once. Never a crash. */
START_TEST(a_crafted_table_is_refused_before_a_wrong_answer)
{
    bk_filter *f = tu_holding("variant=expandable capacity=500 fpr=0.01", "c", 0, 300);
    const bk_slice_view v = view_of(f);
    uint8_t *buf = malloc((size_t)v.nbytes);
    ck_assert_ptr_nonnull(buf);
    int rc;
    memcpy(buf, v.data, (size_t)v.nbytes);
    bk_filter *g = adopt_copy(f, buf, &rc);
    ck_assert_int_eq(rc, BK_OK); /* the untouched table */
    bk_filter_stats st;
    ck_assert_int_eq(bk_stats(g, &st), BK_OK);
    bk_free(g);
    uint64_t refused = 0, kept = 0, seed = tu_seed("expandable flips");
    for (int round = 0; round < 2000; round++) {
        memcpy(buf, v.data, (size_t)v.nbytes);
        const uint64_t bit = tu_next(&seed) % (v.nbytes * 8);
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        g = adopt_copy(f, buf, &rc);
        if (rc != BK_OK) { /* past the last slot: at once */
            ck_assert_int_eq(rc, BK_ECORRUPT);
            ck_assert_ptr_null(g);
            refused++;
            continue;
        }
        int drc;
        bk_filter *whole = adopt_copy(f, buf, &drc);
        ck_assert_int_eq(drc, BK_OK);
        const int src = bk_stats(whole, &st);
        bk_free(whole);
        const answers a = ask(g, "c", 300);
        if (src == BK_OK) { /* sound: every lookup answers, every add goes in */
            kept++;
            ck_assert_uint_eq(a.refused, 0);
            tu_add_keys(g, "new", 0, 50);
        } else {
            ck_assert_int_eq(src, BK_ECORRUPT);
            refused++;
            ck_assert_uint_eq(a.no, 0); /* a held key: present, or refused */
            ck_assert_int_eq(bk_stats(g, &st), BK_ECORRUPT);
            char key[64];
            for (uint64_t i = 0; i < 50; i++) {
                const int r = bk_add(g, key, tu_key(key, sizeof key, "new", i));
                ck_assert(r == 0 || r == 1 || r == BK_ECORRUPT);
            }
        }
        bk_free(g);
    }
    printf("[expandable flips] 2000 single-bit flips: %llu refused, %llu consistent\n",
           (unsigned long long)refused, (unsigned long long)kept);
    ck_assert_uint_gt(refused, 0);
    /* more keys than slots, refused at open (a count no figure may give):
     * the table borrowed, nothing taken */
    bk_slice_view kv = view_of(f);
    kv.keys = kv.m;
    g = NULL;
    ck_assert_int_eq(
        bk_variant_for(BK_VARIANT_EXPANDABLE)->adopt(&f->cfg, &f->alloc, &kv, 1, 1, &g),
        BK_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "keys in"));
    ck_assert_ptr_null(g);
    /* a trailing bit past the last slot */
    memcpy(buf, v.data, (size_t)v.nbytes);
    buf[v.nbytes - 1] |= 0x80;
    g = adopt_copy(f, buf, &rc);
    if (rc == BK_OK) /* the last slot reaches the last bit: nothing past it */
        bk_free(g);
    free(buf);
    bk_free(f);
}
END_TEST

/* Opening checks nothing slot by slot: in a table of 64 blocks with one
 * broken cluster in the middle, lookups elsewhere answer (every held key
 * present), those that read the broken block are refused (after the
 * first, at once), bk_stats and a doubling refuse the table, and the error
 * names the slot; the figures at hand (bk_stats_held) read no cell and
 * answer. */
START_TEST(a_broken_block_refuses_only_what_reads_it)
{
    const uint64_t n = 150000, homes = (uint64_t)1 << 18, slack = 1024;
    /* 2^18 homes hold 196608 keys at three quarters: one table, never grown */
    bk_filter *f = tu_holding("variant=expandable capacity=196608 fpr=0.01", "k", 0, n);
    const bk_slice_view v = view_of(f);
    uint8_t *buf = malloc((size_t)v.nbytes);
    ck_assert_ptr_nonnull(buf);
    memcpy(buf, v.data, (size_t)v.nbytes);
    /* slot i's bits start at i * w (w: the slot width whose homes and
     * slack make the table's size); the first slot from the middle on that
     * is occupied and at home gets its continuation bit (a run's first
     * entry marked as not first) */
    unsigned w = 4;
    while (((homes + slack) * w + 63) / 64 * 8 + 8 != v.nbytes)
        ck_assert_uint_lt(++w, 64);
    uint64_t i = homes / 2;
    for (;; i++) {
        const uint64_t at = i * w, word = buf[at / 8] | (uint64_t)buf[at / 8 + 1] << 8;
        const unsigned meta = (unsigned)(word >> (at % 8)) & 7u;
        if (meta == 1) { /* occupied, not continued, not shifted */
            buf[(at + 1) / 8] |= (uint8_t)(1u << ((at + 1) % 8));
            break;
        }
    }
    int rc;
    bk_filter *g = adopt_copy(f, buf, &rc);
    ck_assert_int_eq(rc, BK_OK);
    const answers a = ask(g, "k", n);
    printf("[expandable broken block] %llu of %llu lookups refused, the rest present\n",
           (unsigned long long)a.refused, (unsigned long long)n);
    ck_assert_uint_eq(a.no, 0);
    ck_assert_uint_gt(a.refused, 0);
    ck_assert_uint_lt(a.refused, n / 16);
    /* asked again, the broken block is refused at once: marked, not walked */
    char key[64];
    int refused = 0;
    for (uint64_t i = 0; i < n && !refused; i++)
        refused = bk_contains(g, key, tu_key(key, sizeof key, "k", i)) == BK_ECORRUPT;
    ck_assert(refused);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "failed their check"));
    /* the figures at hand read no cell: the keys and bytes, no refusal */
    bk_filter_stats st, held;
    ck_assert_int_eq(bk_stats(f, &st), BK_OK);
    ck_assert_int_eq(bk_stats_held(g, &held, sizeof held), BK_OK);
    ck_assert_uint_eq(held.keys, st.keys);
    ck_assert_uint_eq(held.bytes, st.bytes);
    /* and its state the map of blocks checked: 65 blocks of 4,096 slots,
     * a word of 64 bits for the first 64, another for the last, for the
     * sound and for the broken */
    ck_assert_uint_eq(held.state_bytes, st.state_bytes + 4 * 8);
    bk_slice_stats sl;
    ck_assert_int_eq(bk_slice_held(g, 0, &sl, sizeof sl), BK_OK);
    ck_assert_uint_eq(sl.bytes, st.bytes);
    ck_assert_int_eq(bk_stats(g, &st), BK_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "slot"));
    free(buf);
    tu_free_all(f, g);
}
END_TEST

Suite *expandable_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("expandable", "expandable", &tc);
    tcase_add_test(tc, grows_by_doubling_and_keeps_every_key_under_its_rate);
    tcase_add_test(tc, entries_with_no_bit_left_go_to_both_halves);
    tcase_add_test(tc, a_doubling_moves_clusters_of_every_length);
    tcase_add_test(tc, the_one_pass_check_agrees_with_the_walk);
    tcase_add_test(tc, the_rank_select_table_answers_as_the_slot_table);
    tcase_add_test(tc, the_rank_select_table_refuses_past_its_end);
    tcase_add_test(tc, files_and_mappings_take_the_grown_table);
    tcase_add_test(tc, a_table_read_back_saves_the_bytes_of_one_built);
    tcase_add_test(tc, max_bytes_refuses_a_doubling_and_changes_nothing);
    tcase_add_test(tc, a_batch_stopped_by_max_bytes_answers_every_key);
    tcase_add_test(tc, a_crafted_table_is_refused_before_a_wrong_answer);
    tcase_add_test(tc, a_broken_block_refuses_only_what_reads_it);
    return s;
}
