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
#include "symbols.h"
#include "maps.h"
#include "python.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <link.h>
#include <stddef.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

struct resolved {
    uintptr_t addr;
    uintptr_t retired_as;       /* its pseudo address once its object is unloaded */
    int nframes;
    struct sym_frame frames[];
};

static struct resolved **cache;     /* open addressing by address */
static size_t cache_mask, cache_count;
static uint32_t nodes_done;          /* stack nodes 1..nodes_done are resolved */

/* ------------------------------------------------------------ cache */

static size_t addr_slot(uintptr_t addr)
{
    return fib_hash(addr, 44) & cache_mask;
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

/* ------------------------------------------------------------ resolution */

/* libdwfl keeps a descriptor per file until its session ends, then
 * closes those numbers, which the program may have closed and reused
 * meanwhile (a daemon closing every descriptor): a module's file is read
 * into memory (mapped) and its descriptor closed at once; a debug file's
 * descriptor is moved above the program's range (mp_fd_high). */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base, char **file_name,
                    Elf **elfp)
{
    int fd = dwfl_linux_proc_find_elf(mod, userdata, modname, base, file_name, elfp);
    if (fd >= 0 && *elfp && elf_cntl(*elfp, ELF_C_FDREAD) == 0 && elf_cntl(*elfp, ELF_C_FDDONE) == 0) {
        close(fd);
        return -1;
    }
    return mp_fd_high(fd);
}

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                          const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                          char **debuginfo_file_name)
{
    return mp_fd_high(resolve_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
                                             debuginfo_file_name));
}

/* Debug info is found on this machine's disk only (resolve_find_debuginfo:
 * never a debuginfod server, whatever DEBUGINFOD_URLS says). */
static const Dwfl_Callbacks callbacks = {
    .find_elf = find_elf,
    .find_debuginfo = find_debuginfo,
    .debuginfo_path = &resolve_debuginfo_path,
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
    const char *tag = tag_name(addr), *mapping = maps_name(addr), *function, *file;
    int line;
    r->frames[0].build_id = "";
    if (python_frame(addr, &function, &file, &line)) {
        /* the module is the .py file; the offset tells the frames of a file
         * apart (a frame is its module and offset): the function's name
         * hashed above the line's 20 bits */
        r->frames[0].module = r->frames[0].file = file;
        r->frames[0].function = function;
        r->frames[0].line = line;
        r->frames[0].offset = (fnv1a(function, FNV_STRING) & 0xfffffffull) << 20 | (uint64_t)(line > 0 ? line & 0xfffff : 0);
    } else if (addr == ADDR_TRUNCATED) {
        r->frames[0].module = r->frames[0].function = "[truncated]";
    } else if (mapping) {       /* a mapping's kind, named like a tag */
        r->frames[0].module = "[mmap]";
        r->frames[0].offset = (uint64_t)tag_offset(mapping);
        r->frames[0].function = resolve_intern(mapping);
    } else if (tag) {
        r->frames[0].module = "[tag]";
        r->frames[0].offset = (uint64_t)tag_offset(tag);
        r->frames[0].function = resolve_intern(tag);
    } else {
        r->frames[0].module = "[unknown]";
        r->frames[0].offset = addr == ADDR_UNKNOWN ? 0 : addr;
    }
    return r;
}

static struct resolved *resolve_one(Dwfl *dwfl, uintptr_t addr)
{
    if (addr >= RETIRED_BASE || !dwfl) return resolve_special(addr);
    Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr - 1);    /* the call, not what follows */
    if (!mod) return resolve_special(addr);
    const char *path, *build_id;
    GElf_Addr bias;
    resolve_module(mod, &path, &build_id, &bias);
    struct sym_frame chain[RES_MAX_INLINE];
    int n = resolve_chain(mod, addr, chain);
    struct resolved *r = make(addr, n);
    if (!r) return NULL;
    for (int i = 0; i < n; i++) {
        r->frames[i] = chain[i];
        r->frames[i].module = path;
        r->frames[i].build_id = build_id;
        r->frames[i].offset = addr - bias;
    }
    return r;
}

/* The file mapped at addr, from /proc/self/maps, read with plain system
 * calls (this can run inside malloc, for an unwind rule). For objects the
 * loader knows by a relative name (dlopen("./plug.so"), LD_LIBRARY_PATH=.),
 * which the process may have left by chdir since. */
