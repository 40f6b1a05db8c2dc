/* libFuzzer target: mpquery's rules parser, the rules applied to frame
 * names, and the writers those names reach (make fuzz; tests/rules/fuzz.sh).
 *
 * Input: a rules file, optionally followed by a NUL byte and frame names
 * separated by NUL bytes (any other byte allowed: newlines, ';', invalid
 * UTF-8). Without a NUL, the lines of the input are also the names. A few
 * fixed names are always added. The last byte picks the display options
 * (--no-inline, --lines, --module).
 *
 * The rules are parsed by rules_parse (what rules_load does with a file).
 * When they parse, the names become a small in-memory profile (a chain of
 * stacks root to leaf, and every frame alone; plus an unnamed, a tag, an
 * [unknown] and a [truncated] frame) that view_build maps onto the display
 * tree, fold_walk writes as folded stacks and table_print as text, CSV and
 * JSON. A broken invariant aborts, which libFuzzer reports as a crash:
 *   rules  an error is one line "fuzz:LINE: why"; rules_apply is
 *          deterministic and returns only RULE_* flags
 *   fold   a line has no control character, its frames are the escaped
 *          labels of its node (so no ';' inside a name), it ends with
 *          " VALUE", and the values add up to the counts of all stacks
 *   text   one line per row plus the header, no control characters, the
 *          last column at the same display width on every line
 *   csv    parses back (RFC 4180) into exactly the cells
 *   json   valid UTF-8, no raw control character but the row newlines */
#include "mpquery.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "view.h"

#include <stdlib.h>
#include <string.h>

#define MAX_NAMES 16

#define CHECK(cond, what) do { \
        if (!(cond)) { fprintf(stderr, "fuzz_rules: broken invariant: %s\n", what); abort(); } \
    } while (0)

static const char *const fixed_names[] = {
    "main", "malloc", "_Z3fooi",
    "std::vector<int, std::allocator<int> >::push_back(int const&)",
};

/* A name as profile.c loads it: longer than NAME_MAX_BYTES is cut, "..." added. */
static char *load_name(const char *s, size_t n)
{
    size_t keep = n > NAME_MAX_BYTES ? NAME_MAX_BYTES : n;
    char *d = xmalloc(keep + 4);
    memcpy(d, s, keep);
    strcpy(d + keep, n > NAME_MAX_BYTES ? "..." : "");
    return d;
}

/* Appends the pieces of s[0..n) separated by sep to names (at most MAX_NAMES). */
static void split_names(const char *s, size_t n, char sep, char **names, size_t *nnames)
{
    for (size_t pos = 0; pos <= n && *nnames < MAX_NAMES;) {
        const char *end = memchr(s + pos, sep, n - pos);
        size_t len = end ? (size_t)(end - s) - pos : n - pos;
        names[(*nnames)++] = load_name(s + pos, len);
        pos += len + 1;
    }
}

static int is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/* Display width as output.c counts it: bytes that do not continue UTF-8. */
static size_t width(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) w += ((unsigned char)s[i] & 0xc0) != 0x80;
    return w;
}

/* ---------------------------------------------------------------- rules */
static void check_rules(const struct ruleset *rs, char **names, size_t nnames)
{
    struct strbuf a = { 0 }, b = { 0 };
    for (size_t i = 0; i < nnames; i++) {
        size_t n = strlen(names[i]);
        unsigned fa = rules_apply(rs, names[i], n, &a);
        unsigned fb = rules_apply(rs, names[i], n, &b);
        CHECK(!(fa & ~(unsigned)(RULE_DROP | RULE_PRUNE | RULE_ROOT | RULE_HIDE)), "rules_apply: unknown flag");
        CHECK(fa == fb && a.len == b.len && !memcmp(a.s, b.s, a.len), "rules_apply: not deterministic");
        CHECK(strlen(a.s) == a.len, "rules_apply: NUL inside the rewritten name");
    }
    sb_free(&a);
    sb_free(&b);
}

/* ---------------------------------------------------------------- fold */
struct fold_ctx {
    const struct dtree *t;
    const counters *own;
    struct strbuf out, want, tmp;
    int64_t sum;
    size_t lines;
};

static size_t node_depth(const struct dtree *t, uint32_t node)
{
    size_t d = 0;
    for (uint32_t n = node; n != 0; n = t->parent[n]) d++;
    return d;
}

/* Writes a line as mpquery fold does, and checks that the path is the
 * node's labels, root first, each escaped, joined by ';'. */
