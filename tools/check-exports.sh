#!/bin/sh
# tools/check-exports.sh LIB SONAME HIREDIS - what the shared library shows
# the world (make check-exports): exactly the BK_API functions of include/'s
# headers (nothing undeclared: no private ABI), its soname, and hiredis
# among its needs only when the Redis part was built with it (HIREDIS=1).
set -eu
lib=$1 soname=$2 hiredis=$3
here=$(dirname "$0")/..
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^bk_' || true)
if [ -n "$bad" ]; then echo "$lib: non-bk_ symbols exported: $bad"; exit 1; fi
headers="bloomkit.h bloomkit_tools.h bloomkit_redisbloom.h bloomkit_redis.h"
for h in $headers; do
    sed -n 's/^BK_API .*[ *]\(bk_[a-z0-9_]*\)(.*/\1/p' "$here/include/$h"
done | sort > "$work/api"
nm -D --defined-only "$lib" | awk '{ print $3 }' | sort > "$work/exported"
# every function a header declares BK_API is exported (a definition that
# does not see its declaration is hidden by -fvisibility=hidden)
missing=$(comm -23 "$work/api" "$work/exported" | tr '\n' ' ')
if [ -n "$missing" ]; then echo "$lib: declared BK_API in include/ but not exported: $missing"; exit 1; fi
extra=$(comm -13 "$work/api" "$work/exported" | tr '\n' ' ')
if [ -n "$extra" ]; then echo "$lib: exported but declared by no header of include/: $extra"; exit 1; fi
echo "exports: $lib: $(wc -l < "$work/api") functions, exactly the BK_API ones of $headers"
readelf -d "$lib" | grep -q "SONAME.*$soname" || { echo "$lib: soname is not $soname"; exit 1; }
echo "soname: $soname"
needs=$(readelf -d "$lib" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case "$hiredis:$needs" in
    1:*hiredis*|0:*) ;;
    *) echo "$lib: built with hiredis but does not need it: $needs"; exit 1 ;;
esac
if [ "$hiredis" = 0 ] && echo "$needs" | grep -q hiredis; then echo "$lib: built without hiredis but needs it"; exit 1; fi
echo "needs: $needs"
