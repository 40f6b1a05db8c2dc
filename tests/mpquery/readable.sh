#!/bin/bash
# Text for people (top, diff, show): C++ names shortened after the rules
# (collapse-templates DEPTH of the rules, --full-names; --signatures /
# --no-signatures), sizes in units (--bytes: raw), top's totals row and
# shares, and on a terminal the width (COLUMNS) and the pager ($PAGER,
# --no-pager); csv and json keep whole names and raw numbers. Frames
# without a symbol are module+0xOFFSET in show as in top.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

# long C++ names as the demangler writes them (S: std::string spelled out)
S='std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >'
V='std::vector<int, std::allocator<int> >'
sed 's/ | /\t/g' <<EOF | stacks_db r.db
100,1258291,0,1258291,1258291 | main | Registry::load($S const&) | std::pair<std::__detail::_Node_iterator<std::pair<$S const, $V >, false, true>, bool> std::unordered_map<$S, $V, std::hash<$S >, std::equal_to<$S >, std::allocator<std::pair<$S const, $V > > >::emplace<char const (&) [2], $V >(char const (&) [2], $V&&)
40,204800,40,0,204800 | main | (anonymous namespace)::Parser::operator()(int) const | main::{lambda(int)#1}::operator()(int) const
7,3500,7,0,3500 | main | report(std::ostream&) | std::basic_ostream<char, std::char_traits<char> >& std::operator<< <char, std::char_traits<char>, std::allocator<char> >(std::basic_ostream<char, std::char_traits<char> >&, $S const&)
3,96,0,96,96 | main | sort_keys() | bool operator< <int>(Key<int> const&, Key<int> const&)
1,64,0,64,64 | main | @0x4d2
EOF

# ---- defaults: template lists <…> (default.rules: collapse-templates 0),
# no parameter lists nor return types, sizes in units, a totals row and %
assert_eq "$("$MPQ" top r.db)" \
"ncalls    memtot      %  stack  where
   151  1.40 MiB  100.0         (total: 5 stacks in 5 rows)
   100  1.20 MiB   85.8  3      std::unordered_map<…>::emplace<…> < Registry::load < main
    40   200 KiB   14.0  5      main::{lambda(int)#1}::operator() < (anonymous namespace)::Parser::operator() < main
     7  3.42 KiB    0.2  7      std::operator<< <…> < report < main
     3      96 B    0.0  9      operator< <…> < sort_keys < main
     1      64 B    0.0  10     app+0x4d2 < main" \
  "top: names shortened (lambda, operator(), operator<<, operator<, anonymous namespace), units, totals of 1466751 bytes, %"
assert_eq "$("$MPQ" top r.db --functions)" \
"self.ncalls  self.memtot  self%  inclusive.memtot  inclusive%  function
        151     1.40 MiB  100.0          1.40 MiB       100.0  (total: 5 functions)
        100     1.20 MiB   85.8          1.20 MiB        85.8  std::unordered_map<…>::emplace<…>
         40      200 KiB   14.0           200 KiB        14.0  main::{lambda(int)#1}::operator()
          7     3.42 KiB    0.2          3.42 KiB         0.2  std::operator<< <…>
          3         96 B    0.0              96 B         0.0  operator< <…>
          1         64 B    0.0              64 B         0.0  app+0x4d2" "top --functions: the --by counter's self and inclusive, %, ncalls"
# the --functions table was 165 characters wide before the first name
header=$("$MPQ" top r.db --functions | head -1)
assert_eq "${#header}" 71 "top --functions: 63 characters before the names (was 165)"

# ---- collapse-templates DEPTH: the last line of all the rules files wins
printf 'collapse-templates 1\n' > d1.rules
printf 'collapse-templates 2   # two levels\n' > d2.rules
printf 'collapse-templates off\n' > off.rules
names() { "$MPQ" top r.db --functions -n 4 "$@" | tail -n +3 | sed 's/.*  //'; }
assert_eq "$(names --rules ./d1.rules)" \
"std::unordered_map<std::string, std::vector<…>, std::hash<…>, std::equal_to<…>, std::allocator<…> >::emplace<char const (&) [2], std::vector<…> >
main::{lambda(int)#1}::operator()
std::operator<< <char, std::char_traits<…>, std::allocator<…> >
operator< <int>" "collapse-templates 1: lists nested in lists become <…>"
assert_eq "$(names --rules ./d2.rules)" \
"std::unordered_map<std::string, std::vector<int>, std::hash<std::string>, std::equal_to<std::string>, std::allocator<std::pair<…> > >::emplace<char const (&) [2], std::vector<int> >
main::{lambda(int)#1}::operator()
std::operator<< <char, std::char_traits<char>, std::allocator<char> >
operator< <int>" "collapse-templates 2"
whole="std::unordered_map<std::string, std::vector<int>, std::hash<std::string>, std::equal_to<std::string>, std::allocator<std::pair<std::string const, std::vector<int> > > >::emplace<char const (&) [2], std::vector<int> >"
assert_eq "$(names --rules ./off.rules | head -1)" "$whole" "collapse-templates off"
assert_eq "$(names --full-names | head -1)" "$whole" "--full-names: no collapsing (default.rules' std::string and std::vector<int> stay)"
assert_eq "$(names --full-names --signatures | head -1)" \
  "std::pair<std::__detail::_Node_iterator<std::pair<std::string const, std::vector<int> >, false, true>, bool> $whole(char const (&) [2], std::vector<int>&&)" \
  "--full-names --signatures: the name as the rules leave it, return type and parameters"
assert_eq "$(names --signatures)" \
"std::pair<…> std::unordered_map<…>::emplace<…>(char const (&) [2], std::vector<…>&&)
main::{lambda(int)#1}::operator()(int) const
std::basic_ostream<…>& std::operator<< <…>(std::basic_ostream<…>&, std::string const&)
bool operator< <…>(Key<…> const&, Key<…> const&)" "--signatures: parameter lists (collapsed too) and return types"
assert_eq "$(names --no-signatures --full-names | sed -n 2,4p)" \
"main::{lambda(int)#1}::operator()
std::operator<< <char, std::char_traits<char>, std::allocator<char> >
operator< <int>" "--no-signatures: operator(), operator<< and operator< keep their names"

# csv and json: whole names, raw numbers, no totals row
assert_eq "$("$MPQ" top r.db --format csv | sed -n '2p;4p')" \
"100,1258291,0,100,1258291,1258291,0,3,1,\"std::pair<std::__detail::_Node_iterator<std::pair<std::string const, std::vector<int> >, false, true>, bool> $whole(char const (&) [2], std::vector<int>&&) < Registry::load(std::string const&) < main\"
7,3500,7,0,0,3500,0,7,1,\"std::basic_ostream<char, std::char_traits<char> >& std::operator<< <char, std::char_traits<char>, std::allocator<char> >(std::basic_ostream<char, std::char_traits<char> >&, std::string const&) < report(std::ostream&) < main\"" \
  "csv: whole names, raw numbers"
where() { python3 -c 'import csv, sys; [print(r["where"]) for r in csv.DictReader(sys.stdin)]'; }
assert_eq "$("$MPQ" top r.db --format csv --no-signatures | where | tail -n +2)" \
"main::{lambda(int)#1}::operator() < (anonymous namespace)::Parser::operator() < main
std::operator<< <char, std::char_traits<char>, std::allocator<char> > < report < main
operator< <int> < sort_keys < main
app+0x4d2 < main" "csv --no-signatures: asked for, without parameters (templates whole)"
json=$("$MPQ" top r.db --functions --format json -n 2)
assert_eq "$(json_get "$json" 'len(j), j[1]["function"], j[1]["self"]["memtot"]')" \
  "(2, 'main::{lambda(int)#1}::operator()(int) const', 204800)" "json: whole names, raw numbers, no totals row"

# names that are not C++ stay as they are
sed 's/ | /\t/g' <<'EOF' | stacks_db n.db
1 | main | <module>
2 | main | a < b > c
4 | main | ns::f<((3)>(2))>(int)
8 | main | foo (bar.py:3)
16 | main | Foo::operator->() const
EOF
assert_eq "$("$MPQ" top n.db --functions --bytes | sed 's/.*  //' | tail -n +3)" \
"Foo::operator->
foo (bar.py:3)
ns::f<…>
a < b > c
<module>" "not C++: <module>, a < b > c, foo (bar.py:3) unchanged; '>' inside parentheses, operator->"
assert_eq "$("$MPQ" top n.db --functions --full-names | sed -n 5p | sed 's/.*  //')" "ns::f<((3)>(2))>" "--full-names: ns::f<((3)>(2))>"

expect_fail 2 "^mpquery: \./bad\.rules:2: collapse-templates needs a depth from 0 to 1000, or off: 'deep'$" \
  bash -c "printf '# x\ncollapse-templates deep\n' > bad.rules; \"$MPQ\" top r.db --rules ./bad.rules"
expect_fail 2 "^mpquery: \./bad2\.rules:1: collapse-templates needs a depth from 0 to 1000, or off: '\(none\)'$" \
  bash -c "printf 'collapse-templates\n' > bad2.rules; \"$MPQ\" top r.db --rules ./bad2.rules"

# ---- sizes: units by default, --bytes raw
assert_eq "$("$MPQ" top r.db --bytes -n 2)" \
"ncalls   memtot      %  stack  where
   151  1466751  100.0         (total: 5 stacks in 5 rows)
   100  1258291   85.8  3      std::unordered_map<…>::emplace<…> < Registry::load < main
    40   204800   14.0  5      main::{lambda(int)#1}::operator() < (anonymous namespace)::Parser::operator() < main" "--bytes"
assert_eq "$("$MPQ" top r.db --by memlive --all-counters -n 1)" \
"ncalls    memtot  nfree  nlive   memlive      %   maxlive  ntemp  stack  where
   151  1.40 MiB     47    104  1.20 MiB  100.0  1.40 MiB      0         (total: 3 stacks in 3 rows)
   100  1.20 MiB      0    100  1.20 MiB  100.0  1.20 MiB      0  3      std::unordered_map<…>::emplace<…> < Registry::load < main" \
  "--by memlive --all-counters: every counter, % after memlive, 3 stacks hold memory"

# ---- show: the same names as top; a frame without a symbol app+0x4d2 in both
# (its backtraces start lines with '#', which run.sh shows: not echoed)
quiet_eq() { [ "$1" == "$2" ] || fail "$3: expected [$2], got [$1]"; echo "  ok: $3"; }
quiet_eq "$("$MPQ" show r.db 10)" \
"stack 10: ncalls 1 memtot 64 B nfree 0 nlive 1 memlive 64 B maxlive 64 B ntemp 0
#0   app+0x4d2  (/usr/bin/app+0x4d2)
#1   main  (/usr/bin/app+0x10010)" "show: an unresolved frame is app+0x4d2"
assert_eq "$("$MPQ" top r.db --format csv | awk -F, '$8 == 10 { print $10 }')" "app+0x4d2 < main" "top: the same frame is app+0x4d2"
assert_eq "$("$MPQ" show r.db 10 --format csv | sed -n 2p)" "0,app+0x4d2,,0,0,/usr/bin/app,1234" "show csv: app+0x4d2 too"
quiet_eq "$("$MPQ" show r.db 3 | sed -n 2p)" "#0   std::unordered_map<…>::emplace<…>  (/usr/bin/app+0x10030)" "show: the leaf named as top names it"
quiet_eq "$("$MPQ" show r.db 3 --full-names --bytes | head -2)" \
"stack 3: ncalls 100 memtot 1258291 nfree 0 nlive 100 memlive 1258291 maxlive 1258291 ntemp 0
#0   $whole  (/usr/bin/app+0x10030)" "show --full-names --bytes"

# ---- diff: units and names as top's
assert_eq "$("$MPQ" diff r.db r.db -n 2 --all)" \
"a: r.db, b: r.db
a memtot  b memtot  delta  ratio  where
1.40 MiB  1.40 MiB    0 B  1.000  (total: 5 stacks, 3 more not shown)
1.20 MiB  1.20 MiB    0 B  1.000  std::unordered_map<…>::emplace<…> < Registry::load < main
 200 KiB   200 KiB    0 B  1.000  main::{lambda(int)#1}::operator() < (anonymous namespace)::Parser::operator() < main" "diff: units, names shortened"

# ---- a terminal: its width (COLUMNS), the pager ($PAGER; --no-pager)
command -v script >/dev/null || fail "script(1) (util-linux) is needed for the terminal tests"
# tty CMD: CMD's output on a pseudo-terminal, without the terminal's CRs
tty() { script -qec "$1" /dev/null </dev/null | tr -d '\r'; }
export PAGER=cat
assert_eq "$(COLUMNS=60 tty "$MPQ top r.db")" \
"ncalls    memtot      %  stack  where
   151  1.40 MiB  100.0         (total: 5 stacks in 5 rows)
   100  1.20 MiB   85.8  3      std::unordered_map<…>::empl…
    40   200 KiB   14.0  5      main::{lambda(int)#1}::oper…
     7  3.42 KiB    0.2  7      std::operator<< <…> < repor…
     3      96 B    0.0  9      operator< <…> < sort_keys <…
     1      64 B    0.0  10     app+0x4d2 < main" "COLUMNS=60: lines cut to 60 columns with …"
assert_eq "$(COLUMNS=100 tty "$MPQ top r.db")" \
"ncalls    memtot      %  stack  where
   151  1.40 MiB  100.0         (total: 5 stacks in 5 rows)
   100  1.20 MiB   85.8  3      std::unordered_map<…>::emplace<…> < Registry::load < main
    40   200 KiB   14.0  5      main::{lambda(int)#1}::operator() < (anonymous namespace)::Parser::…
     7  3.42 KiB    0.2  7      std::operator<< <…> < report < main
     3      96 B    0.0  9      operator< <…> < sort_keys < main
     1      64 B    0.0  10     app+0x4d2 < main" "COLUMNS=100"
quiet_eq "$(COLUMNS=60 tty "$MPQ show r.db 10")" \
"stack 10: ncalls 1 memtot 64 B nfree 0 nlive 1 memlive 64 B…
#0   app+0x4d2  (/usr/bin/app+0x4d2)
#1   main  (/usr/bin/app+0x10010)" "show: COLUMNS=60"
assert_eq "$(COLUMNS=60 tty "$MPQ top r.db -n 1 --format csv" | head -1)" \
  "ncalls,memtot,nfree,nlive,memlive,maxlive,ntemp,stack,stacks,where" "csv on a terminal: whole lines"
assert_eq "$(COLUMNS=60 "$MPQ" top r.db -n 1 | tail -1)" \
  "   100  1.20 MiB   85.8  3      std::unordered_map<…>::emplace<…> < Registry::load < main" "a pipe gets whole lines (COLUMNS or not)"
# the pager: only for an output longer than the screen (LINES - 1 lines;
# tests/mpquery/terminal.sh tests the decision for every text command)
assert_eq "$(LINES=3 COLUMNS=60 PAGER='sed s/^/P:/' tty "$MPQ top r.db -n 1")" \
"P:ncalls    memtot      %  stack  where
P:   151  1.40 MiB  100.0         (total: 5 stacks in 5 rows)
P:   100  1.20 MiB   85.8  3      std::unordered_map<…>::empl…" "PAGER: a long output goes through it"
assert_eq "$(LINES=4 COLUMNS=60 PAGER='sed s/^/P:/' tty "$MPQ top r.db -n 1")" \
"ncalls    memtot      %  stack  where
   151  1.40 MiB  100.0         (total: 5 stacks in 5 rows)
   100  1.20 MiB   85.8  3      std::unordered_map<…>::empl…" "PAGER: not a short one"
assert_eq "$(LINES=3 COLUMNS=60 PAGER='sed s/^/P:/' tty "$MPQ top r.db -n 1 --no-pager" | head -1)" \
  "ncalls    memtot      %  stack  where" "--no-pager: not through it"
assert_eq "$(LINES=3 COLUMNS=60 PAGER='sed s/^/P:/' tty "$MPQ show r.db 10" | head -1)" \
  "P:stack 10: ncalls 1 memtot 64 B nfree 0 nlive 1 memlive 64 B…" "show: through the pager too"
assert_eq "$(LINES=3 COLUMNS=60 PAGER='sed s/^/P:/' tty "$MPQ diff r.db r.db -n 1" | head -2)" \
  "P:a: r.db, b: r.db
P:a memtot  b memtot  delta  ratio  where" "diff: through the pager too (the legend too)"
assert_eq "$(LINES=3 COLUMNS=60 PAGER= tty "$MPQ top r.db -n 1" | head -1)" "ncalls    memtot      %  stack  where" \
  "PAGER empty: no pager"
assert_eq "$(PAGER='sed s/^/P:/' "$MPQ" top r.db -n 1 | head -1)" "ncalls    memtot      %  stack  where" \
  "a pipe: no pager"
assert_eq "$(LINES=3 COLUMNS=60 PAGER='sed s/^/P:/' tty "$MPQ top r.db --frob; echo rc=\$?")" \
  "mpquery: top: unknown option --frob (see mpquery top --help)
rc=2" "a usage error is not paged"
