/* Stack capture: return addresses, leaf first, without the profiler's own
 * frames (recognized by address: anything inside libmallocprof.so).
 *
 * Three walkers, all bounded by the thread's stack so a bad chain cannot
 * fault, all falling back to libunwind's unw_backtrace (local-only,
 * per-thread caching) when they cannot go on:
 *  - cfi (default): per return address, the unwind rule that the module's
 *    DWARF call frame information (.eh_frame) gives at the call, reduced to
 *    "CFA = rsp|rbp + k, return address at CFA + r, rbp saved at CFA + b or
 *    unchanged" and cached in a lock-free table (fronted by a per-thread
 *    direct-mapped cache of 256). Each frame then costs one probe and two
 *    loads. A rule is computed once per distinct
 *    return address, with libdw, under a lock taken with trylock (busy →
 *    this capture uses libunwind). Rules it cannot reduce (signal frames,
 *    DWARF expressions) send the capture to libunwind.
 *    A walk stops where it finds the previous walk's outer frames still in
 *    place and takes them from it (see "The previous walk").
 *  - fp: frame pointers, for code built with -fno-omit-frame-pointer.
 *  - libunwind.
 * MP_UNWIND_CHECK=1 (debugging) compares each cfi capture with a full walk. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "internal.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <elfutils/libdwfl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <libunwind.h>

static uintptr_t self_lo, self_hi;

int mp_in_self(uintptr_t addr)
{
    return addr >= self_lo && addr < self_hi;
}

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t probe = (uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (probe >= lo && probe < hi) {
            self_lo = lo;
            self_hi = hi;
            return 1;
        }
    }
    return 0;
}

static void rules_init(void);

/* MP_UNWIND_CHECK=1 (a debug aid): every cfi capture that reused the
 * previous walk is walked again in full and the two compared; at exit the
 * counts go to stderr. */
static int check_on;
static _Atomic uint64_t check_walks, check_frames, check_reused, check_tries, check_bad, check_rules, check_rules_bad;

static void check_report(void)
{
    if (check_on)
        mp_log("info", "MP_UNWIND_CHECK: %llu walks, %llu frames, %llu reused (%.1f %%), %llu reuse tries, %llu mismatches",
               (unsigned long long)check_walks, (unsigned long long)check_frames,
               (unsigned long long)check_reused, check_frames ? 100.0 * (double)check_reused / (double)check_frames : 0.0,
               (unsigned long long)check_tries, (unsigned long long)check_bad);
    if (check_on)
        mp_log("info", "MP_UNWIND_CHECK: %llu rules read with .eh_frame_hdr's table, %llu differ from libdw's own CFI's",
               (unsigned long long)check_rules, (unsigned long long)check_rules_bad);
}

void unwind_init(void)
{
    const char *c = getenv("MP_UNWIND_CHECK");
    check_on = c && *c && *c != '0';
    if (check_on) atexit(check_report);
    dl_iterate_phdr(find_self, (void *)(uintptr_t)&unwind_init);
    unwind_main_stack_init();
    if (mp_opt.unwind == UNWIND_CFI) rules_init();
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    unw_set_cache_size(unw_local_addr_space, 1024, 0);
}

/* ------------------------------------------------------------ cfi rules */

/* A rule, packed in 64 bits (0 = not known yet):
 *   bits  0-31  CFA offset from its base register (signed)
 *   bits 32-47  where rbp is saved, offset from the CFA (signed)
 *   bits 48-55  where the return address is, offset from the CFA (signed)
 *   bit  56     CFA base is rbp (else rsp)
 *   bit  57     rbp is saved (else unchanged)
 *   bit  58     rbp is undefined in the caller
 *   bit  59     end of the stack (the return address is undefined)
 *   bit  60     no usable rule: fall back
 *   bit  63     known */
