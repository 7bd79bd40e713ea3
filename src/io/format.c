/*
 * format.c - encode, decode and validate the file format (versions 1 to 3,
 * format.h).
 *
 * Validation order matters for safety: the framing (magic, version, header
 * size within the file) is checked before the rest of the header is read; the
 * header checksum before any field is trusted; every field's range and the
 * layout's consistency before any payload offset is used. Payload offsets are
 * never read from the file and trusted: they are recomputed from m and must
 * equal what the file says.
 */
#include "format.h"

#include <math.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "../common/alloc.h"
#include "../common/bits.h"
#include "../core/config.h"
#include "../common/debug.h"
#include "../common/hash.h"
#include "../common/error.h"
#include "../common/sizing.h"

/* PNG's trick: a high-bit byte (7-bit transports), CR LF (newline
 * conversion), ^Z (DOS type), LF. */
const uint8_t bk_file_magic[BK_FILE_MAGIC_LEN] = {0x89, 'B', 'K', 'F', '\r', '\n', 0x1a, '\n'};

/* Offsets in the fixed header. */
enum {
    H_MAGIC = 0,
    H_VERSION = 8,
    H_HEADER_SIZE = 12,
    H_VARIANT = 16,
    H_HASH = 17,
    H_LAYOUT = 18,
    H_FLAGS = 19,
    H_NSLICES = 20,
    H_KEY = 24,
    H_CAPACITY = 40,
    H_FPR = 48,
    H_GROWTH = 56,
    H_TIGHTENING = 64,
    H_FILE_SIZE = 72,
    H_PAYLOAD_SUM = 80,
    H_RESERVED = 88,    /* 32 bytes of zero in versions 1 and 2; in version 3: */
    H_WINDOW_MS = 88,   /*   window filters: window (ms), else 0 */
    H_GENERATIONS = 96, /*   window filters: G, else 0 */
    H_REFRESH = 100,    /*   window filters: refresh (0 or 1), else 0 */
    H_PAD3 = 101,       /*   3 bytes of zero */
    H_MAX_BYTES = 104,  /*   scalable and window filters: max_bytes (0: none), else 0 */
    H_RESERVED3 = 112,  /*   8 bytes of zero */
    H_HEADER_SUM = 120,
    /* Version 4: the parameters are the config text after the tables; of
     * the fields above only the framing, flags, slice count, sizes and
     * checksums remain, and every other byte is zero. */
    H_CONFIG_LEN = 24 /* bytes of the config text */
};

