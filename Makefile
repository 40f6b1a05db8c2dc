# mallocprof — one Makefile. `make demo` builds everything and profiles a demo;
# `make test` runs every test and ends with "N passed, M failed".

CC      ?= gcc
CXX     ?= g++
PREFIX  ?= /usr/local
B       := build
WARN    := -Wall -Wextra -Werror
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 $(WARN)
PKGS    := libunwind sqlite3 libdw
, := ,

# Debian packages the build and the tests need (checked before building).
DEB_PKGS := libunwind-dev libsqlite3-dev libdw-dev libelf-dev zlib1g-dev pkg-config sqlite3 binutils g++ libexpat1 libgmp10 \
            libmicrohttpd-dev

# The recorder's layers, each a folder, each calling only the ones below it
# (docs/layout.md; tests/package/layers.sh holds the rule).
LAYERS   := entry process snapshot core capture base
PROF_SRC := $(foreach l,$(LAYERS),$(wildcard prof/$(l)/*.c))
PROF_SRC := $(filter-out prof/entry/api_stub.c prof/base/ns_shim.c,$(PROF_SRC))
PROF_H   := $(wildcard prof/*.h prof/*/*.h)
PROF_INC := -Iprof $(foreach l,$(LAYERS),-Iprof/$(l))
COMMON_SRC := $(wildcard common/*.c)
COMMON_INC := -Icommon
MPQ_SRC  := $(wildcard mpquery/*.c)

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))

.PHONY: all deps demo test bench asan debug install uninstall clean fuzz
all: deps $(B)/libmallocprof.so $(B)/libmallocprof_api.so $(B)/mpquery demos-build tests-build

deps:
	@sh tests/lib/deps.sh $(DEB_PKGS)

# A schema file as a C string literal (#include'd into a const char[]).
SQL_TO_C = @mkdir -p $(B) && sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< > $@.tmp && mv $@.tmp $@
$(B)/schema.h: schema/profile.sql
	$(SQL_TO_C)
# The ClickHouse store's statements (mpquery push).
$(B)/clickhouse_schema.h: schema/clickhouse.sql
	$(SQL_TO_C)
# mpquery serve's CSS and script, built into its pages (serve_views.c).
$(B)/serve_css.h: mpquery/serve.css
	$(SQL_TO_C)
$(B)/serve_js.h: mpquery/serve.js
	$(SQL_TO_C)
SERVE_H := $(B)/serve_css.h $(B)/serve_js.h

# The older format versions' schemas, as dbguard.c checks files against
# them: one string literal each, followed by a comma.
SCHEMA_OLD := $(sort $(wildcard schema/v*.sql))
$(B)/schema_old.h: $(SCHEMA_OLD)
	@mkdir -p $(B)
	for f in $(SCHEMA_OLD); do sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $$f; echo ','; done > $@.tmp
	mv $@.tmp $@
# Every table's columns with the version that added each (common/format.h).
$(B)/format_columns.h: schema/format.awk schema/profile.sql $(SCHEMA_OLD)
	@mkdir -p $(B)
	awk -f schema/format.awk $(SCHEMA_OLD) schema/profile.sql > $@.tmp
	mv $@.tmp $@
SCHEMA_H := $(B)/schema.h $(B)/schema_version.h $(B)/schema_old.h $(B)/format_columns.h $(B)/schema_ref.h

# The current schema's sqlite_master rows as this machine's SQLite makes
# them, for dbguard.c (a process with the same library skips building them).
$(B)/dbguard_gen: tools/dbguard_gen.c common/dbguard.c common/dbguard.h $(B)/schema.h $(B)/schema_old.h | deps
	$(CC) $(CFLAGS) $(COMMON_INC) -I$(B) $(shell pkg-config --cflags sqlite3) $< -o $@ $(shell pkg-config --libs sqlite3)
$(B)/schema_ref.h: $(B)/dbguard_gen
	$< > $@.tmp
	mv $@.tmp $@

# SCHEMA_VERSION, from the schema's own "PRAGMA user_version = N;".
$(B)/schema_version.h: schema/profile.sql
	@mkdir -p $(B)
	sed -n 's/^PRAGMA user_version = \([0-9][0-9]*\);.*/#define SCHEMA_VERSION \1/p' $< > $@.tmp
	@grep -q SCHEMA_VERSION $@.tmp || { echo "schema/profile.sql: no PRAGMA user_version = N;" >&2; exit 1; }
	mv $@.tmp $@

# ---------------------------------------------------------------- common
# The code both programs use (common/): symbol resolution (resolve.c:
# the recorder's, and symbolize's), the checks of untrusted database files
# (dbguard.c) and the MP_* table (optdefs.c: the recorder's settings, and
# mpquery record's options). Compiled once, position-independent with
# hidden symbols, into a static library that libmallocprof.so and mpquery
# both link.
COMMON_OBJ := $(patsubst common/%.c,$(B)/obj/common/%.o,$(COMMON_SRC))
COMMON_DEPS := $(wildcard common/*.h) $(SCHEMA_H)
$(B)/obj/common/%.o: common/%.c $(COMMON_DEPS) | deps
	@mkdir -p $(B)/obj/common
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -fno-omit-frame-pointer $(COMMON_INC) -I$(B) $(PKG_CFLAGS) -c $< -o $@

$(B)/libmpcommon.a: $(COMMON_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

# ---------------------------------------------------------------- recorder
PROF_OBJ := $(patsubst prof/%.c,$(B)/obj/prof/%.o,$(PROF_SRC))
$(B)/obj/prof/%.o: prof/%.c $(PROF_H) $(COMMON_DEPS) | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -ftls-model=initial-exec -fno-omit-frame-pointer $(PROF_INC) $(COMMON_INC) -I$(B) $(PKG_CFLAGS) -c $< -o $@

# The profiler's libraries stay out of the program's namespace (prof/base/ns.c):
# SQLite is linked in from its archive, its symbols local; libdw, libelf
# and libunwind (whose Debian archives are not position-independent) are
# loaded by dlmopen into a namespace of their own through
# libmallocprof_ns.so (prof/base/ns_shim.c), which libmallocprof.so carries
# (build/ns_image.o) and loads from a memfd. The recorder calls them
# through stubs made from the symbols its objects use (tools/ns_stubs.sh).
# ldd lists libc, libm and the loader only.
NS_LIBS  = $(foreach l,dw elf unwind,$(shell $(CC) -print-file-name=lib$(l).so))
SQLITE_A = $(shell $(CC) -print-file-name=libsqlite3.a)
# --wrap: this library's own calls of the malloc family go to its own heap
# (prof/base/ownheap.c), never to the program's allocator.
PROF_WRAP = $(foreach f,malloc free calloc realloc reallocarray posix_memalign memalign aligned_alloc malloc_usable_size strdup strndup,-Wl,--wrap=$(f))
PROF_LINK = $(PROF_WRAP) -Wl,-z,nodelete -Wl,--no-undefined -Wl,--exclude-libs,libsqlite3.a $(SQLITE_A) -ldl -lpthread -lm
$(B)/ns_stubs.S: tools/ns_stubs.sh $(PROF_OBJ) $(B)/libmpcommon.a
	sh tools/ns_stubs.sh $(NS_LIBS) -- $(PROF_OBJ) $(B)/libmpcommon.a > $@.tmp
	mv $@.tmp $@
$(B)/obj/ns_stubs.o: $(B)/ns_stubs.S
	@mkdir -p $(B)/obj
	$(CC) -c $< -o $@

$(B)/obj/ns_image.o: $(B)/libmallocprof_ns.so
	@mkdir -p $(B)/obj
	printf '\t.section .rodata\n\t.globl mp_ns_image, mp_ns_image_end\n\t.hidden mp_ns_image, mp_ns_image_end\nmp_ns_image:\n\t.incbin "%s"\nmp_ns_image_end:\n\t.section .note.GNU-stack,"",@progbits\n' $< | $(CC) -c -x assembler -o $@ -

$(B)/libmallocprof.so: $(PROF_OBJ) $(B)/obj/ns_stubs.o $(B)/obj/ns_image.o $(B)/libmpcommon.a
	$(CC) -shared -o $@ $^ $(PROF_LINK)
	@if ldd $@ | grep -Eq 'lib(sqlite3|dw|elf|unwind|z|lzma|bz2)[.]'; then echo "$@: links a library of the profiler's namespace:" >&2; ldd $@ >&2; rm -f $@; exit 1; fi

$(B)/libmallocprof_ns.so: prof/base/ns_shim.c prof/base/ns.h | deps
	@mkdir -p $(B)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -shared -o $@ $< -Wl,--no-undefined -Wl,--no-as-needed -ldw -lelf -lunwind

$(B)/libmallocprof_api.so: prof/entry/api_stub.c prof/mallocprof.h
	@mkdir -p $(B)
	$(CC) $(CFLAGS) -Iprof -fPIC -shared -o $@ $< -Wl,-soname,libmallocprof_api.so

# ---------------------------------------------------------------- mpquery
# mpquery links the common library (common/: symbolize's resolution,
# the database checks, record's MP_* table), and libmicrohttpd (serve).
MPQ_OBJ  := $(patsubst mpquery/%.c,$(B)/obj/mpquery/%.o,$(MPQ_SRC))
MPQ_PKGS := sqlite3 libdw zlib libmicrohttpd
MPQ_DEPS := $(wildcard mpquery/*.h) $(COMMON_DEPS)
$(B)/obj/mpquery/chschema.o: $(B)/clickhouse_schema.h
$(B)/obj/mpquery/serve_views.o: $(SERVE_H)
$(B)/obj/mpquery/%.o: mpquery/%.c $(MPQ_DEPS) | deps
	@mkdir -p $(B)/obj/mpquery
	$(CC) $(CFLAGS) -I$(B) $(COMMON_INC) $(shell pkg-config --cflags $(MPQ_PKGS)) -c $< -o $@

$(B)/mpquery: $(MPQ_OBJ) $(B)/libmpcommon.a
	$(CC) -o $@ $^ $(shell pkg-config --libs $(MPQ_PKGS)) -lstdc++ -lm

# ---------------------------------------------------------------- demos, tests
DEMO_C   := $(wildcard demos/*.c)
DEMO_CXX := $(wildcard demos/*.cc)
DEMO_BIN := $(patsubst demos/%.c,$(B)/demos/%,$(DEMO_C)) $(patsubst demos/%.cc,$(B)/demos/%,$(DEMO_CXX))
TPROG_C   := $(filter-out tests/progs/lib%,$(wildcard tests/progs/*.c))
TPROG_CXX := $(wildcard tests/progs/*.cc)
TPROG_BIN := $(patsubst tests/progs/%.c,$(B)/tests/%,$(TPROG_C)) $(patsubst tests/progs/%.cc,$(B)/tests/%,$(TPROG_CXX))

# Test and demo programs keep their frames: -O0 and frame pointers, so that
# "function X allocates N times" is a fact of the source, not of the inliner.
# (Programs that test optimized code set their own flags in the rule below.)
PROG_FLAGS := -O0 -g -fno-omit-frame-pointer -fno-inline -Iprof -L$(B) -Wl,-rpath,'$$ORIGIN/..'

demos-build: $(DEMO_BIN)
tests-build: $(TPROG_BIN) $(B)/bench/fleetgen

$(B)/demos/%: demos/%.c $(B)/libmallocprof_api.so
	@mkdir -p $(B)/demos
	$(CC) -std=gnu11 $(WARN) $(PROG_FLAGS) -o $@ $< -lmallocprof_api -lpthread

$(B)/demos/%: demos/%.cc $(B)/libmallocprof_api.so
	@mkdir -p $(B)/demos
	$(CXX) -std=gnu++17 $(WARN) $(PROG_FLAGS) -o $@ $< -lmallocprof_api -lpthread

$(B)/tests/%: tests/progs/%.c $(B)/libmallocprof_api.so
	@mkdir -p $(B)/tests
	$(CC) -std=gnu11 $(WARN) $(PROG_FLAGS) -o $@ $< -lmallocprof_api -lpthread -ldl

$(B)/tests/%: tests/progs/%.cc $(B)/libmallocprof_api.so
	@mkdir -p $(B)/tests
	$(CXX) -std=gnu++17 $(WARN) $(PROG_FLAGS) -o $@ $< -lmallocprof_api -lpthread -ldl

# ---------------------------------------------------------------- commands
demo: all
	@sh demos/run.sh

test: all
	@bash tests/run.sh

bench: all
	@bash tests/bench/run.sh
	@bash tests/bench/scale.sh
	@bash tests/bench/serve.sh
	@bash tests/bench/follow.sh
	@bash tests/bench/faststart.sh
	@bash tests/bench/memory.sh
	@bash tests/bench/filesize.sh
	@bash tests/bench/fleet.sh

# The fleet's profiles for tests/bench/fleet.sh and the rollups' test
# (tests/mpquery/clickhouse_growth.sh): written through the format's own
# definitions (the schema, common/format.h's INSERTs).
$(B)/bench/fleetgen: tests/bench/fleetgen.c common/format.h $(SCHEMA_H) | deps
	@mkdir -p $(B)/bench
	$(CC) $(CFLAGS) $(COMMON_INC) -I$(B) $(shell pkg-config --cflags sqlite3) $< -o $@ $(shell pkg-config --libs sqlite3)

ASAN := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
asan: deps $(SCHEMA_H) $(B)/clickhouse_schema.h $(SERVE_H)
	@mkdir -p $(B)/asan
	$(CC) -std=gnu11 $(WARN) $(ASAN) -I$(B) $(COMMON_INC) $(shell pkg-config --cflags sqlite3) -o $(B)/asan/mpquery \
	    $(MPQ_SRC) $(COMMON_SRC) $(shell pkg-config --libs $(MPQ_PKGS)) -lstdc++ -lm

# The recorder with its invariants checked (MP_ASSERT, prof/base/base.h):
# tests/recorder/debug_build.sh runs the recorder's tests with it.
debug: $(B)/debug/libmallocprof.so
$(B)/debug/libmallocprof.so: $(PROF_SRC) $(COMMON_SRC) $(PROF_H) $(COMMON_DEPS) $(B)/obj/ns_stubs.o $(B)/obj/ns_image.o | deps
	@mkdir -p $(B)/debug
	$(CC) -O1 -g -DMP_DEBUG -std=gnu11 $(WARN) -fPIC -fvisibility=hidden -ftls-model=initial-exec -fno-omit-frame-pointer \
	    $(PROF_INC) $(COMMON_INC) -I$(B) $(PKG_CFLAGS) -shared -o $@ $(PROF_SRC) $(COMMON_SRC) $(B)/obj/ns_stubs.o $(B)/obj/ns_image.o $(PROF_LINK)

# pkg-config files of the API library (mallocprof.h, -lmallocprof_api):
# build/mallocprof.pc for programs built against this build tree
# (PKG_CONFIG_PATH=build: the header in prof/, the library in build/, an
# rpath to it so they run from here), and the installed one, written
# straight into the install with the PREFIX it is installed for (DESTDIR
# not in it), so that neither ever names a directory that may be gone.
VERSION := $(shell sed -n 's/^\#define MPQ_VERSION "\(.*\)"/\1/p' mpquery/mpquery.h)
# $(call pc_file,PREFIX,INCLUDEDIR,LIBDIR,EXTRA_LIBS)
pc_file = printf '%s\n' 'prefix=$(1)' 'includedir=$(2)' 'libdir=$(3)' '' \
    'Name: mallocprof' 'Description: mallocprof in-process API (mallocprof.h; does nothing unless libmallocprof.so is preloaded)' \
    'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lmallocprof_api$(4)'
# (Written at each make, replaced only when it changed: the tree may move.)
.PHONY: $(B)/mallocprof.pc
$(B)/mallocprof.pc:
	@mkdir -p $(B)
	@$(call pc_file,$(CURDIR),$${prefix}/prof,$${prefix}/$(B), -Wl$(,)-rpath$(,)$${libdir}) > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
all: $(B)/mallocprof.pc

# The man page and the bash completion, from mpquery's option tables (the
# same as --help: they cannot drift).
$(B)/mpquery.1: $(B)/mpquery
	$(B)/mpquery --man > $@
$(B)/mpquery.bash: $(B)/mpquery
	$(B)/mpquery --bash-completion > $@

INSTALLED := bin/mpquery lib/libmallocprof.so lib/libmallocprof_api.so include/mallocprof.h \
             lib/pkgconfig/mallocprof.pc share/mallocprof/filters share/man/man1/mpquery.1 \
             share/bash-completion/completions/mpquery
install: all $(B)/mpquery.1 $(B)/mpquery.bash
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/share/mallocprof/filters $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 $(B)/mpquery.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(B)/mpquery.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/mpquery
	install -m 755 $(B)/mpquery $(DESTDIR)$(PREFIX)/bin/
	install -m 755 $(B)/libmallocprof.so $(B)/libmallocprof_api.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 prof/mallocprof.h $(DESTDIR)$(PREFIX)/include/
	$(call pc_file,$(PREFIX),$${prefix}/include,$${prefix}/lib,) > $(DESTDIR)$(PREFIX)/lib/pkgconfig/mallocprof.pc
	chmod 644 $(DESTDIR)$(PREFIX)/lib/pkgconfig/mallocprof.pc
	install -m 644 filters/*.rules filters/README.md $(DESTDIR)$(PREFIX)/share/mallocprof/filters/

uninstall:
	rm -rf $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALLED))
	-rmdir $(DESTDIR)$(PREFIX)/share/mallocprof $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/man $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	    $(DESTDIR)$(PREFIX)/share/bash-completion 2>/dev/null

clean:
	rm -rf $(B)

# The dlopen test's plugin (a shared library with a static function).
$(B)/tests/libplugin.so: tests/progs/libplugin.c
	@mkdir -p $(B)/tests
	$(CC) -std=gnu11 $(WARN) -O0 -g -fPIC -shared -o $@ $<
tests-build: $(B)/tests/libplugin.so

# A regression planted by LD_PRELOAD in real programs (tests/runtimes/check_real.sh).
$(B)/tests/libregress.so: tests/progs/libregress.c
	@mkdir -p $(B)/tests
	$(CC) -std=gnu11 $(WARN) -O1 -g -shared -fPIC -o $@ $<
tests-build: $(B)/tests/libregress.so

# The namespace test's programs (tests/runtimes/isolation.sh): a counting
# interposer, and a program linked with its own SQLite.
$(B)/tests/libcount.so: tests/progs/libcount.c
	@mkdir -p $(B)/tests
	$(CC) -std=gnu11 $(WARN) -O2 -fPIC -shared -o $@ $<
$(B)/tests/own_sqlite: tests/progs/own_sqlite.c $(B)/libmallocprof_api.so
	@mkdir -p $(B)/tests
	$(CC) -std=gnu11 $(WARN) $(PROG_FLAGS) -o $@ $< -lmallocprof_api -lsqlite3 -ldl
tests-build: $(B)/tests/libcount.so $(B)/tests/own_sqlite

# Optimized test program: inlining on purpose (symbols tests).
$(B)/tests/inline_opt: tests/progs/inline_opt.cc
	@mkdir -p $(B)/tests
	$(CXX) -std=gnu++17 $(WARN) -O2 -g -Wl,--build-id -o $@ $<
tests-build: $(B)/tests/inline_opt

# Optimized, without and with frame pointers: the cfi walker's reuse of its
# previous walk (tests/recorder/unwind_reuse.sh).
$(B)/tests/unwind_reuse: tests/progs/unwind_reuse.cc
	@mkdir -p $(B)/tests
	$(CXX) -std=gnu++17 $(WARN) -O2 -g -fomit-frame-pointer -o $@ $<
$(B)/tests/unwind_reuse_fp: tests/progs/unwind_reuse.cc
	@mkdir -p $(B)/tests
	$(CXX) -std=gnu++17 $(WARN) -O2 -g -fno-omit-frame-pointer -o $@ $<
tests-build: $(B)/tests/unwind_reuse $(B)/tests/unwind_reuse_fp

# resolve_symbol against libdwfl's choice (tests/recorder/symbols_choice.sh).
$(B)/tests/symbol_choice: tests/progs/symbol_choice.c $(B)/libmpcommon.a
	@mkdir -p $(B)/tests
	$(CC) -std=gnu11 $(WARN) -O2 -g $(COMMON_INC) -o $@ tests/progs/symbol_choice.c $(B)/libmpcommon.a \
	    $(shell pkg-config --cflags --libs libdw) -lelf -ldl
tests-build: $(B)/tests/symbol_choice

# ---------------------------------------------------------------- fuzzing
# libFuzzer target for the rules parser, the rules and the fold/text/CSV/JSON
# writers (tests/fuzz/fuzz_rules.c). `make fuzz` runs it FUZZ_SECONDS on
# build/fuzz/corpus, seeded by tests/fuzz/seeds.sh (filters/*.rules and
# fixture names); tests/rules/fuzz.sh runs it briefly. Crashes are written
# to build/fuzz/crash-*. Needs clang and its runtime, installed here.
FUZZ_PKGS    := clang libclang-rt-dev
FUZZ_SECONDS ?= 300
FUZZ_MPQ     := mpquery/rules.c mpquery/rules_regex.c mpquery/view.c mpquery/view_python.c mpquery/dtree.c mpquery/output.c mpquery/escape.c mpquery/util.c mpquery/names.c mpquery/units.c
FUZZ_FLAGS   := -std=gnu11 $(WARN) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

$(B)/fuzz/fuzz_rules: tests/fuzz/fuzz_rules.c $(FUZZ_MPQ) $(wildcard mpquery/*.h)
	@sh tests/lib/deps.sh $(FUZZ_PKGS)
	@mkdir -p $(B)/fuzz
	clang $(FUZZ_FLAGS) -Impquery -o $@ $< $(FUZZ_MPQ) -lstdc++ -lm

fuzz: $(B)/fuzz/fuzz_rules
	@sh tests/fuzz/seeds.sh $(B)/fuzz/corpus
	$(B)/fuzz/fuzz_rules -max_total_time=$(FUZZ_SECONDS) -timeout=10 -max_len=8192 \
	    -artifact_prefix=$(B)/fuzz/ $(B)/fuzz/corpus

# ---------------------------------------------------------------- unit tests
# C unit tests of the recorder's data structures: build/unit/NAME from
# tests/unit/NAME.c, compiled with the prof/ files they test and
# tests/unit/stubs.c (mp_opt, mp_log, mp_assert_failed) under ASan, UBSan
# and MP_DEBUG's asserts; tests/unit/unit.sh runs them (`make -s unit` builds
# them, mpquery's below too). The peak's test links the counters' files
# instead (it stubs what they call).
UNIT_MPQ_SRC := $(filter-out tests/unit/mpq_stubs.c,$(wildcard tests/unit/mpq_*.c))
UNIT_SRC  := $(filter-out tests/unit/stubs.c tests/unit/mpq_%,$(wildcard tests/unit/*.c))
UNIT_PROF := prof/core/ptrmap.c prof/core/ptrmap_walk.c prof/core/stacks.c prof/base/arena.c prof/snapshot/node_map.c
UNIT_PEAK := prof/core/peak.c prof/core/slots.c prof/core/threads.c prof/core/readers.c prof/base/arena.c
UNIT_CC    = $(CC) -std=gnu11 $(WARN) $(ASAN) -DMP_DEBUG $(PROF_INC) $(COMMON_INC) $(shell pkg-config --cflags libdw)
.PHONY: unit
unit: $(patsubst tests/unit/%.c,$(B)/unit/%,$(UNIT_SRC) $(UNIT_MPQ_SRC))
$(B)/unit/%: tests/unit/%.c tests/unit/stubs.c tests/unit/unit.h tests/unit/check.h $(UNIT_PROF) $(PROF_H) | deps
	@mkdir -p $(B)/unit
	$(UNIT_CC) -o $@ $< tests/unit/stubs.c $(UNIT_PROF) -lpthread
$(B)/unit/peak: tests/unit/peak.c tests/unit/stubs.c tests/unit/unit.h tests/unit/check.h $(UNIT_PEAK) $(PROF_H) | deps
	@mkdir -p $(B)/unit
	$(UNIT_CC) -o $@ $< tests/unit/stubs.c $(UNIT_PEAK) -lpthread
# The schema check's built-in reference (tests/unit/dbguard_ref.c includes dbguard.c).
$(B)/unit/dbguard_ref: tests/unit/dbguard_ref.c tests/unit/check.h common/dbguard.c common/dbguard.h $(SCHEMA_H) | deps
	@mkdir -p $(B)/unit
	$(UNIT_CC) -I$(B) -Itests/unit -o $@ $< $(shell pkg-config --libs sqlite3)
# mpquery's unit tests (tests/unit/mpq_NAME.c: its id map, string table,
# top-N selection, units) link the two files they test, util.c and units.c,
# and tests/unit/mpq_stubs.c in place of output.c.
UNIT_MPQ := mpquery/util.c mpquery/units.c
$(B)/unit/mpq_%: tests/unit/mpq_%.c tests/unit/mpq_stubs.c tests/unit/check.h $(UNIT_MPQ) $(wildcard mpquery/*.h) | deps
	@mkdir -p $(B)/unit
	$(CC) -std=gnu11 $(WARN) $(ASAN) -Impquery -Itests/unit $(COMMON_INC) -o $@ $< tests/unit/mpq_stubs.c $(UNIT_MPQ) -lstdc++
# (mpq_target_fs.c includes the file it tests, to make openat2 fail)
$(B)/unit/mpq_target_fs: mpquery/target_fs.c
# (mpq_seccomp.c includes the two files of the seccomp check)
$(B)/unit/mpq_seccomp: mpquery/seccomp_check.c mpquery/seccomp_calls.c
# (mpq_elf_dynsym.c includes the reader it tests)
$(B)/unit/mpq_elf_dynsym: mpquery/elf_dynsym.c