#define R_CFA_RBP (1ull << 56)
#define R_RBP_SAVED (1ull << 57)
#define R_RBP_UNDEF (1ull << 58)
#define R_END (1ull << 59)
#define R_NONE (1ull << 60)
#define R_KNOWN (1ull << 63)
/* The fields of a rule. */
static inline int64_t rule_cfa_offset(uint64_t r) { return (int32_t)(uint32_t)r; }
static inline int64_t rule_rbp_offset(uint64_t r) { return (int16_t)(uint16_t)(r >> 32); }
static inline int64_t rule_ra_offset(uint64_t r) { return (int8_t)(uint8_t)(r >> 48); }
static inline uint64_t rule_pack(uint64_t flags, int64_t cfa_off, int64_t rbp_off, int64_t ra_off)
{
    return flags | (uint32_t)(int32_t)cfa_off | (uint64_t)(uint16_t)(int16_t)rbp_off << 32 |
           (uint64_t)(uint8_t)(int8_t)ra_off << 48;
}

/* x86-64 DWARF register numbers */
enum { DWARF_RBP = 6, DWARF_RSP = 7, DWARF_RA = 16 };

#define RULE_BITS 18
#define RULE_MASK ((1u << RULE_BITS) - 1)
#define RULE_PROBES 16

struct rule_slot {
    _Atomic uintptr_t ip;
    uint64_t rule;
};

static struct rule_slot *rules;         /* 2^RULE_BITS slots, written under rules_lock */
static int rules_full;                  /* no room left: new addresses go to libunwind */
static pthread_mutex_t rules_lock = PTHREAD_MUTEX_INITIALIZER;
static Dwfl *rules_dwfl;
static unsigned long long rules_loader[2];


static void rules_init(void)
{
    rules = mp_map(sizeof *rules << RULE_BITS, 0);
    if (!rules) mp_opt.unwind = UNWIND_LIBUNWIND;
}

/* Bumped when an object was unloaded (the rules cleared, addresses retired):
 * each thread then clears its caches of rules and of stacks. */
_Atomic unsigned mp_maps_gen;

void unwind_forget_rules(void)
{
    if (!rules) return;
    pthread_mutex_lock(&rules_lock);
    for (size_t i = 0; i <= RULE_MASK; i++) atomic_store_explicit(&rules[i].ip, 0, memory_order_relaxed);
    STORE(rules_full, 0);
    atomic_fetch_add(&mp_maps_gen, 1);
    pthread_mutex_unlock(&rules_lock);
}

void unwind_lock(void) { pthread_mutex_lock(&rules_lock); }

void unwind_unlock(void) { pthread_mutex_unlock(&rules_lock); }

static inline size_t rule_home(uintptr_t ip)
{
    return (size_t)fib_hash(ip, RULE_BITS);
}

static inline uint64_t rule_get(uintptr_t ip)
{
    size_t h = rule_home(ip);
    for (int i = 0; i < RULE_PROBES; i++) {
        struct rule_slot *s = &rules[(h + i) & RULE_MASK];
        uintptr_t k = atomic_load_explicit(&s->ip, memory_order_acquire);
        if (k == ip) return s->rule;
        if (!k) return 0;
    }
    return 0;
}

/* Returns 0 when the probe window is full: the table no longer takes new
 * addresses, and those captures go to libunwind (slower, still right). */
static int rule_put(uintptr_t ip, uint64_t rule)
{
    size_t h = rule_home(ip);
    for (int i = 0; i < RULE_PROBES; i++) {
        struct rule_slot *s = &rules[(h + i) & RULE_MASK];
        uintptr_t k = atomic_load_explicit(&s->ip, RELAXED);
        if (k == ip) return 1;
        if (!k) {
            s->rule = rule;         /* the rule first, then the key that publishes it */
            atomic_store_explicit(&s->ip, ip, memory_order_release);
            return 1;
        }
    }
    return 0;
}

