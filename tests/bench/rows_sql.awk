# The SQL workload of `make bench` (tests/bench/run.sh's sqlite3, and
# tests/bench/filesize.sh's): `rows` INSERTs in one transaction and an
# index; with queries=1 a second index, queries, an UPDATE and a DELETE;
# a sum last. awk -v rows=N -v queries=0|1 -f rows_sql.awk > FILE
BEGIN {
    print "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, price REAL, note TEXT);"
    print "BEGIN;"
    for (i = 1; i <= rows; i++)
        printf "INSERT INTO item VALUES(%d, 'item-%07d', %d, %.2f, 'note %d for item %d');\n",
               i, (i * 7919) % rows, i % 100, (i * 37) % 1000 / 10.0, i % 13, i
    print "COMMIT;"
    print "CREATE INDEX item_name ON item(name);"
    if (queries) {
        print "CREATE INDEX item_grp ON item(grp, price);"
        print "SELECT grp, count(*), round(avg(price), 2) FROM item GROUP BY grp ORDER BY 3 DESC LIMIT 3;"
        print "SELECT count(*) FROM item a JOIN item b ON b.name = a.name WHERE a.grp = 7;"
        print "SELECT name, note FROM item WHERE name >= 'item-0100000' ORDER BY name LIMIT 2;"
        print "SELECT count(DISTINCT note), sum(length(name)) FROM item;"
        print "UPDATE item SET price = price * 1.1 WHERE grp < 20;"
        print "DELETE FROM item WHERE id % 3 = 0;"
    }
    print "SELECT count(*), round(sum(price), 2) FROM item;"
}
