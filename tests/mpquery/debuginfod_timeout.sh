# run: waits
# mpquery symbolize --debuginfod: DEBUGINFOD_TIMEOUT bounds the whole fetch
# of a file, as users read it. A server on 127.0.0.1 (started and stopped
# here) that answers 200 and then sends 10 bytes every 0.5 s: given up after
# the timeout, said once, not asked again (libdebuginfod alone applies the
# limit to each of its 3 tries: 9 s with DEBUGINFOD_TIMEOUT=3). A download
# that lasts longer than the timeout at 400 KB/s goes on to its end.
sh "$(dirname "$0")/../lib/deps.sh" libdebuginfod1 || exit 1
. "$(dirname "$0")/../lib/lib.sh"
export HOME=$T/home XDG_CACHE_HOME= DEBUGINFOD_CACHE_PATH= DEBUGINFOD_VERBOSE= DEBUGINFOD_PROGRESS=
unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT DEBUGINFOD_RETRY_LIMIT
mkdir home none lib

cp "$B/tests/libplugin.so" lib/
bid=$(readelf -n lib/libplugin.so | sed -n 's/.*Build ID: //p')
[ ${#bid} -eq 40 ] || fail "libplugin.so has no build-id"
objcopy --only-keep-debug lib/libplugin.so plugin.debug && strip --strip-all lib/libplugin.so || fail "objcopy/strip failed"
# served padded to 1.5 MB (bytes after an ELF file's sections are not read)
cp plugin.debug padded.debug && head -c 1500000 /dev/zero >>padded.debug
line_alloc=$(grep -n 'malloc(77)' "$ROOT/tests/progs/libplugin.c" | cut -d: -f1)

cat >server.py <<'PY'
import socket, sys, threading, time
mode, bid, path = sys.argv[1], sys.argv[2].encode(), sys.argv[3]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
print(s.getsockname()[1], flush=True)
def serve(c):
    request = c.recv(65536)
    print("GET", flush=True)
    try:
        if mode == "paced" and bid not in request:
            c.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        elif mode == "paced":         # 400 KB/s
            data = open(path, "rb").read()
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(data))
            for i in range(0, len(data), 100000):
                time.sleep(0.25)
                c.sendall(data[i:i + 100000])
        else:                         # stalls: 10 bytes every 0.5 s
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
            while True:
                time.sleep(0.5)
                c.sendall(b"x" * 10)
    except OSError:
        pass
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
$PY3 server.py stall $bid - >stall.out & stall=$!
$PY3 server.py paced $bid padded.debug >paced.out & paced=$!
on_exit "kill $stall $paced 2>/dev/null; wait"
for f in stall paced; do
    for i in $(seq 100); do [ -s $f.out ] && break; sleep 0.1; done
done
port_stall=$(head -n 1 stall.out) port_paced=$(head -n 1 paced.out)
[ -n "$port_stall" ] && [ -n "$port_paced" ] || fail "the servers did not start"

profile a.db "$B/tests/dl_plugin" "$T/lib/libplugin.so" >/dev/null 2>&1 || fail "dl_plugin failed"
libc=$(q a.db "SELECT path FROM module WHERE path GLOB '*/libc.so.6'")
ld=$(q a.db "SELECT path FROM module WHERE path GLOB '*/ld-linux*'")
sum_a=$(sha256sum <a.db)

# 1. The stalling server, DEBUGINFOD_TIMEOUT=3: given up once, after 3 s
#    and the callback's second (libdebuginfod alone: 3 s per try, 3 tries,
#    9 s); below twice the timeout, so that a loaded machine's second or so
#    does not fail it while 3 tries still do; nothing written.
cp a.db stall.db
url=http://127.0.0.1:$port_stall
start=$(date +%s%N)
DEBUGINFOD_TIMEOUT=3 timeout -k 2 30 "$MPQ" symbolize stall.db --debuginfod "$url" --debuginfod-cache "$T/cache.stall" \
    --debuginfo-path "$T/none" >stall.stdout 2>stall.err; rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
assert_eq "$rc" 1 "stalling server: exit status"
[ $ms -lt 6000 ] || fail "stalling server, DEBUGINFOD_TIMEOUT=3: took $ms ms"
echo "  ok: stalling server, DEBUGINFOD_TIMEOUT=3: $ms ms"
why="$url sent less than 100 KiB in 3 s (DEBUGINFOD_TIMEOUT)"
assert_eq "$(sed 's/ (build-id [0-9a-f]*)//' stall.err)" "mpquery: warning: symbolize: debuginfod: $libc: $why; its frames keep their names
mpquery: warning: symbolize: debuginfod: $ld: not asked: $why, above; its frames keep their names
mpquery: warning: symbolize: debuginfod: $T/lib/libplugin.so: not asked: $why, above; its frames keep their names" \
    "stalling server: one line per module, asked once"
assert_eq "$(sha256sum <stall.db)" "$sum_a" "stalling server: the database is unchanged"
assert_eq "$(find cache.stall -name 'debuginfo*' | wc -l)" 0 "stalling server: nothing in the cache"

# 2. A download longer than the timeout (1.5 MB at 400 KB/s, about 3.75 s,
#    DEBUGINFOD_TIMEOUT=2) at the pace: fetched and used.
cp a.db paced.db
start=$(date +%s%N)
DEBUGINFOD_TIMEOUT=2 timeout -k 2 60 "$MPQ" symbolize paced.db --debuginfod http://127.0.0.1:$port_paced \
    --debuginfod-cache "$T/cache.paced" --debuginfo-path "$T/none" >paced.stdout 2>paced.err; rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
assert_eq "$rc" 0 "paced download: exit status (404s for libc and ld.so)"
[ $ms -ge 3000 ] || fail "paced download: took only $ms ms, not longer than the timeout"
echo "  ok: paced download: $ms ms"
assert_eq "$(cmp -s cache.paced/$bid/debuginfo padded.debug && echo same)" "same" "paced download: the whole file in the cache"
assert_eq "$("$MPQ" fold --lines paced.db | grep -o "plugin_static_alloc (libplugin.c:[0-9]*)" | sort -u)" \
    "plugin_static_alloc (libplugin.c:$line_alloc)" "paced download: the static function named from it"
