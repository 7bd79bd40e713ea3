/*
 * format.h - file format version 4, reading 1 to 3 too (specified in
 * docs/file-format.md): the header codec and every consistency rule a file
 * must meet (internal).
 *
 * Layout: a 128-byte fixed header, one 64-byte entry per slice, one 8-byte
 * generation number per slice (from version 3), then (version 4) the
 * filter's configuration as the key table's own config text, zero-padded to
 * a multiple of 8 bytes; then each slice's payload at the next multiple of
 * 64 bytes. Files are written in version 4 only: a new configuration key
 * needs no new field, and versions 1 to 3, whose parameters sit at fixed
 * offsets, are read (their codec is frozen). All integers little-endian;
 * doubles as their IEEE-754 bit pattern, little-endian. Two XXH3-64
 * checksums: one over the header (its own field read as zero), one over
 * the slices' payload bytes in order. Padding between them must be zero.
 */
#ifndef BK_IO_FORMAT_H
#define BK_IO_FORMAT_H

#include <stdint.h>

#include "../core/store.h"

#define BK_FILE_VERSION      4 /* the one written, and the newest read; 1 to 3 are read */
#define BK_FILE_VERSION_GEN  3 /* the first with generation numbers */
#define BK_FILE_VERSION_TEXT 4 /* the first with the config text */
#define BK_FILE_FLAG_DH      1 /* flags bit 0: classic probes by BK_PROBES_DH (always, version 1) */
#define BK_FILE_FLAG_BITS    2 /* bit 1 (version 3): bits pinned, = slice 0's m */
#define BK_FILE_FLAG_HASHES  4 /* bit 2 (version 3, with bit 1): hashes pinned, = slice 0's k */
#define BK_FILE_MAGIC_LEN    8
#define BK_FILE_FIXED        128          /* bytes of the fixed header */
#define BK_FILE_ENTRY        ((size_t)64) /* bytes of one slice entry */
#define BK_FILE_ALIGN        64 /* payloads start at multiples of this (cache line, mmap) */
#define BK_FILE_GEN          ((size_t)8) /* bytes of one slice's generation number (version 3) */
#define BK_FILE_MAX_SLICES   BK_SLICES_MAX
#define BK_FILE_CONFIG_MAX   1024 /* bytes of the config text (version 4): every key fits */
/* Verification reads payloads a chunk at a time: small enough to stay in
 * cache between the checksum and the census. */
#define BK_VERIFY_CHUNK ((size_t)1 << 20)
#define BK_FILE_HEADER_MAX                                                                         \
    (BK_FILE_FIXED + (BK_FILE_ENTRY + BK_FILE_GEN) * BK_FILE_MAX_SLICES + BK_FILE_CONFIG_MAX)

extern const uint8_t bk_file_magic[BK_FILE_MAGIC_LEN];

/* A decoded header. slices[i].data is unused here; nbytes is derived from m. */
typedef struct bk_file_header {
    uint32_t version;
    uint32_t header_size;
    bk_config cfg; /* has_key = 1 */
    uint32_t nslices;
    uint32_t config_len;                 /* version 4: bytes of config (0: bk_file_layout
                                          * formats cfg into it) */
    char config[BK_FILE_CONFIG_MAX + 1]; /* version 4: the config text */
    uint64_t file_size;
    uint64_t payload_checksum;
    bk_slice_view slices[BK_FILE_MAX_SLICES];
    uint64_t offsets[BK_FILE_MAX_SLICES];
} bk_file_header;

/* Payload bytes of m cells shaped c: whole 64-byte lines of c.block cells,
 * or the bytes m cells of c.bits bits fill. */
uint64_t bk_file_payload_bytes(uint64_t m, bk_cells c);
/* The cells of a payload of cfg's (known, validated) variant. */
bk_cells bk_file_cells(const bk_config *cfg);

/* The header size of n slices in version v with a config text of
 * config_len bytes (version 4). */
uint32_t bk_file_header_size(uint32_t version, uint32_t n, uint32_t config_len);

/* Fill header_size, the offsets, nbytes and file_size from version, cfg and
 * slices[].m (version 4: and the config text from cfg, unless config_len
 * is set). BK_ERANGE if the file would pass 2^62 bytes (offsets then stay
 * well inside off_t and the sums never overflow), or the text its room. */
