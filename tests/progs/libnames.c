/* A library for tests/mpquery/frame_names.sh, built there and stripped,
 * loaded by dl_plugin (twice: each load allocates again): a static
 * function, nameless once stripped, allocates 8 blocks of 1000 bytes and
 * keeps them (16 leaked blocks, 16000 bytes in all); plugin_run is
 * exported, so it keeps its name. */
#include <stdlib.h>

static void *kept[8];

static __attribute__((noinline)) void names_alloc(void)
{
    for (int i = 0; i < 8; i++) kept[i] = malloc(1000);
}

void plugin_run(void) { names_alloc(); }
void plugin_release(void) {}
