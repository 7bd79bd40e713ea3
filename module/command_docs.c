/*
 * command_docs.c - what COMMAND DOCS, COMMAND INFO and COMMAND GETKEYS say
 * of each command (RedisModule_SetCommandInfo): summary, since, complexity,
 * arity, arguments with their types and tokens, and key specs. BF.* and
 * CF.* as RedisBloom documents them ("since" is RedisBloom's version of the
 * command's debut, which its clients know), BK.* since bloomkit 0.1.0.
 * tests/module/test_commands.py calls every command as its docs describe.
 */
#include <stddef.h>
#include <string.h>

#include "commands.h"

static const RedisModuleCommandInfoVersion version1 = {1, sizeof(RedisModuleCommandHistoryEntry),
                                                       sizeof(RedisModuleCommandKeySpec),
                                                       sizeof(RedisModuleCommandArg)};

#define T(t) REDISMODULE_ARG_TYPE_##t
/* the key: key spec 0 */
#define KEY(n)                                                                                     \
    {                                                                                              \
        .name = (n), .type = T(KEY), .key_spec_index = 0                                           \
    }
/* a required argument, one or more of it, an optional one with a token */
#define ARG(n, t)                                                                                  \
    {                                                                                              \
        .name = (n), .type = T(t), .key_spec_index = -1                                            \
    }
#define MANY(n, t)                                                                                 \
    {                                                                                              \
        .name = (n), .type = T(t), .key_spec_index = -1, .flags = REDISMODULE_CMD_ARG_MULTIPLE     \
    }
#define OPT(n, t, tok)                                                                             \
    {                                                                                              \
        .name = (n), .type = T(t), .key_spec_index = -1, .token = (tok),                           \
        .flags = REDISMODULE_CMD_ARG_OPTIONAL                                                      \
    }
#define WORD(n, tok)                                                                               \
    {                                                                                              \
        .name = (n), .type = T(PURE_TOKEN), .key_spec_index = -1, .token = (tok),                  \
        .flags = REDISMODULE_CMD_ARG_OPTIONAL                                                      \
    }
/* one of the arguments subs, optional */
#define CHOICE(n, subs)                                                                            \
    {                                                                                              \
        .name = (n), .type = T(ONEOF), .key_spec_index = -1,                                       \
        .flags = REDISMODULE_CMD_ARG_OPTIONAL, .subargs = (subs)                                   \
    }
/* ITEMS item [item ...] */
#define ITEMS                                                                                      \
    {                                                                                              \
        .name = "items", .type = T(STRING), .key_spec_index = -1, .token = "ITEMS",                \
        .flags = REDISMODULE_CMD_ARG_MULTIPLE                                                      \
    }
#define END                                                                                        \
    {                                                                                              \
        0                                                                                          \
    }

#define K(f) (REDISMODULE_CMD_KEY_##f)
/* One key, argv[pos]. */
#define SPEC(fl, at)                                                                               \
    {                                                                                              \
        {.flags = (fl),                                                                            \
         .begin_search_type = REDISMODULE_KSPEC_BS_INDEX,                                          \
         .bs.index.pos = (at),                                                                     \
         .find_keys_type = REDISMODULE_KSPEC_FK_RANGE,                                             \
         .fk.range = {0, 1, 0}},                                                                   \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    }

/* BK.MERGE: dest (read and written, as PFMERGE's), then every source (read) */
static RedisModuleCommandKeySpec merge_specs[] = {{.flags = K(RW) | K(ACCESS) | K(INSERT),
                                                   .begin_search_type = REDISMODULE_KSPEC_BS_INDEX,
                                                   .bs.index.pos = 1,
                                                   .find_keys_type = REDISMODULE_KSPEC_FK_RANGE,
                                                   .fk.range = {0, 1, 0}},
                                                  {.flags = K(RO) | K(ACCESS),
                                                   .begin_search_type = REDISMODULE_KSPEC_BS_INDEX,
                                                   .bs.index.pos = 2,
                                                   .find_keys_type = REDISMODULE_KSPEC_FK_RANGE,
                                                   .fk.range = {-1, 1, 0}},
                                                  {0}};

static RedisModuleCommandKeySpec add_spec[] = SPEC(K(RW) | K(INSERT), 1),
                                 read_spec[] = SPEC(K(RO) | K(ACCESS), 1),
                                 meta_spec[] = SPEC(K(RO), 1),
                                 update_spec[] = SPEC(K(RW) | K(UPDATE), 1),
                                 delete_spec[] = SPEC(K(RW) | K(DELETE), 1),
                                 at_spec[] = SPEC(K(RW) | K(UPDATE), 3);

