/* Built with frame pointers (like every test program): allocations at
 * several depths through three alternating functions, up to 150 frames.
 * deep_leaf: 5 depths x 1000 x 24 bytes. For the fp/libunwind agreement test. */
#include <stdlib.h>

void *volatile sink;
void deep_a(int d);
void deep_b(int d);
void deep_c(int d);

void deep_leaf(void) { for (int i = 0; i < 1000; i++) { sink = malloc(24); free(sink); } }
void deep_a(int d) { if (d <= 0) deep_leaf(); else deep_b(d - 1); }
void deep_b(int d) { if (d <= 0) deep_leaf(); else deep_c(d - 1); }
void deep_c(int d) { if (d <= 0) deep_leaf(); else deep_a(d - 1); }

int main(void)
{
    int depths[] = { 1, 10, 50, 100, 150 };
    for (int i = 0; i < 5; i++) deep_a(depths[i]);
    return 0;
}