/* Offsets in a slice entry. */
enum {
    S_M = 0,
    S_K = 8,
    S_RESERVED = 12,
    S_CAPACITY = 16,
    S_FPR = 24,
    S_SET = 32,
    S_KEYS = 40,
    S_SATURATED = 48,
    S_OFFSET = 56
};

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void putf64(uint8_t *p, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    put64(p, v);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static double getf64(const uint8_t *p)
{
    const uint64_t v = get64(p);
    double d;
    memcpy(&d, &v, 8);
    return d;
}

static uint64_t align_up(uint64_t x)
{
    return (x + BK_FILE_ALIGN - 1) / BK_FILE_ALIGN * BK_FILE_ALIGN;
}

uint64_t bk_file_payload_bytes(uint64_t m, bk_cells c)
{
    /* m <= 2^56 and bits <= 64: no overflow */
    return c.block ? (m + c.block - 1) / c.block * BK_BLOCK_BYTES : bk_bits_to_bytes(m * c.bits);
}

bk_cells bk_file_cells(const bk_config *cfg)
{
    bk_variant_shape shape = {{0, 0, 0}, 0, 0, 0};
    bk_variant_shape_of(cfg, &shape); /* cfg's variant is known: it was validated */
    return shape.cells;
}

/* Bytes of the config text's place in the header: its length up to a
 * multiple of 8. */
static uint32_t text_room(uint32_t len)
{
    return (len + 7u) & ~7u;
}

uint32_t bk_file_header_size(uint32_t version, uint32_t n, uint32_t config_len)
{
    /* at most BK_FILE_HEADER_MAX: it fits */
    return (uint32_t)(BK_FILE_FIXED +
                      (BK_FILE_ENTRY + (version >= BK_FILE_VERSION_GEN ? BK_FILE_GEN : 0)) * n +
                      (version >= BK_FILE_VERSION_TEXT ? text_room(config_len) : 0));
}

int bk_file_layout(bk_file_header *h)
{
    const bk_cells cb = bk_file_cells(&h->cfg);
    if (h->version >= BK_FILE_VERSION_TEXT && !h->config_len) { /* a header being written */
        const int n = bk_config_format(&h->cfg, 1, h->config, sizeof h->config);
        if (n < 0 || (size_t)n >= sizeof h->config)
            return BK_ERANGE;
        h->config_len = (uint32_t)n;
    }
    h->header_size = bk_file_header_size(h->version, h->nslices, h->config_len);
    uint64_t off = align_up(h->header_size);
    for (uint32_t i = 0; i < h->nslices; i++) {
        h->slices[i].nbytes = bk_file_payload_bytes(h->slices[i].m, cb);
        h->offsets[i] = off;
        off += h->slices[i].nbytes;
        if (off > (UINT64_C(1) << 62))
            return BK_ERANGE;
        h->file_size = off;
        off = align_up(off);
    }
    return BK_OK;
}

/* XXH3-64 of the header with its checksum field read as zero. */
static uint64_t header_checksum(const uint8_t *buf, uint32_t header_size)
{
    static const uint8_t zero[8] = {0};
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, buf, H_HEADER_SUM);
    XXH3_64bits_update(&st, zero, 8);
    XXH3_64bits_update(&st, buf + BK_FILE_FIXED, header_size - BK_FILE_FIXED);
    return XXH3_64bits_digest(&st);
}

/* The counts of every slice entry, the payload checksum and the header
 * checksum: what changes in a file's header as keys are added. */
static void put_counts(const bk_file_header *h, uint8_t *buf)
{
    for (uint32_t i = 0; i < h->nslices; i++) {
        uint8_t *e = buf + BK_FILE_FIXED + BK_FILE_ENTRY * i;
        put64(e + S_SET, h->slices[i].set_bits);
        put64(e + S_KEYS, h->slices[i].keys);
        put64(e + S_SATURATED, h->slices[i].saturated);
        if (h->version >= BK_FILE_VERSION_GEN) /* a variant's own word changes too */
            put64(buf + BK_FILE_FIXED + BK_FILE_ENTRY * h->nslices + BK_FILE_GEN * i,
                  (uint64_t)h->slices[i].gen);
    }
    put64(buf + H_PAYLOAD_SUM, h->payload_checksum);
    put64(buf + H_HEADER_SUM, header_checksum(buf, h->header_size));
}

void bk_file_encode(const bk_file_header *h, uint8_t *buf)
{
    BK_ASSERT(h->version == BK_FILE_VERSION); /* older versions are read, never written */
    memset(buf, 0, h->header_size);
    memcpy(buf + H_MAGIC, bk_file_magic, BK_FILE_MAGIC_LEN);
    put32(buf + H_VERSION, h->version);
    put32(buf + H_HEADER_SIZE, h->header_size);
    buf[H_FLAGS] = (uint8_t)(h->slices[0].probes == BK_PROBES_DH ? BK_FILE_FLAG_DH : 0);
    put32(buf + H_NSLICES, h->nslices);
    put32(buf + H_CONFIG_LEN, h->config_len);
    put64(buf + H_FILE_SIZE, h->file_size);
    uint8_t *gens = buf + BK_FILE_FIXED + BK_FILE_ENTRY * h->nslices;
    for (uint32_t i = 0; i < h->nslices; i++) {
        uint8_t *e = buf + BK_FILE_FIXED + BK_FILE_ENTRY * i;
        const bk_slice_view *s = &h->slices[i];
        put64(e + S_M, s->m);
        put32(e + S_K, s->k);
        put64(e + S_CAPACITY, s->capacity);
        putf64(e + S_FPR, s->fpr);
        put64(e + S_OFFSET, h->offsets[i]);
        put64(gens + BK_FILE_GEN * i, (uint64_t)s->gen);
    }
    memcpy(gens + BK_FILE_GEN * h->nslices, h->config, h->config_len);
    put_counts(h, buf);
}

