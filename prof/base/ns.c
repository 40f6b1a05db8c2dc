/* The profiler's libraries out of the program's namespace. libdw, libelf
 * and libunwind (with libz, liblzma, libbz2) loaded as this library's
 * dependencies would be the program's too: its dlopen of libz would only
 * count a reference (no constructor, no allocation), its symbols could
 * bind to our copies. SQLite is linked in, hidden (Makefile); the others,
 * whose Debian archives cannot go into a shared object, are loaded by
 * mp_ns_load into a namespace of their own (dlmopen) through
 * libmallocprof_ns.so (ns_shim.c), which this library carries. Every function of
 * theirs the recorder calls is a stub here (build/ns_stubs.S, made by
 * tools/ns_stubs.sh) jumping through mp_ns_fn: filled by mp_ns_load, and
 * until then leading to mp_ns_resolve, which loads. Failing dlmopen (no
 * namespace left, no static TLS), the shim is dlopen'd privately (the
 * libraries are then shared with the program, as before); failing that,
 * each function returns 0 (no symbols, libunwind's stacks empty). */
#define _GNU_SOURCE
#include "base.h"
#include "ns.h"

#include <dlfcn.h>
#include <error.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* build/ns_stubs.S */
extern void *mp_ns_fn[];
extern const char *const mp_ns_names[];
extern const unsigned mp_ns_count;
extern void **const mp_ns_data_slot[];
extern const char *const mp_ns_data_names[];
extern const unsigned mp_ns_data_count;
/* build/ns_image.o: libmallocprof_ns.so */
extern const char mp_ns_image[], mp_ns_image_end[];

void *mp_ns_resolve(unsigned i);
void *mp_ns_missing(void);
void *mp_ns_missing(void) { return NULL; }

/* Called from here, so that glibc lists this namespace's modules (not
 * a tail call: the caller's address is what glibc looks at). */
static int host_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    int rc = dl_iterate_phdr(cb, data);
    __asm__ volatile("" ::: "memory");
    return rc;
}

static int host_setspecific(pthread_key_t key, uintptr_t value)
{
    return pthread_setspecific(key, (const void *)value);
}

static struct mp_ns_host host = {
    .version = MP_NS_VERSION, .malloc = malloc, .free = free, .calloc = calloc, .realloc = realloc,
    .posix_memalign = posix_memalign, .memalign = memalign, .usable_size = malloc_usable_size,
    .iterate_phdr = host_iterate_phdr, .fd_high = mp_fd_high,
    .key_create = pthread_key_create, .key_delete = pthread_key_delete,
    .getspecific = pthread_getspecific, .setspecific = host_setspecific,
    .error = error, .exit = exit,
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static MP_TLS int loading;         /* this thread is in load: its calls get 0 */

/* The shim is in this library (build/ns_image.o): written to a memfd and
 * loaded from /proc/self/fd, so that no second file has to be found
 * (installed, copied into a container's /tmp by mpquery record --pid).
 * The descriptor is closed once loaded (the mapping stays). */
static void *open_shim(char *path, size_t size)
{
    int fd = memfd_create("libmallocprof_ns.so", MFD_CLOEXEC);
    if (fd < 0) {
        mp_log("error", "memfd_create: %s: no symbols, no libunwind", strerror(errno));
        return NULL;
    }
    size_t len = (size_t)(mp_ns_image_end - mp_ns_image), done = 0;
    while (done < len) {
        ssize_t w = write(fd, mp_ns_image + done, len - done);
        if (w <= 0 && errno != EINTR) break;
        if (w > 0) done += (size_t)w;
    }
    snprintf(path, size, "/proc/self/fd/%d", fd);
    void *h = done == len ? dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h && done == len) {
        mp_log("warning", "libmallocprof_ns.so: no namespace of its own (%s): its libraries are the program's too", dlerror());
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (!h) mp_log("error", "libmallocprof_ns.so (%s): %s: no symbols, no libunwind", path, done == len ? dlerror() : strerror(errno));
    close(fd);
    return h;
}

static void load(void)
{
    char path[64] = "";
    loading = 1;
    void *h = open_shim(path, sizeof path);
    int (*init)(const struct mp_ns_host *) = h ? (int (*)(const struct mp_ns_host *))dlsym(h, "mp_ns_init") : NULL;
    if (h && (!init || init(&host) != 0)) mp_log("warning", "libmallocprof_ns.so (%s): not this library's (mp_ns_init)", path);
    const char *(*lookup_state)(void) = h ? (const char *(*)(void))dlsym(h, "mp_ns_find_object_state") : NULL;
    const char *why = lookup_state ? lookup_state() : NULL;
    if (why && !mp_attach_mode) mp_log("info", "libmallocprof_ns.so left glibc's _dl_find_object table as it is (%s): a program that "
                    "dlopens twice or more makes one allocation of 2,304 bytes fewer than alone", why);
    for (unsigned i = 0; i < mp_ns_count; i++) {
        void *p = h ? dlsym(h, mp_ns_names[i]) : NULL;
        if (h && !p) mp_log("warning", "libmallocprof_ns.so: no %s", mp_ns_names[i]);
        mp_ns_fn[i] = p ? p : (void *)mp_ns_missing;
    }
    for (unsigned i = 0; i < mp_ns_data_count; i++) {
        void **p = h ? (void **)dlsym(h, mp_ns_data_names[i]) : NULL;
        *mp_ns_data_slot[i] = p ? *p : NULL;
    }
    loading = 0;
}

void mp_ns_load(void)
{
    if (!loading) pthread_once(&once, load);
}

/* A stub's first call (build/ns_stubs.S): what it should have jumped to. */
void *mp_ns_resolve(unsigned i)
{
    if (loading) return (void *)mp_ns_missing;
    pthread_once(&once, load);
    return mp_ns_fn[i];
}
