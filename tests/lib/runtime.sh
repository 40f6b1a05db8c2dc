# Shared by the runtime tests (tests/runtimes/*.sh): a program of one language
# runtime is run natively and under the recorder, and the two runs compared.
# The runtimes are Debian packages, installed by tests/lib/runtime_deps.sh.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PROGS=$ROOT/tests/progs/runtimes
RUN_TIMEOUT=60   # a profiled run that hangs fails the test after this long

# need RUNTIME PACKAGE FILE: FILE (the runtime's binary, a library) must exist.
# The test skips only if tests/lib/runtime_deps.sh recorded that PACKAGE could
# not be installed; a runtime missing for any other reason is a failure.
need() {
    [ -e "$3" ] && return 0
    local why
    why=$(awk -F'\t' -v p="$2" '$1 == p { print $2; exit }' "$B/runtime_deps.status" 2>/dev/null)
    [ -n "$why" ] && { echo "SKIP: $1: $why"; exit 0; }
    fail "$1: $3 is missing and tests/lib/runtime_deps.sh did not record package $2 as uninstallable (run it)"
}

# debian_node: sets NODE to Debian's node, and NODE_ENV to the environment
# it runs with: /usr/bin/node if the nodejs package is Debian's, else the one
# tests/lib/runtime_deps.sh unpacked under build/runtimes/debian-node.
debian_node() {
    if dpkg-query -W -f='${Maintainer}' nodejs 2>/dev/null | grep -qi '@[^>]*debian\.\(org\|net\)'; then
        NODE=/usr/bin/node NODE_ENV=()
        need node nodejs "$NODE"
    else
        local dir=$B/runtimes/debian-node
        NODE=$dir/usr/bin/node NODE_ENV=(LD_LIBRARY_PATH=$dir/usr/lib/x86_64-linux-gnu)
        need node debian-node "$NODE"
    fi
}

# run_native NAME [VAR=VALUE...] CMD...: CMD without the recorder (the
# variables set by env(1), not by a second env process, which would be a
# second profiled image); NAME.out, NAME.err, NAME.rc.
run_native() {
    local name=$1; shift
    timeout -k 5 $RUN_TIMEOUT env "$@" >"$name.out" 2>"$name.err"
    echo $? >"$name.rc"
    case $(cat "$name.rc") in 124|137) fail "$name: the native run did not end in $RUN_TIMEOUT s" ;; esac
}

# run_profiled NAME DB [VAR=VALUE...] CMD...: CMD under the recorder writing DB (its
# absolute path); NAME.out, NAME.err, NAME.rc, NAME.time (seconds). A hang or
# a death by signal fails here, with the program's stderr.
run_profiled() {
    local name=$1 db=$2 start rc; shift 2
    start=$(date +%s.%N)
    timeout -k 5 $RUN_TIMEOUT env LD_PRELOAD=$LIB MP_OUT="$db" "$@" >"$name.out" 2>"$name.err"
    rc=$?
    echo "$rc" >"$name.rc"
    printf '%.2f' "$(echo "$(date +%s.%N) - $start" | bc)" >"$name.time"
    echo "# $name: profiled run $(cat "$name.time") s"
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        tail -n 5 "$name.err" >&2
        fail "$name: the profiled run hung (killed after $RUN_TIMEOUT s)"
    fi
    if [ $rc -gt 128 ]; then
        tail -n 5 "$name.err" >&2
        fail "$name: the profiled run died by signal $((rc - 128)) ($(kill -l $((rc - 128))))"
    fi
}

# same_as_native NATIVE PROFILED DB NPROC: the profiled run's exit status and
# stdout are the native run's; its stderr is the native stderr plus exactly
# NPROC "mallocprof: info: wrote DB: ..." lines, one per process, and no
# other line from mallocprof; the database has NPROC process rows.
same_as_native() {
    local nat=$1 prof=$2 db=$3 nproc=$4
    assert_eq "$(cat "$prof.rc")" "$(cat "$nat.rc")" "$prof: exit status as native"
    cmp -s "$nat.out" "$prof.out" || { diff "$nat.out" "$prof.out" | head -n 10 >&2; fail "$prof: stdout differs from native"; }
    echo "  ok: $prof: stdout as native ($(wc -l <"$nat.out") lines)"
    assert_eq "$(grep -v '^mallocprof: info: wrote ' "$prof.err")" "$(cat "$nat.err")" "$prof: stderr as native, apart from the recorder's info lines"
    assert_eq "$(grep -c "^mallocprof: info: wrote $db: [0-9]* stacks, [0-9]* rows, \(exit\|exec\) snapshot, " "$prof.err")" "$nproc" \
        "$prof: $nproc 'mallocprof: info: wrote' line(s)"
    assert_eq "$(grep -c mallocprof "$prof.err")" "$nproc" "$prof: no other line from mallocprof"
    assert_eq "$(q "$db" "SELECT count(*) FROM process")" "$nproc" "$prof: $nproc process row(s)"
}

# native_and_profiled NPROC CMD...: CMD run natively (native.*) and under
# the recorder into $T/a.db (profiled.*), the two compared (same_as_native:
# NPROC processes).
native_and_profiled() {
    local nproc=$1; shift
    run_native native "$@"
    run_profiled profiled "$T/a.db" "$@"
    same_as_native native profiled "$T/a.db" "$nproc"
}

# has_allocations DB MIN: the process totals count more than MIN allocations
# with stacks, and mpquery info and top read the database.
has_allocations() {
    local db=$1 min=$2 n
    n=$(q "$db" "SELECT SUM(ncalls - ncalls_nostack) FROM process_totals")
    [ "${n:-0}" -gt "$min" ] || fail "$db: $n allocations with a stack, expected more than $min"
    echo "  ok: $db: $n allocations with a stack (more than $min)"
    "$MPQ" info "$db" >info.txt 2>&1 || { cat info.txt >&2; fail "mpquery info $db failed"; }
    "$MPQ" top "$db" -n 5 >top.txt 2>&1 || { cat top.txt >&2; fail "mpquery top $db failed"; }
    assert_match "$(cat top.txt)" "[0-9]" "mpquery info and top read $db"
}

# recorded_once DB CMD...: DB, a copy of `mpquery record -q -o X -- CMD`
# (stdin /dev/null, stdout dropped) made once for this recorder, this
# mpquery, CMD and the files CMD names (build/recorded/HASH.db, under a
# lock: tests run side by side; CMD runs in build/recorded/HASH.d): the
# same clang++ -O2 compile and python3 json run are recorded by
# runtimes/agreement and by the first full run of check_clang and check_real
recorded_once() {
    local db=$1 dir=$B/recorded key a; shift
    key=$( { printf '%s\n' "$@"; for a in "$@"; do [ -f "$a" ] && cat "$a"; done; cat "$LIB" "$MPQ"; } |
           md5sum | cut -c1-16)
    mkdir -p "$dir/$key.d" || fail "cannot make $dir"
    (
        flock 9 || exit 1
        [ -s "$dir/$key.db" ] && exit 0
        rm -f "$dir/$key.tmp"
        cd "$dir/$key.d" && timeout -k 5 300 "$MPQ" record -q -o "$dir/$key.tmp" -- "$@" </dev/null >/dev/null 2>"$dir/$key.err" &&
            mv "$dir/$key.tmp" "$dir/$key.db"
    ) 9>"$dir/$key.lock" || fail "the recorded run of $* failed: $(tail -3 "$dir/$key.err")"
    cp "$dir/$key.db" "$db" || fail "cannot copy $dir/$key.db"
}
