#!/bin/bash
# The libFuzzer target of the rules parser, the rules and the writers
# (tests/fuzz/fuzz_rules.c, built with ASan and UBSan): hostile inputs
# (catastrophic regexes, 64 KB+ names, binary garbage, unterminated
# brackets, what the fuzzer found) run clean, then 20 s of fuzzing from the
# seed corpus (fixed seed) find no crash, leak, sanitizer report, broken
# invariant or slow input. `make fuzz` fuzzes longer.
source "$(dirname "$0")/../lib/lib.sh"
make -s -C "$ROOT" build/fuzz/fuzz_rules >make.log 2>&1 || { cat make.log; fail "cannot build the fuzzer"; }
F=$B/fuzz/fuzz_rules

# input format: rules, NUL, names separated by NULs
mkdir hostile
python3 - <<'PY'
import random
def put(name, rules, names=None):
    data = rules.encode() if isinstance(rules, str) else rules
    if names is not None:
        data += b"\0" + b"\0".join(n.encode() if isinstance(n, str) else n for n in names)
    open("hostile/" + name, "wb").write(data)
a64 = "a" * 65536
put("catastrophic", "replace (a*)*b => x\ndrop (a|aa)*c\nreplace (.*)(.*)(.*)x => Y\nreplace ^(a*)*$ => <all a>\n",
    [a64, a64[:-1] + "b", "a" * 30000 + "c", "ab" * 20000])
vec = "std::vector<int, std::allocator<int> >, "
put("long_names", "replace std::vector<([^<>]+), std::allocator<[^<>]+> > => std::vector<\\1>\nroot ^main$\n",
    ["b" * 100000, "ns::f<" + vec * 1500 + "int>()",
     "\u20ac" * 30000, ";" * 70000, "main"])
random.seed(1)
put("garbage", bytes(random.randrange(256) for _ in range(8192)))
# back-references are refused (regexec backtracks for minutes on them)
put("backref", "replace std::vector<(.*), std::allocator<\\1 > > => V\nreplace (.*)x\\1 => y\n",
    ["ns::f<" + vec * 100 + "int>()", "ab" * 2000 + "x" + "ab" * 2000])
put("garbage_names", "replace . => \\0\\0\n", [bytes(random.randrange(1, 256) for _ in range(random.randrange(300))) for _ in range(40)])
put("control_names", "replace x => ;\n", ["semi;colon\ttab\nnewline\rcr\x7fdel", "x\x01\x1f", "", "\xff\xfe"])
for i, bad in enumerate(["drop [abc", "replace a[ => x", "prune [[:alpha:]", "root [[.a", "replace ([[:alpha:] => y",
                         "drop (abc", "replace a{2 => z", "drop \\", "replace a => \\", "replace (a) => \\2", "drop [a]]]"]):
    put("bracket%d" % i, "replace ^m => M\n" + bad + "\ndrop x\n", ["main", "abc"])
# regexes regcomp cannot compile in bounded time, memory or stack (refused
# since; the first was found by this fuzzer: out of memory)
put("nested_plus", "drop ^tbb::(detail|int" + "+" * 100 + "ernal)::\n", ["tbb::internal::x"])
put("nullable_repeat", "drop ((a?|b?)+){30}\nreplace (()?){4000} => x\nprune (a?){4000}\n", ["ab"])
put("stacked_stars", "root ^(main|_" + "*" * 100 + "Py)$\n", ["_Py", "main"])
put("nested_stars", "drop " + "(" * 99 + "a" + ")*" * 99 + "\n", ["aaa"])
put("row_stars", "drop ^" + "(a*)*" * 24 + "\n", ["aaa"])
put("deep_groups", "drop " + "(" * 30000 + "a" + ")" * 30000 + "\n", ["a"])
put("nul_only", b"\0")
put("empty_rules", "", ["", "", ""])
PY
start=$(date +%s.%N)
"$F" -timeout=30 hostile/* >hostile.log 2>&1 || { tail -n 40 hostile.log; fail "the fuzz target fails on a hostile input"; }
echo "# $(ls hostile | wc -l) hostile inputs: $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s"
echo "  ok: $(ls hostile | wc -l) hostile inputs run clean"

sh "$ROOT/tests/fuzz/seeds.sh" corpus
"$F" -seed=1 -max_total_time=20 -timeout=10 -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$B/fuzz/" corpus >fuzz.log 2>&1; rc=$?
if [ $rc != 0 ]; then
    grep -m1 -A40 -E '^==[0-9]+==|broken invariant|runtime error|ALARM|deadly signal' fuzz.log | head -50
    fail "the fuzzer found a failing input (exit $rc), saved as $(ls -t "$B"/fuzz/crash-* "$B"/fuzz/leak-* "$B"/fuzz/timeout-* "$B"/fuzz/oom-* 2>/dev/null | head -1)"
fi
echo "# $(grep -o 'stat::number_of_executed_units: [0-9]*' fuzz.log | cut -d' ' -f2) inputs in 20 s, corpus $(ls corpus | wc -l) inputs, $(grep -o 'cov: [0-9]*' fuzz.log | tail -1)"
echo "  ok: 20 s of fuzzing: no crash, leak, sanitizer report or broken invariant"
