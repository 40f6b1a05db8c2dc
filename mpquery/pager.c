/* Text for a terminal, in one place: when stdout is a terminal, the text
 * commands' stdout becomes a filter (terminal_output) that cuts each line
 * to the terminal's width, ending it with '…', and that sends the output
 * through the pager only when it is longer than the screen (git's way:
 * $PAGER, `less -SFRX` when unset): it holds the text back until it has
 * more lines than the screen less one, then starts the pager with what it
 * held; a shorter output is written as it is when the program exits.
 * A pipe or a file gets the output untouched, whole lines. */
#include "mpquery.h"
#include "output.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define ELLIPSIS "\xe2\x80\xa6"

/* A dimension of the terminal: the variable (COLUMNS, LINES) when set,
 * else the terminal's own, else the fallback. */
static size_t dimension(const char *var, int cols, size_t fallback)
{
    const char *v = getenv(var);
    int64_t n;
    if (v && !parse_int64(v, &n) && n > 0 && n <= 100000) return (size_t)n;
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && (cols ? ws.ws_col : ws.ws_row) > 0)
        return cols ? ws.ws_col : ws.ws_row;
    return fallback;
}

size_t terminal_width(void)
{
    static int known;
    static size_t width;
    if (!known) width = isatty(STDOUT_FILENO) ? dimension("COLUMNS", 1, 80) : 0;
    known = 1;
    return width;
}

size_t terminal_height(void)
{
    return isatty(STDOUT_FILENO) ? dimension("LINES", 0, 24) : 0;
}

/* The filter's state: where the text goes, and the current line. */
static struct tty_out {
    FILE *terminal;             /* the real stdout, the terminal */
    int fd;                     /* where text goes: the terminal, or the pager's pipe */
    size_t width;               /* cut lines to this many code points (0: whole) */
    size_t rows;                /* while deciding: page beyond rows - 1 lines */
    int deciding;               /* text held back in `held` until it is too long */
    struct strbuf held;
    size_t lines;               /* lines held */
    size_t col;                 /* code points of the current line seen */
    int cut;                    /* the current line was cut: drop the rest of it */
    char last[8];               /* the width-th code point, until the line ends or goes on */
    size_t nlast;
    pid_t pager;
} out;

static int write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        s += k, n -= (size_t)k;
    }
    return 0;
}

/* $PAGER (less -SFRX when unset) reading a pipe that out.fd becomes; 0,
 * or -1 when there is none (PAGER empty or cat) or it could not start. */
static int start_pager(void)
{
    const char *pager = getenv("PAGER");
    if (!pager) pager = "less -SFRX";
    if (!*pager || !strcmp(pager, "cat")) return -1;
    int fd[2];
    if (pipe(fd) < 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fd[0], STDIN_FILENO);
        close(fd[0]);
        close(fd[1]);
        setenv("LESS", "FRSX", 0);      /* PAGER=less: quit when it fits, as git does */
        execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
        _exit(127);
    }
    close(fd[0]);
    out.fd = fd[1];
    out.pager = pid;
    /* Ctrl-C is the pager's (it shares the terminal's process group): what
     * is left is writing what was computed, and waiting for it */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    return 0;
}

/* Text after cutting: held back while deciding, else written. */
static int emit(const char *s, size_t n)
{
    if (!out.deciding) return write_all(out.fd, s, n);
    sb_add(&out.held, s, n);
    for (size_t i = 0; i < n; i++) out.lines += s[i] == '\n';
    if (out.lines < out.rows) return 0;
    out.deciding = 0;                   /* longer than the screen */
    start_pager();
    int rc = write_all(out.fd, out.held.s, out.held.len);
    sb_free(&out.held);
    return rc;
}

/* fopencookie's write: each line cut to out.width code points (the last
 * one '…' when it goes on), a code point starting at each non-continuation
 * byte (text_clean made the text valid UTF-8). */
static ssize_t filter_write(void *cookie, const char *s, size_t n)
{
    (void)cookie;
    static struct strbuf sb;
    sb.len = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)s[i];
        if (b == '\n') {
            sb_add(&sb, out.last, out.nlast);
            sb_putc(&sb, '\n');
            out.col = out.nlast = 0;
            out.cut = 0;
            continue;
        }
        if (out.cut) continue;
        int start = (b & 0xc0) != 0x80;
        if (start && out.nlast) {       /* more than width: the last one becomes '…' */
            sb_puts(&sb, ELLIPSIS);
            out.nlast = 0;
            out.cut = 1;
            continue;
        }
        out.col += start;
        if (out.width && out.col == out.width && out.nlast < sizeof out.last) out.last[out.nlast++] = (char)b;
        else sb_putc(&sb, (char)b);
    }
    return sb.len && emit(sb.s, sb.len) ? -1 : (ssize_t)n;
}

/* At exit: the rest of the text (a line without its newline, what was
 * held back) to the terminal, and the pager waited for. */
static void filter_end(void)
{
    fflush(stdout);
    if (out.nlast) emit(out.last, out.nlast);
    out.nlast = 0;
    if (out.deciding) write_all(out.fd, out.held.s, out.held.len);
    out.deciding = 0;
    if (!out.pager) return;
    close(out.fd);
    int status;
    while (waitpid(out.pager, &status, 0) < 0 && errno == EINTR) {}
}

void terminal_output(size_t width, int page)
{
    if (out.terminal || !isatty(STDOUT_FILENO)) return;
    cookie_io_functions_t io = { .write = filter_write };
    FILE *f = fopencookie(NULL, "w", io);
    if (!f) return;
    fflush(stdout);
    static char buf[1 << 16];
    setvbuf(f, buf, _IOFBF, sizeof buf);
    out.terminal = stdout;
    out.fd = STDOUT_FILENO;
    out.width = width;
    out.rows = page ? terminal_height() : 0;
    out.deciding = page;
    stdout = f;
    atexit(filter_end);
}

void pager_start(void) { terminal_output(0, 1); }
