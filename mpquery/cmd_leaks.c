/* mpquery leaks: the blocks still allocated at the selected snapshot (each
 * process's last, i.e. exit, by default), by path after rules (merged like
 * top), largest bytes first, then most blocks, then stack id. A row is a
 * path with live blocks (nlive = ncalls - nfree) or live bytes (memlive);
 * the selection keeps only such stacks (select_opts.live_only), so merged
 * counts and what the filters ignore are counted in leaking stacks only.
 * Known leaks are ignored through --filter, --exclude and --suppressions
 * (rules files whose drop, prune and root rules mark them), and the C and
 * C++ runtimes' one-time buffers through the built-in list
 * (filters/suppressions.rules, unless --no-default-suppressions); the
 * summary says how much each left out, so nothing disappears silently.
 * --cold N: instead, the live stacks whose blocks stayed unwritten for N
 * snapshots or more (coldage >= N, MP_COLD), by cold bytes (memcold);
 * the filters and suppressions apply alike. */
#include "mpquery.h"
#include "profile.h"
#include "commands.h"
#include "listing.h"
#include "load.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "view.h"

#include <stdlib.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery leaks DB... [options]\n"
"       mpquery leaks --server URL [--where SQL] [options]\n"
"\n"
"Blocks never freed: what is still allocated at the selected snapshot (each\n"
"process's last, at exit, by default), by stack after rules, largest first.\n"
"Columns: blocks (nlive = ncalls - nfree), bytes (memlive), stack, where.\n"
"With --cold: the stacks whose live blocks the program has not written for\n"
"N snapshots or more (recorded with MP_COLD=1), by cold bytes.\n"
"\n";

static const char more[] =
"\n"
"--since and --until: only the allocations made in that window (the\n"
"counters at its until snapshot less those at its since one; see mpquery\n"
"top --help-all, Time windows).\n"
"In a window a leak is a stack whose blocks or bytes live grew in it.\n"
"A suppressions file is a rules file (see filters/README.md) of known leaks:\n"
"a stack is ignored when a frame of its path (the names as shown, after the\n"
"rules) is marked by one of the file's drop, prune or root rules, which here\n"
"all mean 'a known leak'; its replace rules only rewrite the name that the\n"
"rules below them test. A bad line is 'mpquery: FILE:LINE: why', exit 2.\n"
"The built-in list, filters/suppressions.rules, is such a file: the buffers\n"
"glibc, ld.so and libstdc++ allocate once and never free (stdio buffers,\n"
"locale, dlopen and TLS data, libstdc++'s emergency exception pool).\n"
"\n"
"The text ends with a summary for people (scripts: csv or json):\n"
"  N leaked blocks (B) in K stacks (R rows); ignored M stacks (L blocks, X)\n"
"  with F filters\n"
"K counts the recorded stacks that leak, R the rows they make after rules\n"
"(said when it differs from K), also those -n does not show; 'ignored ...'\n"
"only with filters: M the stacks they left out, F counts --filter, --exclude\n"
"and the drop, prune and root rules of the suppressions files; sizes in\n"
"units (--bytes: 'B bytes'); 'ignored ...' on a line of its own on a\n"
"terminal too narrow for both. Then, when the built-in list suppressed\n"
"anything, 'suppressed: S blocks (Y) by the built-in list'\n"
"(--no-default-suppressions shows them).\n"
"With --callers, each row is followed by its whole stack, one frame a line.\n"
"csv: one row a leak ('ignored ...' and 'suppressed: ...' on stderr).\n"
"json: {\"summary\": {\"blocks\", \"bytes\", \"stacks\", \"rows\", \"ignored_stacks\",\n"
"\"ignored_blocks\", \"ignored_bytes\", \"filters\", \"suppressed_stacks\",\n"
"\"suppressed_blocks\", \"suppressed_bytes\"}, \"leaks\": [{\"stack\", \"blocks\",\n"
"\"bytes\", \"frames\"}, ...]}\n"
"\n"
"--cold[=N] (default 3): leak candidates that are still referenced, or\n"
"anything never freed that the program stopped writing to: the stacks\n"
"whose live blocks stayed unwritten (the kernel's soft-dirty bits) for N\n"
"snapshots or more, by memcold. Columns: memcold (live bytes on pages not\n"
"written since the previous snapshot), coldage (snapshots the longest-cold\n"
"block stayed so; of merged rows the largest), memlive, stack, where. A\n"
"cache rewritten now and then is not listed; a buffer written once is.\n"
"The summary: 'K stacks (R rows) cold for N snapshots or more: C cold of L\n"
"live' (json: {\"summary\": {\"stacks\", \"rows\", \"snapshots\", \"memcold\",\n"
"\"memlive\", ...}, \"cold\": [{\"stack\", \"memcold\", \"coldage\", \"memlive\",\n"
"\"frames\"}, ...]}). A profile recorded without MP_COLD=1 has none: exit 2.\n"
"\n"
"example:\n"
"  mpquery leaks app.db --suppressions known-leaks.rules --callers\n"
"  mpquery leaks app.db --cold=5\n";

