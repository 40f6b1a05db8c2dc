#!/bin/bash
# run: waits
# mpquery record --pid and a program's own dlopen while attached: dlopen is
# rebound so that the modules it brings are rebound too, yet the search for
# a bare name stays the caller's (its DT_RUNPATH with $ORIGIN, here the only
# place the plugin is): the program loads its plugin as it does unattached,
# prints the same, and the plugin's allocations are in the profile.
source "$(dirname "$0")/../lib/lib.sh"

[ "$(uname -m)" = x86_64 ] || { echo "# not x86-64: record --pid is x86-64 only"; exit 0; }
mkdir -p plugins
cat > plug.c <<'C'
#include <stdlib.h>
#include <string.h>
static char *kept[10];
int plug_alloc(int n)        /* n blocks of 1000 bytes, kept */
{
    for (int i = 0; i < n && i < 10; i++) { kept[i] = malloc(1000); memset(kept[i], 1, 1000); }
    return n;
}
C
cat > host.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "load", 4)) { printf("%s", line); fflush(stdout); continue; }
        void *h = dlopen("libplug_rp.so", RTLD_NOW);
        if (!h) { printf("dlopen failed: %s\n", dlerror()); fflush(stdout); continue; }
        int (*f)(int) = (int (*)(int))dlsym(h, "plug_alloc");
        printf("loaded, %d blocks\n", f(7));
        fflush(stdout);
    }
    return 4;
}
C
gcc -O0 -g -fPIC -shared -o plugins/libplug_rp.so plug.c && gcc -O0 -g -o host host.c -Wl,--enable-new-dtags,-rpath,'$ORIGIN/plugins' \
    || fail "cannot build the host and its plugin"
readelf -d host | grep -q 'RUNPATH.*\$ORIGIN/plugins' || fail "the host has no DT_RUNPATH"

# unattached: the reference output
printf 'a\nload\nb\n' | ./host > plain.txt
plain_rc=$?
assert_eq "$(cat plain.txt)" "a
loaded, 7 blocks
b" "the host unattached"

mkfifo in
on_exit "rm -f $T/in"       # a fifo: the profile check at the end opens every file
(./host < in > served.txt; echo $? > served.rc) &
exec 7> in
echo a >&7
sleep 0.3
pid=$(test_pgrep -f "^\./host\$") || fail "the host did not start"
$MPQ record -q --pid $pid --duration 3 -o p.db &
rec=$!
for i in $(seq 1 100); do grep -q libmallocprof /proc/$pid/maps 2>/dev/null && break; sleep 0.05; done
grep -q libmallocprof /proc/$pid/maps || fail "the library was not loaded in 5 s"
sleep 0.5           # mp_attach rebinds after dlopen returns
echo load >&7
echo b >&7
wait $rec || fail "record --pid failed"
exec 7>&-
wait
assert_eq "$(cat served.txt)" "$(cat plain.txt)" "the host's output while attached"
assert_eq "$(cat served.rc)" "$plain_rc" "the host's exit status"
# the plugin was rebound on its load: its 7 blocks of 1000 bytes, live
assert_eq "$(by_function p.db plug_alloc)" "plug_alloc|7|7000|0|7000" "the plugin's allocations in the profile"
echo "  ok: the plugin found through the host's RUNPATH while attached, and its allocations recorded"
