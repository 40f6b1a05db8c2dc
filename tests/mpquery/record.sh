#!/bin/bash
# mpquery record: LD_PRELOAD of the library next to mpquery (or ../lib),
# prepended to an existing LD_PRELOAD; MP_* variables from options (MP_OUT
# made absolute); PATH lookup; the command's exit status (128 + signal);
# statically linked programs refused; --help documents every MP_* variable
# of prof/base/options.c with the same default. Uses a stand-in library that
# records its environment, so it runs without the real recorder.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

mkdir -p inst/bin inst/lib flat
cat > fake.c <<'C'
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void dump(void)
{
    const char *out = getenv("FAKE_OUT");
    if (!out) return;
    FILE *f = fopen(out, "a");
    if (!f) return;
    const char *names[] = { "LD_PRELOAD", "MP_OUT", "MP_INTERVAL", "MP_DEPTH", "MP_THRESHOLD", "MP_SAMPLE",
                            "MP_ENABLED", "MP_SIGNAL", "MP_UNWIND", "MP_MAX_MEMORY", "MP_QUIET" };
    for (unsigned i = 0; i < sizeof names / sizeof *names; i++) {
        const char *v = getenv(names[i]);
        if (v) fprintf(f, "%s=%s\n", names[i], v);
    }
    fclose(f);
}
C
gcc -shared -fPIC -o inst/lib/libmallocprof.so fake.c || fail "cannot build the stand-in library"
cp inst/lib/libmallocprof.so flat/
cp "$MPQ" inst/bin/mpquery
cp "$MPQ" flat/mpquery
export FAKE_OUT=$T/env.txt

: > env.txt
inst/bin/mpquery record -o rel.db --interval 2.5 --depth 64 --threshold -1024 --sample 64K --enabled 0 \
    --signal USR2 --unwind fp --max-memory 1G -- true || fail "record true failed"
assert_eq "$(grep -v LD_PRELOAD env.txt)" \
"MP_OUT=$T/rel.db
MP_INTERVAL=2.5
MP_DEPTH=64
MP_THRESHOLD=-1024
MP_SAMPLE=64K
MP_ENABLED=0
MP_SIGNAL=USR2
MP_UNWIND=fp
MP_MAX_MEMORY=1G
MP_QUIET=1" "every option becomes its MP_* variable, MP_OUT absolute; MP_QUIET=1 by default"
assert_eq "$(grep LD_PRELOAD env.txt)" "LD_PRELOAD=$T/inst/lib/libmallocprof.so" "installed layout: bin/../lib/libmallocprof.so"

: > env.txt
LD_PRELOAD=/nonexistent/other.so flat/mpquery record sh -c 'exit 0' 2>/dev/null || fail "record sh failed"
assert_eq "$(grep LD_PRELOAD env.txt | head -1)" "LD_PRELOAD=$T/flat/libmallocprof.so:/nonexistent/other.so" \
  "library next to mpquery, prepended to an existing LD_PRELOAD; PATH lookup"
assert_eq "$(grep -c MP_OUT env.txt)" 0 "no -o: MP_OUT left to the recorder's default"

# the processes' info lines: quiet unless --verbose or MP_QUIET says otherwise
: > env.txt; flat/mpquery record --verbose true 2>/dev/null
assert_eq "$(grep MP_QUIET env.txt)" "MP_QUIET=0" "--verbose: MP_QUIET=0"
: > env.txt; MP_QUIET=no flat/mpquery record true 2>/dev/null
assert_eq "$(grep MP_QUIET env.txt)" "MP_QUIET=no" "MP_QUIET set by the user: kept"
: > env.txt; MP_QUIET=0 flat/mpquery record -q true 2>/dev/null
assert_eq "$(grep MP_QUIET env.txt)" "MP_QUIET=1" "-q: MP_QUIET=1 whatever the environment"
: > env.txt; flat/mpquery record --quiet -o q.db true 2>/dev/null
assert_eq "$(grep -c MP_QUIET=1 env.txt):$(grep -c MP_OUT env.txt)" "1:1" "--quiet is a flag (takes no value)"
expect_fail 2 '^mpquery: record: option --quiet takes no value' flat/mpquery record --quiet=1 true

flat/mpquery record -- sh -c 'exit 7'; assert_eq $? 7 "exit status of the command"
flat/mpquery record -- sh -c 'kill -TERM $$'; assert_eq $? $((128 + 15)) "killed by SIGTERM: 128 + 15"
flat/mpquery record -- sh -c 'echo "$0 $1"' a 'b c' > args.txt
assert_eq "$(cat args.txt)" "a b c" "arguments passed through unchanged"

# a command record cannot run exits as a shell's would (bash: 127 not
# found, 126 found but not runnable), with bash's words
expect_fail 127 '^mpquery: no-such-command-xyz: command not found$' flat/mpquery record no-such-command-xyz
expect_fail 127 '^mpquery: ./no-such-file: No such file or directory$' flat/mpquery record -- ./no-such-file
printf '#!/bin/sh\necho ran\n' > not_exec.sh && chmod 644 not_exec.sh && mkdir -p a_dir denied_bin
cp not_exec.sh denied_bin/denied-cmd
expect_fail 126 '^mpquery: ./not_exec.sh: Permission denied$' flat/mpquery record -- ./not_exec.sh
expect_fail 126 '^mpquery: ./a_dir: Is a directory$' flat/mpquery record -- ./a_dir
expect_fail 126 '^mpquery: ./not_exec.sh/x: Not a directory$' flat/mpquery record -- ./not_exec.sh/x
PATH=$T/denied_bin:$PATH expect_fail 126 '^mpquery: denied-cmd: Permission denied$' flat/mpquery record denied-cmd
for cmd in no-such-command-xyz ./no-such-file ./not_exec.sh ./a_dir ./not_exec.sh/x denied-cmd; do
    PATH=$T/denied_bin:$PATH bash -c "$cmd" 2>/dev/null; want=$?
    PATH=$T/denied_bin:$PATH flat/mpquery record -- "$cmd" 2>/dev/null
    assert_eq "$?" "$want" "record $cmd: bash's exit code"
done
expect_fail 2 '^mpquery: record: missing COMMAND \(or --pid PID\) \(see mpquery record --help\)$' flat/mpquery record -o x.db
expect_fail 2 "^mpquery: record: bad value '0' for --depth" flat/mpquery record --depth 0 true
expect_fail 2 "^mpquery: record: bad value 'dwarf' for --unwind" flat/mpquery record --unwind dwarf true
expect_fail 2 "^mpquery: record: bad value '1K' for --max-memory" flat/mpquery record --max-memory 1K true
expect_fail 2 '^mpquery: record: unknown option --frob' flat/mpquery record --frob true
mkdir nolib && cp "$MPQ" nolib/mpquery
expect_fail 1 '^mpquery: record: libmallocprof.so not found next to mpquery' nolib/mpquery record true

printf 'int main(void) { return 3; }\n' > st.c
if gcc -static -o static_prog st.c 2>/dev/null; then
    expect_fail 2 '^mpquery: ./static_prog: statically linked, LD_PRELOAD cannot profile it$' flat/mpquery record ./static_prog
else
    echo "# no static libc: the static-binary refusal is not tested"
fi
gcc -o dyn_prog st.c && { flat/mpquery record ./dyn_prog; assert_eq $? 3 "a dynamic program runs"; }

