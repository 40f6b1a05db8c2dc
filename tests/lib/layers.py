"""The recorder's layers call only downward (tests/package/layers.sh).

layers.py ROOT OBJ ALLOW LIBC: for every object OBJ/prof/LAYER/NAME.o, the
global symbols it uses (nm -u) that an object of a higher layer defines,
and for every file ROOT/prof/LAYER/*.[ch], the headers it includes that
lie in a higher layer's folder. A name libc defines (LIBC's dynamic
symbols: malloc, free, mmap, exit ...) is a call into libc, whichever
definition the linker binds it to (entry/ defines it in libc's place), so
it is not an upward call. ALLOW lists the upward references still allowed,
"FILE NAME reason" a line; an allowed one that no longer occurs is an
error too, so the list only shrinks. Prints one line per violation and
exits 1; prints the count of allowed ones.
"""
import glob
import os
import re
import subprocess
import sys

LAYERS = ['base', 'capture', 'core', 'snapshot', 'process', 'entry']  # bottom up
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def nm(args, path):
    out = subprocess.run(['nm'] + args + [path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f'{path}: nm failed: {out.stderr.strip()}')
    return out.stdout.splitlines()


def libc_names(libc):
    names = set()
    for line in nm(['-D', '--defined-only'], libc):
        parts = line.split()
        if len(parts) == 3:
            names.add(parts[2].split('@')[0])
    return names


def symbols(obj):
    """name -> (layer, source file, kind) of each global symbol defined,
    and [(layer, source file, name)] of each used."""
    defs, uses = {}, []
    for layer in LAYERS:
        for o in sorted(glob.glob(f'{obj}/prof/{layer}/*.o')):
            src = f'{layer}/{os.path.basename(o)[:-2]}.c'
            for line in nm(['--defined-only', '-g'], o):
                kind, name = line.split()[-2:]
                defs.setdefault(name, (layer, src, kind))
            for line in nm(['-u'], o):
                uses.append((layer, src, line.split()[-1]))
    return defs, uses


def calls(obj, libc):
    defs, uses = symbols(obj)
    found = []
    for layer, src, name in uses:
        if name not in defs or name in libc:
            continue
        dlayer, dsrc, kind = defs[name]
        if RANK[dlayer] > RANK[layer]:
            verb = 'calls' if kind in 'Tt' else 'uses'
            found.append((f'prof/{src}', name, f'{verb} {name} defined in {dsrc}'))
    return found


def includes(root):
    where = {}                       # header name -> layer of its folder
    for layer in LAYERS:
        for h in glob.glob(f'{root}/prof/{layer}/*.h'):
            where.setdefault(os.path.basename(h), layer)
    found = []
    for layer in LAYERS:
        for f in sorted(glob.glob(f'{root}/prof/{layer}/*.[ch]')):
            rel = os.path.relpath(f, root)
            for name in INCLUDE.findall(open(f, errors='replace').read()):
                own = os.path.exists(os.path.join(os.path.dirname(f), name))
                hl = layer if own else where.get(name)
                if hl and RANK[hl] > RANK[layer]:
                    found.append((rel, name, f'includes {name} of layer {hl}'))
    return found


def stray(root):
    return [(os.path.relpath(f, root), '-', 'is in no layer folder (prof/LAYER/)')
            for f in sorted(glob.glob(f'{root}/prof/*.c'))]


def main():
    root, obj, allow_file, libc = sys.argv[1:5]
    allow = {}
    for line in open(allow_file):
        if line.strip() and not line.startswith('#'):
            f, name, reason = line.split(None, 2)
            allow[(f, name)] = reason.strip()
    found = calls(obj, libc_names(libc)) + includes(root) + stray(root)
    bad, seen = 0, set()
    for f, name, what in sorted(set(found)):
        seen.add((f, name))
        if (f, name) not in allow:
            print(f'{f}: {what}')
            bad = 1
    for f, name in sorted(set(allow) - seen):
        print(f'{f}: {name} is allowed as an exception but no longer occurs: take it off the list')
        bad = 1
    print(f'upward references: {len(seen)}, of which {len(seen & set(allow))} allowed as listed exceptions')
    sys.exit(bad)


main()
