# The shape of the source (issue 42): no .c/.h file of prof/ (its layers),
# common/, mpquery/, tools/ over 500 lines; no C function there over 60 lines
# (tools/funclen.py counts from the line of its name to its closing brace);
# docs/layout.md's tree names every source file of prof/ (its layers),
# common/, mpquery/, tools/, schema/ and every folder of tests/, and names nothing
# that does not exist. Each failure names the file (and the function).
. "$(dirname "$0")/../lib/lib.sh"
cd "$ROOT" || fail "no $ROOT"
SRC=$(ls prof/*.[ch] prof/*/*.[ch] common/*.[ch] mpquery/*.[ch] tools/*.[ch] 2>/dev/null)
bad=0
for f in $SRC; do
    n=$(wc -l < "$f")
    if [ "$n" -gt 500 ]; then echo "FAIL: $f has $n lines (at most 500)" >&2; bad=1; fi
done
[ $bad = 0 ] && echo "  ok: $(echo $SRC | wc -w) files of prof/, common/, mpquery/, tools/ at most 500 lines each"

# the checker itself, on functions counted by hand (a plain one, one with
# an attribute and a brace in a string, a struct and an initializer that
# are not functions)
cat > "$T/fl.c" <<'EOF'
struct s { int a; };
static const int tab[] = { 1, 2 };
static int one(int x)
{
    return x;
}

static inline int __attribute__((always_inline)) two(const char *s,
                                                     int n) {
    /* } */
    if (s[0] == '}') return n;
    return "}"[0];
}
EOF
assert_eq "$($PY3 tools/funclen.py "$T/fl.c" | sed "s|$T/||")" "fl.c:3: one 4
fl.c:8: two 6" "tools/funclen.py on a file counted by hand"
out=$($PY3 tools/funclen.py --max 60 $SRC 2>&1); rc=$?
if [ $rc != 0 ]; then
    echo "$out" | sed 's/^\([^ ]*\) \([^ ]*\) \([0-9]*\)$/FAIL: \1 function \2 has \3 lines (at most 60)/' >&2
    bad=1
else
    echo "  ok: every function of those files at most 60 lines"
fi

# docs/layout.md: the first ``` block is the tree. A line of it indented at
# most 6 columns starts with its names (comma- or space-separated, up to
# two spaces or the first word that is not a name: then comes the job); "X.c, .h" names X.h; a name
# with * is a group, matched by at least one file; a line with one folder
# alone is the folder of the lines indented more below it.
$PY3 - <<'PY' || bad=1
import glob, os, re, sys
lines = open('docs/layout.md').read().split('```')[1].split('\n')[1:]
named, bad = set(), 0
stack = []                              # (indent, folder)
NAME = re.compile(r'^[\w.*-]+(/[\w.*-]+)*(/|\.[A-Za-z0-9]+)$|^\.[a-z]+$')
for line in lines:
    if not line.strip():
        continue
    ind = len(line) - len(line.lstrip())
    if ind > 6:
        continue                        # the job, continued
    while stack and stack[-1][0] >= ind:
        stack.pop()
    base = stack[-1][1] if stack else ''
    toks, prev = [], None
    for w in re.split(r'\s{2,}', line.strip())[0].split():
        w = w.rstrip(',')
        if not NAME.match(w):
            break
        if w.startswith('.') and prev:
            w = os.path.splitext(prev)[0] + w
        toks.append(w)
        prev = w
    for w in toks:
        path = os.path.normpath(base + w) + ('/' if w.endswith('/') else '')
        hits = glob.glob(path.rstrip('/')) if '*' in path else [path.rstrip('/')]
        if not hits or not all(os.path.exists(h) for h in hits):
            print(f'FAIL: docs/layout.md names {path}, which does not exist', file=sys.stderr)
            bad = 1
        named.update(hits)
    if len(toks) == 1 and toks[0].endswith('/'):
        stack.append((ind, base + toks[0]))
want = set()
for d in ['prof', 'common', 'mpquery', 'tools', 'schema'] + [g.rstrip('/') for g in sorted(glob.glob('prof/*/'))]:
    want.update(f for f in glob.glob(d + '/*') if os.path.isfile(f) and not f.endswith('README.md'))
for d, _, _ in os.walk('tests'):
    if d != 'tests':
        want.add(d)
for f in sorted(want):
    if f not in named and not any(n.startswith(f + '/') for n in named):
        print(f'FAIL: docs/layout.md does not name {f}', file=sys.stderr)
        bad = 1
if not bad:
    print(f'  ok: docs/layout.md names the {len(want)} files of prof/ (its layers), common/, mpquery/, tools/, schema/ and folders of tests/, and nothing else')
sys.exit(bad)
PY
[ $bad = 0 ] || fail "the shape is broken (above)"
