/* Return address → module, build-id, offset, and the inline chain of
 * (function, file, line), outermost first, with elfutils' libdwfl.
 *
 * Each distinct address is resolved once per process and cached for the
 * life of the process (flushes and dlclose reuse it). Names come from the
 * symbol tables (.symtab, so static functions too; .dynsym; separate debug
 * info found by build-id or debuglink) and from DWARF for inlined frames;
 * line info is looked up at address - 1, the call instruction. Runs only
 * in a flush or in dlclose, with the profiler marked internal: its memory
 * comes from the real malloc and is never freed. */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <link.h>
#include <stddef.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_INLINE 32

struct resolved {
    uintptr_t addr;
    int nframes;
    struct sym_frame frames[];
};

static struct resolved **cache;     /* open addressing by address */
static size_t cache_mask, cache_count;
static uint32_t stacks_done;         /* stacks 1..stacks_done are resolved */

/* ------------------------------------------------------------ strings */

static const char **pool;
static size_t pool_mask, pool_count;

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Interns a string for the life of the process. */
static const char *intern(const char *s)
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

/* ------------------------------------------------------------ cache */

static size_t addr_slot(uintptr_t addr)
{
    return (addr * 0x9E3779B97F4A7C15ull >> 20) & cache_mask;
}

static struct resolved *cache_get(uintptr_t addr)
{
    if (!cache) return NULL;
    for (size_t i = addr_slot(addr); cache[i]; i = (i + 1) & cache_mask)
        if (cache[i]->addr == addr) return cache[i];
    return NULL;
}

static void cache_put(struct resolved *r)
{
    if ((cache_count + 1) * 2 > cache_mask + 1) {
        size_t old_cap = cache ? cache_mask + 1 : 0, cap = old_cap ? old_cap * 2 : 4096;
        struct resolved **old = cache, **t = calloc(cap, sizeof *t);
        if (!t) return;
        cache = t;
        cache_mask = cap - 1;
        for (size_t i = 0; i < old_cap; i++) {
            if (!old[i]) continue;
            size_t j = addr_slot(old[i]->addr);
            while (cache[j]) j = (j + 1) & cache_mask;
            cache[j] = old[i];
        }
        free(old);
    }
    size_t i = addr_slot(r->addr);
    while (cache[i]) i = (i + 1) & cache_mask;
    cache[i] = r;
    cache_count++;
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
    if (!name || name[0] != '_' || name[1] != 'Z') return intern(name);
    if (!looked) {
        looked = 1;
        demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
        void *lib = demangle ? NULL : dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (lib) demangle = (demangle_fn)dlsym(lib, "__cxa_demangle");
    }
    if (!demangle) return intern(name);
    int status = 0;
    char *d = demangle(name, NULL, NULL, &status);
    const char *r = intern(status == 0 && d ? d : name);
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
    if (file[0] == '/' || !comp_dir || !*comp_dir) return intern(file);
    char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", comp_dir, file[0] == '.' && file[1] == '/' ? file + 2 : file);
    return intern(buf);
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

static char *debuginfo_path = mp_opt.debuginfo_path;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

static struct resolved *make(uintptr_t addr, int n)
{
    struct resolved *r = calloc(1, sizeof *r + (size_t)n * sizeof r->frames[0]);
    if (r) {
        r->addr = addr;
        r->nframes = n;
    }
    return r;
}

static struct resolved *resolve_special(uintptr_t addr)
{
    struct resolved *r = make(addr, 1);
    if (!r) return NULL;
    const char *tag = tag_name(addr);
    r->frames[0].module = tag ? "[tag]" : "[unknown]";
    r->frames[0].build_id = "";
    r->frames[0].offset = tag ? addr - TAG_BASE : addr;
    r->frames[0].function = tag ? intern(tag) : NULL;
    return r;
}

static void module_identity(Dwfl_Module *mod, const char **path, const char **build_id, GElf_Addr *bias)
{
    const char *mainfile = NULL;
    *bias = 0;
    dwfl_module_getelf(mod, bias);
    const char *name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
    *path = intern(mainfile ? mainfile : name ? name : "[unknown]");
    const unsigned char *bits;
    GElf_Addr vaddr;
    int len = dwfl_module_build_id(mod, &bits, &vaddr);
    char hex[2 * 64 + 1] = "";
    for (int i = 0; i < len && i < 64; i++) snprintf(hex + 2 * i, 3, "%02x", bits[i]);
    *build_id = intern(hex);
}

static struct resolved *resolve_one(Dwfl *dwfl, uintptr_t addr)
{
    if (addr >= TAG_BASE || !dwfl) return resolve_special(addr);
    Dwarf_Addr pc = addr - 1;   /* the call instruction, not the one after it */
    Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
    if (!mod) return resolve_special(addr);

    const char *path, *build_id;
    GElf_Addr bias;
    module_identity(mod, &path, &build_id, &bias);

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

    /* inline chain, innermost first. dwarf_getscopes follows an inlined
     * instance into its abstract definition's scopes, so after each
     * inlined_subroutine continue from the scopes around that concrete DIE
     * (dwarf_getscopes_die), whose parents lead to the function it was
     * inlined into. */
    struct sym_frame chain[MAX_INLINE];
    int n = 0, done = 0;
    Dwarf_Addr cubias;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &cubias);
    Dwarf_Die *scopes = NULL;
    int nscopes = cu ? dwarf_getscopes(cu, pc - cubias, &scopes) : 0;
    for (int i = 0; i < nscopes && !done && n < MAX_INLINE - 1; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
        chain[n++] = (struct sym_frame){ .function = die_name(&scopes[i]), .file = file, .line = line };
        if (tag == DW_TAG_subprogram) {
            done = 1;
            break;
        }
        die_call_site(&scopes[i], cu, &file, &line);  /* position in the caller */
        Dwarf_Die *outer = NULL;
        int nouter = dwarf_getscopes_die(&scopes[i], &outer);
        free(scopes);
        scopes = outer;
        nscopes = nouter;
        i = 0;      /* outer[0] is the inlined instance itself: resume after it */
    }
    free(scopes);
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

    struct resolved *r = make(addr, n);
    if (!r) return NULL;
    for (int i = 0; i < n; i++) {
        r->frames[i] = chain[n - 1 - i];
        r->frames[i].module = path;
        r->frames[i].build_id = build_id;
        r->frames[i].offset = addr - bias;
    }
    return r;
}

