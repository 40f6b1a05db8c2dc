#!/usr/bin/env python3
"""Duplicate runs of code: the pairs of places in the sources that share
MIN or more lines, the same or of the same shape (names, strings and
numbers aside), as tests/package/duplicates.sh counts them.

    tools/dupes.py [--min N] [--list K] [--skip REGEX] DIR...

The sources: C, C++, headers, shell, Python, JavaScript and SQL files. A
line counts when, white space folded, it is not blank, not a comment line,
not lone punctuation and not an #include or import. A run is a maximal
stretch of such lines alike in two places (within one file or two); a
stretch that stands in more than 8 places is left out (too common to be
one piece of logic). A pair is two files (or one file with itself) and
their longest run; the other runs they share are counted with it. Prints
the number of pairs, then the K with the longest runs:
"N lines  a.c:10-24 ~ b.c:40-54 [shape] [(+M more runs)]".
"""
import os
import re
import sys
from collections import defaultdict

PUNCT = re.compile(r'^[{}()\[\];,]*$')
COMMENT = re.compile(r'^(//|/\*|\*|#(?!!)|--)')
SKIP_START = ('#include', 'import ', 'from ')
ENDINGS = ('.c', '.h', '.cc', '.sh', '.py', '.js', '.sql')
# the shape of a line: strings, numbers and names each one symbol
SHAPE = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|\b\d[\w.]*|[A-Za-z_]\w*')


def shape(t):
    return SHAPE.sub(lambda m: 'S' if m.group(0)[0] in '"\'' else 'N' if m.group(0)[0].isdigit() else 'I', t)


def lines_of(path):
    """(line number, folded text) of the lines that count."""
    out = []
    with open(path, encoding='utf-8', errors='replace') as f:
        for n, raw in enumerate(f, 1):
            t = ' '.join(raw.split())
            if not t or PUNCT.match(t) or COMMENT.match(t) or t.startswith(SKIP_START):
                continue
            out.append((n, shape(t), t))
    return out


def sources(dirs, skip):
    for d in dirs:
        for root, subdirs, files in os.walk(d):
            subdirs[:] = sorted(x for x in subdirs if x not in ('node_modules', 'build', '.git'))
            for name in sorted(files):
                path = os.path.join(root, name)
                if name.endswith(ENDINGS) and not (skip and skip.search(path)):
                    yield path


def runs(files, least):
    """Maximal runs of at least `least` equal lines: (length, a, b) with
    a and b (file, first index, last index) into files' lines."""
    where = defaultdict(list)
    for fi, (_, ls) in enumerate(files):
        for i in range(len(ls) - least + 1):
            where[tuple(x[1] for x in ls[i:i + least])].append((fi, i))
    found = []
    for places in where.values():
        if len(places) < 2 or len(places) > 8:
            continue
        for x in range(len(places)):
            for y in range(x + 1, len(places)):
                (fa, ia), (fb, ib) = places[x], places[y]
                la, lb = files[fa][1], files[fb][1]
                # the start of a run: the lines before differ (or there are none)
                if ia and ib and la[ia - 1][1] == lb[ib - 1][1] and (fa, ia - 1) != (fb, ib):
                    continue
                if fa == fb and abs(ia - ib) < least:
                    continue        # a run overlapping itself: a repeated line
                n = least
                while ia + n < len(la) and ib + n < len(lb) and la[ia + n][1] == lb[ib + n][1]:
                    n += 1
                same = all(la[ia + k][2] == lb[ib + k][2] for k in range(n))
                found.append((n, (fa, ia, ia + n - 1), (fb, ib, ib + n - 1), same))
    return found


def main(argv):
    least, most, dirs, skip = 6, 10, [], None
    args = iter(argv)
    for a in args:
        if a == '--min':
            least = int(next(args))
        elif a == '--list':
            most = int(next(args))
        elif a == '--skip':
            skip = re.compile(next(args))
        else:
            dirs.append(a)
    files = [(p, lines_of(p)) for p in sources(dirs, skip)]
    pairs = defaultdict(list)
    for r in runs(files, least):
        pairs[(r[1][0], r[2][0])].append(r)
    found = sorted((max(rs, key=lambda r: r[0]) + (len(rs) - 1,) for rs in pairs.values()),
                   key=lambda r: (-r[0], files[r[1][0]][0], files[r[2][0]][0]))
    print(f'{len(found)} duplicate pairs of {least} or more lines in {len(files)} files')

    def place(s):
        path, ls = files[s[0]]
        return f'{path}:{ls[s[1]][0]}-{ls[s[2]][0]}'
    for n, a, b, same, more in found[:most]:
        print(f'{n:4d} lines  {place(a)} ~ {place(b)}{"" if same else " shape"}{f" (+{more} more runs)" if more else ""}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
