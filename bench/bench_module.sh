#!/bin/sh
# bench_module.sh - the Redis module against its floor, in one run on one
# local redis-server: redis-benchmark (Debian's; one client, pipelined,
# random items) sends SET, then each BF.* and CF.* command, and the server's
# own time per call (INFO commandstats, usec_per_call: steadier than a
# client's throughput on a shared machine) is set against SET's in the same
# run. Targets (issue 47, RedisBloom's own ratios on such a machine being
# 0.46-0.49 and 0.37-0.39): writes (BF.ADD of new items, BF.INSERT, CF.ADD,
# CF.DEL) at most 0.5x SET, lookups (BF.EXISTS, CF.EXISTS, CF.COUNT) at most
# 0.4x; BF.MADD and BF.MEXISTS of 10 items are reported per item.
# With REF_MODULE set (bench/ref_module.c, built by make bench-module) the
# same server also runs the floor: RedisBloom's first link and first cuckoo
# sub-filter in a bare module, each REF.* command measured beside the BF.*
# or CF.* command it does the work of.
# Then keys grown by BF.MADD from nothing (no BF.RESERVE: what most clients
# do) against keys reserved for the count, at each of GROWN_SIZES items
# (default 2*10^6 and 2*10^7; issue 60's targets: BF.EXISTS and BF.ADD
# within 1.1x the reserved key's time, MEMORY USAGE within 2x).
# Usage: [REF_MODULE=so] [GROWN_SIZES="n..."] bench_module.sh MODULE [REQUESTS] [PIPELINE] [--check]
# (--check: exit 1 when a target is missed; the best of 3 rounds counts).
set -eu
module=$(realpath "$1")
ref=${REF_MODULE:+$(realpath "$REF_MODULE")}
n=${2:-1000000}
pipe=${3:-64}
check=${4:-}
tmp=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
    --daemonize yes --pidfile "$tmp/pid" --logfile "$tmp/log" --loadmodule "$module" \
    MAX_BYTES 1G ${ref:+--loadmodule "$ref"}
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
done
cli() { redis-cli -p "$port" "$@" >/dev/null || { cat "$tmp/log"; exit 1; }; }
cli BF.RESERVE bf 0.001 10000000
cli CF.RESERVE cf 10000000
[ -z "$ref" ] || cli REF.RESERVE ref 0.001 10000000
[ -z "$ref" ] || cli REF.CFRESERVE refcf 10000000
[ -z "$ref" ] || cli REF.CFRESERVE refcfdel 10000000
cli CF.RESERVE cfdel 10000000
# usec_per_call of one command after a redis-benchmark run of it (stats reset
# first): RANGE is the items' range (__rand_int__ below it; a huge one makes
# every item new)
usec() { # NAME RANGE ARGS...
    name=$1 range=$2
    shift 2
    redis-cli -p "$port" CONFIG RESETSTAT >/dev/null
    redis-benchmark -p "$port" --dbnum "$db" -n "$n" -r "$range" -P "$pipe" -c 1 -q "$@" >/dev/null
    redis-cli -p "$port" INFO commandstats | tr -d '\r' |
        awk -F'[:,=]' -v c="cmdstat_$name" 'tolower($1) == c { for (i = 2; i < NF; i++) if ($i == "usec_per_call") print $(i + 1) }'
}
new=2000000000 # distinct items (redis-benchmark draws below 2^31)
ten=""
for i in 0 1 2 3 4 5 6 7 8 9; do ten="$ten item:__rand_int__"; done
best() { # the least of three rounds
    printf '%s\n%s\n%s\n' "$("$@")" "$("$@")" "$("$@")" | sort -g | head -1
}
# SET's keys go to database 1: the filters' database keeps its few keys, so
# the BF.* and CF.* rounds do not pay for rehashing SET's million keys
# (measured: dictRehash 15% of a BF.EXISTS round's time after SET in db 0)
db=1
set_us=$(best usec set "$n" SET "key:__rand_int__" x)
db=0
echo "bench-module: $n calls a round, pipeline $pipe, 1 client, one local redis-server;"
echo "  server time per call (INFO commandstats), the best of 3 rounds, against SET's"
printf '  %-14s %8s us\n' SET "$set_us"
status=0
row() { # LABEL TARGET PER_ITEMS US
    awk -v l="$1" -v t="$2" -v k="$3" -v u="$4" -v s="$set_us" 'BEGIN {
        r = u / s
        printf "  %-14s %8.3f us  %5.2fx SET%s%s\n", l, u, r, (k > 1 ? sprintf(" (%.3f us an item)", u / k) : ""),
            (t > 0 ? sprintf("  target <= %.2fx: %s", t, r <= t ? "met" : "MISSED") : "")
        exit (t > 0 && r > t) }' || status=1
}
# the module API's own share: a module command that opens the key and
# replies, nothing hashed or probed
[ -z "$ref" ] || row "module no-op" 0 1 "$(best usec ref.noop "$new" REF.NOOP ref "item:__rand_int__")"
row BF.ADD 0.5 1 "$(best usec bf.add "$new" BF.ADD bf "item:__rand_int__")"
[ -z "$ref" ] || row "  floor" 0 1 "$(best usec ref.add "$new" REF.ADD ref "item:__rand_int__")"
row BF.INSERT 0.5 1 "$(best usec bf.insert "$new" BF.INSERT bf ITEMS "item:__rand_int__")"
row BF.EXISTS 0.4 1 "$(best usec bf.exists "$new" BF.EXISTS bf "item:__rand_int__")"
if [ -n "$ref" ]; then # the floor's filter as full as bf (BF.INSERT's items)
    for _ in 1 2 3; do usec ref.add "$new" REF.ADD ref "item:__rand_int__" >/dev/null; done
    row "  floor" 0 1 "$(best usec ref.exists "$new" REF.EXISTS ref "item:__rand_int__")"
