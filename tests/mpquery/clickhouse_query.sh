#!/bin/bash
# mpquery top|fold|diff|info --server against a private clickhouse-server
# (tests/lib/clickhouse.sh): the runs of five files pushed into it (two runs of
# alloc_functions in two files, tags_threads and request_loop in one file,
# peak_mix, threads_cross_free) answer every command byte for byte as the
# files do with --run all: functions self and inclusive, per stack (ids
# aside), fold, csv and json, the peak snapshot, filters and rules, info;
# --exe, --where and --host select what the files hold, --since the
# allocations made since a time as in the files (tests/mpquery/
# clickhouse_window.sh: windows inside runs), and diff
# --a-where/--b-where is diff of the files; known values come back exactly;
# runs pushed later (a forked child and MP_TIME=1; 50-70 processes that
# fork and exec) join the answers, pushing again changes nothing; bad
# selections and options are refused (exit 2) and write nothing, an
# unreachable server or one without a store fails in one line.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
source "$ROOT/tests/lib/clickhouse.sh"

# ---------------------------------------------------------------- profiles
t_before=$(date +%s.%N)            # before every run
record_run t-a1 a.db "$B/tests/alloc_functions"
t_mid=$(date +%s.%N)               # after t-a1, before the others
record_run t-a2 b.db "$B/tests/alloc_functions"
record_run t-tags t.db "$B/tests/tags_threads"
record_run t-req t.db "$B/demos/request_loop"
record_run t-peak p.db "$B/tests/peak_mix"
# started with another argv[0] ('crossed'): --exe matches it as info shows it
MP_RUN=t-cross MP_QUIET=1 bash -c 'LD_PRELOAD=$1 MP_OUT=$2 exec -a crossed "$0"' "$B/tests/threads_cross_free" "$LIB" x.db >/dev/null
assert_eq "$(q x.db "SELECT cmdline FROM process")" crossed "x.db: one process, started as 'crossed'"
# pushed later: a parent and its forked child, MP_TIME=1; 50-70 processes
# that fork, exec and posix_spawn
MP_TIME=1 record_run t-steps n.db "$B/tests/timeline_steps"
MP_RUN=t-tree MP_QUIET=1 timeout 60 env LD_PRELOAD=$LIB MP_OUT=e.db "$B/tests/proc_tree" >/dev/null 2>&1 || fail "proc_tree failed"
assert_eq "$(q t.db "SELECT group_concat(token) FROM (SELECT token FROM run ORDER BY id)")" "t-tags,t-req" "t.db holds two runs"
assert_eq "$(q n.db "SELECT count(*) FROM process WHERE settings LIKE '%MP_TIME=1%'")" 2 "n.db: two processes with MP_TIME=1"
FILES="a.db b.db t.db p.db x.db"

# ---------------------------------------------------------------- usage errors before any server
U1=http://127.0.0.1:1/              # nothing listens there
expect_fail 2 '^mpquery: top: --where, --host and --since select runs of --server URL' "$MPQ" top a.db --where 'token = 1'
expect_fail 2 '^mpquery: fold: --where, --host and --since select runs of --server URL' "$MPQ" fold a.db --host vm
expect_fail 2 '^mpquery: top: --server reads the store, not files' "$MPQ" top --server "$U1" a.db
expect_fail 2 '^mpquery: diff: --server reads the store, not files' "$MPQ" diff --server "$U1" --a-where 1 --b-where 1 a.db b.db
expect_fail 2 '^mpquery: top: --pid does not apply to --server' "$MPQ" top --pid 1 --server "$U1"
expect_fail 2 '^mpquery: fold: --run does not apply to --server' "$MPQ" fold --run all --server "$U1"
expect_fail 2 '^mpquery: top: --thread does not apply to --server' "$MPQ" top --thread 1 --server "$U1"
expect_fail 2 '^mpquery: top: --per-thread or --group-threads does not apply to --server' "$MPQ" top --per-thread --server "$U1"
expect_fail 2 '^mpquery: top: --snapshot other than last or peak does not apply to --server' "$MPQ" top --snapshot label:before --server "$U1"
expect_fail 2 '^mpquery: diff: --server needs --a-where, --b-where, --a-since' "$MPQ" diff --server "$U1" --where 1
expect_fail 2 "^mpquery: --where '1; DROP TABLE mp_run': ';' is not allowed" "$MPQ" top --server "$U1" --where '1; DROP TABLE mp_run'
expect_fail 2 "^mpquery: --where '1\) OR \(1': unbalanced parentheses$" "$MPQ" top --server "$U1" --where '1) OR (1'
expect_fail 2 "^mpquery: --where 'token = .x': unclosed quote$" "$MPQ" top --server "$U1" --where "token = 'x"
expect_fail 2 "^mpquery: --where 'token = .x. -- c': '-' is not allowed" "$MPQ" top --server "$U1" --where "token = 'x' -- c"
expect_fail 2 "^mpquery: top: bad value 'yesterday' for --since \\(expected \\+S" "$MPQ" top --server "$U1" --since yesterday
expect_fail 1 '^mpquery: http://127\.0\.0\.1:1/: cannot connect to 127\.0\.0\.1 port 1: Connection refused$' "$MPQ" top --server "$U1"

