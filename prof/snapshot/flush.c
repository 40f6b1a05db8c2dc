/* A snapshot: counters → SQLite, in ONE transaction (BEGIN IMMEDIATE, so
 * the processes of a run writing the same file take turns). This file is
 * the entry: the lock, the file's schema, the transaction and the one-line
 * report; flush.h names the others (statements, the mirror of the shared
 * dictionaries, the rows). Any failure rolls back and forgets what this
 * process knew of the database, so the next flush starts from what the file
 * really holds. */
#define _GNU_SOURCE
#include "flush.h"
#include "debugcache.h"
#include "dbguard.h"
#include "unwind_cfi.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "schema_version.h"     /* SCHEMA_VERSION, from the schema's PRAGMA user_version */
static const char schema_sql[] =
#include "schema.h"
    ;

static pthread_mutex_t flush_mutex = PTHREAD_MUTEX_INITIALIZER;

void flush_lock(void) { pthread_mutex_lock(&flush_mutex); }
void flush_unlock(void) { pthread_mutex_unlock(&flush_mutex); }

/* The process is ending: a flush under way (the interval thread's) ends
 * first, and none starts after, so that exit_group never cuts a
 * transaction in half (a hot journal that readers would have to roll
 * back). */
static int flushes_closed;
void flush_close(void)
{
    flush_lock();
    flushes_closed = 1;
    flush_unlock();
}

/* The epoch of the latest peak snapshot written (flush_ahead); 0: none.
 * A fork child's or an attach session's epochs start anew. */
static _Atomic uint32_t peak_written;

static void forget_database(void)
{
    mirror_forget();
    rows_forget(0);
}

/* A fork child is a new process of the same run, sharing the dictionaries. */
void flush_after_fork_child(void)
{
    /* the parent: this process's pid until now (getppid() here may be
     * already 1, the parent gone: a daemon's double fork) */
    mp_ppid = mp_pid ? mp_pid : getppid();
    mp_pid = getpid();
    flushes_closed = 0;
    atomic_store(&peak_written, 0);
    rows_forget(1);
}

/* A new attach session writes a file of its own (or a new run of it),
 * from nothing this process knew of it. */
void flush_after_attach(void)
{
    flushes_closed = 0;
    atomic_store(&peak_written, 0);
    forget_database();
}

void flush_forget_addresses(void) { mirror_forget_addresses(); }

/* ------------------------------------------------------------ the file */

/* The file's schema must be ours, object for object (dbguard.c): SQL that a
 * file brings (a trigger, a view) never runs inside the profiled program. */
static int ensure_schema(struct writer *w)
{
    int64_t version = query_int(w, "PRAGMA user_version", -1);
    if (version == SCHEMA_VERSION) {
        static char msg[256];
        return db_schema_check(w->db, msg, sizeof msg) ? fail(w, msg) : 0;
    }
    if (version != 0) {
        static char msg[128];
        snprintf(msg, sizeof msg, "the database has schema version %lld, this profiler writes %d",
                 (long long)version, SCHEMA_VERSION);
        return fail(w, msg);
    }
    if (query_int(w, "SELECT count(*) FROM sqlite_master", 0) != 0)
        return fail(w, "the file is an SQLite database of another program (not a mallocprof profile)");
    return sql_exec(w, schema_sql);         /* it sets user_version last */
}

/* What we know of the database, brought up to date (or forgotten: the
 * file was replaced, or our process row is not there). */
static int sync_database(struct writer *w)
{
    if (mirror_stale(w)) forget_database();
    if (mirror_sync(w)) return -1;
    if (!process_rows_check(w)) return 0;
    forget_database();
    return mirror_sync(w);
}

/* SQLite's progress handler: the background thread's points of memory
 * over time go on while it writes a snapshot (ticks.c). Only its own: a
 * program's thread writing (exit, exec, a fatal signal) may have been
 * interrupted in the middle of taking one. */
static int tick_while_writing(void *arg)
{
    (void)arg;
    if (background_is_self()) ticks_take(mp_now(), 0);
    return 0;
}