/* The leaking rows, sorted (the first `shown`), and the sums of all. */
struct leaks {
    int callers;                        /* --callers */
    int64_t cold;                       /* --cold N: N; 0: leaks */
    int rc;                             /* print's exit code (--cold of a profile without them) */
    uint32_t *items, *rep, *nmerged;    /* rep, nmerged: per node (node_stacks) */
    size_t n, shown;                    /* rows, rows shown */
    size_t stacks;                      /* recorded stacks in the rows */
    int64_t blocks, bytes, cold_bytes;
    const counters *own;                /* per node: what is listed (a --group group's) */
    const char *group;                  /* --group: the group's name, the rows' first cell */
};

/* A row: a leak (live blocks or bytes), or with --cold, live blocks cold
 * for k->cold snapshots or more. */
static int listed(const struct leaks *k, const counters *c)
{
    if (k->cold) return c->v[COLDAGE] >= k->cold;
    return c->v[NLIVE] > 0 || c->v[MEMLIVE] > 0;
}


static void find_leaks(const struct listing *l, struct leaks *k)
{
    const struct dtree *t = &l->t;
    const counters *own = k->own;
    k->rep = xmalloc(t->n * sizeof *k->rep);
    k->nmerged = xmalloc(t->n * sizeof *k->nmerged);
    node_stacks(&l->q[0], t, MEMLIVE, k->rep, k->nmerged);
    k->items = xmalloc(t->n * sizeof *k->items);
    for (uint32_t i = 1; i < t->n; i++) {
        if (!listed(k, &own[i]) || k->rep[i] == NONE) continue;
        k->items[k->n++] = i;
        k->stacks += k->nmerged[i];
        k->blocks = sat_add(k->blocks, own[i].v[NLIVE]);
        k->bytes = sat_add(k->bytes, own[i].v[MEMLIVE]);
        k->cold_bytes = sat_add(k->cold_bytes, own[i].v[MEMCOLD]);
    }
    struct order_ctx ctx = { own, l->q[0].p, k->rep, NULL, k->cold ? MEMCOLD : MEMLIVE };
    k->shown = select_top(k->items, k->n, (size_t)l->c->out.limit, k->cold ? order_stack : order_leak, &ctx);
}

/* text: blocks, bytes, stack ("ID+N"), where; csv: stack and stacks apart;
 * json: stack, blocks, bytes, frames (as top's); --group: the group first. */
/* --cold: the counters memcold, coldage, memlive instead of blocks, bytes. */
static const int leak_counters[] = { NLIVE, MEMLIVE }, cold_counters[] = { MEMCOLD, COLDAGE, MEMLIVE };