void bk_file_patch_counts(const bk_file_header *h, uint8_t *buf)
{
    put_counts(h, buf);
}

int bk_file_decode_fixed(const uint8_t *buf, uint64_t file_len, bk_file_header *h)
{
    if (file_len < BK_FILE_FIXED)
        return bk_fail(BK_ECORRUPT, "file is %llu bytes, shorter than the %d-byte header",
                       (unsigned long long)file_len, BK_FILE_FIXED);
    if (memcmp(buf, bk_file_magic, BK_FILE_MAGIC_LEN) != 0)
        return bk_fail(BK_ECORRUPT, "not a bloomkit filter file (bad magic)");
    h->version = get32(buf + H_VERSION);
    if (h->version < 1 || h->version > BK_FILE_VERSION)
        return bk_fail(BK_ECORRUPT, "unsupported format version %u (this library reads 1 to %d)",
                       h->version, BK_FILE_VERSION);
    h->header_size = get32(buf + H_HEADER_SIZE);
    h->nslices = get32(buf + H_NSLICES);
    h->config_len = h->version >= BK_FILE_VERSION_TEXT ? get32(buf + H_CONFIG_LEN) : 0;
    if (h->version >= BK_FILE_VERSION_TEXT &&
        (h->config_len < 1 || h->config_len > BK_FILE_CONFIG_MAX))
        return bk_fail(BK_ECORRUPT, "config text of %u bytes (1 to %d)", h->config_len,
                       BK_FILE_CONFIG_MAX);
    if (h->nslices < 1 || h->nslices > BK_FILE_MAX_SLICES ||
        h->header_size != bk_file_header_size(h->version, h->nslices, h->config_len))
        return bk_fail(BK_ECORRUPT, "header size %u does not match %u slices", h->header_size,
                       h->nslices);
    if (h->header_size > file_len)
        return bk_fail(BK_ECORRUPT, "file is %llu bytes, shorter than its %u-byte header",
                       (unsigned long long)file_len, h->header_size);
    return BK_OK;
}

uint64_t bk_file_declared_size(const uint8_t *buf)
{
    return get64(buf + H_FILE_SIZE);
}

/* Fields of one slice entry; the layout is checked by the caller. */
static int decode_slice(const uint8_t *e, uint32_t i, bk_slice_view *s, uint64_t *offset)
{
    s->m = get64(e + S_M);
    s->k = get32(e + S_K);
    s->capacity = get64(e + S_CAPACITY);
    s->fpr = getf64(e + S_FPR);
    s->set_bits = get64(e + S_SET);
    s->keys = get64(e + S_KEYS);
    s->saturated = get64(e + S_SATURATED);
    s->data = NULL;
    s->gen = 0;  /* the caller reads a window's */
    s->span = 0; /* a window's adopt sets it from the configuration */
    *offset = get64(e + S_OFFSET);
    if (s->m < 1 || s->m > BK_BITS_MAX)
        return bk_fail(BK_ECORRUPT, "slice %u: size %llu bits out of range", i,
                       (unsigned long long)s->m);
    if (s->k < 1 || s->k > BK_K_MAX) /* sizing never gets near BK_K_MAX (sizing.h) */
        return bk_fail(BK_ECORRUPT, "slice %u: %u probes out of range", i, s->k);
    if (s->capacity < 1 || s->capacity > BK_BITS_MAX || !(s->fpr > 0.0 && s->fpr < 1.0))
        return bk_fail(BK_ECORRUPT, "slice %u: capacity or rate out of range", i);
    if (s->set_bits > s->m || s->saturated > s->set_bits)
        return bk_fail(BK_ECORRUPT, "slice %u: more set cells than cells", i);
    if (get32(e + S_RESERVED) != 0)
        return bk_fail(BK_ECORRUPT, "slice %u: reserved field is not zero", i);
    return BK_OK;
}

