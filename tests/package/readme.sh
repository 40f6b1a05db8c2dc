# The manual: README.md is short (at most 300 lines); its tutorial blocks
# are what the commands print now at 80 columns (tools/readme-tutorial.sh
# --check; after a change of output, tools/readme-tutorial.sh rewrites
# them); its table lists every command of `mpquery --help`; every relative
# link of README.md, prof/README.md, mpquery/README.md and docs/*.md names
# a file that exists (and an anchor of it that exists, for .md files); the
# MP_* variables are in prof/README.md (tests/recorder/options_table.sh
# checks their table).
. "$(dirname "$0")/../lib/lib.sh"
n=$(wc -l < "$ROOT/README.md")
[ "$n" -le 300 ] || fail "README.md has $n lines (at most 300)"
echo "  ok: README.md has $n lines"
"$ROOT/tools/readme-tutorial.sh" --check "$ROOT/README.md" > check.txt 2>&1 || { cat check.txt; fail "README's tutorial blocks differ from the commands' output (run tools/readme-tutorial.sh)"; }
assert_match "$(cat check.txt)" '^readme-tutorial: [0-9]+ blocks of .* agree$' "the tutorial's blocks are the commands' output"
for c in $("$MPQ" --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p'); do
    grep -q "^| \`$c\` |" "$ROOT/README.md" || fail "README's table of commands lacks $c"
done
echo "  ok: README's table lists every command"
/usr/bin/python3 - "$ROOT" <<'PY' || fail "a link of the manual is broken"
import os, re, sys
root = sys.argv[1]
def anchors(path):
    out = set()
    for line in open(path):
        m = re.match(r'^#+ (.*)', line)
        if m:
            a = re.sub(r'[^\w\- ]', '', m.group(1).strip().lower()).replace(' ', '-')
            out.add(a)
    return out
bad = 0
docs = ['README.md', 'prof/README.md', 'mpquery/README.md'] + ['docs/' + f for f in os.listdir(root + '/docs') if f.endswith('.md')]
for doc in docs:
    for target in re.findall(r'\]\(([^)#\s]*)(#[^)\s]*)?\)', open(os.path.join(root, doc)).read()):
        f, frag = target
        if f.startswith('http'):
            continue
        path = os.path.normpath(os.path.join(root, os.path.dirname(doc), f)) if f else os.path.join(root, doc)
        if not os.path.exists(path):
            print(f'{doc}: link to {f}: no such file'); bad += 1
        elif frag and path.endswith('.md') and frag[1:] not in anchors(path):
            print(f'{doc}: link to {f}{frag}: no such heading'); bad += 1
sys.exit(1 if bad else 0)
PY
echo "  ok: the manual's links name existing files and headings"
