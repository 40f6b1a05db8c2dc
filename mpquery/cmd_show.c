/* mpquery show DB STACK: one stack in full, leaf first, one frame a line
 * like a debugger backtrace, with the stack's counters under the selection
 * on a header line. Only the name-rewriting (replace) rules apply: no frame
 * is dropped or cut, this is the raw stack. Frames are named as top names
 * them (names.c: a frame without a symbol `module+0xOFFSET`, C++ names
 * shortened in text), so that a row of top and its stack read the same;
 * a frame whose offset is no address (a tag, a mapping, a Python frame)
 * shows none. */
#include "mpquery.h"
#include "profile.h"
#include "commands.h"
#include "load.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "view.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery show DB... STACK [options]\n"
"\n"
"One stack (its database id, as top prints it) in full, leaf first:\n"
"  #N  function  file:line [inlined]  (module+0xOFFSET)\n"
"Names are rewritten by the replace rules; no frame is dropped, cut or\n"
"folded (Python first, mpquery top --help-all: not here). A\n"
"frame without a symbol is named module+0xOFFSET, as in top. Tags,\n"
"mappings and Python frames have no address: no (module+0xOFFSET), offset\n"
"null in csv and json. Text is for people as top's (mpquery top --help):\n"
"sizes in units, C++ names shortened, a terminal's width and pager.\n"
"\n";

static const char more[] =
"\n"
"example:\n"
"  mpquery show app.db 1234\n";

/* One frame as shown. */
struct shown {
    const char *function;       /* after the replace rules; module+0xOFFSET without a name */
    const char *file;           /* "" when unknown */
    int32_t line, inline_depth;
    const char *module;
    int64_t offset;
    int has_address;            /* offset is an address (names.c: frame_has_address) */
};

/* The frames of stack s, leaf first; names in names' arena, as view.c
 * names them (frame_base_name, the rules, C++ names shortened as o says). */
static size_t collect(const struct profile *p, uint32_t s, const struct view_opts *o,
                      struct arena *names, struct shown **out)
{
    struct strbuf base = { 0 }, name = { 0 };
    size_t n = 0;
    for (uint32_t f = s; f != NONE; f = p->stacks[f].parent) n++;
    struct shown *fr = *out = xmalloc(n * sizeof *fr);
    n = 0;
    for (uint32_t f = s; f != NONE; f = p->stacks[f].parent, n++) {
        const struct frame *x = &p->frames[p->stacks[f].frame];
        const struct module *m = &p->modules[x->module];
        fr[n] = (struct shown){ "", x->file == NONE ? "" : p->files[x->file], x->line,
                                x->inline_depth, m->path, x->offset, frame_has_address(p, x) };
        frame_base_name(p, p->stacks[f].frame, &base);
        rules_apply(o->rules, base.s, base.len, &name);
        if (x->function != NONE && !m->special && (o->collapse || o->no_signatures)) {
            shorten_name(name.s, name.len, o->collapse ? rules_collapse_depth(o->rules) : -1,
                         o->no_signatures, &base);
            struct strbuf t = name;
            name = base;
            base = t;
        }
        fr[n].function = arena_strndup(names, name.s, name.len);
    }
    sb_free(&base);
    sb_free(&name);
    return n;
}

/* csv, json: one row a frame */
static void frames_table(const struct shown *fr, size_t n, struct table *tab)
{
    static const char *const cols[] = { "index", "function", "file", "line", "inline_depth",
                                        "module", "offset" };
    table_init(tab, 7, cols);
    for (size_t i = 0; i < n; i++) {
        table_int(tab, (int64_t)i);
        table_str(tab, fr[i].function);
        table_str(tab, fr[i].file);
        table_int(tab, fr[i].line);
        table_int(tab, fr[i].inline_depth);
        table_str(tab, fr[i].module);
        if (fr[i].has_address) table_int(tab, fr[i].offset);
        else table_null(tab);
    }
}

static void print_json(const struct table *tab, int64_t id, const counters *k, counter_set shown)
{
    struct json w;
    json_init(&w, stdout);
    json_open(&w, '{');
    json_key(&w, "stack");
    json_int(&w, id);
    for (int i = 0; i < NSTACK_COUNTERS; i++) {
        if (!counter_shown(shown, i)) continue;
        json_key(&w, counter_name[i]);
        json_int(&w, k->v[i]);
    }
    json_key(&w, "frames");
    table_json_value(tab, &w);
    json_break(&w, 0);
    json_close(&w, '}');
    putchar('\n');
}

