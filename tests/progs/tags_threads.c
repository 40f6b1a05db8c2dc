/* Tag scopes and named threads with exactly known allocations (tests/
 * mpquery/tree.sh, tests/mpquery/threads.sh). Every block stays live but
 * scratch's, the process's peak.
 *   worker-K (K = 1..4, pthread_setname_np): in_work K x 10000 in W
 *   then the main thread:
 *     no_tag   5 x 100 bytes outside any tag
 *     in_a     4 x 1000 in A
 *     in_b     3 x 2000 in A{B}, scratch 1 x 1048576 in A{B}, freed
 *     in_c     2 x 4000 in A{B{C}}
 * Per scope (self): A 4 calls 4000 bytes; B 4 calls 1054576 bytes, 1 freed,
 * 6000 live; C 2 calls 8000 bytes; W 10 calls 100000 bytes; no tag 5 calls
 * 500 bytes. The main thread creates the workers with its own stacks off
 * (mp_thread_deactivate): glibc's thread set-up (the DTV) then counts in
 * the totals only. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "mallocprof.h"

#define WORKERS 4

static void *keep[64];
static int nkeep;
static void *worker_blocks[WORKERS][WORKERS];

void no_tag(void) { for (int i = 0; i < 5; i++) keep[nkeep++] = malloc(100); }
void in_a(void) { for (int i = 0; i < 4; i++) keep[nkeep++] = malloc(1000); }
void in_b(void) { for (int i = 0; i < 3; i++) keep[nkeep++] = malloc(2000); }
void scratch(void) { free(malloc(1 << 20)); }
void in_c(void) { for (int i = 0; i < 2; i++) keep[nkeep++] = malloc(4000); }

void in_work(int k)
{
    for (int i = 0; i <= k; i++) worker_blocks[k][i] = malloc(10000);
}

static void *worker(void *arg)
{
    int k = (int)(long)arg;
    char name[16] = "worker-0";
    name[7] = (char)('1' + k);
    pthread_setname_np(pthread_self(), name);
    mp_tag_push("W");
    in_work(k);
    mp_tag_pop();
    return NULL;
}

int main(void)
{
    pthread_t th[WORKERS];
    mp_thread_deactivate();
    for (long k = 0; k < WORKERS; k++) pthread_create(&th[k], NULL, worker, (void *)k);
    for (int k = 0; k < WORKERS; k++) pthread_join(th[k], NULL);
    mp_thread_reset();
    no_tag();
    mp_tag_push("A");
    in_a();
    mp_tag_push("B");
    in_b();
    scratch();
    mp_tag_push("C");
    in_c();
    mp_tag_pop();
    mp_tag_pop();
    mp_tag_pop();
    return 0;
}
