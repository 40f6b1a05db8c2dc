/* The only SQL reader of mpquery. profile_load reads a profile database
 * into arrays with ONE sequential pass per table (no per-row queries), then
 * translates every database id into a dense array index and checks each
 * reference, so the rest of mpquery never sees an id it cannot index. The
 * database is opened SQLITE_OPEN_READONLY and never written here, but for
 * SQLite's own rollback of a hot journal (recover: in place where this
 * process may write, else in a private copy); the reads of symbolize,
 * which opens it read-write and writes through profile_write.c, and of
 * record are at the end. Every sqlite return is
 * checked: a truncated or corrupted file is an error message, never a
 * crash. A file is untrusted: profile_open_db hardens the connection and
 * accepts only mallocprof's own schema objects (prof/dbguard.c), so no SQL
 * that the file brings (trigger, view) ever runs. (The sql command runs the
 * user's own statement, read-only.) */
#include "mpquery.h"
#include "dbguard.h"
#include "profile_link.h"
#include "schema_version.h"   /* SCHEMA_VERSION: schema/profile.sql's PRAGMA user_version */
#include "symdb.h"
#include "tempfile.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int profile_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return EXIT_BAD_INPUT;
}

/* The file itself: a regular, non-empty file that starts as SQLite does. */
static int check_file(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) return profile_fail(err, errlen, "%s", strerror(errno));
    if (S_ISDIR(st.st_mode)) return profile_fail(err, errlen, "is a directory, not a mallocprof profile");
    if (!S_ISREG(st.st_mode)) return profile_fail(err, errlen, "not a regular file");
    if (st.st_size == 0) return profile_fail(err, errlen, "empty file, not a mallocprof profile");
    int fd = open(path, O_RDONLY);
    if (fd < 0) return profile_fail(err, errlen, "%s", strerror(errno));
    char magic[16] = { 0 };
    ssize_t n = read(fd, magic, sizeof magic);
    close(fd);
    if (n != (ssize_t)sizeof magic || memcmp(magic, "SQLite format 3", 16) != 0)
        return profile_fail(err, errlen, "not a mallocprof profile (not an SQLite database)");
    return 0;
}

/* PRAGMA user_version is the schema version (into *version); then every
 * object of the file's schema must be mallocprof's own (prof/dbguard.c), so
 * that no SQL the file brings runs: not a trigger (symbolize writes), not a
 * view. */
static int check_schema(sqlite3 *db, int *version, char *err, size_t errlen)
{
    sqlite3_stmt *st_v = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st_v, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(st_v);
    if (rc != SQLITE_ROW) {
        profile_fail(err, errlen, "not a mallocprof profile (%s)", sqlite3_errmsg(db));
        sqlite3_finalize(st_v);
        return EXIT_BAD_INPUT;
    }
    *version = sqlite3_column_int(st_v, 0);
    sqlite3_finalize(st_v);
    if (*version == 0) return profile_fail(err, errlen, "not a mallocprof profile (schema version 0)");
    /* version 1 lacks sample.ntemp (read as 0: sample_cols); the objects of
     * each version are dbguard.c's variants */
    if (*version < 1 || *version > SCHEMA_VERSION)
        return profile_fail(err, errlen, "schema version %d, this mpquery reads versions 1 to %d", *version,
                            SCHEMA_VERSION);
    return db_schema_check(db, err, errlen) ? EXIT_BAD_INPUT : 0;
}

/* Opens path (read-only unless writable) and checks it; HOT_JOURNAL when
 * SQLite found a hot journal it may not roll back (err says so too). */
