/* Files mpquery creates (tempfile.c): temporary files removed at exit or
 * on a fatal signal, and outputs (-o) written to a temporary file renamed
 * over the target once complete, so a failed command leaves the old file
 * as it was. Every -o goes through here: the formats its name may call
 * for (output_kind) and the one line saying what was written. */
#ifndef MPQUERY_TEMPFILE_H
#define MPQUERY_TEMPFILE_H

#include <stdint.h>
#include <stdio.h>

/* A new empty file named prefix + 6 random characters, removed when
 * mpquery exits or a signal ends it, unless forgotten before; 0, or the
 * exit code with the reason in err. */
int temp_create(const char *prefix, const char **path, char *err, size_t errlen);
/* Stops removing path at exit (renamed), after removing it with remove. */
void temp_forget(const char *path, int remove);
/* out is the same file as input (device and inode: through a symbolic
 * or hard link too); common.c's check_output says so. */
int output_is(const char *out, const char *input);
/* An output file: -o PATH, written to a temporary file in its directory
 * (next to the file a symbolic link names) that output_close renames over
 * it once complete and on disk, with the old file's permissions; a path
 * that is not a regular file (/dev/stdout, a pipe) is written directly;
 * no path: stdout. */
struct outfile {
    const char *path;           /* as given, for messages; NULL: stdout */
    char *target;               /* the file replaced */
    const char *tmp;            /* the temporary file; NULL: target written directly */
    FILE *f;                    /* what to write to (OUTPUT_FILE): a stream on fd */
    int fd, err;                /* the file written; the first write error's errno */
    unsigned mode;              /* the permissions target gets */
    int how;                    /* OUTPUT_FILE or OUTPUT_DB (output_open's) */
    char what[128];             /* what the file holds, for the "wrote" line ("" : only its size) */
};
enum { OUTPUT_FILE, OUTPUT_DB };
/* Opens o for path: OUTPUT_FILE opens o->f (a stream that refers to o:
 * o stays where it is until output_close); OUTPUT_DB (a database the
 * caller writes by the name o->tmp) takes regular files only. 0, or the
 * exit code (reported). */
int output_open(struct outfile *o, const char *path, int how);
/* Ends o: when rc is 0, flushed, synced and renamed over the target (0,
 * or 1 reported: "PATH: write error: why"), then, for an OUTPUT_FILE made
 * or replaced (not a pipe or device), "mpquery: wrote PATH (WHAT, SIZE)"
 * on stderr (status_line: not with -q; merge, the OUTPUT_DB writer, says
 * what it merged itself); else the temporary file is removed and the old file
 * stays as it was. Returns the exit code. */
int output_close(struct outfile *o, int rc);
/* Sets o->what, the words output_close's line puts before the file's
 * size: "1,234 frames" (count with thousands separators, then noun). */
void output_what(struct outfile *o, int64_t count, const char *noun);

/* The formats a command writes and the -o names that call for them: the
 * name's last path component matched against pattern (fnmatch, any case:
 * "*.svg", "massif.out*"); format is the command's own number, name what
 * messages call it. A table ends with { NULL }. */
struct output_kind { const char *pattern; int format; const char *name; };
/* The format -o PATH calls for: the first kind whose pattern its name
 * matches; a name without '.' (out, /dev/stdout): no_ext; any other name,
 * and a name without '.' when no_ext is -1: the usage error "-o PATH:
 * CMD writes NAME (PATTERN, ...), ..." (returns -1: the caller exits 2). */
int output_kind(const char *cmd, const char *path, const struct output_kind *kinds, int no_ext);

#endif
