/* The debug-info cache: uncompressed copies of compressed separate debug
 * files, named by build-id, so that each one is inflated once per machine
 * rather than once per process (debugcache.c says why). Used by
 * resolve_find_debuginfo for both programs; mpquery writes the copies, the
 * recorder only reads them (MP_DEBUGINFO_CACHE=0: neither). */
#ifndef MP_DEBUGCACHE_H
#define MP_DEBUGCACHE_H

#include <stddef.h>
#include <stdint.h>

/* Compressed debug files used as they are, for want of a copy, while
 * copies are not made here (the recorder: its info line says so). */
extern int debugcache_inflated;

/* The copies together stay within this many bytes (default 4 GiB,
 * $MP_DEBUGINFO_CACHE_SIZE): mpquery removes the oldest ones (by the time
 * they were made) to make room for a new one, and makes none larger. */
extern uint64_t debugcache_max;

/* The directory of the copies; NULL or "": no cache. */
extern const char *debugcache_dir;

/* Why the cache was not used, when one of its directories was there but
 * not trusted (a link, another user's, writable by others); "" otherwise.
 * For mpquery to say. */
extern char debugcache_refused[300];

/* Whether a missing copy is made (mpquery), or only an existing one used
 * (the recorder). */
extern int debugcache_writes;

/* debugcache_dir: $XDG_CACHE_HOME/mallocprof/debuginfo, else
 * ~/.cache/mallocprof/debuginfo (on), or none (off, or neither variable
 * set). The recorder's, from MP_DEBUGINFO_CACHE at start. */
void debugcache_enable(int on);

/* mpquery's: the default directory unless $MP_DEBUGINFO_CACHE is 0, the
 * size from $MP_DEBUGINFO_CACHE_SIZE; writes: whether copies are made.
 * NULL, or the line to say when a variable's value is not valid (then
 * its default is in use). */
const char *debugcache_setup(int writes);

/* fd is an open debug file: when its sections are compressed and it has a
 * build-id, a descriptor of its uncompressed copy (made now if missing and
 * debugcache_writes;
 * *name, malloc'd, then names the copy, the old name freed, fd closed);
 * otherwise fd itself, *name unchanged. */
int debugcache_use(int fd, char **name);

#endif
