/* record --pid's opening of a process's files through its root
 * (mpquery/target_fs.c), on a directory standing for that root: no link
 * followed anywhere on a path where mpquery reads (an absolute one, a
 * relative one, a directory one), links followed inside the root only,
 * ".." kept inside, and a file read only when it is a regular file of the
 * owner expected with one link (a FIFO refused without blocking). Each
 * check runs twice: with openat2, and with the one-component-at-a-time
 * walk used where the kernel has no openat2 (syscall made to fail with
 * ENOSYS). */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

static int no_openat2;      /* the kernel made to have no openat2 */
#define syscall(nr, ...) (no_openat2 ? (errno = ENOSYS, -1L) : syscall(nr, __VA_ARGS__))
#include "target_fs.c"
#include "check.h"

static int root;

/* path opened as target_open does: -1 and errno, or 0 (closed) */
static int try_open(const char *path, int flags, int links)
{
    int fd = target_open(root, path, flags, 0, links);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

static void check_links(const char *mode)
{
    CHECK(try_open("/tmp/f", O_RDONLY, 0) == 0);
    CHECK(try_open("tmp/f", O_RDONLY, 0) == 0);
    CHECK(try_open("/tmp/abs", O_RDONLY, 0) == -1 && errno == ELOOP);
    CHECK(try_open("/tmp/rel", O_RDONLY, 0) == -1 && errno == ELOOP);
    CHECK(try_open("/dirlink/f", O_RDONLY, 0) == -1 && (errno == ELOOP || errno == ENOTDIR));
    CHECK(try_open("/tmp/../tmp/f", O_RDONLY, 0) == (no_openat2 ? -1 : 0));     /* the walk refuses ".." */
    OK("%s: no link followed where a file is read (absolute, relative, a directory's)", mode);
    /* links inside the root: /etc/passwd is not there */
    errno = 0;
    CHECK(try_open("/tmp/abs", O_PATH, 1) == -1);
    CHECK(errno == (no_openat2 ? ELOOP : ENOENT));
    CHECK(try_open("/../../../../tmp/f", O_PATH, 1) == (no_openat2 ? -1 : 0));
    OK("%s: a link or \"..\" never leaves the root", mode);
}

static void check_files(const char *mode)
{
    struct stat st;
    char why[160], buf[16] = "";
    int fd = target_open_file(root, "/tmp/f", getuid(), &st, why, sizeof why);
    CHECK(fd >= 0);
    CHECK(read(fd, buf, sizeof buf - 1) == 6);
    CHECK_STR(buf, "bytes\n");
    close(fd);
    CHECK(target_open_file(root, "/tmp/abs", getuid(), &st, why, sizeof why) == -1);
    CHECK(!strncmp(why, "is a symbolic link", 18));
    CHECK(target_open_file(root, "/tmp/fifo", getuid(), &st, why, sizeof why) == -1);
    CHECK_STR(why, "is not a regular file");
    CHECK(target_open_file(root, "/tmp/f", getuid() + 1, &st, why, sizeof why) == -1);
    CHECK(!strncmp(why, "belongs to uid", 14));
    CHECK(target_open_file(root, "/tmp/h1", getuid(), &st, why, sizeof why) == -1);
    CHECK_STR(why, "has 2 hard links, not one");
    fd = target_open_file(root, "/tmp/h1", (uid_t)-1, &st, why, sizeof why);
    CHECK(fd >= 0);
    close(fd);
    CHECK(target_open_file(root, "/tmp/none", getuid(), &st, why, sizeof why) == -1);
    CHECK_STR(why, "does not exist");
    OK("%s: read only a regular file of its owner with one link (a link, a FIFO, another owner, two links refused)", mode);
}

int main(void)
{
    char dir[] = "/tmp/mpq_target_fs.XXXXXX", path[128];
    CHECK(mkdtemp(dir));
    const char *make[] = { "mkdir %s/tmp", "printf 'bytes\\n' > %s/tmp/f", "ln -s /etc/passwd %s/tmp/abs",
                           "ln -s f %s/tmp/rel", "ln -s tmp %s/dirlink", "mkfifo %s/tmp/fifo",
                           "printf x > %s/tmp/h1", "ln %s/tmp/h1 %s/tmp/h2" };
    for (size_t i = 0; i < sizeof make / sizeof *make; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, make[i], dir, dir);
        CHECK(system(cmd) == 0);
    }
    CHECK((root = open(dir, O_PATH | O_DIRECTORY)) >= 0);
    for (no_openat2 = 0; no_openat2 < 2; no_openat2++) {
        const char *mode = no_openat2 ? "without openat2" : "openat2";
        check_links(mode);
        check_files(mode);
    }
    close(root);
    snprintf(path, sizeof path, "rm -rf %s", dir);
    CHECK(system(path) == 0);
    return 0;
}
