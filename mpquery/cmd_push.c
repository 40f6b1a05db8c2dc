/* mpquery push URL DB...: stores the runs of profile databases in
 * ClickHouse (schema/clickhouse.sql; the rows are chstore.c's). A run is
 * stored once per token: the server is asked which runs of a file it has
 * before they are built, and a token met twice in one push goes once.
 * Runs are committed in batches (their mp_run rows after all their other
 * rows), and reported when committed: a line reported is a run stored. */
#include "chstore.h"
#include "follow.h"
#include "hists.h"
#include "opt_groups.h"
#include "options.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A table's rows go when its buffer holds CHUNK bytes; the runs built are
 * committed once BATCH bytes or BATCH_RUNS runs are waiting (measured:
 * docs/performance.md, "ClickHouse"). */
enum { CHUNK = 8 << 20, BATCH = 64 << 20, BATCH_RUNS = 1000 };

static const char usage[] =
"usage: mpquery push URL DB... [-q] [--dry-run]\n"
"       mpquery push --follow DIR|FILE... --server URL [--state DIR] [--remove-shipped]\n"
"\n"
"Stores the runs of profile databases in a ClickHouse server, for\n"
"mpquery top|fold|diff|info --server URL. The tables (schema/clickhouse.sql)\n"
"are created when missing. A run (its MP_RUN token) is stored once: runs the\n"
"server has are skipped (\"already stored\"), so pushing files again stores\n"
"nothing new; a file that holds more of a run than the server (more\n"
"processes, or more snapshots: the final file of a run pushed while it\n"
"went on) replaces it (\"replacing the stored copy\"). Rows go in bulk, a\n"
"few MB an INSERT; a run's mp_run row goes after all its other rows, so a\n"
"push that fails midway stores no part of a run that readers see: push\n"
"again.\n"
"\n"
"URL is ClickHouse's HTTP interface, http://[USER[:PASSWORD]@]HOST[:PORT]/\n"
"(port 8123 by default); its query string goes with every request\n"
"(?database=DB). MPQ_CH_TIMEOUT: the most seconds a request to the server\n"
"takes, its answer included (default 30); MPQ_CH_ANSWER_MAX: the largest\n"
"answer, in bytes (K, M or G; default 2G).\n"
"\n"
"On stderr: a line per run (file, token, processes, rows, or \"already\n"
"stored\") as it is stored, then \"pushed R runs (K already stored) from N\n"
"files: X rows in T s (Y rows/s, Z runs/s)\". A file that is not a profile\n"
"is reported and skipped (exit 2 at the end); a server error stops the push\n"
"(exit 1). The URL may come as --server URL too.\n"
"\n"
"--follow: an agent that watches directories (each profile in them, new ones\n"
"too: MP_OUT=DIR/%e-%p.db) and files, and stores each new snapshot a second\n"
"or so after the recorder commits it, until SIGINT or SIGTERM. A followed\n"
"run is one load (its id made of its token), each row stored once however\n"
"often it is sent: the position in each file is kept in --state DIR (a file\n"
"per profile, replaced atomically), and after a start or a failed request\n"
"the agent asks the store what it has before sending. While the server\n"
"fails it retries (backoff up to 10 s) and says so once, then that it\n"
"answers again. Once a profile is stored whole and its processes ended\n"
"(their last snapshot says how, or their pid is gone), the process ends and\n"
"mp_run's counts are updated (ALTER TABLE UPDATE), and --remove-shipped\n"
"removes the file. docs/mpquery-push.service runs it under systemd.\n"
"\n";

static const char more[] =
"\n"
"examples:\n"
"  mpquery push http://localhost:8123/ nightly/*.db\n"
"  mpquery push 'http://ci:secret@clickhouse:8123/?database=profiles' app.db\n"
"  mpquery push --follow /var/lib/mallocprof --server http://localhost:8123/ --remove-shipped\n"
"  mpquery push --follow /var/lib/mallocprof --server http://localhost:8123/ --ttl 30d\n"
"\n"
"--ttl DAYS: the store's tables are partitioned by the day their runs\n"
"started (UTC); the partitions of the days more than DAYS days back are\n"
"dropped, mp_run's first, so a run goes whole (its snapshots hold only what\n"
"changed: a row-age TTL would leave runs that answer wrongly). A store made\n"
"before version 2 (not partitioned) refuses it.\n";