static int open_writer(struct writer *w, const char *path)
{
    mp_sqlite_fds_high();
    if (sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        return fail(w, w->db ? sqlite3_errmsg(w->db) : "cannot open");
    if (db_harden(w->db, 0)) return fail(w, sqlite3_errmsg(w->db));
    /* other processes of the run; readers too: the rollback journal (not
     * WAL: one self-contained file, any file system) makes a COMMIT wait
     * for readers' shared locks, which mpquery live holds only to copy the
     * file (mpquery/cmd_live.c) */
    sqlite3_busy_timeout(w->db, 300 * 1000);
    sqlite3_progress_handler(w->db, 1000, tick_while_writing, NULL);
    /* MP_SYNC=1: each commit waits for the disk (the journal, its
     * directory, the file: three fdatasync, 5-25 ms on a busy disk, most
     * of a short process's cost); 0: none, the run's end syncs (run_synced) */
    if (sql_exec(w, mp_opt.sync ? "PRAGMA synchronous = NORMAL" : "PRAGMA synchronous = OFF") ||
        sql_exec(w, "BEGIN IMMEDIATE")) return -1;
    if (ensure_schema(w) || sync_database(w) || mirror_prepare(w)) return -1;
    w->totals = prepare_insert(w, "INSERT", FT_totals, 1);
    batch_init(&w->samples, FT_sample, 0);
    batch_init(&w->stack_hists, FT_stack_hist, 0);
    return w->totals ? 0 : -1;
}

static void close_writer(struct writer *w)
{
    for (int d = 0; d < ND; d++) sqlite3_finalize(w->ins[d]);
    sqlite3_finalize(w->runs.many);
    sqlite3_finalize(w->runs.one);
    free(w->runs.text);
    stack_run_free(&w->run);
    batch_finalize(&w->samples);
    batch_finalize(&w->stack_hists);
    sqlite3_finalize(w->totals);
    sqlite3_close(w->db);
}

/* ------------------------------------------------------------ at start */

/* Why the snapshots could not be written to `out` as things stand, in `why`
 * (0: they can): a directory of that name, a file that is not a profile of
 * ours (its header: the SQLite magic, then user_version at offset 60, big
 * endian), a file or directory the process cannot write (tried for real: a
 * probe file made and removed at once, since root passes every access()
 * check on /proc or a read-only mount). Raw system calls, no SQLite: it
 * runs at the start of a program. */
static int output_problem(const char *out, char *why, size_t size)
{
    struct stat st;
    int fd;
    if (stat(out, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return snprintf(why, size, "it is a directory"), -1;
        if (!S_ISREG(st.st_mode)) return snprintf(why, size, "it is not a regular file (a device, a pipe or a socket)"), -1;
        if ((fd = open(out, O_RDWR | O_CLOEXEC | O_NOCTTY)) < 0)
            return snprintf(why, size, "cannot open it for writing (%s)", strerror(errno)), -1;
        unsigned char head[64];
        ssize_t n = pread(fd, head, sizeof head, 0);
        close(fd);
        if (n == 0) return 0;           /* empty: SQLite makes it a database */
        if (n < (ssize_t)sizeof head || memcmp(head, "SQLite format 3", 16))
            return snprintf(why, size, "it is not an SQLite database (a file of another program: it is left as it is)"), -1;
        uint32_t version = (uint32_t)head[60] << 24 | (uint32_t)head[61] << 16 | (uint32_t)head[62] << 8 | head[63];
        if (version != 0 && version != SCHEMA_VERSION)
            return snprintf(why, size, "it is a database of schema version %u, this profiler writes %d", version,
                            SCHEMA_VERSION), -1;
    } else if (errno != ENOENT) {
        return snprintf(why, size, "%s", strerror(errno)), -1;
    }
    /* SQLite writes its journal beside the file */
    char probe[sizeof mp_opt.out + 32];
    snprintf(probe, sizeof probe, "%s.%d.check", out, (int)getpid());
    if ((fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600)) < 0) {
        const char *slash = strrchr(out, '/');
        int dir = slash ? (int)(slash - out) : 1;
        return snprintf(why, size, "cannot create files in %.*s (%s)", dir ? dir : 1, slash ? out : ".", strerror(errno)), -1;
    }
    close(fd);
    unlink(probe);
    return 0;
}

/* At the start of a run's first process, say at once when the snapshots
 * would be lost, before the program prints anything; the program runs on,
 * recorded as usual (the output may become writable before the first
 * snapshot). One line per run: no process repeats it when a snapshot is
 * lost (a build's hundreds of processes would). The run's other processes
 * check nothing at start: only when a snapshot of theirs is lost
 * (said_at_start). */
static int first_of_run, output_known_bad;
static pid_t run_root;          /* the run's first process (not its fork children) */

/* The pid in the run's token, "HOST-PID-SECONDS" (lifecycle.c; a host
 * name may hold '-'): the run's first process, whose exec'd images are
 * its first process still. 0: another form (mpquery record's holds its
 * own pid, which no recorded process has). */
static pid_t token_pid(const char *token)
{
    const char *end = strrchr(token, '-'), *p = end;
    while (p && p > token && p[-1] != '-') p--;
    if (!p || p == token || p == end) return 0;
    char *stop;
    long pid = strtol(p, &stop, 10);
    return stop == end && pid > 0 ? (pid_t)pid : 0;
}

void flush_check_output(int first)
{
    char why[512];
    first_of_run = first;
    run_root = first ? getpid() : token_pid(mp_run_token);
    if (!first || !output_problem(mp_opt.out, why, sizeof why)) return;
    output_known_bad = 1;
    mp_log("error", "cannot write %s: %s; the program runs on, but its snapshots will be lost unless that "
           "changes (set MP_OUT to another file)", mp_opt.out, why);
}

/* A snapshot was lost: was its cause said at the run's start? */
static int said_at_start(void)
{
    char why[512];
    return first_of_run ? output_known_bad : output_problem(mp_opt.out, why, sizeof why) != 0;
}

/* ------------------------------------------------------------ entry */

/* A file size limit the program set (RLIMIT_FSIZE) makes a write past it
 * fail with EFBIG and raise SIGXFSZ, whose default kills the program. The
 * flush runs with signals blocked (signals_hold): its write fails (SQLite
 * says "database or disk is full": the snapshot is lost, with one line)
 * and the signal it raised is taken off this thread before the mask comes
 * back, unless the program's own was pending already. */
static int xfsz_pending(void)
{
    sigset_t p;
    return sigpending(&p) == 0 && sigismember(&p, SIGXFSZ) == 1;
}

static void xfsz_discard(void)
{
    if (!xfsz_pending()) return;
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, SIGXFSZ);
    struct timespec now = { 0, 0 };
    sigtimedwait(&only, NULL, &now);
}

