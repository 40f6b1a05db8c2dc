#!/bin/bash
# Large real programs, where small tests cannot reach (issue 24): clang++-14
# -O2 on a template-heavy file (tests/progs/runtimes/templates.cc) and
# LibreOffice converting an HTML page of 3000 paragraphs and tables to PDF
# (soffice: a shell script, oosplash, soffice.bin, 15-30 processes). Each
# runs as it does natively (output, exit status), and its profile holds
# what must hold in every profile (tests/lib/invariants.py): rows add up to
# their snapshot's totals at every snapshot, the peak's included (before
# the fix, clang's peak rows summed to nearly the exit's calls: 9,210,825
# against 571,911), and nothing appears at the peak before it happened.
# The peak's rows are checked through mpquery too: top --snapshot peak sums
# to the peak snapshot's totals; and every command counts the same stacks.
source "$(dirname "$0")/../lib/runtime.sh"
need clang++-14 clang-14 /usr/bin/clang++-14
need soffice libreoffice-writer-nogui /usr/bin/soffice

# pdf_pages PDF: its page objects
pdf_pages() { grep -a -c '/Type */Page[^s]' "$1"; }

# peak_sums DB EXE: top --snapshot peak's rows against the peak snapshot's
# totals, for the process of EXE with the most calls
peak_sums() {
    local db=$1 exe=$2 pid
    pid=$(q "$db" "SELECT p.pid FROM process p JOIN last_snapshot ls ON ls.process = p.id JOIN totals t ON t.snapshot = ls.id
                   AND t.thread = 0 WHERE p.exe LIKE '%/$exe' ORDER BY t.ncalls DESC LIMIT 1")
    [ -n "$pid" ] || fail "$db: no process of $exe"
    local rows totals
    rows=$("$MPQ" top "$db" --pid "$pid" --snapshot peak --by ncalls -n 0 --format csv |
           awk -F, 'NR > 1 { n += $1; b += $2; f += $3; l += $5 } END { printf "%d|%d|%d|%d", n, b, f, l }')
    totals=$(q "$db" "SELECT t.ncalls - t.ncalls_nostack, t.memtot - t.memtot_nostack, t.nfree, t.memlive FROM totals t
                      JOIN snapshot s ON s.id = t.snapshot JOIN process p ON p.id = s.process
                      WHERE p.pid = $pid AND t.thread = 0 AND s.id = (SELECT id FROM peak_snapshot WHERE process = p.id)")
    assert_eq "$rows" "$totals" "$exe (pid $pid): top --snapshot peak sums to the peak's totals (ncalls, memtot, nfree, memlive)"
}

# --- clang++-14
cp "$PROGS/templates.cc" t.cc
run_native cc-native /usr/bin/clang++-14 -std=c++17 -O2 -c t.cc -o native.o
run_profiled cc-profiled "$T/cc.db" /usr/bin/clang++-14 -std=c++17 -O2 -c t.cc -o profiled.o
assert_eq "$(cat cc-profiled.rc)|$(cat cc-profiled.out)" "$(cat cc-native.rc)|$(cat cc-native.out)" "clang++: exit status and output as native"
cmp -s native.o profiled.o || fail "clang++: the object files differ"
echo "  ok: clang++: the same object file"
check_profile cc.db
peak_sums cc.db clang
assert_match "$(q cc.db "SELECT SUM(ncalls) FROM last_sample")" "^[0-9]{6,}$" "clang++: hundreds of thousands of calls at least"

# --- LibreOffice: HTML to PDF
python3 -c '
print("<html><body>")
for i in range(3000):
    print("<p>Paragraph %d with <b>bold</b> and <i>italic</i> text</p><table><tr><td>%d</td><td>x</td></tr></table>" % (i, i))
print("</body></html>")' >doc.html
# its own profile directory each time: the first start of a new one differs
run_native lo-native HOME="$T/home-native" /usr/bin/soffice --headless --convert-to pdf --outdir native doc.html
run_profiled lo-profiled "$T/lo.db" HOME="$T/home-profiled" /usr/bin/soffice --headless --convert-to pdf --outdir profiled doc.html
assert_eq "$(cat lo-profiled.rc)" "$(cat lo-native.rc)" "soffice: exit status as native"
assert_eq "$(sed 's/native/DIR/' lo-native.out)" "$(sed 's/profiled/DIR/' lo-profiled.out)" "soffice: output as native"
[ -s profiled/doc.pdf ] || fail "soffice: no PDF written under the profiler"
assert_eq "$(pdf_pages profiled/doc.pdf)" "$(pdf_pages native/doc.pdf)" "soffice: the same number of pages"
check_profile lo.db
peak_sums lo.db soffice.bin
nproc=$(q lo.db "SELECT count(*) FROM process")
assert_match "$nproc" "^[0-9]{2}$" "soffice: $nproc process images in one profile"