static void emit_fold(uint32_t node, const char *path, size_t len, void *arg)
{
    struct fold_ctx *x = arg;
    int64_t v = x->own[node].v[NCALLS];
    if (v <= 0) return;
    size_t depth = node_depth(x->t, node);
    uint32_t *chain = xmalloc(depth * sizeof *chain);
    size_t k = 0;
    for (uint32_t n = node; n != 0; n = x->t->parent[n]) chain[k++] = n;
    x->want.len = 0;
    sb_add(&x->want, "", 0);
    while (k-- > 0) {
        uint32_t l = x->t->label[chain[k]];
        x->tmp.len = 0;
        fold_escape(x->t->labels.str[l], x->t->labels.len[l], &x->tmp);
        sb_add(&x->want, x->tmp.s, x->tmp.len);
        if (k) sb_putc(&x->want, ';');
    }
    free(chain);
    CHECK(len == x->want.len && !memcmp(path, x->want.s, len), "fold: path is not the node's escaped labels");
    size_t semis = 0;
    for (size_t i = 0; i < len; i++) semis += path[i] == ';';
    CHECK(semis + 1 == depth, "fold: ';' inside a name");
    sb_add(&x->out, path, len);
    sb_printf(&x->out, " %lld\n", (long long)v);
    x->sum += v;
    x->lines++;
}

/* Reads the folded output back as flamegraph.pl does: per line, the value
 * after the last space, frames split at ';'. */
static void check_fold_output(const struct fold_ctx *x)
{
    const char *s = x->out.s;
    size_t n = x->out.len, lines = 0;
    int64_t sum = 0;
    for (size_t pos = 0; pos < n; lines++) {
        const char *nl = memchr(s + pos, '\n', n - pos);
        CHECK(nl, "fold: last line without newline");
        size_t len = (size_t)(nl - s) - pos;
        const char *line = s + pos;
        for (size_t i = 0; i < len; i++) CHECK(!is_control((unsigned char)line[i]), "fold: control character");
        const char *sp = memrchr(line, ' ', len);
        CHECK(sp && sp > line && (size_t)(sp - line) + 1 < len, "fold: no ' VALUE' at the end");
        int64_t v = 0;
        for (const char *d = sp + 1; d < nl; d++) {
            CHECK(*d >= '0' && *d <= '9', "fold: VALUE is not a number");
            v = v * 10 + (*d - '0');
        }
        CHECK(v > 0, "fold: zero value written");
        sum += v;
        pos += len + 1;
    }
    CHECK(lines == x->lines, "fold: a name broke a line");
    CHECK(sum == x->sum, "fold: values do not read back");
}

/* ---------------------------------------------------------------- tables */
static char *print_table(const struct table *t, int format, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    CHECK(f, "open_memstream");
    table_print(t, format, f);
    CHECK(fclose(f) == 0, "writing the table");
    return buf;
}

static const char *cell_text(const struct table *t, size_t row, size_t col)
{
    return row == 0 ? t->cols[col] : t->cells[(row - 1) * t->ncols + col].s;
}

static void check_text(const struct table *t)
{
    size_t n;
    char *s = print_table(t, FMT_TEXT, &n);
    size_t prefix_width = 0;
    struct strbuf last = { 0 };
    size_t pos = 0, row = 0;
    for (; pos < n; row++) {
        const char *nl = memchr(s + pos, '\n', n - pos);
        CHECK(nl, "text: last line without newline");
        CHECK(row <= t->nrows, "text: more lines than rows");
        size_t len = (size_t)(nl - s) - pos;
        const char *line = s + pos;
        for (size_t i = 0; i < len; i++) CHECK(!is_control((unsigned char)line[i]), "text: control character");
        /* the last column, as the terminal gets text (output.c's
         * text_clean: controls and C1 as spaces, invalid UTF-8 as U+FFFD),
         * without the spaces it ended with, ends the line */
        const char *cell = cell_text(t, row, t->ncols - 1);
        size_t cell_len = strlen(cell);
        while (cell_len && cell[cell_len - 1] == ' ') cell_len--;       /* lines end without spaces */
        last.len = 0;
        text_clean_sb(&last, cell, cell_len);
        CHECK(len >= last.len && !memcmp(line + len - last.len, last.s, last.len), "text: last cell not at the end");
        size_t w = width(line, len - last.len);
        /* an empty last cell: the line ends where the cells before it do */
        CHECK(row == 0 || !last.len || w == prefix_width, "text: last column not aligned");
        if (last.len) prefix_width = w;
        pos += len + 1;
    }
    CHECK(row == t->nrows + 1, "text: not one line per row");
    sb_free(&last);
    free(s);
}

