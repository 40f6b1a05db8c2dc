/* Temporary files mpquery makes (the merge of several files a command
 * reads; every -o output until it is complete): removed when mpquery
 * exits (atexit), and when a signal that ends it arrives (the handler
 * removes them, then dies of the signal as before). An output file (-o
 * of flame, diff --flame, report, timeline, export and merge) is written
 * to a temporary file in its directory, renamed over it once complete and
 * on disk: a failed run leaves the old file, or none, never a part. */
#include "mpquery.h"
#include "counters.h"
#include "options.h"
#include "output.h"
#include "tempfile.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The paths are fixed buffers: the handler only reads them. */
#define MAX_TEMPS 8
static char temps[MAX_TEMPS][4096];
static volatile sig_atomic_t ntemps;

static void remove_temps(void)
{
    for (int i = 0; i < ntemps; i++)
        if (temps[i][0]) unlink(temps[i]);
}

static void die_of(int sig)
{
    remove_temps();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void remove_at_exit(void)
{
    static const int fatal[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGXFSZ };
    static int done;
    if (done) return;
    done = 1;
    atexit(remove_temps);
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) {
        struct sigaction old, sa = { .sa_handler = die_of };
        if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) sigaction(fatal[i], &sa, NULL);
    }
}

int temp_create(const char *prefix, const char **path, char *err, size_t errlen)
{
    remove_at_exit();
    if (ntemps == MAX_TEMPS || snprintf(temps[ntemps], sizeof temps[0], "%sXXXXXX", prefix) >= (int)sizeof temps[0]) {
        snprintf(err, errlen, "%s: cannot create a temporary file (name too long)", prefix);
        return EXIT_FAILED;
    }
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);     /* created and listed, or neither */
    int fd = mkstemp(temps[ntemps]);
    if (fd >= 0) *path = temps[ntemps++];
    int saved = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        snprintf(err, errlen, "%sXXXXXX: cannot create (%s)", prefix, strerror(saved));
        errno = saved;
        return EXIT_BAD_INPUT;
    }
    close(fd);
    return 0;
}

void temp_forget(const char *path, int remove)
{
    for (int i = 0; i < ntemps; i++)
        if (temps[i] == path) {
            if (remove) unlink(temps[i]);
            temps[i][0] = 0;
        }
}

/* ---------------------------------------------------------------- output files */
int output_is(const char *out, const char *input)
{
    struct stat o, in;
    return out && input && stat(out, &o) == 0 && stat(input, &in) == 0 && in.st_dev == o.st_dev
           && in.st_ino == o.st_ino;
}

/* The permissions a new file gets (a temporary file has 0600). */
static mode_t new_file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* On disk before it replaces the old file: a crash after the rename then
 * finds the whole new file, never a truncated one in place of the old. */
static int sync_path(const char *path)
{
    int fd = open(path, O_RDONLY), rc = fd < 0 ? -1 : fsync(fd);
    if (fd >= 0) close(fd);
    return rc;
}

/* The rename itself on disk: its directory synced. */
static int sync_dir(const char *path)
{
    char *dir = xstrdup(path), *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = 0;
    int rc = sync_path(slash ? dir : ".");
    free(dir);
    return rc;
}

/* The stream's writes: to o->fd, the first error's errno kept (stdio's
 * own error flag keeps no reason, and errno changes after). */
static ssize_t out_write(void *cookie, const char *buf, size_t n)
{
    struct outfile *o = cookie;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(o->fd, buf + done, n - done);
        if (w > 0) { done += (size_t)w; continue; }
        if (w < 0 && errno == EINTR) continue;
        if (!o->err) o->err = w < 0 ? errno : EIO;
        return -1;
    }
    return (ssize_t)n;
}

/* o->f on o->fd (the file opened for writing), 0 or 1 reported. */
static int out_stream(struct outfile *o)
{
    static const cookie_io_functions_t io = { .write = out_write };
    if (o->fd < 0) return error(EXIT_FAILED, "%s: %s", o->path, strerror(errno));
    if (!(o->f = fopencookie(o, "w", io))) {
        int rc = error(EXIT_FAILED, "%s: %s", o->path, strerror(errno));
        close(o->fd);
        o->fd = -1;
        return rc;
    }
    setvbuf(o->f, NULL, _IOFBF, 1 << 20);      /* files of hundreds of MB */
    return 0;
}

/* output_open's end when it fails: o holds nothing (rc reported). */
static int open_failed(struct outfile *o, int rc)
{
    free(o->target);
    o->target = NULL;
    return rc;
}

