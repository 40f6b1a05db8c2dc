#!/bin/bash
# The README's tutorial is real output: each "<!-- tutorial: CMD -->" line
# is followed by a ``` block holding "$ CMD" and what CMD prints on an
# 80-column terminal (stdout and stderr as a user sees them, no pager),
# the commands run in order in one fresh directory where build/ is this
# tree's build and `mpquery` is build/mpquery.
#   tools/readme-tutorial.sh [FILE]          rewrites the blocks (default README.md)
#   tools/readme-tutorial.sh --check [FILE]  compares them, exit 1 with a diff when they differ
# A time at the end of a "mpquery: wrote" line ("2.31 s") matches any time,
# a file's size in one ("wrote app.html (108 KiB)") any size.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mode=update
if [ "${1:-}" = --check ]; then mode=check; shift; fi
FILE=${1:-$ROOT/README.md}
[ -x "$ROOT/build/mpquery" ] || { echo "readme-tutorial: build/mpquery is not built (make)" >&2; exit 2; }
command -v script >/dev/null || { echo "readme-tutorial: script(1) is missing (bsdutils)" >&2; exit 2; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
ln -s "$ROOT/build" "$W/build"
mkdir "$W/bin" && ln -s "$ROOT/build/mpquery" "$W/bin/mpquery"
MODE=$mode WORK=$W exec /usr/bin/python3 - "$FILE" <<'PY'
import os, re, subprocess, sys, difflib
path, work, mode = sys.argv[1], os.environ['WORK'], os.environ['MODE']
lines = open(path).read().split('\n')
env = dict(os.environ, PATH=work + '/bin:' + os.environ['PATH'], COLUMNS='80', PAGER='cat', TERM='xterm')
out, i, n = [], 0, 0
def run(cmd):
    # a pseudo-terminal, as a user's: text cut to 80 columns, stderr in place
    r = subprocess.run(['script', '-qec', cmd, '/dev/null'], cwd=work, env=env, capture_output=True, text=True)
    text = r.stdout.replace('\r', '').rstrip('\n')
    return text.split('\n') if text else []
while i < len(lines):
    out.append(lines[i])
    m = re.match(r'^<!-- tutorial: (.*) -->$', lines[i])
    i += 1
    if not m:
        continue
    if i >= len(lines) or lines[i] != '```':
        sys.exit(f'{path}:{i}: a tutorial marker must be followed by a ``` block')
    end = lines.index('```', i + 1)
    out += ['```', '$ ' + m.group(1)] + run(m.group(1)) + ['```']
    i, n = end + 1, n + 1
def masked(text):
    # record's time, and an -o file's size (the report holds memory over
    # time: as many points as the run's timing gave)
    text = [re.sub(r'^(mpquery: wrote .*), [0-9.]+ s$', r'\1, T s', l) for l in text]
    return [re.sub(r'^(mpquery: wrote [^ ]+ \((.*, )?)[0-9.]+ ([KMG]i)?B\)$', r'\1S)', l) for l in text]
if mode == 'update':
    open(path, 'w').write('\n'.join(out))
    print(f'readme-tutorial: {n} blocks of {path} written')
elif masked(out) != masked(lines):
    sys.stdout.writelines(difflib.unified_diff([l + '\n' for l in lines], [l + '\n' for l in out], path, 'now'))
    sys.exit(1)
else:
    print(f'readme-tutorial: {n} blocks of {path} agree')
PY
