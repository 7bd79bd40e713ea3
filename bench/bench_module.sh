#!/bin/sh
# bench_module.sh - the Redis module against its floor, in one run on one
# local redis-server: redis-benchmark (Debian's, the same pipeline depth and
# random keys for each) sends pipelined SET, then BF.ADD and BF.EXISTS into
# one filter. The ratio BF.ADD/SET is what the module costs over the
# server's cheapest write. Usage: bench_module.sh MODULE [REQUESTS] [PIPELINE]
set -eu
module=$(realpath "$1")
n=${2:-1000000}
pipe=${3:-16}
tmp=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
    --daemonize yes --pidfile "$tmp/pid" --logfile "$tmp/log" --loadmodule "$module" \
    MAX_BYTES 1G
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
done
redis-cli -p "$port" BF.RESERVE bench 0.01 "$n" >/dev/null || { cat "$tmp/log"; exit 1; }
rate() { # requests per second of one redis-benchmark run
    redis-benchmark -p "$port" -n "$n" -r "$n" -P "$pipe" -c 1 --csv "$@" |
        awk -F'"' 'NR == 2 { print int($4) }'
}
set_rate=$(rate SET "key:__rand_int__" x)
add_rate=$(rate BF.ADD bench "item:__rand_int__")
exists_rate=$(rate BF.EXISTS bench "item:__rand_int__")
echo "bench-redis module: $n requests, pipeline $pipe, 1 client, one local redis-server"
printf '  %-10s %12s req/s\n' SET "$set_rate" BF.ADD "$add_rate" BF.EXISTS "$exists_rate"
awk -v a="$add_rate" -v e="$exists_rate" -v s="$set_rate" 'BEGIN {
    printf "  BF.ADD / SET = %.2f, BF.EXISTS / SET = %.2f (target: at least 0.5)\n", a / s, e / s }'
