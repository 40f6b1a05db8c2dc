#!/usr/bin/python3
"""funclen.py [--max N] FILE.c...: every C function's length in lines, from
its opening line (the line of its name) to its closing brace, as
"FILE:LINE: NAME N"; with --max N, only those over N, and exit 1 if any.

Comments, strings, character constants and preprocessor lines are blanked
first; a function is a brace at file level that follows a parameter list
(a ")", perhaps then attributes). Struct, union, enum bodies and
initializers are not functions. A file whose braces do not balance is
reported (exit 2): the count would be wrong."""
import re
import sys


def blank(text):
    """text with comments, strings, chars and # lines made spaces (newlines kept)"""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in ' \t':
            out.append(c)
            i += 1
            continue
        if line_start and c == '#':             # a preprocessor line, with its continuations
            while i < n and text[i] != '\n':
                if text[i] == '\\' and i + 1 < n and text[i + 1] == '\n':
                    out.append(' \n')
                    i += 2
                    continue
                out.append(' ')
                i += 1
            continue
        line_start = False
        if c == '\n':
            line_start = True
            out.append(c)
            i += 1
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(' ' * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def match_open(s, k):
    """s[k] == ')': the index of its '('"""
    depth = 0
    while k >= 0:
        if s[k] == ')':
            depth += 1
        elif s[k] == '(':
            depth -= 1
            if depth == 0:
                return k
        k -= 1
    return -1


def functions(path):
    text = open(path, encoding='utf-8', errors='replace').read()
    s = blank(text)
    line_of = []
    ln = 1
    for ch in s:
        line_of.append(ln)
        if ch == '\n':
            ln += 1
    out = []
    depth = 0
    start = None     # (name, line) of the function being read
    for i, ch in enumerate(s):
        if ch == '{':
            if depth == 0:
                start = head(s, i, line_of)
            depth += 1
        elif ch == '}':
            depth -= 1
            if depth < 0:
                raise ValueError(f'{path}:{line_of[i]}: a closing brace with none open')
            if depth == 0 and start:
                name, first = start
                out.append((name, first, line_of[i] - first + 1))
                start = None
    if depth != 0:
        raise ValueError(f'{path}: {depth} braces left open at the end')
    return out


def head(s, i, line_of):
    """the brace at s[i] opens a function: (name, line of the name); else None"""
    k = i - 1
    while True:
        while k >= 0 and s[k].isspace():
            k -= 1
        if k < 0:
            return None
        if s[k] != ')':
            # a bare attribute macro between ")" and "{" (e.g. MP_HOT)
            m = re.search(r'[A-Z_][A-Z0-9_]*$', s[:k + 1])
            if m and m.start() > 0:
                k = m.start() - 1
                continue
            return None         # struct/enum/union body, initializer
        o = match_open(s, k)
        if o < 0:
            return None
        before = s[:o].rstrip()
        m = re.search(r'([A-Za-z_][A-Za-z0-9_]*)$', before)
        if not m:
            # "(*name(args))(args)" returning a function pointer, or "((x))"
            k = o - 1
            continue
        name = m.group(1)
        if re.search(r'\)\s*$', before[:m.start()]) and (name == '__attribute__' or name.isupper()):
            k = m.start() - 1       # an attribute after the parameter list
            continue
        if name in ('if', 'for', 'while', 'switch', 'sizeof', 'return'):
            return None
        # an initializer "= ( ... ) {" is not a function
        if re.search(r'=\s*$', before[:m.start()]):
            return None
        return name, line_of[m.start()]


def main(argv):
    limit = None
    if len(argv) > 1 and argv[0] == '--max':
        limit = int(argv[1])
        argv = argv[2:]
    over = 0
    for path in argv:
        try:
            fns = functions(path)
        except ValueError as e:
            print(f'funclen: {e}', file=sys.stderr)
            return 2
        for name, line, n in fns:
            if limit is None or n > limit:
                print(f'{path}:{line}: {name} {n}')
                over += 1
    return 1 if limit is not None and over else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
