#!/usr/bin/env python3
"""Makes fixture SQL (for schema/profile.sql) from a list of stacks, so that
rules and output tests state their input as plainly as their expectations.

Input lines (stdin):  VALUES<TAB>frame<TAB>frame...   (root first)
  VALUES  one integer B: ncalls 1, memtot B, nfree 0, memlive B, maxlive B
          or five: ncalls,memtot,nfree,memlive,maxlive
  frame   a function name; '~name' = inlined (inline_depth 1); '@0x1f' = no
          symbol (offset 0x1f in /usr/bin/app); escapes \\t \\n \\r \\\\ \\x3b (;)
          and \\rep{TEXT*N} (TEXT repeated N times) for long names;
          a prefix '{PATH}' puts the frame in module PATH instead
          ('{/usr/lib/libx.so.1}@0x1f', '{/usr/lib/libx.so.1}name')
Lines starting with '#' and blank lines are ignored. One run, one process
(pid 4242), one thread (tid 4242), one exit snapshot; the totals row is the
sum of the samples."""
import re, sys

def q(s):
    return "'" + s.replace("'", "''") + "'"

def unescape(s):
    s = re.sub(r'\\rep\{(.*?)\*(\d+)\}', lambda m: m.group(1) * int(m.group(2)), s)
    return (s.replace('\\t', '\t').replace('\\n', '\n').replace('\\r', '\r')
             .replace('\\x3b', ';').replace('\\\\', '\\'))

funcs, frames, stacks, samples = {}, {}, {}, {}
modules = {'/usr/bin/app': 1}
out = []
for line in sys.stdin:
    line = line.rstrip('\n')
    if not line.strip() or line.startswith('#'):
        continue
    fields = line.split('\t')
    vals = [int(v) for v in fields[0].split(',')]
    if len(vals) == 1:
        vals = [1, vals[0], 0, vals[0], vals[0]]
    parent = 0
    for tok in fields[1:]:
        depth, fn, module = 0, None, 1
        if tok.startswith('{') and '}' in tok:
            path, tok = tok[1:].split('}', 1)
            module = modules.setdefault(path, len(modules) + 1)
        if tok.startswith('@'):
            offset = int(tok[1:], 16)
        else:
            if tok.startswith('~'):
                depth, tok = 1, tok[1:]
            name = unescape(tok)
            fn = funcs.setdefault(name, len(funcs) + 1)
            offset = 0x10000 + 16 * fn
        key = (module, offset, depth)
        fr = frames.setdefault(key, (len(frames) + 1, fn))[0]
        parent = stacks.setdefault((parent, fr), len(stacks) + 1)
    old = samples.get(parent, [0] * 5)
    samples[parent] = [a + b for a, b in zip(old, vals)]

print("BEGIN;")
print("INSERT INTO run VALUES (1, 'fixture', 1000.0);")
print("INSERT INTO process(id, run, pid, ppid, exe, cmdline, host, start_time, end_time, settings) VALUES (1, 1, 4242, 1, '/usr/bin/app', 'app', 'host', 1000.0, 1001.0, 'MP_DEPTH=128');")
print("INSERT INTO thread VALUES (1, 1, 1, 4242, 'main');")
for path, i in modules.items():
    print("INSERT INTO module VALUES (%d, %s, '');" % (i, q(path)))
for name, i in funcs.items():
    print("INSERT INTO function VALUES (%d, %s);" % (i, q(name)))
for (module, offset, depth), (i, fn) in frames.items():
    print("INSERT INTO frame VALUES (%d, %d, %d, %d, %s, NULL, 0);" % (i, module, offset, depth, fn if fn else 'NULL'))
for (parent, fr), i in stacks.items():
    print("INSERT INTO stack VALUES (%d, %d, %d);" % (i, parent, fr))
print("INSERT INTO snapshot VALUES (1, 1, 1, 1001.0, 'exit', '', 0);")
tot = [0] * 5
for st, v in samples.items():
    print("INSERT INTO sample(snapshot, stack, thread, ncalls, memtot, nfree, memlive, maxlive) VALUES (1, %d, 1, %d, %d, %d, %d, %d);" % (st, *v))
    tot = [a + b for a, b in zip(tot, v)]
print("INSERT INTO totals VALUES (1, 0, %d, %d, %d, %d, %d, 0, 0, 0);" % tuple(tot))
print("INSERT INTO totals VALUES (1, 1, %d, %d, %d, %d, %d, 0, 0, 0);" % tuple(tot))
print("COMMIT;")
