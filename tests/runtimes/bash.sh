#!/bin/bash
# Bash runtime (Debian's bash): a loop of builtins filling an indexed and an
# associative array, then a pipeline of 3 subshells, the last exec'ing bash
# (tests/progs/runtimes/bash_work.sh): output and exit status as native, 5
# processes each with its info line, the arrays' allocations counted exactly.
source "$(dirname "$0")/../lib/runtime.sh"
need bash bash /usr/bin/bash
P=$PROGS/bash_work.sh
native_and_profiled 5 /usr/bin/bash "$P"
assert_eq "$(cat profiled.rc)" 8 "exit status 8"
root="SELECT id FROM process WHERE ppid NOT IN (SELECT pid FROM process)"
assert_eq "$(q a.db "SELECT count(*) FROM process WHERE ppid = (SELECT pid FROM process WHERE id IN ($root))")" 4 \
    "4 process rows are children of the script's shell"
assert_eq "$(q a.db "SELECT ls.reason, p.cmdline LIKE '/usr/bin/bash -c %', count(*) FROM process p
                     JOIN last_snapshot ls ON ls.process = p.id GROUP BY 1, 2 ORDER BY 1, 2")" "exec|0|1
exit|0|3
exit|1|1" "the script's shell and 2 subshells exit, the third subshell execs bash -c"
in_root_shell="s.process IN ($root)"
assert_eq "$(q a.db "SELECT SUM(ncalls), SUM(memtot), SUM(nfree), SUM(memlive) FROM last_sample s JOIN stack_path p USING (stack)
                     WHERE $in_root_shell AND p.path LIKE '%;assign_array_element;%;array_insert;array_create_element;xmalloc'")" \
    "6000|124890|0|124890" "a[i]=...: 3000 elements of 32 bytes and their 3000 values (28890 bytes)"
assert_eq "$(q a.db "SELECT SUM(ncalls), SUM(memtot), SUM(nfree), SUM(memlive) FROM last_sample s JOIN stack_path p USING (stack)
                     WHERE $in_root_shell AND p.path LIKE '%;assign_array_element;%;assoc_insert;%'")" \
    "6001|134768|0|134768" "seen[key]=1: 3000 buckets of 32 bytes, 3000 values of 2, the table grown to 32768"
has_allocations a.db 10000
