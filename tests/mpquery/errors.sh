#!/bin/bash
# Every bad input gets one clear line on stderr and exit 2: missing file,
# not SQLite, empty file, directory, other schema version, missing table,
# inconsistent references, unknown command/option/counter/format. --help
# and --version work; mpquery never writes to the database.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null

expect_fail 2 '^mpquery: nope.db: No such file or directory$' "$MPQ" top nope.db
echo "not a database" > text.db
expect_fail 2 '^mpquery: text.db: not a mallocprof profile \(not an SQLite database\)$' "$MPQ" fold text.db
: > empty.db
expect_fail 2 '^mpquery: empty.db: empty file, not a mallocprof profile$' "$MPQ" info empty.db
mkdir dir.db
expect_fail 2 '^mpquery: dir.db: is a directory, not a mallocprof profile$' "$MPQ" top dir.db
next=$((SCHEMA_VERSION + 1))
sqlite3 v$next.db "CREATE TABLE t(x); PRAGMA user_version = $next;"
expect_fail 2 "^mpquery: v$next.db: schema version $next, this mpquery reads versions 1 to $SCHEMA_VERSION\$" "$MPQ" top v$next.db
expect_fail 2 "^mpquery: v$next.db: schema version $next, this mpquery reads versions 1 to $SCHEMA_VERSION\$" "$MPQ" sql v$next.db 'SELECT 1'
sqlite3 v0.db "CREATE TABLE t(x);"
expect_fail 2 '^mpquery: v0.db: not a mallocprof profile \(schema version 0\)$' "$MPQ" info v0.db
fixture basic notot.db >/dev/null; sqlite3 notot.db "DROP VIEW process_totals; DROP TABLE totals;"
expect_fail 2 '^mpquery: notot.db: not a mallocprof profile \(no such table: totals\)$' "$MPQ" top notot.db
fixture basic badref.db >/dev/null; sqlite3 badref.db "INSERT INTO sample(snapshot, stack, thread, ncalls, memtot, nfree, memlive, maxlive) VALUES (1, 99, 1, 1, 1, 0, 1, 1);"
expect_fail 2 '^mpquery: badref.db: inconsistent profile \(sample refers to missing stack 99\)$' "$MPQ" fold badref.db
fixture basic cycle.db >/dev/null; sqlite3 cycle.db "UPDATE stack_run SET parent = 5 WHERE id = 1;"
expect_fail 2 '^mpquery: cycle.db: inconsistent profile \(stack [0-9]+ is its own ancestor\)$' "$MPQ" top cycle.db
fixture basic noframe.db >/dev/null; sqlite3 noframe.db "UPDATE frame SET module = 42 WHERE id = 3;"
expect_fail 2 '^mpquery: noframe.db: inconsistent profile \(frame 3 refers to missing module 42\)$' "$MPQ" show noframe.db 1

