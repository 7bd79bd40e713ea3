/*
 * bloomkit.h - Bloom filter toolkit: classic, 4-bit counting, scalable and
 * time-window Bloom filters, and cuckoo filters.
 *
 * One opaque handle (bk_filter) for interchangeable variants chosen by a
 * bk_config (bk_variant below lists them). Every key is hashed once (keyed
 * SipHash by default; bk_hash_alg lists the others); the variant derives its
 * probes from that one 128-bit digest.
 *
 * Conventions for every function below:
 *  - Errors are negative BK_E* codes; bk_strerror() names them. The library never
 *    prints, exits or aborts on bad input, and a failed call leaves the filter as
 *    it was.
 *  - A key is (pointer, length); a zero-length key is a valid key and its pointer
 *    may then be NULL.
 *  - Thread-safety is stated per function. "Concurrent" means several threads on
 *    the same filter at once; different filters are always independent.
 */
#ifndef BLOOMKIT_H
#define BLOOMKIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define BK_API __attribute__((visibility("default")))
#else
#define BK_API
#endif

#define BK_VERSION_MAJOR  0
#define BK_VERSION_MINOR  1
#define BK_VERSION_PATCH  0
#define BK_VERSION_STRING "0.1.0"

/* ---------------------------------------------------------------- errors -- */

/* X-macro list: code, value, message. bk_strerror()/bk_err_name() are generated
 * from it so codes and texts never drift apart. */
#define BK_ERROR_LIST(X)                                                                           \
    X(BK_OK, 0, "success")                                                                         \
    X(BK_EINVAL, -1, "invalid argument")                                                           \
    X(BK_ENOMEM, -2, "out of memory")                                                              \
    X(BK_ENOTFOUND, -3, "key not found")                                                           \
    X(BK_ENOTSUP, -4, "operation not supported by this filter variant")                            \
    X(BK_ECONFIG, -5, "invalid configuration")                                                     \
    X(BK_ERANGE, -6, "size or count out of the supported range")                                   \
    X(BK_EIO, -7, "input/output error")                                                            \
    X(BK_ECORRUPT, -8, "corrupt or unsupported file")                                              \
    X(BK_EINCOMPAT, -9, "filters are not compatible")                                              \
    X(BK_ESYS, -10, "system call failed")                                                          \
    X(BK_EREADONLY, -11, "filter is read-only")                                                    \
    X(BK_ESERVER, -12, "server refused the request or sent an unexpected reply")                   \
    X(BK_EBUSY, -13, "file is being written by another process")                                   \
    X(BK_EFULL, -14, "filter full: growing would pass its max_bytes")                              \
    X(BK_ECANCELED, -15, "stopped by the caller")

enum {
#define BK_ERROR_ENUM_(name, value, text) name = (value),
    BK_ERROR_LIST(BK_ERROR_ENUM_)
#undef BK_ERROR_ENUM_
};

/* Text for an error code ("out of memory"); never NULL, static storage.
 * Unknown codes give "unknown error". Thread-safe. */
BK_API const char *bk_strerror(int code);

/* Symbolic name of an error code ("BK_ENOMEM"); "BK_UNKNOWN" for unknown codes.
 * Static storage. Thread-safe. */
BK_API const char *bk_err_name(int code);

/* The error model, one rule for every function of this header and of
 * bloomkit_redis.h. A call fails by returning a negative BK_E* code (a
 * function returning a pointer or a double says in its comment how it fails
 * instead; none of them sets a detail). Every call that returns a negative
 * code leaves one line in bk_last_error() saying what failed and why, such
 * as "open /x/y: Permission denied" or "add: the filter is mapped
 * read-only" (or, when there is nothing to add to the code, "<call>: <its
 * bk_strerror text>"): that call's detail, never an earlier call's. After a
 * call that succeeded, bk_last_error() says nothing about it (it may hold an
 * older detail, as errno may). The text lives in thread-local storage, valid
 * until the next call in the same thread; never NULL, empty before any
 * failure.
 *
 * Two more ways carry the same text, each for a reason: the err/errlen
 * buffer of the config calls (bk_config_parse, ...) and of
 * bk_redis_open_config holds that failure's message too, for callers
 * that keep the message past the next call without copying it; and
 * bk_config_error adds the key and line at fault, for callers that act on
 * them (a command names the option the key came from). */
BK_API const char *bk_last_error(void);

/* Library version as "MAJOR.MINOR.PATCH"; static storage. Thread-safe. */
BK_API const char *bk_version(void);

/* --------------------------------------------------------------- hashing -- */

/* SipHash-2-4 with 64-bit output (Aumasson & Bernstein, 2012), little-endian
 * output bytes exactly as the reference implementation writes them.
 * key: 16 bytes; msg may be NULL when len == 0; out: 8 bytes. No allocation,
 * no error; thread-safe. */
BK_API void bk_siphash24(const uint8_t key[16], const void *msg, size_t len, uint8_t out[8]);

/* SipHash-2-4 with 128-bit output (the reference "outlen = 16" mode); out: 16
 * bytes. Thread-safe. */
BK_API void bk_siphash24_128(const uint8_t key[16], const void *msg, size_t len, uint8_t out[16]);

/* SipHash-1-3 with 64-bit output: the faster, lower-margin option. Thread-safe. */
BK_API void bk_siphash13(const uint8_t key[16], const void *msg, size_t len, uint8_t out[8]);

/* SipHash-1-3 with 128-bit output (what `hash=siphash13` filters use). */
BK_API void bk_siphash13_128(const uint8_t key[16], const void *msg, size_t len, uint8_t out[16]);

/* ---------------------------------------------------------------- sizing -- */

/* Sizing for n keys at false-positive rate p (Bloom 1970; see docs/design.md):
 *   m = ceil(-n ln p / (ln 2)^2) bits,
 *   k = floor or ceil of (m/n) ln 2, whichever gives the lower rate, >= 1,
 *   rate = (1 - e^(-k n / m))^k. */
typedef struct bk_plan {
    uint64_t bits;       /* m: bits (counting: counters; cuckoo: fingerprint slots) */
    uint64_t bytes;      /* memory: ceil(m / 8) bytes (counting: ceil(m / 2); cuckoo: its
                          * slots' bits, in whole lines when blocked) */
    unsigned k;          /* number of probes (cuckoo: 2, the buckets a lookup reads) */
    double expected_fpr; /* rate after exactly n insertions */
    double bits_per_key; /* memory bits per key: 8 * bytes / n, before rounding */
} bk_plan;

/* Fill *out for capacity n (1 .. 2^48) and rate p in (0, 0.5].
 * Errors: BK_EINVAL (out NULL, n or p out of range, p not finite), BK_ERANGE (m
 * would not fit in memory addressable here). Thread-safe. */
BK_API int bk_plan_size(uint64_t capacity, double fpr, bk_plan *out);

/* Rate of a filter of m bits and k probes after n insertions:
 * (1 - e^(-k n / m))^k, and below 2^20 bits, where that asymptotic form
 * drifts from the truth (one bit and one key: 0.632 for 1), the exact
 * (1 - (1 - 1/m)^(k n))^k. Returns 1.0 when m or k is 0. Thread-safe. */
BK_API double bk_rate_after(uint64_t m, unsigned k, uint64_t n);

/* Cardinality estimate from X set bits (Swamidass & Baldi, 2007):
 * n* = -(m / k) ln(1 - X / m). X >= m (a full filter) returns +infinity.
 * Returns 0 for m or k equal to 0. Thread-safe. */
