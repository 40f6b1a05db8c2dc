# MP_UNWIND=cfi (per-address CFI rules, the default) records exactly the
# stacks libunwind records: optimized C++ with inlining, exceptions,
# threads, signals, dlopen'd code, and real programs nobody here wrote
# (python3 and sqlite3, built without frame pointers).
. "$(dirname "$0")/../lib/lib.sh"
# Paths and allocation counts; for the real programs the paths only: python3
# copies its environment, which differs between the two runs (MP_UNWIND), and
# the odd allocation count there moves with it.
paths() { q "$1" "SELECT DISTINCT path$cols FROM stack_totals ORDER BY 1, 2"; }
same() {   # NAME COMMAND...
    local name=$1 cols=", ncalls"; shift
    case $name in python3 | sqlite3) cols=", ''" ;; esac
    MP_UNWIND=libunwind profile lu_$name.db "$@" >/dev/null 2>&1
    MP_UNWIND=cfi profile cfi_$name.db "$@" >/dev/null 2>&1
    local n=$(paths lu_$name.db | wc -l)
    [ "$n" -gt 0 ] || fail "$name: no stacks"
    assert_eq "$(paths cfi_$name.db)" "$(paths lu_$name.db)" "$name: the same $n stacks"
}
same inline_opt $B/tests/inline_opt
same cxx_alloc $B/tests/cxx_alloc
same exceptions $B/tests/exceptions
same threads $B/tests/threads_cross_free
same dl_plugin $B/tests/dl_plugin
same deep_paths $B/tests/deep_paths
# the script in a directory of its own: python3 lists the script's
# directory (sys.path[0]) when it imports, and the profiles written beside
# it between the two runs changed that listing's allocations
mkdir -p py
cat > py/script.py <<'PY'
import json
data = [{"id": i, "name": "item%d" % i, "tags": ["a", "b", str(i)]} for i in range(3000)]
text = json.dumps(data)
print(len(json.loads(text)))
PY
PYTHONHASHSEED=0 PYTHONMALLOC=malloc same python3 /usr/bin/python3 py/script.py
printf 'CREATE TABLE t(a INTEGER, b TEXT);\nWITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 5000) INSERT INTO t SELECT x, hex(randomblob(8)) FROM c;\nCREATE INDEX tb ON t(b);\nSELECT count(*) FROM t;\n' > script.sql
same sqlite3 sh -c "exec sqlite3 :memory: < script.sql"
