/* push --follow (follow.h): the agent. It watches directories (every
 * profile in them, new ones included) and files with inotify, a change
 * read DEBOUNCE after it comes, and rescans them every SCAN seconds as
 * the safety net (a lost event, a full event queue, a process that died
 * without a word); follow_ship.c stores each file's new snapshots. While
 * the server fails it waits, retrying with a backoff that doubles up to
 * BACKOFF_MAX, says so once and says when it is back; nothing runs
 * between events (poll), so an idle agent takes no CPU. SIGINT and
 * SIGTERM end it between two requests. */
#include "follow.h"
#include "http_internal.h"
#include "tempfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEBOUNCE 0.05
#define SCAN 5.0
#define BACKOFF_FIRST 0.25
#define BACKOFF_MAX 10.0

/* A followed path: a directory (name NULL: each file in it) or one file. */
struct root { char *dir, *name; int wd; };

struct follower {
    struct agent a;
    struct root *roots; size_t nroots;
    struct ffile **files; size_t nfiles, cap;
    int ifd, sig[2];                    /* inotify; the signals' pipe */
    int up, said;                       /* the server answers; its failure was said */
    double down_since, retry_at, backoff;
    double ttl_due;                     /* --ttl: when to drop the expired runs next */
};

static int sig_fd = -1;
static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    int e = errno;
    char b = (char)sig;
    stopping = 1;
    ssize_t w = write(sig_fd, &b, 1);
    (void)w;
    errno = e;
}

/* ---------------------------------------------------------------- the files */
/* Names in a directory that are not profiles: SQLite's journals, hidden
 * and temporary files. */
static int skipped_name(const char *name)
{
    static const char *const ends[] = { "-journal", "-wal", "-shm", ".tmp", ".new", ".check" };
    size_t n = strlen(name);
    if (name[0] == '.') return 1;
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
        size_t e = strlen(ends[i]);
        if (n >= e && !strcmp(name + n - e, ends[i])) return 1;
    }
    return 0;
}

static struct ffile *file_of(struct follower *F, const char *path, int add)
{
    for (size_t i = 0; i < F->nfiles; i++)
        if (!strcmp(F->files[i]->path, path)) return F->files[i];
    if (!add) return NULL;
    struct ffile *f = xcalloc(1, sizeof *f);
    f->path = xstrdup(path);
    f->size = f->mtime_ns = -1;
    idmap_init(&f->stored, 64);
    follow_state_load(&F->a, f);
    F->files = array_grow(F->files, F->nfiles, &F->cap, sizeof *F->files);
    F->files[F->nfiles++] = f;
    return f;
}

static void file_free(struct ffile *f)
{
    free(f->path); free(f->state); free(f->pids);
    idmap_free(&f->stored);
    free(f);
}

/* To read again DEBOUNCE from now (a commit's writes come together). */
static void mark(struct ffile *f, double now)
{
    if (!f->dirty) f->dirty = 1, f->due = now + DEBOUNCE;
}

/* One name an event or a scan found in root r. */
static void found(struct follower *F, const struct root *r, const char *name, size_t len, double now)
{
    char base[4096];
    if (len >= sizeof base) return;
    memcpy(base, name, len);
    base[len] = 0;
    size_t j = strlen("-journal");
    if (len > j && !strcmp(base + len - j, "-journal")) base[len - j] = 0;    /* its commit */
    if (r->name ? strcmp(base, r->name) != 0 : skipped_name(base)) return;
    struct strbuf path = { 0 };
    sb_printf(&path, "%s/%s", r->dir, base);
    struct stat st;
    struct ffile *f = file_of(F, path.s, stat(path.s, &st) == 0 && S_ISREG(st.st_mode));
    if (f) mark(f, now);
    sb_free(&path);
}

/* The safety net: every root listed again, every known file looked at. */
static void rescan(struct follower *F, double now)
{
    for (size_t i = 0; i < F->nroots; i++) {
        const struct root *r = &F->roots[i];
        if (r->name) { found(F, r, r->name, strlen(r->name), now); continue; }
        DIR *d = opendir(r->dir);
        for (struct dirent *e; d && (e = readdir(d));)
            if (e->d_type == DT_REG || e->d_type == DT_UNKNOWN) found(F, r, e->d_name, strlen(e->d_name), now);
        if (d) closedir(d);
    }
    for (size_t i = 0; i < F->nfiles; i++) {
        struct ffile *f = F->files[i];
        struct stat st;
        if (stat(f->path, &st) == 0) {
            int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
            if ((f->doubt && !f->said) || st.st_size != f->size || mtime != f->mtime_ns || (f->waiting && follow_pid_gone(f))) mark(f, now);
            continue;
        }
        if (!f->finished && f->shipped > 0)
            warning("push: %s: removed before it was stored whole (snapshots up to id %lld stored)", f->path,
                    (long long)f->shipped);
        unlink(f->state);
        file_free(f);
        F->files[i--] = F->files[--F->nfiles];
    }
}

