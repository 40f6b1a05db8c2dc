/* mpquery live's terminal (live.h): plain ANSI, the alternate screen and
 * raw mode by termios, restored at exit and on SIGINT, SIGTERM and
 * SIGHUP, which a handler writes into a pipe the screen's loop polls
 * (SIGWINCH too: a redraw); the screen's size now. */
#include "mpquery.h"
#include "live.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static struct termios saved_tty;
static int tty_raw, sig_pipe[2] = { -1, -1 };

void live_restore_terminal(void)
{
    if (!tty_raw) return;
    static const char leave[] = "\033[?25h\033[?1049l";
    ssize_t w = write(STDOUT_FILENO, leave, sizeof leave - 1);
    (void)w;
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
    tty_raw = 0;
}

static void on_signal(int sig)
{
    int e = errno;
    char b = (char)sig;
    ssize_t w = write(sig_pipe[1], &b, 1);
    (void)w;
    errno = e;
}

int live_enter_terminal(void)
{
    if (tcgetattr(STDIN_FILENO, &saved_tty) != 0) return -1;
    struct termios raw = saved_tty;
    raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    raw.c_cc[VMIN] = 1, raw.c_cc[VTIME] = 0;
    if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) != 0) return -1;
    tty_raw = 1;
    atexit(live_restore_terminal);
    static const char enter[] = "\033[?1049h\033[?25l\033[2J";
    ssize_t w = write(STDOUT_FILENO, enter, sizeof enter - 1);
    (void)w;
    if (pipe(sig_pipe) != 0) return -1;
    fcntl(sig_pipe[0], F_SETFL, O_NONBLOCK), fcntl(sig_pipe[1], F_SETFL, O_NONBLOCK);
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGWINCH };
    for (size_t i = 0; i < 4; i++) sigaction(sigs[i], &sa, NULL);
    return 0;
}

/* The terminal's size now (it changes: SIGWINCH); off a terminal (--once)
 * COLUMNS and LINES, else 80 x 24. */
static size_t dimension(const char *name, size_t from_tty, size_t deflt)
{
    if (from_tty) return from_tty;
    const char *e = getenv(name);
    long n = e ? atol(e) : 0;
    return n > 0 && n < 10000 ? (size_t)n : deflt;
}

void live_screen_size(struct live *v)
{
    struct winsize ws = { 0 };
    if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0) ws.ws_col = ws.ws_row = 0;
    v->width = dimension("COLUMNS", ws.ws_col, 80);
    v->height = dimension("LINES", ws.ws_row, 24);
}

/* The signals caught since the last call: 128 + N for SIGINT, SIGTERM or
 * SIGHUP (N), 2 for SIGWINCH (redraw, the screen cleared first: the old
 * frame's lines may be longer), else 0. */
int live_signals_read(void)
{
    char sigs[16];
    ssize_t n = read(sig_pipe[0], sigs, sizeof sigs);
    int r = 0;
    for (ssize_t i = 0; i < n; i++) {
        if (sigs[i] != SIGWINCH) return 128 + sigs[i];
        r = 2;
    }
    return r;
}

int live_signal_fd(void) { return sig_pipe[0]; }
