/*
 * test_siphash.c - SipHash-2-4 (64 and 128-bit) and SipHash-1-3 against every
 * reference vector in tests/data (key 00..0f, message 00 01 .. of length
 * 0..63), the internal word interface against the byte interface, and the
 * multi-key path (bk_sip_128_many: AVX-512 lanes where the CPU has them)
 * against one key at a time.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/hash.h"
#include "common/siphash.h"
#include "suites.h"
#include "testutil.h"

static const uint8_t ref_key[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

static int unhex(const char *s, uint8_t *out, size_t max)
{
    size_t n = 0;
    for (; s[0] && s[1] && n < max; s += 2) {
        unsigned v;
        if (sscanf(s, "%2x", &v) != 1)
            return -1;
        out[n++] = (uint8_t)v;
    }
    return (int)n;
}

/* Check every line of `path` whose variant is `variant` with fn; returns the
 * number of vectors checked. */
static int check_file(const char *path, const char *variant, size_t outlen,
                      void (*fn)(const uint8_t *, const void *, size_t, uint8_t *))
{
    FILE *fp = fopen(path, "r");
    ck_assert_msg(fp != NULL, "cannot open %s (run from the repository root)", path);
    char line[256];
    int checked = 0;
    while (fgets(line, sizeof line, fp)) {
        char name[32], hex[80];
        unsigned len;
        if (line[0] == '#' || sscanf(line, "%31s %u %79s", name, &len, hex) != 3)
            continue;
        if (strcmp(name, variant) != 0)
            continue;
        uint8_t msg[64], want[16], got[16];
        ck_assert_uint_lt(len, 64);
        for (unsigned i = 0; i < len; i++)
            msg[i] = (uint8_t)i;
        ck_assert_int_eq(unhex(hex, want, sizeof want), (int)outlen);
        fn(ref_key, len ? msg : NULL, len, got);
        ck_assert_msg(memcmp(got, want, outlen) == 0, "%s vector for length %u differs", variant,
                      len);
        checked++;
    }
    fclose(fp);
    return checked;
}

static void sip24_64(const uint8_t *k, const void *m, size_t n, uint8_t *o)
{
    bk_siphash24(k, m, n, o);
}
static void sip24_128(const uint8_t *k, const void *m, size_t n, uint8_t *o)
{
    bk_siphash24_128(k, m, n, o);
}
static void sip13_64(const uint8_t *k, const void *m, size_t n, uint8_t *o)
{
    bk_siphash13(k, m, n, o);
}

START_TEST(siphash24_64_reference_vectors)
{
    ck_assert_int_eq(check_file("tests/data/siphash24_vectors.txt", "sip24-64", 8, sip24_64), 64);
}
END_TEST

START_TEST(siphash24_128_reference_vectors)
{
    ck_assert_int_eq(check_file("tests/data/siphash24_vectors.txt", "sip24-128", 16, sip24_128),
                     64);
}
END_TEST

START_TEST(siphash13_64_reference_vectors)
{
    ck_assert_int_eq(check_file("tests/data/siphash13_vectors.txt", "sip13-64", 8, sip13_64), 64);
}
END_TEST

/* The digest filters use is the 128-bit output read as two little-endian words. */
START_TEST(filter_digest_is_the_128_bit_output)
{
    bk_hashkey k;
    bk_hashkey_init(&k, ref_key);
    for (size_t len = 0; len < 40; len++) {
        uint8_t msg[40], bytes[16];
        for (size_t i = 0; i < len; i++)
            msg[i] = (uint8_t)(i * 7 + 1);
        for (int alg = 0; alg < 2; alg++) {
            bk_hash h;
            bk_hash_key((bk_hash_alg)alg, &k, msg, len, &h);
            if (alg == BK_HASH_SIPHASH24)
                bk_siphash24_128(ref_key, msg, len, bytes);
            else
                bk_siphash13_128(ref_key, msg, len, bytes);
            uint64_t w0 = 0, w1 = 0;
            for (int i = 7; i >= 0; i--) {
                w0 = w0 << 8 | bytes[i];
                w1 = w1 << 8 | bytes[8 + i];
            }
            ck_assert_uint_eq(h.h1, w0);
            ck_assert_uint_eq(h.h2, w1);
        }
    }
}
END_TEST

/* SipHash-1-3-128 has no published vectors: check it is a different function
 * from 2-4, depends on every key byte, and is deterministic. */
START_TEST(siphash13_128_is_keyed_and_distinct)
{
    uint8_t a[16], b[16], key[16];
    memcpy(key, ref_key, 16);
    bk_siphash13_128(key, "bloomkit", 8, a);
    bk_siphash24_128(key, "bloomkit", 8, b);
    ck_assert(memcmp(a, b, 16) != 0);
    for (int i = 0; i < 16; i++) {
        key[i] ^= 1;
        bk_siphash13_128(key, "bloomkit", 8, b);
        ck_assert_msg(memcmp(a, b, 16) != 0, "key byte %d does not matter", i);
        key[i] ^= 1;
    }
    bk_siphash13_128(key, "bloomkit", 8, b);
    ck_assert(memcmp(a, b, 16) == 0);
}
END_TEST