# an unknown command or long option: the nearest names, as git suggests them
# (an edit distance of at most a third of the word), else none
expect_fail 2 "^mpquery: 'frob' is not a command \(see mpquery --help\)$" "$MPQ" frob basic.db
expect_fail 2 "^mpquery: 'tops' is not a command. did you mean 'top'\? \(see mpquery --help\)$" "$MPQ" tops basic.db
expect_fail 2 "^mpquery: 'inof' is not a command. did you mean 'info'\? \(see mpquery --help\)$" "$MPQ" inof basic.db
expect_fail 2 "^mpquery: 'tre' is not a command. did you mean 'tree'\? \(see mpquery --help\)$" "$MPQ" help tre
expect_fail 2 "^mpquery: 'flam' is not a command. did you mean 'flame'\? \(see mpquery --help\)$" "$MPQ" flam basic.db
expect_fail 2 '^mpquery: unknown option --frob \(see mpquery --help\)$' "$MPQ" --frob
expect_fail 2 '^mpquery: top: unknown option --frob \(see mpquery top --help\)$' "$MPQ" top basic.db --frob
expect_fail 2 '^mpquery: top: unknown option --limt. did you mean --limit\? \(see mpquery top --help\)$' "$MPQ" top basic.db --limt 5
expect_fail 2 '^mpquery: top: unknown option --bye. did you mean --by\? \(see mpquery top --help\)$' "$MPQ" top basic.db --bye memtot
expect_fail 2 '^mpquery: top: unknown option --fromat=csv. did you mean --format\? \(see mpquery top --help\)$' "$MPQ" top basic.db --fromat=csv
expect_fail 2 '^mpquery: info: unknown option --bites. did you mean --bytes\? \(see mpquery info --help\)$' "$MPQ" info basic.db --bites
expect_fail 2 '^mpquery: hist: unknown option --hepl. did you mean --help\? \(see mpquery hist --help\)$' "$MPQ" hist basic.db --hepl
expect_fail 2 '^mpquery: push: unknown option --quite. did you mean --quiet\? \(see mpquery push --help\)$' "$MPQ" push --quite
expect_fail 2 '^mpquery: top: unknown option --verbose \(see mpquery top --help\)$' "$MPQ" top basic.db --verbose
assert_eq "$("$MPQ" top basic.db -n 1 --limit 2 --bytes | wc -l)" 4 "-n has a long name, --limit"
expect_fail 2 '^mpquery: fold: unknown option -x \(see mpquery fold --help\)$' "$MPQ" fold basic.db -x
expect_fail 2 '^mpquery: top: option --by needs a value \(see mpquery top --help\)$' "$MPQ" top basic.db --by
expect_fail 2 "^mpquery: top: bad value 'bytes' for --by \(expected ncalls, memtot, nfree, nlive, memlive, maxlive, ntemp, time, nmap, mapped, maxmapped, rss, memcold or coldage\)" "$MPQ" top basic.db --by bytes
expect_fail 2 "^mpquery: diff: bad value 'xml' for --format \(expected text, csv or json\)" "$MPQ" diff basic.db basic.db --format xml
expect_fail 2 "^mpquery: top: bad value '-1' for -n " "$MPQ" top basic.db -n -1
expect_fail 2 '^mpquery: top: missing DB \(see mpquery top --help\)$' "$MPQ" top
expect_fail 2 '^mpquery: sql: too many arguments \(see mpquery sql --help\)$' "$MPQ" sql basic.db 'SELECT 1' basic.db
expect_fail 2 '^mpquery: diff: --fold and --functions do not combine' "$MPQ" diff basic.db basic.db --fold --functions
"$MPQ" >/dev/null 2>&1; assert_eq $? 2 "no arguments: usage, exit 2"

for c in record info top fold diff leaks show sql; do
    h=$("$MPQ" $c --help-all) || fail "$c --help-all exit $?"
    assert_match "$h" "^usage: mpquery $c" "$c --help-all has a usage line"
    assert_match "$h" "example" "$c --help-all has an example"
    h=$("$MPQ" $c --help) || fail "$c --help exit $?"
    assert_match "$h" "^usage: mpquery $c" "$c --help has a usage line"
    assert_match "$h" "example" "$c --help has an example"
done
assert_match "$("$MPQ" --help)" "top .*largest" "mpquery --help lists the commands"
assert_match "$("$MPQ" --version)" "^mpquery [0-9.]+ \\(profile schema version $SCHEMA_VERSION\\)\$" "--version"

# every option a command parses is in its --help (the help is made from the
# option table; these are the command's own entries and the shared ones)
for c in info top fold diff show sql symbolize; do
    for o in $(sed -n -e 's/.*\.name = "\([a-z-]*\)".*/\1/p' -e 's/.*OPTION_\([A-Z_]*\)\b.*/\1/p' \
               "$ROOT/mpquery/cmd_$c.c" | tr 'A-Z_' 'a-z-' | grep -v -x limit); do
        "$MPQ" $c --help-all | grep -q -- "--$o" || fail "$c --help-all does not mention --$o"
    done
done
echo "  ok: every option is documented in its command's --help-all"

# read-only: nothing a command does changes the file (nor leaves a journal)
sum=$(md5sum basic.db)
for args in "info" "top" "top --functions" "fold" "show 5" "sql" ; do
    if [ "$args" = sql ]; then "$MPQ" sql basic.db 'SELECT 1' >/dev/null
    else "$MPQ" $args >/dev/null 2>&1 < /dev/null; "$MPQ" ${args%% *} basic.db ${args#* } >/dev/null 2>&1; fi
done
"$MPQ" diff basic.db basic.db >/dev/null
assert_eq "$(md5sum basic.db)" "$sum" "no command modifies the database"
assert_eq "$(ls basic.db-* 2>/dev/null | wc -l)" 0 "no journal left behind"
chmod 444 basic.db
"$MPQ" top basic.db >/dev/null || fail "a read-only file cannot be read"
echo "  ok: a read-only file is readable"
