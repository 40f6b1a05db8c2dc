#!/usr/bin/env python3
"""What must hold in every profile, whatever the program: checked by the
test scripts on each database they record (tests/lib/lib.sh check_profile) and
on large real programs (tests/real_programs.sh).

For every process and every snapshot, peak snapshots included (the value
of a (stack, thread) at a snapshot is rebuilt as schema/profile.sql says):
  - counters never go back: at each snapshot every (stack, thread) has at
    least the ncalls and memtot it had at the previous one, and at a peak
    snapshot at most what it has at the next snapshot after it (nothing
    appears at the peak before it happened); nfree too with full capture.
    A snapshot the background thread takes (interval, signal) is read
    while the program runs, over a while that a capture of the peak may
    fall in: a peak is compared with the snapshots next to it that are not;
  - nfree <= ncalls and memlive <= memtot in every row;
  - with full capture (every block tracked: MP_SAMPLE=0, MP_STACKS=unwind,
    MP_ENABLED=1, and no MP_SAMPLED_FROM: MP_MAX_MEMORY not reached), the rows add up to the snapshot's totals, for the
    process and for each thread: ncalls - ncalls_nostack and memtot -
    memtot_nostack exactly; nfree and memlive exactly when nothing was
    recorded without a stack, else within what those allocations can
    account for. At the peak (a cut: copy on write), and at the snapshots
    a program's own thread takes (exit, exec, api) in a process of one
    thread. A snapshot is otherwise read counter by counter while the
    program runs: those of the background thread (interval, signal), and
    an exit while other threads still allocate (a JVM's), may differ by the
    operations made meanwhile (prof/README.md, "Snapshots are consistent").
For every process's ticks (format version 4, memory over time): none with
MP_TICK=0; times increasing, within the process's start and end; ncalls
and memtot never go back; memlive <= memtot with full capture; rss >= 0;
the last point is the latest snapshot's totals (peaks aside), at its time.
For every process of format version 5: a mapping's row (its stack's leaf
frame of module '[mmap]') has heap counters 0 and a heap row has mapping
counters 0; rss <= mapped <= maxmapped, and nmap >= 1 once maxmapped > 0;
memcold <= memlive outside peak snapshots and coldage > 0 exactly when
memcold > 0; in a process with a ledger, every snapshot but peaks has
its 10 lines, none negative but 'unexplained', adding up to its 'rss'
line; peaks have none.

usage: invariants.py DB...   prints one line per database; exit 1 on the
first broken invariant, with what broke.
       invariants.py --found [EXCLUDED...]   checks the profiles of the
current format found under the working directory, but the excluded ones."""
import os
import re
import sqlite3
import sys

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schema", "profile.sql")

NCALLS, MEMTOT, NFREE, MEMLIVE = range(4)
NAMES = ("ncalls", "memtot", "nfree", "memlive")


class Broken(Exception):
    pass


def settings_of(text):
    out = {}
    for word in (text or "").split():
        k, _, v = word.partition("=")
        out[k] = v
    return out


def full_capture(settings):
    s = settings_of(settings)
    return s.get("MP_SAMPLE", "0") == "0" and s.get("MP_STACKS", "unwind") == "unwind" \
        and s.get("MP_ENABLED", "1") == "1" and "MP_SAMPLED_FROM" not in s


