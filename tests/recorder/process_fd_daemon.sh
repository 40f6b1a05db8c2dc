# A daemon closes every descriptor and opens its own files (issue 25,
# item 1): libunwind's pipe (made before) was closed with them and, at its
# next check of an address, its failed read closed the program's files on
# those numbers and made its pipe there (MP_UNWIND=libunwind: every write
# failed); libdwfl closed the files it kept (fd 9) when the recorder ended
# its session at a dlclose: the program's file by then (MP_UNWIND=cfi).
# Now libunwind's pipe2 comes to the recorder, which puts the pipe above
# the program's range, and libdwfl keeps no descriptor of a module (read
# into memory) and its debug files' above the program's range too.
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
echo ok
