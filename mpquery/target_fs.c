/* Files of a process record --pid attaches to, through its root: no
 * symbolic link followed where mpquery reads or writes, nothing resolved
 * outside that root, and its write access checked with its own
 * credentials (target_fs.h). */
#define _GNU_SOURCE
#include "target_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int target_creds(pid_t pid, struct target_creds *c)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    int found = 0;
    memset(c, 0, sizeof *c);
    while (fgets(line, sizeof line, f)) {
        unsigned long r, e, s, fs;
        if (sscanf(line, "Uid: %lu %lu %lu %lu", &r, &e, &s, &fs) == 4) c->uid = (uid_t)fs, found |= 1;
        else if (sscanf(line, "Gid: %lu %lu %lu %lu", &r, &e, &s, &fs) == 4) c->gid = (gid_t)fs, found |= 2;
        else if (!strncmp(line, "Groups:", 7)) {
            char *p = line + 7, *end;
            for (unsigned long g; c->ngroups < 64 && (g = strtoul(p, &end, 10), end != p); p = end)
                c->groups[c->ngroups++] = (gid_t)g;
        }
    }
    fclose(f);
    return found == 3 ? 0 : -1;
}

int target_root(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/root", (int)pid);
    return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

int target_same_root(pid_t pid)
{
    char path[64];
    struct stat a, b;
    snprintf(path, sizeof path, "/proc/%d/root", (int)pid);
    return stat("/", &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Without openat2: one component at a time, none followed (".." refused:
 * nothing checks where it leads); links == 1 is as strict. */
static int open_walk(int dir, const char *path, int flags, mode_t mode)
{
    char name[4096];
    int cur = dir;
    for (const char *p = path;;) {
        p += strspn(p, "/");
        size_t n = strcspn(p, "/");
        const char *next = p + n + strspn(p + n, "/");
        if (n >= sizeof name || (n == 2 && !strncmp(p, "..", 2))) {
            if (cur != dir) close(cur);
            errno = n >= sizeof name ? ENAMETOOLONG : EXDEV;
            return -1;
        }
        memcpy(name, p, n);
        name[n] = 0;
        int last = !*next, fd;
        if (last) fd = openat(cur, n ? name : ".", flags | O_NOFOLLOW | O_CLOEXEC, mode);
        else fd = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int err = errno;
        struct stat st;
        if (fd >= 0 && last && (flags & O_PATH) && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
            close(fd);          /* O_PATH | O_NOFOLLOW opens the link itself */
            fd = -1;
            err = ELOOP;
        }
        if (cur != dir) close(cur);
        errno = err;
        if (fd < 0 || last) return fd;
        cur = fd;
        p = next;
    }
}

int target_open(int dir, const char *path, int flags, mode_t mode, int links)
{
    struct open_how how = {
        .flags = (uint64_t)(flags | O_CLOEXEC | (links ? 0 : O_NOFOLLOW)),
        .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | (links ? 0 : RESOLVE_NO_SYMLINKS),
    };
    const char *rel = path + strspn(path, "/");
    int fd = (int)syscall(SYS_openat2, dir, *rel ? rel : ".", &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return fd;     /* EPERM: a seccomp filter */
    return open_walk(dir, path, flags, mode);
}

int target_open_file(int dir, const char *path, uid_t owner, struct stat *st, char *why, size_t size)
{
    int at = target_open(dir, path, O_PATH, 0, 0), fd = -1;
    struct stat again;
    if (at < 0) {
        if (errno == ELOOP) snprintf(why, size, "is a symbolic link, or a path through one: not followed");
        else if (errno == ENOENT) snprintf(why, size, "does not exist");
        else snprintf(why, size, "cannot be opened (%s)", strerror(errno));
        return -1;
    }
    if (fstat(at, st) != 0) snprintf(why, size, "%s", strerror(errno));
    else if (S_ISLNK(st->st_mode)) snprintf(why, size, "is a symbolic link: not followed");
    else if (!S_ISREG(st->st_mode)) snprintf(why, size, "is not a regular file");
    else if (owner != (uid_t)-1 && st->st_uid != owner)
        snprintf(why, size, "belongs to uid %lu, not %lu", (unsigned long)st->st_uid, (unsigned long)owner);
    else if (owner != (uid_t)-1 && st->st_nlink != 1) snprintf(why, size, "has %lu hard links, not one", (unsigned long)st->st_nlink);
    else {
        /* the file checked reopened for reading: a device is never opened */
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", at);
        fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) snprintf(why, size, "%s", strerror(errno));
        else if (fstat(fd, &again) != 0 || again.st_dev != st->st_dev || again.st_ino != st->st_ino) {
            snprintf(why, size, "changed while opened");
            close(fd);
            fd = -1;
        }
    }
    close(at);
    return fd;
}

/* The file mapped at path's first mapping, through /proc/PID/map_files
 * (the very file, whatever its path shows; root only), or -1. */
static int open_mapped(pid_t pid, const char *path)
{
    char name[64], line[4096 + 128], file[4096];
    snprintf(name, sizeof name, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(name, "re");
    int fd = -1;
    unsigned long lo, hi;
    while (f && fd < 0 && fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %4095[^\n]", &lo, &hi, file) == 3 && !strcmp(file, path)) {
            snprintf(name, sizeof name, "/proc/%d/map_files/%lx-%lx", (int)pid, lo, hi);
            fd = open(name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
            break;
        }
    if (f) fclose(f);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

int target_open_library(pid_t pid, const char *path)
{
    struct stat st;
    char why[160];
    int fd = open_mapped(pid, path), root = fd < 0 ? target_root(pid) : -1;
    if (root >= 0) {
        fd = target_open_file(root, path, (uid_t)-1, &st, why, sizeof why);
        close(root);
    }
    return fd;
}

/* In the child: 0 when path can be written by the process, else errno with
 * *which 0 (the directory) or 1 (the file). */
static int check_as_target(int root, const char *path, int *which)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) return *which = 0, EINVAL;
    slash[slash == dir ? 1 : 0] = 0;
    *which = 0;
    int d = target_open(root, dir, O_PATH | O_DIRECTORY, 0, 1);
    if (d < 0 || faccessat(d, "", W_OK | X_OK, AT_EMPTY_PATH | AT_EACCESS) != 0) return errno;
    close(d);
    *which = 1;
    int f = target_open(root, path, O_PATH, 0, 1);
    if (f < 0) return errno == ENOENT ? 0 : errno;
    int rc = faccessat(f, "", W_OK, AT_EMPTY_PATH | AT_EACCESS) == 0 ? 0 : errno;
    close(f);
    return rc;
}

/* The child: the root opened as mpquery, then the process's credentials
 * taken (root only: another user's process), then the check; its answer
 * written to out. */
static void write_check(pid_t pid, const struct target_creds *c, const char *path, int out)
{
    int answer[2] = { 0, 0 };
    int root = target_root(pid);
    if (root < 0) answer[0] = errno;
    else if (geteuid() == 0 && (setgroups((size_t)c->ngroups, c->groups) != 0 || setresgid(c->gid, c->gid, c->gid) != 0 ||
                                setresuid(c->uid, c->uid, c->uid) != 0))
        answer[0] = errno;
    else answer[0] = check_as_target(root, path, &answer[1]);
    if (write(out, answer, sizeof answer) != sizeof answer) _exit(1);
    _exit(0);
}

int target_can_write(pid_t pid, const char *path, const char **which)
{
    static char refused[4096];
    struct target_creds c;
    int p[2], answer[2] = { ESRCH, 0 };
    *which = path;
    if (target_creds(pid, &c) != 0) return ESRCH;
    if (pipe2(p, O_CLOEXEC) != 0) return errno;
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        close(p[0]);
        write_check(pid, &c, path, p[1]);
    }
    close(p[1]);
    int got = child > 0 && read(p[0], answer, sizeof answer) == sizeof answer;
    int err = child < 0 ? errno : 0;
    close(p[0]);
    if (child > 0)
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {}
    if (!got) return err ? err : ECHILD;
    if (answer[0] && answer[1] == 0) {
        snprintf(refused, sizeof refused, "%s", path);
        char *slash = strrchr(refused, '/');
        if (slash) slash[slash == refused ? 1 : 0] = 0;
        *which = refused;
    }
    return answer[0];
}
