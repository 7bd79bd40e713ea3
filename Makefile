# bloomkit - build, test, install.
#
#   make                 libraries (build/libbloomkit.a, build/libbloomkit.so)
#   make check           every Check suite, the examples, the fuzz replays, the export,
#                        install/uninstall and packager-flags checks
#   make check-python    the Python binding and its Scrapy crawls, from the tree and
#                        installed by pip into a scratch venv (check-pip)
#   make bench-smoke     every benchmark on small inputs (nothing asserted)
#   make check-asan      the suites under AddressSanitizer + UndefinedBehaviorSanitizer
#   make check-tsan      the thread suites under ThreadSanitizer
#   make check-clang     every suite built with clang, then under its ASan+UBSan and TSan
#   make check-valgrind  the CLI suite with each command under valgrind
#   make fuzz            every fuzz target for FUZZ_SECONDS (30) seconds (clang, libFuzzer)
#   make install PREFIX=/usr/local DESTDIR=   (and make uninstall, the same way)
#   make dist            build/bloomkit-VERSION.tar.gz: the committed sources (git archive)
#   make distcheck       the tarball unpacked in a scratch directory, built and `make check`ed
#   make deb             Debian packages of debian/ in build/deb, lintian clean
#   make check-deb       (root) make deb, then install them with dpkg, smoke-test, remove
#
# CPPFLAGS, CFLAGS and LDFLAGS are honoured; -Werror is on in a git checkout
# (developers, CI) and off otherwise (WERROR= or WERROR=-Werror to choose).
#   make format / lint
#
# Variant builds go to their own folder (BUILD=build/asan ...) so sanitizer
# objects never mix with normal ones.

# BK_TIME_RECIPES=N in the environment (.ci/run sets it): every recipe line
# that takes N seconds or more is named with its time (tools/timed-sh), in
# sub-makes too, so a slow run shows which parts were slow.
TIMED_SH := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))/tools/timed-sh
ifneq ($(BK_TIME_RECIPES),)
ifneq ($(wildcard $(TIMED_SH)),)
SHELL := $(TIMED_SH)
endif
endif

# The release is written once, in include/bloomkit.h; everything else reads it
# from there (this file, the .pc files) or is checked against it by a test
# (the Python package's __version__).
VERSION_MAJOR := $(shell sed -n 's/^\#define BK_VERSION_MAJOR *\([0-9]*\).*/\1/p' include/bloomkit.h)
VERSION := $(shell sed -n 's/^\#define BK_VERSION_STRING *"\(.*\)".*/\1/p' include/bloomkit.h)

CC ?= cc
BUILD ?= build
OPT ?= -O2
SAN ?=

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BINDIR ?= $(PREFIX)/bin
# Where Redis modules live (redis-server --loadmodule $(MODULEDIR)/bloomkit.so)
MODULEDIR ?= $(PREFIX)/lib/redis/modules
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=

# -Werror in developer and CI builds (a git checkout), not in a user's or a
# packager's build of a release, where a newer compiler's new warning must
# not stop the build: `make WERROR=` or `make WERROR=-Werror` to choose.
WERROR ?= $(if $(wildcard .git),-Werror)
WARN := -Wall -Wextra -Wpedantic $(WERROR)
BASE_CFLAGS := -std=c11 $(OPT) -g $(WARN) -fPIC -fvisibility=hidden -Iinclude -MMD -MP $(SAN)
override CFLAGS := $(BASE_CFLAGS) $(CFLAGS)
# HIREDIS=1 when hiredis's headers are there (Debian: libhiredis-dev); 0
# builds the Redis part as src/redis/none (its calls fail with BK_ENOTSUP,
# saying the build has no hiredis), so everything else builds and runs, and
# the tests skip the Redis parts, saying so. `make HIREDIS=0` chooses it.
ifeq ($(origin HIREDIS),undefined)
HIREDIS := $(shell printf '\043include <hiredis/hiredis.h>\n' | $(CC) $$(pkg-config --cflags hiredis 2>/dev/null) -E -x c - >/dev/null 2>&1 && echo 1 || echo 0)
endif
HIREDIS_CFLAGS := $(if $(filter 1,$(HIREDIS)),$(shell pkg-config --cflags hiredis 2>/dev/null))
HIREDIS_LIBS := $(if $(filter 1,$(HIREDIS)),$(or $(shell pkg-config --libs hiredis 2>/dev/null),-lhiredis))
CORE_LIBS := -lxxhash -lm -pthread
comma := ,
# Programs linked with both static libraries (the command, the tests)
LDLIBS := $(HIREDIS_LIBS) $(CORE_LIBS)

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

