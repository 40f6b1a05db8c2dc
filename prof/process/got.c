/* Rebinding the allocator's symbols in modules already loaded (attach).
 *
 * A library dlopen'd into a running process interposes nothing: every
 * module's calls to malloc, free, mmap... go through its GOT slots, bound
 * to libc. got_patch walks each loaded module's dynamic relocations
 * (JUMP_SLOT and GLOB_DAT, the executable's too) and points the slots of
 * the symbols in `hooked` at this library's definitions, remembering each
 * slot's value; got_restore puts every remembered value back, so that the
 * program is again on exactly its own paths. Slots in RELRO pages are made
 * writable for the write and read-only again. This library and the dynamic
 * loader are never patched. dlopen's slots lead to got_dlopen, which
 * patches the modules a later dlopen brings. One lock (patch_lock) orders
 * patch, restore and the dlopen hook. */
#define _GNU_SOURCE
#include "symbols.h"
#include "process.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

/* Every symbol a running program's modules get rebound for: the malloc
 * family and the rest of hooks.h (but sigaction and error: the attached
 * recorder leaves the program's signal handling alone), reallocarray,
 * and dlopen (got_dlopen). */
static const char *const hooked[] = {
    "malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "memalign", "valloc",
    "pvalloc", "reallocarray", "pthread_create", "execve", "execv", "execvp", "execvpe", "fexecve",
    "execl", "execlp", "execle", "exit", "_exit", "_Exit", "dlclose", "mmap", "mmap64", "munmap",
    "mremap", "brk", "sbrk", "dlopen",
};
#define NHOOKED (sizeof hooked / sizeof hooked[0])
static void *target[NHOOKED];           /* this library's definition of each */

struct patched { uintptr_t *slot; uintptr_t was; void *now; uintptr_t relro_lo, relro_hi; };
static struct patched *patches;
static size_t npatches, patches_cap;
static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;
static int patching;                    /* 1 between got_patch and got_restore */
static uintptr_t self_base, loader_base;

static void *got_dlopen(const char *file, int mode);

/* Each hooked name's definition here: dlsym on this library's own handle
 * finds ours first (RTLD_DEFAULT would find libc's: we are not global). */
static int find_targets(void)
{
    Dl_info info;
    if (!dladdr((void *)find_targets, &info) || !info.dli_fname) return -1;
    self_base = (uintptr_t)info.dli_fbase;
    loader_base = (uintptr_t)getauxval(AT_BASE);
    void *self = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!self) return -1;
    for (size_t i = 0; i < NHOOKED; i++)
        target[i] = !strcmp(hooked[i], "dlopen") ? (void *)got_dlopen : dlsym(self, hooked[i]);
    dlclose(self);
    return 0;
}

static int hooked_index(const char *name)
{
    for (size_t i = 0; i < NHOOKED; i++)
        if (target[i] && !strcmp(name, hooked[i])) return (int)i;
    return -1;
}

/* The dynamic section's addresses: relocated in place by the loader on
 * most targets, file-relative where the section is read-only. */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
    return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

static void relro_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
    *lo = *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
            *lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            *hi = *lo + info->dlpi_phdr[i].p_memsz;
        }
}

static int remember(uintptr_t *slot, uintptr_t was, void *now, uintptr_t lo, uintptr_t hi)
{
    if (npatches == patches_cap) {
        size_t cap = patches_cap ? patches_cap * 2 : 256;
        struct patched *p = arena_alloc(cap * sizeof *p, 0);
        if (!p) return -1;
        if (npatches) memcpy(p, patches, npatches * sizeof *p);
        patches = p;        /* the old table stays in the arena, as all its memory */
        patches_cap = cap;
    }
    patches[npatches++] = (struct patched){ slot, was, now, lo, hi };
    return 0;
}

/* Writes one slot, through a writable window when it is in RELRO. */
static void write_slot(uintptr_t *slot, uintptr_t value, uintptr_t relro_lo, uintptr_t relro_hi)
{
    uintptr_t at = (uintptr_t)slot, page = at & ~(uintptr_t)(PAGE_SIZE - 1);
    int ro = at >= relro_lo && at < relro_hi;
    if (ro && mprotect((void *)page, PAGE_SIZE, PROT_READ | PROT_WRITE) != 0) return;
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    if (ro) mprotect((void *)page, PAGE_SIZE, PROT_READ);
}

