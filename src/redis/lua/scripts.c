/* scripts.c - the Lua scripts (see scripts.h). Kept short: each is one
 * indivisible check-and-set, and the client does all the hashing. */
#include "scripts.h"

/* First line of every script that writes or reads a filter's cells: the
 * hash holding its counts (KEYS[k]: the metadata, or a block's count hash)
 * must still carry the field format, which every filter's count hashes get
 * when it is made and lose only with it. Otherwise the filter was dropped
 * (or is damaged) while a client used it, and nothing is written: a writer
 * racing `drop` must not make half a filter again. */
#define WHOLE(k)                                                                                   \
    "if redis.call('HEXISTS', KEYS[" #k "], 'format') == 0 then return "                           \
    "redis.error_reply('" BK_RS_GONE "') end\n"

/* Create the metadata hash unless the name exists: {1} when this call
 * created it, {0, field, value, ...} with the existing fields otherwise. */
static const char create_lua[] =
    "local t = redis.call('TYPE', KEYS[1])['ok']\n"
    "if t == 'hash' then\n"
    "  local all = redis.call('HGETALL', KEYS[1])\n"
    "  table.insert(all, 1, 0)\n"
    "  return all\n"
    "end\n"
    "if t ~= 'none' then return redis.error_reply('" BK_RS_WRONGTYPE "') end\n"
    /* the filter's data keys in this slot: usable (absent or a string), or
     * nothing is written (a half-created name would say "already exists") */
    "for i = 2, #KEYS do\n"
    "  local d = redis.call('TYPE', KEYS[i])['ok']\n"
    "  if d ~= 'none' and d ~= 'string' then\n"
    "    return redis.error_reply('" BK_RS_WRONGTYPE " ' .. KEYS[i] .. ' ' .. d)\n"
    "  end\n"
    "end\n"
    "redis.call('HSET', KEYS[1], unpack(ARGV))\n"
    "return {1}\n";

/* Standard add of many keys of one block, in order, as if each were added
 * alone, one after another: new when any of its bits was clear (so of racing
 * processes exactly one is told a key is new, and a key twice in the list is
 * new the first time); the count hash gets the bits set and the keys new.
 * ARGV: k, then "SET" "u1" offset "1" for every probe of every key, ready
 * for BITFIELD, which returns each bit's old value in order; calls of at
 * most 1,500 probes (Lua's unpack takes about 8,000 values). */
static const char std_add_many_lua[] =
    WHOLE(2) "local k = tonumber(ARGV[1])\n"
             "local old = {}\n"
             "for from = 2, #ARGV, 6000 do\n"
             "  local r = redis.call('BITFIELD', KEYS[1], unpack(ARGV, from, math.min(from + 5999, "
             "#ARGV)))\n"
             "  for i = 1, #r do old[#old + 1] = r[i] end\n"
             "end\n"
             "local out, set, keys = {}, 0, 0\n"
             "for i = 0, #old / k - 1 do\n"
             "  local s = 0\n"
             "  for j = 1, k do\n"
             "    if old[i * k + j] == 0 then s = s + 1 end\n"
             "  end\n"
             "  if s > 0 then out[i + 1] = 1; keys = keys + 1 else out[i + 1] = 0 end\n"
             "  set = set + s\n"
             "end\n"
             "if set > 0 then redis.call('HINCRBY', KEYS[2], 'bits.0', set) end\n"
             "if keys > 0 then redis.call('HINCRBY', KEYS[2], 'keys.0', keys) end\n"
             "return out\n";

/* The same for the blocked layout, a key's line at a time: ARGV holds, per
 * key, its 64-byte line's first and last byte offsets in the block (as the
 * client's text: a Lua number handed to redis.call is printed as a float,
 * which cost more than the rest) and its probes as (byte in the line, mask)
 * pairs, two bytes each, every byte once. The line is read with GETRANGE
 * (short or missing bytes are zeros, as SETBIT would find them), ORed, and
 * written back whole with SETRANGE only when a bit was clear: two commands a
 * key instead of k bit operations. */
