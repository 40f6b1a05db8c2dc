/* dlopens five of Debian's libraries, calls a function of each, dlcloses
 * them (tests/recorder/isolation.sh): loaded by this program alone, each is
 * a new object (its constructors, the loader's allocations). libz, libbz2
 * and liblzma are libdw's and libunwind's too: the profiler's copies must
 * not stand in for them. */
#include <dlfcn.h>
#include <stdio.h>

static const char *const libs[][2] = {
    {"libz.so.1", "zlibVersion"},     {"libbz2.so.1.0", "BZ2_bzlibVersion"},
    {"libexpat.so.1", "XML_ExpatVersion"}, {"liblzma.so.5", "lzma_version_string"},
    {"libgmp.so.10", "__gmpz_init"},
};

int main(void)
{
    int loaded = 0;
    for (unsigned i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        void *h = dlopen(libs[i][0], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dl_libs: %s\n", dlerror());
            return 1;
        }
        if (dlsym(h, libs[i][1])) loaded++;
        dlclose(h);
    }
    printf("%d libraries\n", loaded);
    return 0;
}