/* The snapshot itself, on the flush's own stack (ownstack.c): symbols,
 * then the one transaction. */
enum ahead { AHEAD_NONE, AHEAD_TREE, AHEAD_PEAK };     /* what a write ahead holds (flush_ahead) */
struct flush_call { enum flush_reason reason; const char *label; int rc; enum ahead ahead; };

/* The return addresses named; 1 when libdw failed (out of memory). */
static int resolve_symbols(size_t *naddrs)
{
    volatile int lost = 0;
    unwind_lock();              /* the unwinder's file pages are not wanted here: out of the peak */
    unwind_cfi_trim();
    unwind_unlock();
    RECOVERABLE(*naddrs = symbols_resolve_pending(), (symbols_drop_session(), lost = 1));
    if (!lost) symbols_trim();
    return lost;
}
static struct own_stack flush_stack = { .size = 4 << 20 };

/* A detach (attach.c): what the session's database needed, and the pages
 * of the stack its snapshots ran on, given back (the next session's
 * database starts from nothing anyway). */
void flush_release(void)
{
    flush_lock();
    forget_database();
    own_stack_release(&flush_stack);
    ledger_release();
    flush_unlock();
}

/* One snapshot into the file at path, in one transaction; on failure,
 * rolled back, the reason in err and what this process knew of the
 * database forgotten. */
static int write_file(const char *path, struct flush_call *c, int64_t *nrows, char *err, size_t errsize)
{
    struct writer w = { 0 };
    int rc = open_writer(&w, path);
    if (!rc) rc = c->ahead == AHEAD_TREE ? mirror_all(&w)
                : c->ahead == AHEAD_PEAK ? rows_write_peak(&w, nrows) : rows_write(&w, c->reason, c->label, nrows);
    if (!rc) rc = mirror_write_run(&w);     /* the tree's last run: every path may have one */
    if (!rc) rc = sql_exec(&w, "COMMIT");
    if (rc) {
        snprintf(err, errsize, "%s", w.error ? w.error : "unknown error");
        if (w.db) sqlite3_exec(w.db, "ROLLBACK", NULL, NULL, NULL);
        forget_database();
    }
    close_writer(&w);
    return rc;
}

