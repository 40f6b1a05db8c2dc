/* The terminal text goes to: its width, and the pager long output goes
 * through (git's way: $PAGER, `less -SFRX` when unset, whose -F quits at
 * once when the text fits one screen). Only when stdout is a terminal: a
 * pipe or a file gets the output as it is, whole lines. */
#include "mpquery.h"
#include "output.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t pager_pid;

size_t terminal_width(void)
{
    static int known;
    static size_t width;
    if (known) return width;
    known = 1;
    if (!isatty(STDOUT_FILENO)) return width = 0;
    const char *columns = getenv("COLUMNS");
    int64_t n;
    if (columns && !parse_int64(columns, &n) && n > 0 && n <= 100000) return width = (size_t)n;
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return width = ws.ws_col;
    return width = 80;
}

/* At exit: the pager reads the end of the output (stdout closed), and the
 * terminal stays its until it quits. */
static void pager_wait(void)
{
    fflush(stdout);
    close(STDOUT_FILENO);
    int status;
    while (waitpid(pager_pid, &status, 0) < 0 && errno == EINTR) {}
}

void pager_start(void)
{
    if (pager_pid || !isatty(STDOUT_FILENO)) return;
    terminal_width();
    const char *pager = getenv("PAGER");
    if (!pager) pager = "less -SFRX";
    if (!*pager || !strcmp(pager, "cat")) return;
    int fd[2];
    fflush(stdout);
    if (pipe(fd) < 0) return;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return;
    }
    if (pid == 0) {
        dup2(fd[0], STDIN_FILENO);
        close(fd[0]);
        close(fd[1]);
        setenv("LESS", "FRSX", 0);      /* PAGER=less: quit when it fits, as git does */
        execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
        _exit(127);
    }
    dup2(fd[1], STDOUT_FILENO);
    close(fd[0]);
    close(fd[1]);
    pager_pid = pid;
    /* Ctrl-C is the pager's (it shares the terminal's process group): what
     * is left is writing what was computed, and waiting for it */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    atexit(pager_wait);
}
