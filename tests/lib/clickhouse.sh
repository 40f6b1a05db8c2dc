# A private ClickHouse server for a test, sourced after tests/lib/lib.sh:
#   ch_start   installs clickhouse-server and clickhouse-client when missing
#              (tests/lib/deps.sh; a test where they cannot be installed prints
#              "SKIP: clickhouse-server cannot be installed (why)" and exits
#              0), starts a server in a fresh temporary directory listening
#              on 127.0.0.1 only, on free random ports in 20000-60000, and
#              waits for its /ping; then CH_URL=http://127.0.0.1:PORT/,
#              CH_HTTP_PORT, CH_TCP_PORT and CH_DIR are set.
#   ch_stop    stops it (its whole process group) and removes its directory;
#              it also runs when the test exits, fails or is killed (a
#              watchdog stops the server when the test's shell is gone).
#   ch_kill, ch_restart   kill it at once (SIGKILL), start it again on its
#              data and ports (a test of a server dying mid-push).
#   chc SQL    runs SQL with clickhouse-client against it, prints the rows.
# users.xml has the user `default` (no password) and `pushuser` (password
# `secret`), both from 127.0.0.1 only.
CH_SERVER=${CH_SERVER:-clickhouse-server}
CH_CLIENT=${CH_CLIENT:-clickhouse-client}
CH_PID= CH_WATCHDOG= CH_DIR=

# ch_config DIR HTTP_PORT TCP_PORT: the server's config.xml and users.xml
ch_config() {
    local d=$1
    cat >"$d/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <logger><level>information</level><log>$d/server.log</log><errorlog>$d/error.log</errorlog><console>0</console></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>$2</http_port>
  <tcp_port>$3</tcp_port>
  <path>$d/data/</path>
  <tmp_path>$d/tmp/</tmp_path>
  <user_files_path>$d/user_files/</user_files_path>
  <format_schema_path>$d/format_schemas/</format_schema_path>
  <users_config>$d/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>5368709</mark_cache_size>
  <uncompressed_cache_size>5368709</uncompressed_cache_size>
</yandex>
EOF
    cat >"$d/users.xml" <<'EOF'
<?xml version="1.0"?>
<yandex>
  <profiles><default></default></profiles>
  <users>
    <default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default>
    <pushuser><password>secret</password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></pushuser>
  </users>
  <quotas><default></default></quotas>
</yandex>
EOF
}

# ch_ping PORT: the server at 127.0.0.1:PORT answers GET /ping with "Ok."
ch_ping() {
    local answer
    answer=$(exec 2>/dev/null; exec 3<>"/dev/tcp/127.0.0.1/$1" &&
             printf 'GET /ping HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 && timeout 5 cat <&3)
    [[ $answer == *$'\r\n\r\nOk.'* ]]
}

# ch_port_used PORT: something listens on 127.0.0.1:PORT
ch_port_used() { (exec 2>/dev/null; exec 3<>"/dev/tcp/127.0.0.1/$1"); }

# ch_launch: starts the server of CH_DIR on CH_HTTP_PORT and CH_TCP_PORT and
# waits up to 30 s for its /ping; 0 when it answers
ch_launch() {
    # its own session: ch_stop kills the process group, children too
    (cd "$CH_DIR" && exec setsid "$CH_SERVER" --config-file="$CH_DIR/config.xml" >>"$CH_DIR/stdout" 2>&1) &
    CH_PID=$!
    local i
    for i in $(seq 1 300); do
        ch_ping "$CH_HTTP_PORT" && break
        kill -0 "$CH_PID" 2>/dev/null || break
        sleep 0.1
    done
    ch_ping "$CH_HTTP_PORT" || { ch_kill; return 1; }
    # the watchdog: when the test's shell is gone, even killed with its
    # process group (timeout -s KILL), the server goes: a session of its own
    setsid bash -c 'trap "" TERM INT HUP; while kill -0 "$1" 2>/dev/null; do sleep 1; done
                    kill -KILL -- -"$2" 2>/dev/null; rm -rf "$3"' watchdog $$ "$CH_PID" "$CH_DIR" >/dev/null 2>&1 &
    CH_WATCHDOG=$!
}

ch_start() {
    if ! command -v "$CH_SERVER" >/dev/null || ! command -v "$CH_CLIENT" >/dev/null; then
        if ! sh "$ROOT/tests/lib/deps.sh" clickhouse-server clickhouse-client >"$T/ch_deps.log" 2>&1 ||
           ! command -v "$CH_SERVER" >/dev/null; then
            echo "SKIP: clickhouse-server cannot be installed ($(tail -n 1 "$T/ch_deps.log"))"
            exit 0
        fi
    fi
    CH_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mpch.XXXXXX") || fail "cannot make the server's directory"
    trap 'mp_rc=$?; ch_stop; at_exit $mp_rc' EXIT
    trap 'exit 143' TERM INT HUP
    local try
    for try in 1 2 3 4 5; do
        read -r CH_HTTP_PORT CH_TCP_PORT < <(shuf -i 20000-60000 -n 2 | tr '\n' ' ')
        ch_port_used "$CH_HTTP_PORT" || ch_port_used "$CH_TCP_PORT" && continue
        mkdir -p "$CH_DIR/data" "$CH_DIR/tmp" "$CH_DIR/user_files" "$CH_DIR/format_schemas"
        ch_config "$CH_DIR" "$CH_HTTP_PORT" "$CH_TCP_PORT"
        if ch_launch; then
            export CH_URL=http://127.0.0.1:$CH_HTTP_PORT/ CH_HTTP_PORT CH_TCP_PORT CH_DIR
            echo "# clickhouse-server $("$CH_CLIENT" --version 2>/dev/null | grep -o '[0-9][0-9.]*[0-9]' | head -n 1) on 127.0.0.1:$CH_HTTP_PORT (tcp $CH_TCP_PORT)"
            return 0
        fi
        # a port taken meanwhile: another pair; anything else: the log says why
        grep -qi 'address already in use' "$CH_DIR"/*.log "$CH_DIR/stdout" 2>/dev/null || break
        rm -rf "${CH_DIR:?}"/*
    done
    fail "clickhouse-server did not start: $(tail -n 5 "$CH_DIR/error.log" "$CH_DIR/stdout" 2>/dev/null)"
}

# ch_kill: kills the server at once (SIGKILL), its data left as it is
ch_kill() {
    [ -n "$CH_PID" ] && { kill -KILL -- -"$CH_PID" 2>/dev/null; wait "$CH_PID" 2>/dev/null; }
    [ -n "$CH_WATCHDOG" ] && { kill -KILL "$CH_WATCHDOG" 2>/dev/null; wait "$CH_WATCHDOG" 2>/dev/null; }
    CH_PID= CH_WATCHDOG=
}

# ch_restart: starts the killed or stopped server again on its data and ports
ch_restart() { ch_launch || fail "clickhouse-server did not start again: $(tail -n 5 "$CH_DIR/error.log")"; }

ch_stop() {
    if [ -n "$CH_PID" ]; then
        kill -TERM -- -"$CH_PID" 2>/dev/null
        local i
        for i in $(seq 1 100); do kill -0 "$CH_PID" 2>/dev/null || break; sleep 0.1; done
    fi
    ch_kill
    [ -n "$CH_DIR" ] && rm -rf "$CH_DIR"
    CH_DIR=
}

# chc SQL [ARGS...]: the rows of SQL, by the real client on the TCP port
chc() {
    local sql=$1; shift
    "$CH_CLIENT" --host 127.0.0.1 --port "$CH_TCP_PORT" --query "$sql" "$@" || fail "clickhouse-client: $sql"
}
