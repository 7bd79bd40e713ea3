/*
 * test_io.c - save/load round trips of every variant, corruption always caught
 * (every byte flipped, every truncation, extension), and bad input (missing
 * file, directory, unreadable file, full disk) returning errors that leave the
 * existing file untouched and no temporary behind.
 */
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "io/format.h"
#include "suites.h"
#include "testutil.h"

/* A small filter of variant v with some keys (a chain grows to 3 slices),
 * one of them added 16 times (a counting filter's counters saturate). */
static bk_filter *small_filter(unsigned v)
{
    char key[32];
    bk_filter *f = tu_filterf("variant=%s capacity=%llu fpr=0.05", tu_variant(v),
                              (unsigned long long)tu_capacity_for(v, 40, 400));
    for (uint64_t i = 0; i < 150; i++)
        ck_assert_int_ge(bk_add(f, key, tu_key(key, sizeof key, "s", i)), 0);
    for (int i = 0; i < 16; i++)
        bk_add(f, "hot", 3);
    return f;
}

START_TEST(round_trip_every_variant)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "f.bkf");
    for (unsigned v = 0; v < tu_nvariants(); v++) {
        bk_filter *f = small_filter(v), *g = NULL;
        ck_assert_int_eq(bk_save(f, path), BK_OK);
        struct stat st;
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_int_eq(st.st_mode & 0777, 0600);
        ck_assert_int_eq(bk_load(path, &g), BK_OK);
        ck_assert_msg(tu_same_filter(f, g), "%s differs after load", tu_variant(v));
        bk_filter_stats a, b;
        bk_stats(f, &a);
        bk_stats(g, &b);
        ck_assert_uint_eq(a.keys, b.keys);
        ck_assert_uint_eq(a.saturated, b.saturated);
        ck_assert_uint_eq(a.slices, b.slices);
        /* The loaded filter keeps working: adds, growth, removal. */
        char key[32];
        for (uint64_t i = 0; i < 200; i++)
            ck_assert_int_ge(bk_add(g, key, tu_key(key, sizeof key, "more", i)), 0);
        if (bk_variant_removes((bk_variant)v))
            ck_assert_int_eq(bk_remove(g, key, tu_key(key, sizeof key, "more", 3)), BK_OK);
        ck_assert_int_eq(bk_save(g, path), BK_OK); /* over an existing file */
        tu_assert_file_holds(path, g, tu_variant(v));
        bk_free(f);
        bk_free(g);
    }
    ck_assert_int_eq(tu_count_files(dir), 1); /* no temporaries left */
    free(path);
    tu_rmtree(dir);
}
END_TEST

/* A filter in memory is the file, byte for byte, for every variant:
 * bk_save_size is the file's size, bk_save_buffer writes the
 * file's bytes and nothing past them, and bk_load_buffer reads back a filter
 * that answers as the original, from a buffer or from a file's contents. */
START_TEST(buffers_hold_the_file_format)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "f.bkf");
    for (unsigned v = 0; v < tu_nvariants(); v++) {
        bk_filter *f = small_filter(v);
        ck_assert_int_eq(bk_save(f, path), BK_OK);
        size_t flen;
        uint8_t *file = tu_read_file(path, &flen);
        uint64_t size = 0;
        ck_assert_int_eq(bk_save_size(f, &size), BK_OK);
        ck_assert_uint_eq(size, flen);
        uint8_t *buf = malloc(flen + 64);
        ck_assert_ptr_nonnull(buf);
        memset(buf, 0xa5, flen + 64);
        size_t len = 0;
        /* one byte short: BK_ERANGE, the size needed, nothing written */
        ck_assert_int_eq(bk_save_buffer(f, buf, flen - 1, &len), BK_ERANGE);
        ck_assert_uint_eq(len, flen);
        for (size_t i = 0; i < flen + 64; i++)
            ck_assert_uint_eq(buf[i], 0xa5);
        ck_assert_int_eq(bk_save_buffer(f, buf, flen + 64, &len), BK_OK);
        ck_assert_uint_eq(len, flen);
        ck_assert_msg(memcmp(buf, file, flen) == 0, "variant %d: buffer differs from the file", v);
        for (size_t i = flen; i < flen + 64; i++)
            ck_assert_uint_eq(buf[i], 0xa5);
        bk_filter *g = NULL, *h = NULL;
        ck_assert_int_eq(bk_load_buffer(buf, len, &g), BK_OK);
        ck_assert_msg(tu_same_filter(f, g), "variant %d: differs after bk_load_buffer", v);
        ck_assert_int_eq(bk_load_buffer(file, flen, &h), BK_OK); /* a file's contents */
        ck_assert_msg(tu_same_filter(f, h), "variant %d: file contents load differently", v);
        free(buf); /* the loaded filters own their memory */
        char key[32];
        for (uint64_t i = 0; i < 100; i++)
            ck_assert_int_ge(bk_add(g, key, tu_key(key, sizeof key, "later", i)), 0);
        ck_assert_int_eq(tu_count_present(g, "later", 0, 100), 100);
        free(file);
        tu_free_all(f, g, h);
    }
    free(path);
    tu_rmtree(dir);
}
END_TEST