BK_API double bk_estimate_cardinality(uint64_t m, unsigned k, uint64_t set_bits);

/* ---------------------------------------------------------------- config -- */

/* Every variant, one line each: X(NAME, name, number). The enum below, the
 * variant names (bk_variant_name) and the library's registry of variants
 * (each variant's descriptor, bk_<name>_desc in src/<name>/, which says what
 * the variant is, which configuration keys it takes and which figures it
 * reports) all come from this list: a new variant is its folder and one line
 * here, with the next unused number (never reused: files hold it). What each
 * one is: bk_config_key's help for the key "variant" (bloomkit --help). */
#define BK_VARIANT_LIST(X)                                                                         \
    X(STANDARD, standard, 0)                                                                       \
    X(COUNTING, counting, 1)                                                                       \
    X(SCALABLE, scalable, 2)                                                                       \
    X(WINDOW, window, 3)                                                                           \
    X(CUCKOO, cuckoo, 4)                                                                           \
    X(RBCHAIN, rbchain, 5)                                                                         \
    X(RBCUCKOO, rbcuckoo, 6)                                                                       \
    X(EXPANDABLE, expandable, 7)

typedef enum bk_variant {
#define BK_VARIANT_ENUM_(NAME, name, number) BK_VARIANT_##NAME = (number),
    BK_VARIANT_LIST(BK_VARIANT_ENUM_)
#undef BK_VARIANT_ENUM_
} bk_variant;

typedef enum bk_hash_alg {
    BK_HASH_SIPHASH24 = 0, /* default: SipHash-2-4, 128-bit output */
    BK_HASH_SIPHASH13 = 1, /* fast option: SipHash-1-3, 128-bit output */
    /* For trusted keys only: XXH3's 128-bit hash (Debian's libxxhash) with a
     * secret derived from the filter's key. Several times faster than
     * SipHash, but not a keyed pseudo-random function: someone who chooses
     * keys and sees the answers can find keys that collide, filling the
     * filter or forcing false positives. Keys from the open web (URLs a
     * crawler meets) are not trusted: keep SipHash for them. */
    BK_HASH_XXH3 = 2,
    /* RedisBloom's MurmurHash64A (and MurmurHash2 for its oldest chains),
     * for variants rbchain and rbcuckoo only: what data RedisBloom wrote
     * needs to keep answering as it did. It has NO KEY at all
     * (docs/security.md): anyone who can choose the keys can make them
     * collide. Those variants take the keyed hashes too. */
    BK_HASH_MURMUR = 3
} bk_hash_alg;

/* Where a key's k probes fall (see docs/design.md, "Blocked layout"). */
typedef enum bk_layout {
    BK_LAYOUT_CLASSIC = 0, /* default: anywhere in the array (k cache misses per key) */
    BK_LAYOUT_BLOCKED = 1  /* all in one 64-byte block chosen by the key (one miss per key);
                            * needs more bits for the same rate, which sizing accounts for */
} bk_layout;

/* Bytes of one block of the blocked layout: a cache line. It holds 512 bits
 * (standard, scalable) or 128 4-bit counters (counting). */
#define BK_BLOCK_BYTES 64

/* Limits of every config value (inclusive unless said). */
#define BK_CAPACITY_MAX    (UINT64_C(1) << 48)
#define BK_FPR_MAX         0.5 /* fpr is in (0, BK_FPR_MAX] */
#define BK_GROWTH_MIN      2.0
#define BK_GROWTH_MAX      16.0
#define BK_TIGHTENING_MIN  0.1
#define BK_TIGHTENING_MAX  0.95
#define BK_WINDOW_MS_MIN   UINT64_C(1000)                  /* 1 s */
#define BK_WINDOW_MS_MAX   (UINT64_C(3650) * 86400 * 1000) /* 3650 days */
#define BK_GENERATIONS_MIN 2
#define BK_GENERATIONS_MAX 64
#define BK_MAX_BYTES_MAX   (UINT64_C(1) << 56)
#define BK_BITS_MAX        (UINT64_C(1) << 56) /* m: bits (counting: counters) of one array */
#define BK_HASHES_MAX      2048                /* k: probes per key */

/* Slots of bk_config.more: room for this many keys beyond 0.1.0's. */
#define BK_CONFIG_MORE 16

/* Plain value type; copy it freely. Initialise with bk_config_init() or
 * bk_config_parse(). */
typedef struct bk_config {
    bk_variant variant;   /* default standard */
    uint64_t capacity;    /* n: expected keys (scalable: of the first slice); default 1,000,000 */
    double fpr;           /* p: target false-positive rate; default 0.01 */
    double growth;        /* scalable: slice i holds capacity * growth^i; default 2 */
    double tightening;    /* scalable: slice i has rate fpr*(1-r)*r^i; default 0.5 */
    bk_hash_alg hash;     /* default siphash24 */
    bk_layout layout;     /* default classic */
    int has_key;          /* 0: bk_new draws a random key; 1: use key[] */
    uint8_t key[16];      /* SipHash key when has_key */
    uint64_t window_ms;   /* window: how long a key is remembered, in ms; default 1 day */
    uint64_t generations; /* window: G, the window is cut into G spans; default 8 */
    uint64_t refresh;     /* window: 1 = a sighting renews a key (cache-like); default 0 */
    uint64_t max_bytes;   /* scalable, window: the most payload memory, 0 = no limit; default 0 */
    uint64_t bits;        /* standard, counting: m pinned (1 .. BK_BITS_MAX cells) instead of
                           * sized from capacity and fpr; 0 (default) = sized */
    uint64_t hashes;      /* with bits: k pinned (1 .. BK_HASHES_MAX); 0 (default) = the k
                           * that gives the lowest rate for bits and capacity */
    /* The values of the keys added since 0.1.0, which have no field above (a
     * variant's own parameters: cuckoo's fingerprint and bucket): one slot
     * each, as the key table says. Read and set them by name, with
     * bk_config_get and bk_config_set, never by index: a new key takes a
     * free slot, so this struct keeps its size and layout. */
    uint64_t more[BK_CONFIG_MORE];
    uint32_t struct_size; /* sizeof(bk_config) as the caller's bloomkit.h has it: set by
                           * bk_config_init and bk_config_parse, checked by every call that
                           * takes a config (BK_ECONFIG for a struct of another layout) */
} bk_config;

/* Set *cfg to the defaults listed in bk_config. No error; a NULL cfg is
 * ignored. Thread-safe. */
BK_API void bk_config_init(bk_config *cfg);

/* Parse `text` ("key=value" pairs separated by spaces, commas or newlines; '#'
 * starts a comment to end of line; spaces around '=' allowed) over the defaults
 * and store the result in *cfg. The keys, their values and the variants each
 * applies to are the library's key table: bk_config_key lists them, with the
 * values each takes (the README's table and `bloomkit create --help` show the
 * same). Among them: variant (bk_variant), capacity, fpr, hash
 * (bk_hash_alg), layout, key (32 hex digits); a variant's own keys (window's
 * window, generations, refresh; scalable's growth, tightening; max_bytes for
 * the growing variants; pinned bits and hashes for standard and counting;
 * cuckoo's fingerprint and bucket, which 0 leaves to the filter); a key of
 * another variant than the text's is an error. Pinned bits with fpr is an
 * error naming both (a pinned filter's rate follows from bits, hashes and
 * capacity), and a blocked filter's bits must be whole 64-byte blocks
 * (checked by bk_new and bk_plan_config).
 * On error returns BK_ECONFIG (BK_EINVAL for NULL cfg/text), leaves *cfg
 * untouched, and, when err is not NULL and errlen > 0, writes one line into err
 * naming the key, the offending value and the allowed range (truncated to
 * errlen, always NUL-terminated). Unknown keys, duplicate keys, empty values,
 * NaN/infinite/negative numbers and trailing junk are errors.
 * The caller owns all buffers. Thread-safe. */