ch_start
"$MPQ" push -q "$CH_URL" $FILES 2>push.err || fail "push failed: $(cat push.err)"
assert_match "$(cat push.err)" '^mpquery: push: pushed 6 runs \(0 already stored\) from 5 files' "pushed 6 runs from 5 files"

# out ARGS...: what mpquery ARGS writes (stdout and stderr), then "exit N"
out() { "$MPQ" "$@" 2>&1; echo "exit $?"; }
# same WHAT SERVER FILES: the two answers are equal, and a success
same() {
    [ "$2" == "$3" ] || fail "$1: --server differs from the files (< files, > server):
$(diff <(printf '%s\n' "$3") <(printf '%s\n' "$2"))"
    [ "${2##*$'\n'}" == "exit 0" ] || fail "$1: did not succeed: $2"
    [ "$(printf '%s\n' "$2" | wc -l)" -gt 2 ] || fail "$1: (almost) nothing to compare: $2"
    echo "  ok: $1: $(($(printf '%s\n' "$2" | wc -l) - 1)) lines alike"
}
# alike ARGS...: mpquery ARGS --server URL = mpquery ARGS FILES --run all
alike() { same "$*" "$(out "$@" --server "$CH_URL")" "$(out "$@" $FILES --run all)"; }
# per_stack ARGS...: the same for top per stack (csv): its 'stack' column is
# a database id, and rows of equal value go by it: without it, rows sorted
per_stack() {
    local strip='import csv,sys; r=list(csv.reader(sys.stdin)); i=r[0].index("stack")
print("\n".join(sorted(",".join(x[:i] + x[i + 1:]) for x in r)))'
    same "$* (stack ids aside)" "$("$MPQ" "$@" --format csv --server "$CH_URL" | python3 -c "$strip"; echo "exit ${PIPESTATUS[0]}")" \
        "$("$MPQ" "$@" --format csv $FILES --run all | python3 -c "$strip"; echo "exit ${PIPESTATUS[0]}")"
}
cat > mine.rules <<'EOF'
replace ^do_(malloc|calloc)$ => plain_alloc
drop ^do_valloc$
prune ^worker$
root ^\[tag\] request$
EOF
# info --format json without what names files and mpquery's own ids
# (processes and snapshots are numbered in another order); KEY: that key only
info_json() {
    python3 -c 'import json,sys
def strip(o):
    if isinstance(o, dict): return {k: strip(v) for k, v in o.items() if k not in ("file", "files", "id", "process_ids")}
    if isinstance(o, list): return [strip(v) for v in o]
    return o
j = strip(json.load(sys.stdin))
print(json.dumps(j[sys.argv[1]] if len(sys.argv) > 1 else j, indent=1))' "$@"
}

