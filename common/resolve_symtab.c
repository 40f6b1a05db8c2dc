/* The symbol naming an address (resolve.h: resolve_symbol) from a module
 * file's symbol table sorted once (resolve_internal.h says why and how);
 * moved from resolve.c verbatim. */
#define _GNU_SOURCE
#include "resolve_internal.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

struct symtab *resolve_symtabs;


static int msym_cmp(const void *a, const void *b)
{
    const struct msym *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : x->index < y->index ? -1 : x->index > y->index;
}

/* v (in index order) sorted by (lo, index), as qsort with msym_cmp would:
 * a stable radix sort on lo, a byte a pass over the bytes lo uses (libc's
 * 10,000 symbols: 1 M instructions, qsort's 6.6 M, in every process);
 * qsort when the buffer cannot be had. */
static void msym_sort(struct msym *v, size_t n)
{
    if (n < 2) return;
    struct msym *tmp = malloc(n * sizeof *tmp);
    if (!tmp) {
        qsort(v, n, sizeof *v, msym_cmp);
        return;
    }
    GElf_Addr all = 0;
    for (size_t i = 0; i < n; i++) all |= v[i].lo;
    struct msym *from = v, *to = tmp;
    for (unsigned shift = 0; shift < 64 && all >> shift; shift += 8) {
        size_t count[257] = { 0 };
        for (size_t i = 0; i < n; i++) count[((from[i].lo >> shift) & 0xff) + 1]++;
        for (int b = 0; b < 256; b++) count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++) to[count[(from[i].lo >> shift) & 0xff]++] = from[i];
        struct msym *swap = from;
        from = to;
        to = swap;
    }
    if (from != v) memcpy(v, from, n * sizeof *v);
    free(tmp);
}

static int binding_rank(unsigned char info)
{
    int b = GELF_ST_BIND(info);
    return b == STB_GLOBAL ? 3 : b == STB_WEAK ? 2 : b == STB_LOCAL ? 1 : 0;
}

static const char *symbol_of(Dwfl_Module *mod, uint32_t index, GElf_Sym *sym, GElf_Addr *value, GElf_Word *shndx)
{
    return dwfl_module_getsym_info(mod, (int)index, sym, value, shndx, NULL, NULL);
}

static struct symtab *module_symtab(Dwfl_Module *mod, GElf_Addr bias)
{
    const char *path, *build_id;
    GElf_Addr b;
    resolve_module(mod, &path, &build_id, &b);
    for (struct symtab *t = resolve_symtabs; t; t = t->next)
        if (t->path == path && t->build_id == build_id) return t;
    struct symtab *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->path = path;
    t->build_id = build_id;
    int n = dwfl_module_getsymtab(mod);
    t->first_global = dwfl_module_getsymtab_first_global(mod);
    if (n > 1 && t->first_global >= 0 && (t->v = malloc((size_t)n * sizeof *t->v))) {
        for (int i = 1; i < n; i++) {
            GElf_Sym sym;
            GElf_Addr value;
            GElf_Word shndx;
            /* an empty name is offset 0 of the string table: the names
             * themselves are not read (libLLVM's .dynstr, 3 MB, would
             * become resident in the process for a few symbols' sake) */
            const char *name = symbol_of(mod, (uint32_t)i, &sym, &value, &shndx);
            int type = GELF_ST_TYPE(sym.st_info);
            if (!name || !sym.st_name || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
                type == STT_FILE || type == STT_TLS || value < bias)
                continue;
            t->v[t->n++] = (struct msym){ .lo = value - bias, .size = sym.st_size, .index = (uint32_t)i,
                                          .global = i >= (t->first_global ? t->first_global : 1) };
        }
        /* the table has room for every symbol, the undefined and section
         * ones too: give the rest back (never written, so not resident: in
         * the program's heap, the recorder's ledger would count it live) */
        struct msym *fit = realloc(t->v, (t->n ? t->n : 1) * sizeof *t->v);
        if (fit) t->v = fit;
        msym_sort(t->v, t->n);
        GElf_Addr reach = 0, reach_global = 0;
        for (size_t i = 0; i < t->n; i++) {
            struct msym *m = &t->v[i];
            if (m->lo + m->size > reach) reach = m->lo + m->size;
            if (m->global && m->lo + m->size > reach_global) reach_global = m->lo + m->size;
            m->reach = reach;
            m->reach_global = reach_global;
        }
    }
    t->next = resolve_symtabs;
    resolve_symtabs = t;
    return t;
}

