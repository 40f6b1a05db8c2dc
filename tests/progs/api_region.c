/* Run with MP_ENABLED=0: only the region between mp_activate() and
 * mp_deactivate() gets stacks. before_region: 100 x 10 bytes; in_region:
 * 200 x 20 bytes; after_region: 300 x 30 bytes; all freed. Expected stacks:
 * only in_region (200 calls, 4000 bytes); totals: 600 calls, 14000 bytes;
 * ncalls_nostack 400. Then mp_snapshot("region") returns 0 under the
 * profiler. Prints "active=N" (1 inside the region) to show mp_is_active. */
#include <stdio.h>
#include <stdlib.h>
#include "mallocprof.h"

void before_region(void) { for (int i = 0; i < 100; i++) free(malloc(10)); }
void in_region(void) { for (int i = 0; i < 200; i++) free(malloc(20)); }
void after_region(void) { for (int i = 0; i < 300; i++) free(malloc(30)); }

int main(void)
{
    before_region();
    mp_activate();
    int active = mp_is_active();
    in_region();
    mp_deactivate();
    after_region();
    int rc = mp_snapshot("region");
    char buf[64];
    int n = snprintf(buf, sizeof buf, "active=%d snapshot=%d\n", active, rc);
    fwrite(buf, 1, (size_t)n, stderr);
    return 0;
}
