/* Memory over time while the profiler is busy (tests/recorder/ticks_busy.sh):
 * tick_busy SECONDS OUT allocates without a pause for SECONDS of wall
 * time, each allocation down another of 2^14 call paths (new stacks for
 * every snapshot to write: slow snapshots), one block of 10000 bytes more
 * kept every 1000 of them (freed at the end). Every 64 paths it notes the
 * time (CLOCK_REALTIME, the points' clock) and its own CPU time; OUT gets
 * them, a line "time cpu" each, at the end. No other output. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LEVELS 14
#define MAX_NOTES (1 << 20)
static double notes[MAX_NOTES][2];
static void *kept[100000];
void *volatile sink;

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void branch1(int level, unsigned long bits);
__attribute__((noinline)) void path_end(void) { sink = malloc(64); free(sink); }
__attribute__((noinline)) void branch0(int level, unsigned long bits)
{
    if (level == LEVELS) path_end();
    else if (bits >> level & 1) branch1(level + 1, bits);
    else branch0(level + 1, bits);
}
__attribute__((noinline)) void branch1(int level, unsigned long bits)
{
    if (level == LEVELS) path_end();
    else if (bits >> level & 1) branch1(level + 1, bits);
    else branch0(level + 1, bits);
}
__attribute__((noinline)) void *keep_alloc(void) { return malloc(10000); }

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    double end = clock_s(CLOCK_REALTIME) + atof(argv[1]);
    size_t n = 0, nkept = 0;
    for (unsigned long bits = 0;; bits++) {
        branch0(0, bits & ((1ul << LEVELS) - 1));
        if (bits % 1000 == 999 && nkept < sizeof kept / sizeof *kept) kept[nkept++] = keep_alloc();
        if (bits % 64) continue;
        double now = clock_s(CLOCK_REALTIME);
        if (n < MAX_NOTES) notes[n][0] = now, notes[n][1] = clock_s(CLOCK_THREAD_CPUTIME_ID), n++;
        if (now >= end) break;
    }
    while (nkept) free(kept[--nkept]);
    FILE *out = fopen(argv[2], "w");
    if (!out) return 1;
    for (size_t i = 0; i < n; i++) fprintf(out, "%.6f %.6f\n", notes[i][0], notes[i][1]);
    return fclose(out) ? 1 : 0;
}
