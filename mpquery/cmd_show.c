/* mpquery show DB STACK: one stack in full, leaf first, one frame a line
 * like a debugger backtrace, with the stack's counters under the selection
 * on a header line. Only the name-rewriting (replace) rules apply: no frame
 * is dropped or cut, this is the raw stack. */
#include "mpquery.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
"usage: mpquery show DB STACK [options]\n"
"\n"
"One stack (its database id, as top prints it) in full, leaf first:\n"
"  #N  function  file:line [inlined]  (module+0xOFFSET)\n"
"Names are rewritten by the replace rules; no frame is dropped or cut.\n"
"\n"
"  --raw               names exactly as stored (no rules at all)\n"
"  --run N|latest|all, --pid PID, --thread TID, --snapshot S\n"
"                      which samples the header's counters sum (as in top)\n"
"  --rules FILE        apply a rules file after filters/default.rules (repeatable)\n"
"  --no-default-rules  do not apply filters/default.rules\n"
"  --format F          text (default), csv (one row a frame) or json\n"
"\n"
"example:\n"
"  mpquery show app.db 1234\n";

static const struct option long_options[] = {
    { "raw", no_argument, NULL, OPT_RAW },
    { "run", required_argument, NULL, OPT_RUN },
    { "pid", required_argument, NULL, OPT_PID },
    { "thread", required_argument, NULL, OPT_THREAD },
    { "snapshot", required_argument, NULL, OPT_SNAPSHOT },
    { "rules", required_argument, NULL, OPT_RULES },
    { "no-default-rules", no_argument, NULL, OPT_NO_DEFAULT_RULES },
    { "format", required_argument, NULL, OPT_FORMAT },
    { "help", no_argument, NULL, OPT_HELP },
    { 0 }
};

static void show_stack(const struct common *c, const struct profile *p, const struct selection *sel,
                       uint32_t s, const struct ruleset *rules)
{
    const counters *k = &sel->stack_c[s];
    struct strbuf base = { 0 }, name = { 0 }, loc = { 0 }, where = { 0 };
    static const char *const cols[] = { "index", "function", "file", "line", "inline_depth",
                                        "module", "offset" };
    struct table tab;
    table_init(&tab, 7, cols);
    int index = 0;
    for (uint32_t f = s; f != NONE; f = p->stacks[f].parent, index++) {
        uint32_t fr = p->stacks[f].frame;
        const struct frame *x = &p->frames[fr];
        const struct module *m = &p->modules[x->module];
        table_int(&tab, index);
        if (x->function == NONE && !m->special) {
            table_str(&tab, "??");
        } else {
            frame_base_name(p, fr, &base);
            rules_apply(rules, base.s, base.len, &name);
            table_strn(&tab, name.s, name.len);
        }
        table_str(&tab, x->file == NONE ? "" : p->files[x->file]);
        table_int(&tab, x->line);
        table_int(&tab, x->inline_depth);
        table_str(&tab, m->path);
        table_int(&tab, x->offset);
    }
    if (c->format == FMT_CSV) {
        table_print(&tab, FMT_CSV, stdout);
    } else if (c->format == FMT_JSON) {
        printf("{\"stack\": %lld", (long long)p->stacks[s].id);
        for (int i = 0; i < NCOUNTERS; i++) printf(", \"%s\": %lld", counter_name[i], (long long)k->v[i]);
        printf(", \"frames\": ");
        table_print(&tab, FMT_JSON, stdout);
        printf("}\n");
    } else {
        printf("stack %lld:", (long long)p->stacks[s].id);
        for (int i = 0; i < NCOUNTERS; i++) printf(" %s %lld", counter_name[i], (long long)k->v[i]);
        printf("\n");
        for (size_t r = 0; r < tab.nrows; r++) {
            const struct cell *row = &tab.cells[r * tab.ncols];
            loc.len = 0;
            sb_add(&loc, "", 0);
            if (row[2].s[0]) {
                sb_puts(&loc, row[2].s);
                if (strcmp(row[3].s, "0") != 0) sb_printf(&loc, ":%s", row[3].s);
            }
            if (strcmp(row[4].s, "0") != 0) sb_puts(&loc, loc.len ? " [inlined]" : "[inlined]");
            where.len = 0;
            sb_printf(&where, "(%s+0x%llx)", row[5].s, (unsigned long long)strtoll(row[6].s, NULL, 10));
            printf("#%-3s ", row[0].s);
            text_clean(stdout, row[1].s, strlen(row[1].s));
            if (loc.len) { fputs("  ", stdout); text_clean(stdout, loc.s, loc.len); }
            fputs("  ", stdout);
            text_clean(stdout, where.s, where.len);
            fputc('\n', stdout);
        }
    }
    table_free(&tab);
    sb_free(&base); sb_free(&name); sb_free(&loc); sb_free(&where);
}

int cmd_show(int argc, char **argv)
{
    struct common c;
    common_init(&c, "show");
    int raw = 0, opt, rc;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":", long_options, NULL)) != -1) {
        if (opt == OPT_HELP) { fputs(help, stdout); return 0; }
        if (opt == OPT_RAW) { raw = 1; continue; }
        rc = common_option(&c, opt, optarg);
        if (rc < 0) return EXIT_BAD_INPUT;
        if (rc == 0) return bad_option(c.cmd, opt, argv);
    }
    if (optind + 2 != argc)
        return usage_error(c.cmd, optind + 2 > argc ? "needs DB and STACK" : "too many arguments");
    int64_t id;
    if (parse_int64(argv[optind + 1], &id))
        return usage_error(c.cmd, "bad stack id '%s'", argv[optind + 1]);

    struct ruleset *rules = NULL;
    if (raw) c.no_default_rules = 1;
    if (!raw && (rc = load_rules(&c, &rules))) return rc;
    struct profile *p;
    if ((rc = load_profile(argv[optind], &p))) { rules_free(rules); return rc; }
    struct selection sel;
    rc = select_or_report(&c, p, &sel);
    uint32_t s = profile_stack_index(p, id);
    if (!rc && s == NONE) rc = error(EXIT_BAD_INPUT, "%s: no stack %lld", p->path, (long long)id);
    if (!rc) show_stack(&c, p, &sel, s, rules);
    selection_free(&sel);
    profile_free(p);
    rules_free(rules);
    return rc;
}
