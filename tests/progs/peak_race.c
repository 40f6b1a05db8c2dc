/* Peaks read while the threads go on (tests/recorder/peak_concurrent.sh): with
 * MP_INTERVAL small, every interval flush writes the latest peak while
 * the workers keep allocating, freeing and passing new capture points.
 *
 * peak_race THREADS: THREADS workers (0: main does the work alone). Each
 * makes 199,998 blocks of 64 + s bytes from 300 distinct stacks (s =
 * 0..299: a recursion depth s % 60 and one of five leaves, s / 60), frees
 * 1,000 of every 3,000 as it goes (so its live bytes climb in steps), and
 * frees the rest at the end; plus one calloc for its table of blocks. */
#include <pthread.h>
#include <stdlib.h>

#define ROUNDS 6
#define PER_ROUND 33333
#define NSTACKS 300

typedef void *(*leaf_fn)(size_t);
__attribute__((noinline)) static void *leaf0(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *leaf1(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *leaf2(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *leaf3(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *leaf4(size_t n) { return malloc(n); }
static leaf_fn const leaves[] = { leaf0, leaf1, leaf2, leaf3, leaf4 };

__attribute__((noinline)) static void *deep(int d, int leaf, size_t n)
{
    void *p = d ? deep(d - 1, leaf, n) : leaves[leaf](n);
    __asm__ volatile("" ::: "memory");      /* not a tail call: one frame per level */
    return p;
}

static void *work(void *arg)
{
    (void)arg;
    void **held = calloc(ROUNDS * PER_ROUND, sizeof *held);
    if (!held) abort();
    int n = 0;
    for (int round = 0; round < ROUNDS; round++)
        for (int i = 0; i < PER_ROUND; i++) {
            int s = (i * 7 + round) % NSTACKS;
            held[n++] = deep(s % 60, s / 60, 64 + (size_t)s);
            if (n % 3000 == 0)
                for (int k = n - 3000; k < n - 2000; k++) free(held[k]), held[k] = NULL;
        }
    for (int k = 0; k < n; k++) free(held[k]);
    free(held);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 0;
    pthread_t th[16];
    if (threads < 0 || threads > 16) return 2;
    if (!threads) work(NULL);
    for (int i = 0; i < threads; i++)
        if (pthread_create(&th[i], NULL, work, NULL)) return 1;
    for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
    return 0;
}
