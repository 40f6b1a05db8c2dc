#!/bin/bash
# Windows over the whole store from the growth rollups (mpquery/chwindow.c,
# schema/clickhouse.sql's mp_growth_minute and mp_growth_second), against a
# private clickhouse-server (tests/lib/clickhouse.sh): six processes of
# three executables, 30 snapshots each 10 s apart at phases that are not
# whole seconds (build/bench/fleetgen), pushed; top (every counter, the
# maxima too), diff and --group exe over windows of whole seconds (inside
# one minute, across minutes, ends at a snapshot's exact time, only
# --since, only --until) answer as over the files. Then mp_sample is
# emptied: the same answers still come (from the rollups), and the
# general queries (--where 1, or an end that is not a whole second) see
# the empty table. push --ttl drops the rollups' old days with the runs.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/clickhouse.sh"
export TZ=UTC
GEN=$B/bench/fleetgen
[ -x "$GEN" ] || fail "build/bench/fleetgen is missing (make)"
mkdir prof
T0=1700000000
"$GEN" prof 6 1 30 $T0 10 40 120 3 2 || fail "fleetgen failed"
files=(prof/*.db)
ch_start
"$MPQ" push -q "$CH_URL" "${files[@]}" 2>push.err || fail "push failed: $(cat push.err)"

ids=(-e 's/,[0-9]+,([0-9]+),([^,]*)$/,ID,\1,\2/' -e 's/^(.*[0-9]\.[0-9] +)[0-9]+(\+[0-9]+)? /\1ID /')
# (sorted: ties between stacks come in the order of their ids, which the
# store numbers anew)
answer() { "$MPQ" "$@" 2>&1 | sed -E "${ids[@]}" | LC_ALL=C sort; echo "exit ${PIPESTATUS[0]}"; }
windows=("--since $((T0 + 12)) --until $((T0 + 47))"       # inside one minute
         "--since $((T0 + 47)) --until $((T0 + 163))"      # across two
         "--since $((T0 + 95)) --until $((T0 + 150))"      # at snapshots' exact times
         "--since $((T0 + 200))" "--until $((T0 + 130))")
# check NAME ARGS...: the store (fast) = the files, for each window
check() {
    local what=$1 w s f; shift
    for w in "${windows[@]}"; do
        s=$(answer "$@" $w --server "$CH_URL")
        f=$(answer "$@" $w "${files[@]}" --run all)
        [ "$s" == "$f" ] || fail "$what $w: the store differs from the files (< files, > store):
$(diff <(printf '%s\n' "$f") <(printf '%s\n' "$s"))"
        [ "${s##*$'\n'}" == "exit 0" ] || fail "$what $w: did not succeed: $s"
        printf '%s\n' "$s" >"fast.$what.${w// /_}"
    done
    echo "  ok: $what over ${#windows[@]} windows ($(printf '%s\n' "$s" | wc -l) lines)"
}
check top-csv top --format csv -n 0
check top-maxlive top --format csv -n 0 --by maxlive
check top-group-exe top --format csv -n 0 --group exe --by memlive
diffw=(diff --a-since $((T0 + 60)) --a-until $((T0 + 180)) --b-since $((T0 + 180)) --format csv -n 0)
s=$(answer "${diffw[@]}" --server "$CH_URL")
f=$(answer "${diffw[@]}" "${files[@]}" -- "${files[@]}")
assert_eq "$s" "$f" "diff --a-since T --a-until U --b-since U: the store as the files"
s=$(answer "${diffw[@]}" --group exe --server "$CH_URL")
f=$(answer "${diffw[@]}" --group exe "${files[@]}" -- "${files[@]}")
assert_eq "$s" "$f" "diff ... --group exe: the store as the files"
printf '%s\n' "$s" >fast.diff

# the rollups answer: mp_sample emptied, the same answers
chc "TRUNCATE TABLE mp_sample"
for w in "${windows[@]}"; do
    assert_eq "$(answer top --format csv -n 0 $w --server "$CH_URL")" "$(cat "fast.top-csv.${w// /_}")" \
        "top $w without mp_sample's rows: from the rollups"
done
assert_eq "$(answer "${diffw[@]}" --group exe --server "$CH_URL")" "$(cat fast.diff)" "diff --group exe from the rollups"
empty="ncalls,memtot,nfree,nlive,memlive,maxlive,ntemp,stack,stacks,where
exit 0"
assert_eq "$(answer top --format csv -n 0 --since $((T0 + 47)) --server "$CH_URL" --where 1)" "$empty" \
    "--where 1 (a selection): the general queries, on the emptied mp_sample"
assert_eq "$(answer top --format csv -n 0 --since $((T0 + 47)).5 --server "$CH_URL")" "$empty" \
    "--since not a whole second: the general queries"

# --ttl drops the rollups' days as it drops the runs' (these are of 2023)
"$MPQ" push -q "$CH_URL" "${files[0]}" --ttl 30d 2>push.err || fail "push --ttl failed: $(cat push.err)"
assert_eq "$(chc "SELECT (SELECT count() FROM mp_run), (SELECT count() FROM mp_growth_run),
                  (SELECT count() FROM mp_growth_seen), (SELECT count() FROM mp_growth_second),
                  (SELECT count() FROM mp_growth_minute)" | tr '\t' ' ')" "0 0 0 0 0" \
    "push --ttl 30d: the runs and their growth dropped"