static const char std_add_lines_lua[] = WHOLE(
    2) "local out, set, keys = {}, 0, 0\n"
       "for i = 1, #ARGV, 3 do\n"
       "  local at, probes = ARGV[i], ARGV[i + 2]\n"
       "  local bytes = {string.byte(redis.call('GETRANGE', KEYS[1], at, ARGV[i + 1]), 1, -1)}\n"
       "  for j = #bytes + 1, 64 do bytes[j] = 0 end\n"
       "  local s = 0\n"
       "  for p = 1, #probes, 2 do\n"
       "    local b, m = string.byte(probes, p, p + 1)\n"
       "    local d = bit.band(m, bit.bnot(bytes[b + 1]))\n"
       "    if d ~= 0 then\n"
       "      bytes[b + 1] = bit.bor(bytes[b + 1], m)\n"
       "      while d ~= 0 do d = bit.band(d, d - 1); s = s + 1 end\n"
       "    end\n"
       "  end\n"
       "  if s > 0 then\n"
       "    redis.call('SETRANGE', KEYS[1], at, string.char(unpack(bytes)))\n"
       "    out[#out + 1] = 1; keys = keys + 1; set = set + s\n"
       "  else\n"
       "    out[#out + 1] = 0\n"
       "  end\n"
       "end\n"
       "if set > 0 then redis.call('HINCRBY', KEYS[2], 'bits.0', set) end\n"
       "if keys > 0 then redis.call('HINCRBY', KEYS[2], 'keys.0', keys) end\n"
       "return out\n";

/* Counting: read the k counters with one BITFIELD, apply the local
 * variant's rules to a table (a probe repeated within one key sees its own
 * earlier increment, as in src/counting), write them back with one BITFIELD.
 * Saturation at 15 is sticky. */
#define CNT_READ                                                                                   \
    WHOLE(2)                                                                                       \
    "local get = {}\n"                                                                             \
    "for i = 1, #ARGV do\n"                                                                        \
    "  get[#get + 1] = 'GET'; get[#get + 1] = 'u4'; get[#get + 1] = '#' .. ARGV[i]\n"              \
    "end\n"                                                                                        \
    "local vals = redis.call('BITFIELD', KEYS[1], unpack(get))\n"                                  \
    "local cur = {}\n"                                                                             \
    "for i = 1, #ARGV do cur[ARGV[i]] = vals[i] end\n"
#define CNT_WRITE                                                                                  \
    "local put = {}\n"                                                                             \
    "for p, v in pairs(cur) do\n"                                                                  \
    "  put[#put + 1] = 'SET'; put[#put + 1] = 'u4'; put[#put + 1] = '#' .. p\n"                    \
    "  put[#put + 1] = v\n"                                                                        \
    "end\n"                                                                                        \
    "redis.call('BITFIELD', KEYS[1], unpack(put))\n"

static const char cnt_add_lua[] =
    CNT_READ "local new, nz, sat = 0, 0, 0\n"
             "for i = 1, #ARGV do\n"
             "  local p = ARGV[i]\n"
             "  local v = cur[p]\n"
             "  if v == 0 then new = 1; nz = nz + 1 end\n"
             "  if v < 15 then\n"
             "    cur[p] = v + 1\n"
             "    if v + 1 == 15 then sat = sat + 1 end\n"
             "  end\n"
             "end\n" CNT_WRITE "redis.call('HINCRBY', KEYS[2], 'keys.0', 1)\n"
             "if nz > 0 then redis.call('HINCRBY', KEYS[2], 'bits.0', nz) end\n"
             "if sat > 0 then redis.call('HINCRBY', KEYS[2], 'sat.0', sat) end\n"
             "return new\n";

/* Counting remove: 0 (nothing changed) when any counter is zero, else every
 * counter below 15 goes down by one. */
static const char cnt_remove_lua[] = CNT_READ
    "local gone = 0\n"
    "for i = 1, #ARGV do\n"
    "  local p = ARGV[i]\n"
    "  local v = cur[p]\n"
    "  if v == 0 then return 0 end\n"
    "  if v < 15 then\n"
    "    cur[p] = v - 1\n"
    "    if v == 1 then gone = gone + 1 end\n"
    "  end\n"
    "end\n" CNT_WRITE "if gone > 0 then redis.call('HINCRBY', KEYS[2], 'bits.0', -gone) end\n"
    "local keys = tonumber(redis.call('HGET', KEYS[2], 'keys.0') or '0')\n"
    "if keys > 0 then redis.call('HINCRBY', KEYS[2], 'keys.0', -1) end\n"
    "return 1\n";

/* Scalable: the slice count and the counts live in the metadata hash. A client that knows
 * fewer (or more) slices than there are gets -(slices) back and retries
 * with the right offsets. The chain grows here, inside the script, so two
 * writers can never add two slices for one: when the newest slice is past
 * its limit (set bits + k > max_set, or keys >= max_keys: bk_chain_slice),
 * the slice count goes up and the key goes into the new slice, as
 * src/scalable does. */
