/* mpquery fold: folded stacks, one line per distinct path after rules,
 * "root;caller;...;leaf VALUE", the input format of flamegraph.pl and of
 * speedscope's importer. Paths that rules make equal are merged; zero
 * values are omitted; lines come out in path order (depth-first over the
 * display tree, siblings sorted by name), built incrementally so that no
 * path string is materialized twice. Frame names never break the format:
 * ';' becomes ':' and control characters (newline, tab, CR...) spaces. */
#include "mpquery.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
"usage: mpquery fold DB [options]\n"
"\n"
"Folded stacks (root;...;leaf VALUE) for flamegraph.pl or speedscope.\n"
"\n"
"  --by COUNTER        value: ncalls, memtot (default), nfree, memlive or maxlive\n"
"  --filter RE         keep only stacks with a frame matching RE (POSIX ERE, on\n"
"                      the names after rules; repeatable: any of them)\n"
"  --exclude RE        drop stacks with a frame matching RE (repeatable)\n"
"  --lines             frames as 'function (file:line)'\n"
"  --no-inline         hide inlined frames (inline_depth > 0)\n"
"  --module            append ' [module]' to named frames\n"
"  --run N|latest|all, --pid PID, --thread TID, --snapshot S\n"
"                      select samples as in mpquery top --help\n"
"  --rules FILE        apply a rules file after filters/default.rules (repeatable)\n"
"  --no-default-rules  do not apply filters/default.rules\n"
"\n"
"In frame names ';' is written as ':' and control characters as spaces.\n"
"A stack whose frames were all dropped by rules is written as '[no frames]'.\n"
"\n"
"example:\n"
"  mpquery fold app.db --by memlive > app.folded && flamegraph.pl app.folded > app.svg\n";

static const struct option long_options[] = {
    { "by", required_argument, NULL, OPT_BY },
    { "filter", required_argument, NULL, OPT_FILTER },
    { "exclude", required_argument, NULL, OPT_EXCLUDE },
    { "lines", no_argument, NULL, OPT_LINES },
    { "no-inline", no_argument, NULL, OPT_NO_INLINE },
    { "module", no_argument, NULL, OPT_MODULE },
    { "run", required_argument, NULL, OPT_RUN },
    { "pid", required_argument, NULL, OPT_PID },
    { "thread", required_argument, NULL, OPT_THREAD },
    { "snapshot", required_argument, NULL, OPT_SNAPSHOT },
    { "rules", required_argument, NULL, OPT_RULES },
    { "no-default-rules", no_argument, NULL, OPT_NO_DEFAULT_RULES },
    { "help", no_argument, NULL, OPT_HELP },
    { 0 }
};

struct fold_ctx { const counters *own; int by; };

static void emit_line(uint32_t node, const char *path, size_t len, void *ctx)
{
    const struct fold_ctx *x = ctx;
    int64_t v = x->own[node].v[x->by];
    if (v <= 0) return;
    fwrite(path, 1, len, stdout);
    printf(" %lld\n", (long long)v);
}

int cmd_fold(int argc, char **argv)
{
    struct common c;
    common_init(&c, "fold");
    int opt, rc;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":", long_options, NULL)) != -1) {
        if (opt == OPT_HELP) { fputs(help, stdout); return 0; }
        rc = common_option(&c, opt, optarg);
        if (rc < 0) return EXIT_BAD_INPUT;
        if (rc == 0) return bad_option(c.cmd, opt, argv);
    }
    if (optind + 1 != argc)
        return usage_error(c.cmd, optind == argc ? "missing DB" : "too many arguments");

    struct ruleset *rules;
    if ((rc = load_rules(&c, &rules))) return rc;
    struct dtree t;
    struct query q;
    dtree_init(&t);
    rc = query_run(&c, argv[optind], &t, &q);
    if (!rc) {
        counters *own = xcalloc(t.n, sizeof *own), *sub = xmalloc(t.n * sizeof *sub);
        view_accumulate(q.p, &q.sel, q.stack_node, own);
        dtree_subtotals(&t, own, sub);
        int64_t *key = xmalloc(t.n * sizeof *key);
        for (size_t n = 0; n < t.n; n++) key[n] = sub[n].v[c.by] > 0;
        struct fold_ctx ctx = { own, c.by };
        fold_walk(&t, key, emit_line, &ctx);
        free(key);
        free(sub);
        free(own);
    }
    query_free(&q);
    dtree_free(&t);
    rules_free(rules);
    return rc;
}