START_TEST(buffer_arguments_are_checked)
{
    bk_filter *f = tu_filter("capacity=100"), *g = (bk_filter *)1;
    uint8_t buf[4096];
    size_t len = 7;
    uint64_t size;
    ck_assert_int_eq(bk_save_size(NULL, &size), BK_EINVAL);
    ck_assert_int_eq(bk_save_size(f, NULL), BK_EINVAL);
    ck_assert_int_eq(bk_save_buffer(NULL, buf, sizeof buf, &len), BK_EINVAL);
    ck_assert_int_eq(bk_save_buffer(f, NULL, sizeof buf, &len), BK_EINVAL);
    ck_assert_int_eq(bk_save_buffer(f, buf, sizeof buf, NULL), BK_EINVAL);
    ck_assert_uint_eq(len, 7);
    ck_assert_int_eq(bk_load_buffer(NULL, 10, &g), BK_EINVAL);
    ck_assert_ptr_null(g);
    ck_assert_int_eq(bk_load_buffer(buf, sizeof buf, NULL), BK_EINVAL);
    ck_assert_int_eq(bk_load_buffer(buf, 0, &g), BK_ECORRUPT);
    ck_assert_ptr_null(g);
    bk_free(f);
}
END_TEST

/* How damaged bytes are read: bk_load, bk_open_mmap, bk_load_buffer. */
enum { BY_LOAD, BY_MMAP, BY_BUFFER, BY_COUNT };
static const char *const by_name[] = {"load", "mmap", "buffer"};

/* Load `bytes` from a file (or, BY_BUFFER, from memory: a copy of exactly
 * len bytes, so that a read past them is caught by ASan): either
 * BK_ECORRUPT, or a filter identical to orig. */
static void expect_corrupt_or_same(const char *path, const uint8_t *bytes, size_t len,
                                   const bk_filter *orig, int how, const char *what)
{
    bk_filter *g = NULL;
    int rc;
    if (how == BY_BUFFER) {
        uint8_t *exact = malloc(len ? len : 1);
        ck_assert_ptr_nonnull(exact);
        memcpy(exact, bytes, len);
        rc = bk_load_buffer(exact, len, &g);
        free(exact);
    } else {
        tu_write_file(path, bytes, len);
        rc = how == BY_MMAP ? bk_open_mmap(path, BK_MAP_READONLY, &g) : bk_load(path, &g);
    }
    if (rc == BK_OK) {
        ck_assert_msg(tu_same_filter(orig, g), "%s: loaded but answers differently", what);
        bk_free(g);
        return;
    }
    ck_assert_msg(rc == BK_ECORRUPT, "%s: %s (%s)", what, bk_err_name(rc), bk_last_error());
    ck_assert_ptr_null(g);
    ck_assert_msg(bk_last_error()[0] != '\0', "%s: no detail", what);
}

START_TEST(every_flipped_byte_and_truncation_is_caught)
{
    const unsigned v = (unsigned)_i % tu_nvariants(), how = (unsigned)_i / tu_nvariants();
    char *dir = tu_tmpdir(), *good = tu_path(dir, "good.bkf"), *bad = tu_path(dir, "bad.bkf");
    bk_filter *f = small_filter(v);
    ck_assert_int_eq(bk_save(f, good), BK_OK);
    size_t len;
    uint8_t *bytes = tu_read_file(good, &len);
    uint8_t *copy = malloc(len + 1);
    ck_assert_ptr_nonnull(copy);
    char what[96];
    unsigned caught = 0;
    for (size_t i = 0; i < len; i++)
        for (int pattern = 0; pattern < 2; pattern++) {
            memcpy(copy, bytes, len);
            copy[i] ^= pattern ? 0xff : 0x01;
            snprintf(what, sizeof what, "%s byte %zu ^ %s", tu_variant(v), i,
                     pattern ? "ff" : "01");
            expect_corrupt_or_same(bad, copy, len, f, how, what);
            caught++;
        }
    for (size_t n = 0; n < len; n++) {
        snprintf(what, sizeof what, "%s truncated to %zu", tu_variant(v), n);
        expect_corrupt_or_same(bad, bytes, n, f, how, what);
    }
    memcpy(copy, bytes, len);
    copy[len] = 0;
    expect_corrupt_or_same(bad, copy, len + 1, f, how, "one byte longer");
    fprintf(stderr, "[corruption %s %s] %zu-byte file: %u flips, %zu truncations checked\n",
            tu_variant(v), by_name[how], len, caught, len);
    free(bytes);
    free(copy);
    bk_free(f);
    free(good);
    free(bad);
    tu_rmtree(dir);
}
END_TEST

