#!/bin/bash
# The commands that load profiles re-exec mpquery once, with
# GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (main.c): the re-executed process
# keeps mpquery's name (its comm, what ps, pgrep, top and the OOM killer's
# log show), not "exe" (/proc/self/exe's). Seen from the pager, whose
# parent is the mpquery process that writes the text: on a terminal
# (script(1)), PAGER reads /proc/$PPID/comm and environ.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
command -v script >/dev/null || fail "script(1) (util-linux) is needed for the terminal"
fixture basic >/dev/null
name=$(basename "$MPQ" | cut -c1-15)            # comm: the executable's name, 15 bytes at most
export LINES=1                                  # the pager runs only for an output longer than the screen
pager='cat /proc/$PPID/comm > comm.txt; tr "\0" "\n" < /proc/$PPID/environ | grep -E "^(MPQUERY_NO_REEXEC|GLIBC_TUNABLES)=" | sort > env.txt; cat >/dev/null'
for cmd in "top basic.db" "show basic.db 8" "diff basic.db basic.db"; do
    rm -f comm.txt env.txt
    env -u MPQUERY_NO_REEXEC -u GLIBC_TUNABLES PAGER="$pager" script -qec "$MPQ $cmd" /dev/null </dev/null >/dev/null \
        || fail "mpquery $cmd on a terminal failed"
    assert_eq "$(cat env.txt | tr '\n' ' ')" "GLIBC_TUNABLES=glibc.malloc.hugetlb=1 MPQUERY_NO_REEXEC=1 " \
      "mpquery $cmd: the process writing is the re-executed one"
    assert_eq "$(cat comm.txt)" "$name" "mpquery $cmd: its name is the executable's"
done
# the same name without the re-exec
rm -f comm.txt
MPQUERY_NO_REEXEC=1 PAGER="$pager" script -qec "$MPQ top basic.db" /dev/null </dev/null >/dev/null
assert_eq "$(cat comm.txt)" "$name" "MPQUERY_NO_REEXEC=1: no re-exec, the same name"