#define SCL_PARSE                                                                                  \
    WHOLE(1)                                                                                       \
    "local have = tonumber(redis.call('HGET', KEYS[1], 'slices') or '1')\n"                        \
    "if have ~= n then return -have end\n"                                                         \
    "local probes, at = {}, first\n"                                                               \
    "for j = 1, #KEYS - 1 do\n"                                                                    \
    "  local k = tonumber(ARGV[at])\n"                                                             \
    "  local p = {}\n"                                                                             \
    "  for i = 1, k do p[i] = ARGV[at + i] end\n"                                                  \
    "  probes[j] = p\n"                                                                            \
    "  at = at + k + 1\n"                                                                          \
    "end\n"                                                                                        \
    "local function holds(j)\n"                                                                    \
    "  for _, off in ipairs(probes[j]) do\n"                                                       \
    "    if redis.call('GETBIT', KEYS[j + 1], off) == 0 then return false end\n"                   \
    "  end\n"                                                                                      \
    "  return true\n"                                                                              \
    "end\n"

static const char scl_add_lua[] =
    "local n, max_set, max_keys, has_next = tonumber(ARGV[1]), tonumber(ARGV[2]), "
    "tonumber(ARGV[3]), ARGV[4]\n"
    "local first = 6\n" SCL_PARSE "for j = n, 1, -1 do\n"
    "  if holds(j) then return 0 end\n"
    "end\n"
    "local target = n\n"
    "local bits = tonumber(redis.call('HGET', KEYS[1], 'bits.' .. (n - 1)) or '0')\n"
    "local keys = tonumber(redis.call('HGET', KEYS[1], 'keys.' .. (n - 1)) or '0')\n"
    "if bits + #probes[n] > max_set or keys >= max_keys then\n"
    /* 'M': the next slice would pass max_bytes (its size and the chain's
     * are fixed by the configuration, so the client knows) */
    "  if has_next == 'M' then return redis.error_reply('" BK_RS_MAX " ' .. ARGV[5]) end\n"
    "  if has_next ~= '1' then return redis.error_reply('" BK_RS_FULL "') end\n"
    "  target = n + 1\n"
    "  redis.call('HSET', KEYS[1], 'slices', n + 1)\n"
    "end\n"
    "local set = 0\n"
    "for _, off in ipairs(probes[target]) do\n"
    "  if redis.call('SETBIT', KEYS[target + 1], off, 1) == 0 then set = set + 1 end\n"
    "end\n"
    "redis.call('HINCRBY', KEYS[1], 'bits.' .. (target - 1), set)\n"
    "redis.call('HINCRBY', KEYS[1], 'keys.' .. (target - 1), 1)\n"
    "return 1\n";

static const char scl_contains_lua[] =
    "local n, first = tonumber(ARGV[1]), 2\n" SCL_PARSE "for j = n, 1, -1 do\n"
    "  if holds(j) then return 1 end\n"
    "end\n"
    "return 0\n";

/* Clear: KEYS[1] is the hash holding counts (the metadata hash, or the
 * count hash of a block past the first), KEYS[2..] the data keys under its
 * tag. The counts go (only the fields bloomkit counts in: the metadata's
 * own fields stay) and the data keys are deleted, in one indivisible step;
 * with ARGV[1] 'drop' the hash goes whole (the metadata last of all:
 * writers fail from then on). The hash is read first, so a key of the
 * wrong type fails before anything is deleted. */
static const char clear_lua[] =
    "local fields = redis.call('HKEYS', KEYS[1])\n"
    "for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end\n"
    "if ARGV[1] == 'drop' then redis.call('DEL', KEYS[1]); return 1 end\n"
    "for _, f in ipairs(fields) do\n"
    "  if f == 'slices' or string.match(f, '^bits%.%d+$') or string.match(f, '^keys%.%d+$')\n"
    "      or string.match(f, '^sat%.%d+$') then\n"
    "    redis.call('HDEL', KEYS[1], f)\n"
    "  end\n"
    "end\n"
    "return 1\n";

/* Window (src/window's rules, on the server's clock). KEYS[1] is the
 * metadata hash NAME; generation g keeps its slice count and counts in the
 * hash NAME:{NAME}:w<g> and slice j's block b in NAME:{NAME}:w<g>:j/b:data,
 * all under the tag {NAME}, so they are in NAME's slot; the script names
 * them itself because which generations exist depends on TIME, read here.
 * Every key of generation g expires (PEXPIREAT) when g leaves the window, at
 * (g + G + 1) * span ms: Redis frees old generations, no client sweeps. The
 * newest generation made is NAME's field gen: a server clock that steps
 * back by up to a span goes on adding into it (nothing is dropped early);
 * one that is further behind re-dates every generation (src/window's rule).
 * ARGV: op ('a' add, 'c' lookup), span ms, G, refresh, max_bytes (0: none),
 * max_slices, has_next, n, then for each of the n slice shapes the client
 * sent: k, block of the key, blocks of the slice, bytes, max_set,
 * max_keys, k offsets. A
 * generation with more slices than the client knows (n, less the next one
 * when has_next) answers -(its slices): the client resends. */
