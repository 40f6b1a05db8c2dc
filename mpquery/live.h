/* mpquery live (cmd_live.c: the options and the screen's loop, calling
 * down to live_term.c: the terminal; live_keys.c: the keys; live_draw.c:
 * the frames; live_ended.c: how a process ended when the profile does not
 * say; live_file.c: the file and its copy, at the bottom). What a frame
 * shows and what the previous one did. */
#ifndef MPQUERY_LIVE_H
#define MPQUERY_LIVE_H

#include "mpquery.h"
#include "profile.h"
#include "opt_groups.h"
#include "options.h"

#include <stdio.h>
#include <sys/stat.h>

/* What a frame shows and what the previous one did (for the changes). */
struct live {
    struct common *c;
    const char *path;           /* the file the recorder writes */
    const char *copy;           /* its last committed state, read */
    const char *next;           /* the copy being made */
    struct stat seen;           /* the file when it was last copied */
    int have_copy;
    char filter[256];           /* the / filter ("" none) */
    int follow;                 /* show the latest snapshot */
    int fixed_snapshot;         /* --snapshot peak, id:N, label:TEXT: as given, s and S do nothing */
    int64_t seq, max_seq;       /* the snapshot shown (seq), the latest's */
    size_t width, height;
    struct strbuf screen;       /* the frame being made */
    char status[4600];          /* the last problem, or a note */
    /* the previous frame's rows: path → value of prev_by */
    char **prev_key; int64_t *prev_val; size_t nprev; int prev_by;
    char **cur_key; int64_t *cur_val; size_t ncur;
    char *typing;               /* '/' typed so far, or NULL */
    int done;                   /* the program live watches has ended (record --live) */
    int load_rc;                /* the last frame's listing: 0, or its exit code */
    size_t nlines;              /* lines of the frame so far */
    struct strbuf good;         /* the last frame read without a problem, but its help line */
    size_t good_lines;
    int footer;                 /* the help line is being drawn: the last line */
    counter_set counters;       /* those c cycles through: the profile's, but the mappings' */
    const char *done_note;
    long ended_pid;             /* record --live: the program's pid, and how it ended */
    const char *ended_how;      /* (waitpid, in info's words: "killed by SIGKILL"; "" before) */
    struct live_watch { long pid; double start; } *watch;   /* the last frame's processes of this host */
    size_t nwatch, watch_cap;                               /* without an ending, running then */
};

/* The frame into v->screen: the copy's listing, or what keeps it from
 * being one; errors of the readers go to errs (a file, said on the help
 * line; NULL: stderr). */
void live_frame(struct live *v, FILE *errs);
/* The rows drawn become the previous frame's. */
void live_rows_done(struct live *v);
/* live_file.c: 1 when the file changed since its last copy (a recorder
 * committed); the copy brought up to date: 0, or -1 with v->status set. */
int live_file_changed(const struct live *v);
int live_refresh_copy(struct live *v);
/* live_term.c: the terminal raw, on the alternate screen, the signals
 * caught into a pipe (live_signal_fd: poll it); 0 or -1 (errno). Restored
 * by live_restore_terminal (at exit too). */
int live_enter_terminal(void);
void live_restore_terminal(void);
int live_signal_fd(void);
/* The signals caught since the last call: 128 + N for SIGINT, SIGTERM or
 * SIGHUP (N), 2 for SIGWINCH, else 0. */
int live_signals_read(void);
/* v->width, v->height: the terminal's now; off a terminal (--once) COLUMNS
 * and LINES, else 80 x 24. */
void live_screen_size(struct live *v);
/* live_keys.c: the keys typed on stdin: -1 to quit (q, or the end of
 * stdin), 1 to draw again, else 0. */
int live_keys_read(struct live *v);
/* How the process ended when its profile does not say (ended ""): as
 * record saw it (v->ended_pid, v->ended_how), else "killed (...)" when no
 * process of its pid, host and start runs any more; NULL: it runs (then
 * watched: live_watched_gone), or that cannot be told (another host). The
 * watch list is emptied when a frame starts (v->nwatch = 0). */
const char *live_process_ended(struct live *v, const struct process *pr);
/* 1 when a process the last frame showed running (without an ending, of
 * this host) is gone since: the frame must be drawn again. */
int live_watched_gone(const struct live *v);

#endif
