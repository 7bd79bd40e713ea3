#!/bin/sh
# bench_module_dedup.sh - `bloomkit dedup --redis` into the default
# (scalable) filter, through the Redis module and through the Lua mode, in
# one run on local redis-servers (one with the module, one without), from one
# process and from eight (each a share of the lines), one filter split into
# four shards (shards=4, on one server: the routing's cost), with the same command
# into a local file as the reference.
# Usage: bench_module_dedup.sh MODULE BLOOMKIT GEN_URLS [LINES]
set -eu
module=$(realpath "$1")
cli=$(realpath "$2")
gen=$(realpath "$3")
n=${4:-1000000}
tmp=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
mport=$(free_port)
lport=$(free_port)
start() { # port [module args]
    p=$1
    shift
    redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
        --daemonize yes --pidfile "$tmp/$p.pid" --logfile "$tmp/$p.log" "$@"
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
        redis-cli -p "$p" ping >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    cat "$tmp/$p.log"
    exit 1
}
start "$mport" --loadmodule "$module" MAX_BYTES 2G
start "$lport"
trap 'redis-cli -p "$mport" shutdown nosave >/dev/null 2>&1; redis-cli -p "$lport" shutdown nosave >/dev/null 2>&1; rm -rf "$tmp"' EXIT
"$gen" "$n" > "$tmp/urls"
split -n l/8 "$tmp/urls" "$tmp/part."
now() { date +%s.%N; }
rate() { awk -v n="$n" -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", n / (b - a) }'; }
one() { # label target...
    label=$1
    shift
    t0=$(now)
    "$cli" dedup "$@" < "$tmp/urls" > /dev/null
    t1=$(now)
    printf '  %-28s %10s lines/s\n' "$label" "$(rate "$t0" "$t1")"
}
eight() { # label url
    t0=$(now)
    for p in "$tmp"/part.*; do
        "$cli" dedup --redis "$2" < "$p" > /dev/null &
    done
    wait
    t1=$(now)
    printf '  %-28s %10s lines/s\n' "$1" "$(rate "$t0" "$t1")"
}
echo "bench-redis dedup: $n generated crawler URLs, default (scalable) filter"
one "file (reference)" --state "$tmp/seen.bkf"
one "module, 1 process" --redis "redis://127.0.0.1:$mport/one"
one "module, 4 shards, 1 process" --redis "redis://127.0.0.1:$mport/sharded?shards=4"
one "Lua mode, 1 process" --redis "redis://127.0.0.1:$lport/one"
eight "module, 8 processes" "redis://127.0.0.1:$mport/eight"
eight "Lua mode, 8 processes" "redis://127.0.0.1:$lport/eight"
