/* libmallocprof_ns.so: the first object of the profiler's own link-map
 * namespace (ns.c dlmopens it), which brings libdw, libelf and libunwind
 * (and their libz, liblzma, libbz2, a libc of their own) there, out of the
 * program's: the program's dlopen of the same library loads it, and its
 * symbols never bind to ours. First in the namespace's lookup order, it
 * gives the namespace the recorder's allocator (blocks the recorder frees,
 * as dwarf_cfi_addrframe's, and its guard), the program's modules for
 * dl_iterate_phdr (libunwind unwinds the program's frames), and moves
 * libunwind's pipe above the program's descriptors, and its thread key
 * from the program's libc, its error() and exit() the recorder's (ns.h).
 * Until mp_ns_init,
 * allocations (the namespace's constructors) come from a static buffer and
 * are never freed. */
#define _GNU_SOURCE
#include "ns.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/uio.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static const struct mp_ns_host *host;

/* ------------------------------------------------------------ before init */

#define EARLY_SIZE (256 * 1024)
#define EARLY_ALIGN 16
static _Alignas(EARLY_ALIGN) char early[EARLY_SIZE];
static size_t early_used;      /* under the loader's lock: constructors run one at a time */

static int is_early(const void *p)
{
    return (const char *)p >= early && (const char *)p < early + EARLY_SIZE;
}

static size_t early_size(const void *p)
{
    return *(const size_t *)((const char *)p - EARLY_ALIGN);
}

static void *early_alloc(size_t size, size_t align)
{
    if (align < EARLY_ALIGN) align = EARLY_ALIGN;
    if (align > 4096 || size > EARLY_SIZE) return errno = ENOMEM, NULL;
    size_t at = (early_used + EARLY_ALIGN + align - 1) & ~(align - 1);
    if (at + size > EARLY_SIZE) return errno = ENOMEM, NULL;
    *(size_t *)(early + at - EARLY_ALIGN) = size;
    early_used = at + size;
    return early + at;
}

/* ------------------------------------------------------------ the allocator */

EXPORT void *malloc(size_t size)
{
    return host ? host->malloc(size) : early_alloc(size, EARLY_ALIGN);
}

EXPORT void free(void *p)
{
    if (p && !is_early(p) && host) host->free(p);
}

EXPORT void *calloc(size_t n, size_t size)
{
    if (host) return host->calloc(n, size);
    if (size && n > SIZE_MAX / size) return errno = ENOMEM, NULL;
    return early_alloc(n * size, EARLY_ALIGN);       /* the buffer is zeroed, never reused */
}

EXPORT void *realloc(void *p, size_t size)
{
    if (!p || !is_early(p)) return host ? host->realloc(p, size) : early_alloc(size, EARLY_ALIGN);
    void *q = malloc(size);
    if (q) memcpy(q, p, early_size(p) < size ? early_size(p) : size);
    return q;
}

EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return errno = ENOMEM, NULL;
    return realloc(p, n * size);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (host) return host->posix_memalign(out, align, size);
    void *p = early_alloc(size, align);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

EXPORT void *memalign(size_t align, size_t size)
{
    return host ? host->memalign(align, size) : early_alloc(size, align);
}

EXPORT void *aligned_alloc(size_t align, size_t size) { return memalign(align, size); }
EXPORT void *valloc(size_t size) { return memalign(4096, size); }
EXPORT void *pvalloc(size_t size) { return memalign(4096, (size + 4095) & ~(size_t)4095); }

EXPORT size_t malloc_usable_size(void *p)
{
    if (!p) return 0;
    return is_early(p) ? early_size(p) : host ? host->usable_size(p) : 0;
}

/* ------------------------------------------------------------ the rest */

/* This namespace's modules (libunwind's own frames come first in a
 * stack), then the program's: glibc lists the caller's namespace, and the
 * host's function is called from the host's. */
EXPORT int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    static int (*own)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
    if (!own) own = (int (*)(int (*)(struct dl_phdr_info *, size_t, void *), void *))dlsym(RTLD_NEXT, "dl_iterate_phdr");
    int rc = own ? own(cb, data) : 0;
    return rc || !host ? rc : host->iterate_phdr(cb, data);
}

