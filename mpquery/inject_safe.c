/* Whether a thread may be called into, judged on its whole stack (issue
 * 41): the innermost frame is inject.c's; here its frames as its CFI
 * unwinds them (inject_unwind.c), or where that cannot reach the outermost
 * frame by CFI alone (code without it: a JIT's), every word from the stack
 * pointer up (256 KiB at most, within its mapping) is looked at. One that
 * is the return address of a call into the allocator's entry points, the
 * dynamic loader or the profiler makes the thread unsafe (a lock may be
 * held); one that is libc's signal return code starts a signal frame,
 * whose interrupted context is judged as an innermost frame (in libc but
 * at a system call's edge: unsafe) and whose stack, if another
 * (a handler on an alternate stack), is looked at too. A stale word that
 * looks like such a return address costs a moment: another thread, or
 * the same later, is tried. */
#define _GNU_SOURCE
#include "inject.h"
#include "elf_dynsym.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SCAN_MAX (256u << 10)
#define MAX_CONTEXTS 6

uintptr_t inject_find_code(pid_t pid, uintptr_t lo, uintptr_t hi, const void *pattern, size_t len)
{
    static uint8_t buf[65536];
    for (uintptr_t at = lo; at + len <= hi; at += sizeof buf - len) {
        size_t n = hi - at < sizeof buf ? hi - at : sizeof buf;
        if (inject_mem(pid, at, buf, n, 0)) return 0;
        uint8_t *hit = memmem(buf, n, pattern, len);
        if (hit) return at + (uintptr_t)(hit - buf);
        if (n < sizeof buf) break;
    }
    return 0;
}

/* The end of the mapping holding a, or 0. */
static uintptr_t mapping_end(pid_t pid, uintptr_t a)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    uintptr_t end = 0;
    unsigned long lo, hi;
    while (f && !end && fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi) end = hi;
    if (f) fclose(f);
    return end;
}

/* The bytes before a are a call instruction (direct, indirect through a
 * register or memory, with or without a REX prefix). */
static int after_call(pid_t pid, uintptr_t a)
{
    uint8_t b[8];
    if (inject_mem(pid, a - 8, b, 8, 0)) return 0;
    if (b[3] == 0xe8) return 1;                                     /* call rel32 */
    if (b[2] == 0xff && (b[3] & 0x38) == 0x10) return 1;            /* call *disp32(%rip), *disp32(%reg) */
    if (b[6] == 0xff && (b[7] & 0xf8) == 0xd0) return 1;            /* call *%reg */
    if (b[5] == 0xff && (b[6] & 0x38) == 0x10) return 1;            /* call *disp8(%reg) */
    if (b[6] == 0xff && (b[7] & 0xc0) == 0x00 && (b[7] & 0x38) == 0x10) return 1;   /* call *(%reg) */
    return b[1] == 0xff && (b[2] & 0x38) == 0x10;                   /* call *disp32(%reg,index) */
}

static int in_ranges(uintptr_t a, const struct unsafe_range *u, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a >= (u[i].lo & ~(uintptr_t)1) && a < u[i].hi) return 1;
    return 0;
}


/* libc's signal return code (__restore_rt: mov $15, %rax; syscall), found
 * once a process. */
static uintptr_t restorer(pid_t pid, const struct inject_where *w)
{
    static pid_t for_pid;
    static uintptr_t at;
    if (for_pid == pid) return at;
    static const uint8_t code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
    at = 0;
    for (size_t i = 0; i < w->nunsafe && !at; i++)
        if (w->unsafe[i].lo & 1) at = inject_find_code(pid, w->unsafe[i].lo & ~(uintptr_t)1, w->unsafe[i].hi, code, sizeof code);
    for_pid = pid;
    return at;
}

/* An interrupted context (a signal frame's): in unsafe code but for a
 * system call's edge in libc: just after the syscall instruction (the
 * call ended, by the signal or not) or at it (to be made again: the
 * kernel moved back there before saving the context). Which call it was
 * is not saved; one made inside the allocator or the loader leaves their
 * frames above it, which the scan finds. */
/* The system call a context stands at the edge of, when the code shows
 * it: `mov $NR, %eax` just before the syscall instruction; else -1. */
static long edge_call(const uint8_t *b, int at)
{
    if (at >= 5 && b[at - 5] == 0xb8) return (long)(b[at - 4] | b[at - 3] << 8 | b[at - 2] << 16 | (uint32_t)b[at - 1] << 24);
    if (at >= 2 && b[at - 2] == 0x31 && b[at - 1] == 0xc0) return 0;       /* xor %eax, %eax */
    return -1;
}

/* The allocator's own calls (sysmalloc, systrim, heap growth and trim):
 * a context at their edge may be inside the allocator with its arena
 * locked even where no frame of an entry point is left (free tail-calls
 * its worker). */
static int allocator_call(long nr)
{
    return nr == SYS_brk || nr == SYS_mmap || nr == SYS_munmap || nr == SYS_mremap || nr == SYS_madvise ||
           nr == SYS_mprotect;
}