fi
row "BF.MADD x10" 0 10 "$(best usec bf.madd "$new" BF.MADD bf $ten)"
row "BF.MEXISTS x10" 0 10 "$(best usec bf.mexists "$new" BF.MEXISTS bf $ten)"
floor_row() { # COMMAND KEY RANGE: the floor's row, when there is one
    [ -z "$ref" ] || row "  floor" 0 1 "$(best usec "$(echo "$1" | tr 'A-Z' 'a-z')" "$3" "$1" "$2" "item:__rand_int__")"
}
row CF.ADD 0.5 1 "$(best usec cf.add "$new" CF.ADD cf "item:__rand_int__")"
floor_row REF.CFADD refcf "$new"
row CF.EXISTS 0.4 1 "$(best usec cf.exists "$new" CF.EXISTS cf "item:__rand_int__")"
floor_row REF.CFEXISTS refcf "$new"
row CF.COUNT 0.4 1 "$(best usec cf.count "$new" CF.COUNT cf "item:__rand_int__")"
floor_row REF.CFCOUNT refcf "$new"
# deletes of items present: add a range's items, then delete from the same
# range (added by CF.ADDNX: CF.ADD of random draws adds a second copy of an
# item drawn twice, and the copies of the most drawn overflow their two
# buckets, grow the filter and make deletes compact it: growth, not deletes)
usec cf.addnx "$n" CF.ADDNX cfdel "item:__rand_int__" >/dev/null
row CF.DEL 0.5 1 "$(usec cf.del "$n" CF.DEL cfdel "item:__rand_int__")"
if [ -n "$ref" ]; then
    usec ref.cfadd "$n" REF.CFADD refcfdel "item:__rand_int__" >/dev/null
    row "  floor" 0 1 "$(usec ref.cfdel "$n" REF.CFDEL refcfdel "item:__rand_int__")"
fi
# Grown against reserved: both filled by the same number of BF.MADD calls
# of ten random items (distinct but for a few draws), then timed alike.
ratio() { # LABEL TARGET GROWN RESERVED UNIT
    awk -v l="$1" -v t="$2" -v g="$3" -v r="$4" -v u="$5" 'BEGIN {
        x = g / r
        printf "  %-22s %10.3f %s  reserved %10.3f %s  %5.2fx  target <= %.1fx: %s\n", l, g, u, r, u, x, t,
            (x <= t ? "met" : "MISSED")
        exit (x > t) }' || status=1
}
for size in ${GROWN_SIZES:-2000000 20000000}; do
    redis-cli -p "$port" DEL grown reserved >/dev/null
    cli BF.RESERVE reserved 0.01 "$size"
    for key in grown reserved; do
        redis-benchmark -p "$port" -n $((size / 10)) -r 2000000000 -P "$pipe" -c 1 -q \
            BF.MADD "$key" $ten >/dev/null
    done
    items=$(redis-cli -p "$port" BF.CARD grown)
    links=$(redis-cli -p "$port" BF.INFO grown FILTERS | tail -1)
    echo "grown by BF.MADD to $size draws ($items items, $links array) against BF.RESERVE reserved 0.01 $size:"
    ratio BF.EXISTS 1.1 "$(best usec bf.exists "$new" BF.EXISTS grown "item:__rand_int__")" \
        "$(best usec bf.exists "$new" BF.EXISTS reserved "item:__rand_int__")" us
    mem_g=$(redis-cli -p "$port" MEMORY USAGE grown)
    mem_r=$(redis-cli -p "$port" MEMORY USAGE reserved)
    ratio "MEMORY USAGE" 2 "$(awk -v b="$mem_g" 'BEGIN { print b / 1048576 }')" \
        "$(awk -v b="$mem_r" 'BEGIN { print b / 1048576 }')" MB
    # new items: each round adds n to both keys (the grown one may grow)
    ratio BF.ADD 1.1 "$(usec bf.add "$new" BF.ADD grown "item:__rand_int__")" \
        "$(usec bf.add "$new" BF.ADD reserved "item:__rand_int__")" us
done
if [ "$check" = --check ] && [ "$status" != 0 ]; then
    echo "bench-module: a target was missed"
    exit 1
fi
