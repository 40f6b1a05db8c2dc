/* record --pid: where the process loads the library from and writes its
 * profile, when its mount namespace or root is not ours (a container),
 * and whether it can write there at all (attach_mounts.h). Everything
 * under its root is reached through target_fs.c: mpquery is often root,
 * and a link planted in the container's /tmp must not make it write or
 * read a file of the host (issue 41, item 1); the write check runs with
 * the process's credentials (item 4). */
#define _GNU_SOURCE
#include "mpquery.h"
#include "attach_mounts.h"
#include "target_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The process sees the files we see (its mount namespace is ours). */
static int same_mounts(pid_t pid)
{
    char path[64], mine[64] = "", its[64] = "";
    snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
    if (readlink("/proc/self/ns/mnt", mine, sizeof mine - 1) < 0 || readlink(path, its, sizeof its - 1) < 0) return 1;
    return !strcmp(mine, its);
}

/* The library's path as the process sees it (links followed inside its
 * root, as its loader would) is the file we load. */
static int library_visible(int root, const char *lib)
{
    struct stat a, b;
    int fd = target_open(root, lib, O_PATH, 0, 1);
    int same = fd >= 0 && stat(lib, &a) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    if (fd >= 0) close(fd);
    return same;
}

/* All of in into out; 0, or -1 with errno. */
static int copy_fd(int in, int out)
{
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) return -1;
    return n == 0 ? 0 : -1;
}

/* The library copied into tmp as name: a copy made before kept when it is
 * a regular file of ours, alone, not writable by others, of the same size;
 * else a new file (O_EXCL) renamed over whatever has that name (a link
 * is replaced, never followed). 0, or -1 with errno. */
static int place_copy(int tmp, const char *name, const char *lib, const struct stat *st)
{
    struct stat have;
    char why[160], part[64];
    int fd = target_open_file(tmp, name, geteuid(), &have, why, sizeof why);
    if (fd >= 0) {
        close(fd);
        if (have.st_size == st->st_size && !(have.st_mode & 022)) return 0;
    }
    int out = -1, in = open(lib, O_RDONLY | O_CLOEXEC);
    for (int i = 0; in >= 0 && out < 0 && i < 100; i++) {
        snprintf(part, sizeof part, ".libmallocprof-%d-%d.part", (int)getpid(), i);
        out = openat(tmp, part, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (out < 0 && errno != EEXIST) break;
    }
    int rc = in >= 0 && out >= 0 && copy_fd(in, out) == 0 && fchmod(out, 0644) == 0 ? 0 : -1;
    int err = errno;
    if (in >= 0) close(in);
    if (out >= 0 && close(out) != 0 && !rc) rc = -1, err = errno;
    if (out >= 0 && (rc || renameat(tmp, part, tmp, name) != 0)) {
        err = rc ? err : errno;
        rc = -1;
        unlinkat(tmp, part, 0);
    }
    errno = err;
    return rc;
}

/* Where the process writes its profile can be written by it: 0, or the
 * exit code, said. */
static int check_writes(pid_t pid, const char *name, const char *out, const struct mounts *m)
{
    const char *which;
    int err = target_can_write(pid, *m->out ? m->out : out, &which);
    if (!err) return 0;
    if (*m->out)
        return error(EXIT_FAILED, "record: process %d (%s), uid %lu, cannot write its profile in its /tmp (its mount "
                     "namespace's): %s: %s; not attached", (int)pid, name, m->owner, which, strerror(err));
    return error(EXIT_BAD_INPUT, "record: process %d (%s), uid %lu, cannot write its profile %s: %s: %s (give an -o "
                 "it can write); not attached", (int)pid, name, m->owner, out, which, strerror(err));
}

/* Another mount namespace or root: its /tmp reached, the profile named
 * there, the library copied there unless it sees ours. */
static int prepare_other(pid_t pid, const char *name, const char *lib, const char *out, struct mounts *m, int root)
{
    struct stat st, have;
    if (stat(lib, &st) != 0 || (m->tmp = target_open(root, "/tmp", O_PATH | O_DIRECTORY, 0, 1)) < 0)
        return error(EXIT_FAILED, "record: process %d (%s) runs in another mount namespace where %s is not the same "
                     "file, and its /tmp cannot be reached (%s): make the library visible there at that path (a "
                     "bind mount); not attached", (int)pid, name, lib, strerror(errno));
    if (m->other) {
        if (stat(out, &have) == 0 && have.st_size > 0)
            return error(EXIT_BAD_INPUT, "record: %s exists: a process in another mount namespace writes a new "
                         "profile (give another -o)", out);
        snprintf(m->out, sizeof m->out, "/tmp/mallocprof-%d-%d.db", (int)pid, (int)getpid());
        unlinkat(m->tmp, m->out + 5, 0);    /* a name planted before: removed, not followed */
    }
    int rc = check_writes(pid, name, out, m);
    if (rc) return rc;
    snprintf(m->lib, sizeof m->lib, "/tmp/libmallocprof-%lx-%lx.so", (unsigned long)st.st_dev, (unsigned long)st.st_ino);
    if (library_visible(root, lib)) snprintf(m->lib, sizeof m->lib, "%s", lib);
    else if (place_copy(m->tmp, m->lib + 5, lib, &st) != 0)
        return error(EXIT_FAILED, "record: process %d (%s) runs in another mount namespace where %s is not the same "
                     "file, and it cannot be copied into its /tmp (%s): make it visible there at that path (a bind "
                     "mount); not attached", (int)pid, name, lib, strerror(errno));
    return 0;
}

int prepare_mounts(pid_t pid, const char *name, const char *lib, const char *out, struct mounts *m)
{
    struct target_creds c;
    memset(m, 0, sizeof *m);
    m->tmp = -1;
    m->other = !same_mounts(pid) || !target_same_root(pid);
    int root = target_root(pid);
    if (root < 0 || target_creds(pid, &c) != 0) {
        int err = errno;
        if (root >= 0) close(root);
        return error(EXIT_FAILED, "record: process %d (%s): its root or status cannot be read: %s; not attached",
                     (int)pid, name, strerror(err));
    }
    m->owner = c.uid;
    int rc = !m->other && library_visible(root, lib) ? check_writes(pid, name, out, m)
                                                     : prepare_other(pid, name, lib, out, m, root);
    close(root);
    return rc;
}

int collect_profile(pid_t pid, const char *name, const struct mounts *m, const char *out)
{
    if (m->tmp < 0 || !*m->out) return 0;
    struct stat st;
    char why[160];
    int in = target_open_file(m->tmp, m->out + 5, (uid_t)m->owner, &st, why, sizeof why);
    if (in < 0)
        return error(EXIT_FAILED, "record: process %d (%s): the profile it was to write, %s in its /tmp, %s; not "
                     "copied to %s", (int)pid, name, m->out, why, out);
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 0666);
    int rc = fd >= 0 && copy_fd(in, fd) == 0 ? 0 : -1, err = errno;
    if (fd >= 0 && close(fd) != 0 && !rc) rc = -1, err = errno;
    close(in);
    if (rc)
        return error(EXIT_FAILED, "record: cannot copy the profile from the process's %s to %s: %s", m->out, out,
                     strerror(err));
    unlinkat(m->tmp, m->out + 5, 0);
    return 0;
}
