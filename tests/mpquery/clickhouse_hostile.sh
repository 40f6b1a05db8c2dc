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
source "$ROOT/tests/lib/fake_clickhouse.sh"

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
run endless env MPQ_CH_ANSWER_MAX=8M "$MPQ" top --server "$FAKE_URL"
bounded endless "^mpquery: $FAKE_RE: the answer is larger than 8388608 bytes \(MPQ_CH_ANSWER_MAX\)$" 20 300000 \
    "--server, an answer without end"
run endless-push env MPQ_CH_ANSWER_MAX=8M "$MPQ" push "$FAKE_URL" basic.db
bounded endless-push "^mpquery: $FAKE_RE: the answer is larger than 8388608 bytes \(MPQ_CH_ANSWER_MAX\)$" 20 300000 \
    "push, an answer without end"
fake chunked
run chunked env MPQ_CH_ANSWER_MAX=8M "$MPQ" top --server "$FAKE_URL"
bounded chunked "^mpquery: $FAKE_RE: the answer is larger than 8388608 bytes \(MPQ_CH_ANSWER_MAX\)$" 20 300000 \
    "--server, chunks without end"
fake endless-ping
run ping env MPQ_CH_ANSWER_MAX=8M "$MPQ" push "$FAKE_URL" basic.db
bounded ping "^mpquery: $FAKE_RE: not a ClickHouse server \(GET /ping: the answer is larger than 8388608 bytes \(MPQ_CH_ANSWER_MAX\)\)$" \
    20 300000 "push, a ping answered without end"
# the default limit: 2 GiB, an answer announced larger refused unread
fake huge
run huge "$MPQ" top --server "$FAKE_URL"
bounded huge "^mpquery: $FAKE_RE: the answer is larger than 2147483648 bytes \(MPQ_CH_ANSWER_MAX\)$" 20 300000 \
    "--server, 3 GB announced"
expect_fail 2 "^mpquery: MPQ_CH_ANSWER_MAX: '12X' is not a number of bytes \(> 0, with K, M or G\)$" \
    env MPQ_CH_ANSWER_MAX=12X "$MPQ" top --server "$FAKE_URL"

# a byte a second: MPQ_CH_TIMEOUT bounds the request, not each wait
fake trickle
run trickle env MPQ_CH_TIMEOUT=2 "$MPQ" top --server "$FAKE_URL"
bounded trickle "^mpquery: $FAKE_RE: the answer was not complete in 2 s \(MPQ_CH_TIMEOUT: the most a request takes; [0-9]+ bytes came\)$" \
    6 300000 "--server, an answer of a byte a second"
run trickle-push env MPQ_CH_TIMEOUT=2 "$MPQ" push "$FAKE_URL" basic.db
bounded trickle-push "^mpquery: $FAKE_RE: the answer was not complete in 2 s \(MPQ_CH_TIMEOUT: the most a request takes; [0-9]+ bytes came\)$" \
    6 300000 "push, an answer of a byte a second"
fake trickle-head
run trickle-head env MPQ_CH_TIMEOUT=2 "$MPQ" top --server "$FAKE_URL"
bounded trickle-head "^mpquery: $FAKE_RE: the answer was not complete in 2 s \(MPQ_CH_TIMEOUT: the most a request takes; [0-9]+ bytes came\)$" \
    6 300000 "--server, a header of a byte a second"
