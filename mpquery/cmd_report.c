/* mpquery report DB: the profile as one HTML page, made of mpquery
 * serve's views (serve_views.c: one source for both): each section is a
 * view rendered as serve renders it, with the report's selection as its
 * state, its links in the page (#NAME, or #serve for what only serve
 * shows), its pictures inline (data: URLs), nothing loaded from the
 * network: the file can be mailed or attached to a bug report. The page
 * is at most REPORT_MAX bytes: tables are cut at -n rows (0: all) and
 * share TABLES_MAX, and the flame graphs share what the rest leaves (breadth
 * first, the deepest frames cut), each saying so; the last section gives
 * the mpquery serve command that shows everything. */
#include "mpquery.h"
#include "commands.h"
#include "load.h"
#include "output.h"
#include "procs.h"
#include "profile.h"
#include "serve.h"
#include "tempfile.h"
#include "opt_groups.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPORT_MAX (5u << 20)       /* the page's bound: 5 MiB */
#define FLAME_MAX (1u << 20)        /* a flame graph's frames at most */
#define TABLES_MAX (REPORT_MAX / 2)  /* the sections but the flame graphs, at most */
#define ROW_MIN 64                  /* a table row's bytes at least (-n 0: the rows asked for) */
#define SLACK (64u << 10)           /* the page around the sections, a frame past each graph's share */

static const char usage[] =
"usage: mpquery report DB... -o FILE.html [options]\n"
"\n"
"The profile as one HTML page, for any browser and without network access\n"
"(its style and pictures are inline), made of mpquery serve's views: the\n"
"overview (info, memory over time), resident memory, flame graphs, the\n"
"largest stacks and functions of each counter, the peak, the top-down and\n"
"bottom-up trees' first level, leaks, temporaries, sizes and threads.\n"
"\n";

static const char more[] =
"\n"
"The page is at most 5 MiB: tables show their first -n rows (default 20;\n"
"0: all, the tables sharing half the page), flame graphs the frames at\n"
"least --min-width pixels wide\n"
"(of 1200) within what the rest of the page leaves; each says what it cut.\n"
"Its last section gives the mpquery serve command that shows everything\n"
"(zoom, search, every row, the trees' deeper levels, callers, source).\n"
"The selection options are serve's parameters of the same name.\n"
"\n"
"example:\n"
"  mpquery record -o app.db -- ./app\n"
"  mpquery report app.db -o app.html --title 'app, build 1234'\n";

/* The state options (serve's parameters), in serve_page.c's order. */
static const char *const state_keys[] = { "snapshot", "filter", "exclude", "thread", "pid", "exe", "rules",
                                          "depth", "since", "until", "run", "image", "lines", "native",
                                          "no-inline", "module", "no-default-rules" };
#define NVALUED 12      /* the options with a value; the flags after */
#define NSTATE (sizeof state_keys / sizeof *state_keys)

struct report_args {
    char *out, *title, *rows_arg, *min_width_arg, *state[NSTATE];
    int flag[NSTATE - NVALUED];
};

/* A section: a view of serve, its own parameters ("k=v&k=v", after the
 * state), its heading (NULL: from its id), its id; optional: left out when its view fails (no peak
 * snapshot, no ledger). */
struct section { const char *path, *params, *heading, *id; int optional; struct strbuf body; int status; };

struct page {
    struct section s[48];
    size_t n;
    struct serve_param params[NSTATE + 4];
    size_t nbase;
};

/* Section: its path, params, heading, id (NULL: none), optional. */
static void add(struct page *pg, const char *path, const char *params, const char *heading, const char *id, int optional)
{
    if (pg->n < sizeof pg->s / sizeof *pg->s)
        pg->s[pg->n++] = (struct section){ path, params, heading, id, optional, { 0 }, 200 };
}

