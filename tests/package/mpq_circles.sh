# mpquery's files call in one direction (issue 42): no two files of
# mpquery/ call each other, directly or around a circle. The graph is read
# from the objects with nm (tools/filecycles.py: a file calls another when
# it uses a symbol the other defines); each strongly connected group of
# more than one file fails, named with its arrows and their symbols, unless
# ALLOWED below lists it with its reason (none today; the list only shrinks).
. "$(dirname "$0")/../lib/lib.sh"
cd "$ROOT" || fail "no $ROOT"
ALLOWED=$T/allowed      # "a.c b.c  why they must call each other", one a line
: > "$ALLOWED"

# the checker itself, on a circle planted by hand: a.c and b.c call each
# other, c.c calls a.c only (in no circle), d.c alone
mkdir "$T/obj"
printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' > "$T/a.c"
printf 'int a(int);\nint b(int x) { return a(x); }\n' > "$T/b.c"
printf 'int a(int);\nint c(void) { return a(1); }\n' > "$T/c.c"
printf 'int d(void) { return 4; }\n' > "$T/d.c"
for f in a b c d; do cc -c "$T/$f.c" -o "$T/obj/$f.o" || fail "cc $f.c"; done
out=$($PY3 tools/filecycles.py "$T/obj" 2>&1); rc=$?
assert_eq "$rc $(echo "$out" | grep FAIL)" "1 FAIL: a.c b.c call each other: a.c -> b.c (b); b.c -> a.c (a)" \
    "tools/filecycles.py on a circle planted by hand"
echo "a.c b.c  planted" > "$T/obj.allowed"
$PY3 tools/filecycles.py "$T/obj" "$T/obj.allowed" > /dev/null || fail "an allowed circle fails"
rm "$T/obj/b.o"
echo "$($PY3 tools/filecycles.py "$T/obj" "$T/obj.allowed" 2>&1)" | grep -q "FAIL: a.c b.c is listed as allowed but no longer" ||
    fail "an allowed group that is no longer a circle passes"

# mpquery's objects, as make built them
for c in mpquery/*.c; do
    o=$B/obj/mpquery/$(basename "$c" .c).o
    [ -f "$o" ] && [ ! "$o" -ot "$c" ] || fail "$o is missing or older than $c: run make first"
done
$PY3 tools/filecycles.py "$B/obj/mpquery" "$ALLOWED" || fail "files of mpquery/ call each other in a circle (above)"
