#!/bin/bash
# mpquery serve --server URL (issue 43 item 1): the views over a ClickHouse
# store (a private clickhouse-server, tests/lib/clickhouse.sh) into which
# window_phases's profile was pushed answer as the same views over the
# file: the stacks, functions, peak, leaks and temporaries tables row for
# row, the flame graph and the trees naming the same functions, the
# overview info's text; the views that read a profile's files (timeline,
# RSS, threads, source, diff) a 400 page that says which views a store
# answers. Usage: DB files or --server, not both, not neither; --server
# takes an HTTP URL (one line each, exit 2).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/clickhouse.sh"
command -v curl >/dev/null || sh "$ROOT/tests/lib/deps.sh" curl >/dev/null 2>&1 || fail "no curl"
source "$ROOT/tests/lib/serve.sh"
export TZ=UTC

"$MPQ" serve >out 2>err; rc=$?
assert_eq "$rc $(cat err)" "2 mpquery: serve: missing DB (or --server URL) (see mpquery serve --help)" "neither files nor --server"
"$MPQ" serve a.db --server http://127.0.0.1:1 >out 2>err; rc=$?
assert_eq "$rc $(cat err)" "2 mpquery: serve: DB files or --server URL, not both (see mpquery serve --help)" "both"
"$MPQ" serve --server 127.0.0.1:8123 >out 2>err; rc=$?
assert_eq "$rc $(cat err)" "2 mpquery: serve: bad value '127.0.0.1:8123' for --server (expected a ClickHouse HTTP URL, e.g. http://127.0.0.1:8123) (see mpquery serve --help)" "--server without http://"

MP_TICK=0 MP_QUIET=1 MP_RUN=w-serve profile w.db $B/tests/window_phases || fail "the program failed"
ch_start
"$MPQ" push -q "$CH_URL" w.db 2>push.err || fail "push failed: $(cat push.err)"

start file w.db
FBASE=$BASE FTOK=$TOK
start store --server "$CH_URL"
SBASE=$BASE STOK=$TOK
# page SIDE PATH [QUERY]: that server's page into page.html, its status printed
page() {
    if [ "$1" = file ]; then BASE=$FBASE TOK=$FTOK; else BASE=$SBASE TOK=$STOK; fi
    get "$2" "${3:-}"
}
# same_rows: rows without the stack id column (the store numbers stacks its
# own way, and ties in the sort follow the ids; so does the call site a
# tree node of several shows: its file:line left out), sorted
same_rows() {
    rows | python3 -c 'import re, sys
lines = [l.rstrip("\n").split("|") for l in sys.stdin]
drop = [i for i, c in enumerate(lines[0]) if c in ("stack", "id")] if lines else []
out = ["|".join(re.sub(r" \S+:\d+$", "", c) for i, c in enumerate(l) if i not in drop) for l in lines]
print("\n".join(out[:1] + sorted(out[1:])))'
}
for v in /top /functions /peak /leaks /temporaries; do
    assert_eq "$(page file $v)" 200 "$v over the file"
    same_rows > file.rows
    assert_eq "$(page store $v)" 200 "$v over the store ($(err))"
    same_rows > store.rows
    [ "$v" = /temporaries ] || [ "$(wc -l < file.rows)" -gt 1 ] || fail "$v over the file: no rows"
    diff file.rows store.rows > rows.diff || fail "$v: the store's rows differ from the file's: $(head -20 rows.diff)"
done
echo "  ok: /top, /functions, /peak, /leaks, /temporaries: the store's rows are the file's"
assert_eq "$(page store /flame)" 200 "/flame over the store ($(err))"
for f in phase_a phase_b phase_c; do grep -q "$f" page.html || fail "/flame over the store does not name $f"; done
for v in "/tree" "/bottomup" "/tree path=main"; do
    assert_eq "$(page file $v)" 200 "$v over the file"
    same_rows > file.rows
    assert_eq "$(page store $v)" 200 "$v over the store ($(err))"
    same_rows > store.rows
    [ "$(wc -l < file.rows)" -gt 1 ] || fail "$v over the file: no rows"
    diff file.rows store.rows > rows.diff || fail "$v: the store's rows differ from the file's: $(head -20 rows.diff)"
done
assert_eq "$(page store /callers function=phase_b)" 200 "/callers over the store ($(err))"
grep -q phase_b page.html || fail "/callers over the store does not name phase_b"
assert_eq "$(page store /)" 200 "the overview over the store ($(err))"
grep -q "window_phases" page.html || fail "the overview over the store does not name the program"
echo "  ok: /flame, /tree, /bottomup, /callers, / over the store (the trees row for row as the file's)"
for v in /timeline /rss /threads /source /diff; do
    assert_eq "$(page store $v)" 400 "$v over the store"
    grep -q "reads a profile's files" page.html || fail "$v over the store: no word why"
done
echo "  ok: the files' views over the store: 400, saying which views a store answers"
kill $SPID
ch_stop
exit 0
