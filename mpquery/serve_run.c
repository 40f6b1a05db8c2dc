/* serve's views each run in a child process: its output and messages
 * caught in memory files, its exit status the view's (serve_run). Below
 * the views (serve_views.c) and the server (serve.c). */
#define _GNU_SOURCE
#include "serve.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void read_fd(int fd, struct strbuf *sb)
{
    char buf[65536];
    off_t off = 0;
    ssize_t n;
    while ((n = pread(fd, buf, sizeof buf, off)) > 0) {
        sb_add(sb, buf, (size_t)n);
        off += n;
    }
}

int serve_run(int (*fn)(void *ctx, int argc, char **argv), void *ctx, int argc, char **argv,
              struct strbuf *out, struct strbuf *err)
{
    int fo = memfd_create("serve-out", MFD_CLOEXEC), fe = memfd_create("serve-err", MFD_CLOEXEC);
    if (fo < 0 || fe < 0) {
        sb_printf(err, "mpquery: serve: memfd_create: %s", strerror(errno));
        if (fo >= 0) close(fo);
        return EXIT_FAILED;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(EXIT_FAILED);
        optind = 0;
        int rc = fn(ctx, argc, argv);
        fflush(stdout);
        fflush(stderr);
        _exit(rc & 0xff);
    }
    int status = 0, rc = EXIT_FAILED;
    if (pid < 0) sb_printf(err, "mpquery: serve: fork: %s", strerror(errno));
    else {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        read_fd(fo, out);
        read_fd(fe, err);
        if (WIFEXITED(status)) rc = WEXITSTATUS(status);
        else sb_printf(err, "mpquery: serve: the view died of signal %d", WTERMSIG(status));
    }
    close(fo);
    close(fe);
    return rc;
}

