/* cold_scan: the time a snapshot spends on MP_COLD's scan of a big heap.
 * Holds BLOCKS live 64-byte blocks (four call sites), then takes three
 * snapshots (mp_snapshot) and prints the median one's time in ms: run with
 * MP_COLD=0 and 1, the difference is the scan.
 * Usage: cold_scan [BLOCKS]. Links with libmallocprof_api. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "mallocprof.h"

static __attribute__((noipa)) char *site0(void) { char *p = malloc(64); p[0] = 0; return p; }
static __attribute__((noipa)) char *site1(void) { char *p = malloc(64); p[0] = 1; return p; }
static __attribute__((noipa)) char *site2(void) { char *p = malloc(64); p[0] = 2; return p; }
static __attribute__((noipa)) char *site3(void) { char *p = malloc(64); p[0] = 3; return p; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 1000000;
    char *(*const sites[4])(void) = { site0, site1, site2, site3 };
    char **blocks = malloc(count * sizeof *blocks);
    for (long i = 0; i < count; i++) blocks[i] = sites[i & 3]();
    double t[3];
    for (int k = 0; k < 3; k++) {
        double t0 = now();
        mp_snapshot("scan");
        t[k] = (now() - t0) * 1e3;
    }
    double m = t[0] > t[1] ? (t[1] > t[2] ? t[1] : t[0] > t[2] ? t[2] : t[0]) : (t[0] > t[2] ? t[0] : t[1] > t[2] ? t[2] : t[1]);
    printf("%.1f\n", m);
    for (long i = 0; i < count; i++) free(blocks[i]);
    free(blocks);
    return 0;
}
