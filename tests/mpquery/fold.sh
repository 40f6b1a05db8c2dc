#!/bin/bash
# mpquery fold: exact folded stacks on the basic fixture; values sum to the
# stacks' total; --by, --filter, --exclude, --lines, --no-inline.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null

assert_eq "$("$MPQ" fold basic.db)" \
"main;app+0x999 7
main;foo(int) 30
main;load;helper 1000
main;parse(std::string const&) 5100
main;parse(std::string const&);parse(std::string const&) 200
main;std::vector<int>::push_back(int const&) 2000" "fold (default rules, memtot)"

assert_eq "$("$MPQ" fold basic.db | awk '{s += $NF} END {print s}')" "$(q basic.db 'SELECT SUM(memtot) FROM sample')" \
  "fold values sum to the samples' memtot"
assert_eq "$("$MPQ" fold basic.db --by memlive)" \
"main;foo(int) 30
main;parse(std::string const&) 3100
main;parse(std::string const&);parse(std::string const&) 100" "--by memlive omits zero values"
assert_eq "$("$MPQ" fold basic.db --by ncalls --no-default-rules | head -2)" \
"__libc_start_main;main;app+0x999;malloc 1
__libc_start_main;main;foo(int);malloc 3" "--no-default-rules"
assert_eq "$("$MPQ" fold basic.db --filter '^parse' --by ncalls)" \
"main;parse(std::string const&) 6
main;parse(std::string const&);parse(std::string const&) 2" "--filter keeps stacks with a matching frame"
assert_eq "$("$MPQ" fold basic.db --filter main --exclude '^parse|helper|foo' --by ncalls)" \
"main;app+0x999 1
main;std::vector<int>::push_back(int const&) 20" "--exclude drops stacks with a matching frame"
assert_eq "$("$MPQ" fold basic.db --filter 'foo' --filter 'helper' --by ncalls)" \
"main;foo(int) 3
main;load;helper 10" "several --filter: any of them"
assert_eq "$("$MPQ" fold basic.db --no-inline --filter load)" "main;load 1000" "--no-inline"
assert_eq "$("$MPQ" fold basic.db --lines --filter load)" "main (main.cc:10);load (main.cc:40);helper (main.cc:41) 1000" "--lines"
expect_fail 2 "^mpquery: fold: bad regex '\(' \(.*\)$" "$MPQ" fold basic.db --filter '('

# every line is "path integer" for flamegraph.pl's parser
"$MPQ" fold basic.db --by nfree | grep -Evq '^[^ ].* [0-9]+$' && fail "a line is not 'path value'"
echo "  ok: every line is 'path value'"

# what --filter / --exclude leave out is said on stderr; stdout stays folded lines
"$MPQ" fold basic.db --filter '^parse' --by ncalls >out.txt 2>err.txt
assert_eq "$(cat out.txt)" \
"main;parse(std::string const&) 6
main;parse(std::string const&);parse(std::string const&) 2" "fold --filter: stdout unchanged"
assert_eq "$(cat err.txt)" "ignored 4 stacks (34 calls, 3037 bytes) with 1 filters" \
  "fold: A, C, D, E left out (10+20+3+1 calls, 1000+2000+30+7 bytes), said on stderr"
"$MPQ" fold basic.db --filter main >/dev/null 2>err.txt
assert_eq "$(cat err.txt)" "" "nothing left out: nothing on stderr"

# --format: csv rows 'path,COUNTER' and json {"by", "stacks": [{"path", "value"}]},
# the same paths and values as the folded lines
fixture basic f.db >/dev/null
folded=$("$MPQ" fold f.db --by ncalls)
assert_eq "$("$MPQ" fold f.db --by ncalls --format csv | tail -n +2 | sed 's/,\([0-9]*\)$/ \1/' | tr -d '"')" "$folded" \
    "fold --format csv: the folded lines as rows"
assert_eq "$("$MPQ" fold f.db --by ncalls --format csv | head -n 1)" "path,ncalls" "fold --format csv: its header"
assert_eq "$("$MPQ" fold f.db --by ncalls --format json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["by"]); print("\n".join(s["path"] + " " + str(s["value"]) for s in j["stacks"]))')" \
    "ncalls
$folded" "fold --format json"
assert_eq "$("$MPQ" diff f.db f.db --fold --format csv | head -n 1)|$("$MPQ" diff f.db f.db --fold --format csv | tail -n +2 | tr -d '"' | awk -F, '$2 != $3' | wc -l)" \
    "path,a,b|0" "diff --fold --format csv: path,a,b, a = b for one profile against itself"
assert_eq "$("$MPQ" diff f.db f.db --fold --format json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(len(j["stacks"]), all(s["a"] == s["b"] for s in j["stacks"]))')" \
    "$("$MPQ" diff f.db f.db --fold | wc -l) True" "diff --fold --format json"
