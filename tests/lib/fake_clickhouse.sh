# Fake ClickHouse servers for a test (tests/lib/fake_clickhouse.py, on
# 127.0.0.1; its header lists the modes), sourced after tests/lib/lib.sh:
#   fake MODE [UPSTREAM]  stops the previous fake server and starts one
#              in MODE, waiting for its port; then FAKE_URL is its
#              http://127.0.0.1:PORT/ and FAKE_RE the URL as a regex.
#   fake_stop  stops it; the test's exit does too (on_exit).
# One fake server at a time: a new one stops the last.
FAKE_PID=
fake_stop() {
    [ -n "$FAKE_PID" ] && { kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; }
    FAKE_PID=
}
fake() {
    fake_stop
    rm -f fake.port
    $PY3 "$ROOT/tests/lib/fake_clickhouse.py" "$1" fake.port ${2:-} 2>>fake.err &
    FAKE_PID=$!
    for _ in $(seq 1 100); do [ -s fake.port ] && break; sleep 0.05; done
    [ -s fake.port ] || fail "fake_clickhouse.py $1 did not start: $(cat fake.err)"
    FAKE_URL=http://127.0.0.1:$(cat fake.port)/
    FAKE_RE=${FAKE_URL//./\\.}
}
on_exit fake_stop
