/* mpquery live: a full-screen view of a profile that a recorder is still
 * writing, redrawn when the file changes (looked at every --interval
 * seconds) or a key is pressed: memory over time (timeline.c's points),
 * the largest stacks by a counter (top's rows: listing.c, the same rules
 * and units) with their change since the previous frame, and the process
 * tree. Plain ANSI: the alternate screen, raw mode by termios, restored at
 * exit and on SIGINT, SIGTERM and SIGHUP; SIGWINCH redraws.
 *
 * The writer is never made to wait on us for more than a copy of the file:
 * the recorder keeps SQLite's rollback journal (no -wal/-shm files, any
 * file system, a copied .db always complete), so a reader holding its
 * shared lock would hold the recorder's COMMIT back for as long as it
 * reads. live takes the lock only to copy the file (profile_copy_committed:
 * milliseconds for megabytes; the recorder's busy timeout is 300 s) and
 * reads the copy at leisure. */
#include "optdefs.h"
#include "mpquery.h"
#include "commands.h"
#include "listing.h"
#include "load.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "procs.h"
#include "rules.h"
#include "select.h"
#include "tempfile.h"
#include "live.h"
#include "timeline.h"
#include "view.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <sqlite3.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery live DB [options]\n"
"\n"
"A full-screen view of a profile being written (MP_INTERVAL snapshots):\n"
"memory over time, the largest stacks by a counter with their change since\n"
"the previous frame, and the process tree; redrawn when the file changes.\n"
"Keys: c / C next / previous counter, s / S an earlier / later snapshot\n"
"(arrows too; the latest is followed again past the last), / a filter\n"
"regex (as --filter; empty: none), q quit.\n"
"\n";

static const char more[] =
"\n"
"The file is read from a copy taken under SQLite's shared lock, held only\n"
"for the copy: the recorder (rollback journal) is never kept waiting\n"
"longer. A file that does not exist yet is waited for. The rows are those\n"
"of 'mpquery top DB --by COUNTER --snapshot S' for the snapshot the header\n"
"shows, with a column of their change since the previous frame.\n"
"stdout must be a terminal, but with --once: one frame to stdout, COLUMNS\n"
"wide and LINES high (80 x 24 off a terminal).\n"
"\n"
"example:\n"
"  mpquery live app.db --by memlive\n"
"  mpquery record --live -- ./server --port 8080\n";

/* ---------------------------------------------------------------- the file */

/* live.h */
int live_file_changed(const struct live *v)
{
    struct stat st;
    if (stat(v->path, &st) != 0) return 0;
    if (v->have_copy && st.st_ino == v->seen.st_ino && st.st_size == v->seen.st_size &&
        st.st_mtim.tv_sec == v->seen.st_mtim.tv_sec && st.st_mtim.tv_nsec == v->seen.st_mtim.tv_nsec)
        return 0;
    return 1;
}

/* The copy brought up to date; 0, or -1 with v->status set. */
static int refresh_copy(struct live *v)
{
    struct stat st;
    if (stat(v->path, &st) != 0) {
        snprintf(v->status, sizeof v->status, "waiting for %s: no snapshot written yet (%s)", v->path,
                 strerror(errno));
        return -1;
    }
    char err[4400];
    struct sqlite3 *db = NULL;
    /* the new copy checked as a profile here (a message names the file), and
     * put in place of the last good one only then */
    int rc = profile_copy_committed(v->path, v->next, err, sizeof err);
    if (!rc) rc = profile_open_db(v->next, &db, 0, err, sizeof err);
    sqlite3_close(db);
    if (!rc && rename(v->next, v->copy) != 0)
        rc = -1, snprintf(err, sizeof err, "cannot rename %s (%s)", v->next, strerror(errno));
    if (rc) {
        snprintf(v->status, sizeof v->status, "%s: %s", v->path, err);
        return -1;
    }
    v->seen = st;
    v->have_copy = 1;
    return 0;
}

/* ---------------------------------------------------------------- the terminal */

static struct termios saved_tty;
static int tty_raw, sig_pipe[2] = { -1, -1 };

static void restore_terminal(void)
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

static int enter_terminal(void)
{
    if (tcgetattr(STDIN_FILENO, &saved_tty) != 0) return -1;
    struct termios raw = saved_tty;
    raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    raw.c_cc[VMIN] = 1, raw.c_cc[VTIME] = 0;
    if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) != 0) return -1;
    tty_raw = 1;
    atexit(restore_terminal);
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

static void screen_size(struct live *v)
{
    struct winsize ws = { 0 };
    if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0) ws.ws_col = ws.ws_row = 0;
    v->width = dimension("COLUMNS", ws.ws_col, 80);
    v->height = dimension("LINES", ws.ws_row, 24);
}

/* The next counter of the heap's that the profile has (dir +1 or -1). */
static void next_counter(struct live *v, int dir)
{
    int k[NSTACK_COUNTERS];
    int n = counter_list(v->counters ? v->counters : COUNTER_BIT(TIME) - 1, k), at = 0;
    for (int i = 0; i < n; i++) if (k[i] == v->c->out.by) at = i;
    v->c->out.by = k[(at + dir + n) % n];
}

