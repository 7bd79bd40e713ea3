/*
 * module.h - bloomkit's Redis module: what its files share (internal).
 *
 * A key of the module's type ("bloomkit0" in TYPE, encoding version
 * BKM_ENCVER) holds one bkm_value: a bk_filter of any variant, made and run
 * through bloomkit.h like a local filter. The files, each pointing only at
 * the ones below it (and commands.c back at the handlers it lists):
 *   onload.c   loading: arguments, the allocator and clock, type, commands, INFO
 *   commands.c the table of every command (commands.h), and BK.AT's lookup
 *   bf.c       RedisBloom's BF.* commands (on RedisBloom's own keys: bf_rbchain.c)
 *   rb.h       RedisBloom's types and commands: rbtype.c, bf_rbchain.c, cf.c (CF.*)
 *   bk.c       bloomkit's BK.* commands and BK.AT (replication and AOF)
 *   dump.c     BF.SCANDUMP / BF.LOADCHUNK
 *   sweep.c    BK.SWEEP: window filters free expired generations on a timer
 *   items.c    the items of an add or a lookup against a filter
 *   propagate.c the time a command acts at, and its writes sent to replicas and
 *              the AOF with it
 *   value.c    the type's callbacks: RDB, AOF rewrite, MEMORY USAGE, COPY, free
 *   shared.c   values, keys, creation, error replies, the allocator, headroom
 *   args.c     argument parsing (no server calls: fuzzed on its own)
 *   payload.c  the RDB payload and dump images (no server calls: fuzzed)
 *   modclock.c the module's clock (no server calls)
 *   rm_api.c   the module API's function pointers (rm_api.h), looked up at load
 */
#ifndef BKM_MODULE_H
#define BKM_MODULE_H

#include <stdint.h>

#include "bloomkit.h"
#include "bloomkit_tools.h"
#include "args.h"
#include "rm_api.h"
#include "modclock.h"

#define BKM_NAME "bloomkit"
/* MODULE LIST's version under MODULE_NAME bf: RedisBloom 2.6.28's */
#define BKM_RB_MODULE_VERSION 20628
#define BKM_TYPENAME          "bloomkit0" /* 9 characters, as the type API requires */
#define BKM_ENCVER            1

struct bkm_value;
/* A value's place in one of the module's lists (links.c). */
typedef struct bkm_link {
    struct bkm_value *prev, *next;
    int in; /* on the list */
} bkm_link;

typedef struct bkm_value {
    bk_filter *f;
    uint64_t writes; /* bumped by every change: dates the dump snapshot */
    uint8_t *dump;   /* BF.SCANDUMP's snapshot of the image, or NULL */
    size_t dump_len;
    uint64_t dump_writes; /* writes when it was taken */
    uint64_t dump_id;     /* its snapshot number (kept after the buffer is freed) */
    uint64_t keys;        /* a standard filter's keys, once keys_known (BF's capacity check) */
    int keys_known;
    int64_t at; /* the time of its state: of its last change, or the saved time it loaded at */
    int window; /* a window filter: its writes need the clock, and carry it to replicas */
    int counts; /* every add changes it (a multiset: counting, cuckoo; a window's time) */
    int capped; /* a standard filter: BF.* refuses new items past its capacity */
    int cuckoo; /* a keyed CF.* key (variant rbcuckoo): BF.* treat it as RedisBloom's cuckoo */
    uint64_t capacity; /* its configuration's capacity */
    bkm_link swept;    /* window filters: the sweep's list (sweep.c) */
    size_t counted;    /* its bytes as INFO counts them (held.c) */
    bkm_link changed;  /* changed since INFO counted it: held.c's list */
} bkm_value;

/* The module's settings (module arguments; args.h). */
extern bkm_settings bkm_conf;
extern RedisModuleType *bkm_type;

/* Put v on the list at *head / take it off (no-ops when it already is /
 * is not), its bkm_link at offset `at` (offsetof) in bkm_value. O(1). */
void bkm_list_add(bkm_value **head, bkm_value *v, size_t at);
void bkm_list_remove(bkm_value **head, bkm_value *v, size_t at);

/* A new value owning f (NULL when out of memory: f is then freed). */
bkm_value *bkm_value_new(bk_filter *f);
void bkm_value_free(void *value);
/* Forget any dump snapshot, and date v: call after every change. */
/* What MEMORY USAGE says of v: its filter's bytes, and its dump snapshot's. */
size_t bkm_value_usage(const bkm_value *v);
/* The bytes the server's allocator gives for a request of n (its size
 * classes), and those of a filter's arrays and structure (held.c). */