def check_process(db, pid_row):
    proc, pid, settings = pid_row
    full = full_capture(settings)
    snaps = db.execute("SELECT id, seq, reason FROM snapshot WHERE process = ? ORDER BY seq", (proc,)).fetchall()
    rows = {}
    for snap, stack, thread, *v in db.execute(
            "SELECT sa.snapshot, sa.stack, sa.thread, sa.ncalls, sa.memtot, sa.nfree, sa.memlive FROM sample sa"
            " JOIN snapshot sn ON sn.id = sa.snapshot WHERE sn.process = ?", (proc,)):
        rows.setdefault(snap, []).append(((stack, thread), tuple(v)))
    totals = {}
    for snap, thread, *v in db.execute(
            "SELECT t.snapshot, t.thread, t.ncalls, t.memtot, t.nfree, t.memlive, t.ncalls_nostack, t.memtot_nostack"
            " FROM totals t JOIN snapshot sn ON sn.id = t.snapshot WHERE sn.process = ?", (proc,)):
        totals.setdefault(snap, {})[thread] = tuple(v)

    def where(snap, seq, reason):
        return "pid %d, snapshot %d (seq %d, %s)" % (pid, snap, seq, reason)

    def check_row(key, v, at):
        if v[NFREE] > v[NCALLS] or v[MEMLIVE] > v[MEMTOT]:
            raise Broken("%s: stack %d thread %d has nfree %d of %d calls, memlive %d of memtot %d"
                         % (at, key[0], key[1], v[NFREE], v[NCALLS], v[MEMLIVE], v[MEMTOT]))

    def check_totals(values, snap, at, reason):
        threads = len(totals.get(snap, {})) - 1
        if not full or reason in ("interval", "signal") or (reason != "peak" and threads > 1):
            return
        sums = {0: [0, 0, 0, 0]}
        for (stack, thread), v in values.items():
            for t in (0, thread):
                s = sums.setdefault(t, [0, 0, 0, 0])
                for k in range(4):
                    s[k] += v[k]
        for thread, tot in totals.get(snap, {}).items():
            s = sums.get(thread, [0, 0, 0, 0])
            ncalls, memtot, nfree, memlive, ncalls_nostack, memtot_nostack = tot
            who = "the process" if thread == 0 else "thread %d" % thread
            want = {NCALLS: (ncalls - ncalls_nostack,) * 2, MEMTOT: (memtot - memtot_nostack,) * 2,
                    NFREE: (nfree - ncalls_nostack, nfree), MEMLIVE: (memlive - memtot_nostack, memlive)}
            for k, (lo, hi) in want.items():
                if not lo <= s[k] <= hi:
                    exp = str(lo) if lo == hi else "%d..%d" % (lo, hi)
                    raise Broken("%s: the rows of %s sum to %s %d, its totals say %s (%d calls without a stack)"
                                 % (at, who, NAMES[k], s[k], exp, ncalls_nostack))

    def check_order(before, after, at, what):
        """at: where the check is; before, after: the values of the earlier
        and the later snapshot; what: names the other one"""
        fields = (NCALLS, MEMTOT, NFREE) if full else (NCALLS, MEMTOT)
        for key, v in before.items():
            w = after.get(key, (0, 0, 0, 0))
            for k in fields:
                if v[k] > w[k]:
                    raise Broken("%s: stack %d thread %d has %s %d at the earlier snapshot, %d at the later (%s)"
                                 % (at, key[0], key[1], NAMES[k], v[k], w[k], what))

    asynchronous = ("interval", "signal")
    chain, chain_reason = {}, "exit"    # the non-peak snapshots' values, in order
    pending_peaks = []          # peaks not yet compared with the snapshot after them
    for snap, seq, reason in snaps:
        at = where(snap, seq, reason)
        if reason == "peak":
            values = dict(chain)
            for key, v in rows.get(snap, []):
                check_row(key, v, at)
                values[key] = v
            if chain_reason not in asynchronous:
                check_order(chain, values, at, "the previous snapshot and the peak")
            check_totals(values, snap, at, reason)
            pending_peaks.append((values, at))
            continue
        values = dict(chain)
        for key, v in rows.get(snap, []):
            check_row(key, v, at)
            values[key] = v
        check_order(chain, values, at, "the previous snapshot and this one")
        for peak_values, peak_at in pending_peaks if reason not in asynchronous else ():
            check_order(peak_values, values, peak_at, "the peak and the snapshot after it, " + at.split(", ", 1)[1])
        pending_peaks = []
        check_totals(values, snap, at, reason)
        chain, chain_reason = values, reason
    return len(snaps), full


def check_ticks(db, pid_row):
    proc, pid, settings = pid_row
    full = full_capture(settings)       # the cheap modes' live bytes are the allocator's, memtot the requested
    start, end = db.execute("SELECT start_time, end_time FROM process WHERE id = ?", (proc,)).fetchone()
    ticks = db.execute("SELECT time, ncalls, memtot, memlive, rss FROM tick WHERE process = ? ORDER BY time",
                       (proc,)).fetchall()
    if settings_of(settings).get("MP_TICK") == "0":
        if ticks:
            sys.exit("pid %d: %d ticks with MP_TICK=0" % (pid, len(ticks)))
        return
    prev = None
    for t in ticks:
        at = "pid %d, tick at %.6f" % (pid, t[0])
        if not start <= t[0] <= (end if end is not None else t[0]):
            sys.exit("%s: outside the process's run (%.6f to %s)" % (at, start, end))
        if (full and t[3] > t[2]) or min(t[1:]) < 0:
            sys.exit("%s: memlive %d > memtot %d, or a value below 0: %s" % (at, t[3], t[2], t))
        if prev and (t[0] <= prev[0] or t[1] < prev[1] or t[2] < prev[2]):
            sys.exit("%s: time, ncalls or memtot went back: %s after %s" % (at, t, prev))
        prev = t
    last = db.execute("SELECT s.time, t.ncalls, t.memtot, t.memlive FROM last_snapshot s"
                      " JOIN totals t ON t.snapshot = s.id AND t.thread = 0 WHERE s.process = ?", (proc,)).fetchone()
    if ticks and last and tuple(ticks[-1][:4]) != tuple(last):
        sys.exit("pid %d: the last tick %s is not the latest snapshot's totals %s" % (pid, ticks[-1][:4], last))


LEDGER_LINES = {"rss", "heap live", "heap overhead", "heap free", "mmap anonymous", "mmap file",
                "thread stacks", "modules", "profiler", "unexplained"}


