/* Allocations in phases between snapshots, for time windows
 * (tests/mpquery/time_window.sh); every count known:
 *   phase_a: 100 x 1000 bytes, kept                         snapshot "a"
 *   phase_b: 200 x 500 bytes, 50 of them freed; 20 of
 *            phase_a's blocks freed too                     snapshot "b"
 *   phase_c: 300 x 100 bytes, kept                          snapshot "c"
 * then exit (its snapshot: nothing allocated or freed since "c"). The
 * snapshots are 0.2 s apart at least, so that a time between two of them
 * is easy to write; no stdio before the end. */
#include "mallocprof.h"

#include <stdlib.h>
#include <time.h>

static void *a[100], *b[200], *c[300];

static void pause_a_while(void)
{
    struct timespec ts = { 0, 200 * 1000 * 1000 };
    while (nanosleep(&ts, &ts)) {}
}

__attribute__((noinline)) void phase_a(void) { for (int i = 0; i < 100; i++) a[i] = malloc(1000); }
__attribute__((noinline)) void phase_b(void)
{
    for (int i = 0; i < 200; i++) b[i] = malloc(500);
    for (int i = 0; i < 50; i++) free(b[i]);
    for (int i = 0; i < 20; i++) free(a[i]);
}
__attribute__((noinline)) void phase_c(void) { for (int i = 0; i < 300; i++) c[i] = malloc(100); }

int main(void)
{
    pause_a_while();
    phase_a();
    mp_snapshot("a");
    pause_a_while();
    phase_b();
    mp_snapshot("b");
    pause_a_while();
    phase_c();
    mp_snapshot("c");
    pause_a_while();
    return 0;
}
