/* mpquery diff A B: stacks (or functions) of two profiles matched by their
 * paths of names after rules (addresses and ids differ between runs): both
 * profiles are viewed into ONE display tree, so equal paths are equal nodes
 * and matching costs nothing per stack. Rows are sorted by |B - A|, larger
 * first (text: columns named by the files, a totals row, unchanged rows
 * left out unless --all); --fold writes "path A B" lines for
 * flamegraph.pl's differential mode (the difffolded.pl format), --flame a
 * differential flame graph (flame.c): B's widths, coloured by the change
 * of each frame's subtree. */
#include "diff.h"
#include "dtree.h"
#include "flame.h"
#include "commands.h"
#include "listing.h"
#include "load.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "server.h"
#include "tempfile.h"
#include "view.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery diff A.db B.db [options]\n"
"       mpquery diff [options] A1.db A2.db ... -- B1.db B2.db ...\n"
"       mpquery diff --server URL --a-where SQL --b-where SQL [options]\n"
"\n"
"What changed from profile A to profile B, matched by function names after\n"
"rules, largest change (|b - a|) first. Columns: a, b, delta (b - a), ratio\n"
"(b / a, '-' when a is 0). Text names a and b by their files ('a.db memtot'; a\n"
"first line says which files a and b are when the names are long, equal or\n"
"several a side), starts with the totals row ('(total: N stacks, U unchanged\n"
"and M more not shown)') and leaves out the rows that did not change (--all\n"
"keeps them); csv and json have every row.\n"
"A side of several files is their runs as one profile (mpquery top\n"
"--help); options then come before '--'.\n"
"A and B may be one file: --a-run 1 --b-run 2 compares two runs of it,\n"
"--a-snapshot 3 --b-snapshot 9 what grew between two snapshots. A selection\n"
"option after a side's file is that side's: A.db --run 1 B.db --run 2 (all\n"
"before A.db, or all after B.db, they are both sides').\n"
"With --server URL, each side is the runs of the ClickHouse store that\n"
"--a-where and --b-where select (over --where, --exe, --host, --since).\n"
"Text is for people as top's (mpquery top --help): sizes in units, C++\n"
"names shortened, a terminal's width and pager.\n"
"\n";

static const char more[] =
"\n"
"--since and --until: only the allocations made in that window (the\n"
"counters at its until snapshot less those at its since one; see mpquery\n"
"top --help-all, Time windows).\n"
"Each side its own: --a-since, --a-until, --b-since, --b-until (with\n"
"--server too: --a-since 2h --a-until 1h --b-since 1h, what grew in the\n"
"last hour against the hour before).\n"
"--filter and --exclude apply to both profiles. What they leave out is said\n"
"after the table: 'ignored M stacks (N calls, B bytes) in a, M2 stacks (...)\n"
"in b with F filters' (csv and --fold: on stderr; json: the rows are then in\n"
"{\"ignored\": {\"a\": {\"stacks\", \"calls\", \"bytes\"}, \"b\": {...}, \"filters\"},\n"
"\"rows\": [...]}).\n"
"\n"
"example:\n"
"  mpquery diff before.db after.db --by memlive --functions -n 10\n"
"  mpquery diff before.db after.db --fold | flamegraph.pl > diff.svg\n"
"  mpquery diff before.db after.db --flame -o diff.svg\n";

/* What diff compares and how it writes it; the sides' files and own
 * selections (--a-run..., or placed after their files), for text's column
 * names. */
struct diff_args {
    int functions, inclusive, fold, flame, all, rc;
    struct flame_opts f;
    struct dbfiles sides[2];
    const struct select_sides *sel;
};

struct diff_ctx { const int64_t *a, *b; const struct dtree *t; int functions; };

/* Stacks of equal change by their frames' names, leaf first: one order
 * whatever the ids (files, --server, merged profiles). */
static int cmp_paths(const struct dtree *t, uint32_t x, uint32_t y)
{
    while (x != y && x && y) {
        int c = strcmp(t->labels.str[t->label[x]], t->labels.str[t->label[y]]);
        if (c) return c;
        x = t->parent[x], y = t->parent[y];
    }
    return (x > y) - (x < y);       /* the same path, or one ends first */
}