enum { HOT_JOURNAL = -1 };
static int open_checked(const char *path, sqlite3 **out, int writable, int *version, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, (writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        profile_fail(err, errlen, "cannot open (%s)", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return EXIT_BAD_INPUT;
    }
    sqlite3_busy_timeout(db, 10000);
    /* views stay on: mpquery's own queries use them, and the schema check
     * proves they are mallocprof's */
    if (db_harden(db, 1)) rc = profile_fail(err, errlen, "cannot open safely (%s)", sqlite3_errmsg(db));
    else rc = check_schema(db, version, err, errlen);
    if (rc) {
        if (sqlite3_extended_errcode(db) == SQLITE_READONLY_ROLLBACK) rc = HOT_JOURNAL;
        sqlite3_close(db);
        return rc;
    }
    *out = db;
    return 0;
}

/* ---------------------------------------------------------------- hot journals */
/* A write cut short (a recorder killed during its flush, or stopped by
 * RLIMIT_FSIZE) leaves the database with pages of an uncommitted
 * transaction and the journal to undo them: a hot journal, which the next
 * connection that can write rolls back. A reader that can write does just
 * that (SQLite's own recovery, in place). One that cannot (a read-only
 * directory, file or journal: a CI artifact, another user's file) reads
 * a private copy: the database and its journal copied into $TMPDIR while
 * no writer can change them, rolled back there, removed at exit. The
 * half-written pages are never read as committed data. */

/* SQLite's locks on the database file (os_unix.c): readers hold read
 * locks on the shared range, a writer rolling back or committing a write
 * lock over all of it. */
#define SQLITE_PENDING_BYTE 0x40000000
#define SQLITE_SHARED_FIRST (SQLITE_PENDING_BYTE + 2)
#define SQLITE_SHARED_SIZE 510

/* The files read through a private copy: each said once, copied once. */
struct private_copy { char *path; const char *copy; };
static struct private_copy *copies;
static size_t ncopies;

static const char *private_copy_of(const char *path)
{
    for (size_t i = 0; i < ncopies; i++)
        if (!strcmp(copies[i].path, path)) return copies[i].copy;
    return NULL;
}

/* 0, or errno: this process may write what SQLite's rollback writes (the
 * database, the journal, the directory that holds them). */
static int can_roll_back(const char *path, const char *journal, const char **what)
{
    char *dir = xstrdup(path), *slash = strrchr(dir, '/');
    if (slash) slash[slash == dir] = 0;
    const char *d = slash ? dir : ".";
    int e = 0;
    *what = NULL;
    if (faccessat(AT_FDCWD, d, W_OK | X_OK, AT_EACCESS)) e = errno, *what = "the directory";
    else if (faccessat(AT_FDCWD, path, R_OK | W_OK, AT_EACCESS)) e = errno, *what = "the database";
    else if (faccessat(AT_FDCWD, journal, R_OK | W_OK, AT_EACCESS)) e = errno, *what = "the journal";
    free(dir);
    return e;
}

/* Copies the file from into to (created, or truncated); 0 or errno. */
static int copy_file(const char *from, const char *to, int excl)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0) return errno;
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (excl ? O_EXCL : 0), 0600);
    if (out < 0) {
        int e = errno;
        close(in);
        return e;
    }
    static char buf[1 << 16];
    int e = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) { e = errno; break; }
        if (n == 0) break;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) { e = errno; break; }
            done += w;
        }
        if (e) break;
    }
    if (close(out) && !e) e = errno;
    close(in);
    return e;
}

/* A read lock on the database's shared range, as an SQLite reader holds:
 * no writer rolls the journal back or commits while it is held. Waits up
 * to 10 s for a writer holding it; the fd, or -1 with errno. */
static int lock_shared(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct flock l = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = SQLITE_SHARED_FIRST,
                       .l_len = SQLITE_SHARED_SIZE };
    for (int tries = 0; fcntl(fd, F_OFD_SETLK, &l) != 0; tries++) {
        if ((errno != EAGAIN && errno != EACCES && errno != EINTR) || tries == 1000) {
            int e = errno == EAGAIN || errno == EACCES ? EBUSY : errno;
            close(fd);
            errno = e;
            return -1;
        }
        usleep(10000);
    }
    return fd;
}

/* The rollback SQLite does on a connection that can write (path is the
 * file itself, or its private copy); 0, or the error in err. */
static int roll_back(const char *path, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    int version, rc = open_checked(path, &db, 1, &version, err, errlen);
    sqlite3_close(db);
    return rc == HOT_JOURNAL ? EXIT_BAD_INPUT : rc;
}

