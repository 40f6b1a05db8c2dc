#!/bin/bash
# Node runtime (Debian's nodejs, V8): objects, JSON, a Map and 2 worker
# threads (tests/progs/runtimes/node_workers.js). JIT and GC make the
# allocations vary from run to run: output and exit status as native, one
# process with its info line, the threads recorded, mpquery reads the profile.
# Where /usr/bin/node is another vendor's node (NodeSource's package has the
# name nodejs too), Debian's is the one tests/lib/runtime_deps.sh unpacked, and
# /usr/bin/node is profiled as well.
# Before commit 69e2c97 the profiled node (either) died of SIGSEGV at exit.
source "$(dirname "$0")/../lib/runtime.sh"
debian_node
P=$PROGS/node_workers.js

# check_node NAME NODE [VAR=VALUE...]: one native and one profiled run, compared
check_node() {
    local name=$1 node=$2; shift 2
    run_native native_$name "$@" "$node" "$P"
    run_profiled profiled_$name "$T/$name.db" "$@" "$node" "$P"
    same_as_native native_$name profiled_$name "$T/$name.db" 1
    assert_eq "$(cat profiled_$name.rc)" 7 "$name: exit status 7 (process.exitCode)"
    has_allocations $name.db 10000
    assert_eq "$(q $name.db "SELECT exe FROM process")" "$(readlink -f "$node")" "$name: the process row names $node"
    assert_eq "$(q $name.db "SELECT count(*) >= 3 FROM thread")" 1 "$name: the main thread and the 2 workers at least"
}
check_node debian "$NODE" "${NODE_ENV[@]}"
if [ "$NODE" != /usr/bin/node ] && [ -x /usr/bin/node ]; then
    echo "# /usr/bin/node: $(/usr/bin/node --version), package nodejs $(dpkg-query -W -f='${Version}' nodejs 2>/dev/null)"
    check_node usr_bin /usr/bin/node
fi
