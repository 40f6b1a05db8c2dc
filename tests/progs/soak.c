/* soak SECONDS: 2 threads allocate without pause for SECONDS. Each thread
 * uses 8 "busy" stacks all the time (soak_busy, 8 call sites) and 30 "early"
 * stacks only during the first second (soak_early), keeping at most 4096
 * blocks live in a ring, so memory use is flat after warm-up. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static double seconds;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

struct ring { void *blocks[4096]; unsigned next; };

static void put(struct ring *r, void *p)
{
    unsigned i = r->next++ % 4096;
    free(r->blocks[i]);
    r->blocks[i] = p;
}

__attribute__((noinline)) void soak_busy(struct ring *r, int site)
{
    switch (site) {
    case 0: put(r, malloc(16)); break;
    case 1: put(r, malloc(32)); break;
    case 2: put(r, malloc(48)); break;
    case 3: put(r, malloc(64)); break;
    case 4: put(r, malloc(96)); break;
    case 5: put(r, malloc(128)); break;
    case 6: put(r, malloc(256)); break;
    default: put(r, malloc(512)); break;
    }
}

__attribute__((noinline)) void soak_early(struct ring *r, int depth)
{
    if (depth > 0) soak_early(r, depth - 1);
    else put(r, malloc(24));
}

static void *worker(void *arg)
{
    (void)arg;
    struct ring *r = calloc(1, sizeof *r);
    double start = now();
    for (int early = 1; early <= 30 && now() - start < 1.0; early++)
        for (int i = 0; i < 1000; i++) soak_early(r, early);
    while (now() - start < seconds)
        for (int i = 0; i < 8000; i++) soak_busy(r, i & 7);
    for (int i = 0; i < 4096; i++) free(r->blocks[i]);
    free(r);
    return NULL;
}

int main(int argc, char **argv)
{
    seconds = argc > 1 ? atof(argv[1]) : 60;
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    return 0;
}