size_t bkm_alloc_class(uint64_t n);
/* Ask the server's allocator, once at load, whether it rounds to size
 * classes (held.c). */
void bkm_alloc_probe(void);
size_t bkm_filter_usage(const bk_filter *f);
/* INFO's count of v brought up to date with what it holds now; v changed,
 * to be counted again when INFO is read (held.c: a library call made at
 * once would replace the error text a reply is about to give); v going. */
void bkm_value_recount(bkm_value *v);
void bkm_value_dirty(bkm_value *v);
void bkm_value_uncount(bkm_value *v);

static inline void bkm_value_changed(bkm_value *v)
{
    v->writes++; /* any dump snapshot is no longer the filter's */
    if (v->window)
        v->at = bkm_clock_now(); /* BK.AT's time when it replays a master's write */
    if (v->dump) {
        RedisModule_Free(v->dump);
        v->dump = NULL;
    }
    bkm_value_dirty(v);
}
/* The time v's state is at, for its RDB payload: the clock's time at its
 * last change (BK.AT's when a replica or a replay made it), or the saved
 * time it was loaded at when unchanged since. Loaded at that time, the
 * payload is the same value whatever times it met (a window loaded at a
 * time far from the clock, or written at a master's time that stepped
 * back, is re-dated only by its own next change), and no value's time
 * moves another's or the clock. */
int64_t bkm_value_time(const bkm_value *v);

/* Open key `name` for a command: *v the filter, or NULL when the key is
 * empty (*key may then be NULL: a missing key opened to read). 0, or -1
 * after replying WRONGTYPE for a key of another type. The caller closes
 * *key (RedisModule_CloseKey accepts NULL). */
int bkm_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **key,
             bkm_value **v);

/* bkm_open for a BF.* command: 0 as bkm_open (a bloomkit filter or an
 * empty key, open: the caller closes *key), -1 after replying WRONGTYPE
 * (a write to a key of another type or a cuckoo filter), or 1 (nothing
 * replied, nothing open) for a key the RedisBloom side takes (rb.h):
 * RedisBloom's chain, any other key for a lookup (which answers 0, as
 * RedisBloom's does), or, for a command that makes keys (makes), an empty
 * key that is to be RedisBloom's (bkm_makes_redisbloom). One lookup of the
 * key for all of it. */
int bkm_open_bf(RedisModuleCtx *ctx, RedisModuleString *name, int makes, RedisModuleKey **key,
                bkm_value **v);

/* bkm_open for a command that needs the filter: NULL after replying (not
 * found, WRONGTYPE), else the key to close, with *v the filter. */
RedisModuleKey *bkm_open_existing(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                                  bkm_value **v);
/* A filter open for its figures: the value, its statistics and configuration. */
typedef struct bkm_figures {
    bkm_value *v;
    bk_filter_stats st;
    bk_config cfg;
} bkm_figures;
/* bkm_open_existing to read, at the command's time (bkm_time_begin), with
 * the filter's figures in *out (held: those at hand, bk_stats_held, which
 * never check a loaded table whole): NULL after replying (not found,
 * WRONGTYPE, an error of bk_stats), else the key to close. */
RedisModuleKey *bkm_open_figures(RedisModuleCtx *ctx, RedisModuleString *name, int held,
                                 bkm_figures *out);
/* bkm_open for a command that makes a filter: NULL after replying
 * (WRONGTYPE, "ERR item exists"), else the empty key to close. */
RedisModuleKey *bkm_open_empty(RedisModuleCtx *ctx, RedisModuleString *name);

/* Reply with the error of a bloomkit code, as "ERR <text>" with
 * bk_last_error()'s detail where there is one. */
int bkm_reply_code(RedisModuleCtx *ctx, int rc);

/* Create a filter for cfg under an empty key: refused before any memory is
 * taken when its first arrays pass the module's MAX_BYTES or what
 * maxmemory leaves (but for BK.AT's replay of what the master made), and
 * its pages touched once made (bk_touch: its first writes cost what later
 * ones do). BK_OK or a code, the reply in err. */
int bkm_create(RedisModuleCtx *ctx, RedisModuleKey *key, const bk_config *cfg, bkm_value **out,
               char *err, size_t errlen);

/* ---- cmdtime.c: the time a command acts at, the memory it may take ---- */

/* Set the clock for the command now running: the server's clock on a
 * master; BK.AT's on a command from the master or the AOF; on a replica
 * (reads), the latest master time replicated. */
void bkm_time_begin(RedisModuleCtx *ctx);
/* 1 while BK.AT runs a command for the master or the AOF: it then makes
 * exactly what the master made (no local limits applied). */
extern int bkm_replaying;

