/* A known allocation pattern for mpquery check (tests/mpquery/check.sh):
 *   work_a   1000 x 100 bytes, each freed              (calls 1000, 100000 bytes)
 *   work_b   2000 x 1000 bytes, each freed             (doubled: 4000 x 1000)
 *   hold_c    100 x 4096 bytes live at once, then freed (the peak: 409600 + keep_d's 640)
 *   keep_d     10 x 64 bytes never freed               (leaked: 640 bytes)
 *   leak_e    150 x 4096 bytes never freed, with "leak" (614400 bytes)
 * Arguments: "double", "leak", and "shift N": first N bytes allocated
 * and freed (phase), which moves the sampling points (MP_SAMPLE) of what follows,
 * so that sampled runs of one pattern sample different blocks. */
#include <stdlib.h>
#include <string.h>

void *volatile sink;
static void *held[150];

/* in blocks of at most 64 KiB, one live at a time: not the peak */
void phase(size_t n)
{
    for (size_t done = 0; done < n; done += 65536) {
        sink = malloc(n - done < 65536 ? n - done : 65536);
        free(sink);
    }
}
void work_a(void) { for (int i = 0; i < 1000; i++) { sink = malloc(100); free(sink); } }
void work_b(int n) { for (int i = 0; i < n; i++) { sink = malloc(1000); free(sink); } }
void keep_d(void) { for (int i = 0; i < 10; i++) held[i] = malloc(64); }
void hold_c(void)
{
    void *b[100];
    for (int i = 0; i < 100; i++) b[i] = malloc(4096);
    for (int i = 0; i < 100; i++) free(b[i]);
}
void leak_e(void) { for (int i = 0; i < 150; i++) sink = malloc(4096); }

int main(int argc, char **argv)
{
    int twice = 0, leak = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "double")) twice = 1;
        else if (!strcmp(argv[i], "leak")) leak = 1;
        else if (!strcmp(argv[i], "shift") && i + 1 < argc) phase((size_t)atol(argv[++i]));
    }
    work_a();
    work_b(twice ? 4000 : 2000);
    keep_d();
    hold_c();
    if (leak) leak_e();
    return 0;
}