/* Reports the loaded objects to a Dwfl from the loader's own list
 * (dl_iterate_phdr) with their exact load bias. /proc/self/maps would also
 * show the files libdw itself maps to read them, and after a dlclose and a
 * new dlopen such a mapping can be taken for the library. */
static int report_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    Dwfl *d = arg;
    const char *path = info->dlpi_name;
    char exe[4096];
    if (!path || !*path) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) return 0;
        exe[n] = 0;
        path = exe;
    }
    if (path[0] != '/') return 0;       /* the vDSO and the like: no file */
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo) lo = a;
        if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
    }
    /* an unchanged module (same name and range) is kept with what was read */
    if (lo < hi) dwfl_report_module(d, path, lo & ~(uintptr_t)4095, hi);
    return 0;
}

static int report_loaded(Dwfl *d)
{
    dwfl_report_begin(d);
    dl_iterate_phdr(report_object, d);
    return dwfl_report_end(d, NULL, NULL);
}

static int loader_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
    unsigned long long *c = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c[0] = info->dlpi_adds;
        c[1] = info->dlpi_subs;
    }
    return 1;
}

Dwfl *mp_dwfl_session(Dwfl **d, const Dwfl_Callbacks *cb, unsigned long long seen[2])
{
    unsigned long long c[2] = { 0, 0 };
    dl_iterate_phdr(loader_counts, c);
    int changed = c[0] != seen[0] || c[1] != seen[1];
    seen[0] = c[0];
    seen[1] = c[1];
    if (!changed && *d) return *d;
    if (!*d && !(*d = dwfl_begin(cb))) return NULL;
    if (report_loaded(*d) != 0) {
        dwfl_end(*d);
        *d = NULL;
        seen[0] = seen[1] = 0;
    }
    return *d;
}

/* The session of symbol resolution (the cfi unwinder has its own). */
static Dwfl *dwfl;
static unsigned long long seen_loader[2];

void symbols_resolve_pending(void)
{
    uint32_t n = stacks_count();
    Dwfl *d = NULL;
    int opened = 0;
    for (uint32_t id = stacks_done + 1; id <= n; id++) {
        const struct mp_stack *s = stacks_get(id);
        if (!s) break;
        for (int i = 0; i < s->depth; i++) {
            if (cache_get(s->ret_addrs[i])) continue;
            if (!opened) {
                d = mp_dwfl_session(&dwfl, &callbacks, seen_loader);
                opened = 1;
            }
            struct resolved *r = resolve_one(d, s->ret_addrs[i]);
            if (r) cache_put(r);
        }
        stacks_done = id;
    }
}

int symbols_resolve(uintptr_t addr, const struct sym_frame **frames)
{
    struct resolved *r = cache_get(addr);
    if (!r) {
        r = resolve_special(addr);
        if (!r) {
            static const struct sym_frame unknown = { "[unknown]", "", 0, NULL, NULL, 0 };
            *frames = &unknown;
            return 1;
        }
        cache_put(r);
    }
    *frames = r->frames;
    return r->nframes;
}
