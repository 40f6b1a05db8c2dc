/* mpquery serve's views by path (serve.h): the table of views, the page
 * around each (the links to every view, the state form, the CSS and the
 * script built into the binary from serve.css and serve.js), and the
 * views that are a command's output: its CSV as a table, its text as
 * text, timeline's SVG as an image. Each runs the command itself
 * (cmd_top, cmd_leaks ...) through serve_run with an argv made of the request's
 * parameters, so that they mean what the options mean. */
#include "mpquery.h"
#include "commands.h"
#include "output.h"
#include "serve.h"
#include "opt_groups.h"

#include <stdlib.h>
#include <string.h>

const char serve_css[] =
#include "serve_css.h"
    ;
static const char js[] =
#include "serve_js.h"
    ;

struct view;
typedef void view_fn(const struct view *v, const struct serve_req *r, struct strbuf *body, int *status);
struct view {
    const char *path, *title;
    view_fn *fn;
    const char *cmd, *args;     /* a command's view: its name and fixed options (spaces between) */
    int mask;                   /* the state parameters it takes (P_*) */
    const char *link;           /* csv: the column of function names, or NULL */
    int limit;                  /* takes -n (n=N, default 100) */
};

/* ---------------------------------------------------------------- commands */
static const struct { const char *name; int (*fn)(int argc, char **argv); } cmds[] = {
    { "info", cmd_info }, { "top", cmd_top }, { "leaks", cmd_leaks }, { "hist", cmd_hist },
    { "rss", cmd_rss }, { "timeline", cmd_timeline }, { "diff", cmd_diff },
};

static int command_main(void *ctx, int argc, char **argv)
{
    (void)ctx;
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
        if (!strcmp(argv[0], cmds[i].name)) return cmds[i].fn(argc, argv);
    return EXIT_FAILED;
}

/* The databases (diff: the first and the last), then NULL: after the
 * options, all of them "--NAME=VALUE" (no "--": it splits diff's operands). */
static void argv_dbs(struct serve_argv *a, const struct serve_req *r, int diff)
{
    if (r->server) {
        struct strbuf sb = { 0 };
        sb_printf(&sb, "--server=%s", r->server);
        argv_add(a, sb.s);
        sb_free(&sb);
    } else if (diff) {
        argv_add(a, r->dbs[0]);
        argv_add(a, r->dbs[r->ndbs - 1]);
    } else
        for (size_t i = 0; i < r->ndbs; i++) argv_add(a, r->dbs[i]);
    char **e = array_push((void **)&a->v, &a->n, &a->cap, sizeof *a->v);
    *e = NULL;
    a->n--;
}

/* v's command: its fixed options, format, the state's, -n, the databases. */
static void command_argv(const struct view *v, const struct serve_req *r, struct serve_argv *a, const char *format)
{
    argv_add(a, v->cmd);
    char *fixed = xstrdup(v->args ? v->args : "");
    for (char *save, *w = strtok_r(fixed, " ", &save); w; w = strtok_r(NULL, " ", &save)) argv_add(a, w);
    free(fixed);
    if (format) argv_add(a, format);
    const char *sort = serve_param(r, "sort");
    if (!strcmp(v->path, "/functions") && sort && !strcmp(sort, "inclusive")) argv_add(a, "--inclusive");
    /* info and hist over a store take no time range (their --since selects runs) */
    int runs_since = r->server && (!strcmp(v->cmd, "info") || !strcmp(v->cmd, "hist"));
    argv_state(a, r, runs_since ? v->mask & ~(SP_SINCE | SP_UNTIL) : v->mask);
    if (v->limit) {
        const char *n = serve_param(r, "n");
        struct strbuf sb = { 0 };
        if (n && !strcmp(n, "0") && r->rows_cap) sb_printf(&sb, "-n%zu", r->rows_cap);
        else sb_printf(&sb, "-n%s", n ? n : "100");
        argv_add(a, sb.s);
        sb_free(&sb);
    }
    argv_dbs(a, r, !strcmp(v->cmd, "diff"));
}

#define PROC (SP_RUN | SP_PID | SP_IMAGE | SP_EXE)        /* the processes' selection */
#define RULES (SP_RULES | SP_NO_DEFAULT_RULES)