/* A location "CFA + off" from a register rule; -1 if it is anything else. */
static int cfa_relative(const Dwarf_Op *ops, size_t n, int64_t *off)
{
    int64_t stack[4];
    int sp = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t a = ops[i].atom;
        if (a == DW_OP_call_frame_cfa) {
            if (sp == 4) return -1;
            stack[sp++] = 0;
        } else if (a == DW_OP_plus_uconst) {
            if (sp < 1) return -1;
            stack[sp - 1] += (int64_t)ops[i].number;
        } else if (a == DW_OP_consts || a == DW_OP_const1s || a == DW_OP_const2s ||
                   a == DW_OP_const4s || a == DW_OP_const8s || a == DW_OP_constu ||
                   a == DW_OP_const1u || a == DW_OP_const2u || a == DW_OP_const4u) {
            if (sp == 4) return -1;
            stack[sp++] = (int64_t)ops[i].number;
        } else if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
            if (sp == 4) return -1;
            stack[sp++] = a - DW_OP_lit0;
        } else if (a == DW_OP_plus || a == DW_OP_minus) {
            if (sp < 2) return -1;
            sp--;
            stack[sp - 1] = a == DW_OP_plus ? stack[sp - 1] + stack[sp] : stack[sp - 1] - stack[sp];
        } else {
            return -1;  /* includes DW_OP_stack_value: a value, not a location */
        }
    }
    if (sp != 1) return -1;
    *off = stack[0];
    return 0;
}

/* libdw (0.188) uses .eh_frame_hdr's binary search table only when that
 * section comes before .eh_frame in the section headers. lld puts it after
 * (libLLVM-14.so.1: 95,000 FDEs), and libdw then reads the FDEs in order up
 * to each address asked: the first rules in such a library cost 2 ms each,
 * 200 ms in all, per process. Without section headers (cleared in a private
 * mapping of the file: one page copied) libdw takes the CFI and its table
 * from PT_GNU_EH_FRAME. One per file, kept for the process (the table's
 * entries: a file is read once, whatever address it is loaded at);
 * NULL: use the module's own. */
#define TABLE_CFI_MAX 256
static struct table_cfi { dev_t dev; ino_t ino; Dwarf_CFI *cfi; Elf *elf; } table_cfis[TABLE_CFI_MAX];
static int table_cfi_n;

static Dwarf_CFI *cfi_of_file(int fd, size_t size, Elf **elfp)
{
    void *img = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (img == MAP_FAILED) return NULL;
    ElfW(Ehdr) *eh = img;
    Elf *elf = NULL;
    Dwarf_CFI *cfi = NULL;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64) {
        eh->e_shoff = 0, eh->e_shnum = 0, eh->e_shstrndx = SHN_UNDEF;
        elf = elf_memory(img, size);
        cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
    }
    if (!cfi) {
        if (elf) elf_end(elf);
        munmap(img, size);
    }
    *elfp = cfi ? elf : NULL;
    return cfi;
}

static Dwarf_CFI *cfi_with_table(Dwfl_Module *m)
{
    const char *path = NULL;
    dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, &path, NULL);
    if (!path || path[0] != '/') return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    Dwarf_CFI *cfi = NULL;
    if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(ElfW(Ehdr))) {
        int i = 0;
        while (i < table_cfi_n && (table_cfis[i].dev != st.st_dev || table_cfis[i].ino != st.st_ino)) i++;
        if (i < table_cfi_n) cfi = table_cfis[i].cfi;
        else if (i < TABLE_CFI_MAX) {
            Elf *elf;
            cfi = cfi_of_file(fd, (size_t)st.st_size, &elf);
            table_cfis[table_cfi_n++] = (struct table_cfi){ st.st_dev, st.st_ino, cfi, elf };
        }
    }
    close(fd);
    return cfi;
}

static struct own_stack rules_stack = { .size = 1 << 20 };

/* The end of an attach session: the rules' pages given back (the table
 * stays mapped, empty: a hook reached afterwards through a copy of its
 * address still reads it), libdw's session and the files' tables ended. */
void unwind_release(void)
{
    pthread_mutex_lock(&rules_lock);
    if (rules) madvise(rules, sizeof *rules << RULE_BITS, MADV_DONTNEED);
    STORE(rules_full, 0);
    if (rules_dwfl) dwfl_end(rules_dwfl);
    rules_dwfl = NULL, rules_loader[0] = rules_loader[1] = 0;
    for (int i = 0; i < table_cfi_n; i++) {
        if (!table_cfis[i].cfi) continue;
        size_t size;
        char *img = elf_rawfile(table_cfis[i].elf, &size);
        dwarf_cfi_end(table_cfis[i].cfi);
        elf_end(table_cfis[i].elf);
        if (img) munmap(img, size);
    }
    table_cfi_n = 0;
    own_stack_release(&rules_stack);
    pthread_mutex_unlock(&rules_lock);
}

