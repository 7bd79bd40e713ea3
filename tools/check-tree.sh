#!/bin/sh
# check-tree.sh: rules of the tree that a newcomer relies on (docs/design.md,
# "Rules"). The layers only point down: what a folder of src/ includes of
# another folder is listed below, and nothing else. Every C file's name is
# unique in the tree, so that a name in a message, a profile or a review
# points at one file. A function of more than
# 60 lines (from its signature to its closing brace) says why in one line
# that starts with "long:" in the comment just above it, or is split.
# Exit 1, naming each file or function that breaks a rule.
set -eu
cd "$(dirname "$0")/.."
status=0
# The variants, as BK_VARIANT_LIST in include/bloomkit.h lists them: each
# a folder of src/ that may include common/, the core's filter_impl.h and
# config.h, and another variant's published header (src/V/V.h, the one it
# is built on: scalable on standard, window on scalable)
variants=$(sed -n 's/^ *X([A-Z_]*, \([a-z_]*\), [0-9]*).*/\1/p' include/bloomkit.h)
[ -n "$variants" ] || { echo "check-tree: no variant in BK_VARIANT_LIST (include/bloomkit.h)" >&2; exit 1; }
published=$(for v in $variants; do printf '|^%s/%s\\.h$' "$v" "$v"; done)
# folder: the files of other folders it may include, as paths under src/
# (a pattern for grep -E); a folder's own files are always allowed
layers="common:^\$
canonical:^common/
core:^common/
io:^common/|^core/(store|config)\\.h\$
redis:^common/|^core/(filter_impl|config)\\.h\$|^redis/lua/lua\\.h\$
redis/lua:^common/|^core/(filter_impl|store)\\.h\$|^redis/[a-z_]+\\.h\$
$(for v in $variants; do echo "$v:^common/|^core/(filter_impl|config)\\.h\$$published"; done)"
# every folder of src/ is in the list above
for d in $(git ls-files 'src/*' | sed -n 's|^src/\([a-z_]*\)/.*|\1|p' | sort -u); do
    echo "$layers" | grep -q "^$d:" ||
        { echo "check-tree: src/$d is no layer here and no variant of BK_VARIANT_LIST" >&2; status=1; }
done
wrong=$(echo "$layers" | while IFS=: read -r dir allowed; do
    for f in $(git ls-files "src/$dir/*.[ch]"); do
        [ "$(dirname "$f")" = "src/$dir" ] || continue
        sed -n 's|^#include "\([a-z_./]*\.h\)"|\1|p' "$f" | while read -r inc; do
            path=$(realpath -m --relative-to=src "$(dirname "$f")/$inc")
            [ "$(dirname "$path")" = "$dir" ] && continue
            [ -e "src/$path" ] || continue # a public header (include/)
            echo "$path" | grep -Eq "$allowed" ||
                echo "check-tree: $f includes $inc: src/$dir may include only $allowed"
        done
    done
done)
if [ -n "$wrong" ]; then
    echo "$wrong" >&2
    status=1
fi
dups=$(git ls-files '*.c' '*.h' | xargs -n1 basename | sort | uniq -d)
for name in $dups; do
    echo "check-tree: $name is the name of more than one file:" $(git ls-files "*/$name" "$name") >&2
    status=1
done
# awk over every tracked C file but the tests: a function starts at a line
# "{" alone, its signature the lines above it back to one that starts in
# column 0; the comment above the signature must hold "long:" when it is long
long=$(git ls-files '*.c' | grep -v '^tests/' | xargs awk '
    FNR == 1 { n = 0 }
    { line[++n] = $0 }
    $0 == "{" {
        s = n - 1
        while (s > 1 && line[s] ~ /^[ \t]/) s--
        start = s; said = 0
        for (c = s - 1; c >= 1 && c >= s - 12 && line[c] !~ /^}/ && line[c] != ""; c--)
            if (line[c] ~ /long:/) said = 1
        name = line[s]; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
    }
    $0 == "}" && start {
        if (n - start + 1 > 60 && !said)
            printf "%s:%d: %s is %d lines and does not say why (a \"long:\" line above it)\n",
                   FILENAME, start, name, n - start + 1
        start = 0
    }')
if [ -n "$long" ]; then
    echo "$long" >&2
    status=1
fi
[ $status -eq 0 ] && echo "check-tree: layers point down, file names unique, long functions say why"
exit $status