/* The snapshot, into MP_OUT. When the file is not there yet, it is written
 * beside it first (<out>.<pid>.new) and linked to its name once committed
 * (link makes it only if no other process of the run did meanwhile: then
 * the snapshot goes into theirs), so that a first snapshot that fails
 * leaves no empty file behind. */
static int write_out(struct flush_call *c, int64_t *nrows, char *err, size_t errsize)
{
    struct stat st;
    if (stat(mp_opt.out, &st) == 0 || errno != ENOENT) return write_file(mp_opt.out, c, nrows, err, errsize);
    char fresh[sizeof mp_opt.out + 32], journal[sizeof fresh + 8];
    snprintf(fresh, sizeof fresh, "%s.%d.new", mp_opt.out, (int)getpid());
    snprintf(journal, sizeof journal, "%s-journal", fresh);
    unlink(fresh), unlink(journal);
    int rc = write_file(fresh, c, nrows, err, errsize);
    int linked = !rc && link(fresh, mp_opt.out) == 0, taken = !rc && !linked && errno == EEXIST;
    if (!rc && !linked && !taken) rc = -1, snprintf(err, errsize, "cannot make the file (%s)", strerror(errno));
    unlink(fresh), unlink(journal);
    if (!taken) return rc;
    forget_database();
    *nrows = 0;
    return write_file(mp_opt.out, c, nrows, err, errsize);
}

/* MP_SYNC=0: the run's first process, at its last snapshot (exit, exec,
 * a fatal signal; an exec'd image of it too), puts the file on disk,
 * its children's snapshots with it (they are in the same file's pages),
 * and the directory that names it: a run that has ended is durable, at
 * two fdatasync for the whole run. mpquery record, whose program is not the run's first, does the
 * same after it (record_db.c). */
static void run_synced(enum flush_reason reason)
{
    if (mp_opt.sync || getpid() != run_root || (reason != FLUSH_EXIT && reason != FLUSH_EXEC && reason != FLUSH_FATAL))
        return;
    char dir[sizeof mp_opt.out];
    snprintf(dir, sizeof dir, "%s", mp_opt.out);
    char *slash = strrchr(dir, '/');
    if (slash) slash[slash == dir] = 0;
    const char *paths[2] = { mp_opt.out, slash ? dir : "." };
    for (int i = 0; i < 2; i++) {
        int fd = open(paths[i], O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd >= 0) fdatasync(fd), close(fd);
    }
}

