#!/bin/bash
# Hostile servers for push and --server (fake ones in Python on 127.0.0.1:
# ClickHouse never does this): an answer without end is cut at
# MPQ_CH_ANSWER_MAX bytes (the old build grew to 24 GB until the OOM
# killer), one announced larger is refused unread, and one that trickles a
# byte a second ends at MPQ_CH_TIMEOUT, which bounds a request as a whole
# (the old build waited as long as bytes kept coming). Each is one line,
# exit 1, in bounded memory and time.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

cat > fake.py <<'EOF'
# fake.py MODE PORTFILE: answers GET /ping with "Ok.", every other request
# as MODE says: endless (a body until 1 GB, ended by close), chunked (1 GB
# of chunks), huge (Content-Length: 3 GB), trickle (a body of 1000 bytes,
# one a second), trickle-head (a header, one byte a second); endless-ping
# answers the ping itself without end
import socketserver, sys, time
mode, portfile = sys.argv[1], sys.argv[2]
MB = b'x' * (1 << 20)

def read_request(f):
    head = b''
    while not head.endswith(b'\r\n\r\n'):
        line = f.readline()
        if not line:
            return None
        head += line
    n = 0
    for line in head.split(b'\r\n'):
        if line.lower().startswith(b'content-length:'):
            n = int(line.split(b':')[1])
    f.read(n)
    return head