int output_open(struct outfile *o, const char *path, int how)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->path = path;
    o->how = how;
    if (!path) {
        o->f = stdout;
        return 0;
    }
    /* a symbolic link stays one: the file it names is replaced */
    struct stat st;
    char *real = lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? realpath(path, NULL) : NULL;
    o->target = real ? real : xstrdup(path);
    o->mode = new_file_mode();
    if (stat(o->target, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return open_failed(o, error(EXIT_BAD_INPUT, "%s: is a directory", path));
        if (!S_ISREG(st.st_mode)) {
            if (how == OUTPUT_DB) return open_failed(o, error(EXIT_BAD_INPUT, "%s: not a regular file", path));
            /* /dev/stdout, a pipe, a terminal: written as it is */
            o->fd = open(o->target, O_WRONLY | O_TRUNC | O_CLOEXEC);
            int rc = out_stream(o);
            return rc ? open_failed(o, rc) : 0;
        }
        o->mode = st.st_mode & 07777;
    } else if (errno != ENOENT) {
        return open_failed(o, error(EXIT_BAD_INPUT, "%s: %s", path, strerror(errno)));
    }
    char err[4400];
    struct strbuf prefix = { 0 };
    sb_printf(&prefix, "%s.tmp-", o->target);
    int rc = temp_create(prefix.s, &o->tmp, err, sizeof err);
    int saved = errno;
    sb_free(&prefix);
    if (rc)
        return open_failed(o, rc == EXIT_BAD_INPUT ? error(EXIT_FAILED, "%s: %s", path, strerror(saved))
                                                   : error(rc, "%s", err));
    if (how == OUTPUT_FILE) {
        o->fd = open(o->tmp, O_WRONLY | O_TRUNC | O_CLOEXEC);
        if ((rc = out_stream(o))) {
            temp_forget(o->tmp, 1);
            o->tmp = NULL;
            return open_failed(o, rc);
        }
    }
    return 0;
}

void output_what(struct outfile *o, int64_t count, const char *noun)
{
    char digits[32], *w = o->what;
    int n = snprintf(digits, sizeof digits, "%lld", (long long)count);
    for (int i = 0; i < n; i++) {
        *w++ = digits[i];
        if (digits[i] != '-' && i < n - 1 && (n - 1 - i) % 3 == 0) *w++ = ',';
    }
    snprintf(w, sizeof o->what - (size_t)(w - o->what), " %s", noun);
}

/* "mpquery: wrote PATH (WHAT, SIZE)" on stderr, for a file made or
 * replaced (not a pipe or device written as it is); status_line: not
 * with -q. */
static void say_wrote(const struct outfile *o)
{
    struct stat st;
    if (o->how != OUTPUT_FILE || !o->tmp || stat(o->target, &st) != 0) return;
    char size[32];
    fmt_human(MEMTOT, (int64_t)st.st_size, size, sizeof size);
    status_line("wrote %s (%s%s%s)", o->path, o->what, *o->what ? ", " : "", size);
}

int output_close(struct outfile *o, int rc)
{
    if (!o->path) return rc;                        /* stdout: main checks it */
    if (o->f) {
        int bad = fflush(o->f) != 0 || ferror(o->f);
        fclose(o->f);
        o->f = NULL;
        if (!bad && !rc && o->tmp && fsync(o->fd) != 0) bad = 1, o->err = errno;
        if (close(o->fd) != 0 && !bad) bad = 1, o->err = errno;
        if (bad && !rc) rc = error(EXIT_FAILED, "%s: write error: %s", o->path, strerror(o->err ? o->err : EIO));
    } else if (o->tmp && !rc && sync_path(o->tmp) != 0) {
        rc = error(EXIT_FAILED, "%s: write error: %s", o->path, strerror(errno));
    }
    if (o->tmp && !rc && (chmod(o->tmp, o->mode) != 0 || rename(o->tmp, o->target) != 0 || sync_dir(o->target) != 0))
        rc = error(EXIT_FAILED, "%s: cannot replace it (%s)", o->path, strerror(errno));
    if (o->tmp) temp_forget(o->tmp, rc != 0);
    if (!rc) say_wrote(o);
    o->tmp = NULL;
    free(o->target);
    o->target = NULL;
    return rc;
}

/* ", NAME (PATTERN, PATTERN)" per format of kinds, in their order. */
static void kinds_list(const struct output_kind *kinds, struct strbuf *sb)
{
    for (size_t i = 0; kinds[i].pattern; i++) {
        size_t first = 0;
        while (kinds[first].format != kinds[i].format) first++;
        if (first != i) continue;                   /* listed with its first pattern */
        sb_printf(sb, "%s%s (", i ? ", " : "", kinds[i].name);
        for (size_t k = i; kinds[k].pattern; k++)
            if (kinds[k].format == kinds[i].format) sb_printf(sb, "%s%s", k > i ? ", " : "", kinds[k].pattern);
        sb_putc(sb, ')');
    }
}

int output_kind(const char *cmd, const char *path, const struct output_kind *kinds, int no_ext)
{
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    for (size_t i = 0; kinds[i].pattern; i++)
        if (fnmatch(kinds[i].pattern, name, FNM_CASEFOLD) == 0) return kinds[i].format;     /* x.SVG too */
    if (!strchr(name, '.') && no_ext >= 0) return no_ext;
    struct strbuf sb = { 0 };
    kinds_list(kinds, &sb);
    usage_error(cmd, "-o %s: %s writes %s", path, cmd, sb.s);
    sb_free(&sb);
    return -1;
}