/* Versions 1 to 3: the parameters at their fixed offsets (frozen: these
 * versions are read, never written). *flags gets the flags byte. */
static int legacy_config(const uint8_t *buf, const bk_file_header *h, bk_config *c, unsigned *flags)
{
    bk_config_init(c);
    c->variant = (bk_variant)buf[H_VARIANT];
    c->hash = (bk_hash_alg)buf[H_HASH];
    c->has_key = 1;
    memcpy(c->key, buf + H_KEY, 16);
    c->capacity = get64(buf + H_CAPACITY);
    c->fpr = getf64(buf + H_FPR);
    c->growth = getf64(buf + H_GROWTH);
    c->tightening = getf64(buf + H_TIGHTENING);
    const int has_gens = h->version >= BK_FILE_VERSION_GEN;
    const int window_fields = has_gens && c->variant == BK_VARIANT_WINDOW;
    if (window_fields) {
        c->window_ms = get64(buf + H_WINDOW_MS);
        c->generations = get32(buf + H_GENERATIONS);
        c->refresh = buf[H_REFRESH];
    }
    if (has_gens)
        c->max_bytes = get64(buf + H_MAX_BYTES);
    char why[160];
    if (c->variant > BK_VARIANT_WINDOW || bk_config_validate(c, why, sizeof why) != BK_OK)
        return bk_fail(BK_ECORRUPT, "parameters out of range: %s",
                       c->variant > BK_VARIANT_WINDOW ? "unknown variant" : why);
    const unsigned known_flags = (h->version >= 2 ? BK_FILE_FLAG_DH : 0) |
                                 (has_gens ? BK_FILE_FLAG_BITS | BK_FILE_FLAG_HASHES : 0);
    /* zero: the whole block before version 3; then every reserved byte, and
     * the window's fields unless it is one */
    const int reserved_zero =
        !has_gens ? bk_file_is_zero(buf + H_RESERVED, H_HEADER_SUM - H_RESERVED)
                  : bk_file_is_zero(buf + H_PAD3, H_MAX_BYTES - H_PAD3) &&
                        bk_file_is_zero(buf + H_RESERVED3, H_HEADER_SUM - H_RESERVED3) &&
                        (window_fields || bk_file_is_zero(buf + H_WINDOW_MS, H_PAD3 - H_WINDOW_MS));
    if (buf[H_LAYOUT] > BK_LAYOUT_BLOCKED || (buf[H_FLAGS] & ~known_flags) != 0 || !reserved_zero)
        return bk_fail(BK_ECORRUPT, "unknown layout, flags or reserved bytes");
    if ((c->variant == BK_VARIANT_WINDOW || c->hash == BK_HASH_XXH3) && !has_gens)
        return bk_fail(BK_ECORRUPT, "a %s filter in a version-%u file (they begin in %d)",
                       c->hash == BK_HASH_XXH3 ? "hash=xxh3" : "window", h->version,
                       BK_FILE_VERSION_GEN);
    c->layout = (bk_layout)buf[H_LAYOUT];
    *flags = buf[H_FLAGS];
    return BK_OK;
}

/* Version 4: the config text after the tables, read by the config parser
 * (the key table decides what it may say); every byte of the fixed header
 * that version 4 does not use is zero. */