static int quiet, dry_run;         /* quiet: -q (c.out.quiet) */
static int follow, remove_shipped;
static char *server_url, *state_dir, *ttl_arg;
static long ttl_days;

static const struct opt opts[] = {
    OPTION_QUIET("no line per run (the last line stays)"),
    { .name = "dry-run", .flag = &dry_run, .value = 1,
      .help = "build the rows and report them, write nothing (the\n"
              "server is still asked which runs it has)" },
    { .name = "server", .arg = "URL", .str = &server_url, .help = "the server (instead of the first operand)" },
    { .name = "follow", .flag = &follow, .value = 1,
      .help = "the operands are directories and files to watch: store\n"
              "each new snapshot as it comes, until SIGINT or SIGTERM" },
    { .name = "state", .arg = "DIR", .str = &state_dir,
      .help = "--follow: where the position in each file is kept\n"
              "(default $STATE_DIRECTORY, else ~/.local/state/mpquery-push)" },
    { .name = "remove-shipped", .flag = &remove_shipped, .value = 1,
      .help = "--follow: remove each profile once stored whole and ended" },
    { .name = "ttl", .arg = "DAYS", .str = &ttl_arg,
      .help = "drop the store's runs started more than DAYS days ago (30d),\n"
              "whole, after the push (--follow: at its start, then hourly)" },
    { 0 }
};

static const struct cmd_opts push_opts = {
    .cmd = "push", .usage = usage, .more = more, .opts = opts,
    .missing = "needs a URL and at least one database (--follow: a directory or file)"
};

struct extent { uint32_t processes, snapshots; };

/* A run met: pushed (waiting for its commit) or already stored;
 * replaces: the store had a less complete copy (had: its processes and
 * snapshots). */
struct pending { const char *path; char *token; struct ch_load load; int stored, replaces; struct extent had; };

struct push {
    struct ch c;
    struct ch_writer w;
    struct pending *runs; size_t nruns, cap;   /* since the last commit */
    struct strtab tokens;                       /* every token met in this push */
    uint64_t pushed, stored, rows, files;
    char err[1024];
};

static void report(struct push *x)
{
    for (size_t i = 0; i < x->nruns; i++) {
        struct pending *r = &x->runs[i];
        if (!quiet && r->stored)
            text_printf(stderr, "mpquery: push: %s: %s: already stored", r->path, r->token);
        else if (!quiet && r->replaces)
            text_printf(stderr, "mpquery: push: %s: %s: %u processes, %llu rows%s, replacing the stored copy"
                    " (%u processes, %u snapshots)", r->path, r->token, r->load.processes,
                    (unsigned long long)(r->load.rows + r->load.dict_rows), dry_run ? " (dry run)" : "",
                    r->had.processes, r->had.snapshots);
        else if (!quiet)
            text_printf(stderr, "mpquery: push: %s: %s: %u processes, %llu rows%s", r->path, r->token,
                    r->load.processes, (unsigned long long)(r->load.rows + r->load.dict_rows),
                    dry_run ? " (dry run)" : "");
        if (!quiet) fputc('\n', stderr);     /* the line cleaned: a token is the recorded program's */
        if (r->stored) x->stored++;
        else x->pushed++, x->rows += r->load.rows + r->load.dict_rows;
        free(r->token);
    }
    x->nruns = 0;
}

static int commit(struct push *x)
{
    int rc = ch_commit(&x->w, x->err, sizeof x->err);
    if (rc) return error(rc, "%s", x->err);
    report(x);
    return 0;
}

/* a has more of a run than b: more processes, or as many and more
 * snapshots (the order of view mp_runs) */
static int more_complete(const struct extent *a, const struct extent *b)
{
    return a->processes != b->processes ? a->processes > b->processes : a->snapshots > b->snapshots;
}

