/* dl_count N [keep]: dlopens the first N of eight Debian libraries, calls a
 * function of each, and dlcloses each at once (or, with "keep", all at the
 * end) (tests/runtimes/isolation.sh): glibc's _dl_find_object table grows
 * by a segment at each of the first two dlopens (one per copy of its double
 * buffer), as without the profiler. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const libs[][2] = {
    {"libz.so.1", "zlibVersion"},     {"libbz2.so.1.0", "BZ2_bzlibVersion"},
    {"libexpat.so.1", "XML_ExpatVersion"}, {"liblzma.so.5", "lzma_version_string"},
    {"libgmp.so.10", "__gmpz_init"},  {"libffi.so.8", "ffi_call"},
    {"libuuid.so.1", "uuid_generate"}, {"libmd.so.0", "MD5Init"},
};
enum { NLIBS = sizeof libs / sizeof libs[0] };

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 0, keep = argc > 2 && !strcmp(argv[2], "keep"), loaded = 0;
    void *h[NLIBS];
    if (n < 0 || n > NLIBS) {
        fprintf(stderr, "dl_count: N from 0 to %d\n", NLIBS);
        return 2;
    }
    for (int i = 0; i < n; i++) {
        if (!(h[i] = dlopen(libs[i][0], RTLD_NOW | RTLD_LOCAL))) {
            fprintf(stderr, "dl_count: %s\n", dlerror());
            return 1;
        }
        if (dlsym(h[i], libs[i][1])) loaded++;
        if (!keep) dlclose(h[i]);
    }
    for (int i = 0; keep && i < n; i++) dlclose(h[i]);
    printf("%d libraries\n", loaded);
    return 0;
}