static int cmp_delta(uint32_t x, uint32_t y, void *ctx)
{
    const struct diff_ctx *d = ctx;
    int64_t dx = d->b[x] - d->a[x], dy = d->b[y] - d->a[y];
    int64_t ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy;
    if (ax != ay) return ax > ay ? -1 : 1;
    if (dx != dy) return dx > dy ? -1 : 1;
    if (d->b[x] != d->b[y]) return d->b[x] > d->b[y] ? -1 : 1;
    if (d->functions) return strcmp(d->t->labels.str[x], d->t->labels.str[y]);
    return cmp_paths(d->t, x, y);
}

/* ---------------------------------------------------------------- text's columns */
/* A side's name in text's column heads: its file's name when it is one
 * file, short, and not the other side's; else "a" and "b", which the
 * legend line explains. Short: at most 20 characters, and on a terminal an
 * eighth of its width (10 at 80 columns), so the where column keeps the
 * room to tell its rows apart. */
static size_t side_name_max(const struct common *c)
{
    size_t max = 20;
    return c->out.width && c->out.width / 8 < max ? c->out.width / 8 : max;
}
/* Side k's file name, or NULL when it is not one file with no selection
 * of its own (--a-run...) and a short name. */
static const char *side_name(const struct diff_args *d, int k, size_t max)
{
    if (d->sides[k].n != 1 || d->sel->nargs[k]) return NULL;      /* several files, --server, its own selection */
    const char *path = d->sides[k].paths[0], *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    return strlen(name) <= max ? name : NULL;
}

static int sides_named(const struct common *c, const struct diff_args *d)
{
    const char *a = side_name(d, 0, side_name_max(c)), *b = side_name(d, 1, side_name_max(c));
    return a && b && strcmp(a, b) != 0;
}

/* "a: PATH --a-run 1, b: PATH --run 2..." (the files as listing loaded
 * them, their selections as given), or with --server "a: runs where SQL,
 * b: ...". */
static void legend(const struct listing *l, const struct diff_args *d, struct strbuf *sb)
{
    const struct server_opts *sv = &l->c->server;
    for (int k = 0; k < 2; k++) {
        if (sv->url) {
            sb_printf(sb, "%s%c: %s%s", k ? ", " : "", 'a' + k, sv->side_where[k] ? "runs where " : "every run",
                      sv->side_where[k] ? sv->side_where[k] : "");
        } else {
            sb_printf(sb, "%s%c: %s", k ? ", " : "", 'a' + k, l->q[k].p->path);
        }
        for (size_t i = 0; i < d->sel->nargs[k]; i++)
            sb_printf(sb, " --%s%s %s", d->sel->args[k][i].placed ? "" : k ? "b-" : "a-",
                      select_option_name(d->sel->args[k][i].id), d->sel->args[k][i].arg);
    }
}

/* Column heads: "NAME COUNTER" for a and b (text), plain a, b in csv and json. */
static void column_heads(const struct listing *l, const struct diff_args *d, char head[2][64])
{
    const char *by = counter_name[l->c->out.by];
    int named = sides_named(l->c, d);
    for (int k = 0; k < 2; k++) {
        const char *name = named ? side_name(d, k, side_name_max(l->c)) : k ? "b" : "a";
        if (l->c->out.format == FMT_TEXT) snprintf(head[k], 64, "%s %s", name, by);
        else snprintf(head[k], 64, "%c", 'a' + k);
    }
}

/* Text's first row: both sides' totals, how many rows there are and how
 * many were not shown, unchanged (--all shows them) or past -n; short, to
 * fit 80 columns. */
