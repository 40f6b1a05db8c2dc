#!/bin/bash
# mpquery's details: a write error on stdout is one line with its cause and
# exit 1 for every command and for --help/--version; rules lines are bounded
# (--rules /dev/zero ends); --snapshot label: with no label is refused;
# record warns for a script whose interpreter is static, checks the output
# before the program starts (nothing runs when it cannot be written), and
# says after the program ends what was written, or that nothing was, with
# the program's exit status kept.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null

# ---------------------------------------------------------------- (a, c) write errors
# write_error WHY CMD...: CMD with stdout on /dev/full ("full") or closed ("closed")
write_error() {
    local how=$1 rc want; shift
    if [ "$how" = full ]; then "$@" >/dev/full 2>err.txt; rc=$?; want="No space left on device"
    else "$@" >&- 2>err.txt; rc=$?; want="Bad file descriptor"; fi
    [ $rc = 1 ] || fail "$* (stdout $how): exit $rc, expected 1 ($(head -c 300 err.txt))"
    assert_eq "$(cat err.txt)" "mpquery: write error: $want" "$* (stdout $how): exit 1"
}
write_error full "$MPQ" --help
write_error full "$MPQ" --version
write_error closed "$MPQ" --version
write_error closed "$MPQ" --help
for args in "info basic.db" "top basic.db" "top basic.db --functions" "fold basic.db" "diff basic.db basic.db" \
            "show basic.db 1" "record --help" "symbolize --help" "top --help"; do
    write_error full "$MPQ" $args
done
write_error full "$MPQ" sql basic.db "SELECT 1"
write_error closed "$MPQ" top basic.db
# a failure in the middle of the output (more than the 1 MiB stdout buffer)
write_error full "$MPQ" sql basic.db \
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT x FROM c"

# ---------------------------------------------------------------- (b) rules line length
expect_fail 2 '^mpquery: /dev/zero:1: line longer than 65536 bytes$' timeout 10 "$MPQ" fold basic.db --rules /dev/zero
pad() { printf 'drop ^nothing$ #'; head -c $(($1 - 16)) /dev/zero | tr '\0' x; }   # a rule line of $1 bytes
{ echo '# longest line'; pad 65536; echo; } > longest.rules
"$MPQ" fold basic.db --rules longest.rules >/dev/null || fail "a line of 65536 bytes is refused"
echo "  ok: a line of 65536 bytes (newline not counted) is read"
{ echo '# too long'; echo 'drop ^x$'; pad 65537; echo; echo 'drop ^y$'; } > long.rules
expect_fail 2 '^mpquery: long.rules:3: line longer than 65536 bytes$' "$MPQ" fold basic.db --rules long.rules
pad 65537 > nonl.rules
expect_fail 2 '^mpquery: nonl.rules:1: line longer than 65536 bytes$' "$MPQ" top basic.db --rules nonl.rules
# a 200 MB line from a pipe: refused after its first 64 KiB, the pipe's writer stopped
start=$(date +%s)
expect_fail 2 '^mpquery: /dev/fd/[0-9]+:1: line longer than 65536 bytes$' \
    timeout 10 "$MPQ" fold basic.db --rules <(head -c 200000000 /dev/zero | tr '\0' a)
[ $(($(date +%s) - start)) -lt 5 ] || fail "the 200 MB line was read to its end"

# ---------------------------------------------------------------- (d) empty label
for c in top info fold; do
    expect_fail 2 "^mpquery: $c: bad value 'label:' for --snapshot \(expected .*TEXT not empty\)" \
        "$MPQ" $c basic.db --snapshot label:
done
expect_fail 2 "^mpquery: diff: bad value 'label:' for --snapshot" "$MPQ" diff basic.db basic.db --snapshot label:

# ---------------------------------------------------------------- record
# an installed layout, so that record finds the real recorder next to mpquery
mkdir -p inst/bin inst/lib pub
cp "$MPQ" inst/bin/mpquery && cp "$LIB" inst/lib/ || fail "cannot install mpquery and the recorder"
M=$T/inst/bin/mpquery
chmod 755 "$T" && chmod 777 pub    # (f) runs as nobody when root: it must reach these

