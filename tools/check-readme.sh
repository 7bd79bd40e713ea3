#!/bin/sh
# check-readme.sh CLI README: run the README's "A tour, with real output"
# block (its "$ " lines, in a scratch directory holding urls.txt, with a fixed
# hash key so that every figure repeats) and compare what the commands print
# with what the README shows. Exit 1 and a diff when they differ.
set -eu
cli=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
readme=$2
here=$(pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# the block: from the heading to the end of the first fenced block after it
awk '/^### A tour, with real output/ { on = 1; next }
     on && /^```/ { if (fence) exit; fence = 1; next }
     fence' "$readme" > "$dir/expected"
[ -s "$dir/expected" ] || { echo "check-readme: no tour in $readme" >&2; exit 1; }
mkdir "$dir/bin" "$dir/work"
ln -s "$cli" "$dir/bin/bloomkit"
cp "$here/examples/urls.txt" "$dir/work/urls.txt"
# each "$ command" line, echoed as the README shows it, then run (stderr too)
awk '/^\$ / { cmd = substr($0, 3); gsub(/\047/, "\047\\\047\047", cmd);
               printf "printf \"%%s\\n\" \047$ %s\047\n", cmd; print "{ " substr($0, 3) "\n} 2>&1" }' \
    "$dir/expected" > "$dir/tour.sh"
(cd "$dir/work" && PATH="$dir/bin:$PATH" BLOOMKIT_KEY=000102030405060708090a0b0c0d0e0f \
    BLOOMKIT_PROGRESS_DELAY=1000 sh "$dir/tour.sh" > "$dir/actual" 2>&1) || true
if ! diff -u -B "$dir/expected" "$dir/actual"; then
    echo "check-readme: README's tour differs from what the commands print (above)" >&2
    exit 1
fi
echo "check-readme: the README's tour prints what it shows ($(grep -c '^\$ ' "$dir/expected") commands)"