BK_API int bk_config_parse(bk_config *cfg, const char *text, char *err, size_t errlen);

/* Like bk_config_parse, but applies the text over the values already in *cfg
 * (which must be valid: BK_EINVAL otherwise) instead of over the defaults, so a
 * caller can layer its own defaults or compare an explicit text against an
 * existing filter's configuration. Same errors; *cfg untouched on error. */
BK_API int bk_config_parse_over(bk_config *cfg, const char *text, char *err, size_t errlen);

/* What went wrong in a config text, for callers that act on it (name the
 * option a key came from, point at the line) instead of reading the text. */
typedef struct bk_config_error {
    unsigned line;     /* 1-based line of the text; 0 when not about a line */
    char key[24];      /* the key at fault ("" when none is: a syntax error) */
    char message[256]; /* one line, as bk_config_parse writes it into err */
} bk_config_error;

/* bk_config_parse_over with a structured error: applies text over *cfg
 * (valid: BK_EINVAL otherwise); on BK_ECONFIG *error (when not NULL) says
 * which key and line, and the message. *cfg untouched on error. Thread-safe. */
BK_API int bk_config_read(bk_config *cfg, const char *text, bk_config_error *error);

/* The first configuration key whose value differs between want and have
 * ("variant", "fpr", ...; the hash key only when want->has_key), in the
 * order of the key table; NULL when they agree (or either is NULL). One
 * comparison for everyone: a Redis filter's opener, `dedup --state`, the
 * Python binding. Static storage. Thread-safe. */
BK_API const char *bk_config_diff(const bk_config *want, const bk_config *have);

/* Set one value of *cfg (which must be valid: BK_EINVAL otherwise) from its
 * text, as "key=value" in config text would, except that `value` is taken
 * whole: it is one value, never more text (no separator, comment or second
 * key is read out of it; "1000 variant=counting" is not a capacity). Errors:
 * BK_ECONFIG for an unknown key or a value that is not valid, with one line
 * in err naming the key, the value and the allowed range, and for a key of
 * another variant than cfg's (set variant first); *cfg untouched on error.
 * Setting the variant moves keys still at the old variant's default to the
 * new one's (tightening: 0.3 for window). For command-line options and other
 * single values. Thread-safe. */
BK_API int bk_config_set(bk_config *cfg, const char *key, const char *value, char *err,
                         size_t errlen);

/* Check every value of *cfg against its key's row (range, variant, the keys
 * that contradict each other), as bk_new does before it makes a filter: for
 * a caller that set fields by number (values it parsed or kept itself) and
 * wants the refusal before it acts. Returns BK_OK, or BK_ECONFIG with one
 * line in err (when err is not NULL: at most errlen bytes, NUL included)
 * naming the key and its allowed range. Reads *cfg only. Thread-safe. */
BK_API int bk_config_validate(const bk_config *cfg, char *err, size_t errlen);

/* The value of one key of *cfg (which must be valid) as config text writes
 * it ("0.01", "30d", "64M", "scalable"; the hash key as 32 hex digits, or ""
 * when cfg has none), into buf like snprintf: returns the length the value
 * needs (excluding NUL) and writes at most buflen bytes including NUL.
 * Errors: BK_EINVAL (NULL cfg or key, NULL buf with buflen > 0, an invalid
 * cfg), BK_ECONFIG (an unknown key; bk_last_error() lists the known ones).
 * For keys without a field of bk_config, and for any key by name.
 * Thread-safe. */
BK_API int bk_config_get(const bk_config *cfg, const char *key, char *buf, size_t buflen);

/* Write cfg as config text that bk_config_parse() reads back to the same
 * values (the key is written only when include_key is non-zero). Returns the
 * length the full text needs (excluding NUL) like snprintf; writes at most
 * buflen bytes including NUL. Returns BK_EINVAL if cfg is NULL or invalid.
 * Thread-safe. */
BK_API int bk_config_format(const bk_config *cfg, int include_key, char *buf, size_t buflen);

/* Name of a variant ("standard", ...) or hash ("siphash24", ...); NULL if unknown. */
BK_API const char *bk_variant_name(bk_variant v);
BK_API const char *bk_hash_name(bk_hash_alg h);
BK_API const char *bk_layout_name(bk_layout l);

/* The plan of the filter bk_new(cfg) creates: its variant's cell size (4 bits
 * for counting), its layout (blocked: the smallest m, a multiple of the block,
 * and the k for which bk_rate_blocked reaches the rate), for scalable the
 * first slice (capacity n0, rate fpr * (1 - tightening)), and for window the
 * whole window at its stated rate: G + 1 generations' first slices (bits and
 * bytes of all of them, per key of the window) and the rate of a lookup in
 * all of them. The key is ignored.
 * Errors: BK_EINVAL (NULL, or cfg not valid), BK_ERANGE. Thread-safe. */
BK_API int bk_plan_config(const bk_config *cfg, bk_plan *out);

/* The calculator's third question: how many keys a filter of cfg->bits
 * cells (cfg's variant, standard or counting, and layout) holds while its
 * expected rate stays at most cfg->fpr, with the best k for that many. The
 * one call that reads bits and fpr together; cfg->hashes, capacity and the
 * key are ignored. *capacity gets the keys; *out the plan of that filter at
 * them (bits = cfg->bits, its k, the rate, bits per key).
 * Errors: BK_EINVAL (NULL, cfg not valid, bits 0), BK_ECONFIG (blocked bits
 * not whole blocks), BK_ERANGE (not even one key fits). Thread-safe. */
BK_API int bk_plan_capacity(const bk_config *cfg, uint64_t *capacity, bk_plan *out);

/* 1 when filters of variant v can remove keys (bk_remove), else 0 (also for
 * an unknown v). Thread-safe. */
BK_API int bk_variant_removes(bk_variant v);

/* 1 when filters of variant v grow as keys come (a chain of arrays: their
 * memory is bounded by max_bytes, not by the capacity), else 0 (also for
 * an unknown v). Thread-safe. */
BK_API int bk_variant_grows(bk_variant v);

/* The configuration a filter made from cfg records: the keys left to the
 * filter (0 meaning "the filter chooses": cuckoo's fingerprint and bucket,
 * from fpr) set to what it would choose, every other value as in cfg (a
 * hash key is never drawn). *out may be cfg. Errors: BK_EINVAL (NULL, or
 * cfg not valid), BK_ECONFIG (no choice reaches cfg's rate; detail in
 * bk_last_error()). Thread-safe. */
BK_API int bk_config_resolve(const bk_config *cfg, bk_config *out);

/* ------------------------------------------------------------------ URLs -- */

/* Flags of bk_url_canonical. */
#define BK_URL_KEEP_QUERY_ORDER 1u /* keep the query's parameters in their order */

/* The most bytes bk_url_canonical writes for an input of len bytes (a byte
 * becomes at most three, %XX, and an empty path "/"). */
#define BK_URL_CANONICAL_MAX(len) (3 * (size_t)(len) + 1)