/* The database at path (of this name) has a hot journal that a read-only
 * connection may not roll back: rolled back in place when this process
 * may write there, else in a private copy; *real is then the file to
 * read. 0, or the exit code with the reason in err. */
static int recover(const char *path, const char **real, char *err, size_t errlen)
{
    struct strbuf journal = { 0 };
    sb_printf(&journal, "%s-journal", path);
    const char *what;
    int e = can_roll_back(path, journal.s, &what), rc;
    *real = path;
    if (!e) {
        rc = roll_back(path, err, errlen);
        sb_free(&journal);
        return rc;
    }
    const char *tmpdir = getenv("TMPDIR");
    struct strbuf prefix = { 0 }, copy_journal = { 0 };
    sb_printf(&prefix, "%s/mpquery-rollback-", tmpdir && *tmpdir ? tmpdir : "/tmp");
    const char *copy = NULL;
    rc = temp_create(prefix.s, &copy, err, errlen);
    sb_free(&prefix);
    if (rc) goto out;
    sb_printf(&copy_journal, "%s-journal", copy);
    int fd = lock_shared(path), ce = 0;
    if (fd < 0) {
        rc = profile_fail(err, errlen, "cannot read the database beside its journal %s (%s)", journal.s,
                          strerror(errno));
    } else {
        ce = copy_file(path, copy, 0);
        int je = ce ? 0 : copy_file(journal.s, copy_journal.s, 1);
        close(fd);      /* the lock goes with it (an open file description's lock) */
        if (ce) rc = profile_fail(err, errlen, "cannot copy the database to %s (%s)", copy, strerror(ce));
        else if (je == ENOENT) rc = 0;      /* rolled back meanwhile: the copy is committed data */
        else if (je) rc = profile_fail(err, errlen, "an interrupted write left %s, which cannot be read (%s)",
                                       journal.s, strerror(je));
    }
    if (!rc) rc = roll_back(copy, err, errlen);
    unlink(copy_journal.s);     /* SQLite deleted it when it rolled back; else not to be read */
    if (rc) {
        temp_forget(copy, 1);
        goto out;
    }
    warning("%s: an interrupted write left %s, which this process cannot roll back (%s: %s): read as "
            "last committed, from a private copy", path, journal.s, what, strerror(e));
    copies = xrealloc(copies, (ncopies + 1) * sizeof *copies);
    copies[ncopies++] = (struct private_copy){ xstrdup(path), copy };
    *real = copy;
out:
    sb_free(&journal);
    sb_free(&copy_journal);
    return rc;
}

/* profile_open_db, telling the file's format version. */
static int open_db(const char *path, sqlite3 **out, int writable, int *version, char *err, size_t errlen)
{
    *out = NULL;
    int rc = check_file(path, err, errlen);
    if (rc) return rc;
    const char *copy = writable ? NULL : private_copy_of(path);
    rc = open_checked(copy ? copy : path, out, writable, version, err, errlen);
    if (rc != HOT_JOURNAL) return rc;
    if (writable) return EXIT_BAD_INPUT;    /* symbolize: SQLite rolls back what it can write */
    const char *real;
    if ((rc = recover(path, &real, err, errlen))) return rc;
    rc = open_checked(real, out, writable, version, err, errlen);
    return rc == HOT_JOURNAL ? EXIT_BAD_INPUT : rc;
}

int profile_open_db(const char *path, sqlite3 **out, int writable, char *err, size_t errlen)
{
    int version;
    return open_db(path, out, writable, &version, err, errlen);
}

/* ---------------------------------------------------------------- tables */
/* How one column lands in a row struct. *_NULL: -1 when the column is NULL.
 * A column added by format version `since` is read in older files as the
 * SQL expression `before` (a constant), never selected where it is not. */
