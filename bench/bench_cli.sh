#!/usr/bin/env bash
# bench_cli.sh BLOOMKIT GEN_URLS [LINES]: bloomkit dedup against awk '!seen[$0]++'
# on the same synthetic crawler URLs, in the same run. Prints wall time and peak
# memory of each and the ratios. Needs GNU time (Debian package `time`).
set -euo pipefail
bk=$1 gen=$2 lines=${3:-10000000}
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
    printf "speed: bloomkit is %.1fx faster than awk (issue 19 target >= 25x; --threads 1: %.1fx)\n", as / bs, as / os
    printf "threads: %.2fx faster than itself on one thread (issue 19 target >= 1.8x), same lines out\n", os / bs
    printf "memory: bloomkit uses 1/%.0f of awk'"'"'s peak (target <= 1/20)\n", am / bm }'