# Every folder under src/ is part of the one library (a new variant's folder
# is picked up with no list to edit: docs/design.md, "Adding a variant").
# src/redis, the optional part, is compiled in as zstd compiles in its
# optional parts: with hiredis, the Redis client; without, src/redis/none,
# whose calls fail with BK_ENOTSUP. One library, so nothing past include/'s
# API is exported (make check-exports).
REDIS_SRCS := $(if $(filter 1,$(HIREDIS)),$(wildcard src/redis/*.c src/redis/lua/*.c),src/redis/none/none.c)
LIB_SRCS := $(filter-out src/redis/%,$(wildcard src/*.c src/*/*.c)) $(REDIS_SRCS)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_SRCS := $(filter-out $(if $(filter 0,$(HIREDIS)),tests/redis_server.c),$(wildcard tests/*.c))
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/obj/%.o)

STATIC_LIB := $(BUILD)/libbloomkit.a
SHARED_REAL := $(BUILD)/libbloomkit.so.$(VERSION)
SHARED_SONAME := libbloomkit.so.$(VERSION_MAJOR)
SHARED_LIB := $(BUILD)/libbloomkit.so
TEST_BIN := $(BUILD)/tests/run_tests
CLI_SRCS := $(wildcard programs/*.c programs/*/*.c)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
CLI_BIN := $(BUILD)/bloomkit
# CLI_LINK=static (the default: the tree's tests, make install): the command
# carries its own copy of the library; shared (Debian's bloomkit package):
# it links libbloomkit.so.N, packaged beside it, so a fix of the library
# reaches the command too.
CLI_LINK ?= static
CLI_LIBS = $(if $(filter shared,$(CLI_LINK)),-L$(BUILD) -lbloomkit -lm -pthread,$(STATIC_LIB) $(LDLIBS))
CLI_DEPS = $(if $(filter shared,$(CLI_LINK)),$(SHARED_LIB),$(STATIC_LIB))
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
# The Redis module (module/): the core linked in statically, so redis-server
# loads one file; it exports RedisModule_OnLoad and nothing else.
MODULE_SRCS := $(wildcard module/*.c)
MODULE_OBJS := $(MODULE_SRCS:%.c=$(BUILD)/obj/%.o)
MODULE := $(BUILD)/bloomkit-redis-module.so

.PHONY: man check-fast check-readme check-python-asan bench-python python module install-module check-module check-module-asan deb check-deb check-pip dist distcheck all lib cli install-cli check-python check-valgrind check-clang check-clang-tests check-clang-asan check-clang-tsan fuzz run-fuzz-replay bench bench-table bench-smoke bench-plot plots bench-cli bench-redis bench-module bench-scale demo examples run-examples golden check check-asan check-tsan run-tests check-exports check-install \
        install install-lib install-headers install-pc uninstall clean format lint check-flags

all: lib cli module python

lib: $(STATIC_LIB) $(SHARED_LIB)

cli: $(CLI_BIN)

module: $(MODULE)

$(MODULE): $(MODULE_OBJS) $(STATIC_LIB)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $(LDFLAGS) -shared -Wl,--exclude-libs,ALL -o $@ \
	  $(MODULE_OBJS) $(STATIC_LIB) \
	  $(CORE_LIBS)

# The floor bench_module.sh sets the module against (bench/ref_module.c):
# RedisBloom's first link in a bare module, MurmurHash the only core code.
REF_MODULE := $(BUILD)/bench/ref-module.so
$(REF_MODULE): bench/ref_module.c module/rm_api.c $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -Isrc -Imodule $(LDFLAGS) -shared -o $@ \
	  bench/ref_module.c module/rm_api.c $(STATIC_LIB) $(CORE_LIBS)

# The Python binding's extension, bloomkit._native (bindings/python/src),
# for $(PYTHON), staged with the package's Python files in
# $(BUILD)/python/bloomkit (PYTHONPATH=$(BUILD)/python imports it).
# PYEXT_LINK=static (the default, and pip's build): the library linked in
# with its symbols hidden, so the package needs no libbloomkit beside it and
# can never meet another release's; shared (Debian's python3-bloomkit):
# against libbloomkit.so.N, so a fix of the packaged library reaches it.
# PYEXT_REDIS=0: without Redis support (no hiredis).
PYEXT_LINK ?= static
PYEXT_REDIS ?= $(HIREDIS)
PYEXT_SRCS := $(wildcard bindings/python/src/*.c)
PYEXT_OBJS := $(PYEXT_SRCS:%.c=$(BUILD)/obj/%.o)
PYEXT_DIR := $(BUILD)/python/bloomkit
PYEXT := $(PYEXT_DIR)/_native.so
PY_STAGED := $(patsubst bindings/python/bloomkit/%,$(PYEXT_DIR)/%,$(wildcard bindings/python/bloomkit/*.py bindings/python/bloomkit/*.pyi) bindings/python/bloomkit/py.typed)
# expanded only where used: no Python is asked unless the extension is built
PY_INCLUDE = $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
PYEXT_CFLAGS = -I$(PY_INCLUDE) -fno-strict-aliasing $(if $(filter 0,$(PYEXT_REDIS)),-DBKPY_NO_REDIS)
PYEXT_LIBS = $(if $(filter shared,$(PYEXT_LINK)),-L$(BUILD) -lbloomkit,-Wl,--exclude-libs,ALL $(STATIC_LIB) $(if $(filter 0,$(PYEXT_REDIS)),,$(HIREDIS_LIBS)) $(CORE_LIBS))
PYEXT_DEPS = $(if $(filter shared,$(PYEXT_LINK)),$(SHARED_LIB),$(STATIC_LIB))

# (the libraries first, by this make: the one below must not build them too)
python: $(PYEXT_DEPS)
	@if $(PYTHON) -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; then \
	  $(MAKE) --no-print-directory $(PYEXT) $(PY_STAGED); \
	else echo "python: SKIPPED: no Python.h for $(PYTHON), so no bloomkit._native (Debian: apt-get install python3-dev)"; fi

$(BUILD)/obj/bindings/python/src/%.o: bindings/python/src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PYEXT_CFLAGS) -c $< -o $@

$(PYEXT): $(PYEXT_OBJS) $(PYEXT_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $(LDFLAGS) -shared -o $@ $(PYEXT_OBJS) $(PYEXT_LIBS)

$(PYEXT_DIR)/%: bindings/python/bloomkit/%
	@mkdir -p $(dir $@)
	cp $< $@

$(CLI_BIN): $(CLI_OBJS) $(CLI_DEPS)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $(LDFLAGS) -o $@ $(CLI_OBJS) $(CLI_LIBS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(STATIC_LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(SHARED_REAL): $(LIB_OBJS)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $(LDFLAGS) -shared -Wl,-soname,$(SHARED_SONAME) -o $@ $^ \
	  $(LDLIBS)

$(SHARED_LIB): $(SHARED_REAL)
	ln -sf libbloomkit.so.$(VERSION) $(BUILD)/$(SHARED_SONAME)
	ln -sf libbloomkit.so.$(VERSION) $@

$(BUILD)/obj/src/redis/%.o: override CFLAGS += $(HIREDIS_CFLAGS)

# Tests use the static library: they may reach internal (hidden) symbols.
$(BUILD)/obj/tests/%.o: override CFLAGS += $(CHECK_CFLAGS) -Isrc -D_DEFAULT_SOURCE -DBK_HAVE_HIREDIS=$(HIREDIS)

# The CLI suite runs the bloomkit built alongside it.
$(BUILD)/obj/tests/test_cli.o $(BUILD)/obj/tests/test_lua.o $(BUILD)/obj/tests/test_import.o $(BUILD)/obj/tests/test_faults.o \
  $(BUILD)/obj/tests/test_experiment.o $(BUILD)/obj/tests/test_writers.o: \
  override CFLAGS += -DBK_CLI_PATH='"$(CLI_BIN)"' -DBK_FAULT_SHIM='"$(BUILD)/tests/fault_shim.so"'

# LD_PRELOAD shim that fails the N-th write/fsync/rename/mkstemp of the
# command (tests/test_faults.c); never linked into bloomkit. No sanitizer:
# it is loaded into sanitized and plain commands alike.
$(BUILD)/tests/fault_shim.so: tests/shim/fault_shim.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -fPIC -shared -o $@ $< -ldl

$(TEST_BIN): $(TEST_OBJS) $(STATIC_LIB) $(CLI_BIN) $(BUILD)/tests/fault_shim.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(TEST_OBJS) $(STATIC_LIB) $(CHECK_LIBS) $(LDLIBS)

# Suites run from the repository root (tests read tests/data/...), in two
# processes side by side (BK_TEST_SHARD: each half of the suites; Check runs
# one test at a time) with one seed, the second's output after the first's.
# CK_RUN_SUITE / CK_RUN_CASE select a subset (Check's own variables).
# $(1): the environment of both.
run_halves = seed=$${BK_TEST_SEED:-$$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')}; \
	BK_TEST_SEED=$$seed $(1) BK_TEST_SHARD=1/2 $(TEST_BIN) > $(BUILD)/tests/half-1.log 2>&1 & \
	other=$$!; BK_TEST_SEED=$$seed $(1) BK_TEST_SHARD=0/2 $(TEST_BIN); a=$$?; \
	wait $$other; b=$$?; cat $(BUILD)/tests/half-1.log; \
	echo "tests: both halves $$([ $$a -eq 0 ] && [ $$b -eq 0 ] && echo passed || echo FAILED) (BK_TEST_SEED=$$seed replays them)"; \
	[ $$a -eq 0 ] && [ $$b -eq 0 ]

run-tests: $(TEST_BIN)
	@$(call run_halves,)

# The contributor's loop (README): every suite but those that start servers,
# once, on this CPU's default multi-key hash path, no sanitizers, the
# multi-gigabyte files skipped. Under a minute on two cores; make check
# (and the README's test command) runs everything.
check-fast: lib cli $(TEST_BIN)
	@$(call run_halves,BK_TEST_FAST=1 BK_TEST_SKIP_BIG=1)

$(BUILD)/examples/%: examples/%.c $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(filter-out -MMD -MP,$(CFLAGS)) $(LDFLAGS) -o $@ $< $(STATIC_LIB) $(CORE_LIBS)

examples: $(EXAMPLES)

# Each example must run and exit 0.
run-examples: $(EXAMPLES)
	@for e in $(EXAMPLES); do $$e >/dev/null || { echo "example $$e failed"; exit 1; }; done; \
	echo "examples: $(notdir $(EXAMPLES)) ran"

# The tests. The Python suite (check-python) and the benchmarks' smoke run
# (bench-smoke) are targets of their own; the README's test command names
# them beside this one.
check: lib cli run-tests run-examples run-fuzz-replay check-exports check-install check-flags check-module \
  check-readme

# The README's tour, run: what it shows is what the commands print.
check-readme: $(CLI_BIN)
	@sh tools/check-readme.sh $(CLI_BIN) README.md

# The Python binding and its Scrapy crawls (bindings/python), run with
# Debian's own interpreter: its python3-* packages (python3-scrapy) install
# into it, and it need not be the first python3 on PATH.
PYTHON ?= /usr/bin/python3
check-python: python $(CLI_BIN)
	@if [ ! -x "$(PYTHON)" ]; then \
	  echo "check-python: SKIPPED: no $(PYTHON) (Debian: apt-get install python3)"; exit 0; fi; \
	$(PYTHON) -c 'import scrapy' 2>/dev/null || \
	  echo "check-python: Scrapy is not installed for $(PYTHON): the crawl tests are SKIPPED (Debian: apt-get install python3-scrapy)"; \
	PYTHONPATH=$(CURDIR)/$(BUILD)/python BLOOMKIT_CLI=$(CURDIR)/$(CLI_BIN) \
	  $(PYTHON) -m unittest discover -s bindings/python/tests -v
	@$(MAKE) --no-print-directory check-pip

# pip install ./bindings/python into a scratch virtual environment (with
# Debian's python3-* packages seen through --system-site-packages; nothing
# downloaded: the build backend needs only the standard library), then the
# binding's tests against the installed package: its extension must be the
# one pip built into it.
check-pip: $(CLI_BIN)
	@sh tools/check-pip.sh $(PYTHON) $(CLI_BIN)

# Fuzz targets (tests/fuzz): libFuzzer with clang, `make fuzz FUZZ_SECONDS=N`
# runs each for N seconds from its seed corpus (tests/fuzz/corpus/T) into a
# scratch corpus under build/fuzz. `make check` replays every seed and every
# regression input (tests/fuzz/regress/T: a crash found by a fuzzer goes there
# first, then gets fixed) through the same targets with the normal compiler.
# (redis_reply parses hiredis's replies: only with hiredis)
FUZZ_TARGETS := config load mmap lines $(if $(filter 1,$(HIREDIS)),redis_reply) plot url module_args module_payload \
  redisbloom
FUZZ_SECONDS ?= 30
FUZZ_CC ?= clang
FUZZ_BUILD := build/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
fuzz_src = tests/fuzz/fuzz_$(if $(filter load mmap,$(1)),file,$(1)).c $(if $(filter lines,$(1)),programs/stream.c) \
           $(if $(filter plot,$(1)),programs/experiment/exp_plot.c programs/experiment/exp_output.c) \
           $(if $(filter module_args,$(1)),module/args.c module/settings.c) \
           $(if $(filter module_payload,$(1)),module/payload.c module/modclock.c)
fuzz_def = $(if $(filter mmap,$(1)),-DFUZZ_MMAP)
FUZZ_INC := -Iinclude -Isrc -Imodule -Iprograms -Iprograms/experiment $(HIREDIS_CFLAGS)

$(BUILD)/fuzz-replay/replay_%: tests/fuzz/replay_main.c $(wildcard tests/fuzz/*.c) $(wildcard programs/*.[ch] programs/*/*.[ch] module/*.[ch]) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $(FUZZ_INC) $(call fuzz_def,$*) -o $@ tests/fuzz/replay_main.c $(call fuzz_src,$*) $(STATIC_LIB) $(LDLIBS)

run-fuzz-replay: $(FUZZ_TARGETS:%=$(BUILD)/fuzz-replay/replay_%)
	@for t in $(FUZZ_TARGETS); do \
	  printf 'fuzz replay %-12s ' $$t; \
	  $(BUILD)/fuzz-replay/replay_$$t tests/fuzz/corpus/$$t tests/fuzz/regress/$$t || exit 1; \
	done

fuzz:
	$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) OPT=-O1 \
	  SAN="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" $(FUZZ_BUILD)/libbloomkit.a
	@MAKE='$(MAKE)' sh tools/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

$(FUZZ_BUILD)/fuzz_%: $(wildcard tests/fuzz/*.c) $(wildcard programs/*.[ch] programs/*/*.[ch] module/*.[ch]) $(FUZZ_BUILD)/libbloomkit.a
	$(FUZZ_CC) -std=c11 -g -O1 -fsanitize=fuzzer $(FUZZ_SAN) $(FUZZ_INC) $(call fuzz_def,$*) -o $@ \
	  $(call fuzz_src,$*) $(FUZZ_BUILD)/libbloomkit.a $(LDLIBS)

$(BUILD)/bench/gen_urls: bench/gen_urls.c bench/urlgen.h
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -o $@ $<

# The benchmarks' peers, each used when its Debian package is installed:
# libbloom-dev (filter operations), libsodium-dev (SipHash).
HAVE_LIBBLOOM := $(shell echo '\#include <bloom.h>' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
HAVE_SODIUM := $(shell echo '\#include <sodium.h>' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
BENCH_PEERS := $(if $(HAVE_LIBBLOOM),-DHAVE_LIBBLOOM) $(if $(HAVE_SODIUM),-DHAVE_SODIUM)
BENCH_LIBS := $(if $(HAVE_LIBBLOOM),-lbloom) $(if $(HAVE_SODIUM),-lsodium)

$(BUILD)/bench/bench_filter: bench/bench_filter.c bench/bench_keys.h bench/urlgen.h bench/textbook_siphash.h $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $(BENCH_PEERS) -o $@ $< $(STATIC_LIB) $(BENCH_LIBS) $(LDLIBS)

$(BUILD)/bench/bench_hash: bench/bench_hash.c bench/bench_keys.h bench/textbook_siphash.h $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $(BENCH_PEERS) -o $@ $< $(STATIC_LIB) $(BENCH_LIBS) $(LDLIBS)

$(BUILD)/bench/bench_window: bench/bench_window.c $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -o $@ $< $(STATIC_LIB) $(LDLIBS)

$(BUILD)/bench/bench_table: bench/bench_table.c $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -Isrc -o $@ $< $(STATIC_LIB) $(LDLIBS)

# The expandable filter's slot table against the rank-and-select one (issue 60).
BENCH_TABLE_KEYS ?= 30000000
bench-table: $(BUILD)/bench/bench_table
	$(BUILD)/bench/bench_table -n $(BENCH_TABLE_KEYS)

# Filter operations against Debian's libbloom, same keys, same run (BENCH_KEYS=...),
# then SipHash against libsodium's. bench-smoke: the same programs on small
# inputs, a few seconds, nothing asserted (run by `make check`, so they never rot).
BENCH_KEYS ?= 10000000
bench: $(BUILD)/bench/bench_filter $(BUILD)/bench/bench_hash $(BUILD)/bench/bench_window
	$(BUILD)/bench/bench_filter -n $(BENCH_KEYS) $(BENCH_ARGS)
	@echo "multi-key SipHash, each path (BLOOMKIT_SIMD):"
	@for p in avx512 avx2 scalar; do \
	  BLOOMKIT_SIMD=$$p $(BUILD)/bench/bench_filter -n $(BENCH_KEYS) --path-row || exit 1; done
	$(BUILD)/bench/bench_hash
	$(BUILD)/bench/bench_window

# (bench_redis and bench_module_dedup reach Redis through hiredis: only with it)
bench-smoke: $(BUILD)/bench/bench_filter $(BUILD)/bench/bench_hash \
  $(if $(filter 1,$(HIREDIS)),$(BUILD)/bench/bench_redis) \
  $(BUILD)/bench/bench_window $(BUILD)/bench/bench_table $(MODULE) $(REF_MODULE) $(CLI_BIN) $(BUILD)/bench/gen_urls python
	@$(BUILD)/bench/bench_filter --smoke >/dev/null && $(BUILD)/bench/bench_filter --smoke --path-row >/dev/null && $(BUILD)/bench/bench_hash --smoke >/dev/null && \
	$(BUILD)/bench/bench_window --smoke >/dev/null && $(BUILD)/bench/bench_table --smoke >/dev/null && \
	GROWN_SIZES=20000 REF_MODULE=$(REF_MODULE) sh bench/bench_module.sh $(MODULE) 20000 16 >/dev/null && \
	PYTHONPATH=$(BUILD)/python $(PYTHON) bench/bench_python.py $(BUILD)/bench/gen_urls 2000 --reps 1 >/dev/null && \
	echo "bench-smoke: bench_filter, bench_hash, bench_window, bench_table, bench_module and bench_python ran"
ifeq ($(HIREDIS),1)
	@$(BUILD)/bench/bench_redis --smoke >/dev/null && \
	sh bench/bench_module_dedup.sh $(MODULE) $(CLI_BIN) $(BUILD)/bench/gen_urls 20000 >/dev/null 2>&1 && \
	echo "bench-smoke: bench_redis and bench_module_dedup ran"
else
	@echo "bench-smoke: bench_redis and bench_module_dedup SKIPPED: built without hiredis"
endif

# ns per operation against n (10^4 .. BENCH_SWEEP_MAX) for every variant and
# libbloom, drawn with gnuplot into docs/performance-sweep.png.
BENCH_SWEEP_MAX ?= 100000000
bench-plot: $(BUILD)/bench/bench_filter
	$(BUILD)/bench/bench_filter --sweep $(BUILD)/bench/sweep.dat --sweep-max $(BENCH_SWEEP_MAX)
	gnuplot -e "data='$(BUILD)/bench/sweep.dat'; out='docs/performance-sweep.png'" bench/plot.gp

# The experiments of examples/experiments, drawn into docs/experiments/
# (PNG and CSV, committed; docs/experiments.md shows them). Needs gnuplot.
EXPERIMENTS := $(basename $(notdir $(wildcard examples/experiments/*.exp)))
plots: $(CLI_BIN)
	@mkdir -p docs/experiments
	@for e in $(EXPERIMENTS); do \
	  echo "experiment $$e"; \
	  $(CLI_BIN) experiment --config-file examples/experiments/$$e.exp \
	    --plot docs/experiments/$$e.png --csv docs/experiments/$$e.csv >/dev/null || exit 1; \
	done

# Shared filters: keys per second into a local redis-server (started and
# stopped by the program), bloomkit's pipelined batches against the seed-style
# GETBIT/SETBIT client, 1 and 8 processes, same run (BENCH_REDIS_KEYS=...).
BENCH_REDIS_KEYS ?= 200000
$(BUILD)/bench/bench_redis: bench/bench_redis.c bench/bench_keys.h tests/redis_server.c $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $(HIREDIS_CFLAGS) -o $@ $< tests/redis_server.c $(STATIC_LIB) $(LDLIBS)

bench-redis: $(BUILD)/bench/bench_redis $(MODULE) $(CLI_BIN) $(BUILD)/bench/gen_urls
	$(BUILD)/bench/bench_redis -n $(BENCH_REDIS_KEYS)
	GROWN_SIZES=2000000 sh bench/bench_module.sh $(MODULE) 1000000 16
	sh bench/bench_module_dedup.sh $(MODULE) $(CLI_BIN) $(BUILD)/bench/gen_urls 1000000

# What not knowing the count costs (issue 48): bloomkit dedup of generated
# URLs piped in, the default filter against one pre-sized for the distinct
# count, at each size; about 20 minutes at 10^9, so not part of any check.
BENCH_SCALE_SIZES ?= 10000000 1000000000
bench-scale: $(CLI_BIN) $(BUILD)/bench/gen_urls
	sh bench/bench_scale.sh $(CLI_BIN) $(BUILD)/bench/gen_urls $(BENCH_SCALE_SIZES)

# The module's server time per call against SET's and the floor's
# (bench/ref_module.c), one redis-server, same run (issue 47's ratios).
bench-module: $(MODULE) $(REF_MODULE)
	REF_MODULE=$(REF_MODULE) sh bench/bench_module.sh $(MODULE) 1000000 64

# The Python binding against Python's set and python3-flor, in one run on
# BENCH_PY_KEYS synthetic URLs, with the defaults and with the fast hash and
# layout; --check: exit 1 when either misses a target.
BENCH_PY_KEYS ?= 400000
bench-python: python $(BUILD)/bench/gen_urls
	PYTHONPATH=$(BUILD)/python $(PYTHON) bench/bench_python.py $(BUILD)/bench/gen_urls $(BENCH_PY_KEYS) --check
	PYTHONPATH=$(BUILD)/python $(PYTHON) bench/bench_python.py $(BUILD)/bench/gen_urls $(BENCH_PY_KEYS) --check \
	  --config "fpr=0.01 hash=xxh3 layout=blocked"

# bloomkit dedup against awk on 10^7 synthetic crawler URLs (BENCH_LINES=...),
# then the default's cost per line at 10^8 lines against its first 10^7
# (BENCH_BIG_LINES=...; 0 skips it: it needs 8 GB of disk for a while).
BENCH_LINES ?= 10000000
BENCH_BIG_LINES ?= 100000000
bench-cli: $(CLI_BIN) $(BUILD)/bench/gen_urls
	bench/bench_cli.sh $(CLI_BIN) $(BUILD)/bench/gen_urls $(BENCH_LINES) $(BENCH_BIG_LINES)

# The main job on the shipped sample: how many lines came in and went out.
demo: $(CLI_BIN)
	@echo "bloomkit dedup --state build/demo.bkf < examples/urls.txt"
	@rm -f build/demo.bkf
	@$(CLI_BIN) dedup --state build/demo.bkf < examples/urls.txt > build/demo.out
	@echo "lines in: $$(wc -l < examples/urls.txt), lines out (first sightings): $$(wc -l < build/demo.out)"
	@echo "again, with the saved state: $$($(CLI_BIN) dedup --state build/demo.bkf < examples/urls.txt | wc -l) lines out"
	@$(CLI_BIN) info build/demo.bkf

# Rewrite the format-compatibility files (only for a deliberate new format
# version: keep the old files and add new ones).
golden: $(TEST_BIN)
	mkdir -p tests/data/golden
	BK_WRITE_GOLDEN=1 CK_RUN_SUITE=golden $(TEST_BIN)

# The man page's FILTER OPTIONS, made from the key table (make check fails
# while they differ).
man: $(TEST_BIN)
	BK_WRITE_MAN=1 CK_RUN_SUITE=cli CK_RUN_CASE=man $(TEST_BIN)

# Only bk_* names may leave the shared libraries, and the core needs nothing
# of Redis: no hiredis among its dependencies.
check-exports: $(SHARED_LIB)
	@sh tools/check-exports.sh $(SHARED_LIB) $(SHARED_SONAME) $(HIREDIS)

# Install into a scratch DESTDIR and build an example against it with pkg-config.
check-install: lib cli
	@MAKE='$(MAKE)' CC='$(CC)' WARN='$(WARN)' sh tools/check-install.sh

# The packager's flags are honoured: a build with LDFLAGS=-Wl,-z,now links
# the library and the command with BIND_NOW, and CPPFLAGS reach every
# compile (a definition that would fail the build if it did not).
check-flags:
	@$(MAKE) --no-print-directory -s BUILD=build/flags LDFLAGS=-Wl,-z,now \
	  CPPFLAGS=-DBK_CHECK_CPPFLAGS lib cli >/dev/null && \
	for b in build/flags/libbloomkit.so build/flags/bloomkit; do \
	  readelf -d $$b | grep -Eq 'BIND_NOW|FLAGS.*NOW' || { echo "$$b: no BIND_NOW"; exit 1; }; \
	done && \
	nm build/flags/obj/src/core/filter.o | grep -q bk_cppflags_seen && \
	echo "flags: LDFLAGS and CPPFLAGS honoured (BIND_NOW in the library and the command)"

# The CLI suite with every bloomkit command it runs under valgrind: any
# memory error or definite/indirect leak makes the command exit 97, which
# fails its test.
VALGRIND_CLI := valgrind -q --error-exitcode=97 --leak-check=full \
                --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect
check-valgrind: $(TEST_BIN)
	BK_CLI_WRAP="$(VALGRIND_CLI)" CK_TIMEOUT_MULTIPLIER=$(SLOW_TIMEOUTS) CK_RUN_SUITE=cli $(TEST_BIN)

SAN_ASAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# Sanitizers and valgrind run the same work several times slower, and the
# README's test command runs two such builds side by side: every test's
# timeout is scaled for them (Check's CK_TIMEOUT_MULTIPLIER), so that a
# busy machine slows the run down without failing it.
SLOW_TIMEOUTS := 4
# Every sanitizer run: scaled timeouts, and the statistical and stress tests
# at the sanitizers' sizes (BK_TEST_SKIP_BIG: tests/testutil.h tu_small).
SAN_TEST_ENV := CK_TIMEOUT_MULTIPLIER=$(SLOW_TIMEOUTS) BK_TEST_SKIP_BIG=1
# LeakSanitizer ignores only Check's own allocations (tests/lsan.supp).
ASAN_ENV := LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(SAN_TEST_ENV)
# The thread suite without Check's fork per test, so TSan sees the whole run.
TSAN_ENV := CK_RUN_SUITE=threads CK_FORK=no $(SAN_TEST_ENV)
# The multi-gigabyte file tests run once, in the plain gcc build (make check);
# under the sanitizers the same code runs at small sizes.
# The Redis module in a real redis-server (Debian's), driven by redis-py and
# node-redis (tests/module); check-module-asan: the same with the module
# built under ASan+UBSan, their runtime preloaded into the server.
MODULE_TEST_ENV = PYTHONPATH=$(BUILD)/python BLOOMKIT_CLI=$(CLI_BIN)
ifeq ($(HIREDIS),1)
check-module: $(MODULE) python $(CLI_BIN)
	$(MODULE_TEST_ENV) BLOOMKIT_MODULE=$(MODULE) $(PYTHON) -m unittest discover -s tests/module -p 'test_*.py'

check-module-asan: python $(CLI_BIN)
	$(MAKE) --no-print-directory BUILD=build/asan OPT=-O1 SAN="$(SAN_ASAN)" build/asan/bloomkit-redis-module.so
	$(MODULE_TEST_ENV) BLOOMKIT_MODULE=build/asan/bloomkit-redis-module.so \
	  BLOOMKIT_MODULE_PRELOAD="$$($(CC) -print-file-name=libasan.so)" \
	  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  $(PYTHON) -m unittest discover -s tests/module -p 'test_*.py'
else
check-module check-module-asan:
	@echo "$@: SKIPPED: built without hiredis (the tests reach the module through bloomkit's Redis library)"
endif

check-asan:
	$(ASAN_ENV) $(MAKE) BUILD=build/asan OPT=-O1 SAN="$(SAN_ASAN) -DBK_DEBUG" \
	  run-tests
	@$(MAKE) --no-print-directory check-python-asan

# The binding's own tests (not the Scrapy crawls) with its extension built
# under ASan+UBSan and loaded into Debian's python, the sanitizer's runtime
# preloaded; leaks are not reported (the interpreter keeps its own memory to
# exit; the binding's are measured by test_native's memory test).
check-python-asan:
	@if [ ! -x "$(PYTHON)" ]; then echo "check-python-asan: SKIPPED: no $(PYTHON)"; exit 0; fi; \
	$(MAKE) --no-print-directory BUILD=build/asan OPT=-O1 SAN="$(SAN_ASAN) -DBK_DEBUG" python && \
	cd bindings/python/tests && PYTHONPATH=$(CURDIR)/build/asan/python \
	  LD_PRELOAD="$$($(CC) -print-file-name=libasan.so)" ASAN_OPTIONS=detect_leaks=0 \
	  $(PYTHON) -m unittest test_native test_safety test_binding test_build

# Every suite and every fuzz replay built by clang (-Werror clean too), its
# command's tests under valgrind (DWARF 4: Debian's valgrind 3.19 cannot read
# clang 14's default DWARF 5), then the suites under clang's
# AddressSanitizer + UBSan and the thread suite under its ThreadSanitizer
# (the multi-gigabyte file tests run in the gcc builds only).
# Three independent parts (separate build trees), so `make -j2` runs them
# side by side.
check-clang: check-clang-tests check-clang-asan check-clang-tsan
# clang builds everything with -Werror and replays the fuzz inputs; the suite
# itself runs under clang in check-clang-asan (the same tests, sanitized), and
# under valgrind once, with gcc (check-valgrind), to keep CI in time.
check-clang-tests:
	$(MAKE) --no-print-directory CC=clang BUILD=build/clang lib cli build/clang/tests/run_tests \
	  run-fuzz-replay python
check-clang-asan:
	$(ASAN_ENV) $(MAKE) --no-print-directory CC=clang BUILD=build/clang-asan OPT=-O1 \
	  SAN="$(SAN_ASAN) -DBK_DEBUG" run-tests
check-clang-tsan:
	$(TSAN_ENV) $(MAKE) --no-print-directory CC=clang BUILD=build/clang-tsan \
	  OPT=-O1 SAN=-fsanitize=thread run-tests

check-tsan:
	$(TSAN_ENV) $(MAKE) BUILD=build/tsan OPT=-O1 SAN=-fsanitize=thread run-tests

install: install-lib install-headers install-pc install-cli install-module

install-module: module
	install -d $(DESTDIR)$(MODULEDIR)
	install -m 755 $(MODULE) $(DESTDIR)$(MODULEDIR)/bloomkit.so

install-cli: cli
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(CLI_BIN) $(DESTDIR)$(BINDIR)/bloomkit
	install -m 644 docs/bloomkit.1 $(DESTDIR)$(MANDIR)/man1/bloomkit.1

install-lib: lib
	install -d $(DESTDIR)$(LIBDIR)
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED_REAL) $(DESTDIR)$(LIBDIR)/
	ln -sf libbloomkit.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SHARED_SONAME)
	ln -sf libbloomkit.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libbloomkit.so

install-headers:
	install -d $(DESTDIR)$(INCLUDEDIR)
	install -m 644 include/bloomkit.h include/bloomkit_tools.h include/bloomkit_redisbloom.h \
	  include/bloomkit_redis.h $(DESTDIR)$(INCLUDEDIR)/

install-pc: bloomkit.pc.in bloomkit-redis.pc.in
	install -d $(DESTDIR)$(PKGCONFIGDIR)
	for pc in bloomkit bloomkit-redis; do \
	  sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	      -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	      -e 's|@HIREDIS_PRIVATE@|$(if $(filter 1,$(HIREDIS)),$(comma) hiredis)|' \
	      $$pc.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/$$pc.pc; \
	done

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libbloomkit.a $(DESTDIR)$(LIBDIR)/libbloomkit.so* \
	      $(DESTDIR)$(INCLUDEDIR)/bloomkit.h $(DESTDIR)$(INCLUDEDIR)/bloomkit_tools.h \
	      $(DESTDIR)$(INCLUDEDIR)/bloomkit_redisbloom.h \
	      $(DESTDIR)$(INCLUDEDIR)/bloomkit_redis.h \
	      $(DESTDIR)$(PKGCONFIGDIR)/bloomkit.pc $(DESTDIR)$(PKGCONFIGDIR)/bloomkit-redis.pc \
	      $(DESTDIR)$(BINDIR)/bloomkit $(DESTDIR)$(MANDIR)/man1/bloomkit.1 \
	      $(DESTDIR)$(MODULEDIR)/bloomkit.so

FORMAT_FILES := $(shell find include src tests examples programs tools bench module bindings/python/src -name '*.[ch]' 2>/dev/null)
format:
	clang-format -i $(FORMAT_FILES)

# clang-tidy's bug checks (.clang-tidy says which, and why not the others) on
# the library, the command and the module.
TIDY_FILES = $(LIB_SRCS) $(CLI_SRCS) $(MODULE_SRCS)
lint:
	sh tools/check-tree.sh
	python3 tools/check-circles.py
	clang-format --dry-run --Werror $(FORMAT_FILES)
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	  --std=c11 -Iinclude -Isrc --suppress=missingIncludeSystem src tests programs tools module
	@out=$$(clang-tidy --quiet $(TIDY_FILES) -- -std=c11 -Iinclude -Isrc -Imodule \
	  -Iprograms -Iprograms/experiment $(HIREDIS_CFLAGS) -D_GNU_SOURCE 2>&1) || \
	  { echo "$$out" | grep -v 'warnings* generated'; exit 1; }; \
	echo "clang-tidy: $(words $(TIDY_FILES)) files clean"

# A release tarball is what git tracks at HEAD (uncommitted changes are not
# in it), under bloomkit-VERSION/. distcheck builds it the way a user of the
# tarball does: outside any git checkout (so without -Werror), from scratch.
DIST := bloomkit-$(VERSION)
# Debian packages (debian/): `make deb` builds them from the committed tree
# into build/deb and runs lintian (errors and warnings fail); `make check-deb`
# (root) also installs them with dpkg, smoke-tests the installed result and
# removes them (tools/deb.sh).
deb:
	@sh tools/deb.sh build

check-deb: deb
	@sh tools/deb.sh check

dist:
	@git rev-parse --is-inside-work-tree >/dev/null 2>&1 || \
	  { echo "make dist: run it in a git checkout (the tarball is what git tracks)"; exit 2; }
	@mkdir -p $(BUILD)
	git archive --format=tar.gz --prefix=$(DIST)/ -o $(BUILD)/$(DIST).tar.gz HEAD
	@echo "dist: $(BUILD)/$(DIST).tar.gz"

distcheck: dist
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  tar -xzf $(BUILD)/$(DIST).tar.gz -C "$$tmp" && \
	  $(MAKE) -C "$$tmp/$(DIST)" check && \
	  echo "distcheck: $(DIST).tar.gz builds and passes make check out of tree"

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(MODULE_OBJS:.o=.d) $(PYEXT_OBJS:.o=.d)
