/* dlopen a plugin that allocates from a static function, dlclose it, then
 * load it again and run it once more (it may land at another address).
 * Expected: plugin_static_alloc 84 calls, 6468 bytes, all freed; its frames
 * are named although the library is gone at exit. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int run_once(const char *path)
{
    void *h = dlopen(path, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    void (*run)(void) = (void (*)(void))dlsym(h, "plugin_run");
    void (*release)(void) = (void (*)(void))dlsym(h, "plugin_release");
    run();
    release();
    return dlclose(h);
}

int main(int argc, char **argv)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", argc > 1 ? argv[1] : "");
    if (!*path) {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 20);
        if (n < 0) return 1;
        path[n] = 0;
        strcpy(strrchr(path, '/') + 1, "libplugin.so");
    }
    if (run_once(path) || run_once(path)) return 1;
    puts("plugin done");
    return 0;
}
