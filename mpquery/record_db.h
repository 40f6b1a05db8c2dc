/* record's reads of the profile it writes (record_db.c): whether the
 * output may be written, and what the run added to it. */
#ifndef MPQUERY_RECORD_DB_H
#define MPQUERY_RECORD_DB_H

#include "mpquery.h"
#include "profile.h"

/* Before record runs the program: the profile can be written there (an
 * existing file must be a mallocprof profile); 0 or the exit code, reported. */
int record_check_out(const char *path);
/* Processes and snapshots of the run with this MP_RUN token (0 without a
 * file); 0, or the exit code with the reason in err. */
int record_count(const char *path, const char *token, struct run_count *c, char *err, size_t errlen);
/* After the run: one line on stderr, what the run wrote beyond `before`
 * and how long it ran (none when quiet), or the warning that nothing was
 * written (even when quiet). */
void record_report(const char *path, const char *token, const struct run_count *before, double seconds, int quiet);

/* After the run: the uncompressed copies of the compressed debug files of
 * the profile's modules made in the debug-info cache (debugcache.h), for
 * the next processes, which the recorder lets read them rather than
 * inflate them. Nothing said: a module without a copy is resolved as
 * before. */
void record_cache_debuginfo(const char *path);
/* Before the run: the cache's settings read (debugcache_setup), record's
 * --debuginfo-cache (value: record's MP_* values, NULL where not given)
 * first; 0, or the exit code of a variable that is not valid, reported. */
int record_cache_setup(const char *const *value);

#endif