/* A key: 1 when the frame must be drawn again, -1 to quit. */
static int key(struct live *v, const char *buf, size_t n)
{
    if (v->typing) {
        size_t len = strlen(v->typing);
        for (size_t i = 0; i < n; i++) {
            char ch = buf[i];
            if (ch == '\r' || ch == '\n') {
                regex_t re;
                const char *refused = *v->typing ? rules_regex_refused(v->typing) : NULL;
                if (refused) {
                    snprintf(v->status, sizeof v->status, "%s '%s'", refused, v->typing);
                } else if (*v->typing && regcomp(&re, v->typing, REG_EXTENDED | REG_NOSUB) != 0) {
                    snprintf(v->status, sizeof v->status, "bad filter regex '%s'", v->typing);
                } else {
                    if (*v->typing) regfree(&re);
                    snprintf(v->filter, sizeof v->filter, "%s", v->typing);
                    v->status[0] = 0;
                }
                free(v->typing), v->typing = NULL;
                return 1;
            }
            if (ch == 27) { free(v->typing), v->typing = NULL; return 1; }
            if ((ch == 127 || ch == 8) && len) v->typing[--len] = 0;
            else if ((unsigned char)ch >= 32 && ch != 127 && len + 1 < sizeof v->filter) {
                v->typing = xrealloc(v->typing, len + 2);
                v->typing[len++] = ch, v->typing[len] = 0;
            }
        }
        return 1;
    }
    if (n >= 3 && buf[0] == 27 && buf[1] == '[') {         /* arrows: left/down earlier, right/up later */
        if (buf[2] == 'D' || buf[2] == 'B') return key(v, "s", 1);
        if (buf[2] == 'C' || buf[2] == 'A') return key(v, "S", 1);
        return 0;
    }
    switch (buf[0]) {
    case 'q': case 'Q': return -1;
    case 'c': next_counter(v, 1); return 1;
    case 'C': next_counter(v, -1); return 1;
    case 's':
        if (v->fixed_snapshot) return 0;
        if (v->seq > 1) v->follow = 0, v->seq--;
        return 1;
    case 'S':
        if (v->fixed_snapshot) return 0;
        if (!v->follow && v->seq + 1 >= v->max_seq) v->follow = 1;
        else if (!v->follow) v->seq++;
        return 1;
    case '/': v->typing = xstrdup(""); return 1;
    }
    return 0;
}

/* The signals caught since the last call: 128 + N for SIGINT, SIGTERM or
 * SIGHUP (N), 2 for SIGWINCH (redraw, the screen cleared first: the old
 * frame's lines may be longer), else 0. */
static int signals_read(void)
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

/* The keys typed, one at a time (an arrow is 3 bytes): -1 to quit (q, or
 * the end of stdin), 1 to draw again, else 0. */
static int keys_read(struct live *v)
{
    char buf[64];
    ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n <= 0) return -1;
    int k = 0;
    for (ssize_t i = 0; i < n && k >= 0;) {
        size_t len = buf[i] == 27 && i + 2 < n && buf[i + 1] == '[' ? 3 : 1;
        int r = key(v, buf + i, len);
        k = r < 0 ? r : k | r;
        i += (ssize_t)len;
    }
    return k;
}

/* The screen until q or a signal; the exit code. pid_done (record --live):
 * called each turn, 1 once the program has ended. */
static int run_screen(struct live *v, double interval, int (*pid_done)(void *ctx), void *ctx)
{
    const char *tmpdir = getenv("TMPDIR");
    struct strbuf prefix = { 0 };
    sb_printf(&prefix, "%s/mpquery-live-err-", tmpdir && *tmpdir ? tmpdir : "/tmp");
    const char *errpath;
    char err[512];
    if (temp_create(prefix.s, &errpath, err, sizeof err)) return error(EXIT_FAILED, "live: %s", err);
    sb_free(&prefix);
    if (enter_terminal() != 0) return error(EXIT_FAILED, "live: cannot set up the terminal: %s", strerror(errno));
    int saved_err = dup(STDERR_FILENO);
    FILE *errs = freopen(errpath, "w+", stderr);
    int redraw = 1, rc = 0;
    for (;;) {
        if (pid_done && !v->done && pid_done(ctx)) v->done = 1, redraw = 1;
        if (live_file_changed(v)) {          /* a commit, or a problem to say */
            if (refresh_copy(v) == 0) v->status[0] = 0;
            redraw = 1;
        }
        else if (!v->have_copy && !*v->status) refresh_copy(v), redraw = 1;
        else if (live_watched_gone(v)) redraw = 1;     /* killed: no commit says so */
        if (redraw) {
            if (redraw == 2 && write(STDOUT_FILENO, "\033[2J", 4) < 0) break;
            screen_size(v);
            live_frame(v, errs);
            ssize_t w = write(STDOUT_FILENO, v->screen.s, v->screen.len);
            (void)w;
            redraw = 0;
        }
        struct pollfd fds[2] = { { STDIN_FILENO, POLLIN, 0 }, { sig_pipe[0], POLLIN, 0 } };
        if (poll(fds, 2, (int)(interval * 1000)) < 0 && errno != EINTR) break;
        if (fds[1].revents & POLLIN) {
            int r = signals_read();
            if (r > 2) { rc = r; break; }
            if (r) redraw = r;
        }
        if (fds[0].revents & (POLLIN | POLLHUP)) {
            int k = keys_read(v);
            if (k < 0) break;
            if (k) redraw = 1;
        }
    }
    restore_terminal();
    if (saved_err >= 0) dup2(saved_err, STDERR_FILENO), close(saved_err);
    (void)errs;
    return rc;
}