class H(socketserver.StreamRequestHandler):
    def handle(self):
        w = self.wfile
        try:
            while True:
                head = read_request(self.rfile)
                if head is None:
                    return
                if head.startswith(b'GET /ping') and mode != 'endless-ping':
                    w.write(b'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nOk.\n')
                    w.flush()
                    continue
                if mode in ('endless', 'endless-ping'):
                    w.write(b'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n')
                    for _ in range(1024):
                        w.write(MB)
                elif mode == 'chunked':
                    w.write(b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')
                    for _ in range(1024):
                        w.write(b'100000\r\n' + MB + b'\r\n')
                elif mode == 'huge':
                    w.write(b'HTTP/1.1 200 OK\r\nContent-Length: 3000000000\r\n\r\n')
                    for _ in range(1024):
                        w.write(MB)
                elif mode == 'trickle':
                    w.write(b'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n')
                    for _ in range(1000):
                        w.write(b'1')
                        w.flush()
                        time.sleep(1)
                elif mode == 'trickle-head':
                    for c in b'HTTP/1.1 200 OK\r\nX-Slow: ' + b'y' * 1000:
                        w.write(bytes([c]))
                        w.flush()
                        time.sleep(1)
                return
        except (BrokenPipeError, ConnectionResetError):
            return

class S(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True

s = S(('127.0.0.1', 0), H)
open(portfile + '.tmp', 'w').write(str(s.server_address[1]))
__import__('os').rename(portfile + '.tmp', portfile)
s.serve_forever()
EOF
FAKE=
# fake MODE: starts fake.py (stopping the previous one), sets URL and RE (the URL as a regex)
fake() {
    [ -n "$FAKE" ] && { kill $FAKE; wait $FAKE 2>/dev/null; }
    rm -f port
    $PY3 fake.py "$1" port 2>>fake.err &
    FAKE=$!
    for _ in $(seq 1 100); do [ -s port ] && break; sleep 0.05; done
    [ -s port ] || fail "fake.py $1 did not start: $(cat fake.err)"
    URL=http://127.0.0.1:$(cat port)/
    RE=${URL//./\\.}
}
trap 'rc=$?; [ -n "$FAKE" ] && kill $FAKE 2>/dev/null; at_exit $rc' EXIT

fixture basic >/dev/null
# run NAME CMD...: runs CMD (at most 60 s), its stderr into NAME.err, its
# exit status, seconds and largest resident size (KB) into NAME.rc, .s, .kb
run() {
    local name=$1; shift
    /usr/bin/time -f '%e %M' -o "$name.time" timeout 60 "$@" >/dev/null 2>"$name.err"
    echo $? > "$name.rc"
    tail -n 1 "$name.time" | { read -r s kb; echo "$s" > "$name.s"; echo "$kb" > "$name.kb"; }
}
# bounded NAME REGEX SECONDS KB WHAT: NAME's run failed with exit 1, one
# stderr line matching REGEX, within SECONDS and KB
bounded() {
    assert_eq "$(cat "$1.rc")" 1 "$5: exit 1"
    assert_eq "$(wc -l < "$1.err")" 1 "$5: one line"
    assert_match "$(cat "$1.err")" "$2" "$5: $(cat "$1.err")"
    [ "$(echo "$(cat "$1.s") < $3" | bc)" = 1 ] || fail "$5: took $(cat "$1.s") s, not under $3 s"
    [ "$(cat "$1.kb")" -lt "$4" ] || fail "$5: $(cat "$1.kb") KB resident, not under $4 KB"
    echo "  ok: $5: $(cat "$1.s") s, $(cat "$1.kb") KB"
}

# answers without end: cut at MPQ_CH_ANSWER_MAX, in bounded memory
fake endless
run endless env MPQ_CH_ANSWER_MAX=8M "$MPQ" top --server "$URL"
bounded endless "^mpquery: $RE: the answer is larger than 8388608 bytes \(MPQ_CH_ANSWER_MAX\)$" 20 300000 \
    "--server, an answer without end"
run endless-push env MPQ_CH_ANSWER_MAX=8M "$MPQ" push "$URL" basic.db
bounded endless-push "^mpquery: $RE: the answer is larger than 8388608 bytes \(MPQ_CH_ANSWER_MAX\)$" 20 300000 \
    "push, an answer without end"
fake chunked
run chunked env MPQ_CH_ANSWER_MAX=8M "$MPQ" top --server "$URL"
bounded chunked "^mpquery: $RE: the answer is larger than 8388608 bytes \(MPQ_CH_ANSWER_MAX\)$" 20 300000 \
    "--server, chunks without end"
fake endless-ping
run ping env MPQ_CH_ANSWER_MAX=8M "$MPQ" push "$URL" basic.db
bounded ping "^mpquery: $RE: not a ClickHouse server \(GET /ping: the answer is larger than 8388608 bytes \(MPQ_CH_ANSWER_MAX\)\)$" \
    20 300000 "push, a ping answered without end"
# the default limit: 2 GiB, an answer announced larger refused unread
fake huge
run huge "$MPQ" top --server "$URL"
bounded huge "^mpquery: $RE: the answer is larger than 2147483648 bytes \(MPQ_CH_ANSWER_MAX\)$" 20 300000 \
    "--server, 3 GB announced"
expect_fail 2 "^mpquery: MPQ_CH_ANSWER_MAX: '12X' is not a number of bytes \(> 0, with K, M or G\)$" \
    env MPQ_CH_ANSWER_MAX=12X "$MPQ" top --server "$URL"

# a byte a second: MPQ_CH_TIMEOUT bounds the request, not each wait
fake trickle
run trickle env MPQ_CH_TIMEOUT=2 "$MPQ" top --server "$URL"
bounded trickle "^mpquery: $RE: the answer was not complete in 2 s \(MPQ_CH_TIMEOUT: the most a request takes; [0-9]+ bytes came\)$" \
    6 300000 "--server, an answer of a byte a second"
run trickle-push env MPQ_CH_TIMEOUT=2 "$MPQ" push "$URL" basic.db
bounded trickle-push "^mpquery: $RE: the answer was not complete in 2 s \(MPQ_CH_TIMEOUT: the most a request takes; [0-9]+ bytes came\)$" \
    6 300000 "push, an answer of a byte a second"
fake trickle-head
run trickle-head env MPQ_CH_TIMEOUT=2 "$MPQ" top --server "$URL"
bounded trickle-head "^mpquery: $RE: the answer was not complete in 2 s \(MPQ_CH_TIMEOUT: the most a request takes; [0-9]+ bytes came\)$" \
    6 300000 "--server, a header of a byte a second"