static struct pending *add_run(struct push *x, const char *path, const char *token)
{
    if (x->nruns == x->cap) x->runs = xrealloc(x->runs, (x->cap = x->cap ? 2 * x->cap : 64) * sizeof *x->runs);
    struct pending *r = &x->runs[x->nruns++];
    *r = (struct pending){ .path = path, .token = xstrdup(token) };
    return r;
}

/* Each run's processes and snapshots (peaks aside) in a file. */
static void file_extents(const struct profile *p, struct extent *e)
{
    for (size_t i = 0; i < p->nprocs; i++) {
        const struct process *pr = &p->procs[i];
        e[pr->run].processes++;
        for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++)
            e[pr->run].snapshots += !p->snapshots[j].peak;
    }
}

/* What the store holds of p's runs: had[r], its processes and snapshots
 * (0, 0: not stored). Tokens go in IN lists of at most 64 KB (ClickHouse
 * parses 256 KB of query at most). */
static int stored_runs(struct push *x, const struct profile *p, struct extent *had)
{
    struct strtab mine;
    struct strbuf sql = { 0 }, out = { 0 }, field = { 0 };
    strtab_init(&mine);
    for (size_t r = 0; r < p->nruns; r++) strtab_intern(&mine, p->runs[r].token, strlen(p->runs[r].token));
    int rc = 0;
    for (size_t r = 0; r < p->nruns && !rc;) {
        sql.len = 0;
        sb_puts(&sql, "SELECT token, processes, snapshots FROM mp_runs WHERE token IN (");
        for (size_t first = r; r < p->nruns && (r == first || sql.len < 65536); r++) {
            if (r > first) sb_puts(&sql, ", ");
            ch_quote(&sql, p->runs[r].token);
        }
        sb_putc(&sql, ')');
        out.len = 0;
        rc = ch_query(&x->c, sql.s, 1, &out, x->err, sizeof x->err);
        /* a dry run against a server without the tables: nothing stored */
        if (rc && dry_run && x->c.exception_code == 60) { rc = 0; continue; }
        const char *cur = out.s, *end = out.s + out.len;
        while (!rc && tsv_field(&cur, end, &field) == '\t') {
            size_t before = mine.n;
            uint32_t id = strtab_intern(&mine, field.s, field.len);
            struct extent e = { 0 };
            if (tsv_field(&cur, end, &field) == '\t') e.processes = (uint32_t)strtoul(field.s, NULL, 10);
            if (tsv_field(&cur, end, &field)) e.snapshots = (uint32_t)strtoul(field.s, NULL, 10);
            if (mine.n == before) had[id] = e;
        }
    }
    if (rc) error(rc, "%s", x->err);
    strtab_free(&mine);
    sb_free(&sql);
    sb_free(&out);
    sb_free(&field);
    return rc;
}

/* One file: its runs the server lacks, built (and committed as batches
 * fill); 0, or the exit code (reported). */
static int push_file(struct push *x, const char *path)
{
    struct profile *p;
    char err[1024];
    int rc = profile_load(path, &p, PROFILE_PEAK_ROWS | PROFILE_HISTS, err, sizeof err);
    if (rc) return error(rc, "%s: %s", path, err);
    x->files++;
    struct extent *had = xcalloc(p->nruns, sizeof *had), *has = xcalloc(p->nruns, sizeof *has);
    rc = stored_runs(x, p, had);
    file_extents(p, has);
    char *real = realpath(path, NULL);
    struct ch_source s;
    ch_source_init(&s, p, real ? real : path);
    for (uint32_t r = 0; r < p->nruns && !rc; r++) {
        const char *token = p->runs[r].token;
        size_t before = x->tokens.n;
        strtab_intern(&x->tokens, token, strlen(token));
        struct pending *run = add_run(x, path, token);
        /* a copy with more of the run than the store's is a new load, which
         * view mp_runs then shows (schema/clickhouse.sql) */
        run->had = had[r];
        run->replaces = more_complete(&has[r], &had[r]) && (had[r].processes || had[r].snapshots);
        run->stored = !more_complete(&has[r], &had[r]) || x->tokens.n == before;
        if (!run->stored && (rc = ch_write_run(&x->w, &s, r, &run->load, x->err, sizeof x->err)))
            error(rc, "%s", x->err);
        if (!rc && (x->w.uncommitted >= BATCH || x->nruns >= BATCH_RUNS)) rc = commit(x);
    }
    ch_source_free(&s);
    free(real);
    free(had);
    free(has);
    profile_free(p);
    return rc;
}