/* The sections, in the page's order; the counters of p (NULL: not loaded). */
static void plan(struct page *pg, const struct profile *p)
{
    static const char *const by[][4] = {
        { "by=memtot", "flame-memtot", "top-memtot", "functions-memtot-self" },
        { "by=ncalls", "flame-ncalls", "top-ncalls", "functions-ncalls-self" },
        { "by=memlive", "flame-memlive", "top-memlive", "functions-memlive-self" },
        { "by=maxlive", "flame-maxlive", "top-maxlive", "functions-maxlive-self" },
        { "by=time", "flame-time", "top-time", "functions-time-self" },
        { "by=mapped", "flame-mapped", "top-mapped", "functions-mapped-self" },
        { "by=memcold", "flame-memcold", "top-memcold", "functions-memcold-self" },
    };
    static const char *const incl[][2] = {
        { "by=memtot&sort=inclusive", "functions-memtot-inclusive" },
        { "by=ncalls&sort=inclusive", "functions-ncalls-inclusive" },
        { "by=memlive&sort=inclusive", "functions-memlive-inclusive" },
        { "by=maxlive&sort=inclusive", "functions-maxlive-inclusive" },
        { "by=time&sort=inclusive", "functions-time-inclusive" },
        { "by=mapped&sort=inclusive", "functions-mapped-inclusive" },
        { "by=memcold&sort=inclusive", "functions-memcold-inclusive" },
    };
    size_t list[7], n = 0;
    int has[7] = { 1, 1, 1, 1, p && p->has_time, p && p->has_mappings, p && p->has_cold };
    for (size_t i = 0; i < 7; i++) if (has[i]) list[n++] = i;
    add(pg, "/", NULL, "Overview", NULL, 0);
    add(pg, "/rss", NULL, "Resident memory", NULL, 1);
    for (size_t i = 0; i < n; i++) add(pg, "/flame", by[list[i]][0], NULL, by[list[i]][1], 0);
    add(pg, "/flame", "by=memlive&snapshot=peak", "memlive at each process's peak", "flame-peak", 1);
    for (size_t i = 0; i < n; i++) add(pg, "/top", by[list[i]][0], NULL, by[list[i]][2], 0);
    add(pg, "/peak", NULL, "At each process's peak", NULL, 1);
    for (size_t i = 0; i < n; i++) {
        add(pg, "/functions", by[list[i]][0], NULL, by[list[i]][3], 0);
        add(pg, "/functions", incl[list[i]][0], NULL, incl[list[i]][1], 0);
    }
    add(pg, "/tree", NULL, "Top-down", NULL, 0);
    add(pg, "/bottomup", NULL, "Bottom-up", NULL, 0);
    add(pg, "/leaks", NULL, "Leaks", NULL, 0);
    add(pg, "/temporaries", NULL, "Temporaries", NULL, 0);
    add(pg, "/hist", NULL, "Sizes", NULL, 0);
    add(pg, "/threads", NULL, "Threads", NULL, 0);
}

static const char *group_heading(const char *path)
{
    static const char *const h[][2] = { { "/", "Overview" }, { "/rss", "Resident memory" }, { "/flame", "Flame graphs" },
                                        { "/top", "Stacks" }, { "/peak", "At the peak" }, { "/functions", "Functions" },
                                        { "/tree", "Top-down" }, { "/bottomup", "Bottom-up" }, { "/leaks", "Leaks" },
                                        { "/temporaries", "Temporaries" }, { "/hist", "Sizes" },
                                        { "/threads", "Threads" } };
    for (size_t i = 0; i < sizeof h / sizeof *h; i++) if (!strcmp(h[i][0], path)) return h[i][1];
    return path;
}

/* Renders section s: the view of r's state and s's parameters. */
static void render(struct page *pg, struct section *s, struct serve_req *r)
{
    char *own = xstrdup(s->params ? s->params : "");
    size_t n = pg->nbase;
    for (char *save, *kv = strtok_r(own, "&", &save); kv && n < sizeof pg->params / sizeof *pg->params;
         kv = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(kv, '=');
        *eq = 0;
        pg->params[n++] = (struct serve_param){ kv, eq + 1 };
    }
    r->path = s->path;
    r->params = pg->params;
    r->nparams = n;
    serve_view_body(r, &s->body, &s->status);
    free(own);
}

/* The sections of one kind (flame graphs or not), one after the other:
 * in this process, over the profile and listings kept between them
 * (serve_cache.c, listing_cache.c). */
static void render_some(struct page *pg, struct serve_req *r, int flames)
{
    for (size_t i = 0; i < pg->n; i++)
        if ((strcmp(pg->s[i].path, "/flame") == 0) == flames) render(pg, &pg->s[i], r);
}

