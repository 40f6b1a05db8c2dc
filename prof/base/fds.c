/* The descriptors the profiler keeps, out of the program's way. An open
 * takes the lowest free number, and a daemon that closes every descriptor
 * and opens its own files expects them on 3, 4, 5...: a descriptor the
 * profiler holds down there, or opens for a moment from its background
 * thread while the program opens its own, moves the program's files.
 *
 *  - mp_fd_high moves a descriptor above the program's range.
 *  - A kept file (/proc/self/statm for the ticks, /proc/self/pagemap) is
 *    opened in the program's own thread (init, the fork child) and read
 *    with pread (a number the program took over is never read from). A
 *    program's close, close_range or closefrom of its number opens it
 *    again at once, in that same thread: the background thread never opens
 *    one while the program may be opening its own. Lost any other way
 *    (dup2 over it, a raw system call), it is opened again at its next use.
 *  - libunwind's pipe (pipe2 below) goes above the range too, and so do
 *    the files SQLite opens for the profiler (the profile, its journal,
 *    its directory): they live for a whole snapshot, which the background
 *    thread writes while the program runs (ahead of the exit, intervals).
 *    Only the open itself takes a low number, for a moment. */
#define _GNU_SOURCE
#include "base.h"
#include "hooks.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int mp_fd_high(int fd)
{
    struct rlimit lim;
    if (fd < 0 || getrlimit(RLIMIT_NOFILE, &lim) != 0) return fd;
    long base = lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur > 65536 ? 65536 - 64 : (long)lim.rlim_cur - 64;
    if (base <= fd) return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, (int)base);
    if (high < 0) return fd;
    close(fd);
    return high;
}

/* ------------------------------------------------------------ kept files */

struct kept {
    const char *path;
    _Atomic int fd;
    dev_t dev;
    ino_t ino;
};
static struct kept kept[NKEPT] = {
    [KEPT_STATM] = { "/proc/self/statm", -1, 0, 0 },
    [KEPT_PAGEMAP] = { "/proc/self/pagemap", -1, 0, 0 },
    [KEPT_SMAPS] = { "/proc/self/smaps", -1, 0, 0 },    /* the ledger: pread from 0 reads it anew */
    [KEPT_MEM] = { "/proc/self/mem", -1, 0, 0 },        /* the ledger's reads of our own memory */
    [KEPT_CG_USAGE] = { "", -1, 0, 0 },         /* the memory cgroup's files (mp_kept_path) */
    [KEPT_CG_LIMIT] = { "", -1, 0, 0 },
};
static char kept_paths[NKEPT][512];     /* the paths mp_kept_path gives */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static int kept_is_ours(const struct kept *k, int fd)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == k->dev && st.st_ino == k->ino;
}

/* Under kept_lock. `forget`: the number is no longer ours (closed by the
 * program, or another file on it): not closed. */
static void kept_reopen(struct kept *k, int forget)
{
    int old = atomic_load(&k->fd);
    if (old >= 0 && !forget) close(old);
    int fd = *k->path ? mp_fd_high(open(k->path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) : -1;
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0) k->dev = st.st_dev, k->ino = st.st_ino;
    atomic_store(&k->fd, fd);
}

/* Init, a new attach session and the fork child (a /proc/self file reads
 * the process that opened it: the child's own), in the program's thread. */
void mp_kept_open_all(void)
{
    pthread_mutex_init(&kept_lock, NULL);       /* a fork child: held by a thread now gone */
    for (int i = 0; i < NKEPT; i++) kept_reopen(&kept[i], 0);
}

void mp_kept_path(enum mp_kept_file which, const char *path)
{
    struct kept *k = &kept[which];
    if (strlen(path) >= sizeof kept_paths[which]) path = "";
    int old = atomic_exchange(&k->fd, -1);     /* not ours when closed: close's kept_closed leaves it */
    if (old >= 0) close(old);
    strcpy(kept_paths[which], path);
    k->path = kept_paths[which];
    kept_reopen(k, 1);
}

int mp_kept_fd_ours(enum mp_kept_file which)
{
    int fd = atomic_load(&kept[which].fd);
    return kept_is_ours(&kept[which], fd) ? fd : -1;
}

int mp_kept_fd(enum mp_kept_file which)
{
    struct kept *k = &kept[which];
    int fd = atomic_load(&k->fd);
    if (kept_is_ours(k, fd)) return fd;
    pthread_mutex_lock(&kept_lock);
    if (!kept_is_ours(k, atomic_load(&k->fd))) kept_reopen(k, 1);
    fd = atomic_load(&k->fd);
    pthread_mutex_unlock(&kept_lock);
    return fd;
}