int bk_file_layout(bk_file_header *h);

/* Write the header_size bytes of h, a version-4 header (with both
 * checksums), into buf. */
void bk_file_encode(const bk_file_header *h, uint8_t *buf);

/* Rewrite in buf, the header of a file of any version, what adds change:
 * each slice entry's counts, the payload checksum and the header
 * checksum, from h (decoded from that header); every other byte stays. */
void bk_file_patch_counts(const bk_file_header *h, uint8_t *buf);

/* Read the fixed header's framing from buf[0..BK_FILE_FIXED): magic, version
 * and a header size that fits a file of file_len bytes. Sets h->header_size.
 * BK_ECORRUPT with bk_last_error() detail. */
int bk_file_decode_fixed(const uint8_t *buf, uint64_t file_len, bk_file_header *h);

/* The file size the fixed header in buf[0..BK_FILE_FIXED) declares (read
 * after bk_file_decode_fixed accepted it; checked against the rest by
 * bk_file_decode). */
uint64_t bk_file_declared_size(const uint8_t *buf);

/* Decode and validate the whole header (buf holds h->header_size bytes):
 * checksum, every field's range, and consistency with each other and with a
 * file of file_len bytes. BK_ECORRUPT with detail. */
int bk_file_decode(const uint8_t *buf, uint64_t file_len, bk_file_header *h);

/* Streaming payload checksum and census, shared by save (over the bytes it
 * writes) and by the verifier. */
typedef struct bk_payload_sum bk_payload_sum;
bk_payload_sum *bk_payload_sum_new(const bk_allocator *a);
void bk_payload_sum_free(bk_payload_sum *ps, const bk_allocator *a);
/* Begin the census of a slice of m cells shaped c. */
void bk_payload_sum_slice(bk_payload_sum *ps, uint64_t m, bk_cells c);
/* Add the slice's next n payload bytes (any piece: a cell that straddles
 * two is read whole); accumulates non-zero cells into *set and saturated
 * counters into *saturated. */
void bk_payload_sum_feed(bk_payload_sum *ps, const uint8_t *p, uint64_t n, uint64_t *set,
                         uint64_t *saturated);
/* After a slice's last byte: the set bits that lie in no cell (beyond the
 * last, or in a line's padding). A sound payload has none. */
uint64_t bk_payload_sum_stray(const bk_payload_sum *ps);
uint64_t bk_payload_sum_digest(const bk_payload_sum *ps);

/* Verify the payloads data[0..nslices) against h: checksum and set/saturated
 * counts (a mismatch is BK_ECORRUPT when `strict`; otherwise the payload's
 * figures replace the header's: recovery of a writable mapping after a crash,
 * and bk_sync), and zero bits beyond m. BK_ENOMEM, BK_ECORRUPT with detail. */
int bk_file_verify_payloads(bk_file_header *h, uint8_t *const *data, int strict,
                            const bk_allocator *a);

/* Where verification reads slice i's payload from offset off: at most want
 * (1 MiB: cache-sized, so checksum and census read warm bytes) bytes at *p;
 * returns how many (> 0), or a negative BK_E* code with detail set. */
typedef int64_t (*bk_payload_reader)(void *ctx, uint32_t i, uint64_t off, uint64_t want,
                                     const uint8_t **p);

/* bk_file_verify_payloads over payloads a reader hands over chunk by chunk
 * (a mapping verified with pread instead of page faults: mmap.c). The one
 * verification loop. */
int bk_file_verify_from(bk_file_header *h, bk_payload_reader read, void *ctx, int strict,
                        const bk_allocator *a);

/* For tests and fuzzers, which must reach every check behind the
 * checksums (anyone can recompute them: they catch accidents, not
 * attacks): make the file image buf[0..len) pass them. The header
 * checksum is recomputed; then, when the header decodes and the payloads
 * end where it says, each slice's set and saturated counts and the payload
 * checksum as the bytes give them, and the header checksum again. 1 when
 * the whole image was sealed, 0 when only its header checksum (or nothing)
 * could be. Changes nothing else. */
int bk_file_reseal(uint8_t *buf, size_t len);

/* 1 when p[0..n) is all zero. */
int bk_file_is_zero(const uint8_t *p, uint64_t n);

#endif