echo "# every command: --server = the files with --run all"
alike top --functions -n 0
alike top --functions --inclusive -n 0
alike top --functions --by memlive
alike top --functions --by nlive --all-counters -n 0
alike fold
alike fold --snapshot last --by memlive
alike fold --format csv
alike fold --by ntemp
alike top --functions --snapshot peak -n 0
alike top --functions --snapshot peak --inclusive --by memlive --format csv -n 0
alike fold --snapshot peak --by memlive
alike top --functions --filter '^do_' -n 0
alike top --functions --exclude '^do_|keep' -n 0
alike fold --filter thread --format csv
alike top --functions --rules mine.rules -n 0
alike fold --rules mine.rules
alike top --functions --rules mine.rules --no-default-rules --by maxlive -n 0
alike top --functions --format json -n 0
alike top --functions --filter do_ --format json
per_stack top -n 0
per_stack top -n 0 --snapshot peak --by memlive
per_stack top -n 0 --rules mine.rules
assert_match "$("$MPQ" top --functions --rules mine.rules -n 0 --server "$CH_URL")" ' plain_alloc$' "(the rules file's replace is applied)"
same "info --format json: totals" "$("$MPQ" info --format json --server "$CH_URL" | info_json totals; echo "exit ${PIPESTATUS[0]}")" \
    "$("$MPQ" info --format json $FILES --run all | info_json totals; echo "exit ${PIPESTATUS[0]}")"
same "info --format json: runs, processes, threads, snapshots, counts (ids and file names aside)" \
    "$("$MPQ" info --format json --server "$CH_URL" | info_json; echo "exit ${PIPESTATUS[0]}")" \
    "$("$MPQ" info --format json $FILES --run all | info_json; echo "exit ${PIPESTATUS[0]}")"

echo "# known values"
assert_eq "$("$MPQ" top --functions --format csv -n 0 --server "$CH_URL" --exe alloc_functions | grep -e ',do_malloc$' -e ',do_leak$')" \
"2000,200000,2000,0,0,200,2000,2000,200000,2000,0,0,200,2000,do_malloc
14,14000,0,14,14000,14000,0,14,14000,0,14,14000,14000,0,do_leak" \
    "two runs of alloc_functions: do_malloc 2 x 1000 calls, 2 x 100000 bytes; do_leak 2 x 7 live, 2 x 7000 live bytes"
assert_eq "$("$MPQ" info --format json --server "$CH_URL" --exe alloc_functions | json_get "$(cat)" '[j["totals"][k] for k in ("ncalls", "memtot", "nfree", "memlive")]')" \
    "[2324, 312840, 2310, 14000]" "their totals: 2 x (1162 calls, 156420 bytes, 1155 frees, 7000 live bytes)"
assert_eq "$("$MPQ" fold --server "$CH_URL" --where "token = 't-peak'" --snapshot peak --by memlive)" \
"main;big_d 1000000
main;keep_a 3000000
main;keep_b 4000000" "peak_mix at its peak: keep_a 3000 x 1000, keep_b 2000 x 2000, big_d 1000000 live"
assert_eq "$("$MPQ" top --functions --format csv --server "$CH_URL" --where "token = 't-cross'" | grep -e ',thread_alloc$' -e ',thread_leak$' | cut -d, -f1-5,15)" \
"4000,160000,4000,0,0,thread_alloc
12,768,0,12,768,thread_leak" "threads_cross_free: thread_alloc 4000 calls, 160000 bytes freed by other threads; thread_leak 12 x 64 live"

echo "# selections"
# cmp_sel WHAT "FILES..." SELECTION... -- ARGS...: mpquery ARGS --server URL
# SELECTION = mpquery ARGS FILES... (with --run all unless FILES has a --run)
cmp_sel() {
    local what=$1 files=$2 selection=()
    shift 2
    while [ "$1" != -- ]; do selection+=("$1"); shift; done
    shift
    [[ $files == *--run* ]] || files="$files --run all"
    same "$what: $*" "$(out "$@" --server "$CH_URL" "${selection[@]}")" "$(out "$@" $files)"
}
cmp_sel "--exe alloc_functions = a.db b.db" "a.db b.db" --exe alloc_functions -- top --functions -n 0
cmp_sel "--exe crossed (argv[0]'s name, as info shows it) = x.db" "x.db" --exe crossed -- top --functions -n 0
cmp_sel "--exe threads_cross_free (its executable's name) = x.db" "x.db" --exe threads_cross_free -- fold
cmp_sel "--exe with the path = a.db b.db" "a.db b.db" --exe "$B/tests/alloc_functions" -- fold --format csv
cmp_sel "--where source LIKE '%/p.db' = p.db" "p.db" --where "source LIKE '%/p.db'" -- top --functions -n 0 --snapshot peak
cmp_sel "--where on token = t.db" "t.db" --where "token IN ('t-tags', 't-req')" -- fold
cmp_sel "--where on cmdline and processes = t.db's second run" "t.db --run 2" --where "cmdline LIKE '%request_loop' AND processes = 1" -- top --functions -n 0
cmp_sel "--where with ; -- /* # inside a string = every run" "$FILES" --where "token != 'x;--/*#'" -- fold
cmp_sel "--host $(hostname) = every run" "$FILES" --host "$(hostname)" -- top --functions -n 0
# --since: the allocations made since then, as the files' same window reads them
same "--since before the runs (seconds) = every run" "$("$MPQ" fold --server "$CH_URL" --since "$t_before" 2>/dev/null; echo "exit $?")" "$(out fold $FILES --run all)"
same "--since between t-a1 and t-a2 = the files' window" "$(out top --functions -n 0 --server "$CH_URL" --since "$t_mid")" \
    "$(out top --functions -n 0 $FILES --run all --since "$t_mid")"