static RedisModuleCommandArg
    key_only[] = {KEY("key"), END},
    key_item[] = {KEY("key"), ARG("item", STRING), END},
    key_items[] = {KEY("key"), MANY("item", STRING), END},
    merge_args[] = {KEY("destkey"),
                    {.name = "sourcekey",
                     .type = T(KEY),
                     .key_spec_index = 1,
                     .flags = REDISMODULE_CMD_ARG_MULTIPLE},
                    END},
    dump_args[] = {KEY("key"), ARG("iterator", INTEGER), END},
    load_args[] = {KEY("key"), ARG("iterator", INTEGER), ARG("data", STRING), END},
    bf_scaling[] =
        {OPT("expansion", INTEGER, "EXPANSION"),
         {.name = "nonscaling", .type = T(PURE_TOKEN), .key_spec_index = -1, .token = "NONSCALING"},
         END},
    bf_reserve[] = {KEY("key"), ARG("error_rate", DOUBLE), ARG("capacity", INTEGER),
                    CHOICE("scaling", bf_scaling), END},
    bf_insert[] = {KEY("key"),
                   OPT("capacity", INTEGER, "CAPACITY"),
                   OPT("error", DOUBLE, "ERROR"),
                   OPT("expansion", INTEGER, "EXPANSION"),
                   WORD("nocreate", "NOCREATE"),
                   WORD("nonscaling", "NONSCALING"),
                   ITEMS,
                   END},
    bf_fields[] = {WORD("capacity", "CAPACITY"),   WORD("size", "SIZE"),
                   WORD("filters", "FILTERS"),     WORD("items", "ITEMS"),
                   WORD("expansion", "EXPANSION"), END},
    bf_info[] = {KEY("key"), CHOICE("single_value", bf_fields), END},
    cf_reserve[] = {KEY("key"),
                    ARG("capacity", INTEGER),
                    OPT("bucketsize", INTEGER, "BUCKETSIZE"),
                    OPT("maxiterations", INTEGER, "MAXITERATIONS"),
                    OPT("expansion", INTEGER, "EXPANSION"),
                    END},
    cf_insert[] = {KEY("key"), OPT("capacity", INTEGER, "CAPACITY"), WORD("nocreate", "NOCREATE"),
                   ITEMS, END},
    bk_create[] = {KEY("key"),
                   {.name = "config",
                    .type = T(STRING),
                    .key_spec_index = -1,
                    .flags = REDISMODULE_CMD_ARG_OPTIONAL | REDISMODULE_CMD_ARG_MULTIPLE},
                   END},
    bk_at[] = {
        ARG("milliseconds", INTEGER),
        ARG("command", STRING),
        {.name = "key", .type = T(KEY), .key_spec_index = 0, .flags = REDISMODULE_CMD_ARG_OPTIONAL},
        {.name = "arg",
         .type = T(STRING),
         .key_spec_index = -1,
         .flags = REDISMODULE_CMD_ARG_OPTIONAL | REDISMODULE_CMD_ARG_MULTIPLE},
        END};

#define DOC(name, since, arity, summary, complexity, specs, args)                                  \
    {                                                                                              \
        name,                                                                                      \
        {                                                                                          \
            &version1, summary, complexity, since, NULL, NULL, arity, specs, args                  \
        }                                                                                          \
    }