/* The pictures the pages show as images (their scripts do not run):
 * timeline's plot, diff's differential flame graph, as they write them. */
static const struct view pictures[] = {
    { "/timeline.svg", NULL, NULL, "timeline", "--format=svg --stacks=3 --shade-window",
      PROC | SP_SINCE | SP_UNTIL | RULES | SP_DISPLAY, NULL, 0 },    /* its stacks named as the views name them */
    { "/diff.svg", NULL, NULL, "diff", "--flame --quiet", SP_BY | SP_FILTER | SP_EXCLUDE | RULES | SP_DISPLAY, NULL, 0 },
};

static void picture(const struct view *v, const struct serve_req *r, struct serve_out *o)
{
    struct serve_argv a = { 0 };
    struct strbuf err = { 0 };
    command_argv(v, r, &a, NULL);
    int rc = serve_run(command_main, NULL, (int)a.n, a.v, &o->body, &err);
    if (rc) {
        o->body.len = 0;
        sb_add(&o->body, err.s ? err.s : "", err.len);
        o->status = serve_child_status(rc, &(struct strbuf){ 0 }, &o->body);
        o->type = "text/plain; charset=utf-8";
    } else
        o->type = "image/svg+xml";
    argv_free(&a);
    sb_free(&err);
}

/* s as base64 (RFC 4648), for a data: URL. */
static void base64(struct strbuf *sb, const unsigned char *s, size_t n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
        sb_putc(sb, abc[v >> 18 & 63]);
        sb_putc(sb, abc[v >> 12 & 63]);
        sb_putc(sb, i + 1 < n ? abc[v >> 6 & 63] : '=');
        sb_putc(sb, i + 2 < n ? abc[v & 63] : '=');
    }
}

/* The picture at path as an image: in serve, a link to it (its own
 * request); in report's page, inline (a data: URL), or nothing when its
 * command fails (the view's table says why). */
static void picture_img(struct strbuf *body, const struct serve_req *r, const char *path, const char *alt)
{
    struct serve_out o = { .status = 200 };
    if (r->in_page) {
        for (size_t i = 0; i < sizeof pictures / sizeof *pictures; i++)
            if (!strcmp(path, pictures[i].path)) picture(&pictures[i], r, &o);
        if (o.status != 200 || !o.body.len) {
            sb_free(&o.body);
            return;
        }
    }
    sb_printf(body, "<p><img class=plot alt=\"%s\" src=\"", alt);
    if (r->in_page) {
        sb_puts(body, "data:image/svg+xml;base64,");
        base64(body, (const unsigned char *)o.body.s, o.body.len);
    } else
        serve_link(body, r, path, NULL);
    sb_puts(body, "\"></p>\n");
    sb_free(&o.body);
}

/* A command's CSV as a table, then a link to twice the rows. */
static void csv_view(const struct view *v, const struct serve_req *r, struct strbuf *body, int *status)
{
    if (!strcmp(v->cmd, "diff") && r->ndbs < 2) {
        sb_puts(body, "<p class=note>The diff compares two profiles: mpquery serve A.db B.db (the first and the "
                      "last database).</p>\n");
        return;
    }
    if (!strcmp(v->cmd, "diff")) picture_img(body, r, "/diff.svg", "the differential flame graph");
    struct serve_argv a = { 0 };
    struct strbuf out = { 0 }, err = { 0 };
    command_argv(v, r, &a, "--format=csv");
    int rc = serve_run(command_main, NULL, (int)a.n, a.v, &out, &err);
    *status = serve_child_status(rc, &err, body);
    if (rc == 0) csv_table(body, r, out.s ? out.s : "", v->link);
    const char *n = serve_param(r, "n");
    long shown = n ? atol(n) : 100;
    if (rc == 0 && v->limit && shown > 0 && r->in_page) {
        sb_printf(body, "<p class=note>At most %ld rows: <a href=\"#serve\">mpquery serve</a> shows more.</p>\n", shown);
    } else if (rc == 0 && v->limit && shown > 0) {
        struct strbuf x = { 0 };
        sb_printf(&x, "n=%ld", 2 * shown);
        sb_puts(body, "<p><a class=more href=\"");
        serve_link(body, r, v->path, x.s);
        sb_printf(body, "\">show up to %ld rows</a></p>\n", 2 * shown);
        sb_free(&x);
    }
    argv_free(&a);
    sb_free(&out);
    sb_free(&err);
}