/* --ttl: the runs started more than ttl_days days ago dropped. */
static int expire(struct push *x)
{
    long runs;
    int rc = ch_drop_expired(&x->c, ttl_days, &runs, x->err, sizeof x->err);
    if (rc) return error(rc, "%s", x->err);
    fprintf(stderr, "mpquery: push: --ttl %ldd: dropped %ld runs\n", ttl_days, runs);     /* -q too: a summary */
    return 0;
}

/* push --follow: the agent (follow.c), its state where systemd keeps it */
static int follow_main(const char *url, int n, char **paths)
{
    struct strbuf dir = { 0 };
    const char *sd = getenv("STATE_DIRECTORY"), *home = getenv("HOME");
    if (state_dir) sb_puts(&dir, state_dir);
    else if (sd && *sd) sb_add(&dir, sd, strcspn(sd, ":"));
    else sb_printf(&dir, "%s/.local/state/mpquery-push", home && *home ? home : ".");
    struct follow_opts o = { .url = url, .state_dir = dir.s, .paths = paths, .npaths = n,
                             .remove_shipped = remove_shipped, .quiet = quiet, .ttl_days = ttl_days };
    int rc = push_follow(&o);
    sb_free(&dir);
    return rc;
}

int cmd_push(int argc, char **argv)
{
    struct common c;
    int rc = parse_options(&c, &push_opts, argc, argv);
    if (rc != PARSE_OK) return rc;
    quiet = c.out.quiet;
    const char *url = server_url ? server_url : optind < argc ? argv[optind++] : NULL;
    if (!url || optind >= argc)
        return usage_error("push", follow ? "needs a URL and at least one directory or file to follow"
                                          : "needs a URL and at least one database");
    if (ttl_arg) {
        char *end;
        ttl_days = strtol(ttl_arg, &end, 10);
        if (end == ttl_arg || (*end && strcmp(end, "d")) || ttl_days < 1 || ttl_days > 36500)
            return usage_error("push", "bad value '%s' for --ttl (expected days, 1 to 36500: 30d)", ttl_arg);
    }
    if (follow) return follow_main(url, argc - optind, argv + optind);
    if (remove_shipped || state_dir) return usage_error("push", "--remove-shipped and --state go with --follow");
    double start = monotonic_seconds();
    struct push x = { 0 };
    rc = ch_open(&x.c, url, x.err, sizeof x.err);
    if (!rc && !dry_run) rc = ch_create_schema(&x.c, x.err, sizeof x.err);
    if (rc) {
        ch_close(&x.c);
        return error(rc, "%s", x.err);
    }
    ch_writer_init(&x.w, &x.c, CHUNK, dry_run);
    strtab_init(&x.tokens);
    int bad_file = 0;
    for (int i = optind; i < argc && !rc; i++) {
        rc = push_file(&x, argv[i]);
        if (rc == EXIT_BAD_INPUT) { bad_file = rc; rc = 0; }     /* not a profile: the next file */
    }
    if (!rc) rc = commit(&x);
    if (!rc && ttl_days && !dry_run) rc = expire(&x);
    for (size_t i = 0; i < x.nruns; i++) free(x.runs[i].token);    /* not stored: not reported */
    if (!rc) {
        double t = monotonic_seconds() - start;
        fprintf(stderr, "mpquery: push: %s %llu runs (%llu already stored) from %llu files: %llu rows in %.2f s "
                "(%.0f rows/s, %.1f runs/s)\n", dry_run ? "would push" : "pushed",
                (unsigned long long)x.pushed, (unsigned long long)x.stored, (unsigned long long)x.files,
                (unsigned long long)x.rows, t, t > 0 ? x.rows / t : 0, t > 0 ? x.pushed / t : 0);
    }
    ch_writer_free(&x.w);
    strtab_free(&x.tokens);
    free(x.runs);
    ch_close(&x.c);
    return rc ? rc : bad_file;
}