static uint64_t rule_of_cfi(Dwarf_CFI *cfi, Dwarf_Addr pc);
/* The rule at return address ip, from the module's CFI at the call (ip-1). */
static uint64_t rule_compute(uintptr_t ip)
{
    Dwfl *d = mp_dwfl_session(&rules_dwfl, rules_loader);
    Dwfl_Module *m = d ? dwfl_addrmodule(d, ip - 1) : NULL;
    if (!m) return R_KNOWN | R_NONE;
    Dwarf_Addr bias;
    Dwarf_CFI *table = dwfl_module_getelf(m, &bias) ? cfi_with_table(m) : NULL;
    Dwarf_CFI *cfi = dwfl_module_eh_cfi(m, &bias);
    if (!cfi) cfi = dwfl_module_dwarf_cfi(m, &bias);
    if (!table) return rule_of_cfi(cfi, ip - 1 - bias);
    uint64_t rule = rule_of_cfi(table, ip - 1 - bias);
    if (unlikely(check_on)) {   /* MP_UNWIND_CHECK: the same rule as the module's CFI's */
        check_rules++;
        uint64_t other = rule_of_cfi(cfi, ip - 1 - bias);
        if (other != rule && ++check_rules_bad <= 10)
            mp_log("bug", "MP_UNWIND_CHECK: rule %#llx at %#lx, libdw's own CFI has %#llx", (unsigned long long)rule,
                   (unsigned long)ip, (unsigned long long)other);
    }
    return rule;
}

/* The rule at pc (a module's address) from cfi. */
static uint64_t rule_of_cfi(Dwarf_CFI *cfi, Dwarf_Addr pc)
{
    Dwarf_Frame *f = NULL;
    if (!cfi || dwarf_cfi_addrframe(cfi, pc, &f) != 0) return R_KNOWN | R_NONE;
    uint64_t rule = R_KNOWN | R_NONE;
    Dwarf_Op *ops, mem[3];
    size_t n;
    int64_t cfa_off, ra_off, rbp_off = 0;
    if (dwarf_frame_cfa(f, &ops, &n) != 0 || n != 1) goto out;
    int reg;
    if (ops[0].atom == DW_OP_bregx) reg = (int)ops[0].number, cfa_off = (int64_t)ops[0].number2;
    else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31)
        reg = ops[0].atom - DW_OP_breg0, cfa_off = (int64_t)ops[0].number;
    else goto out;
    if ((reg != DWARF_RBP && reg != DWARF_RSP) || cfa_off < INT32_MIN || cfa_off > INT32_MAX) goto out;
    uint64_t flags = R_KNOWN | (reg == DWARF_RBP ? R_CFA_RBP : 0);
    if (dwarf_frame_register(f, DWARF_RA, mem, &ops, &n) != 0) goto out;
    if (n == 0 && ops == mem) {
        rule = R_KNOWN | R_END;     /* the outermost frame */
        goto out;
    }
    if (cfa_relative(ops, n, &ra_off) || ra_off < -128 || ra_off > 127) goto out;
    if (dwarf_frame_register(f, DWARF_RBP, mem, &ops, &n) != 0) goto out;
    if (n == 0 && ops == mem) flags |= R_RBP_UNDEF;
    else if (n != 0) {
        if (cfa_relative(ops, n, &rbp_off) || rbp_off < INT16_MIN || rbp_off > INT16_MAX) goto out;
        flags |= R_RBP_SAVED;
    }
    rule = rule_pack(flags, cfa_off, rbp_off, ra_off);
out:
    free(f);
    return rule;
}

/* libdw failed inside rule_compute (out of memory: RECOVERABLE): its
 * session left as it is, no new rules (new addresses go to libunwind). */
