#!/bin/bash
# -o FILE of every command that writes one (flame, diff --flame, report,
# timeline, export; merge's own test is mpquery/merge.sh):
#   - an -o that is one of the command's inputs (the database, through a
#     symbolic or a hard link, either side of a diff, a rules file) is
#     refused: one line, exit 2, the input unchanged;
#   - the output is written to a temporary file renamed over FILE at the
#     end: a write that fails (the file size limit: EFBIG, or SIGXFSZ)
#     leaves the old FILE as it was, or no FILE, and no temporary file;
#   - FILE keeps its permissions; a symbolic link stays one (the file it
#     names is replaced); /dev/stdout and /dev/full are written, not
#     replaced.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
export MPQUERY_NO_REEXEC=1        # one process a run (the re-exec: mpquery/process_name.sh): faster under ASan
fixture basic >/dev/null
fixture basic b2.db >/dev/null
sum() { md5sum "$@" | cut -d' ' -f1; }
orig=$(sum basic.db)

# ---- -o names an input: refused
ln -s basic.db link.db
NO_PROFILE_CHECK="$NO_PROFILE_CHECK link.db hard.db"       # the fixture, made by hand
ln basic.db hard.db 2>/dev/null || cp basic.db hard.db      # a hard link where the file system has them
printf 'replace ^main$ => MAIN\n' > my.rules
refused() {     # refused OUT INPUT CMD...: exit 2, one line naming both, the input unchanged
    local out=$1 input=$2; shift 2
    expect_fail 2 "^mpquery: $out: the output \(-o\) is the input $input: refusing to overwrite it$" "$MPQ" "$@"
    assert_eq "$(sum basic.db) $(sum b2.db)" "$orig $orig" "$* left the inputs as they were"
}
# names of what the commands write (-o x.db is refused by its name first)
ln -s basic.db basic.svg; ln -s basic.db basic.html; ln -s b2.db b2.svg
for c in flame timeline; do
    expect_fail 2 "^mpquery: $c: -o basic.db: $c writes " "$MPQ" $c basic.db -o basic.db
done
expect_fail 2 '^mpquery: report: -o basic.db: report writes HTML' "$MPQ" report basic.db -o basic.db
assert_eq "$(sum basic.db)" "$orig" "-o basic.db refused by its name: the input as it was"
refused basic.svg basic.db flame basic.db -o basic.svg
refused basic.html basic.db report basic.db -o basic.html
refused basic.svg basic.db timeline basic.db -o basic.svg
refused basic.db basic.db export basic.db --format folded -o basic.db
refused basic.db basic.db export basic.db --format pprof --output=basic.db
refused basic.svg basic.db diff basic.db b2.db --flame -o basic.svg
refused b2.svg b2.db diff basic.db b2.db --flame -o b2.svg
refused b2.svg b2.db diff --flame -o b2.svg basic.db -- basic.db b2.db
refused link.db basic.db export basic.db --format folded -o link.db
refused basic.html link.db report link.db -o basic.html
[ "$(stat -c %i hard.db)" = "$(stat -c %i basic.db)" ] && refused hard.db basic.db timeline basic.db --format csv -o hard.db
refused my.rules my.rules export basic.db --format folded --rules my.rules -o my.rules
assert_eq "$(cat my.rules)" 'replace ^main$ => MAIN' "the rules file unchanged"
assert_eq "$(ls | grep -c 'tmp-')" 0 "no temporary file"

# ---- a write that fails leaves the old file, and no temporary file
declare -A cmd=(
    [flame]="flame basic.db -o out"
    [diff]="diff basic.db b2.db --flame -o out"
    [report]="report basic.db -o out"
    [timeline]="timeline basic.db --format svg -o out"
    [export]="export basic.db --format speedscope -o out"
)
declare -A last=([flame]='</svg>' [diff]='</svg>' [report]='</html>' [timeline]='</svg>' [export]='}')
for c in flame diff report timeline export; do
    echo old > out
    # every output is over 1 KiB: the write fails with EFBIG (SIGXFSZ ignored)
    err=$( (ulimit -f 1; trap '' XFSZ; exec "$MPQ" ${cmd[$c]}) 2>&1 >/dev/null ); rc=$?
    assert_eq "$rc|$err" "1|mpquery: out: write error: File too large" "$c: a write that fails: exit 1, one line"
    assert_eq "$(cat out)|$(ls | grep -c 'tmp-')" "old|0" "$c: the old file as it was, no temporary file"
    "$MPQ" ${cmd[$c]} 2>/dev/null || fail "$c failed"
    [ "$(stat -c %s out)" -gt 1024 ] || fail "$c: the output is not over 1 KiB"
    assert_match "$(tail -n 1 out)" "${last[$c]}\$" "$c: then the whole file, over 1 KiB"
done
for c in flame report; do
    # SIGXFSZ as it comes: killed, the temporary file removed first
    echo old > out
    { (ulimit -f 1; exec "$MPQ" ${cmd[$c]}) >/dev/null 2>&1; rc=$?; } 2>/dev/null     # not the shell's line on it
    assert_eq "$rc|$(cat out)|$(ls | grep -c 'tmp-')" "$((128 + 25))|old|0" "$c: killed by SIGXFSZ: the old file, no temporary file"
    rm out
    (ulimit -f 1; trap '' XFSZ; exec "$MPQ" ${cmd[$c]}) >/dev/null 2>&1
    assert_eq "$(ls | grep -c -e 'tmp-' -e '^out$')" 0 "$c: no file before: none after"
done
"$MPQ" report basic.db -o out && "$MPQ" report basic.db >stdout || fail "report failed"
assert_eq "$(md5sum <out)" "$(md5sum <stdout)" "-o FILE: what stdout gets"

# ---- permissions, symbolic links, devices
echo old > out.svg
chmod 640 out.svg
"$MPQ" flame basic.db -o out.svg || fail "flame failed"
assert_eq "$(stat -c %a out.svg) $(head -c 5 out.svg)" "640 <?xml" "an existing file keeps its permissions"
rm out.svg
(umask 027; "$MPQ" flame basic.db -o out.svg) || fail "flame failed"
assert_eq "$(stat -c %a out.svg)" 640 "a new file: 0666 less the umask (027)"
mkdir real
ln -s real/target.svg via.svg
echo old > real/target.svg
"$MPQ" flame basic.db -o via.svg || fail "flame through a symbolic link failed"
assert_eq "$(stat -c %F via.svg) $(head -c 5 real/target.svg) $(ls real | wc -l)" "symbolic link <?xml 1" \
  "a symbolic link stays one: the file it names replaced (the temporary file next to it, gone)"
assert_eq "$("$MPQ" flame basic.db -o /dev/stdout | head -c 5)" "<?xml" "-o /dev/stdout: written to stdout"
expect_fail 1 '^mpquery: /dev/full: write error: No space left on device$' "$MPQ" report basic.db -o /dev/full
assert_eq "$(stat -c %F /dev/full)" "character special file" "/dev/full is still the device"
mkdir dir
expect_fail 2 '^mpquery: dir: is a directory$' "$MPQ" flame basic.db -o dir
expect_fail 1 '^mpquery: no/such/dir/x.svg: No such file or directory$' "$MPQ" flame basic.db -o no/such/dir/x.svg
assert_eq "$(ls | grep -c 'tmp-') $(sum basic.db)" "0 $orig" "no temporary file left anywhere; the input as it was"
