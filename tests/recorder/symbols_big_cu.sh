# A C++ translation unit of the kind that made the exit flush slow: 200
# functions in a namespace, each using std::vector, std::map and
# std::string (-O2 -g: the CU's top level holds every declaration of those
# headers, and each function the DIEs of everything inlined into it). The
# code scopes containing an address are found through per-scope indexes
# (common/resolve.c, first_scope) instead of walking the DIEs: every
# return address's inline chain (file:line, innermost first) must be the
# one addr2line -i gives for address - 1, and the functions' names ours.
. "$(dirname "$0")/../lib/lib.sh"
N=200
$PY3 - $N <<'PY' > big.cc
import sys
n = int(sys.argv[1])
print('#include <cstdio>\n#include <map>\n#include <string>\n#include <vector>\nnamespace app {')
for i in range(n):
    print(f'__attribute__((noinline)) size_t f{i}(int k) {{ std::vector<std::string> v; '
          f'v.push_back(std::to_string(k + {i})); std::map<int, int> m; m[k] = {i}; return v[0].size() + m.size(); }}')
print('}\nint main() {\n    size_t s = 0;')
for i in range(n):
    print(f'    s += app::f{i}({i});')
print('    printf("%zu\\n", s);\n    return 0;\n}')
PY
g++ -O2 -g -o big big.cc || fail "g++ failed"
plain_and_profiled a.db ./big
assert_eq "$(cat prof.out)" "$(cat plain.out)" "output unchanged"
# every function's allocations are there, each under its own name
assert_eq "$(q a.db "SELECT count(DISTINCT function) FROM stack_frames WHERE function GLOB 'app::f[0-9]*(int)'")" $N \
    "the $N functions named"
# our chains against addr2line's, for every return address in the program
$PY3 - a.db "$T/big" <<'PY' > compare.out || fail "comparison failed: $(tail -n 3 compare.out)"
import sqlite3, subprocess, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("""SELECT fr.offset, fr.inline_depth, fi.path, fr.line FROM frame fr
                     JOIN module m ON m.id = fr.module LEFT JOIN file fi ON fi.id = fr.file
                     WHERE m.path = ? ORDER BY fr.offset, fr.inline_depth DESC""", (sys.argv[2],)).fetchall()
ours = {}
for off, depth, path, line in rows:
    ours.setdefault(off, []).append(f"{path}:{line}" if path else "??:?")     # no line: addr2line's "??:?"
addrs = sorted(ours)
out = subprocess.run(["addr2line", "-a", "-i", "-e", sys.argv[2]], input="".join(f"{a - 1:#x}\n" for a in addrs),
                     capture_output=True, text=True, check=True).stdout.splitlines()
theirs, cur = {}, None
for l in out:
    if l.startswith("0x"):
        cur = int(l, 16) + 1
        theirs[cur] = []
    else:
        theirs[cur].append(l.split(" (discriminator")[0])
bad = [a for a in addrs if ours[a] != theirs.get(a)]
for a in bad[:3]:
    print(f"{a:#x}: ours {ours[a]} addr2line {theirs.get(a)}")
print(f"{len(addrs)} addresses, {sum(len(v) for v in ours.values())} frames, {len(bad)} differ")
sys.exit(1 if bad else 0)
PY
cat compare.out
assert_match "$(tail -n 1 compare.out)" ", 0 differ$" "every inline chain is addr2line's"
addresses=$(tail -n 1 compare.out | cut -d' ' -f1)
[ "$addresses" -ge $((2 * N)) ] || fail "only $addresses return addresses in the program (expected at least $((2 * N)))"
echo "  ok: $addresses return addresses, each in a function of its own"