static void leak_table(const struct listing *l, const struct leaks *k, struct table *tab)
{
    static const char *const text_cols[] = { "group", "blocks", "bytes", "stack", "where" };
    static const char *const csv_cols[] = { "group", "blocks", "bytes", "stack", "stacks", "where" };
    static const char *const json_cols[] = { "group", "stack", "blocks", "bytes", "frames" };
    static const char *const cold_text_cols[] = { "group", "memcold", "coldage", "memlive", "stack", "where" };
    static const char *const cold_csv_cols[] = { "group", "memcold", "coldage", "memlive", "stack", "stacks", "where" };
    static const char *const cold_json_cols[] = { "group", "stack", "memcold", "coldage", "memlive", "frames" };
    int format = l->c->out.format, g = l->c->sel.group_by != 0;
    size_t n = (size_t)(k->cold ? 3 : 2) + (format == FMT_CSV ? 3 : 2) + (size_t)g;
    const char *const *cols = format == FMT_CSV ? (k->cold ? cold_csv_cols : csv_cols)
                            : format == FMT_JSON ? (k->cold ? cold_json_cols : json_cols)
                            : k->cold ? cold_text_cols : text_cols;
    const char *all[8];
    memcpy(all, cols + !g, n * sizeof *all);
    if (g) all[0] = group_by_name[l->c->sel.group_by];
    table_init(tab, n, all);
}

static void leak_rows(const struct listing *l, const struct leaks *k, struct table *tab)
{
    const int *counter = k->cold ? cold_counters : leak_counters;
    int ncounters = k->cold ? 3 : 2;
    int format = l->c->out.format;
    struct strbuf sb = { 0 };
    for (size_t i = 0; i < k->shown; i++) {
        uint32_t node = k->items[i];
        const counters *c = &k->own[node];
        int64_t id = l->q[0].p->stacks[k->rep[node]].id;
        if (k->group) table_str(tab, k->group);
        if (format == FMT_JSON) {
            table_int(tab, id);
            for (int j = 0; j < ncounters; j++) table_int(tab, c->v[counter[j]]);
            dtree_frames_json(&l->t, node, &sb);
            table_json(tab, sb.s);
            continue;
        }
        for (int j = 0; j < ncounters; j++) table_counter(tab, counter[j], c->v[counter[j]], l->c->out.human);
        table_stack(tab, format, id, k->nmerged[node]);
        if (format == FMT_TEXT) {
            table_str(tab, "");         /* where_column */
            continue;
        }
        dtree_short_path(&l->t, node, 0, " < ", &sb);
        table_str(tab, sb.s);
    }
    sb_free(&sb);
}

/* --group: each group's leaks (listing_group.c), its rows in the table,
 * into k the rows shown (items) and the sums of all: the rows of every
 * group (n), the distinct stacks in them. */
static void group_leaks(const struct listing *l, struct leaks *k, struct table *tab)
{
    struct listing_groups lg;
    listing_groups_make(l, &lg);
    counters *own = xmalloc((l->t.n + 1) * sizeof *own);
    uint8_t *seen = xcalloc(l->t.n + 1, 1);     /* a stack leaking in several groups counts once */
    size_t cap = 0;
    for (size_t i = 0; i < lg.n; i++) {
        listing_group_own(l, &lg, i, &own);
        struct leaks g = { .cold = k->cold, .own = own, .group = lg.name[i] };
        find_leaks(l, &g);
        leak_rows(l, &g, tab);
        k->items = array_grow(k->items, k->shown + g.shown, &cap, sizeof *k->items);
        memcpy(k->items + k->shown, g.items, g.shown * sizeof *g.items);
        for (size_t j = 0; j < g.n; j++)
            if (!seen[g.items[j]]++) k->stacks += g.nmerged[g.items[j]];
        k->n += g.n, k->shown += g.shown;
        k->blocks = sat_add(k->blocks, g.blocks);
        k->bytes = sat_add(k->bytes, g.bytes);
        k->cold_bytes = sat_add(k->cold_bytes, g.cold_bytes);
        free(g.items), free(g.rep), free(g.nmerged);
    }
    free(own);
    free(seen);
    listing_groups_free(&lg);
}

/* "ignored M stacks (L blocks, X) with F filters", after what is already
 * in line (the text's summary: on the same line when that fits the
 * terminal, else on its own) */
static void print_ignored(const struct listing *l, struct strbuf *line, FILE *f)
{
    const struct left_out *x = &l->left[0];
    char size[64];
    size_t start = line->len;
    sb_printf(line, "ignored %lld stacks (%lld blocks, %s) with %zu filters", (long long)x->stacks,
              (long long)x->c.v[NLIVE], fmt_size(l->c->out.human, x->c.v[MEMLIVE], size, sizeof size), l->nfilters);
    size_t width = l->c->out.width;
    if (start && width && utf8_chars(line->s, line->len) > width) line->s[start - 1] = '\n';
    fprintf(f, "%s\n", line->s);
}