START_TEST(specific_corruptions_are_named)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "f.bkf");
    bk_filter *f = small_filter(0), *g = NULL;
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    size_t len;
    uint8_t *b = tu_read_file(path, &len);
    struct {
        size_t off;
        uint8_t val;
        const char *says;
    } cases[] = {{0, 'X', "bad magic"},
                 {8, BK_FILE_VERSION + 1, "unsupported format version"},
                 {16, 7, "header checksum"},
                 {0, 0xff, "payload checksum"}};
    uint32_t header_size;
    memcpy(&header_size, b + 12, 4); /* little-endian, as the hosts the tests run on */
    cases[3].off = (header_size + 63) / 64 * 64 + 8; /* inside slice 0's payload */
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const uint8_t saved = b[cases[c].off];
        b[cases[c].off] = cases[c].val != saved ? cases[c].val : (uint8_t)~saved;
        tu_write_file(path, b, len);
        ck_assert_int_eq(bk_load(path, &g), BK_ECORRUPT);
        ck_assert_msg(strstr(bk_last_error(), cases[c].says), "'%s' lacks '%s'", bk_last_error(),
                      cases[c].says);
        b[cases[c].off] = saved;
    }
    tu_write_file(path, b, len - 1);
    ck_assert_int_eq(bk_load(path, &g), BK_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "header says"));
    tu_write_file(path, b, 10);
    ck_assert_int_eq(bk_load(path, &g), BK_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "shorter than"));
    free(b);
    bk_free(f);
    free(path);
    tu_rmtree(dir);
}
END_TEST

START_TEST(bad_paths_are_errors)
{
    char *dir = tu_tmpdir(), *missing = tu_path(dir, "missing.bkf");
    bk_filter *g = (bk_filter *)dir;
    ck_assert_int_eq(bk_load(missing, &g), BK_EIO);
    ck_assert_ptr_null(g);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "No such file"));
    ck_assert_int_eq(bk_load(dir, &g), BK_EIO);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "directory"));
    ck_assert_int_eq(bk_open_mmap(dir, 0, &g), BK_EIO);
    ck_assert_int_eq(bk_load(NULL, &g), BK_EINVAL);
    ck_assert_int_eq(bk_load(missing, NULL), BK_EINVAL);
    ck_assert_int_eq(bk_open_mmap(missing, 0x80, &g), BK_EINVAL);
    bk_filter *f = small_filter(0);
    ck_assert_int_eq(bk_save(NULL, missing), BK_EINVAL);
    ck_assert_int_eq(bk_save(f, NULL), BK_EINVAL);
    ck_assert_int_eq(bk_save(f, ""), BK_EINVAL);
    ck_assert_int_eq(bk_save(f, dir), BK_EIO); /* rename over a directory fails */
    char *nodir = tu_path(dir, "no/such/dir.bkf");
    ck_assert_int_eq(bk_save(f, nodir), BK_EIO);
    ck_assert_int_eq(bk_sync(f), BK_EINVAL); /* not mapped */
    ck_assert_int_eq(tu_count_files(dir), 0);
    bk_free(f);
    free(missing);
    free(nodir);
    tu_rmtree(dir);
}
END_TEST

/* A file without read permission: as root, drop to an unprivileged user in a
 * child, since root reads anything. */
START_TEST(unreadable_file_is_an_error)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "f.bkf");
    chmod(dir, 0755);
    bk_filter *f = small_filter(1);
    ck_assert_int_eq(bk_save(f, path), BK_OK);
    chmod(path, 0200);
    const pid_t pid = fork();
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(3);
        bk_filter *g = NULL;
        const int rc = bk_load(path, &g);
        _exit(rc == BK_EIO && g == NULL && strstr(bk_last_error(), "Permission denied") ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    bk_free(f);
    free(path);
    tu_rmtree(dir);
}
END_TEST