enum { COL_I64, COL_I32, COL_F64, COL_TEXT, COL_I64_NULL, COL_F64_NULL };
struct col { const char *name; int type; size_t offset; int since; const char *before; };
#define COL(type, row, field, name) { name, COL_##type, offsetof(row, field), 1, NULL }
#define COL_SINCE(type, row, field, name, version, before) \
    { name, COL_##type, offsetof(row, field), version, before }

/* One full-table read: SELECT the columns FROM table [ORDER BY order], each
 * row into a struct of `size` bytes; or, with convert, read into a raw row
 * first and converted into a struct of `stored` bytes. */
struct loader;
struct table_spec {
    const char *table, *order;
    const struct col *cols; size_t ncols;
    size_t size, stored;
    void (*convert)(struct loader *l, const void *raw, void *stored);
};
#define SPEC(table, order, cols, row) \
    { table, order, cols, sizeof cols / sizeof *cols, sizeof(row), sizeof(row), NULL }
#define RAW_MAX 128                 /* the largest raw row of a converted table */

static const struct col run_cols[] = {
    COL(I64, struct run, id, "id"), COL(TEXT, struct run, token, "token"),
    COL(F64, struct run, start_time, "start_time"),
};
static const struct col process_cols[] = {
    COL(I64, struct process, id, "id"), COL(F64, struct process, start_time, "start_time"),
    COL(F64_NULL, struct process, end_time, "end_time"), COL(I64, struct process, pid, "pid"),
    COL(I64, struct process, ppid, "ppid"), COL(TEXT, struct process, exe, "exe"),
    COL(TEXT, struct process, cmdline, "cmdline"), COL(TEXT, struct process, host, "host"),
    COL(TEXT, struct process, settings, "settings"), COL(I64, struct process, run_id, "run"),
    COL_SINCE(TEXT, struct process, ended, "ended", 2, "''"),
};
static const struct col thread_cols[] = {
    COL(I64, struct raw_thread, t.id, "id"), COL(I64, struct raw_thread, process, "process"),
    COL(I64, struct raw_thread, t.seq, "seq"), COL(I64, struct raw_thread, t.tid, "tid"),
    COL(TEXT, struct raw_thread, t.name, "name"),
};
static const struct col module_cols[] = {
    COL(I64, struct module, id, "id"), COL(TEXT, struct module, path, "path"),
    COL(TEXT, struct module, build_id, "build_id"),
};
static const struct col function_cols[] = {
    COL(I64, struct raw_name, id, "id"), COL(TEXT, struct raw_name, name, "name"),
};
static const struct col file_cols[] = {
    COL(I64, struct raw_name, id, "id"), COL(TEXT, struct raw_name, name, "path"),
};
static const struct col frame_cols[] = {
    COL(I64, struct raw_frame, id, "id"), COL(I64, struct raw_frame, module, "module"),
    COL(I64, struct raw_frame, offset, "offset"), COL(I32, struct raw_frame, inline_depth, "inline_depth"),
    COL(I64_NULL, struct raw_frame, function, "function"), COL(I64_NULL, struct raw_frame, file, "file"),
    COL(I32, struct raw_frame, line, "line"),
};
static const struct col stack_cols[] = {
    COL(I64, struct raw_stack, id, "id"), COL(I64, struct raw_stack, parent, "parent"),
    COL(I64, struct raw_stack, frame, "frame"),
};
static const struct col snapshot_cols[] = {
    COL(I64, struct raw_snapshot, s.id, "id"), COL(I64, struct raw_snapshot, process, "process"),
    COL(I64, struct raw_snapshot, s.seq, "seq"), COL(F64, struct raw_snapshot, s.time, "time"),
    COL(TEXT, struct raw_snapshot, s.reason, "reason"), COL(TEXT, struct raw_snapshot, s.label, "label"),
    COL(I64, struct raw_snapshot, s.profiler_memory, "profiler_memory"),
};
#define COUNTER_COLS(row, c) \
    COL(I64, row, c.v[NCALLS], "ncalls"), COL(I64, row, c.v[MEMTOT], "memtot"), \
    COL(I64, row, c.v[NFREE], "nfree"), COL(I64, row, c.v[MEMLIVE], "memlive"), \
    COL(I64, row, c.v[MAXLIVE], "maxlive")
static const struct col total_cols[] = {
    COL(I64, struct raw_total, snapshot, "snapshot"), COL(I64, struct raw_total, thread, "thread"),
    COUNTER_COLS(struct raw_total, t.c),
    COL(I64, struct raw_total, t.ncalls_nostack, "ncalls_nostack"),
    COL(I64, struct raw_total, t.memtot_nostack, "memtot_nostack"),
    COL(I64, struct raw_total, t.nfree_unknown, "nfree_unknown"),
};
static const struct col sample_cols[] = {
    COL(I64, struct raw_sample, snapshot, "snapshot"), COL(I64, struct raw_sample, stack, "stack"),
    COL(I64, struct raw_sample, thread, "thread"), COUNTER_COLS(struct raw_sample, c),
    COL_SINCE(I64, struct raw_sample, c.v[NTEMP], "ntemp", 2, "0"),
    COL_SINCE(I64, struct raw_sample, c.v[TIME], "time", 3, "0"),
};

static const struct table_spec
    runs = SPEC("run", "id", run_cols, struct run),
    processes = SPEC("process", "id", process_cols, struct process),
    threads = SPEC("thread", "id", thread_cols, struct raw_thread),
    modules = SPEC("module", "id", module_cols, struct module),
    functions = SPEC("function", "id", function_cols, struct raw_name),
    files = SPEC("file", "id", file_cols, struct raw_name),
    frames = SPEC("frame", "id", frame_cols, struct raw_frame),
    stacks = SPEC("stack", "id", stack_cols, struct raw_stack),
    snapshots = SPEC("snapshot", "process, seq", snapshot_cols, struct raw_snapshot),
    totals = SPEC("totals", NULL, total_cols, struct raw_total);

/* ---------------------------------------------------------------- reading */
static const char *text_col(struct loader *l, sqlite3_stmt *st, int col)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    size_t n = (size_t)sqlite3_column_bytes(st, col);
    if (!s) return "";
    if (n > NAME_MAX_BYTES) {
        char *d = arena_strndup(&l->p->text, s, NAME_MAX_BYTES + 3);
        memcpy(d + NAME_MAX_BYTES, "...", 3);
        return d;
    }
    return arena_strndup(&l->p->text, s, n);
}