/* Every section; the flame graphs last, sharing what the others left. */
static void render_all(struct page *pg, struct serve_req *r)
{
    size_t used = SLACK, nflames = 0, ntables = 0;
    for (size_t i = 0; i < pg->n; i++) ntables += strcmp(pg->s[i].path, "/flame") != 0;
    r->table_bytes = TABLES_MAX / (ntables ? ntables : 1);
    r->rows_cap = r->max_rows ? 0 : r->table_bytes / ROW_MIN;
    render_some(pg, r, 0);
    for (size_t i = 0; i < pg->n; i++) {
        if (!strcmp(pg->s[i].path, "/flame")) nflames++;
        else used += pg->s[i].body.len;
    }
    size_t left = used < REPORT_MAX ? REPORT_MAX - used : 0, share = nflames ? left / nflames : 0;
    r->flame_bytes = share > FLAME_MAX ? FLAME_MAX : share > 8192 ? share - 4096 : 4096;
    render_some(pg, r, 1);
}

static int shown(const struct section *s) { return s->status == 200 || !s->optional; }

/* The header: the title, the selection, a link per group of sections. */
static void write_head(FILE *f, const struct page *pg, const struct report_args *a, const struct serve_req *r,
                       const char *title)
{
    struct strbuf sb = { 0 };
    xml_escape(&sb, title, strlen(title), 400);
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"generator\" "
               "content=\"mpquery %s\">\n<title>%s</title>\n<style>\n%s"
               "section { border-top: 2px solid #ccc; margin-top: 18px; }\nh3 { font-size: 14px; margin: 12px 0 4px; }\n"
               "td.cut { color: #555; font-style: italic; }\n</style>\n</head>\n<body>\n<header>\n<h1>%s</h1>\n"
               "<p class=\"selection\" id=\"selection\">", MPQ_VERSION, sb.s, serve_css, sb.s);
    for (size_t i = 0; i < r->ndbs; i++) {
        sb.len = 0;
        xml_escape(&sb, r->dbs[i], strlen(r->dbs[i]), 400);
        fprintf(f, "%s%s", i ? " " : "", sb.s);
    }
    for (size_t k = 0; k < NSTATE; k++) {
        if (!a->state[k]) continue;
        sb.len = 0;
        xml_escape(&sb, a->state[k], strlen(a->state[k]), 400);
        if (k >= NVALUED) fprintf(f, " &middot; --%s", state_keys[k]);      /* a flag */
        else fprintf(f, " &middot; %s %s", state_keys[k], sb.s);
    }
    fprintf(f, " &middot; mpquery %s</p>\n<nav>", MPQ_VERSION);
    for (size_t i = 0; i < pg->n; i++)
        if (shown(&pg->s[i]) && (i == 0 || strcmp(pg->s[i].path, pg->s[i - 1].path)))
            fprintf(f, "<a href=\"#%s\">%s</a> ", serve_anchor(pg->s[i].path), group_heading(pg->s[i].path));
    fputs("<a href=\"#serve\">More in mpquery serve</a></nav>\n</header>\n<main>\n", f);
    sb_free(&sb);
}

/* The sections, a <section> per path (id: its anchor), a <div> each
 * (id: ANCHOR-COUNTER when it has a by=). */
static void write_sections(FILE *f, const struct page *pg)
{
    const char *open = NULL;        /* the path of the <section> open */
    for (size_t i = 0; i < pg->n; i++) {
        const struct section *s = &pg->s[i];
        if (!shown(s)) continue;
        if (open && strcmp(open, s->path)) fputs("</section>\n", f);
        if (!open || strcmp(open, s->path))
            fprintf(f, "<section id=\"%s\">\n<h2>%s</h2>\n", serve_anchor(s->path), group_heading(s->path));
        open = s->path;
        if (s->id) fprintf(f, "<div id=\"%s\">\n", s->id);
        else fputs("<div>\n", f);
        if (!s->heading) {
            /* a counter's: the id after the view's name, "memtot self" */
            fputs("<h3>", f);
            for (const char *c = strchr(s->id, '-') + 1; *c; c++) fputc(*c == '-' ? ' ' : *c, f);
            fputs("</h3>\n", f);
        } else if (strcmp(s->heading, group_heading(s->path)))
            fprintf(f, "<h3>%s</h3>\n", s->heading);
        fwrite(s->body.s ? s->body.s : "", 1, s->body.len, f);
        fputs("</div>\n", f);
    }
    if (open) fputs("</section>\n", f);
}

