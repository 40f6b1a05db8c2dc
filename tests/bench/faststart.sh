#!/bin/bash
# `make bench`, processes that start fast (issue 44, item 3): what the
# recorder adds to a process that makes few allocations, the whole tree
# preloaded as `mpquery record` preloads it (the shell or make too):
#   true100   a shell loop running /bin/true 100 times
#   wc100     a shell loop running `wc -l /etc/passwd` 100 times
#   make      make -j2 -B of a 10-file C project (10 gcc, 10 cc1, 10 as, ld)
# Configurations, run round-robin (one run of each, BENCH_RUNS times, default
# 5), median wall time: native; full (full capture, the default); sync
# (full capture, MP_SYNC=1: each snapshot fdatasync'ed, the former
# default); stats (MP_STACKS=none). Each run writes a new profile.
# Printed: the native seconds, each configuration's ratio to native, the
# milliseconds full capture adds per process (the loops: (full - native) /
# 101 processes), and the targets (issue 44): <= 1 ms a process for the
# loops, make <= 1.5x, a "!" on each one missed.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LIB=${BENCH_LIB:-$ROOT/build/libmallocprof.so}     # BENCH_LIB: another build, to compare
RUNS=${BENCH_RUNS:-5}
die() { echo "bench faststart: $*" >&2; exit 1; }
[ -f "$LIB" ] || die "$LIB is missing: run 'make' first"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS=$RUNS: expected a positive number"
for tool in gcc make wc awk; do command -v $tool >/dev/null || die "$tool is not installed"; done
T=$(mktemp -d "${TMPDIR:-/tmp}/mpfast.XXXXXX") || die "cannot create a temporary directory"
trap 'rm -rf "$T"' EXIT
gcc -O2 -o "$T/timeit" "$HERE/timeit.c" || die "cannot build timeit"

# The project: 10 files of a few functions each, and their Makefile.
mkdir "$T/proj"
for i in 0 1 2 3 4 5 6 7 8 9; do
    cat >"$T/proj/f$i.c" <<EOF
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct item$i { char name[32]; int n; struct item$i *next; };
static struct item$i *push$i(struct item$i *head, const char *name, int n)
{
    struct item$i *it = malloc(sizeof *it);
    if (!it) return head;
    snprintf(it->name, sizeof it->name, "%s-%d", name, n);
    it->n = n;
    it->next = head;
    return it;
}
int sum$i(int count)
{
    struct item$i *head = NULL;
    int total = 0;
    for (int k = 0; k < count; k++) head = push$i(head, "item", k);
    while (head) {
        struct item$i *next = head->next;
        total += head->n + (int)strlen(head->name);
        free(head);
        head = next;
    }
    return total;
}
EOF
done
{
    echo '#include <stdio.h>'
    for i in 0 1 2 3 4 5 6 7 8 9; do echo "int sum$i(int);"; done
    echo 'int main(void) { int t = 0;'
    for i in 0 1 2 3 4 5 6 7 8 9; do echo "    t += sum$i(10);"; done
    echo '    printf("%d\n", t); return 0; }'
} >"$T/proj/main.c"
printf 'OBJS = main.o %s\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n%%.o: %%.c\n\t$(CC) -O2 -c $< -o $@\n' \
    "$(echo f0.o f1.o f2.o f3.o f4.o f5.o f6.o f7.o f8.o f9.o)" >"$T/proj/Makefile"

WORKLOADS=(true100 wc100 make)
command_of() {
    case $1 in
    true100) echo "bash -c 'for i in \$(seq 100); do /bin/true; done'" ;;
    wc100) echo "bash -c 'for i in \$(seq 100); do wc -l /etc/passwd; done'" ;;
    make) echo "make -s -B -j2 -C $T/proj" ;;
    esac
}
CONFIGS=(native full sync stats)
env_of() {
    case $1 in
    native) echo "" ;;
    full) echo "LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=$T/p.db" ;;
    sync) echo "LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=$T/p.db MP_SYNC=1" ;;
    stats) echo "LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=$T/p.db MP_STACKS=none" ;;
    esac
}
mkdir "$T/res"
for ((r = 0; r < RUNS; r++)); do
    for w in "${WORKLOADS[@]}"; do
        for c in "${CONFIGS[@]}"; do
            rm -f "$T/p.db"
            # shellcheck disable=SC2046
            eval env $(env_of "$c") '"$T/timeit"' '"$T/res/last"' $(command_of "$w") >/dev/null 2>"$T/err" \
                || die "$w ($c) failed: $(tail -3 "$T/err")"
            awk '{ print $1 }' "$T/res/last" >>"$T/res/$w.$c"
        done
    done
done
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "mallocprof bench faststart: median of $RUNS interleaved runs; wall time ratios to native; ! = target missed"
printf '%-9s %9s %9s %9s %9s %11s  %s\n' workload native full sync stats ms/process target
printf '%-9s %9s %9s %9s %9s %11s\n' "" s "" MP_SYNC=1 none "(full)"
for w in "${WORKLOADS[@]}"; do
    n=$(median "$T/res/$w.native")
    line=$(printf '%-9s %9.3f' "$w" "$n")
    for c in full sync stats; do line+=$(printf ' %9.2f' "$(awk -v a="$(median "$T/res/$w.$c")" -v b="$n" 'BEGIN { print a / b }')"); done
    full=$(median "$T/res/$w.full")
    if [ "$w" = make ]; then
        per=$(awk -v a="$full" -v b="$n" 'BEGIN { printf "%.1f", a / b }')
        miss=$(awk -v a="$full" -v b="$n" 'BEGIN { print (a / b > 1.5 ? "!" : "") }')
        line+=$(printf ' %11s  %s' - "make<=1.5x$miss")
    else
        per=$(awk -v a="$full" -v b="$n" 'BEGIN { printf "%.2f", (a - b) * 1000 / 101 }')
        miss=$(awk -v p="$per" 'BEGIN { print (p > 1 ? "!" : "") }')
        line+=$(printf ' %11s  %s' "$per" "<=1ms$miss")
    fi
    echo "$line"
done
