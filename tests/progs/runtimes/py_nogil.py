# C code that runs with the GIL released (tests/runtimes/python_frames.sh):
# sqlite3 sorts 20,000 rows in a thread; its sorter's big blocks are made
# while the thread does not hold the GIL, under query_in_thread's line 12.
import sqlite3
import threading


def query_in_thread(out):
    db = sqlite3.connect(":memory:")
    db.execute("create table t(a, b)")
    db.executemany("insert into t values (?, ?)", ((i, "x" * 50) for i in range(20000)))
    out.append(len(db.execute("select a, b from t order by b, a desc").fetchall()))


if __name__ == "__main__":
    rows = []
    t = threading.Thread(target=query_in_thread, args=(rows,))
    t.start()
    t.join()
    print("rows:", rows[0])
