/* The profile `mpquery record` writes: checked before the program starts
 * (its directory exists and is writable; an existing file is a mallocprof
 * profile the recorder will append to, or empty), and read after the
 * program ended to say what its run wrote (counted by profile.c). The run
 * is the one whose MP_RUN token record put in the environment: the
 * recorder stores it in table run, and every process of the tree inherits
 * it. */
#include "mpquery.h"
#include "profile.h"
#include "record_db.h"
#include "debugcache.h"
#include "resolve.h"
#include "optdefs.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* SQLite creates its journal next to the file: the directory must be
 * writable even when the file exists. Tried for real, with a probe file
 * made and removed at once: root passes access() on /proc or a read-only
 * mount, where nothing can be created. */
static int check_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? xstrdup(path) : xstrdup(".");
    if (slash) dir[slash == path ? 1 : slash - path] = 0;
    struct strbuf probe = { 0 };
    sb_printf(&probe, "%s.%d.check", path, (int)getpid());
    int rc = 0, fd = open(probe.s, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (e == ENOENT && stat(dir, &st) == 0)     /* /proc: the directory is there */
            rc = error(EXIT_BAD_INPUT, "%s: cannot write the profile in %s: no file can be created there (%s)", path,
                       dir, strerror(e));
        else
            rc = error(EXIT_BAD_INPUT, "%s: cannot write the profile in %s: %s", path, dir, strerror(e));
    } else {
        close(fd);
        unlink(probe.s);
    }
    free(probe.s);
    free(dir);
    return rc;
}

int record_check_out(const char *path)
{
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (!exists && errno != ENOENT) return error(EXIT_BAD_INPUT, "%s: %s", path, strerror(errno));
    if (exists && (!S_ISREG(st.st_mode) || st.st_size > 0)) {
        char err[4400];
        sqlite3 *db;
        int rc = profile_open_db(path, &db, 0, err, sizeof err);
        if (rc) return error(rc, "%s: %s", path, err);
        sqlite3_close(db);
    }
    if (exists && access(path, W_OK) != 0) return error(EXIT_BAD_INPUT, "%s: cannot write: %s", path, strerror(errno));
    return check_dir(path);
}

/* Processes and snapshots of run `token` in the file (zero when there is no
 * file yet); 0, or the exit code with the reason in err. */
int record_count(const char *path, const char *token, struct run_count *c, char *err, size_t errlen)
{
    struct stat st;
    c->processes = c->images = c->snapshots = c->peaks = 0;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) return 0;
    } else if (S_ISREG(st.st_mode) && st.st_size == 0) {
        return 0;
    }
    sqlite3 *db;
    int rc = profile_open_db(path, &db, 0, err, errlen);
    if (rc) return rc;
    rc = profile_count_run(db, token, c, err, errlen);
    sqlite3_close(db);
    return rc;
}

/* MP_SYNC=0 (the default): the recorded processes wrote their snapshots
 * without waiting for the disk, and none of them is the run's first (record
 * gave them MP_RUN): record puts the run on disk once it ended, the file
 * and the directory that names it (prof/README.md, MP_SYNC). */
static void sync_run(const char *path)
{
    const char *sync = getenv("MP_SYNC");
    if (sync && !strcmp(sync, "1")) return;
    const char *slash = strrchr(path, '/');
    char *dir = slash ? xstrdup(path) : xstrdup(".");
    if (slash) dir[slash == path ? 1 : slash - path] = 0;
    const char *paths[2] = { path, dir };
    for (int i = 0; i < 2; i++) {
        int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
        if (fd >= 0) fdatasync(fd), close(fd);
    }
    free(dir);
}

void record_report(const char *path, const char *token, const struct run_count *before, double seconds, int quiet)
{
    char err[4400];
    struct run_count after;
    sync_run(path);
    if (record_count(path, token, &after, err, sizeof err)) {
        warning("record: nothing can be read from %s after the run: %s", path, err);
        return;
    }
    int64_t procs = after.processes - before->processes, snaps = after.snapshots - before->snapshots;
    int64_t peaks = after.peaks - before->peaks, images = after.images - before->images;
    if (procs <= 0 && snaps <= 0) {
        warning("record: nothing was written to %s (a statically linked program, "
                "or LD_PRELOAD removed from the environment, or killed before its first snapshot)", path);
        return;
    }
    if (quiet) return;
    fprintf(stderr, "mpquery: wrote %s: %lld process%s (%lld image%s), %lld snapshot%s (%lld at a peak), %.2f s\n",
            path, (long long)procs, procs == 1 ? "" : "es", (long long)images, images == 1 ? "" : "s", (long long)snaps,
            snaps == 1 ? "" : "s", (long long)peaks, seconds);
}

void record_cache_debuginfo(const char *path)
{
    if (!debugcache_dir || !debugcache_writes) return;
    char *where = getenv("MP_DEBUGINFO_PATH");     /* the recorder's search path, as the run had it */
    if (where && *where) resolve_debuginfo_path = where;
    /* the modules read first and the file closed: making copies may take
     * long, and a reader's lock would hold off the profile's writers */
    sqlite3 *db;
    char err[4400];
    if (profile_open_db(path, &db, 0, err, sizeof err)) return;
    sqlite3_stmt *st;
    char **mods = NULL;
    size_t n = 0, cap = 0;
    if (sqlite3_prepare_v2(db, "SELECT path, build_id FROM module WHERE build_id != '' AND path LIKE '/%'"
                               " GROUP BY build_id", -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            if (n + 2 > cap) mods = xrealloc(mods, (cap = cap ? 2 * cap : 64) * sizeof *mods);
            mods[n++] = xstrdup((const char *)sqlite3_column_text(st, 0));
            mods[n++] = xstrdup((const char *)sqlite3_column_text(st, 1));
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    for (size_t i = 0; i < n; i += 2) {
        resolve_cache_module(mods[i], mods[i + 1]);
        free(mods[i]);
        free(mods[i + 1]);
    }
    free(mods);
    if (*debugcache_refused) warning("record: debug-info cache not used: %s", debugcache_refused);
}

int record_cache_setup(const char *const *value)
{
    /* record's own options first (with --pid they reach the process by
     * its settings, not by mpquery's environment) */
    for (size_t i = 0; i < MP_NOPTIONS; i++) {
        const char *name = mp_option_defs[i].name;
        if (value[i] && (!strcmp(name, "MP_DEBUGINFO_CACHE") || !strcmp(name, "MP_DEBUGINFO_PATH")) &&
            setenv(name, value[i], 1))
            return error(EXIT_FAILED, "record: setenv: %s", strerror(errno));
    }
    const char *bad = debugcache_setup(1);
    return bad ? error(EXIT_BAD_INPUT, "record: %s", bad) : 0;
}
