/* mpquery leaks: the blocks still allocated at the selected snapshot (each
 * process's last, i.e. exit, by default), by path after rules (merged like
 * top), largest bytes first, then most blocks, then stack id. A row is a
 * path with live blocks (nlive = ncalls - nfree) or live bytes (memlive);
 * the selection keeps only such stacks (select_opts.live_only), so merged
 * counts and what the filters ignore are counted in leaking stacks only.
 * Known leaks are ignored through --filter, --exclude and --suppressions
 * (rules files whose drop, prune and root rules mark them); the summary
 * says how much was ignored, so nothing disappears silently. */
#include "mpquery.h"
#include "commands.h"
#include "listing.h"
#include "load.h"
#include "options.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "view.h"

#include <stdlib.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery leaks DB... [options]\n"
"\n"
"Blocks never freed: what is still allocated at the selected snapshot (each\n"
"process's last, at exit, by default), by stack after rules, largest first.\n"
"Columns: blocks (nlive = ncalls - nfree), bytes (memlive), stack, where.\n"
"\n";

static const char more[] =
"\n"
"A suppressions file is a rules file (see filters/README.md) of known leaks:\n"
"a stack is ignored when a frame of its path (the names as shown, after the\n"
"rules) is marked by one of the file's drop, prune or root rules, which here\n"
"all mean 'a known leak'; its replace rules only rewrite the name that the\n"
"rules below them test. A bad line is 'mpquery: FILE:LINE: why', exit 2.\n"
"\n"
"The text ends with one line (its words do not change with the numbers):\n"
"  N leaked blocks (B bytes) in K stacks (R rows); ignored M stacks (L blocks,\n"
"  X bytes) with F filters\n"
"K counts the recorded stacks that leak, R the rows they make after rules,\n"
"also those -n does not show (M: the stacks ignored); F counts --filter,\n"
"--exclude and the drop, prune and root rules of the suppressions files.\n"
"csv: one row a leak ('ignored ...' on stderr when something was ignored).\n"
"json: {\"summary\": {\"blocks\", \"bytes\", \"stacks\", \"rows\", \"ignored_stacks\",\n"
"\"ignored_blocks\", \"ignored_bytes\", \"filters\"}, \"leaks\": [{\"stack\",\n"
"\"blocks\", \"bytes\", \"frames\"}, ...]}\n"
"\n"
"example:\n"
"  mpquery leaks app.db --suppressions known-leaks.rules --lines\n";

/* The leaking rows, sorted (the first `shown`), and the sums of all. */
struct leaks {
    uint32_t *items, *rep, *nmerged;    /* rep, nmerged: per node (node_stacks) */
    size_t n, shown;                    /* rows, rows shown */
    size_t stacks;                      /* recorded stacks in the rows */
    int64_t blocks, bytes;
};


static void find_leaks(const struct listing *l, struct leaks *k)
{
    const struct dtree *t = &l->t;
    const counters *own = l->own[0];
    k->rep = xmalloc(t->n * sizeof *k->rep);
    k->nmerged = xmalloc(t->n * sizeof *k->nmerged);
    node_stacks(&l->q[0], t, MEMLIVE, k->rep, k->nmerged);
    k->items = xmalloc(t->n * sizeof *k->items);
    for (uint32_t i = 1; i < t->n; i++) {
        if ((own[i].v[NLIVE] <= 0 && own[i].v[MEMLIVE] <= 0) || k->rep[i] == NONE) continue;
        k->items[k->n++] = i;
        k->stacks += k->nmerged[i];
        k->blocks = sat_add(k->blocks, own[i].v[NLIVE]);
        k->bytes = sat_add(k->bytes, own[i].v[MEMLIVE]);
    }
    struct order_ctx ctx = { own, l->q[0].p, k->rep, NULL, MEMLIVE };
    k->shown = select_top(k->items, k->n, (size_t)l->c->out.limit, order_leak, &ctx);
}

/* text: blocks, bytes, stack ("ID+N"), where; csv: stack and stacks apart;
 * json: stack, blocks, bytes, frames (as top's). */
