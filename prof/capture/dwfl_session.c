/* The libdwfl session over the objects the loader has loaded: made for
 * symbol resolution (snapshot/symbols.c) and for the cfi unwinder's rules
 * (unwind_cfi.c), each keeping its own. */
#define _GNU_SOURCE
#include "dwfl_session.h"
#include "base.h"
#include "resolve.h"

#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* The file mapped at addr, from /proc/self/maps, read with plain system
 * calls (this can run inside malloc, for an unwind rule). For objects the
 * loader knows by a relative name (dlopen("./plug.so"), LD_LIBRARY_PATH=.),
 * which the process may have left by chdir since. */
struct mapped { uintptr_t addr; char *path; size_t size; int found; };

static int mapped_line(char *line, void *arg)
{
    struct mapped *m = arg;
    unsigned long lo, hi;
    int at = 0;
    if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) != 2 || at <= 0 || m->addr < lo || m->addr >= hi ||
        line[at] != '/' || strlen(line + at) >= m->size)
        return 0;
    strcpy(m->path, line + at);
    return m->found = 1;
}

static int mapped_file(uintptr_t addr, char *path, size_t size)
{
    char buf[8192];
    struct mapped m = { addr, path, size, 0 };
    mp_each_line("/proc/self/maps", buf, sizeof buf, mapped_line, &m);
    return m.found ? 0 : -1;
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

/* ------------------------------------------------------------ pages */

/* The files a session read are mapped whole (libelf's private mappings);
 * what a resolution touched there (symbol tables, strings, DWARF) stays
 * resident in this process until the session ends: clang's profile kept
 * 4 MB of libLLVM's symbols and 7 MB of libc's debug file after its first
 * flush. mp_dwfl_release_pages gives those pages back: libelf reads a
 * loaded object's or a debug file's image in place and never writes it
 * (relocations are applied only to ET_REL files, which the loader never
 * loads), so each page is the file's and a later read finds it again. An
 * image libelf read into memory instead (elf_rawfile is then its own
 * allocation) is left alone: only an image that starts a file mapping of
 * /proc/self/maps is released. */
struct images { uintptr_t at[64]; size_t size[64]; int n; };

static void image_add(struct images *im, Elf *elf)
{
    size_t size = 0;
    char *img = elf ? elf_rawfile(elf, &size) : NULL;
    if (!img || size <= PAGE_SIZE || ((uintptr_t)img & (PAGE_SIZE - 1)) || im->n == 64) return;
    for (int i = 0; i < im->n; i++)
        if (im->at[i] == (uintptr_t)img) return;
    im->at[im->n] = (uintptr_t)img, im->size[im->n++] = size;
}

static int module_images(Dwfl_Module *mod, void **user, const char *name, Dwarf_Addr base, void *arg)
{
    (void)user, (void)name, (void)base;
    const char *mainfile = NULL, *debugfile = NULL;
    Dwarf_Addr bias;
    dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
    if (mainfile) image_add(arg, dwfl_module_getelf(mod, &bias));    /* read already: no new work */
    if (debugfile) {
        Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
        image_add(arg, dw ? dwarf_getelf(dw) : NULL);
    }
    return DWARF_CB_OK;
}

/* A maps line "lo-hi perms offset dev inode path": an image that starts at
 * lo, offset 0 of a file (inode not 0), is released. */
static int release_line(char *line, void *arg)
{
    struct images *im = arg;
    unsigned long lo, hi, off, inode;
    if (sscanf(line, "%lx-%lx %*s %lx %*s %lu", &lo, &hi, &off, &inode) != 4 || off || !inode) return 0;
    for (int i = 0; i < im->n; i++)
        if (im->at[i] == lo && im->at[i] + im->size[i] <= ((hi + PAGE_SIZE - 1) & ~(unsigned long)(PAGE_SIZE - 1))) {
            madvise((void *)lo, im->size[i], MADV_DONTNEED);
            im->at[i] = 0;
        }
    return 0;
}

void mp_dwfl_release_pages(Dwfl *d)
{
    struct images im = { .n = 0 };
    if (!d) return;
    dwfl_getmodules(d, module_images, &im, 0);
    if (!im.n) return;
    char buf[8192];
    mp_each_line("/proc/self/maps", buf, sizeof buf, release_line, &im);
}
