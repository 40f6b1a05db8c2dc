# Module paths read from a profile (and debug files named beside a module)
# are opened only when they are regular files, never waiting on open: a
# profile whose module.path names a FIFO (or a device) made `mpquery
# symbolize` and `mpquery record`'s debug-info copy step wait on the FIFO
# for ever; a .gnu_debuglink naming a FIFO beside the program made the
# preloaded program itself wait at its first flush. Each run is bounded by
# a timeout, so a hang fails the test rather than blocking the suite.
. "$(dirname "$0")/../lib/lib.sh"
stripped_prog                   # ./prog stripped, debug/.build-id/XX/YYYY.debug; $bid
mkfifo fifo || fail "mkfifo failed"
on_exit "rm -f '$T/fifo' '$T/linked/prog.debug'"     # the profile check at the end opens every file
export HOME=$T/home XDG_CACHE_HOME=$T/cache MP_DEBUGINFO_PATH=$T/none
mkdir home
# bounded SECONDS CMD...: CMD killed (SIGKILL) after SECONDS; its status
bounded() { local s=$1; shift; timeout -s KILL "$s" "$@"; }
# the stripped program's own frame, as recorded without debug info
own_frames() { q "$1" "SELECT count(*) FROM frame_info WHERE module = '$2'"; }

profile a.db ./prog >/dev/null 2>&1 || fail "program failed"
nframes=$(own_frames a.db "$T/prog")
[ "$nframes" -gt 0 ] || fail "no frame of ./prog recorded"

# 1. symbolize: the FIFO, /dev/zero and a directory as module paths: one
#    line each, their frames kept, the other modules named again; exit 0.
for what in fifo /dev/zero dir; do
    [ $what = dir ] && mkdir -p dir
    path=$what; [ $what = /dev/zero ] || path=$T/$what
    kind=$(case $what in fifo) echo "a FIFO";; /dev/zero) echo "a character device";; dir) echo "a directory";; esac)
    cp a.db s.db
    q s.db "UPDATE module SET path = '$path' WHERE path = '$T/prog'"
    bounded 20 "$MPQ" symbolize s.db --debuginfo-path "$T/none" >s.out 2>s.err; rc=$?
    [ $rc = 137 ] && fail "symbolize, module path $path: still running after 20 s (killed)"
    assert_eq "$rc" 0 "symbolize, module path $path: exit status"
    assert_eq "$(cat s.err)" "mpquery: warning: symbolize: $path: $kind; its frames keep their names" \
        "symbolize, module path $path: one line"
    assert_eq "$(own_frames s.db "$path")" "$nframes" "symbolize, module path $path: its frames kept"
    assert_match "$(head -n 1 s.out)" "^s.db: [0-9]+ addresses of [1-9][0-9]* modules resolved" "symbolize, module path $path: the others resolved"
done

# 2. record's debug-info copy step: the profile's module path turned into
#    the FIFO by the recorded program itself (as a target's user can during
#    a root record --pid): record ends, with the program's exit status.
cat >plant.sh <<SH
./prog >/dev/null
sqlite3 "$T/rec.db" "UPDATE module SET path = '$T/fifo' WHERE path = '$T/prog'"
exit 7
SH
bounded 30 "$MPQ" record -q -o rec.db -- sh plant.sh >rec.out 2>rec.err; rc=$?
[ $rc = 137 ] && fail "record with a FIFO as a module path: still running after 30 s (killed)"
assert_eq "$rc" 7 "record with a FIFO as a module path: the program's exit status"
assert_eq "$(q rec.db "SELECT count(*) FROM module WHERE path = '$T/fifo'")" 1 "the FIFO was the profile's module path"
assert_eq "$(cat rec.err)" "" "record says nothing"

# 3. A .gnu_debuglink naming a FIFO beside the program: the preloaded
#    program ends (its output and status unchanged), and so does symbolize.
mkdir linked && cp prog linked/prog && (cd linked && cp "$T/debug/.build-id/${bid:0:2}/${bid:2}.debug" prog.debug &&
    objcopy --add-gnu-debuglink=prog.debug prog && rm prog.debug && mkfifo prog.debug) || fail "debuglink setup failed"
linked/prog >plain.out; plain_rc=$?
MP_DEBUGINFO_PATH=: MP_OUT=link.db bounded 30 env LD_PRELOAD=$LIB linked/prog >link.out 2>link.err; rc=$?
[ $rc = 137 ] && fail "preloaded program with a FIFO as its debuglink: still running after 30 s (killed)"
assert_eq "$rc" "$plain_rc" "FIFO as the debuglink: the program's exit status"
assert_eq "$(cmp -s plain.out link.out && echo same)" same "FIFO as the debuglink: the program's output"
assert_eq "$(own_frames link.db "$T/linked/prog")" "$nframes" "FIFO as the debuglink: the program's frames recorded"
bounded 20 "$MPQ" symbolize link.db --debuginfo-path : >sl.out 2>sl.err; rc=$?
[ $rc = 137 ] && fail "symbolize with a FIFO as the debuglink: still running after 20 s (killed)"
assert_eq "$rc|$(cat sl.err)" "0|" "symbolize with a FIFO as the debuglink: exit status, nothing said"

# 4. A FIFO where the debug file is looked for by build-id (a debug-info
#    path's .build-id directory): the preloaded program and symbolize end
#    (libdwfl's own lookup of the same path is not made then).
mkdir -p fdebug/.build-id/${bid:0:2} && mkfifo fdebug/.build-id/${bid:0:2}/${bid:2}.debug || fail "mkfifo failed"
on_exit "rm -f '$T/fdebug/.build-id/${bid:0:2}/${bid:2}.debug'"
MP_DEBUGINFO_PATH=$T/fdebug MP_OUT=bid.db bounded 30 env LD_PRELOAD=$LIB ./prog >bid.out 2>bid.err; rc=$?
[ $rc = 137 ] && fail "preloaded program with a FIFO at its build-id debug file: still running after 30 s (killed)"
assert_eq "$rc|$(cmp -s plain.out bid.out && echo same)" "0|same" "FIFO at the build-id debug file: the program's status and output"
bounded 20 "$MPQ" symbolize bid.db --debuginfo-path "$T/fdebug" >sb.out 2>sb.err; rc=$?
[ $rc = 137 ] && fail "symbolize with a FIFO at the build-id debug file: still running after 20 s (killed)"
assert_eq "$rc|$(cat sb.err)" "0|" "symbolize with a FIFO at the build-id debug file: exit status, nothing said"