static void total_row(struct table *tab, const struct listing *l, int64_t ta, int64_t tb, size_t nrows,
                      size_t unchanged, size_t more, int functions)
{
    const struct common *c = l->c;
    table_counter(tab, c->out.by, ta, c->out.human);
    table_counter(tab, c->out.by, tb, c->out.human);
    table_counter(tab, c->out.by, tb - ta, c->out.human);
    if (ta) table_num(tab, (double)tb / (double)ta, 3);
    else table_null(tab);
    struct strbuf sb = { 0 };
    sb_printf(&sb, "(total: %zu %s", nrows, functions ? "functions" : "stacks");
    if (unchanged) sb_printf(&sb, ", %zu unchanged", unchanged);
    if (more) sb_printf(&sb, "%s %zu more", unchanged ? " and" : ",", more);
    sb_puts(&sb, unchanged || more ? " not shown)" : ")");
    table_str(tab, sb.s);
    sb_free(&sb);
}

/* The profiles' totals: every node's own. */
static void profile_totals(const struct listing *l, counters *const *own, int64_t *total)
{
    int by = l->c->out.by;
    total[0] = total[1] = 0;
    for (size_t i = 0; i < l->t.n; i++)
        for (int k = 0; k < 2; k++) total[k] = counter_combine(by, total[k], own[k][i].v[by]);
}

/* A row's A, B, delta and ratio cells. */
static void delta_cells(struct table *tab, const struct common *c, int64_t a, int64_t b)
{
    table_counter(tab, c->out.by, a, c->out.human);
    table_counter(tab, c->out.by, b, c->out.human);
    table_counter(tab, c->out.by, b - a, c->out.human);
    if (a) table_num(tab, (double)b / (double)a, 3);
    else table_null(tab);
}

/* The table of rows (text: one per group with a value, --group) and its
 * rows' display nodes (text's where column; NONE: a totals row). */
struct diff_table { struct table tab; uint32_t *row_node; size_t nrow, cap; int grouped; char head[2][64]; };

/* A group's rows (group NULL: the table's only ones) sorted by |b - a|,
 * larger first; text starts with its totals row (ta, tb) and leaves out
 * unchanged rows unless --all. */
static void print_rows(const struct listing *l, const struct diff_args *d, const char *group, const int64_t *a,
                       const int64_t *b, size_t nitems, const int64_t *total, struct diff_table *dt)
{
    const struct common *c = l->c;
    const struct dtree *t = &l->t;
    int functions = d->functions, text = c->out.format == FMT_TEXT;
    uint32_t *items = xmalloc(nitems * sizeof *items);
    size_t n = 0, nrows = 0, unchanged = 0;
    for (uint32_t i = functions ? 0 : 1; i < nitems; i++) {
        if (!a[i] && !b[i]) continue;
        nrows++;
        if (text && !d->all && a[i] == b[i]) unchanged++;
        else items[n++] = i;
    }
    struct diff_ctx ctx = { a, b, t, functions };
    size_t changed = n;
    n = select_top(items, n, (size_t)c->out.limit, cmp_delta, &ctx);
    dt->row_node = array_grow(dt->row_node, dt->nrow + n + 1, &dt->cap, sizeof *dt->row_node);
    if (text && (nrows || !group)) {
        if (group) table_str(&dt->tab, group);
        total_row(&dt->tab, l, total[0], total[1], nrows, unchanged, changed - n, functions);
        dt->row_node[dt->nrow++] = NONE;
    }
    struct strbuf sb = { 0 };
    for (size_t i = 0; i < n; i++) {
        uint32_t k = items[i];
        if (group) table_str(&dt->tab, group);
        delta_cells(&dt->tab, c, a[k], b[k]);
        if (functions) {
            table_strn(&dt->tab, t->labels.str[k], t->labels.len[k]);
        } else if (text) {
            table_str(&dt->tab, "");    /* where_labels below: the rows told apart, fitted */
            dt->row_node[dt->nrow++] = k;
        } else {
            dtree_short_path(t, k, 0, " < ", &sb);
            table_str(&dt->tab, sb.s);
        }
    }
    sb_free(&sb);
    free(items);
}

/* The table's columns, and at its end the where column, the legend (text)
 * and the table printed. */
