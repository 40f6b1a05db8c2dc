#!/bin/sh
# seeds.sh DIR: writes the seed corpus of fuzz_rules into DIR: each
# filters/*.rules as is (its lines are then the names), and each followed by
# a NUL and typical frame names (the fixtures' and the example rules' own,
# plus names that need escaping), NUL-separated: the input format of
# tests/fuzz/fuzz_rules.c.
set -e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$1"
names="$1/.names"
{
    # function names of the fixture profiles: (ID, 'NAME') in INSERT INTO function
    grep -h 'INSERT INTO function' "$ROOT"/tests/lib/fixtures/*.sql \
        | grep -o "([0-9]*, '[^']*')" | sed "s/^([0-9]*, '//; s/')\$//"
    cat <<'EOF'
operator new(unsigned long)
std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_construct<char const*>(char const*, char const*)
tbb::detail::d1::function_task<Reco::run()::{lambda()#1}>::execute(tbb::detail::d1::execution_data&)
TClass::New(void*)
_PyEval_EvalFrameDefault
PyObject_Malloc
[tag] event 17
libfoo.so+0x1a2b
semi;colon	tab
EOF
} | tr '\n' '\0' > "$names"
for f in "$ROOT"/filters/*.rules; do
    base=$(basename "$f" .rules)
    cp "$f" "$1/$base.rules"
    { cat "$f"; printf '\000'; cat "$names"; } > "$1/$base.names"
done
rm -f "$names"
