/* record --pid and a process that does not see our files (attach_mounts.c):
 * another mount namespace or another root (a container), where the library
 * is copied into its /tmp and the profile written there, then collected;
 * and, for every process, whether it can write its profile where it will. */
#ifndef MPQUERY_ATTACH_MOUNTS_H
#define MPQUERY_ATTACH_MOUNTS_H

#include <sys/types.h>

struct mounts {
    int other;              /* another mount namespace or root */
    int tmp;                /* its /tmp (O_PATH), kept: it outlives the process; -1 */
    unsigned long owner;    /* the uid its profile is written by */
    char lib[128];          /* the library as it sees it, when not ours */
    char out[128];          /* the profile it writes in its /tmp ("": -o itself) */
};

/* Before attaching: where the process writes its profile (out, or a file
 * in its /tmp), checked writable with its credentials through its root;
 * the library placed where it can load it (ours when its root shows the
 * same file, else a copy in its /tmp, made without following any link).
 * 0, or the exit code, said in one line (nothing attached). */
int prepare_mounts(pid_t pid, const char *name, const char *lib, const char *out, struct mounts *m);
/* After the session: the profile written in its /tmp copied to out (a
 * regular file of the process's user, reached without following a link)
 * and removed there. 0, or the exit code, said. */
int collect_profile(pid_t pid, const char *name, const struct mounts *m, const char *out);

#endif