static uint64_t rules_lost(void)
{
    rules_dwfl = NULL;
    STORE(rules_full, 1);
    mp_log("warning", "out of memory in libdw while reading unwind tables: new code is unwound by libunwind");
    return R_KNOWN | R_NONE;
}

/* rule_compute on the rules' own stack (ownstack.c; the rules' lock held). */
struct rule_call { uintptr_t ip; uint64_t rule; };
static void rule_work(void *arg)
{
    struct rule_call *c = arg;
    RECOVERABLE(c->rule = rule_compute(c->ip), c->rule = rules_lost());
}

/* The rule for ip, computing it if this thread can take the lock now. */
static uint64_t rule_for(uintptr_t ip)
{
    uint64_t r = rule_get(ip);
    if (likely(r != 0)) return r;
    if (LOAD(rules_full) || pthread_mutex_trylock(&rules_lock) != 0) return 0;
    r = rule_get(ip);
    if (!r) {
        sigset_t old;
        signals_hold(&old);     /* libdw allocates */
        struct rule_call c = { ip, 0 };
        int counting = mp_own_counting;
        mp_own_counting = 1;    /* libdw's blocks are the profiler's (the ledger) */
        own_stack_run(&rules_stack, rule_work, &c);
        mp_own_counting = counting;
        r = c.rule;
        signals_release(&old);
        if (!rule_put(ip, r)) STORE(rules_full, 1);
    }
    pthread_mutex_unlock(&rules_lock);
    return r;
}

static inline int on_stack(const struct mp_thread *t, uintptr_t a)
{
    /* in [stack_lo, stack_hi - 8] (a + 8 could wrap), aligned (the previous
     * walk marks slots by their low bit) */
    return a - t->stack_lo <= t->stack_hi - 8 - t->stack_lo && !(a & 7);
}

/* The previous walk. A walk reads each frame's return address from a
 * slot of the stack; the next slot follows from this one, the return
 * address and its rule, and from rbp where a rule's CFA is based on it
 * (code with frame pointers, functions with alloca or aligned locals): rbp
 * as the walk got there, or as restored from a slot an inner frame saved
 * it in. So once a walk finds a return address in the slot where the
 * previous walk found it (and, if the walk from there on used rbp's value
 * there, the same rbp), the walk outward would read the same slots, and
 * find the previous walk's frames if each slot still holds what the
 * previous walk read there: its return address, or the rbp it restored.
 * Exactly, no heuristic: a frame that returned and a new call that put
 * the same return address in the same slot under other callers shows in
 * the callers' slots. The check is an independent load or two per outer
 * frame, without rules; the frames are then copied and their hash joined
 * from the sum kept for them (hash_join). A deep, stable stack, such as an
 * interpreter's loop or a compiler's recursive descent under a leaf that
 * changes, costs a few frames' walk. A walk that ended on a zero return
 * address keeps that slot as a last entry whose value must still be 0. */

/* The previous walk is kept right-aligned: its outermost entry at
 * WALK_END - 1 and its leaf at WALK_END - walk_n, so that a walk which
 * takes the outer frames from entry i on writes its own frames just below
 * i, and nothing kept moves. Entry WALK_END is the sentinel under a walk
 * that ended by its rule (sum 0, pow 1, no slot), the one walk_fill builds
 * on; a walk that ended on a zero return address has its zero slot there
 * instead, at WALK_END - 1. */
#define WALK_END (MP_WALK_CACHE + 1)

/* The frames of the previous walk from entry i on, if they are all still
 * in place: appended to buf (at most max in all) and hashed. Returns the
 * new n, or -1 with *changed the first entry no longer in place (the
 * frames outside it may be again). */