static int text_config(const uint8_t *buf, bk_file_header *h, bk_config *c, unsigned *flags)
{
    const uint8_t *text = buf + BK_FILE_FIXED + (BK_FILE_ENTRY + BK_FILE_GEN) * h->nslices;
    char cfg[BK_FILE_CONFIG_MAX + 1], why[256];
    for (uint32_t i = 0; i < h->config_len; i++)
        if (text[i] < 0x20 || text[i] > 0x7e)
            return bk_fail(BK_ECORRUPT, "config text: byte %u is not printable ASCII", i);
    memcpy(cfg, text, h->config_len);
    cfg[h->config_len] = '\0';
    memcpy(h->config, text, h->config_len); /* as written: a header re-encoded keeps it */
    if (bk_config_parse(c, cfg, why, sizeof why) != BK_OK)
        return bk_fail(BK_ECORRUPT, "config text: %s (written by a newer bloomkit?)", why);
    if (!c->has_key)
        return bk_fail(BK_ECORRUPT, "config text: no hash key");
    if (!bk_file_is_zero(buf + H_VARIANT, H_FLAGS - H_VARIANT) ||
        !bk_file_is_zero(buf + H_CONFIG_LEN + 4, H_FILE_SIZE - H_CONFIG_LEN - 4) ||
        !bk_file_is_zero(buf + H_RESERVED, H_HEADER_SUM - H_RESERVED) ||
        !bk_file_is_zero(text + h->config_len, text_room(h->config_len) - h->config_len) ||
        (buf[H_FLAGS] & ~(unsigned)BK_FILE_FLAG_DH) != 0)
        return bk_fail(BK_ECORRUPT, "unknown flags or reserved bytes");
    *flags = buf[H_FLAGS];
    return BK_OK;
}

/* Pinned bits (and hashes) are slice 0's m (and k): version 4 states them
 * in its text, which slice 0 must agree with; older versions flag them. */
static int pinned_shape(bk_file_header *h, unsigned flags)
{
    bk_config *c = &h->cfg;
    if (h->version < BK_FILE_VERSION_TEXT) {
        const unsigned pinned = flags & (BK_FILE_FLAG_BITS | BK_FILE_FLAG_HASHES);
        c->bits = pinned & BK_FILE_FLAG_BITS ? h->slices[0].m : 0;
        c->hashes = pinned & BK_FILE_FLAG_HASHES ? h->slices[0].k : 0;
        char why[160];
        if (pinned && bk_config_validate(c, why, sizeof why) != BK_OK)
            return bk_fail(BK_ECORRUPT, "pinned bits or hashes: %s", why);
    } else if ((c->bits && c->bits != h->slices[0].m) ||
               (c->hashes && c->hashes != h->slices[0].k)) {
        return bk_fail(BK_ECORRUPT, "pinned bits or hashes disagree with slice 0");
    }
    return BK_OK;
}

