#!/bin/sh
# tools/deb.sh build|check - the Debian packages of debian/.
#   build: dpkg-buildpackage -us -uc -b on the committed tree (git archive of
#          HEAD, as make dist) in build/deb/src, the .deb files in build/deb,
#          lintian on them (an error or a warning fails).
#   check: install them with dpkg on this machine (root, or sudo), smoke-test the
#          installed result with no environment variables (the command on the
#          sample URLs, pkg-config, an example against the installed headers,
#          the Python binding), then remove them again.
set -eu
cd "$(dirname "$0")/.."
VERSION=$(sed -n 's/^#define BK_VERSION_STRING *"\(.*\)".*/\1/p' include/bloomkit.h)
OUT=build/deb
PACKAGES="libbloomkit0 libbloomkit-dev bloomkit python3-bloomkit redis-bloomkit"

build() {
    for tool in dpkg-buildpackage dh lintian git; do
        command -v "$tool" >/dev/null ||
            { echo "deb: $tool is missing (tools/setup-debian.sh installs it)"; exit 1; }
    done
    rm -rf "$OUT"
    mkdir -p "$OUT/src"
    git archive --prefix="bloomkit-$VERSION/" HEAD | tar -x -C "$OUT/src"
    if ! (cd "$OUT/src/bloomkit-$VERSION" && dpkg-buildpackage -us -uc -b) \
            > "$OUT/build.log" 2>&1; then
        tail -40 "$OUT/build.log"
        echo "deb: dpkg-buildpackage failed (log: $OUT/build.log)"
        exit 1
    fi
    mv "$OUT"/src/*.deb "$OUT"/src/*.changes "$OUT"/src/*.buildinfo "$OUT"/
    rm -rf "$OUT/src"
    if ! lintian --fail-on error,warning "$OUT/bloomkit_${VERSION}_"*.changes \
            > "$OUT/lintian.log" 2>&1; then
        grep -v '^running with root' "$OUT/lintian.log"
        echo "deb: lintian reports errors or warnings (above)"
        exit 1
    fi
    grep -v '^running with root' "$OUT/lintian.log" || true
    echo "deb: $(cd "$OUT" && ls ./*.deb | grep -vc dbgsym) packages in $OUT: lintian clean (no errors, no warnings)"
}

check() {
    debs=""
    for p in $PACKAGES; do
        debs="$debs $(ls "$OUT/${p}_${VERSION}_"*.deb)"
    done
    tmp=$(mktemp -d)
    # root (or password-free sudo): dpkg -i on this machine, removed at the
    # end; otherwise unpacked into a scratch root, used through the paths
    SUDO="" where="on this machine"
    if [ "$(id -u)" -ne 0 ]; then
        if sudo -n true 2>/dev/null; then SUDO=sudo; else SUDO=none; fi
    fi
    if [ "$SUDO" = none ]; then
        root="$tmp/root" where="in a scratch root (not root: dpkg -x)"
        ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
        for d in $debs; do dpkg -x "$d" "$root"; done
        trap 'rm -rf "$tmp"' EXIT
        clean() {
            env -i HOME="$tmp" PATH="$root/usr/bin:/usr/bin:/bin" \
                LD_LIBRARY_PATH="$root/usr/lib/$ma" PKG_CONFIG_SYSROOT_DIR="$root" \
                PKG_CONFIG_PATH="$root/usr/lib/$ma/pkgconfig" MANPATH="$root/usr/share/man" \
                PYTHONPATH="$root/usr/lib/python3/dist-packages" CPATH="$root/usr/include" \
                LIBRARY_PATH="$root/usr/lib/$ma" "$@"
        }
    else
        # shellcheck disable=SC2086
        $SUDO dpkg -i $debs > "$OUT/install.log" 2>&1 || { cat "$OUT/install.log"; exit 1; }
        trap '$SUDO dpkg -r $PACKAGES >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
        clean() { env -i PATH=/usr/bin:/bin HOME="$tmp" "$@"; }
    fi
    # the command: the main job, on the sample
    lines=$(clean bloomkit dedup --state "$tmp/seen.bkf" < examples/urls.txt | wc -l)
    want=$(sort -u examples/urls.txt | wc -l)
    [ "$lines" -eq "$want" ] || { echo "check-deb: dedup printed $lines lines, want $want"; exit 1; }
    again=$(clean bloomkit dedup --state "$tmp/seen.bkf" < examples/urls.txt | wc -l)
    [ "$again" -eq 0 ] || { echo "check-deb: a second dedup printed $again lines"; exit 1; }
    clean man -w bloomkit >/dev/null
    # the command uses the library packaged beside it, not a copy of it
    ldd "$(clean sh -c 'command -v bloomkit')" | grep -q 'libbloomkit\.so\.0' ||
        { echo "check-deb: the command is not linked to libbloomkit.so.0"; exit 1; }
    # the development files
    flags=$(clean pkg-config --cflags --libs bloomkit)
    rflags=$(clean pkg-config --cflags --libs bloomkit-redis)
    sflags=$(clean pkg-config --cflags --libs --static bloomkit)
    # shellcheck disable=SC2086
    clean cc -std=c11 -Wall -Wextra -Wpedantic -Werror examples/first_filter.c -o "$tmp/ex" $flags
    clean "$tmp/ex" >/dev/null
    printf '#include <bloomkit_redis.h>\nint main(void) { return bk_redis_drop(0) == BK_OK; }\n' \
        > "$tmp/r.c"
    # shellcheck disable=SC2086
    clean cc -std=c11 -Wall -Werror "$tmp/r.c" -o "$tmp/rex" $rflags
    clean "$tmp/rex"
    # shellcheck disable=SC2086
    clean cc -std=c11 examples/first_filter.c -o "$tmp/static" -static $sflags
    clean "$tmp/static" >/dev/null
    # the binding: its extension on the packaged library, no variable of bloomkit's
    (cd "$tmp" && clean python3 -c '
import bloomkit, glob, os
from bloomkit import _native
f = bloomkit.BloomFilter(capacity=1000, fpr=0.001)
assert f.add("a") and not f.add("a") and "a" in f and f == f.copy()
assert bloomkit.canonical_url("HTTP://A.example:80/x#y") == "http://a.example/x"
print("check-deb: python3 -c \"import bloomkit\": bloomkit", bloomkit.__version__, "on", _native.__file__)
')
    ldd "$(cd "$tmp" && clean python3 -c 'from bloomkit import _native; print(_native.__file__)')" |
        grep -q 'libbloomkit\.so\.0' || { echo "check-deb: the extension is not linked to libbloomkit.so.0"; exit 1; }
    # a library of another release under it is refused at import, both versions named
    printf 'const char *bk_version(void) { return "9.9.9"; }\n' > "$tmp/v.c"
    cc -shared -fPIC -o "$tmp/v.so" "$tmp/v.c"
    if (cd "$tmp" && clean env LD_PRELOAD="$tmp/v.so" python3 -c 'import bloomkit') > "$tmp/v.log" 2>&1 ||
        ! grep -q "libbloomkit 9.9.9, this package needs $VERSION" "$tmp/v.log"; then
        cat "$tmp/v.log"; echo "check-deb: a library of another release was not refused"; exit 1
    fi
    # the module: loaded into Debian's redis-server, a BF.ADD answered
    module=/usr/lib/redis/modules/bloomkit.so
    [ -z "${root:-}" ] || module="$root$module"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    redis-server --port "$port" --bind 127.0.0.1 --save '' --dir "$tmp" --daemonize yes \
        --pidfile "$tmp/redis.pid" --logfile "$tmp/redis.log" --loadmodule "$module"
    for _ in 1 2 3 4 5 6 7 8 9 10; do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.2; done
    added=$(redis-cli -p "$port" BF.ADD k x)
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    [ "$added" = "1" ] || { echo "check-deb: the module's BF.ADD answered '$added'"; cat "$tmp/redis.log"; exit 1; }
    echo "check-deb: $PACKAGES installed $where; bloomkit (linked to libbloomkit.so.0) dedup printed $lines of $(wc -l < examples/urls.txt) sample lines (then 0 from its state); pkg-config bloomkit: $flags; an example built against the installed headers (shared and static) and one of bloomkit-redis ran; redis-server loaded the module and BF.ADD answered 1; removed again"
}

case "${1:-}" in
build) build ;;
check) check ;;
*) echo "usage: tools/deb.sh build|check"; exit 2 ;;
esac
