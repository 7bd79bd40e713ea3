#!/bin/sh
# tools/fuzz.sh BUILD SECONDS TARGET... - run each libFuzzer target (make
# fuzz, which builds the libraries first) for SECONDS on its seed corpus
# (tests/fuzz/corpus/TARGET), its regression inputs (tests/fuzz/regress/TARGET:
# under the fuzzer's timeout, so an input that once took too long fails again
# if it does) and what it found before; a crash stops with the target's log
# and the input's name. Reads MAKE from the environment.
set -eu
build=$1 seconds=$2
shift 2
for t in "$@"; do
    "$MAKE" --no-print-directory -s "$build/fuzz_$t"
    mkdir -p "$build/corpus/$t"
    echo "fuzz $t: $seconds s"
    regress=
    [ -d "tests/fuzz/regress/$t" ] && regress="tests/fuzz/regress/$t"
    "$build/fuzz_$t" "$build/corpus/$t" "tests/fuzz/corpus/$t" ${regress:+"$regress"} \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$build/crash-$t-" >"$build/fuzz_$t.log" 2>&1 ||
        { tail -40 "$build/fuzz_$t.log"; echo "fuzz $t: FAILED (input in $build/crash-$t-*)"; exit 1; }
    grep -E '^Done' "$build/fuzz_$t.log"
done
