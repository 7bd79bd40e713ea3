#!/bin/sh
# tools/check-exports.sh CORE CORE_SONAME REDIS REDIS_SONAME - what the two
# shared libraries show the world (make check-exports): only bk_* functions,
# their sonames, and a core that needs no hiredis.
set -eu
core=$1 core_soname=$2 redis=$3 redis_soname=$4
for l in "$core" "$redis"; do
    bad=$(nm -D --defined-only "$l" | awk '{print $3}' | grep -v '^bk_' || true)
    if [ -n "$bad" ]; then echo "$l: non-bk_ symbols exported: $bad"; exit 1; fi
    echo "exports: $l: $(nm -D --defined-only "$l" | grep -c ' T bk_') bk_* functions, nothing else"
done
# every function a header declares BK_API is exported (a definition that
# does not see its declaration is hidden by -fvisibility=hidden)
here=$(dirname "$0")/..
for pair in "$core:bloomkit.h bloomkit_tools.h bloomkit_redisbloom.h" "$redis:bloomkit_redis.h"; do
    lib=${pair%%:*}
    for h in ${pair#*:}; do
        for fn in $(sed -n 's/^BK_API .*[ *]\(bk_[a-z0-9_]*\)(.*/\1/p' "$here/include/$h"); do
            nm -D --defined-only "$lib" | grep -q " T $fn\$" ||
                { echo "$lib: $fn, declared in $h, is not exported"; exit 1; }
        done
    done
done
echo "exports: every BK_API function of bloomkit.h, bloomkit_tools.h, bloomkit_redisbloom.h and bloomkit_redis.h"
# and past the API only what libbloomkit-redis imports: BK_INTERNAL
# (src/common/export.h), for bloomkit's own optional library and no one else
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for h in bloomkit.h bloomkit_tools.h bloomkit_redisbloom.h; do
    sed -n 's/^BK_API .*[ *]\(bk_[a-z0-9_]*\)(.*/\1/p' "$here/include/$h"
done | sort > "$work/api"
nm -D --defined-only "$core" | awk '$2 == "T" { print $3 }' | sort > "$work/exported"
nm -D --undefined-only "$redis" | awk '{ print $2 }' | sort > "$work/imported"
comm -13 "$work/api" "$work/exported" > "$work/internal"
missing=$(grep '^bk_' "$work/imported" | comm -23 - "$work/exported" | tr '\n' ' ')
if [ -n "$missing" ]; then
    echo "$redis: imports what $core does not export: $missing(mark it BK_INTERNAL)"
    exit 1
fi
unused=$(comm -23 "$work/internal" "$work/imported" | tr '\n' ' ')
if [ -n "$unused" ]; then
    echo "$core: exported beyond the API but not used by libbloomkit-redis: $unused(drop BK_INTERNAL)"
    exit 1
fi
echo "exports: $(wc -l < "$work/api") API functions and $(wc -l < "$work/internal") BK_INTERNAL ones, each imported by libbloomkit-redis"
readelf -d "$core" | grep -q "SONAME.*$core_soname" || { echo "$core: soname is not $core_soname"; exit 1; }
echo "soname: $core_soname"
readelf -d "$redis" | grep -q "SONAME.*$redis_soname" || { echo "$redis: soname is not $redis_soname"; exit 1; }
echo "soname: $redis_soname"
if readelf -d "$core" | grep -q 'NEEDED.*hiredis'; then echo "$core needs hiredis"; exit 1; fi
echo "core: $core needs $(readelf -d "$core" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')(no hiredis)"