static const char win_lua[] =
    /* TIME before writes: effects replication, the default since Redis 5
     * and the only mode of Redis 7; asked for on an older server */
    "if redis.replicate_commands then redis.replicate_commands() end\n" WHOLE(
        1) "local meta = KEYS[1]\n"
           "local op, span, G, refresh = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]\n"
           "local max_bytes, max_slices = tonumber(ARGV[5]), tonumber(ARGV[6])\n"
           "local has_next, n = ARGV[7], tonumber(ARGV[8])\n"
           "local known = n\n"
           "if has_next == '1' then known = n - 1 end\n"
           "local t = redis.call('TIME')\n"
           "local now = math.floor((tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) / "
           "span)\n"
           "local newest = tonumber(redis.call('HGET', meta, 'gen') or '')\n"
           "local sl, at = {}, 9\n"
           "for j = 1, n do\n"
           "  local k = tonumber(ARGV[at])\n"
           "  local s = {b = ARGV[at + 1], blocks = tonumber(ARGV[at + 2]), bytes = "
           "tonumber(ARGV[at + 3]),\n"
           "             set = tonumber(ARGV[at + 4]), keys = tonumber(ARGV[at + 5]), p = {}}\n"
           "  for i = 1, k do s.p[i] = ARGV[at + 5 + i] end\n"
           "  sl[j] = s\n"
           "  at = at + 6 + k\n"
           "end\n"
           "local prefix = meta .. ':{' .. meta .. '}:w'\n"
           "local function gkey(g) return prefix .. string.format('%d', g) end\n"
           "local function bkey(g, j, b) return gkey(g) .. ':' .. (j - 1) .. '/' .. b .. ':data' "
           "end\n"
           "local function dkey(g, j) return bkey(g, j, sl[j].b) end\n"
           /* the server's clock more than a span behind the newest generation (it
            * stepped back, or ran ahead when they were made): every generation is
            * re-dated, its keys renamed by the difference (oldest first, so no
            * name is taken before it is moved) and set to expire by the new
            * number, so that the newest is now's; otherwise the clock's error
            * would freeze the filter for as long as it lasts */
           "if newest and newest > now + 1 then\n"
           "  local by = newest - now\n"
           "  for g = newest - G, newest do\n"
           "    local c = tonumber(redis.call('HGET', gkey(g), 'slices') or '0') or 0\n"
           "    if c > known then return -c end\n"
           "    local t, expire = g - by, string.format('%d', (g - by + G + 1) * span)\n"
           "    redis.call('DEL', gkey(t))\n"
           "    for j = 1, n do\n"
           "      for b = 0, sl[j].blocks - 1 do\n"
           "        redis.call('DEL', bkey(t, j, b))\n"
           "        if j <= c and redis.call('EXISTS', bkey(g, j, b)) == 1 then\n"
           "          redis.call('RENAME', bkey(g, j, b), bkey(t, j, b))\n"
           "          redis.call('PEXPIREAT', bkey(t, j, b), expire)\n"
           "        end\n"
           "      end\n"
           "    end\n"
           "    if c > 0 then\n"
           "      redis.call('RENAME', gkey(g), gkey(t))\n"
           "      redis.call('PEXPIREAT', gkey(t), expire)\n"
           "    end\n"
           "  end\n"
           "  newest = now\n"
           "  redis.call('HSET', meta, 'gen', string.format('%d', now))\n"
           "end\n"
           "if newest and newest > now then now = newest end\n"
           "local function holds(g, j)\n"
           "  for _, off in ipairs(sl[j].p) do\n"
           "    if redis.call('GETBIT', dkey(g, j), off) == 0 then return false end\n"
           "  end\n"
           "  return true\n"
           "end\n"
           "local count, found, bytes, slices = {}, nil, 0, 0\n"
           "for g = now, now - G, -1 do\n"
           "  local c = tonumber(redis.call('HGET', gkey(g), 'slices') or '0') or 0\n"
           "  if c > known then return -c end\n"
           "  count[g] = c\n"
           "  slices = slices + c\n"
           "  for j = 1, c do bytes = bytes + sl[j].bytes end\n"
           "  if not found then\n"
           "    for j = c, 1, -1 do\n"
           "      if holds(g, j) then found = g; break end\n"
           "    end\n"
           "  end\n"
           "end\n"
           "if op == 'c' then if found then return 1 end return 0 end\n"
           "if found and (refresh ~= '1' or found == now) then return 0 end\n"
           "local c, target = count[now], count[now]\n"
           "if c > 0 then\n"
           "  local bits = tonumber(redis.call('HGET', gkey(now), 'bits.' .. (c - 1)) or '0')\n"
           "  local keys = tonumber(redis.call('HGET', gkey(now), 'keys.' .. (c - 1)) or '0')\n"
           "  if bits + #sl[c].p > sl[c].set or keys >= sl[c].keys then target = c + 1 end\n"
           "else\n"
           "  target = 1\n"
           "end\n"
           "if target > c then\n"
           "  if target > n then return redis.error_reply('" BK_RS_FULL "') end\n"
           "  if slices + 1 > max_slices then return redis.error_reply('" BK_RS_MAX
           " slices') end\n"
           "  if max_bytes > 0 and bytes + sl[target].bytes > max_bytes then\n"
           "    return redis.error_reply('" BK_RS_MAX
           " ' .. string.format('%d', bytes + sl[target].bytes)\n"
           "                             .. ' ' .. string.format('%d', bytes))\n"
           "  end\n"
           "  redis.call('HSET', gkey(now), 'slices', target)\n"
           "  if not newest or now > newest then redis.call('HSET', meta, 'gen', "
           "string.format('%d', "
           "now)) end\n"
           "end\n"
           "local key, set = dkey(now, target), 0\n"
           "for _, off in ipairs(sl[target].p) do\n"
           "  if redis.call('SETBIT', key, off, 1) == 0 then set = set + 1 end\n"
           "end\n"
           "redis.call('HINCRBY', gkey(now), 'bits.' .. (target - 1), set)\n"
           "redis.call('HINCRBY', gkey(now), 'keys.' .. (target - 1), 1)\n"
           "local expire = string.format('%d', (now + G + 1) * span)\n"
           "redis.call('PEXPIREAT', key, expire)\n"
           "redis.call('PEXPIREAT', gkey(now), expire)\n"
           "if found then return 0 end\n"
           "return 1\n";