# (g) what was written, for this run only; the program's exit status kept
# record_ok DB STATUS CMD...: runs `record -o DB CMD`, checks the status and
# that the last line on stderr is record's, matching the run in DB
record_ok() {
    local db=$1 status=$2 rc; shift 2
    "$M" record -o "$db" -- "$@" 2>err.txt; rc=$?
    assert_eq $rc $status "record $*: the program's exit status"
    local run=$(q "$db" "SELECT max(id) FROM run")
    # processes: the pids (images whose pid did not exec before), images, every snapshot, the peaks
    local np=$(q "$db" "SELECT count(*) FROM process p WHERE run = $run AND NOT EXISTS (SELECT 1 FROM process e
                        WHERE e.run = p.run AND e.pid = p.pid AND e.ended = 'exec' AND e.start_time <= p.start_time AND e.id != p.id)")
    local ni=$(q "$db" "SELECT count(*) FROM process WHERE run = $run")
    local ns=$(q "$db" "SELECT count(*) FROM snapshot JOIN process p ON p.id = snapshot.process WHERE p.run = $run")
    local nk=$(q "$db" "SELECT count(*) FROM snapshot JOIN process p ON p.id = snapshot.process WHERE p.run = $run AND reason = 'peak'")
    local pl=es il=s sl=s
    [ "$np" = 1 ] && pl=
    [ "$ni" = 1 ] && il=
    [ "$ns" = 1 ] && sl=
    assert_match "$(tail -n 1 err.txt)" "^mpquery: wrote $db: $np process$pl \\($ni image$il\\), $ns snapshot$sl \\($nk at a peak\\), [0-9]+\\.[0-9]{2} s\$" \
        "record $*: what was written"
    assert_eq "$(wc -l < err.txt)" 1 "record $*: that one line only (the processes' info lines are quiet)"
}
record_ok g.db 0 "$B/tests/cxx_alloc"
assert_match "$(cat err.txt)" "^mpquery: wrote g.db: 1 process \\(1 image\\), 2 snapshots \\(1 at a peak\\), [0-9.]+ s$" "cxx_alloc: 1 process, its exit and peak snapshots"
record_ok g.db 3 sh -c 'exit 3'
assert_match "$(cat err.txt)" "^mpquery: wrote g.db: 1 process \\(1 image\\), 2 snapshots \\(1 at a peak\\), [0-9.]+ s$" "appended as a new run: that run's rows only"
record_ok tree.db 4 sh -c "$B/tests/cxx_alloc; exit 4"
assert_match "$(tail -n 1 err.txt)" ' [2-9] processes \([2-9] images\), [2-9] snapshots \([1-9] at a peak\), [0-9.]+ s$' "a process tree: every process of the run"

# (h) quiet by default: --verbose gives each process's line per snapshot
# back, -q drops the summary too; MP_QUIET in the environment is kept;
# the processes' warnings and errors print whatever the level
"$M" record --verbose -o v.db -- sh -c "$B/tests/cxx_alloc" 2>err.txt
assert_eq "$(grep -c '^mallocprof: info: wrote .*/v.db: ' err.txt)" 2 "--verbose: a line per process and snapshot (sh's, cxx_alloc's)"
assert_match "$(tail -n 1 err.txt)" '^mpquery: wrote v.db: 2 processes' "--verbose: the summary last"
"$M" record -q -o v.db -- "$B/tests/cxx_alloc" >out.txt 2>err.txt; rc=$?
assert_eq "$rc:$(cat err.txt)" "0:" "-q: nothing on stderr"
assert_eq "$(cat out.txt)" "$("$B/tests/cxx_alloc" 2>/dev/null)" "-q: the program's output unchanged"
"$M" record --quiet -o v.db -- sh -c 'exit 5' 2>err.txt; rc=$?
assert_eq "$rc:$(cat err.txt)" "5:" "--quiet is a flag: nothing on stderr, the exit status kept"
MP_QUIET=0 "$M" record -o v.db -- "$B/tests/cxx_alloc" 2>err.txt
assert_eq "$(grep -c '^mallocprof: info: wrote' err.txt):$(grep -c '^mpquery: wrote v.db' err.txt)" "1:1" \
    "MP_QUIET=0 in the environment: the process's line and the summary"
MP_DEPTH=bad "$M" record -o v.db -- "$B/tests/cxx_alloc" 2>err.txt
assert_match "$(head -n 1 err.txt)" "^mallocprof: warning: MP_DEPTH=bad is not valid" "a recorded process's warning reaches the user"
assert_eq "$(wc -l < err.txt)" 2 "the warning and the summary"
MP_DEPTH=bad "$M" record -q -o v.db -- "$B/tests/cxx_alloc" 2>err.txt
assert_match "$(cat err.txt)" "^mallocprof: warning: MP_DEPTH=bad is not valid" "-q: the warning still"
expect_fail 2 '^mpquery: record: --quiet and --verbose exclude each other' "$M" record -q --verbose true
expect_fail 2 "^mpquery: record: unknown option -x" "$M" record -x true
expect_fail 2 '^mpquery: record: option --verbose takes no value' "$M" record --verbose=1 true

