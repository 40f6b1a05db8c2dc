/* mpquery info: what a profile holds. Runs (when more than one), the
 * processes of the selected run as a tree (a node a pid: its images, one
 * a program exec ran; under the pid of its ppid), their threads and
 * snapshots, exact totals (from the totals table, which includes
 * allocations recorded without a stack), dictionary sizes, settings and the
 * profiler's own memory. Totals of a process or thread at a snapshot are
 * its totals row with the largest snapshot id <= the selected one. */
#include "info.h"
#include "load.h"
#include "mpquery.h"
#include "profile.h"
#include "optdefs.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery info DB... [options]\n"
"       mpquery info --server URL [--where SQL] [options]\n"
"\n"
"Runs, processes (as a tree), threads, snapshots, exact totals (ncalls,\n"
"memtot, nfree, nlive = ncalls - nfree, memlive, maxlive = peak live bytes,\n"
"allocations without a stack, frees of unknown blocks), stack and frame\n"
"counts, settings and the profiler's own memory.\n"
"\n"
"The process tree has a line a pid, under its parent: its role (its name\n"
"as started, argv[0]'s file name, as the command line in the table begins;\n"
"without one, the executable's), the programs it exec'd after an arrow\n"
"each, and how its last program ended:\n"
"  2301 bash → env → python3.11: exited with status 3\n"
"\n";

static const char more[] =
"\n"
"Totals summed over processes add their peaks: maxlive is then an upper\n"
"bound of the peak of the whole run.\n"
"\n"
"JSON: \"processes\" has an entry a process image (exec starts a new one),\n"
"in tree order, with its \"role\" and \"ended\" (as the database has it:\n"
"\"return 0\", \"exit 3\", \"_exit 0\", \"signal SIGTERM\", \"exec\", \"\" when\n"
"no final snapshot). \"tree\" is flat, an entry a pid in depth-first\n"
"order (a parent before its children; depth 0 for a root): pid, ppid,\n"
"depth, roles and process_ids (its images, in exec order) and its last\n"
"image's ended.\n"
"\n"
"Text: sizes in units (1.21 MiB; --bytes: bytes). Each process has a section\n"
"(its settings, threads and snapshots) for the first 5 processes of the tree,\n"
"the others with --pid PID or --all; a table of more than 10 threads or\n"
"snapshots shows its first and last rows and the selected snapshot, the\n"
"others as '… K more' (--all: every row).\n"
"\n"
"example:\n"
"  mpquery info app.db --format json\n";

static int all;

static const struct opt opts[] = {
    { .name = "all", .flag = &all, .value = 1,
      .help = "text: every process's section and every row of its tables" },
    OPTION_RUN(HELP_RUN),
    OPTION_PID(HELP_PID), OPTION_IMAGE(HELP_IMAGE), OPTION_EXE(HELP_EXE),
    OPTION_SNAPSHOT("last (default), N, id:N or label:TEXT (see top --help)"),
    OPTION_FORMAT("text (default), csv (one row a process) or json"),
    { OPTG_VIEW, .name = "lines", .id = OPT_LINES, .advanced = 1,
      .help = "accepted as by every listing command (info shows no frames)" },
    OPTIONS_READABLE,
    OPTIONS_SERVER_STORE,
    OPTIONS_SINCE_EITHER("the totals"),
    { 0 }
};

static const struct cmd_opts info_opts = {
    .cmd = "info", .usage = usage, .more = more, .opts = opts,
    .missing = "missing DB", .readable = 1, .since_runs = 1
};


int cmd_info(int argc, char **argv)
{
    struct common c;
    all = 0;
    int rc = parse_options(&c, &info_opts, argc, argv);
    if (rc != PARSE_OK) return rc;
    struct profile *p;
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    if ((rc = load_selected(&c, &files, -1, select_wants_peak(&c.sel), &p))) return rc;
    struct selection sel;
    c.sel.keep_rows = 1;                /* the mappings' counters per process (pick_totals) */
    if ((rc = select_or_report(&c, p, &sel))) { selection_free(&sel); profile_free(p); return rc; }
    struct info in = { .p = p, .sel = &sel, .human = c.out.human, .all = all, .since = c.sel.since,
                       .until = c.sel.until };
    info_gather(&in);
    if (c.out.format == FMT_JSON) info_print_json(&in);
    else if (c.out.format == FMT_CSV) info_print_processes(&in, FMT_CSV);
    else info_print_text(&in);
    info_free(&in);
    selection_free(&sel);
    profile_free(p);
    return 0;
}