/* Write the canonical form of the URL in[0..len) into out (cap bytes, at
 * least BK_URL_CANONICAL_MAX(len); not overlapping in; not NUL-terminated)
 * and its length into *outlen, so that spellings of one resource become one
 * key: scheme and host lower-cased, a default port (http 80, https 443, ws
 * 80, wss 443, ftp 21) and leading zeros of a port dropped, the fragment
 * removed, dot segments resolved (RFC 3986 5.2.4), an empty path written
 * "/", percent-encoding normalised (escapes of unreserved characters
 * decoded, other escapes' hex upper-cased, a '%' that begins no escape and
 * bytes a URI cannot hold raw, such as space, controls and non-ASCII,
 * encoded; the host keeps non-ASCII bytes: IDN hosts as given), in the
 * query a space (or %20) written '+', empty parameters dropped and the
 * parameters sorted by key, then value (unless BK_URL_KEEP_QUERY_ORDER).
 * Userinfo keeps its case. The result, fed back, comes out unchanged.
 * Returns 1 when in was an absolute URL with an authority ("scheme://")
 * and out holds its canonical form; 0 when it was not, or its authority
 * cannot be read (a port that is not a number up to 65535, an unclosed
 * "[..."), and out holds in unchanged: malformed input is never an error.
 * Errors: BK_EINVAL (NULL out or outlen, NULL in with len > 0, unknown
 * flags), BK_ERANGE (cap too small: nothing written), BK_ENOMEM (a query of
 * more than 32 parameters or 2 KiB needs scratch memory, from the
 * allocator). Rules and differences from Scrapy's canonicalize_url:
 * docs/urls.md. Thread-safe. */
BK_API int bk_url_canonical(const char *in, size_t len, unsigned flags, char *out, size_t cap,
                            size_t *outlen);

/* ------------------------------------------------------------- allocator -- */

/* A caller-supplied allocator (mirrors zstd's ZSTD_customMem). alloc returns
 * NULL on failure; free accepts NULL. opaque is passed back unchanged. */
typedef struct bk_allocator {
    void *(*alloc)(void *opaque, size_t size);
    void (*free)(void *opaque, void *ptr);
    void *opaque;
} bk_allocator;

/* Make `a` the allocator for filters created from now on (NULL restores
 * malloc/free). Each filter copies the allocator current at its creation and
 * frees with that one, so changing it later never mismatches a free.
 * Errors: BK_EINVAL if exactly one of alloc/free is NULL.
 * Not thread-safe: call it while no other thread creates filters. */
BK_API int bk_set_allocator(const bk_allocator *a);

/* bk_set_allocator with a zeroing allocation beside it: zalloc(opaque, size)
 * returns size zeroed bytes (NULL on failure), freed with a->free. Filters
 * made with a (the same alloc, free and opaque) take their arrays from
 * zalloc, so an allocator whose zeroed memory comes lazily (calloc, a
 * server's own calloc) spares a large filter's creation from writing every
 * page; without it, a caller allocator's memory is zeroed with memset.
 * zalloc NULL: exactly bk_set_allocator(a). Errors and thread-safety as
 * bk_set_allocator. */
BK_API int bk_set_allocator_zeroed(const bk_allocator *a,
                                   void *(*zalloc)(void *opaque, size_t size));

/* ------------------------------------------------------------------ time -- */

/* ---------------------------------------------------------------- filter -- */

typedef struct bk_filter bk_filter;

/* Create an empty filter as cfg says (cfg NULL = defaults). On success *out owns
 * a new filter to release with bk_free(). When cfg->has_key is 0 the SipHash key
 * is 16 bytes from getrandom().
 * Errors: BK_EINVAL (out NULL), BK_ECONFIG (a cfg value outside the limits
 * bk_config_parse enforces), BK_ERANGE (the size does not fit this machine's
 * address space), BK_ENOMEM, BK_ESYS (no randomness available). On error *out
 * is set to NULL (when out is not NULL). Thread-safe. */
BK_API int bk_new(const bk_config *cfg, bk_filter **out);

/* Release f and everything it owns; bk_free(NULL) does nothing. A filter
 * opened with bk_open_mmap(BK_MAP_WRITE) is synced first, like fclose()
 * flushing (call bk_sync() before to see its errors), then unmapped. Not
 * concurrent with any other use of f. */
BK_API void bk_free(bk_filter *f);

/* bk_free that reports: for a filter mapped with BK_MAP_WRITE, the error of
 * its final bk_sync (BK_EIO when the file was replaced or removed while
 * mapped: the changes did not reach it), else BK_OK. f is released in every
 * case; NULL gives BK_OK. Not concurrent with any other use of f. */
BK_API int bk_close(bk_filter *f);

/* Insert a key. Returns 1 when the key was absent before the call (some bit or
 * counter went from 0), 0 when it was (maybe) present already. standard and
 * scalable then change nothing; counting still increments and cuckoo keeps
 * another copy of its fingerprint (a multiset: a key added twice needs two
 * removals; bk_set_add_once makes both hold a set). Errors: BK_EINVAL (f NULL, key NULL with
 * len > 0), BK_EREADONLY (mapped read-only), BK_ENOMEM / BK_ERANGE (scalable
 * or window could not add a slice; the key is not added), BK_EFULL (max_bytes
 * reached, or a cuckoo filter has no room for the key: nothing changed;
 * detail in bk_last_error()), and a Redis filter's BK_EIO / BK_ESERVER.
 * Thread-safety: concurrent bk_add, bk_contains and (counting, cuckoo)
 * bk_remove are safe on every variant. standard: lock-free (atomic OR);
 * scalable: lookups lock-free, adds share a read lock, growth is exclusive;
 * counting and cuckoo: an internal read-write lock (writers one at a time,
 * lookups shared); window: adds and lookups share a read lock, a new span's
 * generation is made under its write lock. The answer is exact under races:
 * of several threads adding the same new key at once, at most one is told 1
 * (one exactly, barring a false positive; counting, cuckoo: exactly one). A caller
 * that never adds from two threads at once can say so (bk_set_single_writer)
 * for faster adds. */
BK_API int bk_add(bk_filter *f, const void *key, size_t len);

/* The caller's promise that calls writing f (adds, removes, clear, merge,
 * expire, batches, loads into it) never overlap: at most one runs at any
 * time, in this process and in any other that maps the same file, ordered
 * by the caller's own lock or thread; lookups may still run beside them.
 * on = 1 makes the promise, 0 withdraws it (the default: any number of
 * concurrent writers). In return the standard and scalable variants add
 * with plain stores instead of locked instructions (classic layout, cached:
 * an add about half the cost, docs/performance.md) and a batch split
 * across threads (bk_add_batch_mt) has each of its threads own its share.
 * Other variants and Redis filters take the promise and need nothing from
 * it. Answers are the same either way; a broken promise loses bits (false
 * negatives). Errors: BK_EINVAL (f NULL). Not concurrent with any other
 * call on f. */
BK_API int bk_set_single_writer(bk_filter *f, int on);

/* Bring every page of f's cells into this process's memory now, so that
 * its first adds do not pay the page faults a fresh allocation defers (the
 * kernel hands zeroed pages out on first touch: a 24 MiB filter's first
 * 6,000 writes would each take one). For a server that wants a steady
 * latency from the first write; the Redis module calls it when it makes a
 * filter. Changes no cell (each page is read, and written back as it was
 * unless f is mapped from a file, whose pages are only read). A Redis filter has no
 * cells here: nothing to do. BK_OK, or BK_EINVAL (f NULL). Not concurrent
 * with writers of f (its pages are written back). */
