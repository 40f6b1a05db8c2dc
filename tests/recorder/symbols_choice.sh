# Function names come from a symbol table sorted once per module
# (resolve_symbol), not from libdwfl's scan of the whole table per address:
# on libc (with its separate debug symbols when installed), libstdc++,
# python3, sqlite3's library and mpquery, both name every probed address
# (five per function symbol) the same.
. "$(dirname "$0")/../lib/lib.sh"
files=()
for f in /lib/x86_64-linux-gnu/libc.so.6 /lib/x86_64-linux-gnu/libstdc++.so.6 /usr/bin/python3 \
         /lib/x86_64-linux-gnu/libsqlite3.so.0 "$B/mpquery"; do
    [ -e "$f" ] && files+=("$(readlink -f "$f")")
done
[ ${#files[@]} -ge 3 ] || fail "fewer than 3 of the ELF files to compare exist"
out=$("$B/tests/symbol_choice" "${files[@]}") || fail "names differ: $out"
assert_match "$out" '^checked [0-9]{4,}, differ 0$' "same symbol for every probe in ${#files[@]} files"
echo "# $out (${#files[@]} files)"