EXPORT int pipe2(int fds[2], int flags)
{
    static int (*real)(int[2], int);
    if (!real) real = (int (*)(int[2], int))dlsym(RTLD_NEXT, "pipe2");
    if (!real) return errno = ENOSYS, -1;
    int rc = real(fds, flags);
    if (rc == 0 && host) {
        int saved = errno;
        fds[0] = host->fd_high(fds[0]);
        fds[1] = host->fd_high(fds[1]);
        errno = saved;
    }
    return rc;
}

/* Thread keys: the program's libc's table (before init, nobody asks). */
EXPORT int pthread_key_create(pthread_key_t *key, void (*destroy)(void *))
{
    return host ? host->key_create(key, destroy) : EAGAIN;
}

EXPORT int pthread_key_delete(pthread_key_t key) { return host ? host->key_delete(key) : EINVAL; }
EXPORT void *pthread_getspecific(pthread_key_t key) { return host ? host->getspecific(key) : NULL; }

EXPORT int pthread_setspecific(pthread_key_t key, const void *value)
{
    return host ? host->setspecific(key, (uintptr_t)value) : EINVAL;
}

/* The recorder's error() (it gives up what it was doing, or ends the
 * process as libc's does), the message formatted here. */
EXPORT void error(int status, int errnum, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (host) host->error(status, errnum, "%s", msg);
    else if (status) _exit(status);
}

/* The program's exit (its handlers, the recorder's exit snapshot), not
 * this namespace's libc's. */
EXPORT void exit(int status)
{
    if (host) host->exit(status);
    _exit(status);
}

/* ------------------------------------------------------------ glibc's address-lookup table */

/* glibc 2.35+ keeps every dlopen'd object, of any namespace, in the table
 * behind _dl_find_object (elf/dl-find_object.c): two copies (a double
 * buffer), each a chain of segments; a dlopen that adds objects writes
 * the inactive copy, first allocating a segment for it when it has too few
 * slots (63 at the least: 2,304 bytes), then makes it the active one. Our
 * dlmopen was that first dlopen: it allocated one copy's segment, so a
 * program dlopening twice or more made one allocation of 2,304 bytes
 * fewer than alone (its second dlopen found that segment), and the
 * namespace's 8 objects brought its later growths nearer.
 * So this constructor, which runs after the dlmopen's table update and
 * under the loader's lock (no dlopen or dlclose in between), takes this
 * namespace out of the table: it finds the table's two chain pointers in
 * ld.so's writable data (two adjacent words: null or a segment, and a
 * segment, each segment alone in its chain and every entry of it an object
 * of this namespace, read with process_vm_readv: no fault whatever the
 * words hold) and clears them. The table is then as the program's first dlopen finds it alone;
 * the segments stay allocated (a reader of the old pointer reads valid
 * memory), this namespace's code is not found by _dl_find_object (only
 * libgcc's unwinder asks it; the recorder never unwinds with it, and holds
 * cancellation off). Anything unexpected (another layout, an entry not
 * ours, a chain of more than one segment, no process_vm_readv, two places
 * that fit): nothing is touched, and mp_ns_find_object_state says why. */
struct dlfo_seg { uintptr_t previous, to_free, size, allocated; };
struct dlfo_obj { uintptr_t map_start, map_end, map, eh_frame; };
enum { DLFO_MAX = 256 };

static int dlfo_state;         /* 0: glibc < 2.35; 1: cleared; < 0: left (why) */
static uintptr_t dlfo_maps[64];
static int dlfo_nmaps;