/* A command's text as it prints it. */
static void text_view(const struct view *v, const struct serve_req *r, struct strbuf *body, int *status)
{
    struct serve_argv a = { 0 };
    struct strbuf out = { 0 }, err = { 0 };
    command_argv(v, r, &a, NULL);
    int rc = serve_run(command_main, NULL, (int)a.n, a.v, &out, &err);
    *status = serve_child_status(rc, &err, body);
    if (rc == 0 && out.len) {
        sb_puts(body, "<pre class=text>");
        serve_lines(body, out.s, out.len);
        sb_puts(body, "</pre>\n");
    }
    argv_free(&a);
    sb_free(&out);
    sb_free(&err);
}

/* In serve, the timeline's plot in the page (an inline SVG, timeline's
 * own, every name escaped there): the whole run, the time range shaded,
 * and its axis in data attributes for the script's drag (serve.js).
 * Nothing when its command fails: the view below (info, timeline's
 * table: the same selection and range) says why. */
static void plot_inline(struct strbuf *body, const struct serve_req *r)
{
    struct serve_out o = { .status = 200 };
    picture(&pictures[0], r, &o);
    const char *svg = o.status == 200 && o.body.len ? strstr(o.body.s, "<svg") : NULL;
    if (svg) {
        sb_puts(body, "<div class=chart>");
        sb_add(body, svg, o.body.len - (size_t)(svg - o.body.s));
        sb_puts(body, "</div>\n<p class=hint>Drag across the chart to choose a time range: every view then shows "
                      "the allocations made in it (or type since and until above).</p>\n");
    }
    sb_free(&o.body);
}

/* The timeline's plot (report's page: /timeline.svg, an image), then the
 * command's view. */
static void plot_view(const struct view *v, const struct serve_req *r, struct strbuf *body, int *status)
{
    if (r->in_page) picture_img(body, r, "/timeline.svg", "memory over time");
    else if (!r->server) plot_inline(body, r);
    if (!strcmp(v->cmd, "timeline")) csv_view(v, r, body, status);
    else text_view(v, r, body, status);
}

/* /flame, /tree, /bottomup, /callers and /source: serve_run of their own
 * over the state (serve_tree.c, serve_source.c). */
static void tree_view(const struct view *v, const struct serve_req *r, struct strbuf *body, int *status)
{
    struct serve_argv a = { 0 };
    struct strbuf out = { 0 }, err = { 0 };
    argv_add(&a, v->path + 1);
    argv_state(&a, r, v->mask);
    argv_dbs(&a, r, 0);
    int rc = serve_run(strcmp(v->path, "/source") ? serve_tree_view : serve_source_view, (void *)r, (int)a.n, a.v,
                       &out, &err);
    *status = serve_child_status(rc, &err, body);
    if (rc == 0) sb_add(body, out.s ? out.s : "", out.len);
    argv_free(&a);
    sb_free(&out);
    sb_free(&err);
}

#define TREE_STATE (SP_ALL & ~SP_DEPTH)
const struct view views[] = {
    { "/", "overview", plot_view, "info", NULL, PROC | SP_SINCE | SP_UNTIL, NULL, 0 },   /* info takes no --thread */
    { "/timeline", "timeline", plot_view, "timeline", NULL, PROC | SP_SINCE | SP_UNTIL, NULL, 0 },
    { "/flame", "flame graph", tree_view, NULL, NULL, TREE_STATE, NULL, 0 },
    { "/tree", "top-down", tree_view, NULL, NULL, TREE_STATE, NULL, 0 },
    { "/bottomup", "bottom-up", tree_view, NULL, NULL, TREE_STATE, NULL, 0 },
    { "/callers", "callers", tree_view, NULL, NULL, TREE_STATE, NULL, 0 },
    { "/top", "stacks", csv_view, "top", NULL, SP_ALL, NULL, 1 },
    { "/functions", "functions", csv_view, "top", "--functions", SP_ALL, "function", 1 },  /* sort=inclusive */
    { "/peak", "peak", csv_view, "top", "--snapshot=peak --by=memlive", SP_ALL & ~SP_SNAPSHOT, NULL, 1 },
    { "/leaks", "leaks", csv_view, "leaks", NULL, SP_ALL & ~(SP_BY | SP_SNAPSHOT), NULL, 1 },
    { "/temporaries", "temporaries", csv_view, "top", "--by=ntemp --functions", SP_ALL & ~SP_BY, "function", 1 },
    { "/hist", "histogram", csv_view, "hist", NULL, (SP_SELECT & ~SP_THREAD) | SP_SINCE | SP_UNTIL, NULL, 0 },  /* per process */
    { "/rss", "RSS", csv_view, "rss", NULL, PROC | SP_SNAPSHOT | RULES | SP_DISPLAY, NULL, 1 },
    { "/threads", "threads", csv_view, "top", "--per-thread --functions -n5", SP_ALL, "function", 0 },
    { "/source", "source", tree_view, NULL, NULL, 0, NULL, 0 },
    { "/diff", "diff", csv_view, "diff", NULL, SP_BY | SP_FILTER | SP_EXCLUDE | RULES | SP_DISPLAY | SP_SINCE | SP_UNTIL,
      NULL, 1 },
};
static const size_t nviews = sizeof views / sizeof *views;