static void table_start(const struct listing *l, const struct diff_args *d, struct diff_table *dt)
{
    memset(dt, 0, sizeof *dt);
    column_heads(l, d, dt->head);
    const char *const cols[] = { group_by_name[l->c->sel.group_by], dt->head[0], dt->head[1], "delta", "ratio",
                                 d->functions ? "function" : "where" };
    dt->grouped = l->c->sel.group_by != 0;
    table_init(&dt->tab, 5 + (size_t)dt->grouped, cols + !dt->grouped);
    dt->tab.width = l->c->out.width;
}

static void table_end(const struct listing *l, const struct diff_args *d, struct diff_table *dt)
{
    const struct common *c = l->c;
    int text = c->out.format == FMT_TEXT;
    if (text && !d->functions)
        table_where_column(&dt->tab, 4 + (size_t)dt->grouped, &l->t, dt->row_node, listing_depth(c));
    if (text && !sides_named(c, d)) {
        struct strbuf sb = { 0 };
        if (c->out.pager) pager_start();
        legend(l, d, &sb);
        text_line(stdout, sb.s, sb.len, c->out.width);
        sb_free(&sb);
    }
    listing_print(l, &dt->tab);
    table_free(&dt->tab);
    free(dt->row_node);
}

/* The compared value of each profile per function (self or inclusive). */
static void function_values(struct listing *l, counters *const *own, int inclusive, int64_t *value[2])
{
    size_t nl = l->t.labels.n;
    counters *self = xmalloc(nl * sizeof *self), *incl = xmalloc(nl * sizeof *incl);
    for (size_t i = 0; i < 2; i++) {
        memset(self, 0, nl * sizeof *self);
        memset(incl, 0, nl * sizeof *incl);
        dtree_functions(&l->t, own[i], self, incl);
        for (size_t k = 0; k < nl; k++) value[i][k] = (inclusive ? incl : self)[k].v[l->c->out.by];
    }
    free(self);
    free(incl);
}

/* The values compared (per node, or per function) of own[0], own[1]. */
static void values_of(struct listing *l, const struct diff_args *d, counters *const *own, int64_t **value)
{
    if (d->functions) {
        function_values(l, own, d->inclusive, value);
        return;
    }
    for (size_t n = 0; n < l->t.n; n++) {
        value[0][n] = own[0][n].v[l->c->out.by];
        value[1][n] = own[1][n].v[l->c->out.by];
    }
}

/* --group: the table's rows group by group (listing_group.c). */
static void print_groups(struct listing *l, const struct diff_args *d, int64_t **value, size_t nitems,
                         struct diff_table *dt)
{
    struct listing_groups lg;
    listing_groups_make(l, &lg);
    counters *own[2] = { xmalloc((l->t.n + 1) * sizeof *own[0]), xmalloc((l->t.n + 1) * sizeof *own[1]) };
    int64_t total[2];
    for (size_t k = 0; k < lg.n; k++) {
        listing_group_own(l, &lg, k, own);
        values_of(l, d, own, value);
        profile_totals(l, own, total);
        print_rows(l, d, lg.name[k], value[0], value[1], nitems, total, dt);
    }
    free(own[0]);
    free(own[1]);
    listing_groups_free(&lg);
}

static void print(struct listing *l, void *arg)
{
    struct diff_args *d = arg;
    if (d->flame) {
        d->rc = diff_flame(l, &d->f);
        return;
    }
    size_t nitems = d->functions ? l->t.labels.n : l->t.n;
    int64_t *value[2] = { xmalloc(nitems * sizeof (int64_t)), xmalloc(nitems * sizeof (int64_t)) };
    struct diff_table dt;
    if (!d->fold) table_start(l, d, &dt);
    if (!d->fold && l->c->sel.group_by) {
        print_groups(l, d, value, nitems, &dt);
    } else {
        int64_t total[2];
        values_of(l, d, l->own, value);
        profile_totals(l, l->own, total);
        if (d->fold) diff_fold(l, value[0], value[1]);
        else print_rows(l, d, NULL, value[0], value[1], nitems, total, &dt);
    }
    if (!d->fold) table_end(l, d, &dt);
    free(value[0]);
    free(value[1]);
}

