#!/bin/bash
# Golden tests on databases written by the real recorder, through
# `mpquery record` from an installed layout (bin/, lib/, share/mallocprof/
# filters): the test programs of tests/progs state their exact allocations.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
[ -f "$LIB" ] || fail "the recorder $LIB is not built (make)"
for p in cxx_alloc alloc_functions; do [ -x "$B/tests/$p" ] || fail "$B/tests/$p is not built (make)"; done

mkdir -p inst/bin inst/lib inst/share/mallocprof
cp "$MPQ" inst/bin/mpquery && cp "$LIB" inst/lib/ && cp -r "$ROOT/filters" inst/share/mallocprof/
M=$T/inst/bin/mpquery

"$M" record -o cxx.db -- "$B/tests/cxx_alloc" 2>/dev/null || fail "record cxx_alloc failed"
fold=$("$M" fold cxx.db)
printf '%s\n' "$fold" | grep -q 'basic_string<' && fail "default rules left basic_string<: $fold"
printf '%s\n' "$fold" | grep -Eq '(;|^)(malloc|operator new[^;]*) [0-9]+$' && fail "a malloc/new leaf survived: $fold"
echo "  ok: fold after default rules: no basic_string<, no malloc or operator new leaves"
assert_eq "$(printf '%s\n' "$fold" | awk '{s += $NF} END {print s}')" "$(q cxx.db 'SELECT memtot FROM process_totals')" \
  "fold values sum to the process total memtot"

fn=$("$M" top cxx.db --functions --inclusive -n 0 --format csv)
for want in "make_objects()|500|12000|500|0" "make_arrays()|100|20000|100|0" "make_strings()|300|12300|300|0" \
            "grow_vector()|11|8188|11|0" "keep_strings()|20|2020|20|0"; do
    IFS='|' read -r f n m nf ml <<<"$want"
    got=$(printf '%s\n' "$fn" | awk -F, -v f="$f" '$15 == f {print $8 "|" $9 "|" $10 "|" $12}')
    assert_eq "$got" "$n|$m|$nf|$ml" "cxx_alloc: $f inclusive ncalls|memtot|nfree|memlive"
done

# show: the make_arrays() stack as a backtrace with file:line
id=$("$M" top cxx.db --format csv | awk -F, '$10 ~ /^make_arrays\(\)/ {print $8}')
[ -n "$id" ] || fail "no make_arrays() stack in top"
bt=$("$M" show cxx.db "$id" --bytes --signatures)
assert_match "$bt" $'^stack '"$id"': ncalls 100 memtot 20000 nfree 100 nlive 0 memlive 0 ' "show header"
assert_match "$bt" '#[0-9]+ +make_arrays\(\)  /.*cxx_alloc\.cc:[0-9]+  \(.*cxx_alloc\+0x[0-9a-f]+\)' "show: make_arrays() with file:line and module+offset"

# the same program twice: diff matches every stack by name, nothing changed
"$M" record -o cxx2.db -- "$B/tests/cxx_alloc" 2>/dev/null || fail "second record failed"
assert_eq "$("$M" diff cxx.db cxx2.db --format csv -n 0 | tail -n +2 | cut -d, -f3 | sort -u)" 0 "diff of two identical runs: every delta 0"
assert_eq "$("$M" diff cxx.db cxx2.db --functions --format csv -n 0 | tail -n +2 | cut -d, -f3 | sort -u)" 0 "... also by function"

# two runs in one database: the latest by default, --run all sums
"$M" record -o cxx.db -- "$B/tests/cxx_alloc" 2>/dev/null || fail "third record failed"
json=$("$M" info cxx.db --format json)
assert_eq "$(json_get "$json" 'len(j["runs"]), j["run"] == j["runs"][-1]["id"], len(j["processes"])')" "(2, True, 1)" "info: two runs, the latest selected"
one=$("$M" fold cxx.db --filter make_arrays)
all=$("$M" fold cxx.db --filter make_arrays --run all)
assert_eq "$all" "${one% *} $(( ${one##* } * 2 ))" "--run all sums both runs"

# alloc_functions: every malloc-family entry point; exit status 7 comes through
"$M" record -o af.db -- "$B/tests/alloc_functions" 2>/dev/null; assert_eq $? 7 "record: the program's exit status"
fn=$("$M" top af.db --functions -n 0 --format csv)
for want in "do_malloc|1000|100000|1000|0" "do_calloc|50|10000|50|0" "do_realloc|20|21000|20|0" \
            "do_posix_memalign|30|7680|30|0" "do_aligned_alloc|40|5120|40|0" "do_memalign|10|5120|10|0" \
            "do_valloc|5|500|5|0" "do_leak|7|7000|0|7000"; do
    IFS='|' read -r f n m nf ml <<<"$want"
    got=$(printf '%s\n' "$fn" | awk -F, -v f="$f" '$15 == f {print $1 "|" $2 "|" $3 "|" $5}')
    assert_eq "$got" "$n|$m|$nf|$ml" "alloc_functions: $f self ncalls|memtot|nfree|memlive"
done
assert_eq "$("$M" top af.db --functions --by memlive -n 1 --format csv | tail -1 | cut -d, -f5,15)" "7000,do_leak" "--by memlive finds the leak"
json=$("$M" info af.db --format json)
assert_eq "$(json_get "$json" 'j["totals"]["ncalls"], j["totals"]["memtot"], j["totals"]["nfree"], j["totals"]["memlive"]')" \
  "(1162, 156420, 1155, 7000)" "info: exact totals of alloc_functions"
