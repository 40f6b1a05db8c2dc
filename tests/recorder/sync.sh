# MP_SYNC: where the profile is put on disk (fdatasync). A preloaded
# `sh -c '/bin/true; /bin/true; :'` writes three snapshots (each /bin/true's
# exit, then sh's). MP_SYNC=1: each write waits for the disk, three
# fdatasync each (the journal, its directory, the file). MP_SYNC=0 (the
# default): none of them, and sh, the run's first process, syncs the file
# and its directory once as it ends: two in all, sh's (and again after
# an exec: the exec'd image is the run's first process too). mpquery record
# (whose program is not the run's first) makes those two itself after the
# run. The profiles hold the same processes and snapshots either way.
. "$(dirname "$0")/../lib/lib.sh"
command -v strace >/dev/null || { echo "SKIP: strace is not installed"; exit 0; }
# syncs FILE: "PID COUNT" per process that called fdatasync or fsync
syncs() { grep -E '^[0-9]+ +f(data)?sync\(' "$1" | awk '{ n[$1]++ } END { for (p in n) print p, n[p] }' | sort; }
# exec_pid FILE PROGRAM: the pid that executed PROGRAM (an absolute path)
exec_pid() { grep -F "execve(\"$2\"" "$1" | awk 'NR == 1 { print $1 }'; }

for s in 0 1; do
    MP_SYNC=$s MP_QUIET=1 MP_OUT=$T/s$s.db strace -f -qq -e trace=fdatasync,fsync,execve -o trace$s \
        -E LD_PRELOAD=$LIB sh -c '/bin/true; /bin/true; :' >out 2>err; rc=$?
    assert_eq "$rc" 0 "MP_SYNC=$s: exit status"
    assert_eq "$(cat err)" "" "MP_SYNC=$s: nothing on stderr"
done
assert_eq "$(syncs trace0)" "$(exec_pid trace0 "$(command -v sh)") 2" "MP_SYNC=0: two syncs, by the run's first process"
assert_eq "$(grep -cE 'f(data)?sync\(' trace1)" 9 "MP_SYNC=1: three syncs per snapshot write"
assert_eq "$(syncs trace1 | wc -l)" 3 "MP_SYNC=1: each process syncs its own"
for s in 0 1; do
    assert_eq "$(q s$s.db "SELECT count(*) FROM process")" 3 "MP_SYNC=$s: three processes"
    assert_eq "$(q s$s.db "SELECT group_concat(reason, ' ') FROM (SELECT reason FROM snapshot ORDER BY id)")" \
        "exit exit peak exit" "MP_SYNC=$s: the same snapshots"
done

# A run's first process that execs (env, a wrapper) is its first process
# still: env's exec snapshot and sh's exit are synced, 2 + 2, by that pid.
MP_QUIET=1 MP_OUT=$T/e.db strace -f -qq -e trace=fdatasync,fsync,execve -o trace_env \
    -E LD_PRELOAD=$LIB env FOO=1 sh -c '/bin/true; :' >out 2>err; rc=$?
assert_eq "$rc" 0 "env: exit status"
assert_eq "$(syncs trace_env)" "$(exec_pid trace_env "$(command -v env)") 4" "env then sh: the run's first process syncs at its exec and its exit"

# mpquery record: the recorded processes do not sync; record does, once.
strace -f -qq -e trace=fdatasync,fsync,execve -o trace_rec "$MPQ" record -q -o rec.db -- sh -c '/bin/true; :' >out 2>err; rc=$?
assert_eq "$rc" 0 "record: exit status"
assert_eq "$(syncs trace_rec)" "$(exec_pid trace_rec "$MPQ") 2" "record: two syncs, mpquery's own, after the run"
assert_eq "$(q rec.db "SELECT count(*) FROM process")" 2 "record: two processes"
