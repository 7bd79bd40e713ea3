#!/bin/sh
# tools/check-pip.sh PYTHON CLI - pip install ./bindings/python into a
# scratch venv (no index: the in-tree backend needs only the standard
# library) and run the binding's own tests (not the Scrapy crawls, which
# check-python runs) against what pip installed (make check-pip). Skipped, saying so, without python3-venv.
set -eu
python=$1 cli=$2
if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
    echo "check-pip: SKIPPED: needs python3-venv"
    exit 0
fi
top=$(pwd)
case $cli in /*) ;; *) cli=$top/$cli ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --no-index ./bindings/python
cd "$tmp"
"$tmp/venv/bin/python" -c 'import bloomkit, glob, os, sys
ext = glob.glob(os.path.join(os.path.dirname(bloomkit.__file__), "_native.*so"))
assert bloomkit.__file__.startswith(sys.prefix) and ext, bloomkit.__file__
print("check-pip: bloomkit", bloomkit.library_version(), "from", ext[0])'
# The binding's own tests (the Scrapy crawls ran in check-python against the
# same sources; here what matters is the package pip built and installed).
cd "$top/bindings/python/tests"
env -u PYTHONPATH BLOOMKIT_CLI="$cli" \
    "$tmp/venv/bin/python" -m unittest test_native test_safety test_binding test_build test_types