/* The last section: what the page cut, and the serve command. */
static void write_end(FILE *f, const struct serve_req *r)
{
    struct strbuf sb = { 0 };
    for (size_t i = 0; i < r->ndbs; i++) {
        sb_puts(&sb, " ");
        xml_escape(&sb, r->dbs[i], strlen(r->dbs[i]), (size_t)-1);
    }
    char rows[96];
    if (r->max_rows) snprintf(rows, sizeof rows, "their first %zu rows", r->max_rows);
    else snprintf(rows, sizeof rows, "every row within %zu KiB each", r->table_bytes >> 10);
    fprintf(f, "<section id=\"serve\">\n<h2>More in mpquery serve</h2>\n<p>This page is at most %u MiB: its tables "
               "show %s, its flame graphs the frames at least %.2f px wide within %zu KiB each "
               "(the deepest cut first), the trees their first level. <code>mpquery serve</code> shows the same views "
               "over the whole profile, read on demand: every row, every frame (zoom, search, the reversed "
               "graph), the trees' deeper levels, a function's callers and callees, the source lines, time "
               "ranges, the diff of two profiles:</p>\n<pre class=\"cmd\">mpquery serve%s</pre>\n</section>\n"
               "</main>\n</body>\n</html>\n", REPORT_MAX >> 20, rows, r->flame_min, r->flame_bytes >> 10, sb.s);
    sb_free(&sb);
}

/* ---------------------------------------------------------------- command */
static int write_page(const struct report_args *a, struct page *pg, struct serve_req *r)
{
    const struct profile *p = serve_cache_profile();
    struct strbuf title = { 0 };
    if (a->title) sb_puts(&title, a->title);
    else if (p && p->nprocs) sb_printf(&title, "mallocprof report: %s", procs_name(&p->procs[0]));
    else sb_printf(&title, "mallocprof report: %s", path_basename(r->dbs[0]));
    struct outfile out;
    int rc = output_open(&out, a->out, OUTPUT_FILE);
    if (!rc) {
        write_head(out.f, pg, a, r, title.s);
        write_sections(out.f, pg);
        write_end(out.f, r);
        rc = output_close(&out, 0);
    }
    sb_free(&title);
    return rc;
}

/* A view that failed: its message (the page's <pre class=err>, its
 * text unescaped) on stderr; the exit code. */
static int view_failed(const struct section *s)
{
    static const char *const ent[][2] = { { "&lt;", "<" }, { "&gt;", ">" }, { "&quot;", "\"" }, { "&#39;", "'" },
                                          { "&amp;", "&" } };
    const char *p = s->body.s ? strstr(s->body.s, "<pre class=err>") : NULL, *end = p ? strstr(p, "</pre>") : NULL;
    if (!end) return error(EXIT_FAILED, "report: the %s view failed", s->path);
    for (p += 15; p < end; p++) {
        size_t k = 0;
        while (k < 5 && strncmp(p, ent[k][0], strlen(ent[k][0]))) k++;
        if (k < 5) fputs(ent[k][1], stderr), p += strlen(ent[k][0]) - 1;
        else fputc(*p, stderr);
    }
    return s->status == 400 ? EXIT_BAD_INPUT : s->status == 403 ? EXIT_BAD_INPUT : EXIT_FAILED;
}

/* The page of r's state: the sections rendered, then written, or the
 * first (in the page's order) that failed and was not optional: its
 * message (its command's: a bad option, a snapshot the profile has not). */
static int report(const struct report_args *a, struct serve_req *r)
{
    struct page pg = { .n = 0 };
    char rows[32];
    snprintf(rows, sizeof rows, "%zu", r->max_rows);
    for (size_t k = 0; k < NSTATE; k++)
        if (a->state[k]) pg.params[pg.nbase++] = (struct serve_param){ state_keys[k], a->state[k] };
    pg.params[pg.nbase++] = (struct serve_param){ "n", rows };     /* the views' rows (tables, trees) */
    serve_cache_refresh(r->dbs, r->ndbs);
    plan(&pg, serve_cache_profile());
    int rc = 0;
    render_all(&pg, r);
    for (size_t i = 0; i < pg.n && !rc; i++)
        if (pg.s[i].status != 200 && !pg.s[i].optional) rc = view_failed(&pg.s[i]);
    if (!rc) rc = write_page(a, &pg, r);
    for (size_t i = 0; i < pg.n; i++) sb_free(&pg.s[i].body);
    return rc;
}

/* -o FILE.html (or a pipe), not an input; the databases readable. */
static int check_files(const struct common *c, const char *out, const struct dbfiles *files)
{
    static const struct output_kind html[] = { { "*.html", 0, "HTML" }, { "*.htm", 0, "HTML" }, { NULL } };
    if (out && output_kind(c->cmd, out, html, 0) < 0) return 2;
    if (!out && isatty(1))
        return usage_error(c->cmd, "the page is HTML: write it to a file with -o FILE.html, or to a pipe");
    int rc = check_output(c, out, files, 1);
    for (size_t i = 0; !rc && i < files->n; i++)
        if (access(files->paths[i], R_OK)) rc = error(EXIT_BAD_INPUT, "%s: %s", files->paths[i], strerror(errno));
    return rc;
}

