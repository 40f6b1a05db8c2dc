/* deep: allocations made 200 frames down. A descent recurses through four
 * distinct noinline functions (which one comes next depends on the depth and
 * on the iteration, so there are four distinct 200-frame paths) and, at the
 * bottom, allocates, touches and frees a few blocks.
 * Usage: deep [ITERATIONS]; prints a checksum so nothing is elided. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEPTH 200
#define BLOCKS 4 /* allocations per descent */

typedef long (*step_fn)(int depth, long iter);
static long step_a(int depth, long iter);
static long step_b(int depth, long iter);
static long step_c(int depth, long iter);
static long step_d(int depth, long iter);
static step_fn const steps[4] = { step_a, step_b, step_c, step_d };

/* The bottom of a descent: the allocations being profiled. */
static __attribute__((noinline)) long leaf(long iter)
{
    char *blocks[BLOCKS];
    long sum = 0;
    for (int i = 0; i < BLOCKS; i++) {
        size_t size = 16 + (size_t)((iter + i) & 63) * 8;
        blocks[i] = malloc(size);
        memset(blocks[i], (int)iter, size);
    }
    for (int i = 0; i < BLOCKS; i++) {
        sum += blocks[i][i];
        free(blocks[i]);
    }
    return sum;
}

/* The result is used after the call, so no call is a tail call and every
 * level keeps its frame. */
static long next(int depth, long iter)
{
    if (depth == DEPTH) return leaf(iter);
    return steps[(depth + iter) & 3](depth + 1, iter) + 1;
}

static __attribute__((noinline)) long step_a(int depth, long iter) { return next(depth, iter) ^ 1; }
static __attribute__((noinline)) long step_b(int depth, long iter) { return next(depth, iter) ^ 2; }
static __attribute__((noinline)) long step_c(int depth, long iter) { return next(depth, iter) ^ 3; }
static __attribute__((noinline)) long step_d(int depth, long iter) { return next(depth, iter) ^ 4; }

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 300000;
    long sum = 0;
    for (long iter = 0; iter < iterations; iter++) sum += step_a(1, iter);
    printf("deep: %ld descents of %d frames, checksum %ld\n", iterations, DEPTH, sum);
    return 0;
}
