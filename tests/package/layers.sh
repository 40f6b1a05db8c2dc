# The recorder's layers call only downward (issue 42): prof/entry/ →
# process/ → snapshot/ → core/ → capture/ → base/. For each object of
# build/obj/prof/LAYER/, the symbols it uses (nm) that a higher layer's
# object defines, and for each file of prof/LAYER/, the headers it includes
# from a higher layer's folder: each is one line "FILE: calls NAME defined
# in LAYER/FILE" or "FILE: includes HEADER of layer LAYER", and the test
# fails. A name libc defines (malloc, mmap, exit: entry/ defines them in
# libc's place) is a call into libc, not up. The exceptions still allowed
# are listed below, each with its reason; one that no longer occurs fails
# too, so the list only shrinks. The checker is tests/lib/layers.py.
. "$(dirname "$0")/../lib/lib.sh"
cd "$ROOT" || fail "no $ROOT"
LIBC=$(${CC:-cc} -print-file-name=libc.so.6)
[ -f "$LIBC" ] || fail "no libc.so.6 ($LIBC)"
ls build/obj/prof/entry/*.o >/dev/null 2>&1 || fail "build/obj/prof/entry/*.o: build first (make)"

# the checker itself, on a tree made here with one upward call, one upward
# include, a call to malloc (entry's, libc's name) and a downward call
mkdir -p "$T/t/prof/base" "$T/t/prof/core" "$T/t/prof/entry" "$T/t/obj/prof/base" "$T/t/obj/prof/core" "$T/t/obj/prof/entry"
printf 'int core_count(void);\n' > "$T/t/prof/core/count.h"
printf '#include "count.h"\n#include <stdlib.h>\nint base_low(void) { return core_count() + (malloc(1) != 0); }\n' > "$T/t/prof/base/low.c"
printf 'int base_low(void);\nint core_count(void) { return base_low(); }\n' > "$T/t/prof/core/count.c"
printf '#include <stddef.h>\nvoid *malloc(size_t n) { (void)n; return NULL; }\n' > "$T/t/prof/entry/interpose.c"
for f in base/low core/count entry/interpose; do
    ${CC:-cc} -c -I"$T/t/prof/core" "$T/t/prof/$f.c" -o "$T/t/obj/prof/$f.o" || fail "cc $f.c"
done
: > "$T/none"
out=$($PY3 tests/lib/layers.py "$T/t" "$T/t/obj" "$T/none" "$LIBC"); rc=$?
assert_eq "$rc $out" "1 prof/base/low.c: calls core_count defined in core/count.c
prof/base/low.c: includes count.h of layer core
upward references: 2, of which 0 allowed as listed exceptions" "the checker on a planted upward call and include"
echo "prof/base/low.c core_count planted" > "$T/one"
echo "prof/base/low.c count.h planted" >> "$T/one"
echo "prof/base/gone.c gone planted, no longer there" >> "$T/one"
out=$($PY3 tests/lib/layers.py "$T/t" "$T/t/obj" "$T/one" "$LIBC"); rc=$?
assert_eq "$rc $out" "1 prof/base/gone.c: gone is allowed as an exception but no longer occurs: take it off the list
upward references: 2, of which 2 allowed as listed exceptions" "the checker with a stale exception"

# FILE NAME reason: the upward references still allowed (none since issue 42:
# an entry here needs its reason and a plan to remove it)
cat > "$T/allow" <<'ALLOW'
ALLOW
out=$($PY3 tests/lib/layers.py . build/obj "$T/allow" "$LIBC"); rc=$?
if [ $rc != 0 ]; then
    echo "$out" | sed '$!s/^/FAIL: /' >&2
    fail "an upward reference between the recorder's layers (above)"
fi
echo "  ok: $(echo "$out" | tail -1)"
