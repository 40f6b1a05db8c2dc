#!/bin/sh
# ns_stubs.sh LIBS -- OBJECTS > ns_stubs.S: the stubs by which the recorder
# calls the libraries of its own namespace (prof/base/ns.c): one for every
# symbol the OBJECTS leave undefined that one of LIBS (shared libraries)
# defines. A function's stub jumps through mp_ns_fn[i] (first to its lazy
# entry, which calls mp_ns_resolve); a variable (only pointer-sized ones
# are possible) is a copy that mp_ns_load fills. x86-64 only.
set -e
libs=
while [ $# -gt 0 ] && [ "$1" != -- ]; do libs="$libs $1"; shift; done
[ "$1" = -- ] || { echo "usage: ns_stubs.sh LIBS -- OBJECTS" >&2; exit 2; }
shift
[ "$(uname -m)" = x86_64 ] || { echo "ns_stubs.sh: $(uname -m): only x86_64 stubs are written" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C
nm -u "$@" 2>/dev/null | awk 'NF == 2 && $1 == "U" { print $2 }' | sort -u > "$tmp/undef"
nm -g --defined-only "$@" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u > "$tmp/def"
comm -23 "$tmp/undef" "$tmp/def" > "$tmp/need"
# name type size, from each library's dynamic symbols (default versions)
for l in $libs; do
    nm -D -S --defined-only "$l" | awk 'NF == 4 { n = $4; sub(/@.*/, "", n); print n, $3, $2 }'
done | sort -u -k1,1 > "$tmp/have"
join "$tmp/need" "$tmp/have" > "$tmp/use"
[ -s "$tmp/use" ] || { echo "ns_stubs.sh: no symbol of$libs is used" >&2; exit 1; }
awk '
$2 ~ /^[TtWi]$/ { fn[nf++] = $1; next }
$2 ~ /^[DdBbVR]$/ {
    if ($3 !~ /^0*8$/) { printf "ns_stubs.sh: %s: a variable of 0x%s bytes (only pointers)\n", $1, $3 > "/dev/stderr"; bad = 1 }
    var[nv++] = $1; next }
{ printf "ns_stubs.sh: %s: symbol type %s\n", $1, $2 > "/dev/stderr"; bad = 1 }
END {
    if (bad) exit 1
    print "/* Made by tools/ns_stubs.sh: the libraries of the profiler'"'"'s namespace (prof/base/ns.c). */"
    print "\t.text"
    for (i = 0; i < nf; i++) {
        printf "\t.p2align 4\n\t.globl %s\n\t.hidden %s\n\t.type %s, @function\n%s:\n\tjmp *mp_ns_fn+%d(%%rip)\n\t.size %s, .-%s\n",
            fn[i], fn[i], fn[i], fn[i], 8 * i, fn[i], fn[i]
        printf ".Llazy_%d:\n\tmovl $%d, %%r11d\n\tjmp .Lresolve\n", i, i
    }
    # the arguments saved around mp_ns_resolve (r11: the index); the stack
    # 16-aligned at the call (8 on entry, 64 pushed, 136 reserved)
    print ".Lresolve:"
    print "\tpushq %rdi\n\tpushq %rsi\n\tpushq %rdx\n\tpushq %rcx\n\tpushq %r8\n\tpushq %r9\n\tpushq %rax\n\tpushq %r11"
    print "\tsubq $136, %rsp"
    for (r = 0; r < 8; r++) printf "\tmovdqu %%xmm%d, %d(%%rsp)\n", r, 16 * r
    print "\tmovl %r11d, %edi\n\tcall mp_ns_resolve\n\tmovq %rax, %r10"
    for (r = 0; r < 8; r++) printf "\tmovdqu %d(%%rsp), %%xmm%d\n", 16 * r, r
    print "\taddq $136, %rsp"
    print "\tpopq %r11\n\tpopq %rax\n\tpopq %r9\n\tpopq %r8\n\tpopq %rcx\n\tpopq %rdx\n\tpopq %rsi\n\tpopq %rdi"
    print "\tjmp *%r10"
    print "\t.section .rodata.str1.1, \"aMS\", @progbits, 1"
    for (i = 0; i < nf; i++) printf ".Lname_%d:\n\t.string \"%s\"\n", i, fn[i]
    for (i = 0; i < nv; i++) printf ".Lvname_%d:\n\t.string \"%s\"\n", i, var[i]
    print "\t.data\n\t.p2align 3"
    print "\t.globl mp_ns_fn\n\t.hidden mp_ns_fn\nmp_ns_fn:"
    for (i = 0; i < nf; i++) printf "\t.quad .Llazy_%d\n", i
    for (i = 0; i < nv; i++) printf "\t.globl %s\n\t.hidden %s\n\t.type %s, @object\n\t.size %s, 8\n%s:\n\t.quad 0\n", var[i], var[i], var[i], var[i], var[i]
    print "\t.section .data.rel.ro, \"aw\"\n\t.p2align 3"
    print "\t.globl mp_ns_names\n\t.hidden mp_ns_names\nmp_ns_names:"
    for (i = 0; i < nf; i++) printf "\t.quad .Lname_%d\n", i
    print "\t.globl mp_ns_data_names\n\t.hidden mp_ns_data_names\nmp_ns_data_names:"
    for (i = 0; i < nv; i++) printf "\t.quad .Lvname_%d\n", i
    print "\t.globl mp_ns_data_slot\n\t.hidden mp_ns_data_slot\nmp_ns_data_slot:"
    for (i = 0; i < nv; i++) printf "\t.quad %s\n", var[i]
    print "\t.section .rodata\n\t.p2align 2"
    printf "\t.globl mp_ns_count\n\t.hidden mp_ns_count\nmp_ns_count:\n\t.long %d\n", nf
    printf "\t.globl mp_ns_data_count\n\t.hidden mp_ns_data_count\nmp_ns_data_count:\n\t.long %d\n", nv
    print "\t.section .note.GNU-stack, \"\", @progbits"
}' "$tmp/use"