/* A full disk, simulated by a small RLIMIT_FSIZE in a child: BK_EIO, the old
 * file byte-identical, no temporary left. */
START_TEST(full_disk_leaves_old_file)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "f.bkf");
    bk_filter *small = small_filter(0);
    ck_assert_int_eq(bk_save(small, path), BK_OK);
    size_t len_before;
    uint8_t *before = tu_read_file(path, &len_before);
    const pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        bk_filter *big = tu_filter("capacity=1000000 fpr=0.01"); /* ~1.2 MB */
        const struct rlimit lim = {64 * 1024, 64 * 1024};
        setrlimit(RLIMIT_FSIZE, &lim);
        const int rc = bk_save(big, path);
        _exit(rc == BK_EIO && strstr(bk_last_error(), "File too large") ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    size_t len_after;
    uint8_t *after = tu_read_file(path, &len_after);
    ck_assert_uint_eq(len_before, len_after);
    ck_assert(memcmp(before, after, len_before) == 0);
    ck_assert_int_eq(tu_count_files(dir), 1);
    free(before);
    free(after);
    bk_free(small);
    free(path);
    tu_rmtree(dir);
}
END_TEST

static int ticks;
static uint64_t last_done, last_total;
static int count_ticks(uint64_t done, uint64_t total, void *arg)
{
    ticks++;
    ck_assert_uint_ge(done, last_done); /* forward only */
    last_done = done;
    last_total = total;
    return arg != NULL; /* arg: stop at the first report */
}

/* bk_save_progress reports the bytes written of the file's size, ends at
 * the total, and when told to stop leaves the path as it was. */
START_TEST(a_save_reports_its_progress_and_can_be_stopped)
{
    char *dir = tu_tmpdir(), *path = tu_path(dir, "big.bkf");
    bk_filter *f = tu_filter("variant=standard capacity=60000000 fpr=0.01"); /* ~72 MiB */
    uint64_t size;
    ck_assert_int_eq(bk_save_size(f, &size), BK_OK);
    ck_assert_uint_gt(size, (uint64_t)64 << 20);
    ticks = 0, last_done = 0;
    ck_assert_int_eq(bk_save_progress(f, path, count_ticks, NULL), BK_OK);
    ck_assert_int_ge(ticks, 2); /* past 64 MiB, and the end */
    ck_assert_uint_eq(last_done, size);
    ck_assert_uint_eq(last_total, size);
    ck_assert_int_eq(tu_count_files(dir), 1);
    /* stopped: BK_ECANCELED, the file as it was, no temporary left */
    ck_assert_int_eq(bk_add(f, "new", 3), 1);
    ticks = 0, last_done = 0;
    ck_assert_int_eq(bk_save_progress(f, path, count_ticks, &ticks), BK_ECANCELED);
    ck_assert_ptr_nonnull(strstr(bk_last_error(), "stopped after"));
    ck_assert_int_eq(tu_count_files(dir), 1);
    bk_filter *g;
    ck_assert_int_eq(bk_load(path, &g), BK_OK);
    ck_assert_int_eq(bk_contains(g, "new", 3), 0);
    bk_free(g);
    bk_free(f);
    free(path);
    tu_rmtree(dir);
}
END_TEST

/* Every figure of bk_stats is the same after every way a filter travels
 * (a file, a buffer, a mapping), for every variant and every shape of cell:
 * bits, 4-bit counters, cuckoo fingerprints of 4 to 16 bits in buckets of 2
 * and 4, classic and blocked. Each variant owns the meaning of its cells: a
 * 4-bit fingerprint of 15 is not a saturated counter (the file layer once
 * counted 311 of them in a cuckoo filter that had none). */
static void same_figures(const bk_filter_stats *a, const bk_filter_stats *b, const char *cfg,
                         const char *how)
{
#define SAME(field) ck_assert_msg(a->field == b->field, "%s, %s: " #field " differs", cfg, how)
    ck_assert_msg(strcmp(a->variant, b->variant) == 0 && strcmp(a->hash, b->hash) == 0, "%s, %s",
                  cfg, how);
    SAME(capacity);
    SAME(fpr);
    SAME(bits);
    SAME(bytes);
    SAME(k);
    SAME(keys);
    SAME(set_bits);
    SAME(fill);
    SAME(est_cardinality);
    SAME(est_fpr);
    SAME(slices);
    SAME(saturated);
    SAME(model_fpr);
    SAME(redated_from_ms);
    SAME(redated_to_ms);
#undef SAME
}

