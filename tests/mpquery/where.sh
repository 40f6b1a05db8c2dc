#!/bin/bash
# One-line stack labels (top's and leaks' 'where', where.c) and --callers:
# the leaf, the program's first own frame (main executable or a module
# outside /lib, /usr/lib...), callers while they fit the terminal (80 and
# 200 columns, through a pseudo-terminal) or --depth off one; a run of
# nameless frames of one module as [module ×N]; `hide` frames left out;
# rows of different paths never equal. Fixture: five stacks in the main
# executable /usr/bin/app, system libraries (libLLVM without symbols,
# GLib, libfoo) and a user library under /opt.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

L='{/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1}'
G='{/usr/lib/x86_64-linux-gnu/libglib-2.0.so.0}'
F='{/usr/lib/libfoo.so.2}'
P='{/opt/app/lib/libplugin.so}'
stacks_db w.db <<S
5000	main	run_app	${L}llvm::PassManager::run	${L}@0x100	${L}@0x200	${L}@0x300	${L}@0x400	${L}@0x1ecedb4
4000	main	handle_request	${G}g_strdup_printf	${G}g_malloc
3000	main	run_app	${F}f_a	${F}c1	${F}c2	${F}c3	${F}c4	${F}leaf_x
2000	main	run_app	${F}f_b	${F}c1	${F}c2	${F}c3	${F}c4	${F}leaf_x
1000	main	${P}plugin_load	${F}foo_parse_configuration_file	${F}foo_strdup
S
# on a terminal of COLS columns: tty COLS ARGS...
tty() {
    local cols=$1; shift
    COLUMNS=$cols PAGER=cat script -qec "$(printf '%q ' "$MPQ" "$@")" /dev/null | tr -d '\r'
}

assert_eq "$(tty 80 top w.db)" \
"ncalls    memtot      %  stack  where
     5  14.6 KiB  100.0         (total: 5 stacks in 5 rows)
     1  4.88 KiB   33.3  8      libLLVM-14.so.1+0x1ecedb4 < … < run_app < …
     1  3.91 KiB   26.7  11     g_strdup_printf < handle_request < main
     1  2.93 KiB   20.0  17     leaf_x < c4 < c3 < c2 < c1 < f_a < run_app < …
     1  1.95 KiB   13.3  23     leaf_x < c4 < c3 < c2 < c1 < f_b < run_app < …
     1    1000 B    6.7  26     foo_strdup < … < plugin_load < …" \
  "80 columns: the own frame (run_app, plugin_load under /opt) kept, g_malloc hidden, f_a and f_b tell the rows apart"
assert_eq "$(tty 200 top w.db)" \
"ncalls    memtot      %  stack  where
     5  14.6 KiB  100.0         (total: 5 stacks in 5 rows)
     1  4.88 KiB   33.3  8      libLLVM-14.so.1+0x1ecedb4 < [libLLVM-14.so.1 ×4] < llvm::PassManager::run < run_app < main
     1  3.91 KiB   26.7  11     g_strdup_printf < handle_request < main
     1  2.93 KiB   20.0  17     leaf_x < c4 < c3 < c2 < c1 < f_a < run_app < main
     1  1.95 KiB   13.3  23     leaf_x < c4 < c3 < c2 < c1 < f_b < run_app < main
     1    1000 B    6.7  26     foo_strdup < foo_parse_configuration_file < plugin_load < main" \
  "200 columns: whole paths, the nameless run of libLLVM as [libLLVM-14.so.1 ×4]"
assert_eq "$(tty 61 top w.db -n 1 | tail -1)" \
  "     1  4.88 KiB   33.3  8      libLLVM-14.so.1+0x1ecedb4 < …" "61 columns: no room for a caller"
assert_eq "$("$MPQ" top w.db | sed 1,2d | sed 's/.*  //')" \
"libLLVM-14.so.1+0x1ecedb4 < [libLLVM-14.so.1 ×4] < llvm::PassManager::run < run_app < main
g_strdup_printf < handle_request < main
leaf_x < c4 < c3 < … < f_a < run_app < …
leaf_x < c4 < c3 < … < f_b < run_app < …
foo_strdup < foo_parse_configuration_file < plugin_load < main" \
  "not a terminal: at most --depth 5 frames (gaps do not count), the own frame, the difference"
