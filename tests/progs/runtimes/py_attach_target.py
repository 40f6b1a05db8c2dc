# A target for tests/recorder/attach_python_memory.sh: commands on stdin,
# one answer line each on stdout.
#   work N   N requests, each on a thread of its own (as http.server's
#            ThreadingHTTPServer): dicts, lists and strings made and
#            dropped, the last 64 requests' results kept
#   fork N   N fork + waitpid (the child _exits at once): "fork <cpu s>",
#            the parent's and the children's user + system time
#   anon     "anon <RssAnon kB>"
#   alloc    "alloc <file> <file>": the files of the functions that
#            PyMem_Malloc and PyObject_Malloc call (PyMem_GetAllocator)
import ctypes, os, sys, threading

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

class Allocator(ctypes.Structure):
    _fields_ = [(n, ctypes.c_void_p) for n in ("ctx", "malloc", "calloc", "realloc", "free")]

class DlInfo(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p), ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]

def allocators():
    libc = ctypes.CDLL(None)
    files = []
    for domain in (1, 2):       # PYMEM_DOMAIN_MEM, PYMEM_DOMAIN_OBJ
        a = Allocator()
        ctypes.pythonapi.PyMem_GetAllocator(domain, ctypes.byref(a))
        info = DlInfo()
        libc.dladdr(ctypes.c_void_p(a.malloc), ctypes.byref(info))
        files.append(os.path.basename(info.fname.decode()) if info.fname else "?")
    return " ".join(files)

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
    elif cmd[0] == "alloc":
        print("alloc " + allocators(), flush=True)
    elif cmd[0] == "anon":
        print("anon %d" % anon(), flush=True)
