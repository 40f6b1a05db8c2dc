# C unit tests (tests/unit/NAME.c, built by `make unit` with ASan and UBSan
# into build/unit/NAME). The recorder's data structures: the pointer map
# on one thread (ptrmap), its hand-over from lone-thread mode to locking
# (ptrmap_handover, also with a third thread arriving during it), stack
# interning (stacks), the schema check's built-in reference (dbguard_ref).
# mpquery's containers (mpq_*): the id map (mpq_idmap), the string table
# (mpq_strtab), top-N selection (mpq_top) and units (mpq_units); record --pid's
# opening of a process's files through its root (mpq_target_fs), its seccomp
# check's BPF interpreter and combination of filters (mpq_seccomp), the
# reader of a libc's dynamic symbols on hostile copies (mpq_elf_dynsym).
# Each program prints an "ok:" line per behaviour it checked and stops at the first failed check, naming file:line and the expression.
. "$(dirname "$0")/../lib/lib.sh"
make -s -C "$ROOT" unit >make.log 2>&1 || { cat make.log; fail "make unit failed"; }
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=99
for src in "$ROOT"/tests/unit/*.c; do
    t=$(basename "$src" .c)
    case $t in stubs|mpq_stubs) continue ;; esac
    [ -x "$B/unit/$t" ] || fail "make unit did not build build/unit/$t"
    echo "$t:"
    "$B/unit/$t"; rc=$?
    [ $rc -eq 0 ] || fail "unit test $t exited $rc"
done
# a third thread sharing the map while the hand-over is under way (it used
# to go in beside the lone thread's unlocked operation)
echo "ptrmap_handover --third-sharer:"
"$B/unit/ptrmap_handover" --third-sharer; rc=$?
[ $rc -eq 0 ] || fail "unit test ptrmap_handover --third-sharer exited $rc"
