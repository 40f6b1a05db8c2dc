/* The public API (mallocprof.h) as the preloaded library implements it; the
 * same symbols in libmallocprof_api.so do nothing. */
#include "symbols.h"
#include "snapshot.h"
#include "mallocprof.h"
#include "entry.h"

#include <string.h>

MP_EXPORT int mp_loaded(void)
{
    return 1;
}

MP_EXPORT int mp_summary(struct mp_summary *out)
{
    if (!out) return -1;
    struct mp_guard g = guard_enter(MP_INSIDE);
    entry_start();
    struct mp_totals t;
    process_totals(0, &t);
    *out = (struct mp_summary){ t.ncalls, t.memtot, t.nfree, (uint64_t)t.live, t.maxlive };
    guard_leave(&g);
    return 0;
}

MP_EXPORT void mp_activate(void)
{
    entry_start();
    unwind_prepare(0);
    atomic_store(&mp_active, 1);
    hot_path_update();
}

MP_EXPORT void mp_deactivate(void)
{
    entry_start();
    atomic_store(&mp_active, 0);
    hot_path_update();
}

static void set_thread_active(int active)
{
    entry_start();      /* before the thread's record (threads.c) */
    struct mp_guard g = guard_enter(MP_INSIDE);
    struct mp_thread *t = thread_self();
    if (t) t->active = active;
    hot_path_thread_switch();
    guard_leave(&g);
}

MP_EXPORT void mp_thread_activate(void)
{
    entry_start();
    unwind_prepare(0);
    set_thread_active(1);
}
MP_EXPORT void mp_thread_deactivate(void) { set_thread_active(0); }
MP_EXPORT void mp_thread_reset(void) { set_thread_active(-1); }

MP_EXPORT int mp_dump(int fd, const char *by, int n)
{
    return dump_write(fd, by, n, entry_start_slow);
}

MP_EXPORT int mp_is_active(void)
{
    entry_start();      /* before the thread's record (threads.c) */
    struct mp_guard g = guard_enter(MP_INSIDE);
    struct mp_thread *t = thread_self();
    int on = t && t->active >= 0 ? t->active : atomic_load(&mp_active);
    guard_leave(&g);
    return on;
}

MP_EXPORT void mp_set_threshold(long bytes)
{
    entry_start();
    atomic_store(&mp_threshold, bytes);
    hot_path_update();
}

MP_EXPORT int mp_snapshot(const char *label)
{
    entry_start();
    return flush_snapshot(FLUSH_API, label ? label : "");
}

MP_EXPORT void mp_tag_push(const char *name)
{
    entry_start();      /* before the thread's record (threads.c) */
    struct mp_guard g = guard_enter(MP_INSIDE);
    struct mp_thread *t = thread_self();
    if (t) {
        uintptr_t tag = tag_intern(name);
        if (t->ntags < MP_MAX_TAGS) t->tags[t->ntags] = tag;
        t->ntags++;     /* pushes beyond the limit are counted so pops match */
        t->tag_slot = 0;
    }
    guard_leave(&g);
}

MP_EXPORT void mp_tag_pop(void)
{
    entry_start();      /* before the thread's record (threads.c) */
    struct mp_thread *t = thread_self();
    if (t && t->ntags > 0) t->ntags--, t->tag_slot = 0;
}