BK_API int bk_touch(bk_filter *f);

/* For callers that ask "first sight?" of every key they meet (the
 * command's dedup, a crawler's duplicate filter): on = 1 makes an add of a
 * key the filter reports present change nothing and return 0, so each key
 * is held once. Only the variants that remove behave otherwise without it:
 * a counting filter counts every add (a key seen three times needs three
 * removals) and a cuckoo filter keeps a copy of its fingerprint per add
 * (repeats fill its buckets); with it they hold a set, and one removal
 * takes a key out. The price: a key that reads present by a false positive
 * is not added, and removing the key it collided with makes it read absent
 * (for callers that do not remove, nothing). on = 0 restores the default.
 * Errors: BK_EINVAL (f NULL), BK_ENOTSUP (on = 1 for a filter kept in
 * Redis). Not concurrent with any other call on f. */
BK_API int bk_set_add_once(bk_filter *f, int on);

/* A check the host makes before a filter that grows by itself (variants
 * rbchain and rbcuckoo: a new link or sub-filter) takes more memory:
 * check(arg, used, next) with `used` the bytes of its arrays and `next`
 * those of the array it would add (0: none can be made, and the add fails
 * as it would have), called during bk_add on the adding thread, under the
 * filter's write lock, before its max_bytes is checked. 0 lets it grow;
 * a negative BK_E* code refuses, and is the add's result, nothing changed
 * (the host keeps its own reason; any other value refuses as BK_EFULL).
 * check NULL removes it. The Redis module checks its MAX_BYTES and
 * maxmemory's headroom this way. BK_OK, BK_EINVAL (f NULL), BK_ENOTSUP (a
 * variant bounded by max_bytes alone).
 * Not concurrent with any other call on f. */
typedef int (*bk_grow_check_fn)(void *arg, uint64_t used, uint64_t next);
BK_API int bk_set_grow_check(bk_filter *f, bk_grow_check_fn check, void *arg);

/* Query a key: 1 maybe present, 0 definitely absent, BK_EINVAL for f NULL or
 * key NULL with len > 0 (so test `== 1`, not truthiness, if errors matter).
 * Concurrent with other bk_contains always; with bk_add as for bk_add. */
BK_API int bk_contains(const bk_filter *f, const void *key, size_t len);

/* Batches: n keys (keys[i], lens[i]) at once; results[i] receives what
 * bk_add / bk_contains would have returned for key i, applied in order (so a
 * key repeated within a batch is new only the first time). Keys are hashed and
 * their memory prefetched a group at a time, so cache misses overlap.
 * Returns BK_OK, BK_EINVAL (f NULL; keys, lens or results NULL with n > 0;
 * any key NULL with len > 0: then nothing is applied), BK_EREADONLY, or an
 * error of an add or lookup (BK_ENOMEM/BK_ERANGE from scalable growth; a
 * Redis filter's BK_EIO, BK_ESERVER, BK_ERANGE). After such an error every
 * key still has its results[i]: 0 or 1 for each key that was applied (its
 * answer stands: a key told 1 is in the filter, so report it), the negative
 * error code for each key that was not. Local filters apply a prefix of the
 * batch; a Redis filter's pipeline may confirm any subset.
 * Thread-safety as the single calls. A blocked scalable chain takes its
 * growth lock for a chunk of keys at a time (docs/history.md) when no other
 * thread is adding to it; adders that come meanwhile wait for that chunk. */
BK_API int bk_add_batch(bk_filter *f, const void *const *keys, const size_t *lens, size_t n,
                        int *results);
BK_API int bk_contains_batch(const bk_filter *f, const void *const *keys, const size_t *lens,
                             size_t n, int *results);

/* Worker threads for batch calls, as zstd's nbWorkers: a pool made once and
 * lent to any number of calls, on any filters, one call at a time (a second
 * caller waits for the first). */
typedef struct bk_workers bk_workers;

/* Most threads a pool may have. */
#define BK_WORKERS_MAX 256

/* Start a pool of `threads` threads counting the caller's (threads - 1 are
 * started), 0 for bk_workers_cpus(). A pool of 1 starts none: its calls run
 * on the caller's thread and on threads lent to them with bk_workers_help
 * (for a program whose other thread, a reader, helps while it waits: with
 * N CPUs, a pool of N - 1 and the reader keep N threads busy, never more).
 * *out owns the threads until bk_workers_free. Idle threads sleep. Returns
 * BK_OK, BK_EINVAL (out NULL, threads > BK_WORKERS_MAX), BK_ENOMEM or
 * BK_ESYS (a thread could not start; none is left running). */
BK_API int bk_workers_new(unsigned threads, bk_workers **out);

/* The CPUs this process may run on (sched_getaffinity), at least 1 and at
 * most BK_WORKERS_MAX: the size of bk_workers_new(0)'s pool. Thread-safe. */
BK_API unsigned bk_workers_cpus(void);

/* Stop and join the pool's threads and free it (NULL: nothing). Not while a
 * call uses it. */
BK_API void bk_workers_free(bk_workers *w);

/* Threads of the pool, the caller's included; 1 for NULL. Thread-safe. */
BK_API unsigned bk_workers_threads(const bk_workers *w);

/* Lend the calling thread to the batch call running on w, if one is: it
 * takes a share of the call's work and returns when none is left to take.
 * Returns 1 if it took part, 0 if no call was running (w NULL: 0). Helpers
 * may join a pool of any size, 1 included. For a thread that waits for a
 * batch call made on another thread (a reader handing batches to an adding
 * thread): waiting this way keeps every core busy. Thread-safe; results are
 * unchanged by helpers. */
BK_API int bk_workers_help(bk_workers *w);

/* bk_add_batch and bk_contains_batch on the threads of w (w NULL: on the
 * caller's alone), with the same arguments, errors and results: results[i]
 * is exactly what the single-threaded call gives for the same filter state,
 * whatever the number of threads. Keys are hashed in parallel; lookups are
 * split among the threads; adds are split by the memory they write (a
 * blocked standard filter's blocks, a blocked scalable chain's newest
 * slice's blocks, while no growth can fall inside the batch), each thread
 * applying its own keys in input order, so a key's answer depends only on
 * the keys before it, as in order. Where that split does not exist (classic
 * layout, counting and window filters, the batch during which a chain
 * grows) the caller's thread applies the keys in order while the other
 * threads hash the next ones (hashing and applying overlap). Redis
 * filters run their own batch path on the caller's thread. On a pool of 1
 * adds are pipelined instead: helpers (bk_workers_help) hash the keys ahead
 * while the caller applies the hashed keys in input order, 4,096 at a time
 * (a chain in its split mode, as bk_add_batch does); with no helper,
 * bk_add_batch is faster (one pass instead of two). Also
 * BK_ENOMEM (scratch for the digests; nothing applied). Thread-safety as
 * bk_add_batch: a scalable chain's chunk is split only when no other thread
 * is adding to it (it then holds the chain's growth lock, and other adders
 * wait for that chunk). */
BK_API int bk_add_batch_mt(bk_filter *f, bk_workers *w, const void *const *keys, const size_t *lens,
                           size_t n, int *results);
BK_API int bk_contains_batch_mt(const bk_filter *f, bk_workers *w, const void *const *keys,
                                const size_t *lens, size_t n, int *results);

