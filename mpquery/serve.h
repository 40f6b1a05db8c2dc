/* mpquery serve: the profile in the browser. serve.c is the server
 * (libmicrohttpd, the token, the signals); each request runs its view's
 * command in the server's process (serve_run) over the profile and the
 * listings kept between requests (serve_cache.c, listing_cache.c), and
 * nothing proportional to the profile is sent:
 * tables are limited (-n), trees expand one node at a time, flame graphs
 * draw the frames above a minimum width. A view's parameters are the
 * command-line options of the same name, given to the same parsers, so a
 * URL means what the command line means, and a bad one gets the same
 * one-line message (HTTP 400). */
#ifndef MPQUERY_SERVE_H
#define MPQUERY_SERVE_H

#include "mpquery.h"

/* A request: its path and its query's parameters (decoded, in order). */
struct serve_param { const char *key, *value; };
struct serve_req {
    const char *path;
    struct serve_param *params; size_t nparams;
    const char *token;                  /* the server's, for links */
    char *const *dbs; size_t ndbs;      /* the databases served */
    const char *server;                 /* or a ClickHouse store's URL (serve --server) */
    /* mpquery report's page (NULL in serve): the paths its sections show.
     * A link to one of them, without parameters of its own, is to its
     * section (#NAME); any other, to the section that says what mpquery
     * serve shows more (#serve). Pictures are inline, tables and text cut
     * at max_rows rows, flame graphs at flame_bytes bytes (frames
     * narrower than flame_min pixels left out), without the controls. */
    const char *const *in_page;
    size_t max_rows, flame_bytes;
    size_t table_bytes;                 /* a table at most (0: any), cut rows said */
    size_t rows_cap;                    /* n=0's rows at most (0: all): what table_bytes holds */
    double flame_min;
};
/* The first value of key, or NULL (an empty value counts as none). */
const char *serve_param(const struct serve_req *r, const char *key);

/* A view's answer: the HTTP status, its body and type. */
struct serve_out { int status; struct strbuf body; const char *type; };
/* The page for r: its view, or 404. */
void serve_view(const struct serve_req *r, struct serve_out *out);
/* The body of r's view (no page around it) into body, its HTTP status
 * into *status; 0, or -1 when r->path is no view. */
int serve_view_body(const struct serve_req *r, struct strbuf *body, int *status);
/* The anchor of a view's section in a page ("overview" for /). */
const char *serve_anchor(const char *path);
/* serve.css, the pages' style (built into the binary). */
extern const char serve_css[];

/* Runs fn(ctx, argc, argv) here, its stdout into out and its stderr into
 * err (memory files for its time); returns its exit code. */
int serve_run(int (*fn)(void *ctx, int argc, char **argv), void *ctx, int argc, char **argv,
              struct strbuf *out, struct strbuf *err);
/* serve_cache.c: the profile of dbs loaded in the server, again when a
 * file changed, for the next views (load.h's load_preloaded; the
 * listings kept, listing_cache.c, forgotten then). */
void serve_cache_refresh(char *const *dbs, size_t n);
/* The profile loaded by serve_cache_refresh, or NULL. */
struct profile;
const struct profile *serve_cache_profile(void);
/* The exit code of a view that refuses what it was asked (HTTP 403). */
enum { SERVE_FORBIDDEN = 77 };

/* ---------------------------------------------------------------- serve_page.c */
/* s percent-encoded for a URL's query (all but unreserved characters). */
void url_encode(struct strbuf *sb, const char *s);
/* "/PATH?token=T" and the state parameters of r (those every view keeps:
 * by, filter, ..., until), then the ones in extra ("k=v&k=v", encoded),
 * HTML-escaped for an attribute. */
void serve_link(struct strbuf *sb, const struct serve_req *r, const char *path, const char *extra);
/* The time range of r (since, until) when it has one: a line that names
 * it and links to the same view over the whole run (the other state kept). */
void serve_range_bar(struct strbuf *sb, const struct serve_req *r);
/* key is a state parameter (one serve_link keeps). */
int serve_is_state(const char *key);
/* The argv of a command over r's state: argv[0] cmd, the options (each
 * "--NAME=VALUE") of the state parameters in mask, the databases. */
enum { SP_BY = 1, SP_SNAPSHOT = 2, SP_FILTER = 4, SP_EXCLUDE = 8, SP_THREAD = 16, SP_PID = 32, SP_EXE = 64,
       SP_RULES = 128, SP_DEPTH = 256, SP_SINCE = 512, SP_UNTIL = 1024, SP_RUN = 2048, SP_IMAGE = 4096,
       SP_LINES = 8192, SP_NATIVE = 16384, SP_NO_INLINE = 32768, SP_MODULE = 65536, SP_NO_DEFAULT_RULES = 131072,
       SP_SELECT = 2 + 16 + 32 + 64 + 2048 + 4096,
       SP_DISPLAY = SP_LINES | SP_NATIVE | SP_NO_INLINE | SP_MODULE,     /* lines ...: flags (value 1) */
       SP_ALL = (1 << 18) - 1 };
struct serve_argv { char **v; size_t n, cap; };
void argv_add(struct serve_argv *a, const char *s);
void argv_state(struct serve_argv *a, const struct serve_req *r, int mask);
void argv_free(struct serve_argv *a);
/* The CSV text csv (a command's --format csv) as an HTML table; the cells
 * of the column named link (or NULL) link to /callers?function=CELL. */
void csv_table(struct strbuf *sb, const struct serve_req *r, const char *csv, const char *link);

/* s[0..n) as HTML text, its lines kept (for <pre>), each escaped. */
void serve_lines(struct strbuf *sb, const char *s, size_t n);
/* The form of the state parameters (submitting it reloads the view). */
void serve_state_form(struct strbuf *sb, const struct serve_req *r);
/* A view child's exit code as the page's HTTP status (0: 200, 2: 400,
 * SERVE_FORBIDDEN: 403, else 500), its stderr shown in body: the error,
 * or notes (what the filters left out). */
int serve_child_status(int rc, const struct strbuf *err, struct strbuf *body);

/* ---------------------------------------------------------------- serve_tree.c */
struct dtree;
/* /tree, /bottomup, /callers, /flame: the display tree of the profile as
 * fold and top build it (listing_run), with the view's own parameters:
 * path (a node, root-first names separated by ';' as fold writes them),
 * function (callers), zoom, search, reverse, icicle (flame). */
int serve_tree_view(void *ctx, int argc, char **argv);
/* The node of t named by path (root-first names as fold writes them, ';'
 * between; t's child lists built), or as far as the names go. */
uint32_t serve_node_of(struct dtree *t, const char *path);
/* ---------------------------------------------------------------- serve_flame.c */
struct listing;
/* /flame over l's tree (reverse=1: the leaf-first one, built as wide as
 * it is drawn): its links, its search form and the graph, from the node
 * zoom= names (its ancestors drawn full width), frames narrower than
 * 1/1000 of it left out; search=RE marks the frames that match and says
 * the share they hold; icicle=0 puts the root at the bottom. 0, or 2
 * (reported) for a bad search. */
int serve_flame_page(const struct serve_req *r, struct listing *l);
/* ---------------------------------------------------------------- serve_source.c */
/* /source?file=F&line=N: the lines around N of F, only when F is a file
 * the profile's frames name (else SERVE_FORBIDDEN). */
int serve_source_view(void *ctx, int argc, char **argv);

#endif