/* Window clear: every generation from gen - G to gen (older ones have
 * expired), its cells and counts, and the field gen; with ARGV[1] 'drop'
 * the metadata too, in the same step. ARGV: 'clear' or 'drop', G, then the
 * number of blocks of each slice shape j = 0, 1, ... */
static const char win_clear_lua[] =
    "local meta = KEYS[1]\n"
    "local newest = tonumber(redis.call('HGET', meta, 'gen') or '')\n"
    "if ARGV[1] == 'drop' then redis.call('DEL', meta) end\n"
    "if not newest then return 0 end\n"
    "local G = tonumber(ARGV[2])\n"
    "local prefix = meta .. ':{' .. meta .. '}:w'\n"
    "for g = newest - G, newest do\n"
    "  local gk = prefix .. string.format('%d', g)\n"
    "  local c = tonumber(redis.call('HGET', gk, 'slices') or '0') or 0\n"
    "  for j = 1, c do\n"
    "    local blocks = tonumber(ARGV[2 + j] or '1')\n"
    "    for b = 0, blocks - 1 do redis.call('DEL', gk .. ':' .. (j - 1) .. '/' .. b .. ':data') "
    "end\n"
    "  end\n"
    "  redis.call('DEL', gk)\n"
    "end\n"
    "redis.call('HDEL', meta, 'gen')\n"
    "return 1\n";

const char *bk_redis_script(int i)
{
    static const char *const all[BK_RS_COUNT] = {
        [BK_RS_CREATE] = create_lua,
        [BK_RS_CNT_ADD] = cnt_add_lua,
        [BK_RS_CNT_REMOVE] = cnt_remove_lua,
        [BK_RS_SCL_ADD] = scl_add_lua,
        [BK_RS_SCL_CONTAINS] = scl_contains_lua,
        [BK_RS_CLEAR] = clear_lua,
        [BK_RS_WIN] = win_lua,
        [BK_RS_WIN_CLEAR] = win_clear_lua,
        [BK_RS_STD_ADD_MANY] = std_add_many_lua,
        [BK_RS_STD_ADD_LINES] = std_add_lines_lua,
    };
    return i >= 0 && i < BK_RS_COUNT ? all[i] : 0;
}
