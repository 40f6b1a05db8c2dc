#!/bin/bash
# Time windows (--since, --until) on --server against a private
# clickhouse-server (tests/lib/clickhouse.sh): window_phases's run and the
# phases fixture pushed into it, each window computed by ClickHouse from
# the snapshots' rows answers as the same window over the files does
# (fold, top csv with every counter, leaks, flame, the line on stderr;
# stack ids aside), +S from
# each run's own start; diff's sides each their window (--a-since 2h
# --a-until T --b-since T: what was allocated since T against before it).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
source "$ROOT/tests/lib/clickhouse.sh"
export TZ=UTC
MP_TICK=0 MP_QUIET=1 MP_RUN=w-phases profile w.db $B/tests/window_phases || fail "the program failed"
fixture phases >/dev/null
t0=$(q w.db "SELECT start_time FROM process")
at() { q w.db "SELECT time - $t0 FROM snapshot WHERE label = '$1' AND reason = 'api'"; }
mid() { python3 -c "import sys; print('+%.6f' % ((float(sys.argv[1]) + float(sys.argv[2])) / 2))" "$(at "$1")" "$(at "$2")"; }
AB=$(mid a b) BC=$(mid b c)
ch_start
"$MPQ" push -q "$CH_URL" w.db phases.db 2>push.err || fail "push failed: $(cat push.err)"

# same WHAT ARGS...: mpquery ARGS over the store's run of the file (its
# --exe) = over the file, stdout, stderr and exit code alike
same() {
    local what=$1 file exe; shift
    case "$*" in *PH*) file=phases.db exe=pk ;; *) file=w.db exe=window_phases ;; esac
    local args=() x
    for x in "$@"; do [ "$x" = PH ] || args+=("$x"); done
    local s f
    # csv rows end in stack,stacks,where, text rows have a stack column
    # before the where: the store numbers its stacks anew
    s=$("$MPQ" "${args[@]}" --server "$CH_URL" --exe "$exe" 2>&1; echo "exit $?")
    f=$("$MPQ" "${args[@]}" "$file" 2>&1; echo "exit $?")
    s=$(printf '%s\n' "$s" | sed -E -e 's/,[0-9]+,([0-9]+),([^,]*)$/,ID,\1,\2/' \
        -e 's/^( *[^ ]+ +[^ ]+( [KMGT]iB| B)? +[^ ]+ +)[0-9]+(\+[0-9]+)? /\1ID /')
    f=$(printf '%s\n' "$f" | sed -E -e 's/,[0-9]+,([0-9]+),([^,]*)$/,ID,\1,\2/' \
        -e 's/^( *[^ ]+ +[^ ]+( [KMGT]iB| B)? +[^ ]+ +)[0-9]+(\+[0-9]+)? /\1ID /')
    [ "$s" == "$f" ] || fail "$what: --server differs from the file (< file, > server):
$(diff <(printf '%s\n' "$f") <(printf '%s\n' "$s"))"
    [ "${s##*$'\n'}" == "exit 0" ] || fail "$what: did not succeed: $s"
    echo "  ok: $what ($(printf '%s\n' "$s" | wc -l) lines)"
}
same "fold start..a" fold --by memtot --until "$AB"
same "fold a..b" fold --by memtot --since "$AB" --until "$BC"
same "fold b..end" fold --by ncalls --since "$BC"
same "top csv a..b, every counter" top --format csv -n 0 --by nfree --since "$AB" --until "$BC"
same "top text a..b: its line on stderr" top --since "$AB" --until "$BC" --by memlive
same "leaks a..b" leaks --since "$AB" --until "$BC" --format csv
same "fixture +1..+2 (the peak at +1 aside)" fold PH --by memtot --since +1 --until +2
same "fixture from +0.5 (a snapshot at exactly since)" top PH --format csv -n 0 --since +0.5
same "fixture epoch seconds" fold PH --by ncalls --since 1000.5 --until 1002
assert_eq "$("$MPQ" fold --server "$CH_URL" --exe window_phases --by memtot --since "$AB" --until "$BC" 2>/dev/null | sed 's/.*;//')" \
    "phase_b 100000" "the store's a..b: phase b's 100000 bytes"
"$MPQ" flame --server "$CH_URL" --exe window_phases --since "$AB" --until "$BC" -o w.svg 2>/dev/null || fail "flame --server over a window failed"
assert_eq "$(grep -o 'phase_[abc]' w.svg | sort -u | paste -sd' ')" "phase_b" "flame --server a..b: phase b alone drawn"
# both runs at once: each window from its own run's start
assert_eq "$("$MPQ" fold --server "$CH_URL" --by ncalls --until +0.6 2>/dev/null | sed 's/.*;//' | sort | paste -sd' ')" \
    "$({ "$MPQ" fold w.db --by ncalls --until +0.6; "$MPQ" fold phases.db --by ncalls --until +0.6; } 2>/dev/null | sed 's/.*;//' | sort | paste -sd' ')" \
    "both runs, --until +0.6: each from its own start, as the two files"
t_ab=$(python3 -c "import sys; print('%.6f' % (float(sys.argv[1]) + float(sys.argv[2][1:])))" "$t0" "$AB")
t_bc=$(python3 -c "import sys; print('%.6f' % (float(sys.argv[1]) + float(sys.argv[2][1:])))" "$t0" "$BC")
d=$("$MPQ" diff --server "$CH_URL" --exe window_phases --a-since 2h --a-until "$t_ab" --b-since "$t_ab" --b-until "$t_bc" --fold 2>&1)
assert_eq "$(printf '%s\n' "$d" | sed -n 's/^.*;\(phase_[abc] \)/\1/p' | sort | paste -sd,)" "phase_a 100000 0,phase_b 0 100000" \
    "diff --server --a-since 2h --a-until T --b-since T: before T phase a, after it phase b"
t_2h=$(( ${t0%.*} - 7200 ))          # 2h as a time: an age is read when each command starts
assert_eq "$("$MPQ" diff --server "$CH_URL" --exe window_phases --a-since "$t_2h" --a-until "$t_ab" --b-since "$t_ab" --b-until "$t_bc" --fold 2>&1)" \
    "$("$MPQ" diff w.db w.db --a-since "$t_2h" --a-until "$t_ab" --b-since "$t_ab" --b-until "$t_bc" --fold 2>&1)" \
    "diff --server's sides = the file's, the lines on stderr too"
expect_fail 2 "^mpquery: ${CH_URL//./\\.}: window \+1\.500\.\.\+1\.900 s: no snapshot in it" \
    "$MPQ" top --server "$CH_URL" --exe pk --since +1.5 --until +1.9
expect_fail 2 "^mpquery: top: bad value '2h ago' for --since" "$MPQ" top --server "$CH_URL" --since '2h ago'
echo PASS