assert_eq "$(tty 200 top w.db --depth 2 | sed 1,2d | sed 's/.*  //')" \
"libLLVM-14.so.1+0x1ecedb4 < … < run_app < …
g_strdup_printf < handle_request < …
leaf_x < … < f_a < …
leaf_x < … < f_b < …
foo_strdup < … < plugin_load < …" \
  "--depth given on a terminal: at most 2 frames (the difference before the own frame), beyond for differences"
assert_eq "$("$MPQ" top w.db --format csv | cut -d, -f10 | sed -n 2,3p)" \
"libLLVM-14.so.1+0x1ecedb4 < libLLVM-14.so.1+0x400 < libLLVM-14.so.1+0x300 < libLLVM-14.so.1+0x200 < libLLVM-14.so.1+0x100 < llvm::PassManager::run < run_app < main
g_malloc < g_strdup_printf < handle_request < main" "csv: the whole path, nothing hidden or collapsed"
assert_eq "$("$MPQ" top w.db --no-default-rules -n 2 | tail -1 | sed 's/.*  //')" \
  "g_malloc < g_strdup_printf < handle_request < main" "without default.rules nothing is hidden"

# hide: a rules verb of one-line labels only
printf 'hide ^(c[0-9]|leaf_x)$\n' > h.rules
assert_eq "$("$MPQ" top w.db --rules h.rules | sed -n '5,6s/.*  //p')" \
"f_a < run_app < main
f_b < run_app < main" "hide: frames left out of the label, the leaf too"
assert_eq "$("$MPQ" fold w.db --rules h.rules | grep f_a)" \
  "main;run_app;f_a;c1;c2;c3;c4;leaf_x 3000" "hide: fold keeps the frames"
printf 'hide ^.*$\n' > all.rules
assert_eq "$("$MPQ" top w.db --rules all.rules -n 1 | tail -1 | sed 's/.*  //')" "libLLVM-14.so.1+0x1ecedb4" \
  "every frame hidden: the leaf alone"
printf 'hide\n' > bad1.rules
expect_fail 2 "^mpquery: bad1.rules:1: missing regex after 'hide'$" "$MPQ" top w.db --rules bad1.rules
printf '# x\nhide (\n' > bad2.rules
expect_fail 2 "^mpquery: bad2.rules:2: bad regex \(.*\): '\('$" "$MPQ" top w.db --rules bad2.rules
printf 'hidden x\n' > bad3.rules
expect_fail 2 "^mpquery: bad3.rules:1: unknown rule \(expected replace, drop, prune, root, hide or collapse-templates\): 'hidden'$" \
  "$MPQ" top w.db --rules bad3.rules
printf 'hide ^leaf_x$\n' > hide.supp
assert_eq "$("$MPQ" leaks w.db --suppressions hide.supp | tail -1)" \
  "5 leaked blocks (14.6 KiB) in 5 stacks" \
  "hide in a suppressions file marks no leak"

# leaks: the same labels
assert_eq "$(tty 80 leaks w.db)" \
"blocks     bytes  stack  where
     1  4.88 KiB  8      libLLVM-14.so.1+0x1ecedb4 < … < run_app < …
     1  3.91 KiB  11     g_strdup_printf < handle_request < main
     1  2.93 KiB  17     leaf_x < c4 < c3 < c2 < c1 < f_a < run_app < main
     1  1.95 KiB  23     leaf_x < c4 < c3 < c2 < c1 < f_b < run_app < main
     1    1000 B  26     foo_strdup < … < plugin_load < …
5 leaked blocks (14.6 KiB) in 5 stacks" \
  "leaks at 80 columns: the summary in two lines"
assert_eq "$(tty 200 leaks w.db -n 1 --bytes)" \
"blocks  bytes  stack  where
     1   5000  8      libLLVM-14.so.1+0x1ecedb4 < [libLLVM-14.so.1 ×4] < llvm::PassManager::run < run_app < main
