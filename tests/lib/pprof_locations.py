#!/usr/bin/env python3
"""A pprof profile's locations, one a line: "ADDRESS MAPPING NAME;NAME..."
(address in hex, 0 when none; MAPPING the mapping's file name, '-' when
none; the names of the location's lines, innermost first), then one line
"mapping FILE" per mapping. Reads profile.proto's wire format itself
(varints, length-delimited fields), so that tests check mpquery's pprof
writer with a decoder of their own: tests/lib/views.sh."""
import gzip, sys


def fields(b):
    """(field number, value) of a message: ints for varints, bytes else."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(b, i)
        elif wire == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            sys.exit("unexpected wire type %d" % wire)
        yield num, v


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if c < 0x80:
            return v, i


def ints(v):
    """A repeated integer field: packed (bytes) or one varint."""
    if isinstance(v, int):
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


data = gzip.decompress(open(sys.argv[1], 'rb').read())
strings, locations, functions, mappings = [], [], {}, {}
for num, v in fields(data):
    if num == 6:
        strings.append(v.decode('utf-8', 'replace'))
    elif num == 4:
        locations.append(dict(fields(v)) | {'lines': [dict(fields(x))[1] for n, x in fields(v) if n == 4]})
    elif num == 5:
        f = dict(fields(v))
        functions[f[1]] = f.get(2, 0)
    elif num == 3:
        m = dict(fields(v))
        mappings[m[1]] = m.get(5, 0)
for loc in locations:
    m = loc.get(2, 0)
    names = ';'.join(strings[functions[f]] for f in loc['lines'])
    print('%x %s %s' % (loc.get(3, 0), strings[mappings[m]].rsplit('/', 1)[-1] if m else '-', names))
for m in sorted(mappings):
    print('mapping ' + strings[mappings[m]])
