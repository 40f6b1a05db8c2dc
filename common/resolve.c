/* Return address → inline chain of (function, file, line), with elfutils'
 * libdw; see resolve.h. Names come from the symbol tables (.symtab, so
 * static functions too; .dynsym; separate debug info found by build-id or
 * debuglink, as the caller's libdwfl callbacks say) and from DWARF for
 * inlined levels. Memory comes from malloc and is never freed: each
 * distinct string is kept once for the life of the process. */
#define _GNU_SOURCE
#include "resolve_internal.h"
#include "debugcache.h"
#include "hash.h"
#include "safeopen.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ strings */

static const char **pool;
static size_t pool_mask, pool_count;

static uint64_t str_hash(const char *s)
{
    return fnv1a(s, FNV_STRING);
}

const char *resolve_intern(const char *s)
{
    if (!s) return NULL;
    if ((pool_count + 1) * 2 > pool_mask + 1) {
        size_t cap = pool ? (pool_mask + 1) * 2 : 1024;
        const char **t = calloc(cap, sizeof *t);
        if (!t) return "";
        for (size_t i = 0; pool && i <= pool_mask; i++) {
            if (!pool[i]) continue;
            size_t j = str_hash(pool[i]) & (cap - 1);
            while (t[j]) j = (j + 1) & (cap - 1);
            t[j] = pool[i];
        }
        free(pool);
        pool = t;
        pool_mask = cap - 1;
    }
    size_t i = str_hash(s) & pool_mask;
    for (; pool[i]; i = (i + 1) & pool_mask)
        if (!strcmp(pool[i], s)) return pool[i];
    char *copy = strdup(s);
    if (!copy) return "";
    pool[i] = copy;
    pool_count++;
    return copy;
}

/* ------------------------------------------------------------ names */

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* C++ names are demangled with the process's own __cxa_demangle when it has
 * one (a C++ program, or mpquery). Nothing is loaded for it: a library
 * loaded into the profiled process would run its constructors and exit
 * handlers there. Names left mangled are demangled by mpquery. */
static const char *demangled(const char *name)
{
    static demangle_fn demangle;
    static int looked;
    if (!name || name[0] != '_' || name[1] != 'Z') return resolve_intern(name);
    if (!looked) {
        looked = 1;
        demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
        if (!demangle) {
            /* The failed lookup left an error message (memory of ours) that
             * the program's next dlerror() would return, then free: the
             * first call takes it, the second frees it. */
            dlerror();
            dlerror();
        }
    }
    if (!demangle) return resolve_intern(name);
    int status = 0;
    char *d = demangle(name, NULL, NULL, &status);
    const char *r = resolve_intern(status == 0 && d ? d : name);
    free(d);
    return r;
}

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *name = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
        name = dwarf_formstring(&attr);
    if (!name) name = dwarf_diename(die);
    return name ? demangled(name) : NULL;
}

/* Source paths as the compiler saw them: relative ones are made absolute
 * with the compilation directory. */
static const char *source_path(const char *file, const char *comp_dir)
{
    if (!file) return NULL;
    if (file[0] == '/' || !comp_dir || !*comp_dir) return resolve_intern(file);
    char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", comp_dir, file[0] == '.' && file[1] == '/' ? file + 2 : file);
    return resolve_intern(buf);
}

static const char *cu_comp_dir(Dwarf_Die *cu)
{
    Dwarf_Attribute attr;
    return cu ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)) : NULL;
}

static int die_call_site(Dwarf_Die *die, Dwarf_Die *cu, const char **file, int *line)
{
    Dwarf_Attribute attr;
    Dwarf_Word v;
    *file = NULL;
    *line = 0;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &v) == 0) *line = (int)v;
    Dwarf_Files *files;
    size_t nfiles;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &v) == 0 &&
        dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && v < nfiles)
        *file = source_path(dwarf_filesrc(files, v, NULL, NULL), cu_comp_dir(cu));
    return *line != 0;
}

/* ------------------------------------------------------------ resolution */