/* A.db B.db, or A1.db A2.db ... -- B1.db B2.db ...: each side's files. */
static int split_sides(const struct common *c, int argc, char **argv, struct dbfiles sides[2])
{
    int n = argc - optind, na = c->operands_a;
    if (na < 0 && n != 2)
        return usage_error(c->cmd, n < 2 ? "needs two profiles A and B"
                                         : "several profiles a side go around '--': A1.db A2.db -- B1.db B2.db");
    if (na < 0) na = 1;
    if (na == 0 || na == n)
        return usage_error(c->cmd, "needs profiles on both sides of '--': A1.db A2.db -- B1.db B2.db");
    sides[0] = dbfiles_of(optind + na, argv, optind);
    sides[1] = dbfiles_of(argc, argv, optind + na);
    return 0;
}

enum { NSIDE = 6 };     /* --a-run ... --a-until */
/* Each side's files, or with --server its SQL; then the --a-... and
 * --b-... selections (side[k]: run, pid, thread, snapshot) over the
 * options both sides take. */
static int diff_sides(struct common *c, char *side[2][NSIDE], int argc, char **argv, struct dbfiles sides[2])
{
    static const int side_id[NSIDE] = { OPT_RUN, OPT_PID, OPT_THREAD, OPT_SNAPSHOT, OPT_WIN_SINCE, OPT_WIN_UNTIL };
    int rc, windows = 0;
    for (int k = 0; k < 2; k++) windows += side[k][4] || side[k][5];
    if (c->server.url) {
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < 4; i++)
                if (side[k][i])
                    return usage_error(c->cmd, "--a-run, --b-pid... do not apply to --server "
                                               "(use --a-where, --b-where, --a-since...)");
        if (!c->server.side_where[0] && !c->server.side_where[1] && !windows)
            return usage_error(c->cmd, "--server needs --a-where, --b-where, --a-since, --a-until, --b-since or "
                                       "--b-until: what each side is");
    } else if ((rc = split_sides(c, argc, argv, sides))) {
        return rc;
    } else if (c->operands_a < 0 && (rc = select_sides_placed(&c->sides, &c->sel, c->cmd))) {
        return rc;          /* A.db --run 1 B.db --run 2 */
    }
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < NSIDE; i++)
            if (side[k][i] && (rc = select_side_option(&c->sides, c->cmd, k, side_id[i], side[k][i]))) return rc;
    select_sides_apply(&c->sides, &c->sel);
    return 0;
}

/* --fold, --flame and --functions: which combine, and how frames are
 * named for each. */
static int diff_modes(struct common *c, struct diff_args *a)
{
    if (a->fold && a->functions) return usage_error(c->cmd, "--fold and --functions do not combine");
    if ((a->fold || a->flame) && c->sel.group_by)
        return usage_error(c->cmd, "--group splits tables: not with --fold or --flame");
    if (a->flame && (a->fold || a->functions))
        return usage_error(c->cmd, "--flame does not combine with --fold or --functions");
    if (!a->flame && (a->f.out || a->f.orientation || a->f.title || a->f.width_arg || a->f.min_width_arg))
        return usage_error(c->cmd, "-o, --icicle, --no-icicle, --title, --width and --min-width go with --flame");
    int rc = flame_check_options(c->cmd, &a->f);
    if (rc || (a->flame && (rc = flame_check_output(c->cmd, &a->f)))) return rc;
    if (a->fold || a->flame) {
        /* folded lines and flame graphs name frames as fold and flame do */
        c->view.collapse = 0;
        c->view.no_signatures = c->out.signatures == 0;
    }
    return 0;
}

/* After the options: the two sides read, compared, printed. */
static int diff_run(struct common *c, struct diff_args *a, char *side[2][NSIDE], int argc, char **argv)
{
    struct dbfiles sides[2] = { { 0 }, { 0 } };
    int rc;
    if ((rc = diff_sides(c, side, argc, argv, sides)) || (rc = diff_modes(c, a))) return rc;
    if (a->flame && (rc = counter_width_check(c->cmd, c->out.by))) return rc;
    if ((rc = check_output(c, a->f.out, sides, 2))) return rc;
    a->sides[0] = sides[0], a->sides[1] = sides[1], a->sel = &c->sides;
    rc = listing_run(c, sides, 2, print, a);
    return rc ? rc : a->rc;
}

