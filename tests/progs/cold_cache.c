/* Cold blocks (tests/recorder/cold_*.sh): a cache rewritten every 50 ms
 * (cache_fill) beside a buffer written once and never again (buffer_fill,
 * 4 MB: a mapping of its own, so no other block shares its pages), for
 * 1.5 s. Argument "threads": two threads keep one each (main waits);
 * "fork": the parent keeps its own, and a child forked after the parent's
 * buffer keeps a 2 MB buffer and a cache of its own. Prints "done". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#define CACHE (64 << 10)
#define ROUNDS 30

__attribute__((noinline)) char *buffer_fill(size_t size)
{
    char *b = malloc(size);
    memset(b, 'b', size);
    return b;
}

__attribute__((noinline)) char *cache_fill(char *cache, int round)
{
    if (!cache) cache = malloc(CACHE);
    memset(cache, round, CACHE);
    return cache;
}

/* The blocks stay live to the end: the exit snapshot sees them. */
static void *keep(void *size)
{
    volatile char *buffer = buffer_fill((size_t)size);
    char *cache = NULL;
    for (int i = 0; i < ROUNDS; i++) {
        cache = cache_fill(cache, i);
        usleep(50 * 1000);
    }
    (void)buffer;
    return cache;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "threads")) {
        pthread_t t[2];
        for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, keep, (void *)(size_t)(4 << 20));
        for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    } else if (!strcmp(mode, "fork")) {
        volatile char *buffer = buffer_fill(4 << 20);
        pid_t child = fork();
        if (child == 0) {
            keep((void *)(size_t)(2 << 20));
            exit(0);
        }
        char *cache = NULL;
        for (int i = 0; i < ROUNDS; i++) {
            cache = cache_fill(cache, i);
            usleep(50 * 1000);
        }
        waitpid(child, NULL, 0);
        (void)buffer;
    } else {
        keep((void *)(size_t)(4 << 20));
    }
    printf("done\n");
    return 0;
}