void resolve_module(Dwfl_Module *mod, const char **path, const char **build_id, GElf_Addr *bias)
{
    const char *mainfile = NULL;
    *bias = 0;
    dwfl_module_getelf(mod, bias);
    const char *name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
    *path = resolve_intern(mainfile ? mainfile : name ? name : "[unknown]");
    const unsigned char *bits;
    GElf_Addr vaddr;
    int len = dwfl_module_build_id(mod, &bits, &vaddr);
    char hex[2 * 64 + 1] = "";
    for (int i = 0; i < len && i < 64; i++) snprintf(hex + 2 * i, 3, "%02x", bits[i]);
    *build_id = resolve_intern(hex);
}


/* ------------------------------------------------------------ code scopes */

static int code_scope(int tag)
{
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
           tag == DW_TAG_try_block || tag == DW_TAG_catch_block;
}

/* Visits the code scopes among parent's children in DIE order until
 * visit returns non-zero, and returns that (0: all were visited). With
 * `namespaces` (nothing found yet: at the CU's top level), namespaces are
 * entered too, where a definition may sit, and imported units (dwz) when
 * `imports`; without it, meeting one ends the visit with -1. *children
 * counts the DIEs seen. */
static int each_code_scope(Dwarf_Die *parent, int namespaces, int imports, size_t *children,
                           int (*visit)(Dwarf_Die *die, void *arg), void *arg)
{
    Dwarf_Die up[64], die, next;    /* up: the namespaces we are in */
    int nup = 0;
    if (dwarf_child(parent, &die) != 0) return 0;
    for (;; (*children)++) {
        int tag = dwarf_tag(&die);
        if (code_scope(tag)) {
            int r = visit(&die, arg);
            if (r) return r;
        } else if (namespaces && nup < (int)(sizeof up / sizeof *up)) {
            Dwarf_Die *in = NULL, unit;
            Dwarf_Attribute at;
            if (tag == DW_TAG_namespace || tag == DW_TAG_module) {
                in = &die;
            } else if (tag == DW_TAG_imported_unit) {       /* dwz: a partial unit's DIEs */
                if (!imports) return -1;
                if (dwarf_formref_die(dwarf_attr(&die, DW_AT_import, &at), &unit)) in = &unit;
            }
            if (in && dwarf_child(in, &next) == 0) {
                up[nup++] = die;
                die = next;
                continue;
            }
        }
        while (dwarf_siblingof(&die, &next) != 0) {
            if (nup == 0) return 0;
            die = up[--nup];
        }
        die = next;
    }
}

struct pc_find { Dwarf_Addr pc; Dwarf_Die *out; };

static int contains_pc(Dwarf_Die *die, void *arg)
{
    struct pc_find *f = arg;
    if (dwarf_haspc(die, f->pc) != 1) return 0;
    *f->out = *die;
    return 1;
}

/* The first code scope among parent's children, in DIE order, whose code
 * contains pc, into *out: 1, or 0 for none; found by walking them. */
static int first_walked(Dwarf_Die *parent, Dwarf_Addr pc, int namespaces, Dwarf_Die *out)
{
    struct pc_find f = { pc, out };
    size_t children = 0;
    return each_code_scope(parent, namespaces, 1, &children, contains_pc, &f) == 1;
}

/* The same without the walk: the code scopes among a parent's children
 * (namespaces entered as first_walked enters them), one entry per address
 * range, sorted by start, made at the parent's first lookup and kept in its
 * module's table. A C++ file's CU holds at its top level every declaration
 * of the headers it includes (750,000 DIEs for 3,000 functions using the
 * standard containers), a function the DIEs of every call and inlined
 * instance in it: walked per address, 600 µs each, 5.4 s for the 9,000
 * addresses of such a program's exit. A parent with few children, or
 * that imports units (dwz), keeps the walk. */
struct scope_range { Dwarf_Addr lo, hi, reach; Dwarf_Off die; };   /* reach: the largest hi up to here */
struct scope_index {
    Dwarf_Off key;      /* the parent's offset × 2 + namespaces */
    struct scope_range *v;
    size_t n, cap;
    int walk;           /* not indexed: first_walked */
};
#define INDEX_MIN_CHILDREN 16   /* fewer: walked (the index would cost more than it saves) */