static int mapped_file(uintptr_t addr, char *path, size_t size)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[8192];
    size_t have = 0;
    int found = -1;
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
        if (n <= 0) break;
        have += (size_t)n;
        buf[have] = 0;
        char *line = buf, *nl;
        while (found < 0 && (nl = strchr(line, '\n'))) {
            *nl = 0;
            unsigned long lo, hi;
            int at = 0;
            if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) == 2 && at > 0 &&
                addr >= lo && addr < hi && line[at] == '/' && strlen(line + at) < size) {
                strcpy(path, line + at);
                found = 0;
            }
            line = nl + 1;
        }
        if (found == 0) break;
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
        if (have == sizeof buf - 1) have = 0;      /* a line longer than the buffer: skip it */
    }
    close(fd);
    return found;
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
    uintptr_t lo, hi;
    object_range(info, &lo, &hi);
    /* the program: /proc/self/exe, but when the loader was run as a
     * command (ld.so ./prog: no interpreter base), that is the loader;
     * the file mapped at the program's address then */
    if ((!path || !*path) && !getauxval(AT_BASE) && lo < hi && mapped_file(lo, exe, sizeof exe) == 0) path = exe;
    if (!path || !*path) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) return 0;
        exe[n] = 0;
        path = exe;
    }
    char real[4096];
    if (path[0] != '/') {               /* a relative name; the vDSO has no file */
        if (lo >= hi || mapped_file(lo, real, sizeof real) != 0) return 0;
        path = real;
    }
    /* an unchanged module (same name and range) is kept with what was read */
    if (lo < hi) dwfl_report_module(d, path, lo & ~(uintptr_t)(PAGE_SIZE - 1), hi);
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

Dwfl *mp_dwfl_session(Dwfl **d, unsigned long long seen[2])
{
    unsigned long long c[2] = { 0, 0 };
    dl_iterate_phdr(loader_counts, c);
    int changed = c[0] != seen[0] || c[1] != seen[1];
    seen[0] = c[0];
    seen[1] = c[1];
    if (!changed && *d) return *d;
    resolve_debuginfo_path = mp_opt.debuginfo_path;
    if (!*d && !(*d = dwfl_begin(&callbacks))) return NULL;
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

static size_t resolve_pending(int refresh)
{
    size_t resolved = 0;
    uint32_t n = stack_node_count();
    Dwfl *d = refresh ? NULL : dwfl;
    int opened = !refresh;
    for (uint32_t id = nodes_done + 1; id <= n; id++) {
        const struct mp_node *nd = stack_node(id);
        if (!nd) break;
        nodes_done = id;
        if (cache_get(nd->addr)) continue;
        if (!opened) {
            d = mp_dwfl_session(&dwfl, seen_loader);
            opened = 1;
        }
        struct resolved *r = resolve_one(d, nd->addr);
        if (r) cache_put(r);
        resolved++;
    }
    return resolved;
}

size_t symbols_resolve_pending(void) { return resolve_pending(1); }

/* The end of an attach session (attach.c, the flush's lock held): the
 * session ended (libdw's files unmapped, its memory freed), every address
 * forgotten; the next session resolves its stacks again. */
void symbols_release(void)
{
    if (dwfl) dwfl_end(dwfl);
    symbols_drop_session();
    for (size_t i = 0; cache && i <= cache_mask; i++) free(cache[i]);
    free(cache);
    cache = NULL, cache_mask = cache_count = 0;
    nodes_done = 0;
    resolve_release();
}
void symbols_drop_session(void) { dwfl = NULL, seen_loader[0] = seen_loader[1] = 0; }
size_t symbols_resolve_pending_as_before(void) { return resolve_pending(0); }

static uintptr_t retired_next = RETIRED_BASE;

uintptr_t symbols_retire(uintptr_t addr)
{
    struct resolved *r = cache_get(addr);
    if (!r) return ADDR_UNKNOWN;
    if (!r->retired_as) {
        struct resolved *copy = make(retired_next, r->nframes);
        if (!copy) return ADDR_UNKNOWN;
        memcpy(copy->frames, r->frames, (size_t)r->nframes * sizeof r->frames[0]);
        r->retired_as = retired_next++;
        cache_put(copy);
        r = cache_get(addr);            /* cache_put may have moved the table */
    }
    return r->retired_as;
}

/* Drops the entries of retired addresses (the table is rebuilt without them). */
void symbols_forget_retired(void)
{
    if (!cache) return;
    size_t cap = cache_mask + 1;
    struct resolved **old = cache;
    if (!(cache = calloc(cap, sizeof *cache))) {
        cache = old;
        return;
    }
    cache_count = 0;
    for (size_t i = 0; i < cap; i++) {
        if (!old[i]) continue;
        if (old[i]->retired_as) {
            free(old[i]);
            continue;
        }
        size_t j = addr_slot(old[i]->addr);
        while (cache[j]) j = (j + 1) & cache_mask;
        cache[j] = old[i];
        cache_count++;
    }
    free(old);
}

/* An address not resolved yet (a node made by another thread after the
 * flush resolved the pending ones) is resolved now, not taken for unknown. */
int symbols_resolve(uintptr_t addr, const struct sym_frame **frames)
{
    struct resolved *r = cache_get(addr);
    if (!r) {
        r = resolve_one(addr < RETIRED_BASE ? mp_dwfl_session(&dwfl, seen_loader) : NULL, addr);
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
