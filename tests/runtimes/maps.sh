#!/bin/bash
# With DEBUGINFOD_URLS set (to a closed port), a profiled program never loads
# libdebuginfod, nor an HTTP or TLS library it did not load natively, never
# connects and never writes a debuginfod cache, even when its frames have no
# debug info: a stripped C program, whose atexit handler copies its maps
# (tests/progs/runtimes/maps_at_exit.c), and node -e, which does the same in
# its exit event. The recorder's exit snapshot (where symbols are resolved)
# runs after atexit handlers, so the whole run is also traced: strace -f
# sees every openat (a library is opened before it is mapped) and connect.
source "$(dirname "$0")/../lib/runtime.sh"
need strace strace /usr/bin/strace
need debuginfod libdebuginfod1 /usr/lib/x86_64-linux-gnu/libdebuginfod.so.1   # what libdwfl would load
export DEBUGINFOD_URLS=http://127.0.0.1:9 HOME=$T/home
mkdir -p "$HOME"
NET_LIBS='lib(debuginfod|curl|ssl|crypto|gnutls)[^/"]*\.so[^/" ]*'

# traced NAME DB|- [VAR=VALUE...] CMD...: CMD under strace -f, tracing openat
# and connect into NAME.trace; with a DB, under the recorder (strace -E sets
# the preload for the traced program, not for strace). NAME.out, .err, .rc.
traced() {
    local name=$1 db=$2 rc; shift 2
    local opts=(--seccomp-bpf -f -qq -e trace=connect,openat -o "$name.trace")   # bpf: other calls untraced
    [ "$db" != - ] && opts+=(-E "LD_PRELOAD=$LIB" -E "MP_OUT=$db")
    while [[ $1 == *=* ]]; do opts+=(-E "$1"); shift; done
    timeout -k 5 $RUN_TIMEOUT strace "${opts[@]}" "$@" >"$name.out" 2>"$name.err"
    rc=$?
    echo $rc >"$name.rc"
    [ $rc != 124 ] && [ $rc != 137 ] || fail "$name: did not end in $RUN_TIMEOUT s"
    [ $rc -le 128 ] || { tail -n 5 "$name.err" >&2; fail "$name: died by signal $((rc - 128))"; }
}

# net_libs FILE: the network libraries a trace opened (successfully) or a maps
# copy has mapped, one per line
net_libs() { grep -v ENOENT "$1" | grep -oE "/[^\" ]*/$NET_LIBS" | sort -u; }

# no_network NATIVE PROFILED MAPS_NATIVE MAPS_PROFILED
no_network() {
    local nat=$1 prof=$2
    assert_eq "$(grep -c ' connect(' "$prof.trace")" "$(grep -c ' connect(' "$nat.trace")" "$prof: no connect() (as many as native)"
    assert_eq "$(grep -c 'libdebuginfod' "$prof.trace")" 0 "$prof: libdebuginfod never opened (not even tried)"
    assert_eq "$(comm -13 <(net_libs "$nat.trace") <(net_libs "$prof.trace"))" "" \
        "$prof: no network library opened that the native run did not open"
    assert_eq "$(comm -13 <(net_libs "$3") <(net_libs "$4"))" "" \
        "$prof: no network library mapped at exit that the native run did not map"
    assert_eq "$(ls -A "$HOME")" "" "$prof: nothing written in \$HOME (no .cache/debuginfod_client)"
}

# a stripped C program: no symbols, no debug info anywhere for its frames
/usr/bin/gcc -O2 -g -o maps_at_exit "$PROGS/maps_at_exit.c" || fail "gcc failed"
strip maps_at_exit
traced native - ./maps_at_exit native.maps
traced profiled "$T/a.db" ./maps_at_exit profiled.maps
same_as_native native profiled "$T/a.db" 1
assert_match "$(cat profiled.maps)" "/libmallocprof\.so$" "the maps copy was taken in the profiled process"
no_network native profiled native.maps profiled.maps
assert_eq "$(q a.db "SELECT ncalls, memtot FROM stack_totals WHERE path LIKE '%/maps_at_exit+0x%' AND memtot = 64 * ncalls")" \
    "100|6400" "the stripped program's 100 blocks, its frames as module+offset"

# node -e: Debian's, and /usr/bin/node if it is another vendor's
JS="const fs = require('fs'), out = process.argv[1], a = [];
for (let i = 0; i < 100000; i++) a.push({ i, s: 'x' + i });
process.on('exit', () => fs.writeFileSync(out, fs.readFileSync('/proc/self/maps')));
console.log(a.length);"
check_node() {
    local name=$1 node=$2; shift 2
    traced native_$name - "$@" "$node" -e "$JS" native_$name.maps
    traced profiled_$name "$T/$name.db" "$@" "$node" -e "$JS" profiled_$name.maps
    same_as_native native_$name profiled_$name "$T/$name.db" 1
    assert_match "$(cat profiled_$name.maps)" "/libmallocprof\.so$" "$name: the maps copy was taken in the profiled process"
    no_network native_$name profiled_$name native_$name.maps profiled_$name.maps
}
debian_node
check_node node "$NODE" "${NODE_ENV[@]}"
if [ "$NODE" != /usr/bin/node ] && [ -x /usr/bin/node ]; then
    check_node usr_bin_node /usr/bin/node
fi
