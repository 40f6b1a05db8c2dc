/* libmallocprof_api.so: the do-nothing build of the public API. Programs link
 * against it unconditionally; preloading libmallocprof.so overrides every
 * symbol here because the preloaded library comes first in symbol lookup. */
#include "mallocprof.h"

void mp_activate(void) {}
void mp_deactivate(void) {}
void mp_thread_activate(void) {}
void mp_thread_deactivate(void) {}
void mp_thread_reset(void) {}
int mp_is_active(void) { return 0; }
void mp_set_threshold(long bytes) { (void)bytes; }
int mp_snapshot(const char *label) { (void)label; return -1; }
void mp_tag_push(const char *name) { (void)name; }
void mp_tag_pop(void) {}
int mp_loaded(void) { return 0; }
int mp_dump(int fd, const char *by, int n) { (void)fd, (void)by, (void)n; return -1; }

int mp_summary(struct mp_summary *out)
{
    if (out) *out = (struct mp_summary){ 0, 0, 0, 0, 0 };
    return -1;
}