/* Messages longer than 255 bytes wrap the length byte; hashing must still
 * separate lengths 1 and 257 of the same prefix and read past 64 bytes. */
START_TEST(long_messages_differ_by_length)
{
    uint8_t msg[300] = {0}, a[16], b[16];
    bk_siphash24_128(ref_key, msg, 1, a);
    bk_siphash24_128(ref_key, msg, 257, b);
    ck_assert(memcmp(a, b, 16) != 0);
    msg[299] = 1;
    bk_siphash24_128(ref_key, msg, 300, a);
    msg[299] = 0;
    bk_siphash24_128(ref_key, msg, 300, b);
    ck_assert(memcmp(a, b, 16) != 0);
}
END_TEST

/* The multi-key digests of n keys equal the one-key digests, for both round
 * counts; a failure names the seed, the key's index and length. */
static void check_many(const bk_sipkey *k, const void *const *msgs, const size_t *lens, size_t n,
                       uint64_t seed)
{
    uint64_t(*many)[2] = malloc(n * sizeof *many + 1);
    ck_assert_ptr_nonnull(many);
    for (unsigned c = 1; c <= 2; c++) {
        bk_sip_128_many(k, c, msgs, lens, n, many);
        for (size_t i = 0; i < n; i++) {
            uint64_t one[2] = {0, 0};
            (c == 1 ? bk_sip13_128_words : bk_sip24_128_words)(k, msgs[i], lens[i], one);
            ck_assert_msg(one[0] == many[i][0] && one[1] == many[i][1],
                          "SipHash-%u-%u, path %s, seed %llu: key %zu of %zu (length %zu) differs",
                          c, c == 1 ? 3 : 4, bk_sip_many_path(), (unsigned long long)seed, i, n,
                          lens[i]);
        }
    }
    free(many);
}

/* Every length 0..1,024 in every lane: eight keys of one length (key i in
 * lane i), each with its own bytes; then batches of mixed lengths and of
 * every size 1..40 (groups that lanes do not fill), and of close lengths. */
START_TEST(many_keys_equal_one_at_a_time)
{
    const uint64_t seed0 = tu_seed("many_keys_equal_one_at_a_time");
    uint64_t seed = seed0;
    const bk_sipkey k = {tu_next(&seed), tu_next(&seed)};
    enum { MAXLEN = 1024, LANES = 8 };
    uint8_t *buf = malloc(LANES * (MAXLEN + 1));
    ck_assert_ptr_nonnull(buf);
    for (size_t i = 0; i < LANES * (MAXLEN + 1); i++)
        buf[i] = (uint8_t)tu_next(&seed);
    const void *msgs[64];
    size_t lens[64];
    for (size_t len = 0; len <= MAXLEN; len++) {
        for (size_t l = 0; l < LANES; l++) {
            msgs[l] =
                buf + l * (MAXLEN + 1) + (MAXLEN - len) * (l & 1); /* odd lanes end the buffer */
            lens[l] = len;
        }
        check_many(&k, msgs, lens, LANES, seed0);
    }
    for (size_t n = 1; n <= 40; n++) {
        for (size_t i = 0; i < n; i++) {
            lens[i] = tu_next(&seed) % 200;
            msgs[i] = buf + tu_next(&seed) % (LANES * (MAXLEN + 1) - 200); /* any alignment */
        }
        check_many(&k, msgs, lens, n, seed0);
    }
    /* lengths within 40 bytes of each other (URLs): hashed in their own
     * order, a group's lanes ending at different words */
    for (size_t base = 0; base <= 400; base++) {
        const size_t n = 8 + base % 33;
        for (size_t i = 0; i < n; i++) {
            lens[i] = base + tu_next(&seed) % 40;
            msgs[i] = buf + tu_next(&seed) % (LANES * (MAXLEN + 1) - 440);
        }
        check_many(&k, msgs, lens, n, seed0);
    }
    free(buf);
}
END_TEST

/* Many random keys of random lengths (mostly URL-sized, some long), in
 * batches of the sizes the batch paths use. */
