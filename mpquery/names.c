/* Names for people. A frame's name (frame_base_name) is made here and
 * only here: every view (top's where column, show, --callers, --functions,
 * fold, flame, the exports) prints the label view.c makes of it, so a fact
 * reads the same everywhere. A frame without a symbol is MODULE+0xOFFSET
 * with the module's file name (libLLVM-14.so.1+0x1ecedb4: what ldd,
 * /proc/PID/maps and addr2line -e name; a shorter form would make
 * libssl.so.1.1 and libssl.so.3 one name). Frames whose offset is no
 * address (frame_has_address: tags, mappings, Python frames) never show
 * one, in any view.
 *
 * Then C++ names, the last step of naming a function frame in text
 * output (after every rule of every file, so rules always see whole
 * names): template argument lists nested deeper than the rules'
 * `collapse-templates DEPTH` become <…>, and with --no-signatures the
 * parameter list goes, with the qualifiers after it and the return type
 * before the name (the demangler writes one for function templates, whose
 * names end in '>').
 * Called once per distinct function name (view.c memoizes per function;
 * show names the few frames of one stack).
 *
 * Invariant: a name that is not C++ comes back unchanged. '<' opens a
 * template list only right after a name (an identifier, or an operator's
 * symbol: `operator< <int>`, `operator()<int>`), '>' closes one only when
 * a list is the innermost open bracket (so `operator->`, `(a)>(b)` and
 * Python's `<module>` are text), and a name whose brackets do not pair up
 * is left alone. Parameters are only cut from a final (...) that follows
 * a name without a space, so `(anonymous namespace)` and `name (file.py)`
 * stay. */
#include "mpquery.h"
#include "profile.h"
#include "view.h"

#include <stdlib.h>
#include <string.h>

#define ELLIPSIS "\xe2\x80\xa6"     /* … */

static int ident_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$'
           || c >= 0x80;
}

/* Length of the operator symbol at s (after the word `operator`), or 0;
 * longest first, so that `operator<<` is one symbol. */
static size_t operator_symbol(const char *s, size_t n)
{
    static const char *const ops[] = {
        "->*", "<<=", ">>=", "<=>", "()", "[]", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
        "&&", "||", "+=", "-=", "*=", "/=", "%=", "^=", "&=", "|=",
        "+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=", "<", ">", ",",
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        size_t len = strlen(ops[i]);
        if (len <= n && !memcmp(s, ops[i], len)) return len;
    }
    return 0;
}

/* ---------------------------------------------------------------- lexing */
/* A name cut into tokens: identifiers (with `operator` and its symbol as
 * one), brackets, and single other characters. */
struct lexer {
    const char *s;
    size_t n, i;
    char *open; size_t nopen;       /* the open brackets, innermost last ('<': a template list) */
    int after_name;                 /* a '<' here opens a template list */
    int bad;                        /* brackets that do not pair up */
};
enum { TOK_NAME, TOK_OPERATOR, TOK_OPEN_LIST, TOK_CLOSE_LIST, TOK_SPACE, TOK_OTHER };

static void lex_init(struct lexer *x, const char *s, size_t n)
{
    memset(x, 0, sizeof *x);
    x->s = s;
    x->n = n;
    x->open = xmalloc(n + 1);
}

static int closes(char open, char c)
{
    return (open == '(' && c == ')') || (open == '[' && c == ']') || (open == '{' && c == '}');
}

/* The token at x->i, which it then passes. */
static int lex_next(struct lexer *x)
{
    const char *s = x->s;
    size_t start = x->i;
    unsigned char c = (unsigned char)s[x->i++];
    int after_name = x->after_name;
    x->after_name = 0;
    if (ident_char(c)) {
        while (x->i < x->n && ident_char((unsigned char)s[x->i])) x->i++;
        x->after_name = 1;
        if (x->i - start != 8 || memcmp(s + start, "operator", 8)) return TOK_NAME;
        size_t sym = operator_symbol(s + x->i, x->n - x->i);
        x->i += sym;
        if (sym && x->i + 1 < x->n && s[x->i] == ' ' && s[x->i + 1] == '<') x->i++;  /* operator< <int> */
        return TOK_OPERATOR;
    }
    if (c == '<' && after_name) {
        x->open[x->nopen++] = '<';
        return TOK_OPEN_LIST;
    }
    if (c == '>' && x->nopen && x->open[x->nopen - 1] == '<') {
        x->nopen--;
        return TOK_CLOSE_LIST;
    }
    if (c == '(' || c == '[' || c == '{') {
        x->open[x->nopen++] = (char)c;
    } else if (c == ')' || c == ']' || c == '}') {
        if (!x->nopen || !closes(x->open[x->nopen - 1], (char)c)) x->bad = 1;
        else x->nopen--;
    }
    return c == ' ' ? TOK_SPACE : TOK_OTHER;
}

/* Template lists deeper than depth replaced by <…>, into out; 0, or -1
 * when the brackets do not pair up (out is then undefined). */
static int collapse(const char *s, size_t n, int depth, struct strbuf *out)
{
    struct lexer x;
    lex_init(&x, s, n);
    int level = 0;                      /* template lists open */
    int skip = 0;                       /* the level of the list being skipped, 0: none */
    while (x.i < n && !x.bad) {
        size_t start = x.i;
        int was_skipping = skip;
        int tok = lex_next(&x);
        if (tok == TOK_OPEN_LIST && ++level > depth && !skip) {
            skip = level;
            sb_puts(out, "<" ELLIPSIS ">");
        } else if (tok == TOK_CLOSE_LIST && level-- == skip) {
            skip = 0;
        }
        if (!was_skipping && !skip) sb_add(out, s + start, x.i - start);
    }
    int rc = x.bad || x.nopen ? -1 : 0;
    free(x.open);
    return rc;
}

