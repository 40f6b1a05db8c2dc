#!/bin/bash
# mpquery record of the dynamic loader run as a command (issue 41, item
# 17): `record /lib64/ld-linux-x86-64.so.2 ./prog` was refused as
# "statically linked" (ld.so has no program interpreter of its own), yet
# the loader run directly loads prog and LD_PRELOAD with it. record runs
# it, profiled, as the loader runs it: the interpreter check_prog names
# (a symbolic link on Debian), its real path, a link of our own and one
# found in PATH. Each profile has check_prog's known counts
# (tests/progs/check_prog.c: 3110 calls, work_a 1000, work_b 2000, hold_c
# 100, keep_d 10, 640 bytes live at exit), as the program preloaded
# without the loader's help has them; the exit status and output pass
# through (alloc_functions: exit 7, "alloc_functions done"). Static and
# static-pie programs (no interpreter, not a loader) are still refused.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
P=$B/tests/check_prog
interp=$(readelf -lW "$P" | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
[ -n "$interp" ] && [ -x "$interp" ] || fail "check_prog names no interpreter: [$interp]"
real=$(readlink -f "$interp")
echo "# interpreter $interp, the file $real"
ln -s "$real" ./myld
mkdir bin && ln -s "$real" bin/ldso

# the counts under plain LD_PRELOAD, the second source
MP_QUIET=1 profile plain.db "$P" || fail "check_prog failed"
counts() {      # DB: calls, live bytes at exit, and the calls of each function, by SQL
    echo "$(q "$1" "SELECT SUM(ncalls), SUM(memlive) FROM last_sample")" \
         "$(q "$1" "SELECT group_concat(f || ':' || n, ' ') FROM (SELECT fr.function f, SUM(s.ncalls) n
                   FROM last_sample s JOIN stack_frames fr ON fr.stack = s.stack AND fr.depth = 0
                   GROUP BY f ORDER BY f)")"
}
assert_eq "$(counts plain.db)" "3110|640 hold_c:100 keep_d:10 work_a:1000 work_b:2000" "check_prog preloaded: its known counts"

n=0
for ld in "$interp" "$real" ./myld ldso; do
    n=$((n + 1))
    PATH=$T/bin:$PATH "$MPQ" record -q -o ld$n.db "$ld" "$P" >out$n.txt 2>err$n.txt; rc=$?
    assert_eq "$rc:$(cat err$n.txt)" "0:" "record $ld check_prog: exit 0, no message"
    assert_eq "$(counts ld$n.db)" "$(counts plain.db)" "... check_prog's calls and bytes, as preloaded"
    assert_eq "$(q ld$n.db "SELECT cmdline FROM process")" "$ld $P" "... the process the loader ran"
done
assert_eq "$("$MPQ" fold ld1.db)" "$("$MPQ" fold plain.db)" "mpquery fold: the same stacks and bytes as preloaded"
assert_match "$("$MPQ" fold ld1.db)" "^main;hold_c 409600" "... named from the program's file (not the loader's)"

# exit status and output as the program's, with the loader or without
"$B/tests/alloc_functions" >plain.out; plain_rc=$?
"$MPQ" record -q -o af.db "$interp" "$B/tests/alloc_functions" >rec.out; rc=$?
assert_eq "$rc:$(cat rec.out)" "$plain_rc:$(cat plain.out)" "alloc_functions through the loader: its exit status and output"
assert_eq "$plain_rc" 7 "... (7)"
assert_eq "$(q af.db "SELECT SUM(ncalls), SUM(memlive) FROM last_sample")" "1162|7000" \
  "... its known totals (tests/progs/alloc_functions.c: 1162 calls, 7000 bytes live)"

# programs without an interpreter that are not the loader: still refused
printf 'int main(void) { return 3; }\n' > st.c
if gcc -static -o static_prog st.c 2>/dev/null; then
    expect_fail 2 '^mpquery: ./static_prog: statically linked, LD_PRELOAD cannot profile it$' "$MPQ" record ./static_prog
else
    echo "# no static libc: the static-binary refusal is not tested"
fi
if gcc -static-pie -o spie st.c 2>/dev/null; then
    readelf -lW spie | grep -q ' DYNAMIC ' || fail "the static-pie program has no PT_DYNAMIC"
    expect_fail 2 '^mpquery: ./spie: statically linked, LD_PRELOAD cannot profile it$' "$MPQ" record ./spie
else
    echo "# no static-pie libc: the static-pie refusal is not tested"
fi
echo PASS