/* long: the header's fields checked in file order, each with its own error. */
int bk_file_decode(const uint8_t *buf, uint64_t file_len, bk_file_header *h)
{
    if (get64(buf + H_HEADER_SUM) != header_checksum(buf, h->header_size))
        return bk_fail(BK_ECORRUPT, "header checksum mismatch");
    bk_config *c = &h->cfg;
    unsigned flags = 0;
    int rc = h->version >= BK_FILE_VERSION_TEXT ? text_config(buf, h, c, &flags)
                                                : legacy_config(buf, h, c, &flags);
    if (rc != BK_OK)
        return rc;
    bk_variant_shape shape;
    if ((rc = bk_variant_shape_of(c, &shape)) != BK_OK)
        return rc;
    const bk_cells cells = shape.cells;
    const unsigned block = cells.block;
    if (h->nslices > shape.max_slices)
        return bk_fail(BK_ECORRUPT, "%u slices for a %s filter", h->nslices,
                       bk_variant_name(c->variant));
    h->file_size = get64(buf + H_FILE_SIZE);
    h->payload_checksum = get64(buf + H_PAYLOAD_SUM);
    /* generations: in order, and 0 in a variant that keeps no time */
    const int keeps_time = shape.keeps_time;
    uint64_t offsets[BK_FILE_MAX_SLICES];
    for (uint32_t i = 0; i < h->nslices; i++) {
        rc = decode_slice(buf + BK_FILE_FIXED + BK_FILE_ENTRY * i, i, &h->slices[i], &offsets[i]);
        if (rc != BK_OK)
            return rc;
        if (!cells.counters && h->slices[i].saturated != 0)
            return bk_fail(BK_ECORRUPT, "slice %u: saturated counters in a %s filter's cells", i,
                           bk_variant_name(c->variant));
        h->slices[i].block = block;
        h->slices[i].probes =
            h->version == 1 || (flags & BK_FILE_FLAG_DH) ? BK_PROBES_DH : BK_PROBES_LCG;
        if (block && h->slices[i].m % block != 0)
            return bk_fail(BK_ECORRUPT, "slice %u: %llu cells is not a whole number of blocks", i,
                           (unsigned long long)h->slices[i].m);
        h->slices[i].gen =
            h->version >= BK_FILE_VERSION_GEN
                ? (int64_t)get64(buf + BK_FILE_FIXED + BK_FILE_ENTRY * h->nslices + BK_FILE_GEN * i)
                : 0;
        if (shape.own_words)
            continue; /* the variant's own word: its adopt checks it */
        if (!keeps_time ? h->slices[i].gen != 0 : i > 0 && h->slices[i].gen < h->slices[i - 1].gen)
            return bk_fail(
                BK_ECORRUPT, "slice %u: generation %lld %s", i, (long long)h->slices[i].gen,
                !keeps_time ? "in a filter without generations" : "before the previous slice's");
    }
    if (shape.max_slices == 1 &&
        (h->slices[0].capacity != c->capacity || h->slices[0].fpr != c->fpr))
        return bk_fail(BK_ECORRUPT, "slice parameters disagree with the filter's");
    if ((rc = pinned_shape(h, flags)) != BK_OK)
        return rc;

    /* Offsets and size are recomputed, never trusted. */
    const uint64_t claimed = h->file_size;
    if (bk_file_layout(h) != BK_OK)
        return bk_fail(BK_ECORRUPT, "slice sizes overflow");
    for (uint32_t i = 0; i < h->nslices; i++)
        if (offsets[i] != h->offsets[i])
            return bk_fail(BK_ECORRUPT, "slice %u: payload offset %llu, expected %llu", i,
                           (unsigned long long)offsets[i], (unsigned long long)h->offsets[i]);
    if (claimed != h->file_size)
        return bk_fail(BK_ECORRUPT, "header says %llu bytes but its slices need %llu",
                       (unsigned long long)claimed, (unsigned long long)h->file_size);
    if (file_len != h->file_size)
        return bk_fail(BK_ECORRUPT, "file is %llu bytes but its header says %llu",
                       (unsigned long long)file_len, (unsigned long long)h->file_size);
    return BK_OK;
}

/* The census of one slice's payload, fed in pieces of any size: non-zero
 * cells, saturated 4-bit counters, and stray bits (set outside every cell:
 * beyond the last, or in a line's padding), which a sound payload has none
 * of. Bit arrays and counters without padding take word-wide paths; other
 * cells (a cuckoo filter's fingerprints) are read bit by bit in order, so a
 * cell that straddles two pieces is still read whole. */
struct bk_payload_sum {
    XXH3_state_t xxh;
    bk_cells c;
    uint64_t nbytes, fed; /* the slice's payload bytes, and those fed so far */
    unsigned unused;      /* word-wide paths: bits past the last cell, in the last byte */
    uint64_t cells_left;  /* bitwise path: cells still to read */
    uint64_t acc;         /* bitwise path: the low `accn` bits read, not yet a cell */
    unsigned accn;
    unsigned in_line; /* cells read of the current line */
    unsigned pad;     /* padding bits still to read in it */
    uint64_t stray;
};

bk_payload_sum *bk_payload_sum_new(const bk_allocator *a)
{
    /* XXH3_state_t wants 64-byte alignment, from any caller allocator */
    bk_payload_sum *ps = bk_mem_calloc_aligned(a, sizeof *ps, 64);
    if (!ps)
        return NULL;
    XXH3_INITSTATE(&ps->xxh);
    XXH3_64bits_reset(&ps->xxh);
    return ps;
}

void bk_payload_sum_free(bk_payload_sum *ps, const bk_allocator *a)
{
    bk_mem_free_aligned(a, ps);
}

/* 1 when cells of c fill their bytes with no padding but the last byte's. */
static int word_wide(bk_cells c)
{
    return (c.bits == 1 || c.bits == 4) && (!c.block || c.block * c.bits == BK_BLOCK_BYTES * 8);
}