/* This thread's CPU time: the flush's own, whatever else runs meanwhile. */
static double thread_cpu(void)
{
    struct timespec ts;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) ? 0 : (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void flush_work(void *arg)
{
    struct flush_call *c = arg;
    int xfsz_before = xfsz_pending();
    double t0 = mp_now(), cpu0 = thread_cpu();
    size_t naddrs = 0;
    int inflated = debugcache_inflated;
    int symbols_lost = resolve_symbols(&naddrs);
    double resolve_s = mp_now() - t0;
    inflated = debugcache_inflated - inflated;
    char hint[160] = "";
    if (inflated)
        snprintf(hint, sizeof hint, " (%d compressed debug file%s inflated: mpquery record or symbolize keeps an "
                 "uncompressed copy for the next runs)", inflated, inflated == 1 ? "" : "s");
    int64_t nrows = 0;
    char err[512] = "out of memory in libdw while naming the addresses";
    int rc = symbols_lost ? -1 : write_out(c, &nrows, err, sizeof err);
    if (!rc && !c->ahead) run_synced(c->reason);
    if (rc) {
        int efbig = !xfsz_before && xfsz_pending();    /* our write raised it: past the limit */
        if (efbig) {
            static int said;
            struct rlimit lim;
            if (!said++ && getrlimit(RLIMIT_FSIZE, &lim) == 0)
                mp_log("error", "cannot write %s: the program limits the files it writes to %llu bytes (RLIMIT_FSIZE, "
                       "ulimit -f): snapshots that do not fit are lost", mp_opt.out, (unsigned long long)lim.rlim_cur);
        } else if (!said_at_start()) {
            mp_log("error", "cannot write %s: %s (snapshot lost)", mp_opt.out, err);
        }
    }
    if (!xfsz_before) xfsz_discard();
    if (!rc && c->reason != FLUSH_INTERVAL)
        mp_log("info", "wrote %s: %u stacks, %lld rows, %s snapshot, %zu new addresses "
               "resolved in %.3f s%s, the ledger in %.3f s, %.3f s (%.3f s of CPU)", mp_opt.out, stacks_count(),
               (long long)nrows, reason_names[c->reason], naddrs, resolve_s, hint, ledger_time(), mp_now() - t0,
               thread_cpu() - cpu0);
    c->rc = rc;
}

/* work(c) on the flush's stack, under the lock, unless this process may
 * not write (a vfork child shares our memory: not ours to write; the
 * process ended). */
static void flush_run(void (*work)(void *), struct flush_call *c)
{
    struct mp_guard g = guard_enter(MP_INSIDE);
    sigset_t mask;
    signals_hold(&mask);
    flush_lock();
    if (!mp_pid) mp_pid = getpid();
    c->rc = getpid() != mp_pid || flushes_closed;
    if (!c->rc) {
        int counting = mp_own_counting;
        mp_own_counting = 1;        /* SQLite's and libdw's blocks are the profiler's (the ledger) */
        time_in_profiler(1);
        own_stack_run(&flush_stack, work, c);
        time_in_profiler(0);
        mp_own_counting = counting;
    }
    /* the last snapshot stays the last: the interval thread, waiting for
     * the lock meanwhile, must not write one after it (flush_close comes
     * too late for that) */
    if (!c->ahead && (c->reason == FLUSH_EXIT || c->reason == FLUSH_FATAL || c->reason == FLUSH_DETACH) && getpid() == mp_pid)
        flushes_closed = 1;    /* not a vfork child's */
    flush_unlock();
    signals_release(&mask);
    guard_leave(&g);
}

int flush_snapshot(enum flush_reason reason, const char *label)
{
    if (!atomic_load(&mp_initialized)) return -1;
    struct flush_call c = { reason, label, 0, 0 };
    flush_run(flush_work, &c);
    return c.rc ? -1 : 0;
}

/* ------------------------------------------------------------ ahead */

/* Ahead of the snapshots (issue 31): a program of many stacks (clang++
 * -O2: 500,000 nodes, 85,000 rows) would wait at its exit for what the
 * background thread can write while it runs, each in a transaction of its
 * own (a failed one is not said: the snapshots say theirs; the next try
 * of its kind waits ten times as long):
 * - the stack tree: once AHEAD_NODES new nodes have gathered, at most every
 *   AHEAD_EVERY seconds, the shared dictionaries' rows (module, function,
 *   file, frame, stack: no snapshot, no process row); the exit snapshot
 *   writes the nodes made since;
 * - the peak snapshot, once the peak is likely final (rows_peak_due: no
 *   new one for PEAK_SETTLE seconds, the live bytes well below it), with
 *   the process's rows; checked at most every AHEAD_EVERY seconds. The
 *   snapshot that follows writes it only if a new peak came since. */
#define AHEAD_NODES 32768
#define AHEAD_EVERY 0.5
#define PEAK_SETTLE 1.0

static _Atomic uint32_t ahead_done;     /* stack nodes at the latest write ahead */

static void ahead_work(void *arg)
{
    struct flush_call *c = arg;
    size_t naddrs;
    int64_t nrows = 0;
    char err[512];
    if (c->ahead != AHEAD_PEAK || rows_peak_due(PEAK_SETTLE))
        c->rc = resolve_symbols(&naddrs) || write_out(c, &nrows, err, sizeof err);
    atomic_store(&peak_written, rows_peak_epoch());     /* by any snapshot; 0 after a failure */
}

/* One kind of write ahead, when due (its own schedule in *next). */
static int ahead_run(enum ahead kind, double *next)
{
    struct flush_call c = { FLUSH_INTERVAL, "", 0, kind };
    double t0 = mp_now();
    flush_run(ahead_work, &c);
    *next = mp_now() + (c.rc ? 10 : 1) * (AHEAD_EVERY + (mp_now() - t0));
    return c.rc;
}

void flush_ahead(void)
{
    static double next_tree, next_peak;
    uint32_t nodes = stack_node_count();
    if (nodes - atomic_load(&ahead_done) >= AHEAD_NODES && mp_now() >= next_tree && !ahead_run(AHEAD_TREE, &next_tree))
        atomic_store(&ahead_done, nodes);
    struct peak_info peak = peak_info();
    if (peak.epoch != atomic_load(&peak_written) && mp_now() - peak.time >= PEAK_SETTLE && mp_now() >= next_peak)
        ahead_run(AHEAD_PEAK, &next_peak);
}