/* 0 when the server has room for `need` more bytes under maxmemory (or no
 * maxmemory, or BK.AT replaying the master's write); else -1 with the
 * reply in err, saying how much is needed and how much there is. Call
 * before allocating anything large. */
int bkm_headroom(RedisModuleCtx *ctx, uint64_t need, char *err, size_t errlen);
/* What maxmemory leaves now (UINT64_MAX without maxmemory). */
uint64_t bkm_memory_left(RedisModuleCtx *ctx);

/* ---- propagate.c: replication ---- */

/* Replicate a write as BK.AT <now> argv... (argv[0] the command's name). */
void bkm_replicate(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* Replicate a write to v: a window's as bkm_replicate, at the clock's time;
 * any other's as it came (its effect does not depend on the time), then a
 * due sweep. */
void bkm_replicate_write(RedisModuleCtx *ctx, const bkm_value *v, RedisModuleString **argv,
                         int argc);
/* Replicate the creation of the filter under key: BK.AT <now> BK.CREATE key <config with its
 * hash key>, so that replicas and the AOF make the same filter. */
void bkm_replicate_create(RedisModuleCtx *ctx, RedisModuleString *key, const bk_filter *f);
/* ---- items.c: items of a command against a filter ---- */

/* Add items[0..n): results[i] 1 (new), 0 (present), or a negative code for
 * an item not applied (those after the first error). With `bf`, a
 * standard filter refuses new items past its capacity (BK_EFULL: RedisBloom's
 * NONSCALING). *changed is set when the filter changed. Returns BK_OK or
 * the first error. */
int bkm_add_items(bkm_value *v, RedisModuleString **items, size_t n, int bf, int *results,
                  int *changed);
/* Look items up: results[i] 1 or 0. BK_OK or BK_ENOMEM. */
int bkm_contains_items(const bkm_value *v, RedisModuleString **items, size_t n, int *results);
/* Reply with results as an array (a negative result is an error element:
 * "ERR non scaling filter is full" for BK_EFULL on a BF filter), or as one
 * integer (or error) when !array. */
void bkm_reply_results(RedisModuleCtx *ctx, const int *results, size_t n, int array, int bf);
/* results[] scratch for n items (bkm_free), NULL when out of memory (the
 * caller replies). */
int *bkm_results(size_t n);
/* The add of BF.ADD / MADD / INSERT and BK.ADD: argv[first..argc) into v
 * (open under key), the reply (one integer or an array), and when the
 * filter changed, the replication and the keyspace event. Closes key. */
int bkm_add_command(RedisModuleCtx *ctx, RedisModuleKey *key, bkm_value *v,
                    RedisModuleString **argv, int argc, int first, int array, int bf,
                    const char *event);
/* BF.EXISTS / MEXISTS and BK.EXISTS: argv[2..argc) against the filter under
 * argv[1] (a missing key holds nothing). */
int bkm_exists_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int array, int bf);
/* The same on v (NULL: an empty key) open under key, which it closes. */
int bkm_exists_open(RedisModuleCtx *ctx, RedisModuleKey *key, const bkm_value *v,
                    RedisModuleString **argv, int argc, int array, int bf);

/* ---- sweep.c: window filters let go of expired generations ---- */

/* Keep (or stop keeping) v in the sweep's list: only window filters go in. */
void bkm_sweep_track(bkm_value *v);
void bkm_sweep_untrack(bkm_value *v);
/* Run the sweep the timer asked for, in a master's write command (after
 * its replication: bkm_replicate calls it). */
void bkm_sweep_if_due(RedisModuleCtx *ctx);
/* Arm the timer (OnLoad, and after CONFIG SET), unless sweep-ms is 0 or it is armed. */
void bkm_sweep_start(RedisModuleCtx *ctx);

/* ---- onload.c's steps ---- */

/* The library's allocator: the server's (shared.c). */
int bkm_allocator_init(void);
/* The module's data type (value.c). */
int bkm_register_type(RedisModuleCtx *ctx);
/* Active defrag (defrag.c): the type methods defrag and free_effort of
 * bloomkit's type and RedisBloom's two. */
int bkm_defrag_value(RedisModuleDefragCtx *ctx, RedisModuleString *key, void **value);
int bkm_defrag_rb(RedisModuleDefragCtx *ctx, RedisModuleString *key, void **value);
size_t bkm_value_effort(RedisModuleString *key, const void *value);
size_t bkm_rbchain_effort(RedisModuleString *key, const void *value);
size_t bkm_rbcuckoo_effort(RedisModuleString *key, const void *value);
/* Every setting as a server config, then the config file's values for
 * them (configs.c). */
int bkm_register_configs(RedisModuleCtx *ctx);

#endif