int cmd_report(int argc, char **argv)
{
    struct common c;
    struct report_args a = { 0 };
    const struct opt opts[] = {
        { .name = "output", .letter = 'o', .arg = "FILE", .str = &a.out,
          .help = "write the page to FILE (default: stdout, when it is not\na terminal)" },
        { .name = "title", .arg = "TEXT", .str = &a.title,
          .help = "the page's title (default: 'mallocprof report: COMMAND')" },
        { .name = "rows", .letter = 'n', .arg = "N", .str = &a.rows_arg,
          .help = "rows of each table (default 20, 0 = all, within the\npage's 5 MiB)" },
        { .name = "min-width", .arg = "PX", .str = &a.min_width_arg,
          .help = "flame graphs: frames narrower than PX pixels of 1200 are\nleft out (default 0.5)" },
        { .name = "snapshot", .arg = "S", .str = &a.state[0], .help = "the snapshot, as in mpquery top --help" },
        { .name = "filter", .arg = "RE", .str = &a.state[1], .help = "only the stacks with a frame matching RE" },
        { .name = "exclude", .arg = "RE", .str = &a.state[2], .help = "not the stacks with a frame matching RE" },
        { .name = "thread", .arg = "T", .str = &a.state[3], .help = "a tid, or the threads whose name matches RE" },
        { .name = "pid", .arg = "PID", .str = &a.state[4], .help = "the process with this pid" },
        { .name = "exe", .arg = "NAME", .str = &a.state[5], .help = "the processes of this executable" },
        { .name = "rules", .arg = "FILE", .str = &a.state[6], .help = "a rules file, after filters/default.rules" },
        { .name = "depth", .arg = "N", .str = &a.state[7], .help = "frames of a path shown (0 = all)" },
        { .name = "since", .arg = "TIME", .str = &a.state[8], .help = NULL },
        { .name = "until", .arg = "TIME", .str = &a.state[9],
          .help = "only the allocations made between these times (+1.5:\nfrom the run's start)" },
        { .name = "run", .arg = "N|latest|all", .str = &a.state[10], .help = "which run (default: the latest)" },
        { .name = "image", .arg = "N", .str = &a.state[11], .advanced = 1,
          .help = "with --pid: only the N-th program that pid ran" },
        { .name = "lines", .flag = &a.flag[0], .value = 1, .help = "frames as function:line" },
        { .name = "native", .flag = &a.flag[1], .value = 1, .help = "every frame of a Python stack" },
        { .name = "no-inline", .flag = &a.flag[2], .value = 1, .advanced = 1, .help = "inlined frames hidden" },
        { .name = "module", .flag = &a.flag[3], .value = 1, .advanced = 1, .help = "frames as their module" },
        { .name = "no-default-rules", .flag = &a.flag[4], .value = 1, .advanced = 1,
          .help = "do not apply filters/default.rules" },
        OPTION_QUIET("no line saying what it wrote"),
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "report", .usage = usage, .more = more, .opts = opts,
                                .missing = "missing DB" };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    int64_t rows = 20;
    if (a.rows_arg && (parse_int64(a.rows_arg, &rows) || rows < 0))
        return bad_value("report", "-n", a.rows_arg, "a count (0: all, within the page's 5 MiB)");
    for (size_t k = NVALUED; k < NSTATE; k++) if (a.flag[k - NVALUED]) a.state[k] = "1";
    double min_width = 0.5;
    if (a.min_width_arg) {
        char *end;
        min_width = strtod(a.min_width_arg, &end);
        if (end == a.min_width_arg || *end || !(min_width >= 0 && min_width <= 1200))
            return usage_error(c.cmd, "bad value '%s' for --min-width (expected pixels, 0 to 1200)", a.min_width_arg);
    }
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    if ((rc = check_files(&c, a.out, &files))) return rc;
    static const char *const in_page[] = { "/", "/rss", "/flame", "/top", "/peak", "/functions", "/tree",
                                           "/bottomup", "/leaks", "/temporaries", "/hist", "/threads", NULL };
    struct serve_req r = { .token = "", .dbs = files.paths, .ndbs = files.n, .in_page = in_page,
                           .max_rows = (size_t)rows, .flame_min = min_width };
    return report(&a, &r);
}