5 leaked blocks (15000 bytes) in 5 stacks" \
  "leaks at 200 columns, --bytes"

# --callers: the whole stack under each row, file:line where known
fixture basic >/dev/null
assert_eq "$(tty 80 top basic.db --callers -n 2)" \
"ncalls    memtot      %  stack  where
    42  8.14 KiB  100.0         (total: 6 stacks in 6 rows)
     6  4.98 KiB   61.2  8      parse < main
    parse (parse.cc:30)
    main (main.cc:10)
    20  1.95 KiB   24.0  11     std::vector<…>::push_back < main
    std::vector<…>::push_back (main.cc:20)
    main (main.cc:10)" "top --callers at 80 columns"
assert_eq "$(tty 200 leaks w.db --callers -n 2)" \
"blocks     bytes  stack  where
     1  4.88 KiB  8      libLLVM-14.so.1+0x1ecedb4 < [libLLVM-14.so.1 ×4] < llvm::PassManager::run < run_app < main
    libLLVM-14.so.1+0x1ecedb4
    libLLVM-14.so.1+0x400
    libLLVM-14.so.1+0x300
    libLLVM-14.so.1+0x200
    libLLVM-14.so.1+0x100
    llvm::PassManager::run [libLLVM-14.so.1]
    run_app [app]
    main [app]
     1  3.91 KiB  11     g_strdup_printf < handle_request < main
    g_malloc [libglib-2.0.so.0]
    g_strdup_printf [libglib-2.0.so.0]
    handle_request [app]
    main [app]
5 leaked blocks (14.6 KiB) in 5 stacks" \
  "leaks --callers at 200 columns: hidden and collapsed frames all there, a named frame's module"
assert_eq "$(tty 30 leaks w.db --callers -n 1 | sed -n 8p)" "    llvm::PassManager::run [l…" \
  "--callers: frames cut at the terminal's width"
assert_eq "$("$MPQ" top basic.db --callers -n 1 --per-thread | sed -n 3,5p)" \
"main (tid 100)         5  4.88 KiB   80.2  8      parse < main
    parse (parse.cc:30)
    main (main.cc:10)" "--callers with --per-thread"
expect_fail 2 "^mpquery: top: --callers is for text output \(csv and json have the whole stack in 'where'\) \(see mpquery top --help\)$" \
  "$MPQ" top basic.db --callers --format csv
expect_fail 2 "^mpquery: leaks: --callers is for text output .*$" "$MPQ" leaks basic.db --callers --format json
expect_fail 2 "^mpquery: top: --callers shows stacks, not --functions \(see mpquery top --help\)$" \
  "$MPQ" top basic.db --callers --functions

# rows that differ only deep in a nameless run: the difference shown; a
# label too long for the room writes every gap as … and a nameless frame
# of the module of the one before it as +0xOFFSET
stacks_db w2.db <<S
6000	main	run_app	${L}@0x10	${L}@0x20	${L}@0x30	${L}@0x40	${L}@0x50	${L}@0x1ecedb4
5000	main	run_app	${L}@0x11	${L}@0x20	${L}@0x30	${L}@0x40	${L}@0x50	${L}@0x1ecedb4
S
assert_eq "$(tty 83 top w2.db | sed 1,2d)" \
"     1  5.86 KiB   54.5  8      libLLVM-14.so.1+0x1ecedb4 < … < +0x10 < run_app < …
     1  4.88 KiB   45.5  14     libLLVM-14.so.1+0x1ecedb4 < … < +0x11 < run_app < …" "83 columns: compact, the difference kept"
assert_eq "$(tty 200 top w2.db | sed 1,2d)" \
"     1  5.86 KiB   54.5  8      libLLVM-14.so.1+0x1ecedb4 < [libLLVM-14.so.1 ×4] < libLLVM-14.so.1+0x10 < run_app < main
     1  4.88 KiB   45.5  14     libLLVM-14.so.1+0x1ecedb4 < [libLLVM-14.so.1 ×4] < libLLVM-14.so.1+0x11 < run_app < main" \
  "200 columns: the run split by the difference"