/* "#N  function  file:line [inlined]  (module+0xOFFSET)", text cleaned,
 * each line cut to the terminal's width */
static void print_text(const struct common *c, const struct shown *fr, size_t n, int64_t id, const counters *k,
                       counter_set shown)
{
    struct strbuf line = { 0 };
    char human[32];
    sb_printf(&line, "stack %lld:", (long long)id);
    for (int i = 0; i < NSTACK_COUNTERS; i++) {
        if (!counter_shown(shown, i)) continue;
        if (c->out.human && counter_has_unit(i))
            sb_printf(&line, " %s %s", counter_name[i], fmt_human(i, k->v[i], human, sizeof human));
        else
            sb_printf(&line, " %s %lld", counter_name[i], (long long)k->v[i]);
    }
    text_line(stdout, line.s, line.len, c->out.width);
    for (size_t i = 0; i < n; i++) {
        line.len = 0;
        sb_printf(&line, "#%-3zu %s", i, fr[i].function);
        if (fr[i].file[0] || fr[i].inline_depth != 0) sb_puts(&line, "  ");
        if (fr[i].file[0]) {
            sb_puts(&line, fr[i].file);
            if (fr[i].line != 0) sb_printf(&line, ":%d", fr[i].line);
        }
        if (fr[i].inline_depth != 0) sb_puts(&line, fr[i].file[0] ? " [inlined]" : "[inlined]");
        if (fr[i].has_address) sb_printf(&line, "  (%s+0x%llx)", fr[i].module, (unsigned long long)fr[i].offset);
        text_line(stdout, line.s, line.len, c->out.width);
    }
    sb_free(&line);
}

static void show_stack(const struct common *c, const struct profile *p, const struct selection *sel,
                       uint32_t s)
{
    struct arena names = { 0 };
    struct shown *fr;
    size_t n = collect(p, s, &c->view, &names, &fr);
    static const counters none;     /* a stack no sample row names: a prefix of recorded ones */
    const counters *k = p->recorded_of[s] == NONE ? &none : &sel->stack_c[p->recorded_of[s]];
    if (c->out.pager) pager_start();
    if (c->out.format == FMT_TEXT) {
        print_text(c, fr, n, p->stacks[s].id, k, shown_counters(p));
    } else {
        struct table tab;
        frames_table(fr, n, &tab);
        if (c->out.format == FMT_CSV) table_print(&tab, FMT_CSV, stdout);
        else print_json(&tab, p->stacks[s].id, k, shown_counters(p));
        table_free(&tab);
    }
    free(fr);
    arena_free(&names);
}

int cmd_show(int argc, char **argv)
{
    struct common c;
    int raw = 0;
    const struct opt opts[] = {
        { .name = "raw", .flag = &raw, .value = 1, .help = "names exactly as stored (no rules at all)" },
        OPTIONS_SELECT("which samples the header's counters sum (as in top)"),
        OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable)"),
        OPTIONS_READABLE,
        OPTION_FORMAT("text (default), csv (one row a frame) or json"),
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "show", .usage = usage, .more = more, .opts = opts,
                                .missing = "needs DB and STACK", .readable = 1 };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    if (argc - optind < 2) return usage_error(c.cmd, "%s", d.missing);
    int64_t id;
    if (parse_int64(argv[argc - 1], &id))
        return usage_error(c.cmd, "bad stack id '%s'", argv[argc - 1]);

    struct ruleset *rules = NULL;
    if (raw) {
        c.rules.no_default = 1;
        c.view.collapse = c.view.no_signatures = 0;     /* names exactly as stored */
    }
    if (!raw && (rc = load_rules(&c, &rules))) return rc;
    struct profile *p;
    struct dbfiles files = dbfiles_of(argc - 1, argv, optind);     /* the last operand is STACK */
    if ((rc = load_profiles(&files, select_wants_peak(&c.sel), &p))) { rules_free(rules); return rc; }
    struct selection sel;
    rc = select_or_report(&c, p, &sel);
    uint32_t s = profile_stack_index(p, id);
    if (!rc && s == NONE) rc = error(EXIT_BAD_INPUT, "%s: no stack %lld", p->path, (long long)id);
    if (!rc) show_stack(&c, p, &sel, s);
    selection_free(&sel);
    profile_free(p);
    rules_free(rules);
    return rc;
}