static void check_csv(const struct table *t)
{
    size_t n, pos = 0;
    char *s = print_table(t, FMT_CSV, &n);
    struct strbuf f = { 0 };
    for (size_t row = 0; row <= t->nrows; row++)
        for (size_t col = 0; col < t->ncols; col++) {
            f.len = 0;
            sb_add(&f, "", 0);
            if (pos < n && s[pos] == '"') {
                for (pos++;; pos++) {
                    CHECK(pos < n, "csv: unterminated quoted field");
                    if (s[pos] == '"') {
                        if (pos + 1 < n && s[pos + 1] == '"') { sb_putc(&f, '"'); pos++; continue; }
                        pos++;
                        break;
                    }
                    sb_putc(&f, s[pos]);
                }
            } else {
                for (; pos < n && s[pos] != ',' && s[pos] != '\n'; pos++) {
                    CHECK(s[pos] != '"' && s[pos] != '\r', "csv: quote or CR in an unquoted field");
                    sb_putc(&f, s[pos]);
                }
            }
            const char *want = cell_text(t, row, col);
            CHECK(f.len == strlen(want) && !memcmp(f.s, want, f.len), "csv: a cell does not read back");
            CHECK(pos < n && s[pos] == (col + 1 < t->ncols ? ',' : '\n'), "csv: bad separator");
            pos++;
        }
    CHECK(pos == n, "csv: bytes after the last row");
    sb_free(&f);
    free(s);
}

/* Length of a valid UTF-8 sequence at s, or 0 (independent of output.c's). */
static size_t utf8_valid(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80) return 1;
    size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
    if (!len || len > n || s[0] > 0xf4) return 0;
    uint32_t cp = s[0] & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
    return cp >= min[len] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? len : 0;
}

static void check_json(const struct table *t)
{
    size_t n;
    char *s = print_table(t, FMT_JSON, &n);
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        CHECK(u[i] >= 0x20 || u[i] == '\n', "json: raw control character");
        size_t len = utf8_valid(u + i, n - i);
        CHECK(len, "json: invalid UTF-8");
        i += len;
    }
    free(s);
}

/* One row per node with an own count: leaf label, counts, short path. */
static void check_tables(struct dtree *t, const counters *own)
{
    static const char *const cols[] = { "leaf", "ncalls", "memtot", "where" };
    struct table tab;
    struct strbuf path = { 0 };
    table_init(&tab, 4, cols);
    for (uint32_t n = 1; n < t->n; n++) {
        if (own[n].v[NCALLS] <= 0) continue;
        uint32_t l = t->label[n];
        table_strn(&tab, t->labels.str[l], t->labels.len[l]);
        table_int(&tab, own[n].v[NCALLS]);
        if (n % 2) table_null(&tab);
        else table_double(&tab, (double)own[n].v[MEMTOT] / 3);
        dtree_short_path(t, n, 5, " < ", &path);
        table_strn(&tab, path.s, path.len);
    }
    check_text(&tab);
    check_csv(&tab);
    check_json(&tab);
    table_free(&tab);
    sb_free(&path);
}

/* ---------------------------------------------------------------- profile */
static struct module modules[] = {
    { .id = 1, .path = "/usr/lib/libapp.so", .build_id = "", .base = "libapp.so" },
    { .id = 2, .path = "[tag]", .build_id = "", .base = "[tag]", .special = 1 },
    { .id = 3, .path = "[unknown]", .build_id = "", .base = "[unknown]", .special = 1 },
    { .id = 4, .path = "[truncated]", .build_id = "", .base = "[truncated]", .special = 1 },
};
static const char *files[] = { "/src/app/some file;name.c" };

/* Names as functions: frame k calls frame k + 1 (one chain of stacks), and
 * every frame is also a stack of its own. */
