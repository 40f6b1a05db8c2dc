/* A process peak of known composition, for the sampled maxlive (tests/
 * recorder/peak_sampled.sh): phase_a holds 4000 x 1024 bytes, then frees them;
 * phase_b holds 8000 x 1024 bytes (the process's peak: 8192000 bytes
 * requested), then frees them; phase_c makes 100000 x 32-byte blocks, one at
 * a time (its own peak: 32 bytes). Nothing is live at exit. */
#include <stdlib.h>

void *volatile sink;
static void *held[8000];

static void hold(int n) { for (int i = 0; i < n; i++) held[i] = malloc(1024); }
static void release(int n) { for (int i = 0; i < n; i++) free(held[i]); }
__attribute__((noinline)) void phase_a(void) { hold(4000); release(4000); }
__attribute__((noinline)) void phase_b(void) { hold(8000); release(8000); }
__attribute__((noinline)) void phase_c(void) { for (int i = 0; i < 100000; i++) { sink = malloc(32); free(sink); } }

int main(void)
{
    phase_a();
    phase_b();
    phase_c();
    return 0;
}