static int context_safe(pid_t pid, uint64_t ip, const struct inject_where *w)
{
    uint8_t b[11] = { 0 };      /* ip - 9 .. ip + 2 */
    if (inject_mem(pid, ip - 9, b, sizeof b, 0) != 0) return 0;
    int after = b[7] == 0x0f && b[8] == 0x05, at = b[9] == 0x0f && b[10] == 0x05;
    int in_call = after || at;
    if (in_call && allocator_call(edge_call(b, after ? 7 : 9))) return 0;
    for (size_t i = 0; i < w->nunsafe; i++)
        if (ip >= (w->unsafe[i].lo & ~(uintptr_t)1) && ip < w->unsafe[i].hi && !(in_call && (w->unsafe[i].lo & 1)))
            return 0;
    return !in_ranges(ip, w->locks, w->nlocks);
}

/* The stack from sp up: 1 safe, 0 not; *next: a handler's interrupted
 * stack pointer outside what was looked at (0: none). */
static int scan(pid_t pid, uintptr_t sp, const struct inject_where *w, uintptr_t rt, uintptr_t *next)
{
    *next = 0;
    uintptr_t end = mapping_end(pid, sp);
    sp &= ~(uintptr_t)7;
    if (!end) return 1;
    size_t n = end - sp < SCAN_MAX ? end - sp : SCAN_MAX, nw = n / 8;
    uint64_t *word = malloc(n);
    if (!word || inject_mem(pid, sp, word, n, 0)) return free(word), 1;
    int safe = 1;
    for (size_t i = 0; safe && i < nw; i++) {
        if (rt && word[i] == rt && i + 1 + 5 + 17 < nw) {
            const uint64_t *mc = word + i + 1 + 5;          /* uc_flags, uc_link, uc_stack, then the registers */
            safe = context_safe(pid, mc[16], w);
            if (mc[15] < sp || mc[15] >= sp + n) *next = mc[15];
        } else if (in_ranges(word[i], w->locks, w->nlocks) && after_call(pid, word[i])) {
            safe = 0;
        }
    }
    free(word);
    return safe;
}

/* The frames CFI unwound: every caller's return address (pc - 1 is in its
 * call) outside the locks; every activation past the innermost (libc's
 * signal return code aside: the frame a handler returns to) an
 * interrupted context, judged as one. */
static int frames_safe(pid_t pid, const struct inject_frame_pc *f, int n, const struct inject_where *w)
{
    uintptr_t rt = restorer(pid, w);
    for (int i = 1; i < n; i++) {
        if (f[i].activation && f[i].pc == rt) continue;
        if (f[i].activation ? !context_safe(pid, f[i].pc, w) : in_ranges(f[i].pc - 1, w->locks, w->nlocks))
            return 0;
    }
    return 1;
}

int inject_stack_safe(pid_t pid, pid_t tid, const struct user_regs_struct *r, const struct inject_where *w)
{
    static struct inject_frame_pc frames[4096];
    int n = inject_unwound(pid, tid, frames, 4096);
    if (n >= 0) return frames_safe(pid, frames, n, w);
    uintptr_t rt = restorer(pid, w), sp = r->rsp;
    for (int i = 0; sp && i < MAX_CONTEXTS; i++) {
        uintptr_t next;
        if (!scan(pid, sp, w, rt, &next)) return 0;
        sp = next;
    }
    return 1;
}

/* libc's functions that take the allocator's or the loader's locks, from
 * its dynamic symbols (value and size), placed at base; fd (libc's file,
 * target_open_library's) closed. */
struct lock_ranges { uintptr_t base; struct unsafe_range *out; size_t n, max; };

static void lock_range(const char *name, const Elf64_Sym *sym, void *ctx)
{
    static const char *const names[] = {
        "malloc", "free", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign", "aligned_alloc",
        "valloc", "pvalloc", "malloc_trim", "malloc_usable_size", "mallinfo", "mallinfo2", "malloc_stats",
        "malloc_info", "mallopt", "dl_iterate_phdr", "dlopen", "dlmopen", "dlclose", "dlsym", "dlvsym", "dladdr",
        "dladdr1", "dlinfo", "fork", "_Fork", "__libc_dlopen_mode", "__libc_dlsym", "__libc_dlclose",
    };
    struct lock_ranges *r = ctx;
    if (r->n == r->max || !sym->st_size || ELF64_ST_TYPE(sym->st_info) != STT_FUNC) return;
    for (size_t j = 0; j < sizeof names / sizeof names[0]; j++)
        if (!strcmp(name, names[j])) {
            uintptr_t lo = r->base + sym->st_value;
            r->out[r->n++] = (struct unsafe_range){ lo, lo + sym->st_size };
            return;
        }
}

size_t inject_lock_ranges(int fd, uintptr_t base, struct unsafe_range *out, size_t max)
{
    struct lock_ranges r = { base, out, 0, max };
    elf_each_dynsym(fd, lock_range, &r);
    return r.n;
}
