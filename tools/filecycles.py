# The file-level call graph of a folder of objects, and its circles.
# Usage: filecycles.py DIR [ALLOWED]: reads DIR/*.o with nm (a file calls
# another when it uses, undefined, a symbol the other defines) and prints
# each strongly connected component of more than one file, one line
# "FAIL: a.c b.c call each other: a.c -> b.c (sym, ...); ..." on stderr,
# unless ALLOWED (a file of lines "a.c b.c  the reason") lists that exact
# group. Exit 1 when a group is not allowed, or an allowed one no longer
# is a circle (so the list only shrinks); prints the count of groups.
import glob, os, subprocess, sys

def graph(folder):
    defs, uses = {}, {}
    objs = sorted(glob.glob(os.path.join(folder, '*.o')))
    files = [os.path.basename(o)[:-2] + '.c' for o in objs]
    # one nm for every object (-A: each line "path.o:[value] type name")
    out = subprocess.run(['nm', '-A'] + objs, capture_output=True, text=True, check=True).stdout if objs else ''
    for line in out.splitlines():
        at = line.index('.o:') + 2
        f, p = os.path.basename(line[:at])[:-2] + '.c', line[at + 1:].split()
        if len(p) == 2 and p[0] == 'U':
            uses.setdefault(f, set()).add(p[1])
        elif len(p) == 3 and p[1] in 'TDBRGSVW':
            defs[p[2]] = f
    edges = {f: {} for f in files}
    for f, syms in uses.items():
        for s in syms:
            g = defs.get(s)
            if g and g != f:
                edges[f].setdefault(g, []).append(s)
    return edges

def components(edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = n; n += 1; stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n; n += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                c = []
                while True:
                    w = stack.pop(); on.discard(w); c.append(w)
                    if w == v:
                        break
                if len(c) > 1:
                    out.append(sorted(c))
    return sorted(out)

def main():
    edges = graph(sys.argv[1])
    allowed = {}
    if len(sys.argv) > 2:
        for line in open(sys.argv[2]):
            words = line.split('  ')[0].split()
            if words and not line.startswith('#'):
                allowed[' '.join(sorted(words))] = line.strip()
    bad, found = 0, set()
    for c in components(edges):
        key = ' '.join(c)
        found.add(key)
        if key in allowed:
            print(f'  allowed: {allowed[key]}')
            continue
        arrows = '; '.join(f'{a} -> {b} ({", ".join(sorted(edges[a][b])[:4])})'
                           for a in c for b in c if b in edges[a])
        print(f'FAIL: {key} call each other: {arrows}', file=sys.stderr)
        bad = 1
    for key in sorted(set(allowed) - found):
        print(f'FAIL: {key} is listed as allowed but no longer a circle: take it off the list', file=sys.stderr)
        bad = 1
    print(f'  {len(found)} groups of files calling each other in a circle, '
          f'{len(found & set(allowed))} allowed, among {len(edges)} files')
    return bad

sys.exit(main())
