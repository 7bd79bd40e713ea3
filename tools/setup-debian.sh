#!/bin/sh
# Install everything bloomkit needs to build and test, from Debian's packages.
# Runs apt-get directly as root, through sudo otherwise. Used by README's quick
# start and by .ci/run, so the list lives in one place.
set -eu
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends \
    build-essential clang clang-format clang-tidy cppcheck libclang-rt-dev pkg-config check libsubunit-dev libxxhash-dev \
    libhiredis-dev redis-server python3-redis node-redis valgrind time man-db \
    libbloom-dev libsodium-dev gnuplot-nox python3 python3-dev python3-scrapy \
    python3-venv python3-flor mypy \
    dpkg-dev debhelper dh-python lintian