static int read_self(uintptr_t addr, void *buf, size_t len)
{
    struct iovec local = { buf, len }, remote = { (void *)addr, len };
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static int is_ours(uintptr_t map)
{
    for (int i = 0; i < dlfo_nmaps; i++)
        if (dlfo_maps[i] == map) return 1;
    return 0;
}

/* Whether v is null or a chain of one segment holding objects of this
 * namespace only (its header within 128 bytes of the block glibc freed). */
static int ours_or_null(uintptr_t v, int *ours)
{
    static struct dlfo_obj objs[DLFO_MAX];
    struct dlfo_seg seg;
    if (!v) return 1;
    if ((v & 7) || read_self(v, &seg, sizeof seg)) return 0;
    if (seg.previous || seg.to_free > v || v - seg.to_free >= 128 || seg.size > seg.allocated || !seg.size ||
        seg.size > DLFO_MAX || read_self(v + sizeof seg, objs, seg.size * sizeof objs[0]))
        return 0;
    for (uintptr_t i = 0; i < seg.size; i++)
        if (objs[i].map_start > objs[i].map_end || !is_ours(objs[i].map)) return 0;
    ++*ours;
    return 1;
}

/* This namespace's link maps (proxies included: never in the table). */
static int own_maps(void)
{
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1((void *)own_maps, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm) return -1;
    Lmid_t ns;
    if (dlinfo(lm, RTLD_DI_LMID, &ns) != 0 || ns == LM_ID_BASE) return -2;     /* the fallback: dlopen */
    while (lm->l_prev) lm = lm->l_prev;
    for (dlfo_nmaps = 0; lm && dlfo_nmaps < 64; lm = lm->l_next) dlfo_maps[dlfo_nmaps++] = (uintptr_t)lm;
    return lm ? -3 : 0;
}

/* ld.so's writable segment [*lo, *hi), its RELRO part [*rlo, *rhi). */
static int ldso_data(uintptr_t *lo, uintptr_t *hi, uintptr_t *rlo, uintptr_t *rhi)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)getauxval(AT_BASE);
    *lo = *hi = *rlo = *rhi = 0;
    if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_type != ET_DYN) return -1;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
    uintptr_t base = (uintptr_t)eh;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_W) && !*hi)
            *lo = base + ph[i].p_vaddr, *hi = base + ph[i].p_vaddr + ph[i].p_memsz;
        if (ph[i].p_type == PT_GNU_RELRO) *rlo = base + ph[i].p_vaddr, *rhi = base + ph[i].p_vaddr + ph[i].p_memsz;
    }
    return *hi ? 0 : -1;
}

static int find_table(uintptr_t lo, uintptr_t hi, uintptr_t rlo, uintptr_t rhi, uintptr_t **at)
{
    int found = 0;
    lo = (lo + 7) & ~(uintptr_t)7;
    for (uintptr_t a = lo; a + 16 <= hi; a += 8) {
        if (a + 16 > rlo && a < rhi) continue;
        uintptr_t *w = (uintptr_t *)a;
        int ours = 0;       /* the first update writes the second copy: (null, ours) or (ours, ours) */
        if (w[1] && ours_or_null(w[0], &ours) && ours_or_null(w[1], &ours) && ours == 1 + !!w[0]) {
            *at = w;
            found++;
        }
    }
    return found;
}

__attribute__((constructor)) static void hide_from_find_object(void)
{
    void *find_object = dlsym(RTLD_NEXT, "_dl_find_object");
    if (!find_object) return;                       /* glibc < 2.35: no such table */
    uintptr_t lo, hi, rlo, rhi, *at = NULL, probe = 0;
    int rc = own_maps();
    if (rc) {
        dlfo_state = rc == -2 ? -2 : -1;
        return;
    }
    if (read_self((uintptr_t)&probe, &probe, sizeof probe)) {
        dlfo_state = -3;
        return;
    }
    if (ldso_data(&lo, &hi, &rlo, &rhi)) {
        dlfo_state = -1;
        return;
    }
    int n = find_table(lo, hi, rlo, rhi, &at);
    if (n != 1) {
        dlfo_state = n ? -5 : -4;
        return;
    }
    __atomic_store_n(&at[0], 0, __ATOMIC_RELEASE);
    __atomic_store_n(&at[1], 0, __ATOMIC_RELEASE);
    dlfo_state = 1;
}

/* What hide_from_find_object did: 1 cleared, 0 no table (glibc < 2.35),
 * else a reason it left the table alone. */
EXPORT const char *mp_ns_find_object_state(void)
{
    switch (dlfo_state) {
    case 1: case 0: return NULL;
    case -2: return NULL;       /* dlopen'd, not dlmopen'd: ns.c said so */
    case -3: return "process_vm_readv is refused";
    case -4: return "glibc's table was not found in ld.so's data, or holds objects not of this namespace";
    case -5: return "more than one place in ld.so's data looks like glibc's table";
    default: return "its link maps or ld.so's segments were not found";
    }
}

EXPORT int mp_ns_init(const struct mp_ns_host *h)
{
    if (!h || h->version != MP_NS_VERSION) return -1;
    host = h;
    return 0;
}
