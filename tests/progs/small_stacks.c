/* Threads with small stacks (tests/recorder/thread_small_stacks.sh): the recorder's heavy
 * work (an unwind rule computed the first time, symbols, the snapshot)
 * must not run on them.
 *
 * small_stacks PLUGIN KB EXIT: a worker with a stack of KB KiB dlopens
 * PLUGIN and calls its plugin_run (new code: 42 blocks of 77 bytes, 40
 * freed), then makes 100 blocks of 24 bytes (small_worker); if EXIT is 1
 * it calls exit(4) from there (the exit snapshot on its thread), else
 * main joins it and returns 0. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

void *volatile sink;
static const char *plugin;
static int exit_there;

__attribute__((noinline)) void small_worker(void) { for (int i = 0; i < 100; i++) sink = malloc(24); }

static void *worker(void *arg)
{
    (void)arg;
    void *lib = dlopen(plugin, RTLD_NOW);
    void (*run)(void) = lib ? (void (*)(void))dlsym(lib, "plugin_run") : NULL;
    if (!run) exit(2);
    run();
    small_worker();
    if (exit_there) exit(4);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    plugin = argv[1];
    exit_there = atoi(argv[3]);
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    if (pthread_attr_setstacksize(&attr, (size_t)atoi(argv[2]) << 10)) return 2;
    if (pthread_create(&t, &attr, worker, NULL) || pthread_join(t, NULL)) return 1;
    return 0;
}