/* Where the function's name starts in s (a name without its parameter
 * list): after the return type a function template's name has
 * (`std::pair<…> std::map<…>::emplace<…>`), that is after the last space
 * outside brackets, or before an operator's name (`operator new`) the last
 * one before it. */
static size_t name_start(const char *s, size_t n)
{
    struct lexer x;
    lex_init(&x, s, n);
    size_t start = 0;
    int frozen = 0;
    while (x.i < n && !x.bad) {
        int top = x.nopen == 0;
        int tok = lex_next(&x);
        if (tok == TOK_OPERATOR && top) frozen = 1;
        else if (tok == TOK_SPACE && top && !frozen) start = x.i;
    }
    if (x.bad || x.nopen) start = 0;
    free(x.open);
    return start;
}

/* ---------------------------------------------------------------- parameters */
static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && !memcmp(s + n - k, suffix, k);
}

/* Where s's parameter list starts: the final (...) after a name, with the
 * qualifiers after it (` const`, ` &&`, ` noexcept`...); *keep: where a
 * ` [clone .cold]` suffix to put back starts (n: none). n when there is
 * no such list. */
static size_t parameters_start(const char *s, size_t n, size_t *keep)
{
    static const char *const qualifiers[] = { " const", " volatile", " &&", " &", " noexcept", " transaction_safe" };
    size_t end = n;
    /* GCC's clones: `f(int) [clone .cold]`, several possibly */
    while (end > 0 && s[end - 1] == ']') {
        const char *clone = NULL;
        for (const char *p = s; (p = memmem(p, end - (size_t)(p - s), " [clone ", 8)); p++) clone = p;
        if (!clone) break;
        end = (size_t)(clone - s);
    }
    *keep = end;
    for (int again = 1; again;) {
        again = 0;
        for (size_t i = 0; i < sizeof qualifiers / sizeof *qualifiers; i++)
            if (ends_with(s, end, qualifiers[i])) end -= strlen(qualifiers[i]), again = 1;
    }
    if (end == 0 || s[end - 1] != ')') return n;
    size_t depth = 0, i = end;
    while (i-- > 0) {
        if (s[i] == ')') depth++;
        else if (s[i] == '(' && --depth == 0) break;
    }
    if (i == (size_t)-1 || i == 0 || s[i - 1] == ' ') return n;
    return i;
}

/* The name without its parameter list and return type, in place. */
static void without_signature(struct strbuf *name)
{
    size_t keep, params = parameters_start(name->s, name->len, &keep);
    if (params == name->len) return;
    /* only function templates have a return type: their names end in '>' */
    size_t start = params > 0 && name->s[params - 1] == '>' ? name_start(name->s, params) : 0;
    size_t len = params - start, tail = name->len - keep;
    memmove(name->s, name->s + start, len);
    memmove(name->s + len, name->s + keep, tail);
    name->len = len + tail;
    name->s[name->len] = 0;
}

void shorten_name(const char *s, size_t n, int depth, int no_signatures, struct strbuf *out)
{
    out->len = 0;
    sb_add(out, "", 0);
    if (depth < 0 || collapse(s, n, depth, out) != 0) {
        out->len = 0;
        sb_add(out, s, n);
    }
    if (no_signatures) without_signature(out);
}

/* A Python frame (MP_PYTHON, prof/python.c): its module is its .py file,
 * the frame's own file, which no native module is; its offset is a hash
 * of its function and line. */
int frame_is_python(const struct profile *p, const struct frame *f)
{
    const struct module *m = &p->modules[f->module];
    return !m->special && f->file != NONE && !m->build_id[0] && !strcmp(p->files[f->file], m->path);
}

/* Whether f's offset is an address: in its module, or [unknown]'s
 * absolute one (0 there: not even that is known). A tag's, a mapping's
 * and a Python frame's offset is a hash of their names; [truncated] has
 * none. */
int frame_has_address(const struct profile *p, const struct frame *f)
{
    const struct module *m = &p->modules[f->module];
    if (m->special) return !strcmp(m->path, "[unknown]") && f->offset != 0;
    return !frame_is_python(p, f);
}

void frame_base_name(const struct profile *p, uint32_t frame, struct strbuf *out)
{
    const struct frame *f = &p->frames[frame];
    const struct module *m = &p->modules[f->module];
    out->len = 0;
    sb_add(out, "", 0);
    if (f->function != NONE) {
        const char *name = p->functions[f->function];
        if (module_is_tag(m)) sb_puts(out, "[tag] ");
        else if (module_is_mmap(m)) sb_puts(out, "mmap ");    /* "mmap anonymous", "mmap /data/x.bin" */
        char *d = demangle(name);
        sb_puts(out, d ? d : name);
        free(d);
    } else if (frame_has_address(p, f)) {
        sb_printf(out, "%s+0x%llx", m->base, (unsigned long long)f->offset);
    } else if (frame_is_python(p, f)) {
        sb_puts(out, path_basename(p->files[f->file]));     /* a Python frame without its function */
        if (f->line > 0) sb_printf(out, ":%d", f->line);
    } else {
        sb_puts(out, m->path);                      /* [truncated], [unknown], a [tag] without its name */
    }
}
