# tests/runtimes/python_first.sh: known call paths, <module> < a < b, where b
# makes N lists, dicts and bytearrays of 100,000 bytes (exactly N blocks of
# 100,001 bytes from malloc, the rest from pymalloc), and the same under a
# thread (worker < Thread.run), then prints what it kept.
import sys
import threading

N = int(sys.argv[1]) if len(sys.argv) > 1 else 500


def b():
    keep = []
    for i in range(N):
        keep.append([i] * 10)
        keep.append({i: i})
        keep.append(bytearray(100000))
    return keep


def a():
    return b()


def worker(out):
    out.append(len(a()))


kept = a()
done = []
t = threading.Thread(target=worker, args=(done,))
t.start()
t.join()
print(len(kept), done[0])
