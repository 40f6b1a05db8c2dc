/* Opening a profile database, for every reader of mpquery: the file must
 * be a regular SQLite file whose schema is mallocprof's own, object for
 * object (prof/dbguard.c), so no SQL the file brings (trigger, view) ever
 * runs; the connection is hardened. Read-only, but for SQLite's own
 * rollback of a hot journal (recover: in place where this process may
 * write, else in a private copy). Every sqlite return is checked. */
#include "mpquery.h"
#include "profile.h"
#include "tempfile.h"
#include "dbguard.h"
#include "schema_version.h"   /* SCHEMA_VERSION: schema/profile.sql's PRAGMA user_version */

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>
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

/* A read lock on bytes [start, start + len) of fd, waiting up to 10 s for
 * a writer holding them; 0, or -1 with errno (EBUSY: still held). */
static int read_lock(int fd, off_t start, off_t len)
{
    struct flock l = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
    for (int tries = 0; fcntl(fd, F_OFD_SETLK, &l) != 0; tries++) {
        if ((errno != EAGAIN && errno != EACCES && errno != EINTR) || tries == 1000) {
            if (errno == EAGAIN || errno == EACCES) errno = EBUSY;
            return -1;
        }
        usleep(10000);
    }
    return 0;
}

/* A read lock on the database's shared range, as an SQLite reader holds:
 * no writer rolls the journal back or commits while it is held. Taken as
 * SQLite's readers take it, through the pending byte, so that a writer
 * waiting to commit (it holds that byte) goes first: a reader that comes
 * back often (mpquery live) never starves it. The fd, or -1 with errno. */
static int lock_shared(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = read_lock(fd, SQLITE_PENDING_BYTE, 1);
    if (!rc) rc = read_lock(fd, SQLITE_SHARED_FIRST, SQLITE_SHARED_SIZE);
    struct flock pending = { .l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = SQLITE_PENDING_BYTE, .l_len = 1 };
    int e = errno;
    fcntl(fd, F_OFD_SETLK, &pending);
    if (rc) {
        close(fd);
        errno = e;
        return -1;
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

/* The last committed state of a database another process may be writing
 * (mpquery live), into copy: the file (and a journal beside it) copied
 * under a reader's shared lock, held only for the copy (the writer's
 * commit waits that long in its busy handler, never more), then the
 * copy's journal rolled back, if one came. 0, or the exit code with the
 * reason in err. */
int profile_copy_committed(const char *path, const char *copy, char *err, size_t errlen)
{
    struct strbuf journal = { 0 }, copy_journal = { 0 };
    sb_printf(&journal, "%s-journal", path);
    sb_printf(&copy_journal, "%s-journal", copy);
    unlink(copy_journal.s);
    int rc = 0, fd = lock_shared(path);
    if (fd < 0) {
        rc = profile_fail(err, errlen, "cannot read it (%s)", strerror(errno));
    } else {
        int ce = copy_file(path, copy, 0), je = ce ? 0 : copy_file(journal.s, copy_journal.s, 1);
        close(fd);
        if (ce) rc = profile_fail(err, errlen, "cannot copy it to %s (%s)", copy, strerror(ce));
        else if (je == 0) rc = roll_back(copy, err, errlen);
        else if (je != ENOENT) rc = profile_fail(err, errlen, "cannot copy %s (%s)", journal.s, strerror(je));
    }
    unlink(copy_journal.s);
    sb_free(&journal);
    sb_free(&copy_journal);
    return rc;
}

int profile_open_version(const char *path, sqlite3 **out, int writable, int *version, char *err, size_t errlen)
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
    return profile_open_version(path, out, writable, &version, err, errlen);
}
