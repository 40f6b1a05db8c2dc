/* mpquery live's file (live.h): whether the recorder committed since the
 * last copy, and the copy brought up to date. The recorder keeps SQLite's
 * rollback journal, so the shared lock is taken only to copy the file
 * (profile_copy_committed); the copy is read at leisure. */
#include "mpquery.h"
#include "profile.h"
#include "live.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int live_file_changed(const struct live *v)
{
    struct stat st;
    if (stat(v->path, &st) != 0) return 0;
    if (v->have_copy && st.st_ino == v->seen.st_ino && st.st_size == v->seen.st_size &&
        st.st_mtim.tv_sec == v->seen.st_mtim.tv_sec && st.st_mtim.tv_nsec == v->seen.st_mtim.tv_nsec)
        return 0;
    return 1;
}

int live_refresh_copy(struct live *v)
{
    struct stat st;
    if (stat(v->path, &st) != 0) {
        snprintf(v->status, sizeof v->status, "waiting for %s: no snapshot written yet (%s)", v->path,
                 strerror(errno));
        return -1;
    }
    char err[4400];
    struct sqlite3 *db = NULL;
    /* the new copy checked as a profile here (a message names the file), and
     * put in place of the last good one only then */
    int rc = profile_copy_committed(v->path, v->next, err, sizeof err);
    if (!rc) rc = profile_open_db(v->next, &db, 0, err, sizeof err);
    sqlite3_close(db);
    if (!rc && rename(v->next, v->copy) != 0)
        rc = -1, snprintf(err, sizeof err, "cannot rename %s (%s)", v->next, strerror(errno));
    if (rc) {
        snprintf(v->status, sizeof v->status, "%s: %s", v->path, err);
        return -1;
    }
    v->seen = st;
    v->have_copy = 1;
    return 0;
}
