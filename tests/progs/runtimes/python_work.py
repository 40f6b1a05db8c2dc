# Python runtime (Debian's python3: pymalloc for objects up to 512 bytes,
# malloc above), with a deterministic output; exit status 10.
#   ctypes: 200 blocks of 4000..4199 bytes from libc's malloc through libffi
#           (ffi_call), the first 50 freed;
#   bytes:  300 objects of 100000..100299 bytes (plus a 33-byte header), one
#           malloc each, all freed before exit;
#   4 threads build dicts and JSON.
import ctypes
import json
import sys
import threading

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
blocks = [libc.malloc(4000 + i) for i in range(200)]
for block in blocks[:50]:
    libc.free(block)

big = [bytes(100000 + i) for i in range(300)]
big_bytes = sum(len(b) for b in big)
del big


def work(k, results):
    table = {f"key-{k}-{i * 7919 % 65536:x}": [i] * (i % 10) for i in range(20000 * (k + 1))}
    results[k] = f"thread {k}: {len(table)} keys, {len(json.dumps(table, sort_keys=True))} bytes of JSON"


results = [None] * 4
threads = [threading.Thread(target=work, args=(k, results)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("\n".join(results))
print(f"ctypes: {len(blocks)} blocks; bytes: {big_bytes}")
sys.exit(10)