/* ---------------------------------------------------------------- the server */
static void server_failed(struct follower *F, double now)
{
    ch_close(&F->a.c);
    if (F->up || !F->said) F->down_since = now;
    if (!F->said)
        fprintf(stderr, "mpquery: push: %s: retrying (every %g s at most) until it answers\n", F->a.err, BACKOFF_MAX);
    F->said = 1, F->up = 0;
    F->retry_at = now + F->backoff;
    F->backoff = F->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : F->backoff * 2;
}

/* Connects (ch_open: its ping) and makes the schema when missing. */
static void connect_server(struct follower *F, double now)
{
    struct agent *a = &F->a;
    ch_close(&a->c);
    int rc = ch_open(&a->c, a->o->url, a->err, sizeof a->err);
    if (!rc) rc = ch_create_schema(&a->c, a->err, sizeof a->err);
    if (rc) {
        server_failed(F, now);
        return;
    }
    if (F->said) fprintf(stderr, "mpquery: push: %s: answers again (down %.1f s): catching up\n", a->c.url,
                         now - F->down_since);
    F->up = 1, F->said = 0, F->backoff = BACKOFF_FIRST;
}

/* --ttl: the runs started more than ttl_days days ago dropped, at the
 * first connection and then every hour; a failure said, tried again in an
 * hour (the server's: its backoff). */
static void expire(struct follower *F, double now)
{
    struct agent *a = &F->a;
    long runs;
    F->ttl_due = now + 3600;
    int rc = ch_drop_expired(&a->c, a->o->ttl_days, &runs, a->err, sizeof a->err);
    if (rc && a->c.status == 0) server_failed(F, now);
    else if (rc) fprintf(stderr, "mpquery: push: %s\n", a->err);
    else if (runs && !a->o->quiet)
        fprintf(stderr, "mpquery: push: --ttl %ldd: dropped %ld runs\n", a->o->ttl_days, runs);
}

/* Each file due: its new snapshots stored. */
static void ship_due(struct follower *F, double now)
{
    struct agent *a = &F->a;
    int rc = 0;
    follow_round_begin(a);
    for (size_t i = 0; i < F->nfiles && F->up && !stopping && rc != EXIT_FAILED; i++) {
        struct ffile *f = F->files[i];
        if (!f->dirty || f->due > now) continue;
        f->dirty = 0;
        rc = follow_ship(a, f);
        if (rc == FOLLOW_MORE) mark(f, now), f->due = now;
        if (rc == EXIT_FAILED) mark(f, now);
        else if (follow_round_full(a)) rc = follow_round_end(a, 1), follow_round_begin(a);
    }
    /* a request that failed: the round's files are in doubt too */
    if (follow_round_end(a, rc != EXIT_FAILED) || rc == EXIT_FAILED) server_failed(F, monotonic_seconds());
}

/* ---------------------------------------------------------------- waiting */
static void read_events(struct follower *F, double now)
{
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(F->ifd, buf, sizeof buf)) > 0) {
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *e = (const struct inotify_event *)p;
            p += sizeof *e + e->len;
            if (e->mask & IN_Q_OVERFLOW) { rescan(F, now); continue; }
            for (size_t i = 0; i < F->nroots && e->len; i++)
                if (F->roots[i].wd == e->wd) found(F, &F->roots[i], e->name, strlen(e->name), now);
        }
    }
}

/* Sleeps until an event, a signal, a file due, a retry or the next scan. */
static void wait_for(struct follower *F, double next_scan)
{
    double now = monotonic_seconds(), until = next_scan;
    if (!F->up && F->retry_at < until) until = F->retry_at;
    for (size_t i = 0; i < F->nfiles && F->up; i++)
        if (F->files[i]->dirty && F->files[i]->due < until) until = F->files[i]->due;
    int ms = until <= now ? 0 : (int)((until - now) * 1000) + 1;
    struct pollfd pf[2] = { { .fd = F->ifd, .events = POLLIN }, { .fd = F->sig[0], .events = POLLIN } };
    if (poll(pf, 2, ms) > 0 && (pf[0].revents & POLLIN)) read_events(F, monotonic_seconds());
}