static int walk_reuse(struct mp_thread *t, unsigned i, uintptr_t *buf, int n, int max, int *more,
                      struct mp_hash *h, unsigned *changed)
{
    if (!(t->walk[i].at & 2)) {     /* no rbp slot to check from here on: return addresses alone */
        for (unsigned m = i + 1; m < WALK_END; m++)
            if (*(const uintptr_t *)(t->walk[m].at & ~(uintptr_t)7) != t->walk_ra[m]) return *changed = m, -1;
    } else {
        for (unsigned m = i + 1; m < WALK_END; m++) {
            const struct walk_entry *e = &t->walk[m];
            if (*(const uintptr_t *)(e->at & ~(uintptr_t)7) != t->walk_ra[m] ||
                (e[-1].rbp_at && *(const uintptr_t *)e[-1].rbp_at != e->rbp))
                return *changed = m, -1;
        }
    }
    int count = (int)(WALK_END - i - t->walk_z);
    if (unlikely(count > max - n)) {     /* cut at max: hashed frame by frame */
        *more = 1;
        for (; n < max; n++, i++) {
            buf[n] = t->walk_ra[i];
            hash_add(h, buf[n]);
        }
        return n;
    }
    memcpy(buf + n, t->walk_ra + i, (size_t)count * sizeof *buf);
    hash_join(h, t->walk[i].sum, t->walk[i].pow);
    return n + count;
}

/* Entries lo..lo + n - 1 of the previous walk from the walk under way's
 * first n frames (buf), outward, on top of entry lo + n (set). */
static void walk_fill(struct mp_thread *t, const uintptr_t *buf, unsigned lo, int n, const struct walk_tail *tail)
{
    struct walk_entry *w = t->walk + lo;
    uintptr_t *ra = t->walk_ra + lo;
    uintptr_t used = w[n].at & 1;      /* the walk outside used rbp's value there */
    uintptr_t slots = w[n].at & 2;     /* it checks a slot rbp was restored from */
    uint64_t sum = w[n].sum, pow = w[n].pow;
    for (int k = n - 1; k >= 0; k--) {
        const unsigned kind = tail->kind[k];
        uintptr_t rbp_at = (kind & 2) && used ? tail->rbp_at[k] : 0;   /* restored from a slot, then used */
        used = (kind & 1) || (!(kind & 6) && used);     /* CFA from rbp, or rbp passed through to a use */
        sum = tail->mixed[k] + sum * MP_HASH_K;
        pow *= MP_HASH_K;
        slots |= rbp_at ? 2 : 0;
        w[k] = (struct walk_entry){ tail->at[k] | used | slots, sum, pow, tail->rbp[k], rbp_at };
        ra[k] = buf[k];
    }
}

/* A walk of n frames that found the previous walk's from entry i on: its
 * frames take the places below i. */
static void walk_splice(struct mp_thread *t, const uintptr_t *buf, int n, const struct walk_tail *tail, unsigned i)
{
    if ((unsigned)n > i) {      /* no room left below */
        t->walk_n = 0;
        return;
    }
    walk_fill(t, buf, i - (unsigned)n, n, tail);
    t->walk_n = WALK_END - i + (unsigned)n;
}

/* After a whole walk of n frames (zero_at: the slot that held 0, or 0 if
 * the last rule ended the stack): it becomes the previous walk. */
static void walk_save(struct mp_thread *t, const uintptr_t *buf, int n, const struct walk_tail *tail, uintptr_t zero_at)
{
    const unsigned z = zero_at != 0;
    if ((unsigned)n + z > MP_WALK_CACHE) {
        t->walk_n = 0;
        return;
    }
    /* the entry past the last frame: the zero slot, or the sentinel */
    const unsigned top = WALK_END - z;
    t->walk[top] = (struct walk_entry){ zero_at, 0, 1, 0, 0 };
    t->walk_ra[top] = 0;
    walk_fill(t, buf, top - (unsigned)n, n, tail);
    t->walk_z = z;
    t->walk_n = (uint32_t)n + z;
}

/* Our own frames keep frame pointers: walked from fp to the frame whose
 * return address is the program's code (NULL: the chain broke). */
static inline __attribute__((always_inline)) uintptr_t *walk_own_frames(const struct mp_thread *t, uintptr_t *fp)
{
    for (;;) {
        if (!on_stack(t, (uintptr_t)fp) || !on_stack(t, (uintptr_t)(fp + 1))) return NULL;
        if (!mp_in_self(fp[1])) return fp;
        uintptr_t *next = (uintptr_t *)fp[0];
        if (next <= fp) return NULL;
        fp = next;
    }
}

