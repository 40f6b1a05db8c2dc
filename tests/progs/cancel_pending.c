/* A thread with a deferred cancel pending allocates (tests/
 * recorder/thread_cancel.sh): malloc is not a cancellation point, so the
 * allocation must return, the cancel acted upon at the thread's next
 * cancellation point (pthread_testcancel), and the other threads go on.
 *
 * cancel_pending PLUGIN: a worker cancels itself (deferred: pending),
 * calls plugin_run (tests/progs/libplugin.c: 42 blocks of 77 bytes, 40
 * freed; in a library dlopen'ed just before, new code to unwind), then
 * reaches pthread_testcancel. main joins it (PTHREAD_CANCELED),
 * dlopens and closes the library again, makes 1000 blocks of 32 bytes
 * (after_cancel), and prints "canceled 1" (the worker's call returned).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

void *volatile sink;
static const char *plugin;
static int made;

static void *worker(void *arg)
{
    (void)arg;
    void *lib = dlopen(plugin, RTLD_NOW);
    if (!lib) return NULL;
    void (*run)(void) = (void (*)(void))dlsym(lib, "plugin_run");
    pthread_cancel(pthread_self());         /* deferred: pending until a cancellation point */
    if (run) run(), made = 1;
    pthread_testcancel();
    return NULL;
}

__attribute__((noinline)) void after_cancel(void) { for (int i = 0; i < 1000; i++) sink = malloc(32); }

int main(int argc, char **argv)
{
    plugin = argc > 1 ? argv[1] : "libplugin.so";
    pthread_t t;
    void *ret = NULL;
    if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, &ret)) return 1;
    void *lib = dlopen(plugin, RTLD_NOW);
    if (lib) dlclose(lib);
    after_cancel();
    printf("%s %d\n", ret == PTHREAD_CANCELED ? "canceled" : "not canceled", made);
    return 0;
}