# nothing_written DB STATUS CMD...: record ends with the warning and the status
nothing_written() {
    local db=$1 status=$2 rc; shift 2
    "$M" record -o "$db" -- "$@" 2>err.txt; rc=$?
    assert_eq $rc $status "record $*: the program's exit status"
    assert_match "$(tail -n 1 err.txt)" "^mpquery: warning: record: nothing was written to $db \(" "record $*: nothing written, said"
}
nothing_written killed.db 137 sh -c 'kill -KILL $$'
record_ok killed.db 0 true
nothing_written killed.db 137 sh -c 'kill -KILL $$'
assert_eq "$(q killed.db "SELECT count(*) FROM process")" 1 "the file's earlier run is not counted as this one's"

# (e) a script whose interpreter is statically linked
printf '#include <stdio.h>\nint main(int c, char **v) { FILE *f = fopen("%s/pub/interp_ran", "w"); if (f) fclose(f); return c > 1 ? 5 : 6; }\n' "$T" > interp.c
if gcc -static -o static_interp interp.c 2>/dev/null; then
    printf '#!%s/static_interp\necho never\n' "$T" > static.sh
    printf '#!  %s/static_interp -x\n' "$T" > static_arg.sh
    chmod +x static.sh static_arg.sh
    for s in static.sh static_arg.sh; do
        nothing_written "$s.db" 5 "./$s"
        assert_eq "$(head -n 1 err.txt)" "mpquery: warning: ./$s: its interpreter $T/static_interp is statically linked: LD_PRELOAD cannot profile it, nothing of it can be recorded" \
            "#! with a static interpreter: warned"
        assert_eq "$(wc -l < err.txt)" 2 "$s: two lines: the warning, nothing written"
    done
    [ -e pub/interp_ran ] || fail "the script did not run"
    printf '#!/bin/sh\nexit 0\n' > dynamic.sh && chmod +x dynamic.sh
    record_ok dynamic.db 0 ./dynamic.sh
    grep -q "interpreter" err.txt && fail "a dynamic interpreter was warned about: $(cat err.txt)"
    echo "  ok: #!/bin/sh: no warning"
else
    echo "# no static libc: the static interpreter warning is not tested"
fi

# (f) the output checked before the program runs: exit 2, one line, no program
# refused CODE REGEX DB [RUNNER...]: RUNNER record -o DB (no -o when DB is
# empty) of a program that would leave a marker
refused() {
    local code=$1 re=$2 db=$3; shift 3
    local out=(-o "$db")
    [ -n "$db" ] || out=()
    rm -f pub/marker
    expect_fail "$code" "$re" "$@" "$M" record "${out[@]}" -- touch "$T/pub/marker"
    [ ! -e pub/marker ] || fail "record -o $db: the program ran"
}
as_nobody() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
refused 2 '^mpquery: nodir/x.db: cannot write the profile in nodir: No such file or directory$' nodir/x.db
refused 2 '^mpquery: /nonexistent/dir/x.db: cannot write the profile in /nonexistent/dir: No such file or directory$' /nonexistent/dir/x.db
refused 2 '^mpquery: nodir/env.db: cannot write the profile in nodir: No such file or directory$' "" env MP_OUT=nodir/env.db
echo "not a database" > text.db
refused 2 '^mpquery: text.db: not a mallocprof profile \(not an SQLite database\)$' text.db
sqlite3 other.db "CREATE TABLE t(x)"
refused 2 '^mpquery: other.db: not a mallocprof profile \(schema version 0\)$' other.db
fixture basic trig.db >/dev/null && sqlite3 trig.db "CREATE TRIGGER t AFTER INSERT ON process BEGIN DELETE FROM sample; END;"
refused 2 "^mpquery: trig.db: trigger 't' is not part of the mallocprof schema\$" trig.db
refused 2 '^mpquery: pub: is a directory, not a mallocprof profile$' pub
mkdir ro && cp basic.db pub/ro.db && chmod 555 ro && chmod 644 pub/ro.db
refused 2 '^mpquery: ro/x.db: cannot write the profile in ro: Permission denied$' ro/x.db as_nobody
refused 2 '^mpquery: pub/ro.db: cannot write: Permission denied$' pub/ro.db as_nobody
: > empty.db
"$M" record -o empty.db -- touch "$T/pub/marker" 2>/dev/null || fail "record into an empty file failed"
[ -e pub/marker ] || fail "record into an empty file did not run the program"
echo "  ok: an empty file is accepted (the recorder makes it a profile)"