/* "suppressed: N blocks (B) by the built-in list", when it did. */
static void print_suppressed(const struct listing *l, FILE *f)
{
    const struct left_out *x = &l->suppressed[0];
    char size[64];
    if (!x->stacks) return;
    fprintf(f, "suppressed: %lld block%s (%s) by the built-in list\n", (long long)x->c.v[NLIVE],
            x->c.v[NLIVE] == 1 ? "" : "s", fmt_size(l->c->out.human, x->c.v[MEMLIVE], size, sizeof size));
}

static void print_json(const struct listing *l, const struct leaks *k, const struct table *tab)
{
    const struct left_out *x = &l->left[0];
    struct json w;
    json_init(&w, stdout);
    json_open(&w, '{');
    json_key(&w, "summary");
    json_open(&w, '{');
    if (k->cold) {
        json_key(&w, "stacks"); json_int(&w, (int64_t)k->stacks);
        json_key(&w, "rows"); json_int(&w, (int64_t)k->n);
        json_key(&w, "snapshots"); json_int(&w, k->cold);
        json_key(&w, "memcold"); json_int(&w, k->cold_bytes);
        json_key(&w, "memlive"); json_int(&w, k->bytes);
    } else {
        json_key(&w, "blocks"); json_int(&w, k->blocks);
        json_key(&w, "bytes"); json_int(&w, k->bytes);
        json_key(&w, "stacks"); json_int(&w, (int64_t)k->stacks);
        json_key(&w, "rows"); json_int(&w, (int64_t)k->n);
    }
    json_key(&w, "ignored_stacks"); json_int(&w, x->stacks);
    json_key(&w, "ignored_blocks"); json_int(&w, x->c.v[NLIVE]);
    json_key(&w, "ignored_bytes"); json_int(&w, x->c.v[MEMLIVE]);
    json_key(&w, "filters"); json_int(&w, (int64_t)l->nfilters);
    json_key(&w, "suppressed_stacks"); json_int(&w, l->suppressed[0].stacks);
    json_key(&w, "suppressed_blocks"); json_int(&w, l->suppressed[0].c.v[NLIVE]);
    json_key(&w, "suppressed_bytes"); json_int(&w, l->suppressed[0].c.v[MEMLIVE]);
    json_close(&w, '}');
    json_rows_last(&w, k->cold ? "cold" : "leaks", tab);
}

/* Text: the table (with --callers, each row's stack under it) and the
 * summary lines. */
static void print_text(const struct listing *l, const struct leaks *k, struct table *tab)
{
    char size[64];
    tab->width = l->c->out.width;       /* one-line labels fitted to the terminal (listing.h) */
    table_where_column(tab, tab->ncols - 1, &l->t, k->items, listing_depth(l->c));
    if (l->c->out.pager) pager_start();
    if (k->shown && k->callers) {
        uint32_t *stacks = xmalloc(k->shown * sizeof *stacks);     /* per row: the stack shown */
        for (size_t i = 0; i < k->shown; i++) stacks[i] = k->rep[k->items[i]];
        table_print_callers(tab, &l->q[0], &l->t, &l->c->view, k->items, stacks, stdout);
        free(stacks);
    } else if (k->shown) {
        table_print(tab, FMT_TEXT, stdout);
    }
    struct strbuf line = { 0 };
    if (k->cold) {
        char live[64];
        sb_printf(&line, "%zu stack%s", k->stacks, k->stacks == 1 ? "" : "s");
        if (k->n != k->stacks) sb_printf(&line, " (%zu rows)", k->n);
        sb_printf(&line, " cold for %lld snapshot%s or more: %s cold of %s live", (long long)k->cold,
                  k->cold == 1 ? "" : "s", fmt_size(l->c->out.human, k->cold_bytes, size, sizeof size),
                  fmt_size(l->c->out.human, k->bytes, live, sizeof live));
    } else {
        sb_printf(&line, "%lld leaked block%s (%s) in %zu stack%s", (long long)k->blocks, k->blocks == 1 ? "" : "s",
                  fmt_size(l->c->out.human, k->bytes, size, sizeof size), k->stacks, k->stacks == 1 ? "" : "s");
        if (k->n != k->stacks) sb_printf(&line, " (%zu rows)", k->n);
    }
    if (l->nfilters) {                  /* what filters left out, only when there are some */
        sb_puts(&line, "; ");
        print_ignored(l, &line, stdout);
    } else {
        fprintf(stdout, "%s\n", line.s);
    }
    sb_free(&line);
    print_suppressed(l, stdout);
}