static void page_start(struct strbuf *sb, const struct serve_req *r, const char *title)
{
    sb_puts(sb, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>");
    xml_escape(sb, title, strlen(title), 200);
    sb_puts(sb, " \xc2\xb7 mpquery serve</title><style>");
    sb_puts(sb, serve_css);
    sb_puts(sb, "</style></head>\n<body><header><nav>");
    for (size_t i = 0; i < nviews; i++) {
        sb_printf(sb, "<a%s href=\"", !strcmp(views[i].path, r->path) ? " class=cur" : "");
        serve_link(sb, r, views[i].path, NULL);
        sb_printf(sb, "\">%s</a> ", views[i].title);
    }
    sb_puts(sb, "</nav>\n");
    serve_state_form(sb, r);
    serve_range_bar(sb, r);
    sb_puts(sb, "</header>\n<main><h1>");
    xml_escape(sb, title, strlen(title), 200);
    sb_puts(sb, "</h1>\n");
}

static void page_end(struct strbuf *sb)
{
    sb_puts(sb, "</main>\n<script>");
    sb_puts(sb, js);
    sb_puts(sb, "</script></body></html>\n");
}


/* The views a ClickHouse store answers (serve --server): those of the
 * commands that take --server; the others read a profile's files. */
static int on_server(const struct view *v)
{
    static const char *const paths[] = { "/", "/flame", "/tree", "/bottomup", "/callers", "/top", "/functions",
                                         "/peak", "/leaks", "/temporaries", "/hist" };
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
        if (!strcmp(v->path, paths[i])) return 1;
    return 0;
}

int serve_view_body(const struct serve_req *r, struct strbuf *body, int *status)
{
    for (size_t i = 0; i < nviews; i++) {
        if (strcmp(r->path, views[i].path)) continue;
        *status = 200;
        if (r->server && !on_server(&views[i])) {
            *status = 400;
            sb_puts(body, "<p class=note>This view reads a profile's files (mpquery serve DB...): a ClickHouse store "
                          "answers the overview, flame graph, trees, callers, stacks, functions, peak, leaks, "
                          "temporaries and histogram.</p>\n");
            return 0;
        }
        views[i].fn(&views[i], r, body, status);
        return 0;
    }
    return -1;
}

void serve_view(const struct serve_req *r, struct serve_out *o)
{
    for (size_t i = 0; i < sizeof pictures / sizeof *pictures; i++)
        if (!strcmp(r->path, pictures[i].path)) {
            picture(&pictures[i], r, o);
            return;
        }
    struct strbuf body = { 0 };
    if (serve_view_body(r, &body, &o->status) == 0) {
        const char *title = r->path;
        for (size_t i = 0; i < nviews; i++)
            if (!strcmp(r->path, views[i].path)) title = views[i].title;
        page_start(&o->body, r, title);
        sb_add(&o->body, body.s ? body.s : "", body.len);
        page_end(&o->body);
        sb_free(&body);
        return;
    }
    o->status = 404;
    o->type = "text/plain; charset=utf-8";
    sb_puts(&o->body, "404: no such view\n");
}
