/* Files of a process record --pid attaches to, reached through its root
 * (/proc/PID/root) as it would resolve them (target_fs.c). mpquery is often
 * root and the process's files are its user's: a name in them is never
 * followed across a symbolic link and never resolved outside that root, a
 * file read must be a regular file of the owner expected, and whether the
 * process can write somewhere is checked with its credentials. */
#ifndef MPQUERY_TARGET_FS_H
#define MPQUERY_TARGET_FS_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The credentials files are made with: fsuid, fsgid, supplementary groups
 * (/proc/PID/status). */
struct target_creds { uid_t uid; gid_t gid; gid_t groups[64]; int ngroups; };
/* 0, or -1 (the process is gone). */
int target_creds(pid_t pid, struct target_creds *c);

/* A descriptor of the process's root directory (O_PATH), or -1. */
int target_root(pid_t pid);
/* The process's root is ours (a chroot or pivot_root differs). */
int target_same_root(pid_t pid);

/* path opened under dir (a directory descriptor; the process's root:
 * absolute paths and ".." stay inside it) with flags (O_NOFOLLOW and
 * O_CLOEXEC added). links 0: no symbolic link anywhere on the path
 * (ELOOP); links 1: links followed as the process would, inside dir. A
 * descriptor, or -1 with errno set. openat2 where the kernel has it,
 * else one component at a time without following any link. */
int target_open(int dir, const char *path, int flags, mode_t mode, int links);

/* A file to read: opened as target_open with no link, O_RDONLY and
 * O_NONBLOCK (a FIFO never blocks), then checked on that descriptor: a
 * regular file, owned by owner with one hard link (owner (uid_t)-1: any
 * owner, any links: a file only read, such as a library). A
 * descriptor with *st filled, or -1 with why ("is a symbolic link: not
 * followed", "belongs to uid 0, not 1000", ...; errno's text otherwise). */
int target_open_file(int dir, const char *path, uid_t owner, struct stat *st, char *why, size_t size);

/* A library the process has mapped, named as /proc/PID/maps names it,
 * for reading: the mapped file itself (/proc/PID/map_files: root only;
 * maps names files as its reader's root sees them, which inside another
 * root with mounts of its own may lead nowhere), else that path in its
 * root as target_open_file opens it (any owner). A descriptor, or -1. */
int target_open_library(pid_t pid, const char *path);

/* Whether process pid can write a new file at path (its absolute path, as
 * the process sees it) or an existing one there: path's directory
 * searched and written, the file written, checked by a child of mpquery
 * with the process's credentials through its root (its mount namespace's
 * mounts: a read-only /tmp says so). 0, or errno with *which the path
 * refused (path or its directory, in a static buffer). */
int target_can_write(pid_t pid, const char *path, const char **which);

#endif