static void print(struct listing *l, void *arg)
{
    struct leaks *opts = arg, k = { .callers = opts->callers, .cold = opts->cold };
    const struct profile *p = l->q[0].p;
    if (k.cold && !p->has_cold) {
        opts->rc = error(EXIT_BAD_INPUT, "%s: recorded without MP_COLD=1: no cold blocks to list", p->path);
        return;
    }
    struct table tab;
    leak_table(l, &k, &tab);
    k.own = l->own[0];
    if (l->c->sel.group_by) {
        group_leaks(l, &k, &tab);
    } else {
        find_leaks(l, &k);
        leak_rows(l, &k, &tab);
    }
    if (l->c->out.format == FMT_JSON) {
        print_json(l, &k, &tab);
    } else if (l->c->out.format == FMT_CSV) {
        table_print(&tab, FMT_CSV, stdout);
        fflush(stdout);
        struct strbuf line = { 0 };
        if (l->left[0].stacks) print_ignored(l, &line, stderr);
        sb_free(&line);
        print_suppressed(l, stderr);
    } else {
        print_text(l, &k, &tab);
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
    int callers = 0, no_builtin = 0;
    char *cold_arg = NULL;
    const struct opt opts[] = {
        OPTION_LIMIT,
        OPTIONS_FILTER,
        { OPTG_RULES, .name = "suppressions", .id = OPT_SUPPRESSIONS, .arg = "FILE",
          .help = "ignore the known leaks of a rules file (see below;\n"
                  "repeatable)" },
        { .name = "no-default-suppressions", .flag = &no_builtin, .value = 1,
          .help = "show the leaks the built-in list suppresses (glibc,\n"
                  "ld.so and libstdc++ one-time buffers)" },
        { .name = "callers", .flag = &callers, .value = 1,
          .help = "text: under each row its whole stack, one frame a line,\n"
                  "leaf first, with file:line where known" },
        { .name = "cold", .arg = "N", .optional = 1, .str = &cold_arg,
          .help = "instead, the stacks whose live blocks stayed unwritten for\n"
                  "N snapshots or more (default 3; MP_COLD=1), by cold bytes" },
        OPTION_DEPTH,
        OPTIONS_DISPLAY("frame display, as in mpquery top --help"),
        OPTIONS_SELECT("select samples as in mpquery top --help"),
        OPTIONS_WINDOW,
        OPTION_GROUP(0),
        OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable)"),
        OPTIONS_READABLE,
        OPTION_FORMAT("text (default), csv or json"),
        OPTIONS_SERVER_STORE,
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "leaks", .usage = usage, .more = more, .opts = opts,
                                .missing = "missing DB", .readable = 1 };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    if (callers && (rc = listing_callers_check(&c, 0))) return rc;
    if (callers && c.sel.group_by) return usage_error("leaks", "--callers does not combine with --group");
    struct leaks k = { .callers = callers };
    if (cold_arg && !*cold_arg) k.cold = 3;
    else if (cold_arg && (parse_int64(cold_arg, &k.cold) || k.cold < 1 || k.cold > 1000000000))
        return usage_error("leaks", "bad value '%s' for --cold (expected a count of snapshots >= 1)", cold_arg);
    c.sel.live_only = 1;
    c.rules.builtin_suppressions = !no_builtin;
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    rc = listing_run(&c, &files, 1, print, &k);
    return rc ? rc : k.rc;
}
