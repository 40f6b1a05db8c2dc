/* The originals of every interposed libc function (hooks.h), found once,
 * all together, at the first call of any hook. While the malloc family
 * resolves, dlsym's own allocations are served from entry/interpose.c's
 * bootstrap buffer (mp_hooks_resolving says so); nothing here allocates.
 * mp_probe_seen: entry/'s malloc saw process/'s probe (interpose_check). */
#define _GNU_SOURCE
#include "base.h"
#include "hooks.h"

#include <dlfcn.h>

struct mp_next mp_next;
int mp_hooks_resolving;
int mp_probe_seen;

/* The malloc family first (while it resolves, allocations are served from
 * the bootstrap buffer), then the rest. */
void hooks_resolve(void)
{
    if (mp_hooks_resolving || mp_next.sigaction) return;
    mp_hooks_resolving = 1;
#define MP_HOOK_RESOLVE(name, ret, params) \
    __atomic_store_n(&mp_next.name, (ret(*) params)dlsym(RTLD_NEXT, #name), __ATOMIC_RELEASE);
    MP_HOOKS(MP_HOOK_RESOLVE)
#undef MP_HOOK_RESOLVE
    mp_hooks_resolving = 0;
}
