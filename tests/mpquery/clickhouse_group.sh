#!/bin/bash
# --group host|exe|pid on --server against a private clickhouse-server
# (tests/lib/clickhouse.sh): the fleet fixture (three processes on two
# hosts, two executables) and the exec fixture (one pid running three
# programs) pushed into it; ClickHouse sums each stack per group key
# (host, pid, or executable and argv[0]) and top, leaks and diff answer as
# over the same files (stack ids aside), with time windows too, and diff
# --server --a-since 2h --a-until T --b-since T --group exe.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
source "$ROOT/tests/lib/clickhouse.sh"
export TZ=UTC
fixture fleet >/dev/null
fixture exec >/dev/null
ch_start
"$MPQ" push -q "$CH_URL" fleet.db exec.db 2>push.err || fail "push failed: $(cat push.err)"

# same WHAT ARGS...: over the store (both runs) = over both files
same() {
    local what=$1; shift
    local s f
    s=$("$MPQ" "$@" --server "$CH_URL" 2>&1; echo "exit $?")
    f=$("$MPQ" "$@" fleet.db exec.db --run all 2>&1; echo "exit $?")
    # the store numbers its stacks anew: csv's stack column, text's after
    # top's % or leaks' bytes
    local ids=(-e 's/,[0-9]+,([0-9]+),([^,]*)$/,ID,\1,\2/' -e 's/^(.*[0-9]\.[0-9] +)[0-9]+(\+[0-9]+)? /\1ID /'
               -e 's/(B +)[0-9]+(\+[0-9]+)? +([^ ]+ <)/\1ID \3/')
    s=$(printf '%s\n' "$s" | sed -E "${ids[@]}")
    f=$(printf '%s\n' "$f" | sed -E "${ids[@]}")
    [ "$s" == "$f" ] || fail "$what: --server differs from the files (< files, > server):
$(diff <(printf '%s\n' "$f") <(printf '%s\n' "$s"))"
    [ "${s##*$'\n'}" == "exit 0" ] || fail "$what: did not succeed: $s"
    echo "  ok: $what ($(printf '%s\n' "$s" | wc -l) lines)"
}
for g in host exe pid; do
    same "top --group $g, csv" top --group $g --format csv -n 0
    same "top --group $g, text" top --group $g --by memlive
done
same "top --group exe --functions" top --group exe --functions --format csv
same "leaks --group exe" leaks --group exe
same "leaks --group pid, csv" leaks --group pid --format csv
same "top --group pid --by maxlive" top --group pid --by maxlive --format csv
assert_eq "$("$MPQ" top --server "$CH_URL" --group exe --format csv | cut -d, -f1,3)" \
"exe,memtot
api,54000
api,2600
cc,2400
python3.11,200
sh,50
db,30" "top --server --group exe: the two cc of pids 31, 32 one group, api's two hosts one"

# windows: over the fleet's run (its own --exe), as the file
t0=5000
samew() {
    local what=$1 files=fleet.db; shift
    [ "$1" = diff ] && files="fleet.db fleet.db"
    assert_eq "$("$MPQ" "$@" --server "$CH_URL" --host web1 2>&1 | sed -E 's/,[0-9]+,([0-9]+),([^,]*)$/,ID,\1,\2/')" \
        "$("$MPQ" "$@" $files 2>&1 | sed -E 's/,[0-9]+,([0-9]+),([^,]*)$/,ID,\1,\2/')" "$what"
}
samew "top --group exe --since +1.5" top --group exe --since +1.5 --format csv
samew "top --group pid +1.5..+2.5" top --group pid --since +1.5 --until +2.5 --format csv
samew "diff --group host +1.5 against the start" diff --group host --a-until +1.5 --b-since +1.5 --format csv
# the fleet again as of now (a run 'fleet-recent'): its snapshots 7000 s,
# 3000 s and 1000 s ago, so that --a-since 2h --a-until 1h --b-since 1h
# splits it after the first
now=$(date +%s)
sed -e "s/'fleet'/'fleet-recent'/" -e "s/5000\.0/$((now - 7100)).0/g" -e "s/5001\.0/$((now - 7000)).0/g" \
    -e "s/5002\.0/$((now - 3000)).0/g" -e "s/5003\.0/$((now - 1000)).0/g" "$ROOT/tests/lib/fixtures/fleet.sql" >recent.sql
{ cat "$ROOT/schema/profile.sql"; echo "$STACK_IN"; cat recent.sql; echo "$STACK_OUT"; } | sqlite3 -batch recent.db || fail "cannot build recent.db"
NO_PROFILE_CHECK="$NO_PROFILE_CHECK recent.db"
"$MPQ" push -q "$CH_URL" recent.db 2>push.err || fail "push failed: $(cat push.err)"
d=$("$MPQ" diff --server "$CH_URL" --where "token = 'fleet-recent'" --a-since 2h --a-until 1h --b-since 1h --group exe \
    --format csv 2>&1)
assert_eq "$d" "exe,a,b,delta,ratio,where
api,2000,52000,50000,26.000,put < main
api,1100,1500,400,1.364,get < main
db,10,20,10,2.000,put < main" "diff --server --a-since 2h --a-until 1h --b-since 1h --group exe: what grew in the last hour, per executable"
assert_eq "$d" "$("$MPQ" diff recent.db recent.db --a-since 2h --a-until 1h --b-since 1h --group exe --format csv 2>&1)" \
    "the same diff over the file"

expect_fail 2 "^mpquery: top: bad value 'foo' for --group \(expected host, exe or pid\)" \
    "$MPQ" top --server "$CH_URL" --group foo
expect_fail 2 "^mpquery: top: --per-thread or --group-threads does not apply to --server" \
    "$MPQ" top --server "$CH_URL" --per-thread
echo PASS