static void leak_table(const struct listing *l, const struct leaks *k, struct table *tab)
{
    static const char *const text_cols[] = { "blocks", "bytes", "stack", "where" };
    static const char *const csv_cols[] = { "blocks", "bytes", "stack", "stacks", "where" };
    static const char *const json_cols[] = { "stack", "blocks", "bytes", "frames" };
    int format = l->c->out.format;
    if (format == FMT_CSV) table_init(tab, 5, csv_cols);
    else table_init(tab, 4, format == FMT_JSON ? json_cols : text_cols);
    struct strbuf sb = { 0 };
    for (size_t i = 0; i < k->shown; i++) {
        uint32_t node = k->items[i];
        const counters *c = &l->own[0][node];
        int64_t id = l->q[0].p->stacks[k->rep[node]].id;
        if (format == FMT_JSON) {
            table_int(tab, id);
            table_int(tab, c->v[NLIVE]);
            table_int(tab, c->v[MEMLIVE]);
            dtree_frames_json(&l->t, node, &sb);
            table_json(tab, sb.s);
            continue;
        }
        table_int(tab, c->v[NLIVE]);
        table_int(tab, c->v[MEMLIVE]);
        table_stack(tab, format, id, k->nmerged[node]);
        dtree_short_path(&l->t, node, format == FMT_TEXT ? (size_t)l->c->out.depth : 0, " < ", &sb);
        table_str(tab, sb.s);
    }
    sb_free(&sb);
}

static void print_ignored(const struct listing *l, FILE *f)
{
    const struct left_out *x = &l->left[0];
    fprintf(f, "ignored %lld stacks (%lld blocks, %lld bytes) with %zu filters\n", (long long)x->stacks,
            (long long)x->c.v[NLIVE], (long long)x->c.v[MEMLIVE], l->nfilters);
}

static void print_json(const struct listing *l, const struct leaks *k, const struct table *tab)
{
    const struct left_out *x = &l->left[0];
    struct json w;
    json_init(&w, stdout);
    json_open(&w, '{');
    json_key(&w, "summary");
    json_open(&w, '{');
    json_key(&w, "blocks"); json_int(&w, k->blocks);
    json_key(&w, "bytes"); json_int(&w, k->bytes);
    json_key(&w, "stacks"); json_int(&w, (int64_t)k->stacks);
    json_key(&w, "rows"); json_int(&w, (int64_t)k->n);
    json_key(&w, "ignored_stacks"); json_int(&w, x->stacks);
    json_key(&w, "ignored_blocks"); json_int(&w, x->c.v[NLIVE]);
    json_key(&w, "ignored_bytes"); json_int(&w, x->c.v[MEMLIVE]);
    json_key(&w, "filters"); json_int(&w, (int64_t)l->nfilters);
    json_close(&w, '}');
    json_rows_last(&w, "leaks", tab);
}

static void print(struct listing *l, void *arg)
{
    (void)arg;
    struct leaks k = { 0 };
    struct table tab;
    find_leaks(l, &k);
    leak_table(l, &k, &tab);
    if (l->c->out.format == FMT_JSON) {
        print_json(l, &k, &tab);
    } else if (l->c->out.format == FMT_CSV) {
        table_print(&tab, FMT_CSV, stdout);
        fflush(stdout);
        if (l->left[0].stacks) print_ignored(l, stderr);
    } else {
        if (k.shown) table_print(&tab, FMT_TEXT, stdout);
        printf("%lld leaked blocks (%lld bytes) in %zu stacks (%zu rows); ", (long long)k.blocks, (long long)k.bytes,
               k.stacks, k.n);
        print_ignored(l, stdout);
    }
    truncated_line(&l->trunc[0], "", l->c->out.format == FMT_TEXT ? stdout : stderr);
    table_free(&tab);
    free(k.items);
    free(k.rep);
    free(k.nmerged);
}

int cmd_leaks(int argc, char **argv)
{
    struct common c;
    const struct opt opts[] = {
        OPTION_LIMIT,
        OPTIONS_FILTER,
        { .name = "suppressions", .id = OPT_SUPPRESSIONS, .arg = "FILE",
          .help = "ignore the known leaks of a rules file (see below;\n"
                  "repeatable)" },
        OPTION_DEPTH,
        OPTIONS_DISPLAY("frame display, as in mpquery top --help"),
        OPTIONS_SELECT("select samples as in mpquery top --help"),
        OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable)"),
        OPTION_FORMAT("text (default), csv or json"),
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "leaks", .usage = usage, .more = more, .opts = opts,
                                .missing = "missing DB" };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    c.sel.live_only = 1;
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    return listing_run(&c, &files, 1, print, NULL);
}
