/* mpquery merge -o OUT A.db B.db ...: one database holding every run of
 * the inputs (merge.c). It is written to a temporary file next to OUT and
 * renamed over OUT once complete: OUT may be one of the inputs, and an
 * error leaves OUT as it was (and no temporary file). */
#include "mpquery.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery merge -o OUT.db A.db B.db ...\n"
"\n"
"One profile holding every run of the inputs, which answers every query as\n"
"the inputs given together do (mpquery top A.db B.db ...). Modules,\n"
"functions, files, frames and stacks are shared by content (path and\n"
"build-id, names), not by id; runs stay apart by their token (MP_RUN). A\n"
"run found in several inputs is stored once, and so is a process (run,\n"
"pid, start time): the copy with the most snapshots. Runs are numbered by\n"
"start time, so the latest run is the latest started. OUT may be one of\n"
"the inputs: it is replaced once the merge is complete.\n"
"\n";

static const char more[] =
"\n"
"It says what it wrote on stderr: 'merged N files into OUT: R runs (D\n"
"already there), P processes, S stacks, X sample rows in T s', where D\n"
"counts the runs found in more than one input.\n"
"\n"
"examples:\n"
"  mpquery merge -o nightly.db build-*.db\n"
"  mpquery merge -o nightly.db nightly.db today.db     (add a profile)\n";

static char *out;

static const struct opt opts[] = {
    { .name = "output", .letter = 'o', .arg = "OUT", .str = &out, .help = "the database to write (required)" },
    { 0 },
};

/* OUT is a file to replace, or nothing yet. */
static int check_out(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return errno == ENOENT ? 0 : error(EXIT_BAD_INPUT, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) return error(EXIT_BAD_INPUT, "%s: is a directory", path);
    if (!S_ISREG(st.st_mode)) return error(EXIT_BAD_INPUT, "%s: not a regular file", path);
    return 0;
}

/* The permissions a new file gets (the temporary file has 0600). */
static mode_t new_file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* On disk before it replaces OUT (the build wrote with synchronous=OFF):
 * a crash after the rename then finds the whole new file, never a
 * truncated one in place of the old. */
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

int cmd_merge(int argc, char **argv)
{
    struct common c;
    const struct cmd_opts d = { .cmd = "merge", .usage = usage, .more = more, .opts = opts,
                                .missing = "missing the databases to merge" };
    out = NULL;
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    if (!out) return usage_error(c.cmd, "missing -o OUT");
    if ((rc = check_out(out))) return rc;
    double start = monotonic_seconds();
    char err[4400];
    const char *tmp;
    struct strbuf prefix = { 0 };
    sb_printf(&prefix, "%s.tmp-", out);
    rc = temp_create(prefix.s, &tmp, err, sizeof err);
    sb_free(&prefix);
    if (rc) return error(rc, "%s", err);
    struct merge_stats st;
    size_t n = (size_t)(argc - optind);
    if ((rc = merge_build(argv + optind, n, tmp, 1, &st, err, sizeof err))) {
        temp_forget(tmp, 1);
        return error(rc, "%s", err);
    }
    merge_stats_free(&st);
    if (chmod(tmp, new_file_mode()) != 0 || sync_path(tmp) != 0 || rename(tmp, out) != 0 || sync_dir(out) != 0) {
        rc = error(EXIT_FAILED, "%s: cannot replace it (%s)", out, strerror(errno));
        temp_forget(tmp, 1);
        return rc;
    }
    temp_forget(tmp, 0);
    fprintf(stderr, "mpquery: merged %zu file%s into %s: %lld run%s (%lld already there), %lld process%s, "
            "%lld stacks, %lld sample rows in %.2f s\n", n, n == 1 ? "" : "s", out, (long long)st.runs,
            st.runs == 1 ? "" : "s", (long long)st.runs_shared, (long long)st.processes,
            st.processes == 1 ? "" : "es", (long long)st.stacks, (long long)st.samples, monotonic_seconds() - start);
    return 0;
}