START_TEST(many_random_keys_equal_one_at_a_time)
{
    const uint64_t seed0 = tu_seed("many_random_keys_equal_one_at_a_time");
    uint64_t seed = seed0;
    const bk_sipkey k = {tu_next(&seed), tu_next(&seed)};
    const size_t N = tu_small() ? 1000000 : 2000000; /* of each round count */
    enum { POOL = 1 << 16 };
    uint8_t *pool = malloc(POOL + 2048);
    const void **msgs = malloc(N * sizeof *msgs);
    size_t *lens = malloc(N * sizeof *lens);
    ck_assert(pool && msgs && lens);
    for (size_t i = 0; i < POOL + 2048; i++)
        pool[i] = (uint8_t)tu_next(&seed);
    for (size_t i = 0; i < N; i++) {
        const uint64_t r = tu_next(&seed);
        lens[i] = r % 16 == 0 ? (r >> 8) % 2048 : (r >> 8) % 140;
        msgs[i] = pool + (r >> 24) % POOL;
    }
    const size_t sizes[] = {256, 512, 16, 7, 1000};
    for (size_t at = 0, s = 0; at < N; s = (s + 1) % 5) {
        const size_t n = sizes[s] < N - at ? sizes[s] : N - at;
        check_many(&k, msgs + at, lens + at, n, seed0);
        at += n;
    }
    free(pool);
    free(msgs);
    free(lens);
}
END_TEST

/* No byte past a key is read: keys that end where a page nobody may read
 * begins, of every length 0..64 and in every lane. */
START_TEST(many_keys_read_nothing_past_their_end)
{
    const long page = sysconf(_SC_PAGESIZE);
    uint8_t *map =
        mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(map != MAP_FAILED);
    ck_assert_int_eq(mprotect(map + page, (size_t)page, PROT_NONE), 0);
    for (long i = 0; i < page; i++)
        map[i] = (uint8_t)(i * 31 + 7);
    const bk_sipkey k = {1, 2};
    const void *msgs[24];
    size_t lens[24];
    for (size_t len = 0; len <= 64; len++) {
        for (size_t l = 0; l < 24; l++) {
            lens[l] = l % 3 ? len : (len + l) % 65;
            msgs[l] = map + page - lens[l];
        }
        check_many(&k, msgs, lens, 24, 0);
    }
    munmap(map, (size_t)page * 2);
}
END_TEST

/* The path taken is the one BLOOMKIT_SIMD names when the CPU has it, else
 * the fastest it has below that, the fastest of all for an unknown name; the
 * scalar path is always there. */
START_TEST(the_path_is_the_one_asked_for_or_the_best_below)
{
    const char *paths[8];
    const size_t n = bk_sip_many_paths(paths, 8);
    ck_assert_uint_ge(n, 1);
    ck_assert_str_eq(paths[n - 1], "scalar");
    const char *want = getenv("BLOOMKIT_SIMD");
    char *saved = want ? strdup(want) : NULL;
    int has = 0;
    for (size_t i = 0; i < n; i++)
        has |= want && strcmp(paths[i], want) == 0;
    ck_assert_str_eq(bk_simd_path(), has ? want : paths[0]);
    for (size_t i = 0; i < n; i++) {
        setenv("BLOOMKIT_SIMD", paths[i], 1);
        bk_sip_many_rechoose();
        ck_assert_str_eq(bk_simd_path(), paths[i]);
    }
    setenv("BLOOMKIT_SIMD", "avx9000", 1);
    bk_sip_many_rechoose();
    ck_assert_str_eq(bk_simd_path(), paths[0]);
    /* a path this CPU lacks: the next one below it that it has */
    static const char *const all[] = {"avx512", "avx2", "scalar"};
    for (size_t a = 0; a < 3; a++) {
        setenv("BLOOMKIT_SIMD", all[a], 1);
        bk_sip_many_rechoose();
        size_t below = a;
        for (int found = 0; !found; below++)
            for (size_t i = 0; i < n && !found; i++)
                found = strcmp(paths[i], all[below]) == 0;
        ck_assert_str_eq(bk_simd_path(), all[below - 1]);
    }
    if (saved)
        setenv("BLOOMKIT_SIMD", saved, 1);
    else
        unsetenv("BLOOMKIT_SIMD");
    free(saved);
    bk_sip_many_rechoose();
}
END_TEST

Suite *siphash_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("siphash", "vectors", &tc);
    tcase_add_test(tc, siphash24_64_reference_vectors);
    tcase_add_test(tc, siphash24_128_reference_vectors);
    tcase_add_test(tc, siphash13_64_reference_vectors);
    tcase_add_test(tc, filter_digest_is_the_128_bit_output);
    tcase_add_test(tc, siphash13_128_is_keyed_and_distinct);
    tcase_add_test(tc, long_messages_differ_by_length);
    tcase_add_test(tc, many_keys_equal_one_at_a_time);
    tcase_add_test(tc, many_random_keys_equal_one_at_a_time);
    tcase_add_test(tc, many_keys_read_nothing_past_their_end);
    tcase_add_test(tc, the_path_is_the_one_asked_for_or_the_best_below);
    return s;
}
