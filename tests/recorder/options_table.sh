# The MP_* settings are declared once (common/optdefs.h): the recorder, mpquery
# record's options and help come from that table; prof/README.md's settings table
# must list the same variables with the same defaults, in the same order.
. "$(dirname "$0")/../lib/lib.sh"
from_table=$(sed -n 's/^ *X(\(MP_[A-Z_]*\), VAL_[A-Z]*, "\([^"]*\)",.*/\1 \2/p' "$ROOT/common/optdefs.h" | sed 's/ $/ none/')
n=$(printf '%s\n' "$from_table" | wc -l)
[ "$n" -ge 11 ] || fail "read only $n rows from common/optdefs.h"
from_help=$("$MPQ" record --help | sed -n 's/^  .*  \(MP_[A-Z_]*\) (default \(.*\))$/\1 \2/p')
assert_eq "$from_help" "$from_table" "mpquery record --help: the table's $n variables and defaults"
from_readme=$(sed -n 's/^| `\(MP_[A-Z_]*\)` | `\{0,1\}\([^`|]*\)`\{0,1\} |.*/\1 \2/p' "$ROOT/prof/README.md")
assert_eq "$from_readme" "$from_table" "prof/README.md's settings table: the same variables and defaults"
LD_PRELOAD=$LIB MP_OUT=a.db "$B/tests/alloc_functions" >/dev/null 2>&1
assert_eq "$(q a.db "SELECT settings FROM process")" \
    "$(printf '%s\n' "$from_table" | grep -v '^MP_OUT ' | tr ' ' '=' | paste -sd ' ')" "the recorder's settings row: the table's defaults"