/* Remove one occurrence of a key (the variants that remove:
 * bk_variant_removes, counting and cuckoo). BK_OK, BK_ENOTFOUND (counting:
 * some probed counter is zero; cuckoo: neither bucket holds its
 * fingerprint: the key was never added; nothing changes), BK_ENOTSUP
 * (standard, scalable, window), BK_EINVAL, BK_EREADONLY (mapped
 * read-only), and a Redis filter's BK_EIO / BK_ESERVER. Saturated counters (15) are
 * sticky and never decremented, so overflow never causes a false negative,
 * and no counter ever goes below zero; a cuckoo filter's key whose two
 * buckets hold only its fingerprint is sticky the same way. But removing a
 * key that was never added and that the filter reports present (a false
 * positive, at the filter's rate) succeeds, and decrements counters (takes
 * a fingerprint copy) that other keys set: a key that was added may then
 * read absent. Remove only keys you added (measured: 20,000 removals of
 * never-added keys from a counting filter of 1,000 took out the 137 false
 * positives and made 512 added keys absent).
 * Concurrent with bk_add/bk_contains/bk_remove (the filter's write lock: a
 * removal and its rollback are one step to every other thread). */
BK_API int bk_remove(bk_filter *f, const void *key, size_t len);

/* How many copies of key f holds, into *out: a RedisBloom cuckoo filter's
 * estimate (variant rbcuckoo: both buckets' copies of the fingerprint in
 * every sub-filter, a bucket counted twice when the two are one; CF.COUNT).
 * Like bk_contains it can count a copy another key put there, never fewer
 * than were added and not removed. BK_OK, BK_EINVAL (f or out NULL, key
 * NULL with len > 0), BK_ENOTSUP (a variant that keeps no copies).
 * Concurrent as bk_contains. */
BK_API int bk_count(const bk_filter *f, const void *key, size_t len, uint64_t *out);

/* Pack f's cells where a variant can (rbcuckoo: move fingerprints of newer
 * sub-filters into older ones, drop the newest while it empties, and reset
 * the deletes count: CF.COMPACT); answers are unchanged. BK_OK,
 * BK_EINVAL, BK_EREADONLY, BK_ENOTSUP (a variant with nothing to pack).
 * Concurrent with other calls (the filter's write lock). */
BK_API int bk_compact(bk_filter *f);

/* Empty the filter (scalable: back to one slice; window: no generation),
 * keeping its configuration and hash key. Errors: BK_EINVAL, BK_EREADONLY
 * (mapped read-only), and a Redis filter's BK_EIO / BK_ESERVER (nothing or
 * everything cleared), or BK_ENOTSUP for one kept by bloomkit's Redis
 * module (drop its key: bk_redis_drop). Not concurrent with any other use
 * of f. */
BK_API int bk_clear(bk_filter *f);

/* Free what the clock has aged out, without waiting for the next add: a
 * window filter drops the generations it no longer consults (their keys
 * were already forgotten: no answer changes), and when every generation has
 * expired keeps one new, empty generation for the current span. Returns 1
 * when something was freed, 0 when nothing had expired (always 0 for the
 * variants that keep no time), or BK_EINVAL (f NULL), BK_EREADONLY (mapped
 * read-only), BK_ENOMEM or BK_ERANGE (the empty generation could not be
 * made: the filter is unchanged). Concurrent with bk_add and bk_contains, as
 * an add that starts a new span is. */
BK_API int bk_expire(bk_filter *f);

typedef struct bk_filter_stats {
    const char *variant;     /* bk_variant_name of its variant ("standard", ...); static */
    const char *hash;        /* bk_hash_name of its hash ("siphash24", ...); static */
    uint64_t capacity;       /* configured n (scalable: total of all slices) */
    double fpr;              /* configured target rate */
    uint64_t bits;           /* m: bits (counting: counters; cuckoo: slots; scalable: sum) */
    uint64_t bytes;          /* bytes of payload memory */
    unsigned k;              /* probes per key (scalable: of the newest slice; cuckoo: 2,
                                the buckets a lookup reads) */
    uint64_t keys;           /* bk_add calls that reported new (counting, cuckoo: adds -
                                removes) */
    uint64_t set_bits;       /* bits set (counting: non-zero counters; cuckoo: slots taken) */
    double fill;             /* set_bits / bits */
    double est_cardinality;  /* distinct keys estimated from the fill */
    double est_fpr;          /* current rate estimated from the fill */
    uint32_t slices;         /* 1 except scalable */
    uint64_t saturated;      /* counting: counters stuck at 15; else 0 */
    double model_fpr;        /* rate the sizing model predicts for the keys added:
                                per slice from its m, k, layout and keys, compounded */
    int64_t redated_from_ms; /* window: when its newest generation was found more than a
                                span ahead of the clock (written under a clock that ran
                                ahead, or the clock stepped back), that span's start, ms */
    int64_t redated_to_ms;   /* and the span's start it was moved back to, with every
                                generation (docs/windows.md); both 0: never re-dated */
    double bits_per_key;     /* bytes * 8 / keys: the memory a key added has cost so far
                                (0 before the first) */
    double rate_bound;       /* the rate once every array holds the keys it was sized for,
                                compounded over a chain's slices (as est_fpr): the most a
                                chain reaches with the slices it has, under fpr however it
                                grows; for a filter that takes keys past its capacity, its
                                rate at capacity */
    uint64_t state_bytes;    /* bytes of its own structures besides the arrays `bytes`
                                counts (a host's memory figures add the two) */
} bk_filter_stats;

/* Fill *st with f's figures. Errors: BK_EINVAL. Safe concurrently with
 * bk_add/bk_contains on standard and scalable (figures are then a snapshot that
 * may be slightly behind). bk_stats fills this header's bk_filter_stats;
 * bk_stats_sized fills the first `size` bytes of the caller's (its sizeof,
 * from whichever bloomkit.h it was built with: the fields this library does
 * not know are zeroed), so a binding or a program built against another
 * release reads a struct of its own layout. */
BK_API int bk_stats(const bk_filter *f, bk_filter_stats *st);
BK_API int bk_stats_sized(const bk_filter *f, bk_filter_stats *st, size_t size);

/* One array of a filter: a standard or counting filter has one, a scalable
 * chain one per slice, a window filter the slices of each generation's chain,
 * oldest generation first. */
typedef struct bk_slice_stats {
    uint64_t bits;         /* m: bits (counting: counters; cuckoo: slots) */
    uint64_t bytes;        /* payload bytes */
    unsigned k;            /* probes per key */
    uint64_t capacity;     /* keys it was sized for */
    double fpr;            /* rate it was sized for */
    uint64_t keys;         /* adds it took (counting, cuckoo: adds - removes) */
    uint64_t set_bits;     /* bits set (counting: non-zero counters; cuckoo: slots taken) */
    double fill;           /* set_bits / bits */
    double est_fpr;        /* its own rate, estimated from its fill */
    int64_t span_start_ms; /* window: its keys were added in [span_start_ms, span_end_ms), */
    int64_t span_end_ms;   /* ms since the epoch (forgotten a window after the end); else 0 */
} bk_slice_stats;

/* Fill the first `size` bytes of *out (sizeof, as for bk_stats_sized) with
 * array i of f (i < bk_filter_stats.slices). Errors: BK_EINVAL (NULL, or i
 * out of range). Same thread-safety as bk_stats. */
BK_API int bk_slice_info(const bk_filter *f, uint32_t i, bk_slice_stats *out, size_t size);