static void check_view(const struct ruleset *rs, char **names, size_t nnames, unsigned opts)
{
    size_t nframes = nnames + 4, nstacks = 2 * nframes;
    struct frame *frames = xcalloc(nframes, sizeof *frames);
    for (size_t k = 0; k < nnames; k++)
        frames[k] = (struct frame){ .id = (int64_t)k + 1, .offset = 16 * (int64_t)k, .module = 0,
                                    .function = (uint32_t)k, .file = k % 4 == 3 ? NONE : 0,
                                    .inline_depth = k % 3 == 2, .line = (int32_t)(k % 5) };
    frames[nnames] = (struct frame){ .offset = 0x1234, .module = 0, .function = NONE, .file = NONE };
    frames[nnames + 1] = (struct frame){ .module = 1, .function = 0, .file = NONE };
    frames[nnames + 2] = (struct frame){ .offset = 0xdead, .module = 2, .function = NONE, .file = NONE };
    frames[nnames + 3] = (struct frame){ .module = 3, .function = NONE, .file = NONE };
    struct stack *stacks = xcalloc(nstacks, sizeof *stacks);
    uint32_t *order = xmalloc(nstacks * sizeof *order);
    counters *stack_c = xcalloc(nstacks, sizeof *stack_c);
    uint32_t *recorded = xmalloc(nstacks * sizeof *recorded);     /* every stack a sample's: its own index */
    int64_t total = 0;
    for (uint32_t s = 0; s < nstacks; s++) {
        int chained = s < nframes;
        stacks[s] = (struct stack){ .id = s + 1, .frame = chained ? s : s - (uint32_t)nframes,
                                    .parent = chained && s ? s - 1 : NONE, .depth = chained ? s : 0 };
        order[s] = s;
        recorded[s] = s;
        stack_c[s].v[NCALLS] = s + 1;
        stack_c[s].v[MEMTOT] = 64 * ((int64_t)s + 1);
        total += s + 1;
    }
    struct profile p = {
        .modules = modules, .nmodules = 4, .functions = (const char **)names, .nfunctions = nnames,
        .files = files, .nfiles = 1, .frames = frames, .nframes = nframes,
        .stacks = stacks, .nstacks = nstacks, .stack_order = order,
        .recorded = recorded, .nrecorded = nstacks, .recorded_of = recorded,
    };
    struct view_opts vo = { .rules = rs, .no_inline = opts & 1, .lines = !!(opts & 2), .module = !!(opts & 4) };
    struct selection sel = { .stack_c = stack_c };
    struct dtree t;
    dtree_init(&t);
    uint32_t *stack_node = xmalloc(nstacks * sizeof *stack_node);
    char err[512];
    CHECK(view_build(&p, &vo, &t, stack_node, err, sizeof err) == 0, "view_build failed without filters");
    for (size_t s = 0; s < nstacks; s++) CHECK(stack_node[s] != NONE && stack_node[s] < t.n, "view: stack without a node");

    counters *own = xcalloc(t.n, sizeof *own), *sub = xmalloc(t.n * sizeof *sub);
    int64_t *keep = xmalloc(t.n * sizeof *keep);
    view_accumulate(&p, &sel, stack_node, own);
    dtree_subtotals(&t, own, sub);
    for (size_t n = 0; n < t.n; n++) keep[n] = sub[n].v[NCALLS] > 0;
    struct fold_ctx x = { .t = &t, .own = own };
    fold_walk(&t, keep, emit_fold, &x);
    CHECK(x.sum == total, "fold: values do not add up to the stacks' counts");
    check_fold_output(&x);
    check_tables(&t, own);

    sb_free(&x.out);
    sb_free(&x.want);
    sb_free(&x.tmp);
    free(keep);
    free(sub);
    free(own);
    free(stack_node);
    dtree_free(&t);
    free(stack_c);
    free(recorded);
    free(order);
    free(stacks);
    free(frames);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    const char *nul = memchr(in, 0, size);
    size_t rules_len = nul ? (size_t)(nul - in) : size;
    struct ruleset *rs = rules_new();
    char err[512] = "";
    int rc = rules_parse(rs, in, rules_len, "fuzz", err, sizeof err);
    if (rc) {
        CHECK(rc == EXIT_BAD_INPUT, "rules_parse: exit code");
        CHECK(!strncmp(err, "fuzz:", 5) && !strchr(err, '\n'), "rules_parse: error not one 'fuzz:LINE: why' line");
        rules_free(rs);
        return 0;
    }
    char *names[MAX_NAMES + sizeof fixed_names / sizeof *fixed_names];
    size_t nnames = 0;
    if (nul) split_names(nul + 1, size - rules_len - 1, 0, names, &nnames);
    else split_names(in, size, '\n', names, &nnames);
    for (size_t i = 0; i < sizeof fixed_names / sizeof *fixed_names; i++)
        names[nnames++] = xstrdup(fixed_names[i]);

    check_rules(rs, names, nnames);
    check_view(rs, names, nnames, size ? data[size - 1] : 0);

    for (size_t i = 0; i < nnames; i++) free(names[i]);
    rules_free(rs);
    return 0;
}