/* The rule at rip, from the thread's cache first (0: none known). */
static inline __attribute__((always_inline)) uint64_t rule_cached(struct mp_thread *t, uintptr_t rip)
{
    unsigned c = (unsigned)rip & (MP_RULE_CACHE - 1);     /* call sites differ in their low bits */
    if (t->rules[c].ip == rip) return t->rules[c].rule;
    uint64_t r = rule_for(rip);
    if (r) t->rules[c].ip = rip, t->rules[c].rule = r;
    return r;
}

/* One frame up by rule r: the caller's rip, rsp and rbp, where its rip
 * was read (at), and where rbp was (rbp_at, if the rule restores it). -1: the rule cannot be followed here. */
static inline __attribute__((always_inline)) int frame_up(const struct mp_thread *t, uint64_t r, uintptr_t *rip,
                                                          uintptr_t *rsp, uintptr_t *rbp, int *rbp_known, uintptr_t *at,
                                                          uintptr_t *rbp_at)
{
    if ((r & R_CFA_RBP) && !*rbp_known) return -1;
    uintptr_t cfa = ((r & R_CFA_RBP) ? *rbp : *rsp) + rule_cfa_offset(r);
    uintptr_t ra_at = cfa + rule_ra_offset(r);
    if (!on_stack(t, ra_at) || cfa <= *rsp) return -1;
    if (r & R_RBP_SAVED) {
        uintptr_t slot = cfa + rule_rbp_offset(r);
        if (!on_stack(t, slot)) return -1;
        *rbp = *(uintptr_t *)slot;
        *rbp_at = slot;
    } else if (r & R_RBP_UNDEF) {
        *rbp_known = 0;
    }
    *at = ra_at;
    *rip = *(uintptr_t *)ra_at;
    *rsp = cfa;
    return 0;
}

/* Returns the frame count (at most max, *more set if the stack goes on),
 * or -1 to fall back to libunwind. Feeds the frames to *hash. Starts at
 * start, the frame of a profiler's function under way (the walk's own
 * frames and its callers' up to there are not looked at). */
static int __attribute__((noinline)) walk_cfi(struct mp_thread *t, void *start, uintptr_t *buf, int max, int *more,
                                              struct mp_hash *hash, int reuse)
{
    uintptr_t *fp = walk_own_frames(t, start);
    if (!fp) return -1;
    uintptr_t rip = fp[1], rsp = (uintptr_t)(fp + 2), rbp = fp[0];
    uintptr_t at = (uintptr_t)(fp + 1);     /* where rip was read */
    int rbp_known = 1, n = 0, cacheable = 1, tries = 0;
    unsigned ci = WALK_END - t->walk_n;     /* first entry of the previous walk to try */
    struct walk_tail *tail = &t->walk_tail;
    struct mp_hash h = *hash;
    const uintptr_t own_lo = self_lo, own_len = self_hi - self_lo;     /* in registers: buf may alias */
    *more = 0;
    while (rip) {
        if (n == max) {
            *more = 1;
            break;
        }
        const int kept = rip - own_lo >= own_len;    /* our signal trampoline: walked through, not kept */
        if (likely(kept) && reuse && tries < 3) {     /* each try loads the outer frames once */
            while (ci < WALK_END && t->walk[ci].at < at) ci++;
            const struct walk_entry *e = &t->walk[ci];
            if (ci < WALK_END && (e->at & ~(uintptr_t)7) == at && t->walk_ra[ci] == rip &&
                (!(e->at & 1) || (rbp_known && e->rbp == rbp))) {
                tries++;
                int m = walk_reuse(t, ci, buf, n, max, more, &h, &ci);
                if (unlikely(check_on)) check_tries++;
                if (m >= 0) {
                    if (unlikely(check_on)) check_reused += (uint64_t)(m - n);
                    if (!*more && cacheable) walk_splice(t, buf, n, tail, ci);
                    *hash = h;
                    return m;
                }
            }
        }
        uint64_t r = rule_cached(t, rip);
        if (unlikely(!r || (r & R_NONE))) return -1;
        if (likely(kept)) {
            buf[n] = rip;
            uint64_t mixed = hash_mix(rip);
            hash_add_mixed(&h, mixed);
            if (n < MP_WALK_CACHE) {
                tail->at[n] = at, tail->mixed[n] = mixed, tail->rbp[n] = rbp;
                tail->kind[n] = (uint8_t)((r & R_CFA_RBP ? 1 : 0) | (r & R_RBP_SAVED ? 2 : 0) | (r & R_RBP_UNDEF ? 4 : 0));
                tail->rbp_at[n] = 0;
            }
            n++;
        } else {
            cacheable = 0;
        }
        if (unlikely(r & R_END)) {
            if (cacheable && reuse) walk_save(t, buf, n, tail, 0);
            *hash = h;
            return n ? n : -1;
        }
        uintptr_t rbp_at = 0;
        if (frame_up(t, r, &rip, &rsp, &rbp, &rbp_known, &at, &rbp_at)) return -1;
        if (likely(kept) && n <= MP_WALK_CACHE) tail->rbp_at[n - 1] = rbp_at;
    }
    if (n == 0) return -1;
    if (!*more && cacheable && reuse) walk_save(t, buf, n, tail, at);
    *hash = h;
    return n;
}

