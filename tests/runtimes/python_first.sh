#!/bin/bash
# Python first (issue 43 item 3, mpquery/view_python.c): in a stack with
# Python frames the path starts at its outermost Python frame and the
# interpreter's frames below it are folded into the Python frame they
# serve, in top, --callers, --functions, fold, flame, leaks and the
# exports; --native shows every frame, as before. tests/progs/runtimes/
# py_first.py: <module> < a < b and, in a thread, worker < a < b, where b
# makes 500 lists, dicts and bytearrays. Checked: the paths are exactly the
# Python ones; their figures are the sums of the native stacks they fold;
# the totals are the same in both modes and mpquery info's; show keeps the
# raw stack; a C program's views are the same with and without --native.
# Debian's python3.11 (static: the interpreter is the executable), and the
# pyenv builds present (shared libpython3.X.so).
source "$(dirname "$0")/../lib/runtime.sh"
need python3 python3 /usr/bin/python3
unset PYTHONMALLOC
P=$PROGS/py_first.py
N=500
MAIN='<module>;a;b'
THREAD='Thread._bootstrap;Thread._bootstrap_inner;Thread.run;worker;a;b'

# sum_of FILE REGEX: the sum of the values of FILE's folded lines matching REGEX
sum_of() { grep -E -- "$2" "$1" | awk '{ s += $NF } END { print s + 0 }'; }

# both DB NAME ARGS...: mpquery ARGS on DB into NAME.txt, then with --native into NAME.native.txt
both() {
    local db=$1 name=$2; shift 2
    "$MPQ" "$@" "$db" >"$name.txt" 2>"$name.err" || { cat "$name.err" >&2; fail "mpquery $* $db"; }
    "$MPQ" "$@" "$db" --native >"$name.native.txt" 2>"$name.native.err" || { cat "$name.native.err" >&2; fail "mpquery $* $db --native"; }
}