/* ---------------------------------------------------------------- setup */
/* The roots, watched; 0, or EXIT_BAD_INPUT (said). */
static int add_roots(struct follower *F)
{
    const struct follow_opts *o = F->a.o;
    F->roots = xcalloc((size_t)o->npaths, sizeof *F->roots);
    for (int i = 0; i < o->npaths; i++) {
        const char *path = o->paths[i];
        struct stat st;
        if (stat(path, &st) != 0) return error(EXIT_BAD_INPUT, "push: --follow %s: %s", path, strerror(errno));
        struct root *r = &F->roots[F->nroots++];
        if (S_ISDIR(st.st_mode)) {
            r->dir = xstrdup(path);
        } else if (S_ISREG(st.st_mode)) {
            const char *slash = strrchr(path, '/');
            r->dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
            r->name = xstrdup(slash ? slash + 1 : path);
        } else {
            return error(EXIT_BAD_INPUT, "push: --follow %s: not a directory or a regular file", path);
        }
        r->wd = inotify_add_watch(F->ifd, r->dir, IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO | IN_DELETE |
                                  IN_MOVED_FROM);
        if (r->wd < 0) warning("push: --follow %s: cannot watch it (%s): read every %g s", r->dir, strerror(errno), SCAN);
    }
    return 0;
}

/* The state directory, made when missing (its parents too); 0 or
 * EXIT_BAD_INPUT (said). */
static int state_dir(const char *dir)
{
    char *d = xstrdup(dir);
    int e = 0;
    for (char *s = d + 1; !e && (s = strchr(s, '/')); *s++ = '/') {
        *s = 0;
        if (mkdir(d, 0700) != 0 && errno != EEXIST) e = errno;
    }
    if (!e && mkdir(d, 0700) != 0 && errno != EEXIST) e = errno;
    free(d);
    if (e) return error(EXIT_BAD_INPUT, "push: --state %s: cannot make it (%s)", dir, strerror(e));
    if (access(dir, W_OK | X_OK) != 0)
        return error(EXIT_BAD_INPUT, "push: --state %s: cannot write there (%s)", dir, strerror(errno));
    return 0;
}

static int setup(struct follower *F)
{
    struct agent *a = &F->a;
    int rc = ch_settings(&a->c, a->o->url, a->err, sizeof a->err);     /* a bad URL: said now */
    if (rc) return error(rc, "%s", a->err);
    if ((rc = state_dir(a->o->state_dir))) return rc;
    F->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (F->ifd < 0) return error(EXIT_FAILED, "push: inotify: %s", strerror(errno));
    if ((rc = add_roots(F))) return rc;
    const char *tmpdir = getenv("TMPDIR");
    struct strbuf prefix = { 0 };
    sb_printf(&prefix, "%s/mpquery-follow-", tmpdir && *tmpdir ? tmpdir : "/tmp");
    rc = temp_create(prefix.s, &a->copy, a->err, sizeof a->err);
    sb_free(&prefix);
    if (rc) return error(rc, "push: %s", a->err);
    if (pipe2(F->sig, O_NONBLOCK | O_CLOEXEC) != 0) return error(EXIT_FAILED, "push: pipe: %s", strerror(errno));
    sig_fd = F->sig[1];
    struct sigaction sa = { .sa_handler = on_signal }, ign = { .sa_handler = SIG_IGN };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGPIPE, &ign, NULL);
    return 0;
}

int push_follow(const struct follow_opts *o)
{
    struct follower F = { .a = { .o = o }, .ifd = -1, .sig = { -1, -1 }, .backoff = BACKOFF_FIRST };
    int rc = setup(&F);
    double next_scan = 0, start = monotonic_seconds();
    while (!rc && !stopping) {
        double now = monotonic_seconds();
        if (now >= next_scan) rescan(&F, now), next_scan = now + SCAN;
        if (!F.up && now >= F.retry_at) connect_server(&F, now);
        if (F.up && o->ttl_days && now >= F.ttl_due) expire(&F, now);
        if (F.up) ship_due(&F, monotonic_seconds());
        if (!stopping) wait_for(&F, next_scan);
    }
    if (!rc && !o->quiet)
        fprintf(stderr, "mpquery: push: stopped: %llu snapshots (%llu rows) stored in %.1f s, %zu files followed\n",
                (unsigned long long)F.a.snapshots, (unsigned long long)F.a.rows, monotonic_seconds() - start,
                F.nfiles);
    for (size_t i = 0; i < F.nfiles; i++) file_free(F.files[i]);
    for (size_t i = 0; i < F.nroots; i++) free(F.roots[i].dir), free(F.roots[i].name);
    free(F.files);
    free(F.roots);
    free(F.a.pend);
    ch_close(&F.a.c);
    if (F.ifd >= 0) close(F.ifd);
    if (F.sig[0] >= 0) close(F.sig[0]), close(F.sig[1]);
    return rc;
}
