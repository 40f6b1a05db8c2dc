/* A process peak of known composition (tests/recorder/peak_snapshot.sh). One
 * thread: keep_a holds 3000 x 1000 bytes (a snapshot "before"), keep_b
 * 2000 x 2000, then big_d
 * one block of 1000000: the peak, 8000000 bytes requested, reached by one
 * block larger than the capture step (1/128 of it), so the capture is at
 * the peak exactly. Then a and half of b are freed (a snapshot "after"),
 * and spike_c holds
 * 1000 x 4000 bytes: 7000000 live, below the peak; its own peak (4000000)
 * is not in the process's. With an argument, "threads": four threads each
 * hold 1000 x 1000 bytes in worker_hold and end; main then allocates
 * big_d (the peak: 5000000) and frees everything, the workers' blocks
 * included (frees by another thread than the allocating one). */
#include "mallocprof.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void *a[3000], *b[2000], *c[1000], *w[4][1000];
static void *d;

__attribute__((noinline)) void keep_a(void) { for (int i = 0; i < 3000; i++) a[i] = malloc(1000); }
__attribute__((noinline)) void keep_b(void) { for (int i = 0; i < 2000; i++) b[i] = malloc(2000); }
__attribute__((noinline)) void big_d(void) { d = malloc(1000000); }
__attribute__((noinline)) void spike_c(void) { for (int i = 0; i < 1000; i++) c[i] = malloc(4000); }

__attribute__((noinline)) void worker_hold(void **v) { for (int i = 0; i < 1000; i++) v[i] = malloc(1000); }
static void *worker(void *arg) { worker_hold(arg); return NULL; }

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "threads")) {
        pthread_t t[4];
        for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, w[i]);
        for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
        big_d();
        free(d);
        for (int i = 0; i < 4; i++) for (int j = 0; j < 1000; j++) free(w[i][j]);
        return 0;
    }
    keep_a();
    mp_snapshot("before");
    keep_b();
    big_d();
    for (int i = 0; i < 3000; i++) free(a[i]);
    for (int i = 0; i < 1000; i++) free(b[i]);
    mp_snapshot("after");
    spike_c();
    for (int i = 0; i < 1000; i++) free(c[i]);
    for (int i = 1000; i < 2000; i++) free(b[i]);
    free(d);
    return 0;
}
