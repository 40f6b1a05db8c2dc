# A target for tests/recorder/attach_python_memory.sh: commands on stdin,
# one answer line each on stdout.
#   work N   N requests, each on a thread of its own (as http.server's
#            ThreadingHTTPServer): dicts, lists and strings made and
#            dropped, the last 64 requests' results kept
#   fork N   N fork + waitpid (the child _exits at once): "fork <cpu s>",
#            the parent's and the children's user + system time
#   anon     "anon <RssAnon kB>"
import os, sys, threading

kept = []

def request(i):
    d = {"k%d" % j: [j, str(j) * 3, {"x": j}] for j in range(300)}
    s = ",".join(k for k in d)
    kept.append((i, len(s), {k: v[1] for k, v in list(d.items())[:20]}))
    del kept[:-64]

def work(n):
    for i in range(n):
        t = threading.Thread(target=request, args=(i,))
        t.start()
        t.join()

def forks(n):
    a = os.times()
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    b = os.times()
    return sum(b[:4]) - sum(a[:4])

def anon():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])

for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] == "work":
        work(int(cmd[1]))
        print("ok", flush=True)
    elif cmd[0] == "fork":
        print("fork %.4f" % forks(int(cmd[1])), flush=True)
    elif cmd[0] == "mallinfo":         # diagnosis: glibc's malloc_info on stderr
        import ctypes
        libc = ctypes.CDLL(None)
        libc.fdopen.restype = ctypes.c_void_p
        f = libc.fdopen(2, b"w")
        libc.malloc_info(0, ctypes.c_void_p(f))
        libc.fflush(ctypes.c_void_p(f))
        print("ok", flush=True)
    elif cmd[0] == "trim":             # diagnosis: glibc's malloc_trim
        import ctypes
        print("trim %d" % ctypes.CDLL(None).malloc_trim(0), flush=True)
    elif cmd[0] == "anon":
        print("anon %d" % anon(), flush=True)
