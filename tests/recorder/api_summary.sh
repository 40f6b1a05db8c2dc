# The in-process API: mp_loaded and mp_summary (exact deltas around known
# allocations), mp_dump (the largest stacks, named, written by the program),
# the C++ mp::scope tag; the do-nothing library's answers without the
# preload. MP_FINAL=0: no snapshot at the end, only those asked for;
# MP_QUIET=1: no info lines.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/api_summary
assert_eq "$($P)" "loaded=0 rc=-1,-1 calls=0 bytes=0 frees=0 live=0 zero=1
dump=-1 bad=-1 peak_ok=1" "without the preload: not loaded, zeros, -1"
profile a.db $P >out 2>err || fail "the program failed under the preload"
assert_eq "$(head -n 1 out)" "loaded=1 rc=0,0 calls=110 bytes=100500 frees=10 live=100000 zero=0" \
    "mp_summary: 110 calls, 100500 bytes, 10 frees, 100000 live between the two"
assert_eq "$(sed -n 2,3p out)" "#1 memlive 100000: ncalls 100, memtot 100000, nfree 0, memlive 100000, maxlive 100000
    make_blocks() (api_summary.cc:14)" "mp_dump by memlive: make_blocks first, with its counters and file:line"
assert_eq "$(grep -A 1 '^#1 nfree' out)" "#1 nfree 10: ncalls 10, memtot 500, nfree 10, memlive 0, maxlive 50
    scoped() (api_summary.cc:20)" "mp_dump by nfree: the scoped loop"
assert_eq "$(grep -A 6 '^#1 nfree' out | tail -n 1)" "    scoped" "mp::scope: the tag is the outermost frame"
assert_eq "$(tail -n 1 out)" "dump=2 bad=-1 peak_ok=1" "mp_dump: 2 stacks with live bytes; an unknown counter is -1"
assert_eq "$(grep -c '^#' out)" 3 "mp_dump: no stack with 0 of the counter"
assert_eq "$(q a.db "SELECT sp.path, s.ncalls FROM last_sample s JOIN stack_path sp USING (stack) WHERE sp.path LIKE 'scoped;%'")" \
    "scoped;_start;__libc_start_main;__libc_start_call_main;main;scoped()|10" "the database has the tag as the root frame"
# MP_FINAL=0: only the snapshot the program asks for; MP_QUIET=1: no info line
MP_FINAL=0 MP_QUIET=1 profile b.db $B/tests/api_region 2>err2 || fail "api_region failed"
assert_eq "$(q b.db "SELECT reason, label FROM snapshot WHERE reason != 'peak'")" "api|region" "MP_FINAL=0: the api snapshot only, no exit snapshot"
assert_eq "$(grep -c 'mallocprof: info' err2)" 0 "MP_QUIET=1: no info lines"
assert_match "$(cat err)" "mallocprof: info: wrote" "without MP_QUIET: the info line"
MP_FINAL=0 profile c.db $B/tests/cheap_modes 2>/dev/null
[ -e c.db ] && fail "MP_FINAL=0 wrote c.db without being asked to"
echo "  ok: MP_FINAL=0 and no snapshot asked for: no database written"
