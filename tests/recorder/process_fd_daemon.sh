# A daemon closes every descriptor and opens its own files (issue 25,
# item 1): libunwind's pipe (made before) was closed with them and, at its
# next check of an address, its failed read closed the program's files on
# those numbers and made its pipe there (MP_UNWIND=libunwind: every write
# failed); libdwfl closed the files it kept (fd 9) when the recorder ended
# its session at a dlclose: the program's file by then (MP_UNWIND=cfi).
# Now libunwind's pipe2 comes to the recorder, which puts the pipe above
# the program's range, and libdwfl keeps no descriptor of a module (read
# into memory) and its debug files' above the program's range too.
# The ticks' RSS (the background thread) opened /proc/self/statm for each
# read: a read that fell between two of the daemon's opens moved its file
# to the next number (1 run in ~150 of fd_daemon failed so; fd_race: ~500
# of 400,000 opens at MP_TICK=0.001). Now statm and pagemap stay open above
# the range (fds.c), opened again in the program's own thread when it
# closes them (close, close_range, closefrom). The files SQLite opens for
# the background thread's snapshots (written ahead of the exit) go above
# the range as soon as they are open.
# tests/progs/fd_daemon.c, with each unwinder, under ulimit -n 1024 (the
# usual limit: the recorder's descriptors are among those the program
# closes, and made again where they must be).
. "$(dirname "$0")/../lib/lib.sh"
for unwind in cfi libunwind fp; do
    rm -rf d f.db; mkdir d
    (ulimit -n 1024; LD_PRELOAD=$LIB MP_OUT=f.db MP_QUIET=1 MP_UNWIND=$unwind "$B/tests/fd_daemon" "$B/tests/libplugin.so" d >out 2>err)
    assert_eq "$?" 0 "MP_UNWIND=$unwind: the exit status"
    assert_eq "$(cat out err)" "3 4 5 6 7 8 9 10 ok" "MP_UNWIND=$unwind: its files got the lowest descriptors, every write went through"
    for k in 0 1 2 3 4 5 6 7; do
        assert_eq "$(sort d/f$k | uniq -c | tr -s ' ')" " 1000 f$k" "MP_UNWIND=$unwind: f$k holds its 1000 lines, nothing else"
    done
    assert_eq "$(by_function f.db on_usr1 | grep '^on_usr1|')" "on_usr1|11|440|11|0" "MP_UNWIND=$unwind: the handler's 11 blocks"
    assert_eq "$(by_function f.db plugin_static_alloc | grep '^plugin_static_alloc|')" "plugin_static_alloc|42|3234|40|154" \
        "MP_UNWIND=$unwind: the plugin's blocks, named after its dlclose"
done
for how in close close_range closefrom; do
    rm -f r.db
    out=$(ulimit -n 1024; LD_PRELOAD=$LIB MP_OUT=r.db MP_QUIET=1 MP_TICK=0.001 "$B/tests/fd_race" $how 5000)
    assert_eq "$out" "0 opens moved" "fd_race, $how: every open got the number the program expected"
    assert_eq "$(sqlite3 r.db 'select count(*) > 10, min(rss) > 0 from tick')" "1|1" \
        "fd_race, $how: the ticks read RSS after the program closed the profiler's statm"
done
# Whether a read falls between two opens is chance; that the background
# thread opens nothing while the program runs is not.
(ulimit -n 1024; MP_OUT=s.db MP_QUIET=1 MP_TICK=0.001 strace -f -qq -e trace=openat -o trace -E LD_PRELOAD=$LIB \
    "$B/tests/fd_race" close 2000 >out)
assert_eq "$(cat out)" "0 opens moved" "fd_race under strace: every open got the number the program expected"
main=$(head -1 trace | cut -d' ' -f1)
assert_eq "$(grep -v "^$main " trace | grep -c openat)" 0 "the profiler's background thread opened no file: $(grep -v "^$main " trace | head -3)"
assert_match "$(grep -c 'statm' trace)" '^[12]$' "statm opened once (and again after the program closed it)"
# The background thread writes the peak snapshot ahead of the exit
# (peak_ahead: 4,096 stacks): SQLite's files for it (the profile, its
# journal) are moved above the program's range as soon as they are open.
# strace -ff: a file per thread (with -f, a call another thread interrupts
# is printed in two halves)
mkdir pt
(ulimit -n 1024; MP_OUT=p.db MP_QUIET=1 strace -ff -qq -e trace=openat,fcntl -o pt/t -E LD_PRELOAD=$LIB "$B/tests/peak_ahead" 8 >pout)
assert_match "$(cat pout)" "written ahead: yes" "peak_ahead: its peak written ahead, by the background thread"
main=$(ls pt | sort -t. -k2 -n | head -1)
# each open of the profile or its journal by another thread than the
# main one, and whether that thread's next call moved it
moves=$(for f in pt/*; do
    [ "$f" = "pt/$main" ] && continue
    awk 'pending != "" { print ($0 ~ "^fcntl\\(" pending ", F_DUPFD_CLOEXEC, 960\\)") ? "moved" : "left: " $0; pending = "" }
         /^openat\(.*\/p\.db/ { n = split($0, f, " = "); pending = f[n] }' "$f"
done | sort | uniq -c | tr -s ' ')
assert_match "$moves" '^ [0-9]+ moved$' "peak_ahead: each file SQLite opened for the background thread (the profile, its journal) moved above the range at once"
echo ok