static int kept_within(const struct kept *k, unsigned lo, unsigned hi)
{
    int fd = atomic_load(&k->fd);
    return fd >= 0 && (unsigned)fd >= lo && (unsigned)fd <= hi;
}

/* After the program closed [lo, hi]: those of ours in it, opened again.
 * Not in a vfork child (it shares our memory, not our descriptors). */
static void kept_closed(unsigned lo, unsigned hi)
{
    int hit = 0;
    for (int i = 0; i < NKEPT; i++) hit |= kept_within(&kept[i], lo, hi);
    if (!hit || getpid() != mp_pid) return;
    int saved = errno;
    pthread_mutex_lock(&kept_lock);
    for (int i = 0; i < NKEPT; i++)
        if (kept_within(&kept[i], lo, hi)) kept_reopen(&kept[i], 1);
    pthread_mutex_unlock(&kept_lock);
    errno = saved;
}

/* While the hooks resolve (dlsym may close a file) there is no next close
 * yet: the system call. */
MP_EXPORT int close(int fd)
{
    HOOKS_READY();
    int rc = mp_next.close ? mp_next.close(fd) : (int)syscall(SYS_close, fd);
    if (fd >= 0) kept_closed((unsigned)fd, (unsigned)fd);
    return rc;
}

MP_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
    HOOKS_READY();
    if (!mp_next.close_range) {
        errno = ENOSYS;
        return -1;
    }
    int rc = mp_next.close_range(first, last, flags);
    if (rc == 0 && !(flags & CLOSE_RANGE_CLOEXEC)) kept_closed(first, last);
    return rc;
}

MP_EXPORT void closefrom(int lowfd)
{
    HOOKS_READY();
    if (mp_next.closefrom) mp_next.closefrom(lowfd);
    if (lowfd >= 0) kept_closed((unsigned)lowfd, ~0u);
}

/* ------------------------------------------------------------ SQLite's files */

/* SQLite's unix VFS opens through a table of system calls, one for every
 * connection in the process, the program's own included (the library is
 * shared): its open is replaced by one that moves the profiler's files
 * high and leaves everyone else's as the open it wraps made them. */
static int (*sqlite_open_next)(const char *, int, int);

static int sqlite_open(const char *path, int flags, int mode)
{
    int fd = sqlite_open_next(path, flags, mode);
    return mp_tls.in_profiler == MP_INSIDE ? mp_fd_high(fd) : fd;
}

static void sqlite_open_wrap(void)
{
    sqlite3_vfs *unix_vfs = sqlite3_vfs_find("unix");
    if (!unix_vfs || unix_vfs->iVersion < 3 || !unix_vfs->xGetSystemCall || !unix_vfs->xSetSystemCall) return;
    sqlite_open_next = (int (*)(const char *, int, int))unix_vfs->xGetSystemCall(unix_vfs, "open");
    if (sqlite_open_next) unix_vfs->xSetSystemCall(unix_vfs, "open", (sqlite3_syscall_ptr)sqlite_open);
}

void mp_sqlite_fds_high(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, sqlite_open_wrap);
}

/* ------------------------------------------------------------ libunwind's pipe */

/* libunwind checks the addresses it reads through a pipe it keeps (and
 * closes and makes again when a read from it fails: after a daemon closed
 * every descriptor and opened its own files on those numbers, it closed
 * them). Its pipe2 calls come here: the pipe goes above the program's
 * range. Everyone else's pipe2 is the real one, untouched. */
static uintptr_t unwind_lo, unwind_hi;

static int find_libunwind(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t lo, hi, at = (uintptr_t)arg;
    object_range(info, &lo, &hi);
    if (at < lo || at >= hi) return 0;
    unwind_lo = lo, unwind_hi = hi;
    return 1;
}

MP_EXPORT int pipe2(int fds[2], int flags)
{
    HOOKS_READY();
    if (!mp_next.pipe2) {
        errno = ENOSYS;
        return -1;
    }
    uintptr_t caller = (uintptr_t)__builtin_return_address(0);
    int rc = mp_next.pipe2(fds, flags);
    if (rc != 0) return rc;
    if (!unwind_hi) dl_iterate_phdr(find_libunwind, (void *)(uintptr_t)&unw_backtrace);
    if (caller >= unwind_lo && caller < unwind_hi) {
        int saved = errno;
        fds[0] = mp_fd_high(fds[0]);
        fds[1] = mp_fd_high(fds[1]);
        errno = saved;
    }
    return rc;
}
