#!/bin/sh
# bench_scale.sh - what not knowing the count costs a crawler (issue 48):
# for each size N, `gen_urls N 0.6 7` piped into `bloomkit dedup` twice, with
# the default filter (no size known) and pre-sized for the distinct count
# (--capacity, the count the generator reports), the same target rate. The
# input is generated into the pipe: nothing is written to disk. For each run:
# the dedup process's wall time and CPU time (user + sys, every thread), its
# peak memory (max RSS), the lines it printed and so the lines lost to false
# positives (distinct - printed). Then the two ratios the issue sets targets
# for: default / pre-sized time (CPU) and peak memory at each N, and the
# default's CPU time a line at the largest N against the smallest.
# Usage: bench_scale.sh BLOOMKIT GEN_URLS [N...]   (default N: 10^7 10^9)
set -eu
cli=$1
gen=$2
shift 2
[ $# -gt 0 ] || set -- 10000000 1000000000
command -v /usr/bin/time >/dev/null || { echo "bench-scale: needs GNU time (Debian's time)"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run N ARGS...: prints "distinct printed wall cpu rss_kb"
run() {
    n=$1
    shift
    "$gen" "$n" 0.6 7 2>"$tmp/gen" |
        /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$cli" dedup --quiet "$@" |
        wc -l >"$tmp/printed"
    distinct=$(sed -n 's/.* \([0-9]*\) distinct$/\1/p' "$tmp/gen")
    read -r wall user sys rss <"$tmp/time"
    echo "$distinct $(cat "$tmp/printed") $wall $(echo "$user + $sys" | bc) $rss"
}

echo "bench-scale: gen_urls N 0.6 7 | bloomkit dedup, default filter against pre-sized (--capacity = distinct)"
printf '  %-12s %-10s %12s %9s %9s %9s %11s %10s\n' lines run distinct wall_s cpu_s peak_MiB lost "lost/dist"
first_ns=""
for n in "$@"; do
    set -- $(run "$n")
    d_distinct=$1 d_printed=$2 d_wall=$3 d_cpu=$4 d_rss=$5
    set -- $(run "$n" --capacity "$d_distinct")
    p_distinct=$1 p_printed=$2 p_wall=$3 p_cpu=$4 p_rss=$5
    awk -v n="$n" -v dd="$d_distinct" -v dp="$d_printed" -v dw="$d_wall" -v dc="$d_cpu" -v dr="$d_rss" \
        -v pp="$p_printed" -v pw="$p_wall" -v pc="$p_cpu" -v pr="$p_rss" 'BEGIN {
        printf "  %-12d %-10s %12d %9.1f %9.1f %9.0f %11d %10.2e\n", n, "default", dd, dw, dc, dr / 1024, dd - dp, (dd - dp) / dd
        printf "  %-12d %-10s %12d %9.1f %9.1f %9.0f %11d %10.2e\n", n, "pre-sized", dd, pw, pc, pr / 1024, dd - pp, (dd - pp) / dd
        printf "  %-12d default / pre-sized: time %.2fx (target <= 1.3x), peak memory %.2fx (<= 2x); %.1f ns a line (CPU)\n",
            n, dc / pc, dr / pr, dc * 1e9 / n }'
    ns=$(echo "$d_cpu * 1000000000 / $n" | bc -l)
    [ -n "$first_ns" ] || first_ns=$ns first_n=$n
    last_ns=$ns last_n=$n
done
if [ "$last_n" != "$first_n" ]; then
    awk -v a="$first_ns" -v b="$last_ns" -v an="$first_n" -v bn="$last_n" 'BEGIN {
        printf "  the default a line at %d lines against %d: %.2fx (target <= 1.3x)\n", bn, an, b / a }'
fi
