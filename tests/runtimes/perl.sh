#!/bin/bash
# Perl runtime (Debian's perl, ithreads): hashes, sort, regexes, 2 threads
# and the repeat operator (tests/progs/runtimes/perl_work.pl): output and
# exit status as native, the repeat's buffers counted exactly, one info line.
source "$(dirname "$0")/../lib/runtime.sh"
need perl perl /usr/bin/perl
P=$PROGS/perl_work.pl
native_and_profiled 1 /usr/bin/perl "$P"
assert_eq "$(cat profiled.rc)" 9 "exit status 9"
has_allocations a.db 10000
# 300 strings of 100000 + i characters, i = 1..300: pp_repeat grows its
# target with sv_grow (a realloc per string) to the length + NUL + the
# copy-on-write byte, rounded up to 8: sum = 30046800 bytes
assert_eq "$(q a.db "SELECT ncalls, memtot, nfree, memlive FROM stack_totals
                     WHERE path LIKE '%;perl_run;Perl_runops_standard;Perl_pp_repeat;Perl_sv_grow;Perl_safesysrealloc'")" \
    "300|30046800|300|0" "make_strings: 300 buffers grown by Perl_pp_repeat -> Perl_sv_grow"
assert_eq "$(q a.db "SELECT ncalls, memtot FROM stack_totals
                     WHERE path LIKE '%;perl_run;Perl_runops_standard;Perl_pp_repeat;%;Perl_sv_grow;Perl_safesysmalloc'")" \
    "300|3000" "the repeated string \"x\" copied 300 times (10 bytes)"
assert_eq "$(q a.db "SELECT count(*) FROM thread")" 3 "3 threads (main + 2)"