static int is_null(sqlite3_stmt *st, int col) { return sqlite3_column_type(st, col) == SQLITE_NULL; }

static void read_row(struct loader *l, sqlite3_stmt *st, const struct table_spec *t, char *row)
{
    for (int i = 0; i < (int)t->ncols; i++) {
        void *dst = row + t->cols[i].offset;
        switch (t->cols[i].type) {
        case COL_I64: *(int64_t *)dst = sqlite3_column_int64(st, i); break;
        case COL_I32: *(int32_t *)dst = (int32_t)sqlite3_column_int64(st, i); break;
        case COL_F64: *(double *)dst = sqlite3_column_double(st, i); break;
        case COL_TEXT: *(const char **)dst = text_col(l, st, i); break;
        case COL_I64_NULL: *(int64_t *)dst = is_null(st, i) ? -1 : sqlite3_column_int64(st, i); break;
        case COL_F64_NULL: *(double *)dst = is_null(st, i) ? -1 : sqlite3_column_double(st, i); break;
        }
    }
}

/* The array sized from count(*) first (cheap), so that large tables are
 * not copied while growing; 0 when unknown. */
static size_t presize(struct loader *l, const struct table_spec *t, void **arr, size_t size)
{
    struct strbuf sql = { 0 };
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    sb_printf(&sql, "SELECT count(*) FROM %s", t->table);
    if (sqlite3_prepare_v2(l->db, sql.s, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        sqlite3_int64 rows = sqlite3_column_int64(st, 0);
        if (rows > 0 && (uint64_t)rows < SIZE_MAX / size / 2) {
            cap = (size_t)rows;
            *arr = xrealloc(*arr, cap * size);
        }
    }
    sqlite3_finalize(st);
    sb_free(&sql);
    return cap;
}

/* Grows an array by doubling; returns the new element, zeroed. */
static void *push(void **arr, size_t *n, size_t *cap, size_t size)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 256;
        *arr = xrealloc(*arr, *cap * size);
    }
    return memset((char *)*arr + (*n)++ * size, 0, size);
}

