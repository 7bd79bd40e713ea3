#!/usr/bin/env bash
# bench_cli.sh BLOOMKIT GEN_URLS [LINES] [BIG_LINES]: bloomkit dedup against
# awk '!seen[$0]++' on the same synthetic crawler URLs, in the same run. Prints
# wall time and peak memory of each and the ratios. Then, unless BIG_LINES is 0,
# how the default's cost per line grows: dedup over BIG_LINES lines against the
# first LINES of the same file (BIG_LINES=10^8: a 7.3 GB file, removed after).
# Needs GNU time (Debian package `time`).
set -euo pipefail
bk=$1 gen=$2 lines=${3:-10000000} big=${4:-0}
command -v /usr/bin/time >/dev/null || { echo "bench-cli needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$gen" "$lines" > "$tmp/urls.txt"
sync                              # the input's writeback is over before any run
# The input is dropped from the page cache and read back, as a file read from
# disk is cached: a file just written stays cached in pages that cost every
# reader of it (awk and bloomkit alike) up to 1 s more system time, at random
# (measured: 0.15-0.2 s read back, 0.2-1.1 s as written). GNU dd's nocache
# needs no privilege. Then the same page-cache state for every run.
dd if="$tmp/urls.txt" iflag=nocache count=0 status=none
cat "$tmp/urls.txt" > /dev/null
measure() { # name cmd... -> "seconds kilobytes"
    local name=$1; shift
    # Earlier runs' output (440 MB each) is written back first: left dirty, the
    # kernel's writeback of it fell into the next runs and cost them up to a
    # second of system time (measured: 0.2 -> 1.1 s, at random).
    sync
    /usr/bin/time -f "%e %M" -o "$tmp/t" "$@" < "$tmp/urls.txt" > "$tmp/out.$name" 2>/dev/null \
        || { echo "bench-cli: $name failed" >&2; exit 1; }
    tail -n 1 "$tmp/t"
}
# One key for both bloomkit runs, so that their outputs must be the same bytes.
key=--key=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
read -r awk_s awk_kb < <(measure awk awk '!seen[$0]++')
# bloomkit's runs take about a second, so each is the median of five (the
# machine's noise is of their order: a run's system time is 0.2 s, or up to
# 1.1 s at random), the two kinds alternating so that a slow spell falls on
# both; awk runs once.
for _ in 1 2 3 4 5; do
    measure bloomkit "$bk" dedup --quiet "$key" >> "$tmp/bk.times"
    measure one "$bk" dedup --quiet --threads 1 "$key" >> "$tmp/one.times"
done
median() { sort -n "$1" | sed -n 3p; } # "seconds kilobytes" of the median run
read -r bk_s bk_kb < <(median "$tmp/bk.times")
read -r one_s one_kb < <(median "$tmp/one.times")
cmp -s "$tmp/out.bloomkit" "$tmp/out.one" \
    || { echo "bench-cli: --threads 1 wrote other lines than the default" >&2; exit 1; }
in_lines=$(wc -l < "$tmp/urls.txt"); awk_out=$(wc -l < "$tmp/out.awk"); bk_out=$(wc -l < "$tmp/out.bloomkit")
printf 'input: %s lines, %s bytes; distinct (awk): %s; bloomkit kept %s (%s lost to false positives)\n' \
    "$in_lines" "$(stat -c %s "$tmp/urls.txt")" "$awk_out" "$bk_out" "$((awk_out - bk_out))"
printf '%-22s %8s s %10s KB\n' awk "$awk_s" "$awk_kb" \
    "bloomkit ($(nproc) CPUs)" "$bk_s" "$bk_kb" "bloomkit --threads 1" "$one_s" "$one_kb"
awk -v as="$awk_s" -v bs="$bk_s" -v os="$one_s" -v am="$awk_kb" -v bm="$bk_kb" 'BEGIN {
    printf "speed: bloomkit is %.1fx faster than awk (issue 33 target >= 50x; --threads 1: %.1fx)\n", as / bs, as / os
    printf "threads: %.2fx faster than itself on one thread (issue 19 target >= 1.8x), same lines out\n", os / bs
    printf "memory: bloomkit uses 1/%.0f of awk'"'"'s peak (target <= 1/20)\n", am / bm }'

[ "$big" -gt 0 ] || exit 0
# Scale: the default (a scalable chain, sized from the file when it is a
# regular one) over BIG_LINES lines and over the first LINES of the same
# stream, output discarded; the two alternate, three runs each, medians.
rm -f "$tmp"/out.* "$tmp/urls.txt"
"$gen" "$big" > "$tmp/big.txt"
head -n "$lines" "$tmp/big.txt" > "$tmp/head.txt"
sync
for f in big head; do
    dd if="$tmp/$f.txt" iflag=nocache count=0 status=none
    cat "$tmp/$f.txt" > /dev/null
done
scale() { # file -> seconds
    /usr/bin/time -f "%e" -o "$tmp/t" "$bk" dedup --quiet "$key" < "$tmp/$1.txt" > /dev/null 2>&1 \
        || { echo "bench-cli: dedup of $1.txt failed" >&2; exit 1; }
    tail -n 1 "$tmp/t"
}
for _ in 1 2 3; do
    scale head >> "$tmp/head.times"
    scale big >> "$tmp/big.times"
done
head_s=$(sort -n "$tmp/head.times" | sed -n 2p)
big_s=$(sort -n "$tmp/big.times" | sed -n 2p)
awk -v hs="$head_s" -v bs="$big_s" -v hl="$lines" -v bl="$big" 'BEGIN {
    printf "scale: %d lines %.2f s (%.1f ns a line), %d lines %.2f s (%.1f ns a line)\n", hl, hs, hs / hl * 1e9, bl, bs, bs / bl * 1e9
    printf "scale: the cost per line grows %.2fx at %.0fx the lines (issue 33 target <= 1.3x)\n", (bs / bl) / (hs / hl), bl / hl }'