def check_format5(db, pid_row):
    proc, pid = pid_row[:2]
    for snap, seq, reason, leaf, *v in db.execute(
            "SELECT sn.id, sn.seq, sn.reason, m.path, sa.ncalls, sa.memtot, sa.nfree, sa.memlive, sa.maxlive,"
            " sa.nmap, sa.mapped, sa.maxmapped, sa.rss, sa.memcold, sa.coldage FROM sample sa"
            " JOIN snapshot sn ON sn.id = sa.snapshot JOIN stack st ON st.id = sa.stack"
            " JOIN frame f ON f.id = st.frame JOIN module m ON m.id = f.module WHERE sn.process = ?", (proc,)):
        heap, (nmap, mapped, maxmapped, rss), (memcold, coldage) = v[:5], v[5:9], v[9:]
        at = "pid %d, snapshot seq %d (%s)" % (pid, seq, reason)
        if leaf == "[mmap]" and (any(heap) or memcold or coldage):
            sys.exit("%s: a mapping's row with heap counters %s, cold %d %d" % (at, heap, memcold, coldage))
        if leaf != "[mmap]" and (nmap or mapped or maxmapped or rss):
            sys.exit("%s: a heap row (leaf in %s) with mapping counters %s" % (at, leaf, v[5:9]))
        if not rss <= mapped <= maxmapped or (maxmapped and nmap < 1):
            sys.exit("%s: mapping counters out of order: nmap %d, mapped %d, maxmapped %d, rss %d"
                     % (at, nmap, mapped, maxmapped, rss))
        if (reason != "peak" and memcold > heap[3]) or (coldage > 0) != (memcold > 0):
            sys.exit("%s: memcold %d, coldage %d, memlive %d" % (at, memcold, coldage, heap[3]))
    lines = {}
    for snap, line, nbytes in db.execute(
            "SELECT l.snapshot, l.line, l.bytes FROM ledger l JOIN snapshot sn ON sn.id = l.snapshot"
            " WHERE sn.process = ?", (proc,)):
        lines.setdefault(snap, {})[line] = nbytes
    for snap, seq, reason in db.execute("SELECT id, seq, reason FROM snapshot WHERE process = ?", (proc,)):
        at = "pid %d, snapshot seq %d (%s)" % (pid, seq, reason)
        got = lines.get(snap, {})
        if reason == "peak":
            if got:
                sys.exit("%s: a peak snapshot with a ledger" % at)
            continue
        if not lines:           # a hand-made file without a ledger
            break
        if set(got) != LEDGER_LINES:
            sys.exit("%s: ledger lines %s" % (at, sorted(got)))
        if any(b < 0 for k, b in got.items() if k != "unexplained") or \
                sum(b for k, b in got.items() if k != "rss") != got["rss"]:
            sys.exit("%s: the ledger's lines do not add up to its rss: %s" % (at, got))


def check(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    procs = db.execute("SELECT id, pid, settings FROM process ORDER BY id").fetchall()
    version5 = db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'ledger'").fetchone()[0]
    nsnaps, nfull = 0, 0
    for p in procs:
        n, full = check_process(db, p)
        check_ticks(db, p)
        if version5:
            check_format5(db, p)
        nsnaps += n
        nfull += full
    db.close()
    return len(procs), nsnaps, nfull


def schema_version():
    with open(SCHEMA) as f:
        return int(re.findall(r"PRAGMA user_version\s*=\s*(\d+)", f.read())[-1])


def is_profile(path, version):
    try:
        with open(path, "rb") as f:
            if f.read(16) != b"SQLite format 3\0":
                return False
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        try:
            return db.execute("PRAGMA user_version").fetchone()[0] == version and \
                db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'process'").fetchone()[0] == 1
        finally:
            db.close()
    except (OSError, sqlite3.Error):
        return False


def found_profiles(excluded):
    version = schema_version()
    skip = {os.path.normpath(e) for e in excluded}
    out = []
    for top, dirs, files in os.walk("."):
        dirs.sort()
        for name in sorted(files):
            path = os.path.normpath(os.path.join(top, name))
            if path not in skip and not path.endswith(("-journal", "-wal", "-shm")) and is_profile(path, version):
                out.append(path)
    return out


def main(paths):
    if paths[:1] == ["--found"]:
        paths = found_profiles(paths[1:])
        if not paths:
            return 0
    elif not paths:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    for path in paths:
        try:
            nprocs, nsnaps, nfull = check(path)
        except Broken as e:
            print("FAIL: %s: invariant broken: %s" % (path, e), file=sys.stderr)
            return 1
        except sqlite3.Error as e:
            print("FAIL: %s: cannot read: %s" % (path, e), file=sys.stderr)
            return 1
        print("  ok: invariants of %s: %d processes (%d full capture), %d snapshots"
              % (path, nprocs, nfull, nsnaps))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