static const struct table_spec samples = {
    "sample", NULL, sample_cols, sizeof sample_cols / sizeof *sample_cols,
    sizeof(struct raw_sample), sizeof(struct sample), convert_sample
};
_Static_assert(sizeof(struct raw_sample) <= RAW_MAX, "RAW_MAX holds a raw sample");

/* Rows into *arr; a converted table stops storing after a dangling
 * reference (the load fails). */
static int step_rows(struct loader *l, sqlite3_stmt *st, const struct table_spec *t, void **arr,
                     size_t *n, size_t cap)
{
    int rc;
    _Alignas(max_align_t) char raw[RAW_MAX];
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!t->convert) {
            read_row(l, st, t, push(arr, n, &cap, t->size));
        } else if (!l->bad_ref) {
            read_row(l, st, t, raw);
            t->convert(l, raw, push(arr, n, &cap, t->stored));
        }
    }
    return rc;
}

/* Reads a whole table into *arr, an array of t->stored-byte rows. */
static int load_table(struct loader *l, const struct table_spec *t, void *arr, size_t *n)
{
    size_t cap = presize(l, t, arr, t->stored);
    struct strbuf sql = { 0 };
    sb_puts(&sql, "SELECT ");
    for (size_t i = 0; i < t->ncols; i++) {
        const struct col *c = &t->cols[i];
        sb_printf(&sql, "%s%s", i ? ", " : "", l->p->version < c->since ? c->before : c->name);
    }
    sb_printf(&sql, " FROM %s", t->table);
    /* a peak snapshot's rows are not in the chain of the others: only a
     * selection of one needs them (profile_load's peak_rows) */
    if (t == &samples && !l->peak_rows) sb_puts(&sql, " WHERE snapshot IN (SELECT id FROM snapshot WHERE reason != 'peak')");
    if (t->order) sb_printf(&sql, " ORDER BY %s", t->order);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(l->db, sql.s, -1, &st, NULL);
    if (rc == SQLITE_OK) rc = step_rows(l, st, t, arr, n, cap);
    if (rc != SQLITE_DONE)
        profile_fail(l->err, l->errlen, "not a mallocprof profile (%s)", sqlite3_errmsg(l->db));
    sqlite3_finalize(st);
    sb_free(&sql);
    return rc == SQLITE_DONE ? 0 : EXIT_BAD_INPUT;
}

/* The dictionaries, before the samples are resolved against them. */
static int load_dictionaries(struct loader *l)
{
    struct profile *p = l->p;
    int rc = load_table(l, &runs, &p->runs, &p->nruns);
    if (!rc) rc = load_table(l, &processes, &p->procs, &p->nprocs);
    if (!rc) rc = load_table(l, &threads, &l->rthreads, &l->nthreads);
    if (!rc) rc = load_table(l, &modules, &p->modules, &p->nmodules);
    if (!rc) rc = load_table(l, &functions, &l->rfunctions, &l->nfunctions);
    if (!rc) rc = load_table(l, &files, &l->rfiles, &l->nfiles);
    if (!rc) rc = load_table(l, &frames, &l->rframes, &l->nframes);
    if (!rc) rc = load_table(l, &stacks, &l->rstacks, &l->nstacks);
    if (!rc) rc = load_table(l, &snapshots, &l->rsnapshots, &l->nsnapshots);
    if (!rc) rc = load_table(l, &totals, &l->rtotals, &l->ntotals);
    return rc;
}

/* The largest table, samples, is read last, converted row by row. */
static int load_all(struct loader *l)
{
    struct profile *p = l->p;
    int rc;
    if ((rc = load_dictionaries(l)) || (rc = link_dictionaries(l))) return rc;
    if ((rc = load_table(l, &samples, &p->samples, &p->nsamples))) return rc;
    if (l->bad_ref) return EXIT_BAD_INPUT;
    return link_totals(l);
}