void bk_payload_sum_slice(bk_payload_sum *ps, uint64_t m, bk_cells c)
{
    ps->c = c;
    ps->nbytes = bk_file_payload_bytes(m, c);
    ps->fed = 0;
    ps->unused = word_wide(c) ? (unsigned)(ps->nbytes * 8 - m * c.bits) : 0; /* 0..7 */
    ps->cells_left = m;
    ps->acc = 0;
    ps->accn = 0;
    ps->in_line = 0;
    ps->pad = 0;
    ps->stray = 0;
}

/* The bitwise census of n more bytes: each cell read most significant bit
 * first; after `block` cells of a line, its padding; after the last cell,
 * everything is padding. */
static void census_bits(bk_payload_sum *ps, const uint8_t *p, uint64_t n, uint64_t *set)
{
    const unsigned bits = ps->c.bits;
    for (uint64_t i = 0; i < n; i++) {
        ps->acc = ps->acc << 8 | p[i];
        ps->accn += 8;
        for (;;) {
            if (ps->pad || !ps->cells_left) { /* padding: must be zero */
                const unsigned take = ps->cells_left && ps->pad < ps->accn ? ps->pad : ps->accn;
                ps->stray += ((ps->acc >> (ps->accn - take)) & ((UINT64_C(1) << take) - 1)) != 0;
                ps->accn -= take;
                ps->pad -= ps->cells_left ? take : 0;
                if (!ps->accn)
                    break;
                continue;
            }
            if (ps->accn < bits)
                break;
            *set += ((ps->acc >> (ps->accn - bits)) & ((UINT64_C(1) << bits) - 1)) != 0;
            ps->accn -= bits;
            ps->cells_left--;
            if (ps->c.block && ++ps->in_line == ps->c.block) {
                ps->in_line = 0;
                ps->pad = BK_BLOCK_BYTES * 8 - ps->c.block * bits;
            }
        }
        ps->acc &= (UINT64_C(1) << ps->accn) - 1; /* accn < bits + 8 <= 40 */
    }
}

void bk_payload_sum_feed(bk_payload_sum *ps, const uint8_t *p, uint64_t n, uint64_t *set,
                         uint64_t *saturated)
{
    XXH3_64bits_update(&ps->xxh, p, (size_t)n);
    ps->fed += n;
    if (!word_wide(ps->c)) {
        census_bits(ps, p, n, set);
        return;
    }
    if (ps->c.bits == 1) {
        *set += bk_popcount(p, (size_t)n);
    } else {
        uint64_t nz, sat;
        bk_nibble_census(p, (size_t)n, &nz, &sat);
        *set += nz;
        *saturated += ps->c.counters ? sat : 0; /* a 4-bit fingerprint of 15 is just set */
    }
    if (n && ps->fed == ps->nbytes && ps->unused) { /* the last byte's bits past the last cell */
        const unsigned mask = (1u << ps->unused) - 1;
        if (p[n - 1] & mask) {
            ps->stray++;
            /* they were counted as cells: not theirs */
            *set -= ps->c.bits == 1 ? (uint64_t)__builtin_popcount(p[n - 1] & mask) : 1;
        }
    }
}

uint64_t bk_payload_sum_stray(const bk_payload_sum *ps)
{
    return ps->stray;
}

uint64_t bk_payload_sum_digest(const bk_payload_sum *ps)
{
    return XXH3_64bits_digest(&ps->xxh);
}

