# The format's columns as C X-macros (build/format_columns.h), made from the
# CREATE TABLE statements of schema/profile.sql (the last file given) and of
# the older versions' schema/vN*.sql (given first): a column's `since` is the
# lowest version whose file has it. Columns are one per line, as the format
# writes them: "    name TYPE ...", DEFAULT read up to the next blank.
#   awk -f schema/format.awk schema/v*.sql schema/profile.sql > format_columns.h

FNR == 1 {
    last = FILENAME
    version = FILENAME
    sub(/.*\/v/, "", version)
    sub(/[^0-9].*/, "", version)
}
/^CREATE TABLE IF NOT EXISTS [a-z_]+ \($/ { table = $6; next }
table != "" && /^\)/ { table = ""; next }
table != "" && $1 ~ /^[a-z_]+$/ && $2 ~ /^(INTEGER|TEXT|REAL),?$/ {
    sub(/,$/, "", $2)
    key = table "." $1
    if (FILENAME != ARGV[ARGC - 1]) {
        if (!(key in first) || version + 0 < first[key]) first[key] = version + 0
        next
    }
    deflt = "NULL"
    if (match($0, /DEFAULT [^ ,]+/)) deflt = "\"" substr($0, RSTART + 8, RLENGTH - 8) "\""
    if (!(table in seen)) { seen[table] = 1; tables[ntables++] = table }
    cols[table] = cols[table] sprintf(" \\\n    X(%s, %s, %s, @%s@, %s)", table, $1, $2, key, deflt)
    next
}
# anything else in a table is a constraint or a comment, or the build stops
table != "" && $1 != "--" && $1 != "PRIMARY" && $1 != "UNIQUE" {
    printf "%s:%d: not a column this script reads: %s\n", FILENAME, FNR, $0 > "/dev/stderr"
    failed = 1
    exit 1
}
/^PRAGMA user_version = [0-9]+;/ && FILENAME == ARGV[ARGC - 1] { current = $4 + 0 }
END {
    if (failed) exit 1
    if (!current) { print "schema/format.awk: no PRAGMA user_version in " ARGV[ARGC - 1] > "/dev/stderr"; exit 1 }
    print "/* Generated from schema/profile.sql and schema/v*.sql by schema/format.awk: do not edit."
    print " * FORMAT_<table>(X): X(table, column, SQL type, since version, DEFAULT as SQL text or NULL),"
    print " * in the order of the CREATE TABLE; FORMAT_TABLES(T): T(table) in the order of the file. */"
    for (i = 0; i < ntables; i++) {
        t = tables[i]
        s = cols[t]
        while (match(s, /@[a-z_]+\.[a-z_]+@/)) {
            key = substr(s, RSTART + 1, RLENGTH - 2)
            s = substr(s, 1, RSTART - 1) (key in first ? first[key] : current) substr(s, RSTART + RLENGTH)
        }
        printf "#define FORMAT_%s(X)%s\n", t, s
    }
    printf "#define FORMAT_TABLES(T)"
    for (i = 0; i < ntables; i++) printf " T(%s)", tables[i]
    print ""
}
