#!/bin/bash
# One fact, one figure, in every view (issue 40's agreement suite): on a
# python3 profile (json, pymalloc) and a clang++-14 -O2 profile, the same
# fact read from each command that prints it must be the same number.
#   calls, bytes allocated: info's totals (less what has no stack), top's
#     rows summed (csv), fold (folded export) summed, check --max-calls
#     (passes at the figure, fails one below), the report's overview
#     (info's text) and its stacks (top's rows);
#   the process peak: info (json) = check --max-peak's boundary = the
#     report's overview (info's) = timeline's highest maxlive = the database's
#     totals; what the peak snapshot holds: info's snapshot_bytes = top
#     --snapshot peak --by memlive's rows summed;
#   leaked: leaks' total = check --max-leaked's boundary;
#   a stack's own peak: top --by maxlive's row = show's maxlive.
# New capabilities add their line here.
source "$(dirname "$0")/../lib/runtime.sh"
source "$ROOT/tests/lib/fixtures.sh"
need clang++-14 clang-14 /usr/bin/clang++-14

# passes_at F CMD...: the exit codes of `CMD F` and `CMD F-1` ("0 1": F is
# the figure CMD compares with)
passes_at() {
    local f=$1; shift
    "$@" "$f" >/dev/null 2>&1; local a=$?
    "$@" $((f - 1)) >/dev/null 2>&1; local b=$?
    echo "$a $b"
}
sum_csv() { awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { s += $k } END { printf "%.0f\n", s }' "$1"; }

agree() {
    local db=$1 what=$2 j calls bytes nostack_c nostack_b peak held leaked
    j=$("$MPQ" info "$db" --format json) || fail "$what: info failed"
    calls=$(json_get "$j" 'j["totals"]["ncalls"] - j["totals"]["ncalls_nostack"]')
    bytes=$(json_get "$j" 'j["totals"]["memtot"] - j["totals"]["memtot_nostack"]')
    peak=$(json_get "$j" 'j["peak"]')
    held=$(json_get "$j" 'j["processes"][0]["peak"]["snapshot_bytes"]')
    [ "$calls" -gt 1000 ] || fail "$what: only $calls calls"
    # calls and bytes
    "$MPQ" top "$db" -n 0 --by ncalls --format csv >top.csv || fail "$what: top csv failed"
    assert_eq "$(sum_csv top.csv ncalls) $(sum_csv top.csv memtot)" "$calls $bytes" "$what: top's rows add up to info's calls and bytes"
    "$MPQ" top "$db" -n 0 --by ncalls --functions --format csv >fn.csv || fail "$what: top --functions failed"
    assert_eq "$(sum_csv fn.csv self.ncalls) $(sum_csv fn.csv self.memtot)" "$calls $bytes" "$what: top --functions' self rows too"
    "$MPQ" export "$db" --format folded --by ncalls -o f.folded 2>/dev/null || fail "$what: export failed"
    assert_eq "$(awk '{ s += $NF } END { printf "%.0f\n", s }' f.folded)" "$calls" "$what: the folded export's calls"
    "$MPQ" fold "$db" >f.fold || fail "$what: fold failed"
    assert_eq "$(awk '{ s += $NF } END { printf "%.0f\n", s }' f.fold)" "$bytes" "$what: fold's bytes (memtot, its default)"
    assert_eq "$(passes_at "$calls" "$MPQ" check "$db" --max-calls)" "0 1" "$what: check --max-calls passes at $calls, fails one below"
    # the peak
    assert_eq "$(q "$db" "SELECT MAX(maxlive) FROM totals WHERE thread = 0")" "$peak" "$what: info's peak is the database's maxlive"
    assert_eq "$(passes_at "$peak" "$MPQ" check "$db" --max-peak)" "0 1" "$what: check --max-peak passes at info's peak $peak, fails one below"
    "$MPQ" timeline "$db" --format csv >tl.csv || fail "$what: timeline failed"
    assert_eq "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "maxlive") k = i; next } $k > m { m = $k } END { print m + 0 }' tl.csv)" \
        "$peak" "$what: timeline's highest maxlive"
    "$MPQ" top "$db" --snapshot peak --by memlive -n 0 --format csv >pk.csv || fail "$what: top --snapshot peak failed"
    assert_eq "$(sum_csv pk.csv memlive)" "$held" "$what: top --snapshot peak's rows hold what info says the peak snapshot holds"
    [ "$held" -le "$peak" ] || fail "$what: the peak snapshot holds $held, above the peak $peak"
    "$MPQ" report "$db" -o r.html 2>/dev/null || fail "$what: report failed"
    assert_eq "$($PY3 "$ROOT/tests/lib/report_page.py" r.html pre overview)" "$("$MPQ" info "$db")" \
        "$what: the report's overview is info's text (its calls, bytes and peak)"
    assert_eq "$($PY3 "$ROOT/tests/lib/report_page.py" r.html pre overview | sed -n 's/^  ncalls  \([0-9]*\) allocations.*/\1/p')" \
        "$(json_get "$j" 'j["totals"]["ncalls"]')" "$what: the report's overview: info's calls"
    assert_eq "$($PY3 "$ROOT/tests/lib/report_page.py" r.html table top-ncalls | sed -n 1,21p | cut -d'|' -f1-13)" \
        "$(head -n 21 top.csv | $PY3 -c 'import csv, sys; [print("|".join(r[:13])) for r in csv.reader(sys.stdin)]')" \
        "$what: the report's stacks by ncalls: top's first 20 rows (their counters and stack ids)"
    # leaked
    leaked=$("$MPQ" leaks "$db" --bytes | sed -n 's/^[0-9]* leaked blocks* (\([0-9]*\) bytes*) in .*/\1/p')
    [ -n "$leaked" ] || fail "$what: leaks printed no total"
    assert_eq "$(passes_at "$leaked" "$MPQ" check "$db" --max-leaked)" "0 1" "$what: check --max-leaked passes at leaks' $leaked, fails one below"
    # a stack's own peak: top --by maxlive's largest row of one stack, show's
    local id ml
    "$MPQ" top "$db" --by maxlive -n 0 --format csv >ml.csv || fail "$what: top --by maxlive failed"
    read -r id ml < <(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                               $c["stacks"] == 1 { print $c["stack"], $c["maxlive"]; exit }' ml.csv)
    [ -n "$id" ] || fail "$what: no row of one stack in top --by maxlive"
    assert_eq "$("$MPQ" show "$db" "$id" --format json | json_get_all 'j["maxlive"]')" "$ml" \
        "$what: show's maxlive of stack $id, top --by maxlive's row"
}
json_get_all() { $PY3 -c 'import json, sys; j = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

# (recorded once: check_real and check_clang's first full runs are these)
recorded_once py.db "$PY3" "$ROOT/tests/bench/json_churn.py" 5000 2
agree py.db python3
recorded_once cl.db /usr/bin/clang++-14 -std=c++17 -O2 -c "$ROOT/tests/progs/runtimes/templates.cc" -o t.o
agree cl.db clang
