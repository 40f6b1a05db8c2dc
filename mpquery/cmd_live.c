/* mpquery live: a full-screen view of a profile that a recorder is still
 * writing, redrawn when the file changes (looked at every --interval
 * seconds) or a key is pressed: memory over time (timeline.c's points),
 * the largest stacks by a counter (top's rows: listing.c, the same rules
 * and units) with their change since the previous frame, and the process
 * tree. This file has the options and the screen's loop; below it the
 * terminal (live_term.c: plain ANSI, raw mode, restored at exit and on
 * SIGINT, SIGTERM and SIGHUP; SIGWINCH redraws), the keys (live_keys.c),
 * the frames (live_draw.c) and the file's copy (live_file.c).
 *
 * The writer is never made to wait on us for more than a copy of the file:
 * the recorder keeps SQLite's rollback journal (no -wal/-shm files, any
 * file system, a copied .db always complete), so a reader holding its
 * shared lock would hold the recorder's COMMIT back for as long as it
 * reads. live takes the lock only to copy the file (profile_copy_committed:
 * milliseconds for megabytes; the recorder's busy timeout is 300 s) and
 * reads the copy at leisure (live_file.c). */
#include "optdefs.h"
#include "mpquery.h"
#include "counters.h"
#include "commands.h"
#include "listing.h"
#include "load.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "procs.h"
#include "select.h"
#include "tempfile.h"
#include "live.h"
#include "timeline.h"
#include "view.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
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
    if (live_enter_terminal() != 0) return error(EXIT_FAILED, "live: cannot set up the terminal: %s", strerror(errno));
    int saved_err = dup(STDERR_FILENO);
    FILE *errs = freopen(errpath, "w+", stderr);
    int redraw = 1, rc = 0;
    for (;;) {
        if (pid_done && !v->done && pid_done(ctx)) v->done = 1, redraw = 1;
        if (live_file_changed(v)) {          /* a commit, or a problem to say */
            if (live_refresh_copy(v) == 0) v->status[0] = 0;
            redraw = 1;
        }
        else if (!v->have_copy && !*v->status) live_refresh_copy(v), redraw = 1;
        else if (live_watched_gone(v)) redraw = 1;     /* killed: no commit says so */
        if (redraw) {
            if (redraw == 2 && write(STDOUT_FILENO, "\033[2J", 4) < 0) break;
            live_screen_size(v);
            live_frame(v, errs);
            ssize_t w = write(STDOUT_FILENO, v->screen.s, v->screen.len);
            (void)w;
            redraw = 0;
        }
        struct pollfd fds[2] = { { STDIN_FILENO, POLLIN, 0 }, { live_signal_fd(), POLLIN, 0 } };
        if (poll(fds, 2, (int)(interval * 1000)) < 0 && errno != EINTR) break;
        if (fds[1].revents & POLLIN) {
            int r = live_signals_read();
            if (r > 2) { rc = r; break; }
            if (r) redraw = r;
        }
        if (fds[0].revents & (POLLIN | POLLHUP)) {
            int k = live_keys_read(v);
            if (k < 0) break;
            if (k) redraw = 1;
        }
    }
    live_restore_terminal();
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
        live_screen_size(&v);
        struct stat st;
        if (stat(path, &st) != 0) return error(EXIT_BAD_INPUT, "%s: %s (no snapshot written yet)", path, strerror(errno));
        if (live_refresh_copy(&v) != 0) return error(EXIT_BAD_INPUT, "%s", v.status);
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
        OPTION_NATIVE("Python stacks with every native frame (default: Python\nfirst, as mpquery top --help-all says)"),
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