/* bk_stats_sized and bk_slice_info from what f holds at hand: no cell is
 * read and nothing checked, so the call costs the same on a filter just
 * loaded as on one in use (bk_stats first checks a loaded expandable
 * table whole: docs/performance.md). The figures of the shape and the
 * counts kept (variant, hash, capacity, bits, bytes, keys, slices, k, fpr,
 * rate_bound, bits_per_key, state_bytes, redated_*; a slice's bits, bytes,
 * k, capacity, fpr, keys, span_*) are bk_stats' own; the figures read from
 * the cells (set_bits, fill, est_cardinality, est_fpr, model_fpr,
 * saturated; a slice's set_bits, fill, est_fpr) are 0. What a host's
 * memory accounting and a count of keys need. Errors: as bk_stats and
 * bk_slice_info, and BK_ENOTSUP for a filter in Redis (its figures are
 * the server's: bk_stats asks it). Same thread-safety as bk_stats. */
BK_API int bk_stats_held(const bk_filter *f, bk_filter_stats *st, size_t size);
BK_API int bk_slice_held(const bk_filter *f, uint32_t i, bk_slice_stats *out, size_t size);

/* The figures every surface reports of a filter (the command's info and info
 * --json, the module's BK.INFO, Python's stats(), docs/figures.md) come from
 * one table, in its order, under its names: a new figure is one row. */
typedef enum bk_figure_type {
    BK_FIGURE_TEXT = 0,  /* .text */
    BK_FIGURE_COUNT = 1, /* .count: an unsigned integer */
    BK_FIGURE_REAL = 2,  /* .real */
    BK_FIGURE_MS = 3     /* .ms: a time, ms since the epoch (0: none) */
} bk_figure_type;

typedef struct bk_figure {
    const char *name;    /* "est_fpr": the name in every machine-read form; static */
    const char *label;   /* "est. fpr": the command's text form; static */
    const char *meaning; /* one line for the docs; static */
    unsigned variants;   /* bit 1 << v for each bk_variant v it means something for
                            (the others report 0 or the variant's only value) */
    bk_figure_type type;
    const char *text; /* the value, by type; static ("" when described only) */
    uint64_t count;
    double real;
    int64_t ms;
} bk_figure;

/* Row i of the table (0, 1, ... until it returns 0), described and, when st
 * and cfg are given, valued: st as bk_stats filled it (this header's whole
 * struct) and cfg as bk_get_config did, both of the same filter. Fills the
 * first `size` bytes of *out (its sizeof, as for bk_stats_sized). Returns 1
 * with row i, 0 past the last row, BK_EINVAL (out NULL, size 0, or only one
 * of st and cfg). Thread-safe; nothing to free. */
BK_API int bk_figure_at(unsigned i, const bk_filter_stats *st, const bk_config *cfg, bk_figure *out,
                        size_t size);

/* A new in-memory filter equal to f: configuration, hash key, every slice's
 * cells and counts (a filter mapped from a file is copied into memory).
 * *out owns it (bk_free). Errors: BK_EINVAL, BK_ENOTSUP (a Redis filter:
 * bk_redis_pull makes a local copy), BK_ENOMEM; *out is NULL on error. Not
 * concurrent with writers of f. */
BK_API int bk_copy(const bk_filter *f, bk_filter **out);

/* Copy f's configuration (with its actual hash key, has_key = 1) into *cfg.
 * Errors: BK_EINVAL. Thread-safe. */
BK_API int bk_get_config(const bk_filter *f, bk_config *cfg);

/* The value of one configuration key of f ("input", "fpr", "fingerprint"),
 * as bk_config_get writes it from bk_get_config's result, into buf like
 * snprintf: returns the length the value needs (excluding NUL). Errors:
 * BK_EINVAL (NULL f or key, NULL buf with buflen > 0), BK_ECONFIG (an unknown
 * key). Thread-safe. */
BK_API int bk_get_setting(const bk_filter *f, const char *key, char *buf, size_t buflen);

/* 1 when a and b hold the same filter: the same variant, configuration and
 * hash key, and every slice the same shape with the same cells (a window's
 * generations the same spans), 0 otherwise. The counts of keys added are not
 * compared: a filter and its union with a copy of itself are equal. Either
 * may be mapped from a file. Errors: BK_EINVAL (NULL), BK_ENOTSUP (a filter
 * in Redis: pull it first). Not concurrent with writers of a or b. */
BK_API int bk_equal(const bk_filter *a, const bk_filter *b);

/* One move of bk_defrag: block (as f's allocator gave it) copied into a new
 * block of that allocator and freed, the new block returned; or NULL to
 * leave it where it is, unchanged. Redis's RedisModule_DefragAlloc is one. */
typedef void *(*bk_move_fn)(void *block, void *arg);

/* Offer array i of f (its arrays numbered as bk_slice_info numbers them)
 * to move, so that a host compacting its heap (Redis's active defrag) can
 * relocate it: the array's new place is f's from then on, its contents and
 * every answer unchanged. Arrays a file mapping holds stay. Offer i = 0,
 * 1, ... until BK_ERANGE, across calls if the host must pause. Returns
 * BK_OK (offered: moved or left), BK_ERANGE (i past the last array: all
 * were offered), BK_EINVAL (f or move NULL), BK_ENOTSUP (a filter in
 * Redis, whose arrays are not here), BK_EREADONLY. Not concurrent with any
 * other use of f. */
BK_API int bk_defrag(bk_filter *f, uint32_t i, bk_move_fn move, void *arg);

/* Union: dst |= src. Both must be the same variant with the same hash and key
 * and the same shape (bits and probes; for scalable the same slices; for
 * window the same generations). standard ORs bits, counting adds counters
 * (saturating at 15, sticky), scalable ORs slice by slice, window generation
 * by generation. The result answers "present" for every key of either, and
 * for standard and counting equals a filter built from both key sets.
 * keys becomes the sum of both sides' keys. Errors: BK_EINVAL (NULL),
 * BK_EINCOMPAT (anything differs; nothing changes), BK_EREADONLY (dst mapped
 * read-only), BK_ENOTSUP (a cuckoo filter, whose union would insert every
 * key again and could fail part-way; a filter in Redis: pull it first).
 * Detail in bk_last_error(). Not concurrent with any other use of
 * dst, nor with writers of src. */
BK_API int bk_merge(bk_filter *dst, const bk_filter *src);

/* Intersection of two standard filters: dst &= src, same compatibility rules
 * and errors as bk_merge. Every key present in both stays present; keys
 * becomes the smaller side's. BK_ENOTSUP for counting, scalable, window and
 * cuckoo filters and for filters in Redis. Detail in bk_last_error(). */
BK_API int bk_intersect(bk_filter *dst, const bk_filter *src);

/* ------------------------------------------------------------ persistence -- */

/* Save f to path atomically (docs/file-format.md): written to a temporary in
 * the same directory with mode 0600 (the file holds the hash key), fsync'd,
 * renamed over path, directory fsync'd. A crash at any moment leaves the old
 * file or the new one at path. On error nothing at path changes and no
 * temporary is left (except after a kill, where a ".NAME.tmp.XXXXXX" may
 * remain). A file at path with more than one hard link is not replaced
 * (BK_EIO): the rename would give the new filter to that name only.
 * Errors: BK_EINVAL, BK_ENOMEM, BK_ERANGE, BK_EIO (detail, including
 * the OS reason, in bk_last_error()). If the process has a file-size limit
 * (RLIMIT_FSIZE), ignore SIGXFSZ to get BK_EIO instead of being killed.
 * Safe concurrently with bk_add/bk_contains on standard and scalable filters
 * (each chunk is a consistent snapshot); counting filters need the caller's lock. */
BK_API int bk_save(const bk_filter *f, const char *path);

