/* The kinds of the program's mappings named ('anonymous', 'anonymous
 * shared', 'brk', a file's path): each name kept once, its pseudo return
 * address the leaf of the mapping's stack, maps_name its name at the
 * flush. Moved from maps.c verbatim. */
#define _GNU_SOURCE
#include "hot.h"
#include "maps.h"
#include "maps_internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ------------------------------------------------------------ kind names */

/* The leaves' names, interned like tags (stacks.c): a bounded table, the
 * pseudo address MAPS_NAME_BASE + index; past the table, "(file)". */
#define MAX_MAP_NAMES 2048
#define MAP_NAME_LEN 256
static atomic_flag names_lock = ATOMIC_FLAG_INIT;
static char map_names[MAX_MAP_NAMES][MAP_NAME_LEN];
static uint64_t map_name_hash[MAX_MAP_NAMES];
static _Atomic uint32_t nnames;

uintptr_t maps_name_intern(const char *name)
{
    char buf[MAP_NAME_LEN];
    strncpy(buf, name, MAP_NAME_LEN - 1);
    buf[MAP_NAME_LEN - 1] = 0;
    uint64_t h = fnv1a(buf, FNV_STRING);
    spin_lock(&names_lock);
    uint32_t n = atomic_load_explicit(&nnames, RELAXED), i;
    for (i = 0; i < n; i++)
        if (map_name_hash[i] == h && !strcmp(map_names[i], buf)) break;
    if (i == n && n < MAX_MAP_NAMES) {
        memcpy(map_names[n], buf, MAP_NAME_LEN);
        map_name_hash[n] = h;
        atomic_store_explicit(&nnames, n + 1, memory_order_release);
    }
    spin_unlock(&names_lock);
    return MAPS_NAME_BASE + i;
}

const char *maps_name(uintptr_t addr)
{
    if (addr < MAPS_NAME_BASE || addr > MAPS_NAME_BASE + MAX_MAP_NAMES) return NULL;
    uint32_t i = (uint32_t)(addr - MAPS_NAME_BASE);
    return i < atomic_load_explicit(&nnames, memory_order_acquire) ? map_names[i] : "(file)";
}

/* The mapped file's path, from /proc/self/fd/N with raw system calls
 * (readlink: no allocation); "(file)" when it cannot be read. */
uintptr_t maps_file_leaf(int fd)
{
    char path[32] = "/proc/self/fd/", digits[12], name[MAP_NAME_LEN];
    int n = 0, at = 14;
    for (unsigned v = (unsigned)fd; n == 0 || v; v /= 10) digits[n++] = (char)('0' + v % 10);
    while (n) path[at++] = digits[--n];
    path[at] = 0;
    long len = syscall(SYS_readlinkat, AT_FDCWD, path, name, sizeof name - 1);
    if (len <= 0) return maps_name_intern("(file)");
    name[len] = 0;
    return maps_name_intern(name);
}