uint32_t profile_stack_index(const struct profile *p, int64_t id)
{
    /* stacks are loaded ORDER BY id: direct when dense, else binary search */
    if (id >= 1 && (uint64_t)id <= p->nstacks && p->stacks[id - 1].id == id) return (uint32_t)(id - 1);
    size_t lo = 0, hi = p->nstacks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->stacks[mid].id < id) lo = mid + 1; else hi = mid;
    }
    return lo < p->nstacks && p->stacks[lo].id == id ? (uint32_t)lo : NONE;
}

int profile_load_more(const char *path, int peak_rows, struct profile **out,
                      int (*more)(void *ctx, struct sqlite3 *db, struct profile *p), void *ctx,
                      char *err, size_t errlen)
{
    sqlite3 *db;
    int version;
    *out = NULL;
    int rc = open_db(path, &db, 0, &version, err, errlen);
    if (rc) return rc;
    struct profile *p = xcalloc(1, sizeof *p);
    p->path = p->db_path = path;
    p->version = version;
    /* one read transaction: a recorder flushing meanwhile cannot make the
     * tables disagree with each other */
    struct loader l = { .db = db, .p = p, .err = err, .errlen = errlen, .peak_rows = peak_rows };
    char *msg = NULL;
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, &msg) != SQLITE_OK) {
        rc = profile_fail(err, errlen, "not a mallocprof profile (%s)", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
    } else {
        rc = load_all(&l);
        if (!rc && more) rc = more(ctx, db, p);
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    }
    loader_free(&l);
    if (sqlite3_close(db) != SQLITE_OK && !rc)
        rc = profile_fail(err, errlen, "cannot close (%s)", sqlite3_errmsg(db));
    if (rc) { profile_free(p); return rc; }
    *out = p;
    return 0;
}

int profile_load(const char *path, struct profile **out, int peak_rows, char *err, size_t errlen)
{
    return profile_load_more(path, peak_rows, out, NULL, NULL, err, errlen);
}

void profile_free(struct profile *p)
{
    if (!p) return;
    arena_free(&p->text);
    for (size_t i = 0; i < p->nsources; i++) {
        free(p->sources[i].runs);
        free(p->sources[i].nprocs);
    }
    free(p->sources);
    free(p->latest_runs);
    free(p->runs); free(p->procs); free(p->threads); free(p->modules);
    free(p->functions); free(p->files); free(p->frames); free(p->stacks);
    free(p->stack_order); free(p->snapshots); free(p->samples); free(p->totals); free(p->snapshot_total);
    free(p);
}

/* ---------------------------------------------------------------- symbolize, record */
/* Runs sql, calling row for each row; 0, or EXIT_FAILED with "SQL: why" in
 * err. */
static int each_row(sqlite3 *db, const char *sql, void (*row)(sqlite3_stmt *st, void *ctx), void *ctx,
                    char *err, size_t errlen)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(st, ctx);
    if (rc != SQLITE_DONE) snprintf(err, errlen, "%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : EXIT_FAILED;
}

int64_t symdb_max_id(struct symdb *d, const char *table)
{
    char sql[64];
    snprintf(sql, sizeof sql, "SELECT COALESCE(MAX(id), 0) FROM %s", table);
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else
        snprintf(d->err, sizeof d->err, "reading ids: %s", sqlite3_errmsg(d->db));
    sqlite3_finalize(st);
    return v;
}

struct name_rows { void (*fn)(void *ctx, int64_t id, const char *name); void *ctx; };

static void name_row(sqlite3_stmt *st, void *ctx)
{
    const struct name_rows *x = ctx;
    const char *name = (const char *)sqlite3_column_text(st, 1);
    if (name) x->fn(x->ctx, sqlite3_column_int64(st, 0), name);
}

int symdb_each_name(struct symdb *d, int files, void (*fn)(void *ctx, int64_t id, const char *name),
                    void *ctx)
{
    struct name_rows x = { fn, ctx };
    return each_row(d->db, files ? "SELECT id, path FROM file" : "SELECT id, name FROM function",
                    name_row, &x, d->err, sizeof d->err);
}

struct rows { void *arr; size_t n, cap; struct arena *text; };