same "--since between t-a1 and t-a2 = the files but a.db (ended before)" "$("$MPQ" fold --server "$CH_URL" --since "$t_mid" 2>/dev/null; echo "exit $?")" \
    "$(out fold b.db t.db p.db x.db --run all)"
same "--since 1d = every run" "$("$MPQ" fold --server "$CH_URL" --since 1d 2>/dev/null; echo "exit $?")" "$(out fold $FILES --run all)"
same "--exe and --since together = b.db" "$("$MPQ" fold --server "$CH_URL" --exe alloc_functions --since "$t_mid" 2>/dev/null; echo "exit $?")" "$(out fold b.db)"
# local time: a date as date(1) writes it in a zone 9 h from UTC
day=$(TZ=JST-9 date -d "@${t_before%.*}" '+%Y-%m-%d %H:%M:%S')
same "--since '$day' (TZ=JST-9) = every run" "$(TZ=JST-9 "$MPQ" fold --server "$CH_URL" --since "$day" 2>/dev/null; echo "exit $?")" "$(out fold $FILES --run all)"
later=$(TZ=JST-9 date -d '+1 hour' '+%Y-%m-%d %H:%M')
expect_fail 2 "^mpquery: ${CH_URL//./\\.}: window [^ ]*\\.\\.end s: no snapshot in it" env TZ=JST-9 "$MPQ" fold --server "$CH_URL" --since "$later"
expect_fail 2 "^mpquery: ${CH_URL//./\\.}: window [^ ]*\\.\\.end s: no snapshot in it" "$MPQ" top --server "$CH_URL" --since "$(($(date +%s) + 3600))"
expect_fail 2 "^mpquery: ${CH_URL//./\\.}: no run in the store matches the selection" "$MPQ" top --server "$CH_URL" --host no-such-host
expect_fail 2 "^mpquery: ${CH_URL//./\\.}: no run in the store matches the selection" "$MPQ" info --server "$CH_URL" --exe functions
expect_fail 2 "^mpquery: ${CH_URL//./\\.}: no run in the store matches the selection" "$MPQ" top --server "$CH_URL" --exe "x' OR '1' = '1"
expect_fail 2 "^mpquery: ${CH_URL//./\\.}: no run in the store matches the selection" "$MPQ" top --server "$CH_URL" --host "x\\' OR 1 OR '"
same "info --format json --exe alloc_functions: totals = a.db b.db" \
    "$("$MPQ" info --format json --server "$CH_URL" --exe alloc_functions | info_json totals; echo "exit ${PIPESTATUS[0]}")" \
    "$("$MPQ" info --format json a.db b.db --run all | info_json totals; echo "exit ${PIPESTATUS[0]}")"

echo "# diff: --a-where and --b-where = diff of the files"
AW="source LIKE '%/a.db'" PW="source LIKE '%/p.db'"
# text: the store's sides are a and b, a legend line says which runs they are
assert_eq "$(out diff --server "$CH_URL" --a-where "$AW" --b-where "$PW" --functions -n 0 | head -2)" \
"a: runs where $AW, b: runs where $PW
a memtot  b memtot      delta   ratio  function" "diff --server: a, b and the legend"
rows() { grep -v '^a: ' | tail -n +2 | sed -E 's/ +/ /g; s/^ //'; }    # the rows without the head and legend, spaces as one (column widths follow the heads)
same "diff --functions -n 0: a.db vs p.db" "$(out diff --server "$CH_URL" --a-where "$AW" --b-where "$PW" --functions -n 0 | rows)" \
    "$(out diff a.db p.db --functions -n 0 | rows)"
