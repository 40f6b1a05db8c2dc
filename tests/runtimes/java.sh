#!/bin/bash
# Java runtime (Debian's default-jdk-headless, HotSpot): strings, collections
# and 4 named threads (tests/progs/runtimes/JavaThreads.java). JIT and GC make
# the allocations vary from run to run: output and exit status as native, one
# process with its info line, the JVM's own allocations (os::malloc) and the
# Java threads recorded, mpquery reads the profile.
# Before commit 69e2c97 (thread stack bounds learnt without calling
# pthread_getattr_np inside malloc) the profiled JVM hung, even java -version.
source "$(dirname "$0")/../lib/runtime.sh"
JDK=/usr/lib/jvm/default-java/bin      # default-jdk-headless's, whatever /usr/bin/java points to
need java default-jdk-headless $JDK/java
need java default-jdk-headless $JDK/javac
$JDK/javac -d . "$PROGS/JavaThreads.java" || fail "javac failed"
native_and_profiled 1 $JDK/java -cp . JavaThreads
assert_eq "$(cat profiled.rc)" 6 "exit status 6 (System.exit)"
has_allocations a.db 1000
assert_match "$(q a.db "SELECT exe || ' ' || cmdline FROM process")" "/bin/java .*java -cp \. JavaThreads$" "the process row: the JVM running JavaThreads"
n=$(by_function a.db 'os::malloc*' | awk -F'|' '{ n += $2 } END { print n }')   # 2 overloads
[ "${n:-0}" -gt 1000 ] || fail "os::malloc (the JVM's allocation function): $n calls, expected more than 1000"
echo "  ok: os::malloc, the JVM's own allocations: $n calls"
assert_eq "$(q a.db "SELECT group_concat(name, ' ') FROM (SELECT name FROM thread WHERE name GLOB 'worker?' ORDER BY name)")" \
    "worker0 worker1 worker2 worker3" "the 4 Java threads, by name"
