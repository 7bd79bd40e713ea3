/* config.h - config validation shared by the parser and bk_new (internal). */
#ifndef BK_CORE_CONFIG_H
#define BK_CORE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "bloomkit.h"
#include "bloomkit_tools.h"

/* The value of a count, size or duration key of c (0 for an unknown key or
 * one of another kind): how a variant reads its own keys that have no field
 * of their own (bk_config.more). */
uint64_t bk_config_count(const bk_config *c, const char *key);
/* Set such a key of c to value: BK_OK, or BK_EINVAL (an unknown key, one of
 * another kind, a value out of its range; c unchanged). */
int bk_config_put(bk_config *c, const char *key, uint64_t value);

/* A configuration of data made elsewhere (RedisBloom's): variant v, hash,
 * a zero key (has_key 1), capacity and fpr, the count keys[i] = values[i],
 * the rest defaults. BK_OK, or when strict BK_ENOTSUP naming what no
 * configuration states (bk_last_error); not strict, such a configuration
 * is kept as described (a key past what it takes left at its default),
 * unchecked: a file cannot state it, and saving it is refused. */
int bk_config_stated(bk_config *cfg, bk_variant v, bk_hash_alg hash, uint64_t capacity, double fpr,
                     const char *const *keys, const uint64_t *values, unsigned n, int strict);

/* The static name of a named key's value in c ("raw" for "input"), or NULL
 * (an unknown key, one that is not named, a value out of range). */
const char *bk_config_name_of(const bk_config *c, const char *key);

/* Where key i of the table keeps its value: its offset in bk_config
 * ((size_t)-1 past the last key). For the test that no two keys share one. */
size_t bk_config_key_offset(unsigned i);

#endif