check() {
    local v=$1 py=$2 db=$T/$1.db by total native mine
    echo "# $v"
    run_native "n$v" "$py" -I "$P" $N
    run_profiled "p$v" "$db" "$py" -I "$P" $N
    same_as_native "n$v" "p$v" "$db" 1
    assert_eq "$(cat "p$v.out")" "$((3 * N)) $((3 * N))" "$v: the script kept its objects"
    assert_eq "$(q "$db" "SELECT SUM(ncalls) || '|' || SUM(memtot) FROM stack_totals
                          WHERE path LIKE '%;<module>;a;b;%' AND memtot >= 100000 * ncalls")" "$N|$((N * 100001))" \
        "$v: b's $N bytearrays under <module>, as recorded"

    both "$db" fold fold
    both "$db" calls fold --by ncalls
    assert_eq "$(grep -E '(^|;)b [0-9]+$' fold.txt | sed 's/ [0-9]*$//' | sort)" "$(printf '%s\n%s' "$MAIN" "$THREAD")" \
        "$v: fold: b's two paths, Python frames only"
    assert_eq "$(grep -c ';b;' fold.txt)" 0 "$v: fold: nothing under b (its allocations are the interpreter's)"
    assert_match "$(grep -E ';a;b;' fold.native.txt | grep -c 'Py_RunMain;.*;<module>;a;b;')" '^[1-9]' \
        "$v: fold --native: the interpreter's frames above <module> and under b"
    for by in fold calls; do
        native=$(sum_of $by.native.txt ";<module>;a;b(;| )"); mine=$(sum_of $by.txt "^$MAIN ")
        assert_eq "$mine" "$native" "$v: $by: $MAIN is the sum of the native stacks it folds"
        native=$(sum_of $by.native.txt ";worker;a;b(;| )"); mine=$(sum_of $by.txt "^$THREAD ")
        assert_eq "$mine" "$native" "$v: $by: the thread's path is the sum of the native stacks it folds"
    done
    # the totals: mpquery info's, in both modes and every view
    total=$("$MPQ" info "$db" --format json | $PY3 -c 'import json, sys; t = json.load(sys.stdin)["totals"]; print(t["ncalls"], t["memtot"])')
    assert_eq "$(sum_of calls.txt .) $(sum_of fold.txt .)" "$total" "$v: fold's totals are mpquery info's"
    assert_eq "$(sum_of calls.native.txt .) $(sum_of fold.native.txt .)" "$total" "$v: fold --native's too"
    # (top lists the rows with a value of --by: zero-byte blocks by ncalls)
    both "$db" top top -n 0 --depth 0 --format csv
    both "$db" topc top -n 0 --depth 0 --format csv --by ncalls
    assert_eq "$(awk -F, 'NR > 1 { n += $1 } END { print n }' topc.txt) $(awk -F, 'NR > 1 { b += $2 } END { print b }' top.txt)" \
        "$total" "$v: top's rows add up to info's totals"
    assert_eq "$(awk -F, 'NR > 1 { n += $1 } END { print n }' topc.native.txt) $(awk -F, 'NR > 1 { b += $2 } END { print b }' top.native.txt)" \
        "$total" "$v: top --native's too"
    assert_match "$(($(wc -l <top.native.txt) - $(wc -l <top.txt)))" '^[1-9]' "$v: top: fewer rows than --native (stacks merged)"
    both "$db" flame flame -o /dev/stdout -q
    for f in flame.txt flame.native.txt; do
        assert_eq "$(sed -n 's/^<g data-o="0" data-v="\([0-9]*\)"><title>all$/\1/p' $f)" \
            "${total#* }" "$v: $f: the flame graph's width is info's memtot"
    done
    assert_eq "$(grep -c '<title>b$' flame.txt)" 2 "$v: flame: b twice (main thread, thread)"
    # Py_RunMain's width: with --native every allocation of the script's
    # code, b's bytearrays included; else only those without a Python frame
    for f in flame flame.native; do
        sed -n 's/^<g data-o="[0-9]*" data-v="\([0-9]*\)"><title>Py_RunMain$/\1/p' $f.txt | awk '{ s += $1 } END { print s + 0 }' >$f.run
    done
    [ "$(cat flame.run)" -lt $((N * 100001)) ] && [ "$(cat flame.native.run)" -ge $((N * 100001)) ] ||
        fail "$v: flame: Py_RunMain $(cat flame.run) bytes wide, --native $(cat flame.native.run)"
    echo "  ok: $v: flame: Py_RunMain $(cat flame.run) bytes wide (the stacks without Python frames), --native $(cat flame.native.run)"

    # top: b's rows, their figures those of fold
    both "$db" b top --filter '^b$' -n 0 --depth 0
    assert_eq "$(sed 1,2d b.txt | grep -v '^ignored' | sed 's/.*[0-9]  //' | sort)" \
        "b < a < <module>
b < a < worker < Thread.run < Thread._bootstrap_inner < Thread._bootstrap" "$v: top: b's two rows, Python frames only"
    assert_match "$(sed -n 3p b.native.txt)" ' < Py_RunMain|Py_RunMain < ' "$v: top --native: the interpreter's frames"
    "$MPQ" top "$db" --filter '^b$' -n 0 --format csv >b.csv || fail "top --format csv"
    assert_eq "$(awk -F, 'NR > 1 && $NF == "b < a < <module>" { print $1, $2 }' b.csv)" \
        "$(sum_of calls.txt "^$MAIN ") $(sum_of fold.txt "^$MAIN ")" "$v: top's row of $MAIN: fold's figures"
    # --functions: b is the leaf of its Python stacks (--native: never)
    both "$db" func top --functions -n 0 --format csv
    mine=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $NF == "b" { print $c["self.memtot"] }' func.txt)
    assert_eq "$mine" "$(sum_of fold.txt ";a;b ")" "$v: top --functions: b's self bytes, those of its two paths"
    assert_eq "$(awk -F, '$NF == "b"' func.native.txt | wc -l)" 0 "$v: top --functions --native: b is never a leaf"
    # --callers: the row's frames, one a line; show keeps the raw stack
    local lb la lm
    lb=$(grep -n 'bytearray(100000)' "$P" | cut -d: -f1)
    la=$(grep -n '    return b()' "$P" | cut -d: -f1)
    lm=$(grep -n '^kept = a()' "$P" | cut -d: -f1)
    "$MPQ" top "$db" --filter '^b( |$)' --exclude '^worker( |$)' -n 1 --callers --lines >callers.txt || fail "top --callers"
    assert_eq "$(sed 1,3d callers.txt | grep -v '^ignored' | sed 's/^ *//' | paste -sd'|')" \
        "b (py_first.py:$lb)|a (py_first.py:$la)|<module> (py_first.py:$lm)" \
        "$v: top --callers --lines: the bytearrays' line in b, a's, <module>'s, nothing else"
    "$MPQ" show "$db" "$(awk -F, '$NF == "b < a < <module>" { print $8 }' b.csv)" >show.txt || fail "show"
    assert_match "$(cat show.txt)" $'\n#[0-9]+ +Py_RunMain ' "$v: show: the raw stack, Py_RunMain in it"
    # leaks and the exports agree with fold
    both "$db" leaks leaks -n 0 --no-default-suppressions
    assert_eq "$(tail -n 1 leaks.txt | cut -d' ' -f1-5)" "$(tail -n 1 leaks.native.txt | cut -d' ' -f1-5)" \
        "$v: leaks: the same blocks and bytes"
    both "$db" folded export --format folded -o /dev/stdout -q
    cmp -s folded.txt fold.txt || fail "$v: export --format folded differs from fold"
    cmp -s folded.native.txt fold.native.txt || fail "$v: export --format folded --native differs from fold --native"
    echo "  ok: $v: export --format folded is fold, in both modes"
}

check python3.11 /usr/bin/python3
for py in /root/.pyenv/versions/3.12.1/bin/python3.12 /root/.pyenv/versions/3.13.0/bin/python3.13; do
    [ -x "$py" ] || { echo "  (no $py here)"; continue; }
    check "${py##*/}" "$py"
done

echo "# a C program: nothing changes"
run_profiled c "$T/c.db" "$B/tests/deep_paths"
for args in "top -n 0 --depth 0" "top -n 0 --callers" "top --functions -n 0" "fold" "flame -o /dev/stdout -q" \
            "leaks -n 0 --no-default-suppressions" "export --format folded -o /dev/stdout -q"; do
    # shellcheck disable=SC2086
    both "$T/c.db" c $args
    cmp -s c.txt c.native.txt || { diff c.txt c.native.txt | head -n 5 >&2; fail "C program: $args differs with --native"; }
    assert_match "$(wc -c <c.txt)" '^[1-9]' "C program: $args: the same with --native"
done