static void patch_relocs(const struct dl_phdr_info *info, const ElfW(Rela) *rel, size_t size,
                         const ElfW(Sym) *symtab, const char *strtab)
{
    uintptr_t lo, hi;
    relro_range(info, &lo, &hi);
    for (size_t i = 0; i < size / sizeof *rel; i++) {
        unsigned type = ELF64_R_TYPE(rel[i].r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
        int k = hooked_index(strtab + symtab[ELF64_R_SYM(rel[i].r_info)].st_name);
        if (k < 0) continue;
        uintptr_t *slot = (uintptr_t *)(info->dlpi_addr + rel[i].r_offset);
        uintptr_t was = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (was == (uintptr_t)target[k] || remember(slot, was, target[k], lo, hi)) continue;
        write_slot(slot, (uintptr_t)target[k], lo, hi);
    }
}

static int patch_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    if (info->dlpi_addr == self_base || (loader_base && info->dlpi_addr == loader_base)) return 0;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return 0;     /* the vdso has relocations of none of ours */
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *rela = NULL, *jmprel = NULL;
    size_t relasz = 0, pltrelsz = 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_ptr(info, dyn->d_un.d_ptr); break;
        case DT_STRTAB: strtab = (const char *)dyn_ptr(info, dyn->d_un.d_ptr); break;
        case DT_RELA: rela = (const ElfW(Rela) *)dyn_ptr(info, dyn->d_un.d_ptr); break;
        case DT_RELASZ: relasz = dyn->d_un.d_val; break;
        case DT_JMPREL: jmprel = (const ElfW(Rela) *)dyn_ptr(info, dyn->d_un.d_ptr); break;
        case DT_PLTRELSZ: pltrelsz = dyn->d_un.d_val; break;
        }
    }
    if (!symtab || !strtab) return 0;
    if (rela) patch_relocs(info, rela, relasz, symtab, strtab);
    if (jmprel) patch_relocs(info, jmprel, pltrelsz, symtab, strtab);
    return 0;
}

int got_patch(void)
{
    pthread_mutex_lock(&patch_lock);
    int rc = target[0] || find_targets() == 0 ? 0 : -1;
    if (!rc) {
        patching = 1;
        dl_iterate_phdr(patch_module, NULL);
    }
    pthread_mutex_unlock(&patch_lock);
    return rc;
}

/* A fork child's lock: another thread of the parent may have held it. */
void got_after_fork_child(void)
{
    pthread_mutex_init(&patch_lock, NULL);
}

/* Back to the values found, newest first (a slot patched twice, by a
 * module loaded again at the same address, ends at its first value). A
 * slot whose value someone else changed since is left as it is. */
void got_restore(void)
{
    pthread_mutex_lock(&patch_lock);
    for (size_t i = npatches; i-- > 0;) {
        struct patched *p = &patches[i];
        if (__atomic_load_n(p->slot, __ATOMIC_ACQUIRE) != (uintptr_t)p->now) continue;
        write_slot(p->slot, p->was, p->relro_lo, p->relro_hi);
    }
    npatches = 0;
    patching = 0;
    pthread_mutex_unlock(&patch_lock);
}

/* The end of an attach session, after got_restore: the list of slots is
 * the arena's, which arena_forget gives back; the next patch makes one. */
void got_forget(void)
{
    pthread_mutex_lock(&patch_lock);
    if (!npatches) patches = NULL, patches_cap = 0;
    pthread_mutex_unlock(&patch_lock);
}

/* dlopen's search for a bare name starts from its caller's paths (DT_RPATH,
 * LD_LIBRARY_PATH, DT_RUNPATH, with $ORIGIN the caller's directory), and
 * the caller of the real dlopen is now this library. The caller's own list,
 * as the loader builds it (dlinfo RTLD_DI_SERINFO on the caller's link
 * map), is searched first for a file of that name; a name already loaded,
 * or found nowhere on that list, goes to dlopen as it is (the loader's
 * cache and default directories, its own error message). */
static void *dlopen_as(const void *caller, const char *file, int mode)
{
    if (!file || strchr(file, '/')) return dlopen(file, mode);
    void *h = dlopen(file, mode | RTLD_NOLOAD);
    if (h) return h;
    Dl_info info;
    struct link_map *lm = NULL;
    Dl_serinfo size;
    union { Dl_serinfo info; char bytes[8192]; } list;     /* no allocation here */
    Dl_serinfo *paths = &list.info;
    if (dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm && dlinfo(lm, RTLD_DI_SERINFOSIZE, &size) == 0
        && size.dls_size <= sizeof list) {
        *paths = size;
        if (dlinfo(lm, RTLD_DI_SERINFO, paths) == 0) {
            char path[4096];
            for (unsigned i = 0; i < paths->dls_cnt; i++) {
                const char *dir = paths->dls_serpath[i].dls_name;
                int n = snprintf(path, sizeof path, "%s/%s", *dir ? dir : ".", file);
                if (n > 0 && (size_t)n < sizeof path && access(path, F_OK) == 0) return dlopen(path, mode);
            }
        }
    }
    return dlopen(file, mode);
}

/* A module dlopen brings while attached gets its slots rebound too. */
static void *got_dlopen(const char *file, int mode)
{
    void *h = dlopen_as(__builtin_return_address(0), file, mode);
    pthread_mutex_lock(&patch_lock);
    if (h && patching) dl_iterate_phdr(patch_module, NULL);
    pthread_mutex_unlock(&patch_lock);
    return h;
}