struct pick {
    const char *name, *sizeless;
    GElf_Sym sym;
    GElf_Addr value, sizeless_value, min_label;
};

/* libdwfl's try_sym_value, for one candidate. */
static void pick_try(struct pick *p, Dwfl_Module *mod, GElf_Addr addr, int addr_shndx, uint32_t index)
{
    GElf_Sym sym;
    GElf_Addr value;
    GElf_Word shndx;
    const char *name = symbol_of(mod, index, &sym, &value, &shndx);
    if (!name) return;
    if (value + sym.st_size > p->min_label) p->min_label = value + sym.st_size;
    if (!(sym.st_size == 0 || addr - value < sym.st_size)) return;
    if (!p->name || p->value < value || binding_rank(p->sym.st_info) < binding_rank(sym.st_info)) {
        if (sym.st_size != 0) {
            p->name = name, p->sym = sym, p->value = value;
        } else if (!p->name && value >= p->min_label && (int)shndx == addr_shndx) {
            p->sizeless = name, p->sizeless_value = value;
        }
    } else if (sym.st_size != 0 && p->value == value &&
               ((p->sym.st_size > sym.st_size && binding_rank(p->sym.st_info) <= binding_rank(sym.st_info)) ||
                (p->sym.st_size >= sym.st_size && binding_rank(p->sym.st_info) < binding_rank(sym.st_info)))) {
        p->name = name, p->sym = sym, p->value = value;
    }
}

static int index_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The module's table (NULL: none, out of memory), its load bias in *bias:
 * the module's own user data slot remembers it for this session; a new
 * session finds it again by file. */
struct symtab *resolve_mod_symtab(Dwfl_Module *mod, GElf_Addr *bias)
{
    *bias = 0;
    if (!dwfl_module_getelf(mod, bias)) return NULL;
    void **slot = NULL;
    dwfl_module_info(mod, &slot, NULL, NULL, NULL, NULL, NULL, NULL);
    struct symtab *t = slot && *slot ? *slot : module_symtab(mod, *bias);
    if (slot && t) *slot = t;
    return t;
}

const char *resolve_symbol(Dwfl_Module *mod, GElf_Addr addr)
{
    GElf_Addr bias;
    struct symtab *t = resolve_mod_symtab(mod, &bias);
    if (!t || !t->n || addr < bias) return NULL;
    GElf_Addr a = addr - bias;
    size_t lo = 0, hi = t->n;           /* the last symbol starting at or below a */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->v[mid].lo <= a) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return NULL;
    /* candidates: sized symbols containing a, sizeless ones past every end */
    uint32_t cand[64];
    int nc = 0;
    GElf_Addr labels_from = t->v[lo - 1].reach;
    for (size_t j = lo; j-- > 0 && nc < 64;) {
        const struct msym *m = &t->v[j];
        if (m->reach <= a && m->lo < labels_from) break;
        if (m->size ? a - m->lo < m->size : m->lo >= labels_from) cand[nc++] = m->index;
    }
    if (!nc) return NULL;
    qsort(cand, (size_t)nc, sizeof *cand, index_cmp);
    int addr_shndx = -1;
    GElf_Addr sa = addr;
    GElf_Addr sbias;
    Elf_Scn *scn = dwfl_module_address_section(mod, &sa, &sbias);
    if (scn) addr_shndx = (int)elf_ndxscn(scn);
    /* globals, then (if none) locals; min_label over the symbols of the passes run */
    int first = t->first_global ? t->first_global : 1;
    struct pick p = { .min_label = t->v[lo - 1].reach_global + bias };
    for (int i = 0; i < nc; i++)
        if ((int)cand[i] >= first) pick_try(&p, mod, addr, addr_shndx, cand[i]);
    if (!p.name && t->first_global > 1 && (!p.sizeless || p.sizeless_value != addr)) {
        p.min_label = t->v[lo - 1].reach + bias;
        for (int i = 0; i < nc; i++)
            if ((int)cand[i] < first) pick_try(&p, mod, addr, addr_shndx, cand[i]);
    }
    if (!p.name && p.sizeless && p.sizeless_value >= p.min_label) return p.sizeless;
    return p.name;
}