same "diff --fold: a.db vs p.db" "$(out diff --server "$CH_URL" --a-where "$AW" --b-where "$PW" --fold)" "$(out diff a.db p.db --fold)"
same "diff --fold: t-a1 vs t.db's two runs" "$(out diff --server "$CH_URL" --a-where "token = 't-a1'" --b-where "source LIKE '%/t.db'" --fold)" \
    "$(out diff --run all --fold a.db -- t.db)"
same "diff --exe alloc_functions --a-where/--b-where by token: a.db vs b.db" \
    "$(out diff --server "$CH_URL" --exe alloc_functions --a-where "token = 't-a1'" --b-where "token = 't-a2'" --functions -n 0 --format csv)" \
    "$(out diff a.db b.db --functions -n 0 --format csv)"
same "diff --by memlive --format csv: a.db vs every run" \
    "$(out diff --server "$CH_URL" --a-where "token = 't-a1'" --b-where 1 --by memlive -n 0 --format csv)" \
    "$(out diff --run all --by memlive -n 0 --format csv a.db -- $FILES)"
same "diff --where and --a-where/--b-where: t.db's first run vs its second" \
    "$(out diff --server "$CH_URL" --where "source LIKE '%/t.db'" --a-where "token = 't-tags'" --b-where "token = 't-req'" --functions -n 0 | rows)" \
    "$(out diff t.db t.db --a-run 1 --b-run 2 --functions -n 0 | rows)"
expect_fail 2 "^mpquery: ${CH_URL//./\\.}: no run in the store matches side B's selection" \
    "$MPQ" diff --server "$CH_URL" --a-where 1 --b-where "token = 'none'"

echo "# the store grows: runs pushed later join the answers; pushing again changes nothing"
before=$(out fold --server "$CH_URL")
"$MPQ" push -q "$CH_URL" n.db e.db 2>push2.err || fail "push of n.db e.db failed: $(cat push2.err)"
assert_match "$(cat push2.err)" '^mpquery: push: pushed 2 runs \(0 already stored\) from 2 files' "pushed t-steps and t-tree"
[ "$(out fold --server "$CH_URL")" != "$before" ] || fail "fold --server did not change with t-steps and t-tree pushed"
FILES="$FILES n.db e.db"
alike fold
alike top --functions -n 0 --by memlive
alike top --functions --snapshot peak -n 0
alike top --functions --by time -n 0 --format csv
per_stack top -n 0 --by time
cmp_sel "--where processes = 2 = n.db" "n.db" --where "processes = 2" -- top --functions --all-counters -n 0
same "info --format json: totals with t-steps and t-tree" "$("$MPQ" info --format json --server "$CH_URL" | info_json totals; echo "exit ${PIPESTATUS[0]}")" \
    "$("$MPQ" info --format json $FILES --run all | info_json totals; echo "exit ${PIPESTATUS[0]}")"
same "info --format json with t-tree's $(q e.db "SELECT count(*) FROM process") processes (ids and file names aside)" \
    "$("$MPQ" info --format json --server "$CH_URL" | info_json; echo "exit ${PIPESTATUS[0]}")" \
    "$("$MPQ" info --format json $FILES --run all | info_json; echo "exit ${PIPESTATUS[0]}")"
# (info without ids: --server numbers processes in the order ClickHouse
# returns them, which changes as it merges parts)
answers() {
    local cmd
    for cmd in "fold" "top --functions -n 0 --format csv" "top --functions --snapshot peak -n 0"; do
        out $cmd --server "$CH_URL"
    done
    "$MPQ" info --format json --server "$CH_URL" | info_json
}
first=$(answers)
"$MPQ" push "$CH_URL" $FILES 2>push3.err || fail "push again failed: $(cat push3.err)"
assert_match "$(tail -n 1 push3.err)" '^mpquery: push: pushed 0 runs \(8 already stored\) from 7 files: 0 rows' "pushed again: every run already stored"
assert_eq "$(chc "SELECT count() FROM mp_run")" 8 "mp_run: 8 rows"
again=$(answers)
[ "$again" == "$first" ] || fail "the answers changed with the same files pushed again: $(diff <(echo "$first") <(echo "$again"))"
echo "  ok: pushed again: fold, top --functions, the peak, info alike"

