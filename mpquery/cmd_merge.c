/* mpquery merge -o OUT A.db B.db ...: one database holding every run of
 * the inputs (merge.c). It is written to a temporary file next to OUT and
 * renamed over OUT once complete (tempfile.c's output_open): OUT may be
 * one of the inputs, and an error leaves OUT as it was (and no temporary
 * file). */
#include "mpquery.h"
#include "commands.h"
#include "merge.h"
#include "opt_groups.h"
#include "options.h"
#include "tempfile.h"

#include <unistd.h>      /* optind */

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
    OPTION_QUIET("no line saying what it wrote"),
    { 0 },
};

int cmd_merge(int argc, char **argv)
{
    struct common c;
    const struct cmd_opts d = { .cmd = "merge", .usage = usage, .more = more, .opts = opts,
                                .missing = "missing the databases to merge" };
    out = NULL;
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    if (!out) return usage_error(c.cmd, "missing -o OUT");
    double start = monotonic_seconds();
    char err[4400];
    struct outfile o;
    if ((rc = output_open(&o, out, OUTPUT_DB))) return rc;
    struct merge_stats st = { 0 };
    size_t n = (size_t)(argc - optind);
    if ((rc = merge_build(argv + optind, n, o.tmp, 1, &st, err, sizeof err))) error(rc, "%s", err);
    else merge_stats_free(&st);
    if ((rc = output_close(&o, rc))) return rc;
    status_line("merged %zu file%s into %s: %lld run%s (%lld already there), %lld process%s, "
            "%lld stacks, %lld sample rows in %.2f s", n, n == 1 ? "" : "s", out, (long long)st.runs,
            st.runs == 1 ? "" : "s", (long long)st.runs_shared, (long long)st.processes,
            st.processes == 1 ? "" : "es", (long long)st.stacks, (long long)st.samples, monotonic_seconds() - start);
    return 0;
}
