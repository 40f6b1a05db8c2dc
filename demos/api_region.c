/* The API: link with -lmallocprof_api, run with MP_ENABLED=0, and only the
 * code between mp_activate() and mp_deactivate() is profiled (totals still
 * count everything). Without LD_PRELOAD the calls do nothing.
 *   make build/demos/api_region
 *   MP_ENABLED=0 LD_PRELOAD=build/libmallocprof.so build/demos/api_region */
#include <stdio.h>
#include <stdlib.h>
#include "mallocprof.h"

static void startup(void) { for (int i = 0; i < 1000; i++) free(malloc(1000)); }
static void interesting(void) { for (int i = 0; i < 300; i++) free(malloc(48)); }

int main(void)
{
    startup();                  /* not profiled */
    mp_activate();
    mp_tag_push("interesting-phase");
    interesting();              /* profiled, under a [tag] frame */
    mp_tag_pop();
    mp_deactivate();
    mp_snapshot("after interesting");
    printf("profiler %s\n", mp_is_active() ? "active" : "inactive (as it should be after mp_deactivate)");
    return 0;
}
