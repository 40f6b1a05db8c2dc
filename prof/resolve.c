/* Return address → inline chain of (function, file, line), with elfutils'
 * libdw; see resolve.h. Names come from the symbol tables (.symtab, so
 * static functions too; .dynsym; separate debug info found by build-id or
 * debuglink, as the caller's libdwfl callbacks say) and from DWARF for
 * inlined levels. Memory comes from malloc and is never freed: each
 * distinct string is kept once for the life of the process. */
#define _GNU_SOURCE
#include "resolve.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ strings */

static const char **pool;
static size_t pool_mask, pool_count;

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
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

/* C++ names are demangled with libstdc++'s __cxa_demangle: the program's
 * own when it has one, else libstdc++ is loaded for it (a program with
 * mangled names but no libstdc++ is rare: C++ built with another runtime);
 * failing that they are stored mangled and mpquery demangles them. */
static const char *demangled(const char *name)
{
    static demangle_fn demangle;
    static int looked;
    if (!name || name[0] != '_' || name[1] != 'Z') return resolve_intern(name);
    if (!looked) {
        looked = 1;
        demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
        void *lib = demangle ? NULL : dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (lib) demangle = (demangle_fn)dlsym(lib, "__cxa_demangle");
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

/* The function and the inlined instances whose code contains pc, outermost
 * first, in one walk of the CU's DIE tree: down namespaces and imported
 * units (where a definition may sit) until a containing subprogram is found, then only
 * into the scopes that contain pc. (dwarf_getscopes gives the innermost
 * chain, but then each inlined level's caller needs dwarf_getscopes_die,
 * another walk from the CU's start: one walk per level.) */
static int pc_scopes(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *out, int max)
{
    Dwarf_Die up[64], die, next;    /* up: the namespaces and types we are in */
    int nup = 0, n = 0;
    if (dwarf_child(cu, &die) != 0) return 0;
    for (;;) {
        int tag = dwarf_tag(&die);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
            tag == DW_TAG_lexical_block || tag == DW_TAG_try_block || tag == DW_TAG_catch_block) {
            if (dwarf_haspc(&die, pc) == 1) {
                if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
                    if (n == max) return n;
                    out[n++] = die;
                }
                /* pc is inside: only this scope's children matter now */
                if (dwarf_child(&die, &next) != 0) return n;
                nup = 0;
                die = next;
                continue;
            }
        } else if (n == 0 && nup < (int)(sizeof up / sizeof *up)) {
            Dwarf_Die *in = NULL, unit;
            Dwarf_Attribute at;
            if (tag == DW_TAG_namespace || tag == DW_TAG_module)
                in = &die;
            else if (tag == DW_TAG_imported_unit &&     /* dwz: a partial unit's DIEs */
                     dwarf_formref_die(dwarf_attr(&die, DW_AT_import, &at), &unit))
                in = &unit;
            if (in && dwarf_child(in, &next) == 0) {
                up[nup++] = die;
                die = next;
                continue;
            }
        }
        while (dwarf_siblingof(&die, &next) != 0) {
            if (nup == 0) return n;     /* the scope found, or the CU, is done */
            die = up[--nup];
        }
        die = next;
    }
}

int resolve_chain(Dwfl_Module *mod, Dwarf_Addr addr, struct sym_frame *out)
{
    Dwarf_Addr pc = addr - 1;   /* the call instruction, not the one after it */
    GElf_Off symoff;
    GElf_Sym sym;
    const char *symname = dwfl_module_addrinfo(mod, pc, &symoff, &sym, NULL, NULL, NULL);

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
    Dwarf_Addr cubias;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &cubias);
    Dwarf_Die scopes[RES_MAX_INLINE];
    int nscopes = cu ? pc_scopes(cu, pc - cubias, scopes, RES_MAX_INLINE) : 0;
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
