/* 4 threads; thread k allocates 1000 blocks of (k+1)*16 bytes in
 * thread_alloc and hands them to thread (k+1)%4, which frees them all.
 * Each thread also leaks 3 blocks of 64 bytes from thread_leak.
 * Expected: thread_alloc 4000 calls, 16*1000*(1+2+3+4) = 160000 bytes, all
 * freed, each allocating thread credited with its own 1000 blocks;
 * thread_leak 12 calls, 768 bytes live. Totals: 4012 calls, 160768 bytes,
 * 4000 frees, 768 live. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define N 1000
#define T 4
static void *blocks[T][N];
static pthread_barrier_t barrier;
static void *leaks[T][3];

void thread_alloc(int k)
{
    for (int i = 0; i < N; i++) blocks[k][i] = malloc((size_t)(k + 1) * 16);
}

void thread_leak(int k)
{
    for (int i = 0; i < 3; i++) leaks[k][i] = malloc(64);
}

static void *worker(void *arg)
{
    int k = (int)(long)arg;
    thread_alloc(k);
    thread_leak(k);
    pthread_barrier_wait(&barrier);
    int victim = (k + 1) % T;
    for (int i = 0; i < N; i++) free(blocks[victim][i]);
    return NULL;
}

int main(void)
{
    pthread_t th[T];
    pthread_barrier_init(&barrier, NULL, T);
    for (long k = 0; k < T; k++) pthread_create(&th[k], NULL, worker, (void *)k);
    for (int k = 0; k < T; k++) pthread_join(th[k], NULL);
    return 0;
}
