# Every view of a profile's frames, for the tests of names (issue 40: one
# name a frame in every view, no address for a frame without one):
# tests/mpquery/frame_names.sh, tests/runtimes/python_names.sh.

# (leaks.txt is written too; a test whose frames leak adds it)
VIEW_FILES="top.txt callers.txt functions.txt show.txt show.csv fold.txt flame.svg speedscope.json pprof.txt
massif.txt folded.txt"

# views DB [ARGS...]: DB's views into the current directory, ARGS (a
# --filter) given to each command that lists stacks: top's where column
# (whole paths), --callers, --functions --inclusive, leaks, show and show --format csv
# of top's rows (at most 20), fold, flame, and the exports speedscope,
# pprof (decoded by tests/lib/pprof_locations.py), massif and folded.
views() {
    local db=$1 id; shift
    "$MPQ" top "$db" -n 0 --depth 0 "$@" >top.txt 2>&1 || fail "top $db"
    "$MPQ" top "$db" -n 0 --depth 0 --callers "$@" >callers.txt 2>&1 || fail "top --callers $db"
    "$MPQ" top "$db" -n 0 --functions --inclusive "$@" >functions.txt 2>&1 || fail "top --functions $db"
    "$MPQ" leaks "$db" -n 0 --depth 0 --no-default-suppressions "$@" >leaks.txt 2>&1 || fail "leaks $db"
    : >show.txt; : >show.csv
    for id in $("$MPQ" top "$db" -n 20 --format csv "$@" 2>/dev/null | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "stack") c = i; next } $c != "" { print $c }'); do
        "$MPQ" show "$db" "$id" >>show.txt || fail "show $db $id"
        "$MPQ" show "$db" "$id" --format csv >>show.csv || fail "show --format csv $db $id"
    done
    [ -s show.txt ] || fail "views: no stack of $db to show"
    "$MPQ" fold "$db" "$@" >fold.txt 2>>views.err || fail "fold $db"
    "$MPQ" flame "$db" "$@" -o flame.svg -q 2>>views.err || fail "flame $db"
    "$MPQ" export "$db" "$@" --format speedscope -o speedscope.json -q 2>>views.err || fail "export speedscope $db"
    "$MPQ" export "$db" "$@" --format pprof -o profile.pb.gz -q 2>>views.err || fail "export pprof $db"
    $PY3 "$ROOT/tests/lib/pprof_locations.py" profile.pb.gz >pprof.txt || fail "pprof_locations.py cannot read $db's pprof"
    "$MPQ" export "$db" "$@" --format massif --threshold 0 -o massif.txt -q 2>>views.err || fail "export massif $db"
    "$MPQ" export "$db" "$@" --format folded -o folded.txt -q 2>>views.err || fail "export folded $db"
}

# in_every_view TEXT WHAT: TEXT (fixed) in each view file
in_every_view() {
    local f
    for f in $VIEW_FILES; do
        grep -qF -- "$1" "$f" || fail "$2: '$1' not in $f"
    done
    echo "  ok: $2: '$1' in every view"
}

# in_no_view REGEX WHAT: REGEX (extended) in no view file
in_no_view() {
    local f
    for f in $VIEW_FILES; do
        if grep -qE -- "$1" "$f"; then fail "$2: /$1/ in $f: $(grep -m 2 -E -- "$1" "$f")"; fi
    done
    echo "  ok: $2: /$1/ in no view"
}
