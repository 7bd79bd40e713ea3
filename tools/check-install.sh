#!/bin/sh
# tools/check-install.sh - make install into a scratch DESTDIR (make
# check-install): examples built against it through pkg-config (the core
# API, the Redis part through bloomkit.pc and through the kept
# bloomkit-redis.pc), the command and its man page; then make
# uninstall leaves nothing. Reads MAKE, CC and WARN from the environment.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pc() {
    PKG_CONFIG_SYSROOT_DIR=$tmp PKG_CONFIG_PATH=$tmp/opt/bk/lib/pkgconfig pkg-config "$@"
}
"$MAKE" --no-print-directory -s install DESTDIR="$tmp" PREFIX=/opt/bk >/dev/null
# shellcheck disable=SC2046,SC2086
"$CC" -std=c11 $WARN examples/first_filter.c -o "$tmp/ex" $(pc --cflags --libs bloomkit)
LD_LIBRARY_PATH=$tmp/opt/bk/lib "$tmp/ex" >/dev/null
"$tmp/opt/bk/bin/bloomkit" --version >/dev/null
test -f "$tmp/opt/bk/share/man/man1/bloomkit.1"
printf '#include <bloomkit_redis.h>\nint main(void) { return bk_redis_drop(0) == BK_OK; }\n' >"$tmp/r.c"
# shellcheck disable=SC2046,SC2086
"$CC" -std=c11 $WARN "$tmp/r.c" -o "$tmp/rex" $(pc --cflags --libs bloomkit)
LD_LIBRARY_PATH=$tmp/opt/bk/lib "$tmp/rex"
# shellcheck disable=SC2046,SC2086
"$CC" -std=c11 $WARN "$tmp/r.c" -o "$tmp/rex" $(pc --cflags --libs bloomkit-redis)
LD_LIBRARY_PATH=$tmp/opt/bk/lib "$tmp/rex"
printf '#include <bloomkit_tools.h>\nint main(void) { return bk_simd_path() == 0; }\n' >"$tmp/t.c"
# shellcheck disable=SC2046,SC2086
"$CC" -std=c11 $WARN "$tmp/t.c" -o "$tmp/tex" $(pc --cflags --libs bloomkit)
LD_LIBRARY_PATH=$tmp/opt/bk/lib "$tmp/tex"
echo "install: headers (bloomkit_tools.h, bloomkit_redis.h too), libbloomkit (.a, .so), bloomkit.pc and bloomkit-redis.pc (examples through each), bin/bloomkit and its man page"
rm -f "$tmp/ex" "$tmp/rex" "$tmp/r.c" "$tmp/tex" "$tmp/t.c"
"$MAKE" --no-print-directory -s uninstall DESTDIR="$tmp" PREFIX=/opt/bk >/dev/null
left=$(find "$tmp" -type f -o -type l)
if [ -n "$left" ]; then echo "uninstall left: $left"; exit 1; fi
echo "uninstall: nothing left"
