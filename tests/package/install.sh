# make install PREFIX=DIR: mpquery, the libraries, the header, the rules and
# their README, the man page (generated from the option tables, rendered by
# man -l), the bash completion (sourced by bash, completing commands,
# options, counters and formats), the pkg-config file (a program built with
# its flags links against the API library); make uninstall removes them.
. "$(dirname "$0")/../lib/lib.sh"
sh "$ROOT/tests/lib/deps.sh" man-db >deps.log 2>&1 || { cat deps.log; fail "cannot install man-db (man)"; }
P=$T/inst
make -s -C "$ROOT" install PREFIX="$P" >make.log 2>&1 || { cat make.log; fail "make install failed"; }
for f in bin/mpquery lib/libmallocprof.so lib/libmallocprof_api.so include/mallocprof.h lib/pkgconfig/mallocprof.pc \
         share/mallocprof/filters/default.rules share/mallocprof/filters/suppressions.rules \
         share/mallocprof/filters/README.md share/man/man1/mpquery.1 \
         share/bash-completion/completions/mpquery; do
    [ -f "$P/$f" ] || fail "not installed: $f"
done
echo "  ok: every file installed"
page=$(MANWIDTH=100 man -l "$P/share/man/man1/mpquery.1" 2>man.err)
[ -s man.err ] && fail "man -l warned: $(cat man.err)"
for want in "MPQUERY(1)" "   top" "   report" "   export" "--by COUNTER" "MP_SAMPLE (default" "--a-run N"; do
    printf '%s\n' "$page" | grep -qF -- "$want" || fail "the man page lacks '$want'"
done
echo "  ok: man -l renders the page: every command, its options, the MP_* variables"
# every option of top's --help is in the page
for o in $("$MPQ" top --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
    printf '%s\n' "$page" | grep -qF -- "$o" || fail "the man page lacks top's $o"
done
echo "  ok: top's options all in the page"
complete_words() {
    bash -c ". '$P/share/bash-completion/completions/mpquery'; COMP_WORDS=($1); COMP_CWORD=$2; _mpquery; echo \"\${COMPREPLY[*]}\""
}
assert_eq "$(complete_words "mpquery ti" 1)" "timeline" "completion: commands"
assert_eq "$(complete_words "mpquery top --b" 2)" "--by --bytes" "completion: top's options"
assert_eq "$(complete_words "mpquery top --by me" 3)" "memtot memlive" "completion: counters after --by"
assert_eq "$(complete_words "mpquery export --format p" 3)" "pprof" "completion: export's formats"
assert_eq "$(complete_words "mpquery help hi" 2)" "hist" "completion: help's commands"
assert_eq "$(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags --libs mallocprof | sed 's/ *$//')" "-I$P/include -L$P/lib -lmallocprof_api" \
    "pkg-config --cflags --libs mallocprof"
printf '#include <mallocprof.h>\nint main(void) { return mp_loaded(); }\n' > api.c
gcc -o api api.c $(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags --libs mallocprof) || fail "cannot build with pkg-config's flags"
LD_LIBRARY_PATH=$P/lib ./api; assert_eq "$?" 0 "the API library: mp_loaded() is 0 without the recorder"
assert_eq "$("$P/bin/mpquery" help top)" "$("$P/bin/mpquery" top --help)" "mpquery help top is top --help"
assert_match "$("$P/bin/mpquery" --version)" "^mpquery [0-9.]+ \\(profile schema version $SCHEMA_VERSION\\)\$" "--version: version and schema version"
make -s -C "$ROOT" uninstall PREFIX="$P" >make.log 2>&1 || { cat make.log; fail "make uninstall failed"; }
assert_eq "$(find "$P" -type f | wc -l)" 0 "make uninstall removes every file"
