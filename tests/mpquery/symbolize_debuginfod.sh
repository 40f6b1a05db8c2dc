# run: waits
# mpquery symbolize --debuginfod: a stripped library's debug file, served
# by Debian's debuginfod by build-id, names its static function with
# file:line afterwards (frames as many as before), into the cache; from the
# cache again with the server stopped. A server stopped, silent, answering
# 404 or garbage: one line per module, the database unchanged, exit 1
# (0 for 404s). Without the option (the recorder, symbolize) no server is
# asked, whatever DEBUGINFOD_URLS says. Usage errors, a missing library.
#
# Everything runs in a private network namespace (unshare -n): debuginfod
# listens on every address, which there is the namespace's loopback only.
# libc and ld.so get no local debug info (--debuginfo-path $T/none), so
# which modules are asked for does not depend on the machine's dbgsym.
if [ -z "${MP_TEST_NETNS:-}" ]; then
    sh "$(dirname "$0")/../lib/deps.sh" debuginfod libdebuginfod1 iproute2 || exit 1
    exec unshare -n env MP_TEST_NETNS=1 bash "$0" "$@"
fi
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/fixtures.sh"    # expect_fail
ip link set lo up || fail "ip link set lo up"
export HOME=$T/home XDG_CACHE_HOME= DEBUGINFOD_CACHE_PATH= DEBUGINFOD_VERBOSE= DEBUGINFOD_PROGRESS=
unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT
mkdir home none srv empty lib