/* ---------------------------------------------------------------- entry */

static void live_free(struct live *v)
{
    live_rows_done(v);
    live_rows_done(v);       /* the current rows became the previous: freed now */
    sb_free(&v->screen);
    sb_free(&v->good);
    free(v->typing);
    free(v->watch);
}

static int live_view(struct common *c, const char *path, double interval, int once, int (*pid_done)(void *ctx), void *ctx,
              const char *const done[2], long pid)
{
    struct live v = { .c = c, .path = path, .follow = 1, .prev_by = -1, .done_note = done[0], .ended_pid = pid,
                      .ended_how = done[1] };
    char err[512];
    const char *tmpdir = getenv("TMPDIR");
    struct strbuf prefix = { 0 };
    sb_printf(&prefix, "%s/mpquery-live-", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int rc = temp_create(prefix.s, &v.copy, err, sizeof err);
    if (!rc) rc = temp_create(prefix.s, &v.next, err, sizeof err);
    sb_free(&prefix);
    if (rc) return error(rc, "live: %s", err);
    c->out.human = 1, c->view.collapse = 1, c->view.no_signatures = 1;
    if (c->view.nfilter) snprintf(v.filter, sizeof v.filter, "%s", c->view.filter[0]);
    if (c->sel.snap_kind == SNAP_SEQ) v.follow = 0, v.seq = c->sel.snap_value;
    else if (c->sel.snap_kind != SNAP_LAST) v.follow = 0, v.fixed_snapshot = 1;
    if (once) {
        screen_size(&v);
        struct stat st;
        if (stat(path, &st) != 0) return error(EXIT_BAD_INPUT, "%s: %s (no snapshot written yet)", path, strerror(errno));
        if (refresh_copy(&v) != 0) return error(EXIT_BAD_INPUT, "%s", v.status);
        live_frame(&v, NULL);
        if (v.load_rc) return live_free(&v), v.load_rc;       /* said on stderr */
        /* the frame without the cursor's moves and the clearing of lines */
        struct strbuf out = { 0 };
        for (const char *s = v.screen.s + 3; *s;) {
            if (!strncmp(s, "\033[K", 3)) { s += 3; continue; }
            if (*s != '\r') sb_putc(&out, *s);
            s++;
        }
        sb_putc(&out, '\n');
        fwrite(out.s, 1, out.len, stdout);
        sb_free(&out);
        live_free(&v);
        return 0;
    }
    if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO))
        return error(EXIT_BAD_INPUT, "live: stdout and stdin must be a terminal (--once prints one frame)");
    rc = run_screen(&v, interval, pid_done, ctx);
    live_free(&v);
    return rc;
}

static int live_main(int argc, char **argv, int (*pid_done)(void *ctx), void *ctx, const char *const done[2], long pid)
{
    struct common c;
    char *interval_s = NULL;
    int once = 0;
    const struct opt opts[] = {
        OPTION_BY("sort by this counter (default memlive; the key c cycles):\n" COUNTER_HELP),
        { .name = "interval", .arg = "S", .str = &interval_s,
          .help = "seconds between looks at the file (default 1)" },
        { .name = "once", .flag = &once, .value = 1,
          .help = "print one frame to stdout and exit (scripts, tests)" },
        OPTIONS_FILTER,
        OPTIONS_SELECT_EACH,
        OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable;\n"
                      "a bare NAME also finds filters/NAME.rules)"),
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "live", .usage = usage, .more = more, .opts = opts,
                                .operands = 1, .missing = "missing DB" };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    if (!c.out.by_given) c.out.by = MEMLIVE;
    double interval = 1;
    if (interval_s) {
        if (mp_parse_duration(interval_s, &interval) || !(interval >= 0.05) || interval > 3600)
            return bad_value("live", "--interval", interval_s, "seconds, 0.05 to 3600, or 500ms, 1m");
    }
    return live_view(&c, argv[optind], interval, once, pid_done, ctx, done, pid);
}

int cmd_live(int argc, char **argv)
{
    const char *const none[2] = { NULL, NULL };
    return live_main(argc, argv, NULL, NULL, none, 0);
}

int live_record(const char *path, int (*pid_done)(void *ctx), void *ctx, const char *done_note, long pid,
                const char *how)
{
    char *argv[] = { "live", (char *)path, NULL };
    const char *const done[2] = { done_note, how };
    optind = 0;
    return live_main(2, argv, pid_done, ctx, done, pid);
}