static int range_cmp(const void *a, const void *b)
{
    const struct scope_range *x = a, *y = b;
    return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : x->die < y->die ? -1 : x->die > y->die;
}

/* A code scope's ranges added to the index (non-zero: out of memory). */
static int add_ranges(Dwarf_Die *die, void *arg)
{
    struct scope_index *x = arg;
    Dwarf_Addr base, start, end;
    for (ptrdiff_t off = 0; (off = dwarf_ranges(die, off, &base, &start, &end)) > 0;) {
        if (x->n == x->cap) {
            struct scope_range *v = realloc(x->v, (x->cap = x->cap ? 2 * x->cap : 64) * sizeof *v);
            if (!v) return -1;
            x->v = v;
        }
        x->v[x->n++] = (struct scope_range){ start, end, 0, dwarf_dieoffset(die) };
    }
    return 0;
}

static void index_build(struct scope_index *x, Dwarf_Die *parent, int namespaces)
{
    size_t children = 0;
    if (each_code_scope(parent, namespaces, 0, &children, add_ranges, x) || children < INDEX_MIN_CHILDREN) {
        x->walk = 1;
        free(x->v);
        x->v = NULL;
        x->n = x->cap = 0;
        return;
    }
    if (x->n > 1) qsort(x->v, x->n, sizeof *x->v, range_cmp);
    for (size_t i = 0; i < x->n; i++)
        x->v[i].reach = i && x->v[i - 1].reach > x->v[i].hi ? x->v[i - 1].reach : x->v[i].hi;
}

/* parent's index in the module's table, made now if new. */
static struct scope_index *index_of(struct symtab *t, Dwarf_Die *parent, int namespaces)
{
    Dwarf_Off key = dwarf_dieoffset(parent) * 2 + (namespaces != 0);
    if ((t->scopes_count + 1) * 2 > t->scopes_mask + 1 || !t->scopes) {
        size_t old = t->scopes ? t->scopes_mask + 1 : 0, cap = old ? 2 * old : 256;
        struct scope_index **v = calloc(cap, sizeof *v);
        if (!v) return NULL;
        for (size_t i = 0; i < old; i++) {
            if (!t->scopes[i]) continue;
            size_t j = fib_hash(t->scopes[i]->key, 32) & (cap - 1);
            while (v[j]) j = (j + 1) & (cap - 1);
            v[j] = t->scopes[i];
        }
        free(t->scopes);
        t->scopes = v;
        t->scopes_mask = cap - 1;
    }
    size_t i = fib_hash(key, 32) & t->scopes_mask;
    for (; t->scopes[i]; i = (i + 1) & t->scopes_mask)
        if (t->scopes[i]->key == key) return t->scopes[i];
    struct scope_index *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    x->key = key;
    index_build(x, parent, namespaces);
    t->scopes[i] = x;
    t->scopes_count++;
    return x;
}

/* first_walked's answer: by parent's index when its DIEs are the module's
 * own DWARF's (dw, not a split or dwz file's: the table keys by offset),
 * else by the walk. */
static int first_scope(struct symtab *t, Dwarf *dw, Dwarf_Die *parent, Dwarf_Addr pc, int namespaces,
                       Dwarf_Die *out)
{
    struct scope_index *x = t && dw && dwarf_cu_getdwarf(parent->cu) == dw ? index_of(t, parent, namespaces) : NULL;
    if (!x || x->walk) return first_walked(parent, pc, namespaces, out);
    size_t lo = 0, hi = x->n;   /* past the last range starting at or below pc */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (x->v[mid].lo <= pc) lo = mid + 1;
        else hi = mid;
    }
    Dwarf_Off first = 0;        /* the first in DIE order of those containing pc */
    for (size_t j = lo; j-- > 0 && x->v[j].reach > pc;)
        if (pc < x->v[j].hi && (!first || x->v[j].die < first)) first = x->v[j].die;
    return first && dwarf_offdie(dw, first, out) != NULL;
}

