/* The stacks at the peak at scale (tests/recorder/peak_scale.sh): hundreds of
 * stacks created before the peak and hundreds after it.
 *
 * peak_scale THREADS: THREADS workers (0: main does their work, the
 * process has one thread). Each worker:
 *   1. keeps 10 blocks of 100 + s bytes from each of 300 distinct stacks
 *      (s = 0..299, leaf keep_end), and hands 100 blocks of 64 bytes
 *      (handed_out) to main, which frees them before the peak (with
 *      workers: frees by another thread, before the capture);
 *   2. main takes the API snapshot "top" (everything kept is live), then
 *      makes one block of 64 MiB (big_block): the process's peak, reached
 *      by one block larger than every capture step and publishing slack,
 *      so exact; then frees it;
 *   3. the kept blocks of even s are freed by main (with workers: remote
 *      frees after the capture), those of odd s by their worker;
 *   4. each worker churns on 300 other stacks (leaf churn_end), 5 blocks
 *      of 48 bytes each, made and freed at once: stacks first seen after
 *      the peak.
 * So at the peak, per worker: keep_end stacks 3000 calls, 3000 * 100 +
 * 10 * (0 + ... + 299) = 748500 bytes live; handed_out 100 calls, 100
 * freed; big_block 1 call of 67108864 bytes; churn_end nothing. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mallocprof.h>

#define NSTACKS 300
#define KEEP 10
#define HANDED 100
#define CHURN 5
#define LEVELS 9                /* 2^9 = 512 distinct paths >= NSTACKS */
#define MAX_WORKERS 16

struct worker {
    pthread_t thread;
    void *kept[NSTACKS][KEEP];
    void *handed[HANDED];
};

static struct worker workers[MAX_WORKERS];
static int nworkers;
static pthread_barrier_t kept_all, freed_even, churned;
volatile int calls_after;       /* keeps the branches from being tail calls */

/* A distinct call path for each s: one function of two at each level. */
typedef void (*leaf_fn)(struct worker *w, int s);
void branch1(int level, int s, leaf_fn leaf, struct worker *w);
__attribute__((noinline)) void branch0(int level, int s, leaf_fn leaf, struct worker *w)
{
    if (level == LEVELS) leaf(w, s);
    else if (s >> level & 1) branch1(level + 1, s, leaf, w);
    else branch0(level + 1, s, leaf, w);
    calls_after++;
}
__attribute__((noinline)) void branch1(int level, int s, leaf_fn leaf, struct worker *w)
{
    if (level == LEVELS) leaf(w, s);
    else if (s >> level & 1) branch1(level + 1, s, leaf, w);
    else branch0(level + 1, s, leaf, w);
    calls_after++;
}

__attribute__((noinline)) void keep_end(struct worker *w, int s)
{
    for (int i = 0; i < KEEP; i++) w->kept[s][i] = malloc(100 + (size_t)s);
}

__attribute__((noinline)) void churn_end(struct worker *w, int s)
{
    (void)w, (void)s;
    for (int i = 0; i < CHURN; i++) {
        char *volatile p = malloc(48);
        free(p);
    }
}

__attribute__((noinline)) void handed_out(struct worker *w)
{
    for (int i = 0; i < HANDED; i++) w->handed[i] = malloc(64);
}

__attribute__((noinline)) void *big_block(void)
{
    void *p = malloc(64 << 20);
    memset(p, 1, 4096);
    return p;
}

static void keep_phase(struct worker *w)
{
    for (int s = 0; s < NSTACKS; s++) branch0(0, s, keep_end, w);
    handed_out(w);
}

static void free_kept(struct worker *w, int parity)
{
    for (int s = parity; s < NSTACKS; s += 2)
        for (int i = 0; i < KEEP; i++) free(w->kept[s][i]);
}

static void churn_phase(struct worker *w)
{
    for (int s = 0; s < NSTACKS; s++) branch0(0, s, churn_end, w);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    keep_phase(w);
    pthread_barrier_wait(&kept_all);
    pthread_barrier_wait(&freed_even);
    free_kept(w, 1);
    churn_phase(w);
    pthread_barrier_wait(&churned);
    return NULL;
}

/* main's part: the handed blocks, the peak, the even stacks' blocks */
static void main_part(void)
{
    int n = nworkers ? nworkers : 1;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < HANDED; i++) free(workers[k].handed[i]);
    mp_snapshot("top");
    free(big_block());
    for (int k = 0; k < n; k++) free_kept(&workers[k], 0);
}

int main(int argc, char **argv)
{
    nworkers = argc > 1 ? atoi(argv[1]) : 0;
    if (nworkers < 0 || nworkers > MAX_WORKERS) {
        fprintf(stderr, "usage: peak_scale [THREADS 0..%d]\n", MAX_WORKERS);
        return 2;
    }
    if (!nworkers) {
        keep_phase(&workers[0]);
        main_part();
        free_kept(&workers[0], 1);
        churn_phase(&workers[0]);
        return 0;
    }
    pthread_barrier_init(&kept_all, NULL, (unsigned)nworkers + 1);
    pthread_barrier_init(&freed_even, NULL, (unsigned)nworkers + 1);
    pthread_barrier_init(&churned, NULL, (unsigned)nworkers + 1);
    for (int k = 0; k < nworkers; k++) pthread_create(&workers[k].thread, NULL, worker_main, &workers[k]);
    pthread_barrier_wait(&kept_all);
    main_part();
    pthread_barrier_wait(&freed_even);
    pthread_barrier_wait(&churned);
    for (int k = 0; k < nworkers; k++) pthread_join(workers[k].thread, NULL);
    return 0;
}
