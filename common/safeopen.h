/* Files whose names come from what mallocprof does not control (a
 * profile's module paths, a debug-info search path, the debug-info cache,
 * a debuginfod cache), opened without ever blocking and used only when
 * they are regular files: open(2) of a FIFO waits for a writer, forever,
 * and a device is no debug file. Used by the recorder and mpquery alike. */
#ifndef MP_SAFEOPEN_H
#define MP_SAFEOPEN_H

#include <sys/stat.h>

/* path (relative to dir: AT_FDCWD or a directory's descriptor) opened for
 * reading, with O_NONBLOCK (no open waits), O_NOCTTY, O_CLOEXEC and
 * `flags` (O_NOFOLLOW: a symbolic link is not followed), then fstat'ed:
 * the descriptor of a regular file (its stat in *st when st is not NULL);
 * -1 when it cannot be opened (errno); -2 when it is not a regular file
 * (closed; *st says what it is). */
int mp_open_regular(int dir, const char *path, int flags, struct stat *st);

/* What st is, for messages: "a FIFO", "a directory", "a device"... */
const char *mp_file_kind(const struct stat *st);

#endif