/* The function and the inlined instances whose code contains pc, outermost
 * first: the CU's first code scope containing pc, then the first of its
 * children containing pc, and so on. (dwarf_getscopes gives the innermost
 * chain, but then each inlined level's caller needs dwarf_getscopes_die,
 * another walk from the CU's start: one walk per level.) */
static int pc_scopes(struct symtab *t, Dwarf *dw, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *out, int max)
{
    Dwarf_Die scope;
    int n = 0;
    if (!first_scope(t, dw, cu, pc, 1, &scope)) return 0;
    for (;;) {
        int tag = dwarf_tag(&scope);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
            if (n == max) return n;
            out[n++] = scope;
        }
        Dwarf_Die inner;
        if (!first_scope(t, dw, &scope, pc, n == 0, &inner)) return n;
        scope = inner;
    }
}

int resolve_chain(Dwfl_Module *mod, Dwarf_Addr addr, struct sym_frame *out)
{
    Dwarf_Addr pc = addr - 1;   /* the call instruction, not the one after it */
    const char *symname = resolve_symbol(mod, pc);

    /* innermost source position */
    const char *file = NULL;
    int line = 0;
    Dwfl_Line *dl = dwfl_module_getsrc(mod, pc);
    if (dl) {
        const char *f = dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL);
        file = source_path(f, dwfl_line_comp_dir(dl));
    }

    /* inline chain, innermost first: each inlined level is named with the
     * position of the next one inside it, then its own call site. */
    struct sym_frame chain[RES_MAX_INLINE];
    int n = 0, done = 0;
    Dwarf_Addr cubias, bias;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &cubias);
    Dwarf_Die scopes[RES_MAX_INLINE];
    struct symtab *t = cu ? resolve_mod_symtab(mod, &bias) : NULL;
    /* the indexes are kept by file: not for a file without a build-id,
     * which another could replace at the same path */
    Dwarf *dw = t && t->build_id[0] ? dwfl_module_getdwarf(mod, &bias) : NULL;
    int nscopes = cu ? pc_scopes(t, dw, cu, pc - cubias, scopes, RES_MAX_INLINE) : 0;
    for (int i = nscopes - 1; i >= 0 && n < RES_MAX_INLINE - 1; i--) {
        chain[n++] = (struct sym_frame){ .function = die_name(&scopes[i]), .file = file, .line = line };
        if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
            done = 1;
            break;
        }
        die_call_site(&scopes[i], cu, &file, &line);  /* position in the caller */
    }
    if (!done) chain[n++] = (struct sym_frame){ .file = file, .line = line };
    /* the real function: the symbol table's name is the qualified one
     * (without its symbol version, "memcpy@@GLIBC_2.14" → "memcpy") */
    if (symname) {
        char unversioned[1024];
        const char *at = strchr(symname, '@');
        if (at && (size_t)(at - symname) < sizeof unversioned) {
            memcpy(unversioned, symname, (size_t)(at - symname));
            unversioned[at - symname] = 0;
            symname = unversioned;
        }
        chain[n - 1].function = demangled(symname);
    }

    for (int i = 0; i < n; i++) {
        out[i] = chain[n - 1 - i];
        out[i].module = NULL;
        out[i].build_id = NULL;
        out[i].offset = 0;
    }
    return n;
}

/* Everything above given back (the recorder's detach: symbols_release):
 * the modules' tables, their scope indexes and the strings; the libdwfl
 * sessions that used them are ended first. */
void resolve_release(void)
{
    for (struct symtab *t = resolve_symtabs, *next; t; t = next) {
        next = t->next;
        for (size_t i = 0; t->scopes && i <= t->scopes_mask; i++)
            if (t->scopes[i]) free(t->scopes[i]->v), free(t->scopes[i]);
        free(t->scopes), free(t->v), free(t);
    }
    resolve_symtabs = NULL;
    for (size_t i = 0; pool && i <= pool_mask; i++) free((char *)pool[i]);
    free(pool);
    pool = NULL, pool_mask = pool_count = 0;
}