echo "# bad selections: refused, nothing written"
rows=$(chc "SELECT count() FROM mp_run")
expect_fail 2 "^mpquery: --where '1; DROP TABLE mp_run': ';' is not allowed" "$MPQ" top --server "$CH_URL" --where '1; DROP TABLE mp_run'
expect_fail 2 "^mpquery: --where '1\) OR 1 IN \(SELECT 1': unbalanced parentheses" "$MPQ" top --server "$CH_URL" --where '1) OR 1 IN (SELECT 1'
expect_fail 2 "^mpquery: --where 'run IN .*': the server refused the selection: .*(code 164|readonly)" \
    "$MPQ" top --server "$CH_URL" --where "run IN (SELECT 1 FROM url('http://127.0.0.1:1/', 'TSV', 'a UInt8'))"
expect_fail 2 "^mpquery: --where 'nosuch = 1': the server refused the selection: .*nosuch" "$MPQ" fold --server "$CH_URL" --where 'nosuch = 1'
expect_fail 2 "^mpquery: --where 'token = 1': the server refused the selection: " "$MPQ" info --server "$CH_URL" --where 'token = 1'
expect_fail 2 "^mpquery: --where 'token = 1 FROM mp_run': the server refused the selection: .*Syntax error" \
    "$MPQ" top --server "$CH_URL" --where 'token = 1 FROM mp_run'
expect_fail 2 "^mpquery: --where 'nosuch = 1': the server refused the selection: " \
    "$MPQ" diff --server "$CH_URL" --a-where 1 --b-where 'nosuch = 1'
assert_eq "$(chc "SELECT count() FROM mp_run")" "$rows" "mp_run still has its $rows rows"
assert_eq "$(chc "SELECT count() FROM mp_runs")" 8 "mp_runs: the 8 runs"

echo "# not a store"
chc "CREATE DATABASE empty"
expect_fail 1 "^mpquery: ${CH_URL//./\\.}\?database=empty: .*mp_runs" "$MPQ" top --server "${CH_URL}?database=empty"
expect_fail 1 "^mpquery: ${CH_URL//./\\.}\?database=empty: .*mp_runs" "$MPQ" info --server "${CH_URL}?database=empty"
expect_fail 1 "^mpquery: ${CH_URL//./\\.}\?database=nosuch: .*nosuch" "$MPQ" fold --server "${CH_URL}?database=nosuch"
assert_eq "$(chc "SELECT count() FROM system.tables WHERE database = 'empty'")" 0 "(reading created no table)"

echo "# the stacks at the peak at scale (issue 24): peak_scale, 4 threads, 300 stacks before the peak and 300 after"
MP_RUN=t-scale MP_QUIET=1 LD_PRELOAD=$LIB MP_OUT=s.db "$B/tests/peak_scale" 4 || fail "peak_scale failed"
chc "CREATE DATABASE scale"
SCALE="${CH_URL}?database=scale"
"$MPQ" push -q "$SCALE" s.db 2>push4.err || fail "push of s.db failed: $(cat push4.err)"
same "fold --snapshot peak --by ncalls (peak_scale)" "$(out fold --snapshot peak --by ncalls --server "$SCALE")" \
    "$(out fold --snapshot peak --by ncalls s.db)"
same "top --functions --snapshot peak (peak_scale)" "$(out top --functions --snapshot peak --format csv --server "$SCALE")" \
    "$(out top --functions --snapshot peak --format csv s.db)"
assert_eq "$("$MPQ" top --functions --snapshot peak --format csv --server "$SCALE" | cut -d, -f1,5,15)" \
"self.ncalls,self.memlive,function
1,67108864,big_block
12000,2994000,keep_end
400,0,handed_out
4,1408,allocate_dtv" "peak_scale at its peak through --server: the kept stacks as they were, none of the later ones"
