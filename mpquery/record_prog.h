/* mpquery record's program (record_prog.c): the file a command names,
 * found as a shell finds it, and refused when LD_PRELOAD cannot reach it. */
#ifndef MPQUERY_RECORD_PROG_H
#define MPQUERY_RECORD_PROG_H

/* A shell's exit codes for a command it cannot run: not found (not in
 * PATH, no such file), found but not runnable (not executable, a
 * directory). */
enum { EXIT_CANNOT_RUN = 126, EXIT_NOT_FOUND = 127 };

/* The file to run (*exe, malloc'd), or the exit code, reported: as a
 * shell's, 127 for a command that is not found, 126 for one that cannot
 * be run; 2 for a statically linked program (not the dynamic loader run
 * as the command, ld.so ./prog: it runs prog). A script whose interpreter
 * is static (followed one level) runs with a warning, since only the
 * dynamically linked programs it starts can be recorded. */
int record_find_program(const char *cmd, char **exe);

#endif