# the stripped library: no symbols, no DWARF, no debuglink; its debug file
# only in the server's directory
cp "$B/tests/libplugin.so" lib/
bid=$(readelf -n lib/libplugin.so | sed -n 's/.*Build ID: //p')
[ ${#bid} -eq 40 ] || fail "libplugin.so has no build-id"
objcopy --only-keep-debug lib/libplugin.so srv/libplugin.debug && strip --strip-all lib/libplugin.so ||
    fail "objcopy/strip failed"
assert_eq "$(readelf -S lib/libplugin.so | grep -cE '\.(debug_|symtab|gnu_debuglink)')" 0 "the library is stripped, no debuglink"
[ -e /usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug ] && fail "a local copy of the debug file exists"
line_alloc=$(grep -n 'malloc(77)' "$ROOT/tests/progs/libplugin.c" | cut -d: -f1)
line_run=$(grep -n 'plugin_static_alloc(); }' "$ROOT/tests/progs/libplugin.c" | cut -d: -f1)

# servers: Debian's debuginfod (the file; an empty directory), and fake
# ones for the failures (the client is the real one)
debuginfod -F -p 8002 -d "$T/srv.sqlite" -t 0 -g 0 "$T/srv" >server.log 2>&1 & srv=$!
debuginfod -F -p 8003 -d "$T/empty.sqlite" -t 0 -g 0 "$T/empty" >server404.log 2>&1 & srv404=$!
cat >fake.py <<'EOF'
import socket, sys, time
mode, port = sys.argv[1], int(sys.argv[2])
s = socket.socket()
s.bind(("127.0.0.1", port))
s.listen(16)
print("ready", flush=True)
held = []
while True:
    c, _ = s.accept()
    if mode == "silent":        # connected, never answers
        held.append(c)
        continue
    request = c.recv(65536)
    if mode == "slow":          # the file of build-id argv[3] (argv[4]) in 6 parts over 1.8 s, else 404
        if sys.argv[3].encode() not in request:
            c.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            c.close()
            continue
        data = open(sys.argv[4], "rb").read()
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(data))
        for i in range(6):
            time.sleep(0.3)
            c.sendall(data[i * len(data) // 6:(i + 1) * len(data) // 6])
        c.close()
        continue
    body = b"garbage " * 8
    c.sendall((b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) if mode == "http" else b"") + body)
    c.close()
EOF
$PY3 fake.py silent 8004 >fake4.out & f4=$!
$PY3 fake.py http 8005 >fake5.out & f5=$!
$PY3 fake.py raw 8006 >fake6.out & f6=$!
$PY3 fake.py slow 8007 $bid srv/libplugin.debug >fake7.out & f7=$!
on_exit "kill $srv $srv404 $f4 $f5 $f6 $f7 2>/dev/null; wait"
# ready: each debuginfod has scanned its directory (its /metrics say so)
$PY3 - <<'EOF' || fail "debuginfod not ready in 20 s: $(tail -n 3 server.log)"
import sys, time, urllib.request
for port, want in ((8002, 1), (8003, 0)):
    deadline = time.time() + 20
    while True:
        try:
            m = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=1).read().decode()
            if 'thread_work_total{role="traverse"} 1' in m and \
               ('scanned_files_total{source="file"} %d' % want in m or want == 0):
                break
        except OSError:
            pass
        if time.time() > deadline:
            sys.exit(1)
        time.sleep(0.1)
EOF
for f in fake4 fake5 fake6 fake7; do
    for i in $(seq 100); do grep -q ready $f.out && break; sleep 0.1; done
done
requests() { grep -c 'GET /buildid/' "$1"; }

# recorded with DEBUGINFOD_URLS set: the recorder asks no server
DEBUGINFOD_URLS=http://127.0.0.1:8002 profile a.db "$B/tests/dl_plugin" "$T/lib/libplugin.so" >/dev/null 2>&1 ||
    fail "dl_plugin failed"
plugin_chain() { "$MPQ" fold --lines "$1" | grep plugin_run | sed 's/.*;plugin_run/plugin_run/'; }
assert_eq "$("$MPQ" fold a.db | grep plugin_run | sed 's/.*;plugin_run/plugin_run/')" "plugin_run;libplugin.so+0x1134 6468" \
    "recorded: the static function is an offset"
nframes=$(q a.db 'SELECT count(*) FROM frame')
modules() { q a.db "SELECT path FROM module WHERE path GLOB '$1'"; }
libc=$(modules '*/libc.so.6') ld=$(modules '*/ld-linux*')
idof() { q a.db "SELECT build_id FROM module WHERE path = '$1'"; }
assert_eq "$(requests server.log)" 0 "the recorder asked no server"

# symbolize without --debuginfod: no server asked either
cp a.db plain.db
DEBUGINFOD_URLS=http://127.0.0.1:8002 "$MPQ" symbolize plain.db --debuginfo-path "$T/none" >out 2>err ||
    fail "symbolize failed: $(cat err)"
assert_eq "$(requests server.log)" 0 "symbolize without --debuginfod asked no server"
assert_eq "$(ls -A home)" "" "nothing written under \$HOME"
assert_eq "$(plugin_chain plain.db)" "plugin_run;libplugin.so+0x1134 6468" "without --debuginfod: still an offset"

# fetched: named with file:line, the frames as many
cp a.db b.db
sum_a=$(sha256sum <a.db)
"$MPQ" symbolize b.db --debuginfod http://127.0.0.1:8002 --debuginfod-cache "$T/cache" --debuginfo-path "$T/none" \
    >out 2>err; rc=$?
assert_eq "$rc" 0 "exit status (404s are no failure)"
assert_eq "$(cat err)" "mpquery: warning: symbolize: debuginfod: $libc (build-id $(idof $libc)): not found at http://127.0.0.1:8002 (The requested URL returned error: 404); its frames keep their names
mpquery: warning: symbolize: debuginfod: $ld (build-id $(idof $ld)): not found at http://127.0.0.1:8002 (The requested URL returned error: 404); its frames keep their names" \
    "one line per module the server does not have"
assert_eq "$(sed -n 3p out)" "debuginfod: 1 debug file from http://127.0.0.1:8002 (or the cache), 2 modules without (said above)" "report"
assert_eq "$(plugin_chain b.db)" "plugin_run (libplugin.c:$line_run);plugin_static_alloc (libplugin.c:$line_alloc) 6468" \
    "the static function named, with its line"
assert_eq "$(q b.db "SELECT DISTINCT function || ' ' || file || ':' || line FROM frame_info WHERE module = '$T/lib/libplugin.so' ORDER BY offset")" \
"plugin_static_alloc $ROOT/tests/progs/libplugin.c:$line_alloc
plugin_run $ROOT/tests/progs/libplugin.c:$line_run" "function, file and line of the library's frames"
assert_eq "$(by_function b.db plugin_static_alloc)" "plugin_static_alloc|84|6468|84|0" "its counters"
assert_eq "$(q b.db 'SELECT count(*) FROM frame')" "$nframes" "as many frames as before"
assert_eq "$(q b.db "SELECT count(*) FROM frame_info WHERE module IN ('$libc', '$ld')")|$(q b.db "SELECT group_concat(function || line, ',') FROM frame_info WHERE module IN ('$libc', '$ld')")" \
          "$(q a.db "SELECT count(*) FROM frame_info WHERE module IN ('$libc', '$ld')")|$(q a.db "SELECT group_concat(function || line, ',') FROM frame_info WHERE module IN ('$libc', '$ld')")" \
          "the modules not found keep their frames"
assert_eq "$(ls cache/$bid)" "debuginfo" "the debug file is in the cache"
assert_eq "$(grep 'GET /buildid/' server.log | sed 's/.*GET \/buildid\/\([0-9a-f]*\)\/\([a-z]*\) \([0-9]*\).*/\1 \2 \3/' | sort)" \
          "$(printf '%s\n' "$(idof $libc) debuginfo 404" "$(idof $ld) debuginfo 404" "$bid debuginfo 200" | sort)" "what the server was asked"

# again, the server stopped, from the cache (DEBUGINFOD_URLS, --debuginfod
# without URL): nothing to change; the 404s remembered
kill $srv; wait $srv 2>/dev/null
sum_b=$(sha256sum <b.db)
DEBUGINFOD_URLS=http://127.0.0.1:8002 "$MPQ" symbolize b.db --debuginfod --debuginfod-cache "$T/cache" \
    --debuginfo-path "$T/none" >out 2>err || fail "from the cache: $(cat err)"
assert_match "$(sed -n 2p out)" "^0 addresses changed" "from the cache: nothing changes"
assert_eq "$(sha256sum <b.db)" "$sum_b" "from the cache: the database is unchanged"
assert_eq "$(sed 's/(build-id [0-9a-f]*)/(build-id X)/' err)" "mpquery: warning: symbolize: debuginfod: $libc (build-id X): not found (a recent miss, remembered in $T/cache); its frames keep their names
mpquery: warning: symbolize: debuginfod: $ld (build-id X): not found (a recent miss, remembered in $T/cache); its frames keep their names" \
    "the misses remembered"

# failures: one line per module, nothing written, exit 1 (0 for 404s)
# fails NAME STATUS URL [ENV...]: symbolize a copy of a.db against URL with
# a cache of its own; the database must stay as it was, the cache hold no
# file (the empty misses of 404s aside); the lines of stderr in NAME.lines
fails() {
    local name=$1 status=$2 url=$3 rc; shift 3
    cp a.db $name.db
    env "$@" "$MPQ" symbolize $name.db --debuginfod="$url" --debuginfod-cache "$T/cache.$name" \
        --debuginfo-path "$T/none" >$name.out 2>$name.err; rc=$?
    assert_eq "$rc" "$status" "$name: exit status"
    assert_eq "$(sha256sum <$name.db)" "$sum_a" "$name: the database is unchanged"
    assert_eq "$(find cache.$name -name 'debuginfo*' -size +0 | wc -l)|$(find cache.$name -name 'debuginfo*' -size 0 | wc -l)" \
              "0|$([ $status = 0 ] && echo 3 || echo 0)" "$name: no file in the cache, no miss but 404s"
    assert_eq "$(sed -n 3p $name.out)" "debuginfod: 0 debug files from $url (or the cache), 3 modules without (said above)" "$name: report"
    sed "s|^mpquery: warning: symbolize: debuginfod: \([^ ]*\) (build-id [0-9a-f]*): \(.*\); its frames keep their names$|\1: \2|" \
        $name.err >$name.lines
}
stopped="cannot reach http://127.0.0.1:8002 (Failed to connect to 127.0.0.1 port 8002 after N ms: Couldn't connect to server)"
fails stopped 1 http://127.0.0.1:8002
assert_eq "$(sed 's/after [0-9]* ms/after N ms/' stopped.lines)" "$libc: $stopped
$ld: not asked: $stopped, above
$T/lib/libplugin.so: not asked: $stopped, above" "stopped: the first module, then not asked"

fails notfound 0 http://127.0.0.1:8003
assert_eq "$(cat notfound.lines)" "$libc: not found at http://127.0.0.1:8003 (The requested URL returned error: 404)
$ld: not found at http://127.0.0.1:8003 (The requested URL returned error: 404)
$T/lib/libplugin.so: not found at http://127.0.0.1:8003 (The requested URL returned error: 404)" "404: one line per module"

start=$(date +%s)
fails silent 1 http://127.0.0.1:8004 DEBUGINFOD_TIMEOUT=2
assert_eq "$(cat silent.lines)" "$libc: no answer from http://127.0.0.1:8004 in 2 s (DEBUGINFOD_TIMEOUT)
$ld: not asked: no answer from http://127.0.0.1:8004 in 2 s (DEBUGINFOD_TIMEOUT), above
$T/lib/libplugin.so: not asked: no answer from http://127.0.0.1:8004 in 2 s (DEBUGINFOD_TIMEOUT), above" \
    "silent: one timeout, then not asked"
[ $(($(date +%s) - start)) -le 8 ] || fail "silent: took $(($(date +%s) - start)) s"

fails garbage 1 http://127.0.0.1:8005
assert_eq "$(cat garbage.lines)" "$libc: http://127.0.0.1:8005 answered with what is not its debug file (64 bytes, not ELF); removed from the cache
$ld: http://127.0.0.1:8005 answered with what is not its debug file (64 bytes, not ELF); removed from the cache
$T/lib/libplugin.so: http://127.0.0.1:8005 answered with what is not its debug file (64 bytes, not ELF); removed from the cache" \
    "garbage (HTTP 200): one line per module"

fails nothttp 1 http://127.0.0.1:8006
assert_eq "$(cat nothttp.lines)" "$libc: http://127.0.0.1:8006 failed (Received HTTP/0.9 when not allowed)
$ld: http://127.0.0.1:8006 failed (Received HTTP/0.9 when not allowed)
$T/lib/libplugin.so: http://127.0.0.1:8006 failed (Received HTTP/0.9 when not allowed)" "garbage (not HTTP): one line per module"

# a download that lasts, on a terminal: its progress on one line, redrawn,
# cut to the terminal's width, cleared at the end (1.8 s, no time limit)
for cols in 80 200 40; do
    cp a.db tty$cols.db
    COLUMNS=$cols DEBUGINFOD_TIMEOUT=0 script -qc "'$MPQ' symbolize tty$cols.db --debuginfod http://127.0.0.1:8007 \
        --debuginfod-cache '$T/cache.tty$cols' --debuginfo-path '$T/none'" /dev/null >tty$cols.out
    assert_eq "$(plugin_chain tty$cols.db)" "plugin_run (libplugin.c:$line_run);plugin_static_alloc (libplugin.c:$line_alloc) 6468" \
        "$cols columns: fetched"
    line="mpquery: debuginfod: libplugin.so: [0-9.]+ (B|KiB) of 5.27 KiB"
    [ $cols = 40 ] && line="mpquery: debuginfod: libplugin.so: [0-9.]+"
    progress=$(tr '\r\033' '\n~' <tty$cols.out | grep -a 'libplugin.so: ' | sed 's/~\[K$//')
    [ -n "$progress" ] || fail "$cols columns: no progress line"
    assert_eq "$(printf '%s\n' "$progress" | grep -Evc "^$line\$")" 0 \
        "$cols columns: $(printf '%s\n' "$progress" | wc -l) progress lines, $(printf '%s\n' "$progress" | tail -n 1)"
    assert_eq "$(printf '%s\n' "$progress" | grep -c '.\{'$cols'\}')" 0 "$cols columns: narrower than the terminal"
    assert_eq "$(tr '\r\033' 'R~' <tty$cols.out | grep -ac "R~\[Ktty$cols\.db: ")" 1 "$cols columns: the line cleared before the report"
done

# usage errors, the library missing: one line, nothing written
cp a.db u.db
expect_fail 2 "^mpquery: symbolize: --debuginfod needs a server's URL \(--debuginfod=URL\), or DEBUGINFOD_URLS set$" \
    "$MPQ" symbolize u.db --debuginfod
expect_fail 2 "^mpquery: symbolize: --debuginfod-cache is for --debuginfod$" \
    "$MPQ" symbolize u.db --debuginfod-cache "$T/cache"
expect_fail 2 "^mpquery: symbolize: debuginfod cache /proc/1/x: " \
    "$MPQ" symbolize u.db --debuginfod http://127.0.0.1:8002 --debuginfod-cache /proc/1/x
so=$(ldconfig -p | sed -n 's/.*libdebuginfod\.so\.1 (libc6,x86-64) => //p' | head -n 1)
[ -n "$so" ] || fail "libdebuginfod.so.1 not found by ldconfig"
: >empty.so
expect_fail 1 "^mpquery: symbolize: --debuginfod needs libdebuginfod.so.1 \(Debian package libdebuginfod1\): " \
    unshare -m sh -c "mount --bind '$T/empty.so' '$so' && exec '$MPQ' symbolize u.db --debuginfod http://127.0.0.1:8002"
assert_eq "$(sha256sum <u.db)" "$sum_a" "usage errors: the database is unchanged"
