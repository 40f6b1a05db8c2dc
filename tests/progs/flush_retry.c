/* A snapshot lost to a passing fault (tests/recorder/flush_retry.sh): the process
 * is still one process in the profile, and the next snapshot has it all.
 *
 * flush_retry: 1000 blocks of 100 bytes (part_a), snapshot "a"; with the
 * descriptor limit at the descriptors already open (the profiler cannot
 * open the file), 1000 more (part_b) and snapshot "b", which is lost; the
 * limit back, 1000 more (part_c) and snapshot "c"; nothing freed. Prints
 * the API's results "0 -1 0". */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <mallocprof.h>

void *volatile sink;
__attribute__((noinline)) void part_a(void) { for (int i = 0; i < 1000; i++) sink = malloc(100); }
__attribute__((noinline)) void part_b(void) { for (int i = 0; i < 1000; i++) sink = malloc(100); }
__attribute__((noinline)) void part_c(void) { for (int i = 0; i < 1000; i++) sink = malloc(100); }

int main(void)
{
    struct rlimit old, low;
    if (getrlimit(RLIMIT_NOFILE, &old)) return 1;
    part_a();
    int a = mp_snapshot("a");
    low = old;
    low.rlim_cur = 3;
    if (setrlimit(RLIMIT_NOFILE, &low)) return 1;
    part_b();
    int b = mp_snapshot("b");
    if (setrlimit(RLIMIT_NOFILE, &old)) return 1;
    part_c();
    int c = mp_snapshot("c");
    printf("%d %d %d\n", a, b, c);
    return 0;
}