int bk_file_is_zero(const uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

#define VERIFY_CHUNK ((uint64_t)BK_VERIFY_CHUNK)

static int finish_verify(bk_file_header *h, uint64_t digest, const uint64_t *set,
                         const uint64_t *sat, const uint64_t *stray, int strict)
{
    if (strict && digest != h->payload_checksum)
        return bk_fail(BK_ECORRUPT, "payload checksum mismatch");
    h->payload_checksum = digest;
    for (uint32_t i = 0; i < h->nslices; i++) {
        bk_slice_view *s = &h->slices[i];
        if (stray[i])
            return bk_fail(BK_ECORRUPT, "slice %u: bits set beyond its size or its cells", i);
        if (strict && set[i] != s->set_bits)
            return bk_fail(BK_ECORRUPT, "slice %u: header counts %llu set cells, payload has %llu",
                           i, (unsigned long long)s->set_bits, (unsigned long long)set[i]);
        if (strict && sat[i] != s->saturated)
            return bk_fail(BK_ECORRUPT,
                           "slice %u: header counts %llu saturated counters, payload has %llu", i,
                           (unsigned long long)s->saturated, (unsigned long long)sat[i]);
        s->set_bits = set[i];
        s->saturated = sat[i];
    }
    return BK_OK;
}

int bk_file_verify_from(bk_file_header *h, bk_payload_reader read, void *ctx, int strict,
                        const bk_allocator *a)
{
    bk_payload_sum *ps = bk_payload_sum_new(a);
    if (!ps)
        return bk_fail(BK_ENOMEM, "no memory to verify the payload");
    const bk_cells cb = bk_file_cells(&h->cfg);
    uint64_t set[BK_FILE_MAX_SLICES] = {0}, sat[BK_FILE_MAX_SLICES] = {0};
    uint64_t stray[BK_FILE_MAX_SLICES] = {0};
    int rc = BK_OK;
    for (uint32_t i = 0; rc == BK_OK && i < h->nslices; i++) {
        bk_payload_sum_slice(ps, h->slices[i].m, cb);
        for (uint64_t off = 0; off < h->slices[i].nbytes;) {
            const uint64_t left = h->slices[i].nbytes - off;
            const uint8_t *p = NULL;
            const int64_t got = read(ctx, i, off, left < VERIFY_CHUNK ? left : VERIFY_CHUNK, &p);
            if (got < 0) {
                rc = (int)got;
                break;
            }
            bk_payload_sum_feed(ps, p, (uint64_t)got, &set[i], &sat[i]);
            off += (uint64_t)got;
        }
        stray[i] = bk_payload_sum_stray(ps);
    }
    const uint64_t digest = bk_payload_sum_digest(ps);
    bk_payload_sum_free(ps, a);
    return rc == BK_OK ? finish_verify(h, digest, set, sat, stray, strict) : rc;
}

/* The reader of payloads already in memory: no copy. */
static int64_t from_memory(void *ctx, uint32_t i, uint64_t off, uint64_t want, const uint8_t **p)
{
    *p = ((uint8_t *const *)ctx)[i] + off;
    return (int64_t)want;
}

int bk_file_verify_payloads(bk_file_header *h, uint8_t *const *data, int strict,
                            const bk_allocator *a)
{
    return bk_file_verify_from(h, from_memory, (void *)data, strict, a);
}

/* Only the checksums and counts are written; everything the fuzzer
 * mutated stays as it is. */
int bk_file_reseal(uint8_t *buf, size_t len)
{
    bk_file_header h;
    const bk_allocator a = bk_current_allocator();
    if (bk_file_decode_fixed(buf, len, &h) != BK_OK)
        return 0;
    put64(buf + H_HEADER_SUM, header_checksum(buf, h.header_size));
    if (bk_file_decode(buf, len, &h) != BK_OK)
        return 0;
    uint8_t *data[BK_FILE_MAX_SLICES];
    for (uint32_t i = 0; i < h.nslices; i++)
        data[i] = buf + h.offsets[i];
    if (bk_file_verify_payloads(&h, data, 0, &a) != BK_OK)
        return 0;
    for (uint32_t i = 0; i < h.nslices; i++) {
        put64(buf + BK_FILE_FIXED + BK_FILE_ENTRY * i + S_SET, h.slices[i].set_bits);
        put64(buf + BK_FILE_FIXED + BK_FILE_ENTRY * i + S_SATURATED, h.slices[i].saturated);
    }
    put64(buf + H_PAYLOAD_SUM, h.payload_checksum);
    put64(buf + H_HEADER_SUM, header_checksum(buf, h.header_size));
    return 1;
}