/* Called by a long call with the work done of total (total 0: unknown),
 * every so often, on the calling thread. Returning nonzero stops the call,
 * which then returns BK_ECANCELED. */
typedef int (*bk_progress_fn)(uint64_t done, uint64_t total, void *arg);

/* bk_save reporting the bytes written of the file's size to progress (which
 * may be NULL) about every 64 MiB and at the end: for a tool that shows
 * progress while a large filter is written. progress saying stop ends the
 * save with BK_ECANCELED, and path is as it was. Otherwise as bk_save. */
BK_API int bk_save_progress(const bk_filter *f, const char *path, bk_progress_fn progress,
                            void *arg);

/* Load a file written by bk_save (any variant) into memory from the current
 * allocator. *out owns the new filter (bk_free). Errors: BK_EINVAL,
 * BK_EIO (missing, unreadable, a directory), BK_ENOMEM, BK_ECORRUPT (bad
 * magic, unknown version, fields out of range or inconsistent, size differs
 * from the header's, checksum mismatch: never reads out of bounds). Detail in
 * bk_last_error(). On error *out is NULL. Thread-safe. */
BK_API int bk_load(const char *path, bk_filter **out);

/* The bytes bk_save_buffer writes for f now: exactly the size of the file
 * bk_save would write (a chain that grows afterwards needs more). Errors:
 * BK_EINVAL, BK_ENOTSUP (a Redis filter), BK_ERANGE (more slices or bytes
 * than the format holds). Thread-safety as bk_save. */
BK_API int bk_save_size(const bk_filter *f, uint64_t *size);

/* Write f into buf[0..cap) in exactly the file format of bk_save (the same
 * bytes: a buffer written here and a file saved are interchangeable);
 * *len = the bytes written. The caller owns buf. Errors: BK_EINVAL (f, buf
 * or len NULL), BK_ENOTSUP (a Redis filter: bk_redis_pull first),
 * BK_ERANGE (cap too small: *len = the size needed and nothing is written;
 * or a filter the format cannot hold), BK_ENOMEM. Thread-safety as bk_save
 * (each chunk a consistent snapshot). */
BK_API int bk_save_buffer(const bk_filter *f, void *buf, size_t cap, size_t *len);

/* Read a filter from buf[0..len), bytes in the file format (bk_save_buffer,
 * or a file's contents), with every check of bk_load (framing, header
 * fields, sizes, both checksums, padding, census; never reads outside buf).
 * The filter copies what it needs: buf may be freed afterwards. *out owns
 * the new filter (bk_free). Errors: BK_EINVAL, BK_ENOMEM, BK_ECORRUPT
 * (detail in bk_last_error()); on error *out is NULL. Thread-safe. */
BK_API int bk_load_buffer(const void *buf, size_t len, bk_filter **out);

/* The whole size of the image (file) that begins with head[0..len), as its
 * header declares it: for a reader that receives an image in pieces (the
 * Redis module's BF.LOADCHUNK) and must know when it is whole, and refuse a
 * wrong one before it takes memory for it. head must hold the whole header
 * (its first 128 bytes say how long it is: 128 + 72 per slice + the config
 * text, rounded up to 8), which is checked whole here (checksum, every
 * field, consistency with the declared size); bk_load_buffer checks the
 * payloads. Errors: BK_EINVAL (NULL, or fewer bytes than the header: the
 * detail names its length), BK_ECORRUPT (detail in bk_last_error()).
 * Thread-safe. */
BK_API int bk_image_size(const void *head, size_t len, uint64_t *size);

/* One writer at a time. A read-modify-write of a filter file (load or map,
 * change, save or sync) by two processes at once loses one side's keys: the
 * second save replaces the first. bk_lock_file takes an exclusive advisory
 * lock for path: hold it from before the load to after the save, in every
 * writer (the bloomkit command, the Python binding and Scrapy's filter all
 * do). Readers need no lock (saves are atomic renames).
 *
 * The lock is flock(2) on ".NAME.lock" beside the file (beside the target of
 * a symbolic link), created 0600 for as long as it is held; it holds the
 * holder's pid. It is released (and the lock file removed) by
 * bk_unlock_file, and released by the holder's exit or death.
 * Advisory: a writer that does not call this is not stopped. On NFS it is
 * only as good as the server's flock emulation. A file with more than one
 * hard link is refused (BK_EIO, as bk_save refuses to replace one): its
 * names would not share the lock, and a save, a rename, gives the new
 * filter to one name only.
 *
 * flags: 0 waits for the lock; BK_LOCK_NOWAIT fails at once with BK_EBUSY
 * when another process holds it (bk_last_error() names its pid). Other
 * errors: BK_EINVAL, BK_EIO (the lock file cannot be created: an unwritable
 * directory), BK_ENOMEM. *out owns the lock (NULL on error). Each call opens
 * the lock file anew, so a second call in the same process waits (or gets
 * BK_EBUSY) like another process would. Thread-safe. */
#define BK_LOCK_NOWAIT 1u
typedef struct bk_file_lock bk_file_lock;
BK_API int bk_lock_file(const char *path, unsigned flags, bk_file_lock **out);

/* Release and free a lock from bk_lock_file; NULL does nothing. */
BK_API void bk_unlock_file(bk_file_lock *lock);

/* Flags of bk_open_mmap. */
#define BK_MAP_READONLY 0u /* queries only; bk_add etc. return BK_EREADONLY */
#define BK_MAP_WRITE    1u /* adds go to the file; bk_sync() makes it consistent */
#define BK_MAP_NOVERIFY 2u /* skip verification: O(1) open; counts trusted until bk_sync */

/* Map a filter file instead of reading it: the payload stays in the page
 * cache, so opening costs one pass to verify the checksum (skipped with
 * BK_MAP_NOVERIFY) and no heap. Same errors as bk_load. With BK_MAP_WRITE, the
 * file's checksum is stale between an add and the next bk_sync(); after a
 * crash in that window, reopen with BK_MAP_WRITE | BK_MAP_NOVERIFY and bk_sync
 * (which recounts and re-checksums). bk_free() unmaps.
 * Another process truncating the file while it is mapped makes later access
 * fault (SIGBUS); do not share mapped files with writers that truncate.
 * A writer holds bk_lock_file(path) while it has the file mapped for writing.
 * If the file is replaced (renamed over) or removed meanwhile, bk_sync and
 * bk_close fail with BK_EIO instead of writing into the orphaned inode. */
BK_API int bk_open_mmap(const char *path, unsigned flags, bk_filter **out);

/* Flush a BK_MAP_WRITE filter: recompute counts and checksum, rewrite the
 * header, msync. A scalable filter that grew past the slices in its file is
 * saved anew (atomically, bk_save) to the same path instead. Errors:
 * BK_EINVAL (not mapped), BK_EREADONLY (mapped read-only), BK_EIO, BK_ENOMEM.
 * Not concurrent with writers of f. */
BK_API int bk_sync(bk_filter *f);

/* What is here for tools, bindings and tests (the clock a test moves, the
 * SIMD path in use, the configuration table for --help and man pages, the
 * layout of the structs a binding mirrors, ...) is in bloomkit_tools.h:
 * it works and is tested as this header is, but it may change in any
 * release, as zstd's experimental API may.
 *
 * Shared filters in Redis are an optional part of libbloomkit:
 * #include <bloomkit_redis.h>. This header needs nothing of Redis. */

#ifdef __cplusplus
}
#endif

#endif /* BLOOMKIT_H */