static const struct {
    const char *name;
    RedisModuleCommandInfo info;
} docs[] = {
    DOC("BF.RESERVE", "1.0.0", -4, "Creates a new Bloom filter", "O(1)", add_spec, bf_reserve),
    DOC("BF.ADD", "1.0.0", 3, "Adds an item to a Bloom filter, creating it if needed",
        "O(k), k the number of hash functions", add_spec, key_item),
    DOC("BF.MADD", "1.0.0", -3, "Adds one or more items to a Bloom filter, creating it if needed",
        "O(k * n), n the number of items", add_spec, key_items),
    DOC("BF.INSERT", "1.0.0", -4,
        "Adds items to a Bloom filter, creating it with the options given",
        "O(k * n), n the number of items", add_spec, bf_insert),
    DOC("BF.EXISTS", "1.0.0", 3, "Tells whether an item may have been added to a Bloom filter",
        "O(k)", read_spec, key_item),
    DOC("BF.MEXISTS", "1.0.0", -3, "Tells whether each item may have been added to a Bloom filter",
        "O(k * n), n the number of items", read_spec, key_items),
    DOC("BF.INFO", "1.0.0", -2, "Returns a Bloom filter's figures", "O(1)", meta_spec, bf_info),
    DOC("BF.CARD", "2.4.4", 2, "Returns the number of items added to a Bloom filter", "O(1)",
        meta_spec, key_only),
    DOC("BF.SCANDUMP", "1.0.0", 3, "Returns the next chunk of a Bloom filter's dump",
        "O(n), n the size of the chunk", read_spec, dump_args),
    DOC("BF.LOADCHUNK", "1.0.0", 4, "Restores a Bloom filter from a chunk of its dump",
        "O(n), n the size of the chunk", update_spec, load_args),
    DOC("BF.DEBUG", "1.0.0", 2, "Returns the size of a Bloom filter and a line a sub-filter",
        "O(s), s the number of sub-filters", meta_spec, key_only),
    DOC("CF.RESERVE", "1.0.0", -3, "Creates a new cuckoo filter", "O(1)", add_spec, cf_reserve),
    DOC("CF.ADD", "1.0.0", 3, "Adds an item to a cuckoo filter, creating it if needed",
        "O(k + i), i the evictions", add_spec, key_item),
    DOC("CF.ADDNX", "1.0.0", 3, "Adds an item to a cuckoo filter unless it may be there",
        "O(k + i), i the evictions", add_spec, key_item),
    DOC("CF.INSERT", "1.0.0", -4,
        "Adds items to a cuckoo filter, creating it with the capacity given",
        "O(n * (k + i)), n the number of items", add_spec, cf_insert),
    DOC("CF.INSERTNX", "1.0.0", -4, "Adds each item to a cuckoo filter unless it may be there",
        "O(n * (k + i)), n the number of items", add_spec, cf_insert),
    DOC("CF.EXISTS", "1.0.0", 3, "Tells whether an item may be in a cuckoo filter", "O(k)",
        read_spec, key_item),
    DOC("CF.MEXISTS", "1.0.0", -3, "Tells whether each item may be in a cuckoo filter",
        "O(k * n), n the number of items", read_spec, key_items),
    DOC("CF.COUNT", "1.0.0", 3, "Returns how many times an item may be in a cuckoo filter", "O(k)",
        read_spec, key_item),
    DOC("CF.DEL", "1.0.0", 3, "Deletes one copy of an item from a cuckoo filter", "O(k)",
        delete_spec, key_item),
    DOC("CF.COMPACT", "1.0.0", 2, "Moves a cuckoo filter's items to earlier sub-filters",
        "O(n), n the size of the filter", update_spec, key_only),
    DOC("CF.INFO", "1.0.0", 2, "Returns a cuckoo filter's figures", "O(1)", meta_spec, key_only),
    DOC("CF.DEBUG", "1.0.0", 2, "Returns a cuckoo filter's figures in one line", "O(1)", meta_spec,
        key_only),
    DOC("CF.SCANDUMP", "1.0.0", 3, "Returns the next chunk of a cuckoo filter's dump",
        "O(n), n the size of the chunk", read_spec, dump_args),
    DOC("CF.LOADCHUNK", "1.0.0", 4, "Restores a cuckoo filter from a chunk of its dump",
        "O(n), n the size of the chunk", update_spec, load_args),
    DOC("BK.CREATE", "0.1.0", -2, "Creates a bloomkit filter of any variant from config text",
        "O(m), m the filter's bytes", add_spec, bk_create),
    DOC("BK.ADD", "0.1.0", -3, "Adds items to a bloomkit filter", "O(k * n), n the number of items",
        add_spec, key_items),
    DOC("BK.REMOVE", "0.1.0", -3, "Removes items from a counting filter",
        "O(k * n), n the number of items", delete_spec, key_items),
    DOC("BK.EXISTS", "0.1.0", -3, "Tells whether each item may be in a bloomkit filter",
        "O(k * n), n the number of items", read_spec, key_items),
    DOC("BK.INFO", "0.1.0", 2, "Returns a bloomkit filter's figures", "O(1)", meta_spec, key_only),
    DOC("BK.SWEEP", "0.1.0", 1, "Frees the expired generations of every window filter",
        "O(w), w the number of window filters", NULL, NULL),
    DOC("BK.MERGE", "0.1.0", -3,
        "Makes a filter the union of itself and others (a copy of the first when missing)",
        "O(m), m the filters' bytes", merge_specs, merge_args),
    DOC("BK.AT", "0.1.0", -3,
        "Replays a write at the master's time (replication and the AOF send it, not clients)",
        "that of the command it carries", at_spec, bk_at),
};

const RedisModuleCommandInfo *bkm_command_info(const char *name)
{
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++)
        if (strcmp(docs[i].name, name) == 0)
            return &docs[i].info;
    return NULL;
}
