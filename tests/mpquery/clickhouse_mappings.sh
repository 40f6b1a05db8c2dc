#!/bin/bash
# The counters of format version 5 through a private clickhouse-server
# (tests/lib/clickhouse.sh): push stores every sample row's nmap, mapped,
# maxmapped, rss, memcold and coldage (mp_sample), and top --mmap, fold
# --by each of them, top --by coldage and info's mappings with --server answer
# as the files do with --run all (coldage: the largest of the runs, not
# their sum); info has the mappings of all, not per process. Fixture: tests/lib/fixtures/maps.sql, twice (two runs, the
# second with other values).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
source "$ROOT/tests/lib/clickhouse.sh"

fixture maps >/dev/null
fixture maps b.db >/dev/null
q b.db "UPDATE run SET token = 'tokm2'; UPDATE process SET pid = 301;
        UPDATE sample SET mapped = 2 * mapped, rss = 2 * rss WHERE snapshot = 3 AND stack = 5;
        UPDATE sample SET coldage = 5 WHERE snapshot = 3 AND stack = 7 AND thread = 1"
FILES="maps.db b.db"

ch_start
"$MPQ" push -q "$CH_URL" $FILES 2>push.err || fail "push failed: $(cat push.err)"
assert_eq "$(chc "SELECT sum(nmap), sum(mapped), sum(maxmapped), sum(rss), sum(memcold), max(coldage) FROM mp_sample
                  WHERE run IN (SELECT run FROM mp_runs WHERE token = 'tokm')" | tr '\t' '|')" \
    "$(q maps.db "SELECT sum(nmap), sum(mapped), sum(maxmapped), sum(rss), sum(memcold), max(coldage) FROM sample")" \
    "mp_sample holds every row's new columns"

out() { "$MPQ" "$@" 2>&1; echo "exit $?"; }
same() {
    [ "$2" == "$3" ] || fail "$1: --server differs from the files (< files, > server):
$(diff <(printf '%s\n' "$3") <(printf '%s\n' "$2"))"
    [ "${2##*$'\n'}" == "exit 0" ] || fail "$1: did not succeed: $2"
    echo "  ok: $1: $(($(printf '%s\n' "$2" | wc -l) - 1)) lines alike"
}
alike() { same "$*" "$(out "$@" --server "$CH_URL")" "$(out "$@" $FILES --run all)"; }
# the csv of top without the 'stack' column (a database id)
no_ids() { python3 -c 'import csv,sys; r=list(csv.reader(sys.stdin)); i=r[0].index("stack")
print("\n".join(",".join(x[:i] + x[i + 1:]) for x in r))'; }

for by in nmap mapped maxmapped rss memcold coldage; do alike fold --by $by; done
alike top --mmap --functions --format csv
alike top --mmap --by rss --functions
alike top --functions --by coldage --format csv
same "top --mmap --format csv (stack ids aside)" \
    "$("$MPQ" top --mmap --format csv --server "$CH_URL" | no_ids; echo "exit ${PIPESTATUS[0]}")" \
    "$("$MPQ" top --mmap --format csv $FILES --run all | no_ids; echo "exit ${PIPESTATUS[0]}")"
assert_eq "$("$MPQ" fold --by coldage --server "$CH_URL")" "main;cache_fill 1
main;leak_buf 5" "coldage over two runs: the largest"
assert_eq "$(json_get "$("$MPQ" info --format json --server "$CH_URL")" "j['mappings']")" \
    "$(json_get "$("$MPQ" info --format json $FILES --run all)" "j['mappings']")" "info: the mappings of all"
assert_eq "$(json_get "$("$MPQ" info --format json --server "$CH_URL")" "[('mappings' in x) for x in j['processes']]")" \
    "[False, False]" "info: no mappings per process (the store's sums are per stack over the runs)"
echo PASS
