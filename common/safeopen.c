/* Opening files named by others without blocking (safeopen.h). */
#define _GNU_SOURCE
#include "safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int mp_open_regular(int dir, const char *path, int flags, struct stat *st)
{
    struct stat own;
    if (!st) st = &own;
    int fd = openat(dir, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags);
    if (fd < 0) return -1;
    if (fstat(fd, st)) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (S_ISREG(st->st_mode)) return fd;
    close(fd);
    return -2;
}

const char *mp_file_kind(const struct stat *st)
{
    switch (st->st_mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    default: return "not a regular file";
    }
}