/* MP_UNWIND_CHECK: the capture of n frames just made (hash h) against a
 * walk that does not use the previous one (into t->spliced, free until the
 * capture is over). */
static __attribute__((noinline)) void unwind_check(struct mp_thread *t, const uintptr_t *got, int n, int more, int max,
                                                   struct mp_hash h0, struct mp_hash h)
{
    int more2 = 0;
    int n2 = walk_cfi(t, __builtin_frame_address(0), t->spliced, max, &more2, &h0, 0);
    check_walks++;
    check_frames += (uint64_t)n;
    if (n2 != n || more2 != more || h0.sum != h.sum || h0.pow != h.pow ||
        memcmp(got, t->spliced, (size_t)n * sizeof *got) != 0) {
        if (++check_bad <= 10)
            mp_log("bug", "MP_UNWIND_CHECK: a capture of %d frames differs from the full walk's %d", n, n2);
    }
}

/* runs inside malloc: no allocation, no lock (libunwind caches per thread) */
int unwind_capture(struct mp_thread *t, void *start, uintptr_t *ret_addrs, int max, int *truncated, struct mp_hash *h)
{
    if (mp_opt.unwind == UNWIND_CFI && t->stack_hi) {
        struct mp_hash h0 = *h;
        int n = walk_cfi(t, start, ret_addrs, max, truncated, h, 1);
        if (unlikely(check_on) && n >= 0) unwind_check(t, ret_addrs, n, *truncated, max, h0, *h);
        if (n >= 0) return n;
    }
    /* the others start in the profiler's own frames and may stop anywhere */
    int want = max + 17 < MP_CAPTURE_ROOM ? max + 17 : MP_CAPTURE_ROOM;
    int n = -1;
    if (mp_opt.unwind == UNWIND_FP && t->stack_hi) n = unwind_walk_fp(t, ret_addrs, want);
    if (n < 0) {        /* libunwind may write to a pipe (a cancellation point): see signals_hold */
        int cancel;
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
        n = unw_backtrace((void **)ret_addrs, want);
        pthread_setcancelstate(cancel, NULL);
    }
    int kept = 0;
    for (int i = 0; i < n; i++)     /* the profiler's own frames: the leading ones, and its signal trampoline */
        if (!mp_in_self(ret_addrs[i])) ret_addrs[kept++] = ret_addrs[i];
    n = kept;
    *truncated = n > max;
    if (n > max) n = max;
    if (n == 0) ret_addrs[n++] = ADDR_UNKNOWN;  /* a stack has a frame */
    for (int i = 0; i < n; i++) hash_add(h, ret_addrs[i]);
    return n;
}