static void frame_row(sqlite3_stmt *st, void *ctx)
{
    struct rows *r = ctx;
    struct frow *f = push(&r->arr, &r->n, &r->cap, sizeof *f);
    *f = (struct frow){ .id = sqlite3_column_int64(st, 0), .module = sqlite3_column_int64(st, 1),
                        .offset = sqlite3_column_int64(st, 2), .depth = sqlite3_column_int(st, 3),
                        .function = sqlite3_column_int64(st, 4), .file = sqlite3_column_int64(st, 5),
                        .line = sqlite3_column_int(st, 6) };
}

int symdb_frames(struct symdb *d, struct frow **out, size_t *n)
{
    struct rows r = { 0 };
    int rc = each_row(d->db, "SELECT id, module, offset, inline_depth, COALESCE(function, 0), "
                      "COALESCE(file, 0), line FROM frame ORDER BY module, offset, inline_depth",
                      frame_row, &r, d->err, sizeof d->err);
    *out = r.arr;
    *n = r.n;
    return rc;
}

static void stack_row(sqlite3_stmt *st, void *ctx)
{
    struct rows *r = ctx;
    struct stack_row *s = push(&r->arr, &r->n, &r->cap, sizeof *s);
    *s = (struct stack_row){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                             sqlite3_column_int64(st, 2) };
}

int symdb_stacks(struct symdb *d, struct stack_row **out, size_t *n)
{
    struct rows r = { 0 };
    int rc = each_row(d->db, "SELECT id, parent, frame FROM stack", stack_row, &r, d->err, sizeof d->err);
    *out = r.arr;
    *n = r.n;
    return rc;
}

static const char *column_text(sqlite3_stmt *st, int col, struct arena *text)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    return s ? arena_strndup(text, s, strlen(s)) : "";
}

static void module_row(sqlite3_stmt *st, void *ctx)
{
    struct rows *r = ctx;
    struct module_row *m = push(&r->arr, &r->n, &r->cap, sizeof *m);
    *m = (struct module_row){ sqlite3_column_int64(st, 0), column_text(st, 1, r->text),
                              column_text(st, 2, r->text) };
}

int symdb_modules(struct symdb *d, struct module_row **out, size_t *n, struct arena *text)
{
    struct rows r = { .text = text };
    int rc = each_row(d->db, "SELECT id, path, build_id FROM module WHERE path NOT LIKE '[%' ORDER BY id",
                      module_row, &r, d->err, sizeof d->err);
    *out = r.arr;
    *n = r.n;
    return rc;
}

static int64_t count_of(sqlite3 *db, const char *sql, const char *token)
{
    sqlite3_stmt *st = NULL;
    int64_t n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, token, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

int profile_count_run(struct sqlite3 *db, const char *token, struct run_count *c, char *err, size_t errlen)
{
    c->images = count_of(db, "SELECT count(*) FROM process p JOIN run r ON r.id = p.run WHERE r.token = ?", token);
    /* an image continues its pid when the latest earlier image of the pid
     * ended by exec (as mpquery info's process tree groups them) */
    c->processes = count_of(db, "SELECT count(*) FROM (SELECT lag(p.ended) OVER (PARTITION BY p.pid ORDER BY"
                                " p.start_time, p.id) AS before FROM process p JOIN run r ON r.id = p.run"
                                " WHERE r.token = ?) WHERE before IS NULL OR before != 'exec'", token);
    c->snapshots = count_of(db, "SELECT count(*) FROM snapshot s JOIN process p ON p.id = s.process"
                                " JOIN run r ON r.id = p.run WHERE r.token = ?", token);
    c->peaks = count_of(db, "SELECT count(*) FROM snapshot s JOIN process p ON p.id = s.process"
                            " JOIN run r ON r.id = p.run WHERE r.token = ? AND s.reason = 'peak'", token);
    if (c->processes >= 0 && c->images >= 0 && c->snapshots >= 0 && c->peaks >= 0) return 0;
    snprintf(err, errlen, "not a mallocprof profile (%s)", sqlite3_errmsg(db));
    return EXIT_FAILED;
}