/* A side's own selection options, --X-run ... --X-until, into s[0..NSIDE). */
#define SIDE_OPTS(X, s, h) \
    { .name = X "-run", .place = PLACE_SELECT, .arg = "N", .str = &(s)[0] }, \
    { .name = X "-pid", .place = PLACE_SELECT, .arg = "PID", .str = &(s)[1] }, \
    { .name = X "-thread", .place = PLACE_SELECT, .arg = "T", .str = &(s)[2] }, \
    { .name = X "-snapshot", .place = PLACE_SELECT, .arg = "S", .str = &(s)[3] }, \
    { .name = X "-since", .place = PLACE_SELECT, .arg = "TIME", .str = &(s)[4] }, \
    { .name = X "-until", .place = PLACE_SELECT, .arg = "TIME", .str = &(s)[5], .help = h }

int cmd_diff(int argc, char **argv)
{
    struct common c;
    struct diff_args a = { 0 };
    char *side[2][NSIDE] = { { 0 } };   /* --a-run ... --a-until; --b-... */
    const struct opt opts[] = {
        OPTION_BY("compare this counter (default memtot):\n" COUNTER_HELP),
        OPTION_LIMIT,
        { .name = "all", .flag = &a.all, .value = 1,
          .help = "text: also the rows that did not change (default: left\nout, the totals row says how many)" },
        OPTIONS_FUNCTIONS(&a.functions, &a.inclusive, "compare functions instead of stacks",
                          "with --functions, compare self values (default)",
                          "with --functions, compare inclusive values"),
        { .name = "fold", .flag = &a.fold, .value = 1,
          .help = "write 'root;...;leaf A B' lines: flamegraph.pl's\n"
                  "differential input, as difffolded.pl makes (speedscope\n"
                  "does not read two values a line: export each side with\n"
                  "mpquery export --format speedscope instead); with\n"
                  "--format csv 'path,a,b' rows, json {\"by\", \"stacks\":\n"
                  "[{\"path\", \"a\", \"b\"}]}" },
        { .name = "flame", .flag = &a.flame, .value = 1,
          .help = "write a differential flame graph (SVG): widths from B,\n"
                  "red where the counter grew from A, blue where it shrank;\n"
                  "with the options of mpquery flame:" },
        OPTIONS_FLAME(&a.f),
        OPTION_QUIET("with --flame -o, no line saying what it wrote"),
        OPTIONS_FILTER,
        OPTION_DEPTH,
        OPTIONS_DISPLAY("frame display, as in mpquery top --help"),
        OPTIONS_SELECT("select samples in BOTH profiles, as in mpquery top --help"),
        OPTIONS_WINDOW,
        OPTION_GROUP(0),
        SIDE_OPTS("a", side[0], "select in profile A only (over the options above)"),
        SIDE_OPTS("b", side[1], "select in profile B only; the same values as --run,\n"
                  "--pid, --thread, --snapshot (labels, peak...), --since\n"
                  "and --until (with --server too: --a-since 2h --a-until\n"
                  "1h --b-since 1h)"),
        OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable)"),
        OPTIONS_READABLE,
        OPTION_FORMAT("text (default), csv or json"),
        OPTIONS_SERVER_STORE,
        { .name = "a-where", .place = PLACE_SERVER, .advanced = 1, .arg = "SQL", .str = (char **)&c.server.side_where[0], .help = NULL },
        { .name = "b-where", .place = PLACE_SERVER, .advanced = 1, .arg = "SQL", .str = (char **)&c.server.side_where[1],
          .help = "with --server: the runs of side A, of side B (as --where)" },
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "diff", .usage = usage, .more = more, .opts = opts, .dashdash = 1,
                                .missing = "needs two profiles A and B", .readable = 1 };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    return diff_run(&c, &a, side, argc, argv);
}
