# N bytes objects kept alive (tests/runtimes/python_sampled.sh): each
# bytes(47) is one PyObject_Calloc of 80 bytes (33 + 47), a block of
# pymalloc's 80-byte class; itertools.repeat makes no int per iteration.
# Usage: python3 py_sampled.py N; prints N and the bytes held.
import itertools
import sys


def keep_objects(n):
    return [bytes(47) for _ in itertools.repeat(None, n)]


kept = keep_objects(int(sys.argv[1]))
print(len(kept), sum(len(b) for b in kept))