START_TEST(every_figure_survives_every_way_of_travel)
{
    static const char *const shapes[] = {
        "variant=standard capacity=3000 fpr=0.05",
        "variant=standard capacity=3000 fpr=0.05 layout=blocked",
        "variant=counting capacity=3000 fpr=0.05",
        "variant=counting capacity=3000 fpr=0.05 layout=blocked",
        "variant=scalable capacity=500 fpr=0.05",
        "variant=scalable capacity=500 fpr=0.05 layout=blocked",
        "variant=window window=1h capacity=3000 fpr=0.05",
        "variant=cuckoo capacity=3000 fpr=0.1 fingerprint=4 bucket=4",
        "variant=cuckoo capacity=3000 fpr=0.1 fingerprint=4 bucket=2",
        "variant=cuckoo capacity=3000 fpr=0.1 fingerprint=4 bucket=4 layout=blocked",
        "variant=cuckoo capacity=3000 fpr=0.01 fingerprint=8 bucket=4",
        "variant=cuckoo capacity=3000 fpr=0.01 fingerprint=12 bucket=2 layout=blocked",
        "variant=cuckoo capacity=3000 fpr=0.001 fingerprint=16 bucket=4",
    };
    char *dir = tu_tmpdir(), *path = tu_path(dir, "f.bkf");
    for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
        bk_filter *f = tu_filter(shapes[c]);
        char key[32];
        for (uint64_t i = 0; i < 3000; i++)
            (void)bk_add(f, key, tu_key(key, sizeof key, "fig", i)); /* a full cuckoo refuses */
        for (int i = 0; i < 20; i++)
            (void)bk_add(f, "hot", 3); /* counting: counters stuck at 15 */
        bk_filter_stats a, b;
        ck_assert_int_eq(bk_stats(f, &a), BK_OK);
        if (strstr(shapes[c], "cuckoo"))
            ck_assert_uint_eq(a.saturated, 0);
        if (strstr(shapes[c], "counting"))
            ck_assert_uint_gt(a.saturated, 0);
        /* a buffer */
        uint64_t size;
        ck_assert_int_eq(bk_save_size(f, &size), BK_OK);
        uint8_t *buf = malloc((size_t)size);
        size_t len;
        ck_assert_int_eq(bk_save_buffer(f, buf, (size_t)size, &len), BK_OK);
        bk_filter *g = NULL;
        ck_assert_int_eq(bk_load_buffer(buf, len, &g), BK_OK);
        ck_assert_int_eq(bk_stats(g, &b), BK_OK);
        same_figures(&a, &b, shapes[c], "bytes");
        bk_free(g);
        free(buf);
        /* a file, loaded and mapped (read-only and writable) */
        ck_assert_int_eq(bk_save(f, path), BK_OK);
        ck_assert_int_eq(bk_load(path, &g), BK_OK);
        ck_assert_int_eq(bk_stats(g, &b), BK_OK);
        same_figures(&a, &b, shapes[c], "file");
        bk_free(g);
        for (unsigned flags = 0; flags < 2; flags++) {
            ck_assert_int_eq(bk_open_mmap(path, flags ? BK_MAP_WRITE : BK_MAP_READONLY, &g), BK_OK);
            ck_assert_int_eq(bk_stats(g, &b), BK_OK);
            same_figures(&a, &b, shapes[c], flags ? "mmap write" : "mmap");
            bk_free(g);
        }
        bk_free(f);
    }
    free(path);
    tu_rmtree(dir);
}
END_TEST

Suite *io_suite(void)
{
    TCase *tc;
    Suite *s = tu_suite("io", "files", &tc);
    tcase_add_test(tc, round_trip_every_variant);
    tcase_add_test(tc, every_figure_survives_every_way_of_travel);
    tcase_add_loop_test(tc, every_flipped_byte_and_truncation_is_caught, 0,
                        (int)tu_nvariants() * BY_COUNT);
    tcase_add_test(tc, buffers_hold_the_file_format);
    tcase_add_test(tc, buffer_arguments_are_checked);
    tcase_add_test(tc, specific_corruptions_are_named);
    tcase_add_test(tc, bad_paths_are_errors);
    tcase_add_test(tc, a_save_reports_its_progress_and_can_be_stopped);
    tcase_add_test(tc, unreadable_file_is_an_error);
    tcase_add_test(tc, full_disk_leaves_old_file);
    return s;
}
