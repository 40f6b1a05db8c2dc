#!/bin/bash
# A process's name is the one it was started as (argv[0]'s file name: what
# the user typed, what ps shows), the same in info's table (its command
# line), its tree and its json; --exe takes that name as well as the
# executable's own file name, which differs when it was started through a
# symlink: cc -> x86_64-linux-gnu-gcc-12, a #! script's /usr/bin/python3 ->
# python3.11. Here: a script whose #! names bin/mixer, a symlink to
# tests/peak_mix (keep_a 3000 calls, keep_b 2000, spike_c 1000, big_d 1),
# and cc2 -> alt -> peak_mix run from PATH with "threads" (worker_hold
# 4 x 1000 calls, big_d 1).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
mkdir bin
ln -s "$B/tests/peak_mix" bin/mixer
ln -s "$B/tests/peak_mix" bin/alt
ln -s alt bin/cc2
printf '#!%s\n' "$T/bin/mixer" > job && chmod +x job
MP_QUIET=1 profile n.db ./job || fail "./job failed"
PATH=$T/bin:$PATH MP_QUIET=1 profile n.db cc2 threads || fail "cc2 threads failed"
real=$(readlink -f "$B/tests/peak_mix")
# the database: the executable as the kernel resolved it, the command line as started
assert_eq "$(q n.db "SELECT exe = '$real', cmdline FROM process ORDER BY id")" "1|$T/bin/mixer ./job
1|cc2 threads" "recorded: peak_mix's path both times, the command lines as typed"
f() { "$MPQ" fold n.db --run all --by ncalls "$@" | grep -E 'keep_a|worker_hold' | tr '\n' ' '; }

# info: the table's command and the tree's name agree
assert_eq "$("$MPQ" info n.db --run all --format csv | cut -d, -f12)" "command
$T/bin/mixer ./job
cc2 threads" "info's table: the command lines as started"
info=$("$MPQ" info n.db --run all)
assert_eq "$(printf '%s\n' "$info" | sed -n '/^process tree:/,/^$/p' | tail -n +2 | sed 's/^ *[0-9]* //')" \
"mixer: returned from main with status 0
cc2: returned from main with status 0" "info's tree: the names they were started as"
# the kernel's own name for cc2 (comm, its main thread's recorded name) is
# the same; a script's comm is the script's name (job)
assert_eq "$(q n.db "SELECT name FROM thread WHERE seq = 1 ORDER BY process")" "job
cc2" "the main threads' names (comm) as the kernel gave them"
json=$("$MPQ" info n.db --run all --format json)
assert_eq "$(json_get "$json" '[(p["role"], p["exe"] == "'"$real"'") for p in j["processes"]], [t["roles"] for t in j["tree"]]')" \
  "([('mixer', True), ('cc2', True)], [['mixer'], ['cc2']])" "info json: role and roles, the exe as recorded"

# --exe: the name info shows, the executable's file name, either path
assert_eq "$(f --exe mixer)" "main;keep_a 3000 " "--exe mixer: the script's interpreter as its #! line names it"
assert_eq "$(f --exe cc2)" "__clone3;start_thread;worker;worker_hold 4000 " "--exe cc2: as typed, through two symlinks"
assert_eq "$(f --exe "$T/bin/mixer")" "main;keep_a 3000 " "--exe PATH: the command's path as started"
assert_eq "$(f --exe peak_mix)" "__clone3;start_thread;worker;worker_hold 4000 main;keep_a 3000 " \
  "--exe peak_mix: the executable's file name, both"
assert_eq "$(f --exe "$real")" "__clone3;start_thread;worker;worker_hold 4000 main;keep_a 3000 " \
  "--exe PATH: the executable's path as recorded, both"
pid=$(q n.db "SELECT pid FROM process WHERE cmdline LIKE 'cc2 %'")
assert_eq "$("$MPQ" fold n.db --run all --exe cc2)" "$("$MPQ" fold n.db --run all --pid "$pid")" "--exe cc2 = --pid of cc2"
expect_fail 2 "^mpquery: n.db: no process of executable 'alt' in the selected runs \(there are: mixer \(peak_mix\), cc2 \(peak_mix\)\)$" \
  "$MPQ" fold n.db --run all --exe alt
# tree's groups name the process the same way
assert_eq "$("$MPQ" tree n.db --run all --by ncalls --format csv | awk -F, '$2 == 0 { print $1 }' | sed 's/[0-9]*)$/N)/')" \
"mixer (pid N)
cc2 (pid N)" "tree: a process's root by the same name"

# argv[0] as a login shell's ("-bash") or a retitled process's ("nginx:
# worker process"): the name without the '-' and the ':'
MP_QUIET=1 profile t.db bash -c 'exec -a -login "$0"' "$B/tests/peak_mix" || fail "exec -a -login failed"
MP_QUIET=1 profile t.db bash -c 'exec -a worker: "$0" threads' "$B/tests/peak_mix" || fail "exec -a worker: failed"
assert_eq "$(q t.db "SELECT cmdline FROM process WHERE exe = '$real' ORDER BY id")" "-login
worker: threads" "recorded: argv[0] as exec -a gave it"
assert_eq "$("$MPQ" info t.db --run all --exe peak_mix --format json | json_get "$(cat)" '[p["role"] for p in j["processes"]]')" \
  "['login', 'worker']" "info json: their names"
assert_eq "$(f() { "$MPQ" fold t.db --run all --by ncalls "$@" | grep -E 'keep_a|worker_hold'; }; f --exe login; f --exe worker)" \
"main;keep_a 3000
__clone3;start_thread;worker;worker_hold 4000" "--exe login, --exe worker"
