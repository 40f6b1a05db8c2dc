/* The ledger of a snapshot (table ledger): where the process's resident
 * memory went, every resident byte of /proc/self/smaps given to one line.
 * Ranges whose owner is known (the program's mappings, the profiler's, the
 * allocator's heaps and mmapped chunks, thread stacks, the modules' bss)
 * claim their part of a VMA; where a claim covers part of a VMA only (the
 * kernel merges adjacent anonymous mappings), that VMA's resident bytes
 * are counted page by page from /proc/self/pagemap, claims and rest alike.
 * The rest of a VMA goes to the line its kind says ([heap], [stack], a
 * file: modules), an unclaimed anonymous VMA to 'unexplained'. The heap's
 * resident bytes are split by the profiler's live bytes and mallinfo2().
 * Runs inside the flush, its buffers in mappings of the profiler's
 * (mp_grow_mapped). The lines always add up to the 'rss' line. */
#define _GNU_SOURCE
#include "ledger_heap.h"

#include <elf.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static const char *const line_names[NLINES] = {
    "rss", "heap live", "heap overhead", "heap free", "mmap anonymous", "mmap file",
    "thread stacks", "modules", "profiler", "unexplained",
};

/* Who a range belongs to; at equal starts the lower value wins an overlap
 * (a program's mapping used as a thread stack is the program's mapping).
 * CHUNK: one of the program's mmapped chunks; OLD_*: a fork child's
 * inherited mappings (ledger_heap.c). */
enum owner { O_MMAP_ANON, O_MMAP_FILE, O_PROFILER, O_HEAP, O_CHUNK, O_OWN_CHUNK, O_STACK, O_MODULE, O_OLD_ANON,
             O_OLD_FILE, O_NONE };

struct vma {
    uintptr_t lo, hi;
    uint64_t rss, offset;
    char r, w, kind;    /* kind: 'h' [heap], 's' [stack], 'f' a file, 'a' anonymous, 'o' other ([vdso]...) */
    char *path;         /* into the smaps text */
};
struct claim { uintptr_t lo, hi; enum owner owner; };

static struct {
    char *text;
    struct vma *vmas;
    struct claim *claims;
    size_t ntext, text_cap, nvmas, vmas_cap, nclaims, claims_cap;
    int pagemap, mem;           /* kept files (fds.c), taken once per ledger (account) */
} L;

void ledger_release(void)      /* the end of an attach session (flush_release) */
{
    mp_ungrow_mapped(&L.text, &L.text_cap, 1);
    mp_ungrow_mapped(&L.vmas, &L.vmas_cap, sizeof *L.vmas);
    mp_ungrow_mapped(&L.claims, &L.claims_cap, sizeof *L.claims);
    L.ntext = L.nvmas = L.nclaims = 0;
}

/* ------------------------------------------------------------ smaps */

static int read_all(int fd)
{
    if (fd < 0) return -1;
    L.ntext = 0;
    int rc = 0;
    for (;;) {
        if (L.text_cap - L.ntext < 65536 && mp_grow_mapped(&L.text, &L.text_cap, L.text_cap * 2 + 262144, 1)) {
            rc = -1;            /* out of memory: a part of the file is no answer */
            break;
        }
        ssize_t n = pread(fd, L.text + L.ntext, L.text_cap - L.ntext - 1, (off_t)L.ntext);
        if (n <= 0) break;
        L.ntext += (size_t)n;
    }
    if (L.text) L.text[L.ntext] = 0;
    return rc;
}

static void vma_header(char *line)
{
    if (mp_grow_mapped(&L.vmas, &L.vmas_cap, L.nvmas + 1, sizeof *L.vmas)) return;
    struct vma *v = &L.vmas[L.nvmas];
    char perms[8] = "";
    unsigned long lo, hi, off, inode;
    int path_at = 0;
    if (sscanf(line, "%lx-%lx %7s %lx %*s %lu %n", &lo, &hi, perms, &off, &inode, &path_at) < 5) return;
    *v = (struct vma){ .lo = lo, .hi = hi, .r = perms[0] == 'r', .w = perms[1] == 'w', .offset = off };
    v->path = line + path_at;
    v->kind = !strcmp(v->path, "[heap]") ? 'h' : !strcmp(v->path, "[stack]") ? 's'
            : inode != 0 || v->path[0] == '/' ? 'f' : v->path[0] ? 'o' : 'a';
    L.nvmas++;
}

/* Every VMA with its resident bytes; 0 when smaps cannot be read. */
static int read_smaps(void)
{
    if (read_all(mp_kept_fd(KEPT_SMAPS))) return -1;     /* kept open: fds.c */
    L.nvmas = 0;
    for (char *line = L.text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        if ((*line >= '0' && *line <= '9') || (*line >= 'a' && *line <= 'f')) vma_header(line);
        else if (L.nvmas && !strncmp(line, "Rss:", 4)) L.vmas[L.nvmas - 1].rss = strtoull(line + 4, NULL, 10) << 10;
    }
    return L.nvmas ? 0 : -1;
}

static const struct vma *vma_of(uintptr_t a)
{
    size_t lo = 0, hi = L.nvmas;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (L.vmas[mid].hi <= a) lo = mid + 1;
        else hi = mid;
    }
    return lo < L.nvmas && L.vmas[lo].lo <= a ? &L.vmas[lo] : NULL;
}

/* n bytes of our own memory at a, read through /proc/self/mem (kept open,
 * fds.c): memory unmapped since smaps was read, or a file mapping past its
 * file's end, fails the read instead of raising SIGSEGV or SIGBUS (inside
 * a fatal signal's snapshot, that signal's action is the default already).
 * Not process_vm_readv: it pins the pages it reads, and pinning a page a
 * fork child still shares copies it (the kernel unshares it first), so a
 * snapshot of a process with children, or of a fork child, copied every
 * page it looked at: 1,950 copies in fork_bigmap's child. */
static int read_self(uintptr_t a, void *out, size_t n)
{
    return L.mem >= 0 && pread(L.mem, out, n, (off_t)a) == (ssize_t)n ? 0 : -1;
}

/* The word at a, read only where a readable VMA holds it. */
static int peek(uintptr_t a, uint64_t *v)
{
    const struct vma *m = vma_of(a);
    if (!m || !m->r || a + 8 > m->hi || (a & 7)) return -1;
    return read_self(a, v, 8);
}

/* n bytes at a, the same way. */
static int peek_bytes(uintptr_t a, void *out, size_t n)
{
    const struct vma *m = vma_of(a);
    if (!m || !m->r || a + n > m->hi) return -1;
    return read_self(a, out, n);
}

/* ------------------------------------------------------------ claims */

/* Whole pages: what is resident is (mmap rounds a length up to them). */
static void claim(uintptr_t lo, uintptr_t hi, enum owner o)
{
    lo &= ~(uintptr_t)(PAGE_SIZE - 1), hi = (hi + PAGE_SIZE - 1) & ~(uintptr_t)(PAGE_SIZE - 1);
    if (hi <= lo || mp_grow_mapped(&L.claims, &L.claims_cap, L.nclaims + 1, sizeof *L.claims)) return;
    L.claims[L.nclaims++] = (struct claim){ lo, hi, o };
}

static int claim_cmp(const void *a, const void *b)
{
    const struct claim *x = a, *y = b;
    return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : (int)x->owner - (int)y->owner;
}

/* Claims sorted, overlaps cut off the later ones. */
static void claims_settle(void)
{
    qsort(L.claims, L.nclaims, sizeof *L.claims, claim_cmp);
    uintptr_t covered = 0;
    size_t n = 0;
    for (size_t i = 0; i < L.nclaims; i++) {
        struct claim c = L.claims[i];
        if (c.lo < covered) c.lo = covered;
        if (c.hi <= c.lo) continue;
        L.claims[n++] = c;
        covered = c.hi;
    }
    L.nclaims = n;
}

/* glibc's non-main arenas live in heaps aligned to HEAP_MAX_SIZE (64 MiB),
 * each opening with a heap_info { ar_ptr, prev, size, mprotect_size }; the
 * arena's malloc_state is in its first heap, so ar_ptr's own heap names
 * the same arena. The read-write part is [heap, heap + mprotect_size). */
#define HEAP_MAX ((uintptr_t)64 << 20)
static void find_arena_heaps(void)
{
    for (size_t i = 0; i < L.nvmas; i++) {
        const struct vma *v = &L.vmas[i];
        if (v->kind != 'a' || !v->w) continue;
        for (uintptr_t h = (v->lo + HEAP_MAX - 1) & ~(HEAP_MAX - 1); h < v->hi; h += HEAP_MAX) {
            uint64_t ar, size, mprotect_size, ar_heap;
            if (peek(h, &ar) || peek(h + 16, &size) || peek(h + 24, &mprotect_size)) continue;
            if (!size || size > mprotect_size || mprotect_size > HEAP_MAX || (mprotect_size & (PAGE_SIZE - 1))) continue;
            if (peek(ar & ~(HEAP_MAX - 1), &ar_heap) || ar_heap != ar) continue;
            claim(h, h + mprotect_size, O_HEAP);
        }
    }
}

/* The allocator's mmapped chunks (large blocks): each a mapping of its
 * own that opens with the chunk header { prev_size 0, size | IS_MMAPPED },
 * size a multiple of the page; a memalign'd one keeps that header at the
 * mapping's start. Looked for at the start of each resident page of the
 * unclaimed anonymous memory, within mallinfo2's total (hblkhd). */
static int page_present(uintptr_t a);

/* The chunk header { prev_size, size } at the start of each page of
 * pages[0..n), into hdr; how many were read (it stops at a page that went
 * away). */
#define BATCH 512
static size_t read_headers(const uintptr_t *pages, size_t n, uint64_t (*hdr)[2])
{
    size_t got = 0;
    while (got < n && read_self(pages[got], hdr[got], 16) == 0) got++;
    return got;
}

static int is_mmapped_chunk(const uint64_t hdr[2], uintptr_t a, uintptr_t vma_end, uint64_t budget)
{
    uint64_t size = hdr[1] & ~(uint64_t)7;
    return hdr[0] == 0 && (hdr[1] & 7) == 2 && (size & (PAGE_SIZE - 1)) == 0 && size >= PAGE_SIZE &&
           size <= vma_end - a && size <= budget;
}

static void find_mmapped_chunks(uint64_t budget)
{
    static uintptr_t pages[BATCH];
    static uint64_t hdr[BATCH][2];
    size_t nfixed = L.nclaims;
    for (size_t i = 0; i < L.nvmas && budget; i++) {
        const struct vma *v = &L.vmas[i];
        if (v->kind != 'a' || !v->w || !v->rss) continue;
        size_t k = 0, n = 0;
        for (uintptr_t a = v->lo; a < v->hi && budget;) {
            /* the next batch of resident pages nobody claimed */
            uintptr_t b = a;
            for (n = 0; b < v->hi && n < BATCH; b += PAGE_SIZE) {
                while (k < nfixed && L.claims[k].hi <= b) k++;
                if (k < nfixed && L.claims[k].lo <= b) b = L.claims[k].hi - PAGE_SIZE;
                else if (page_present(b) == 1) pages[n++] = b;
            }
            size_t got = n ? read_headers(pages, n, hdr) : 0;
            uintptr_t skip = 0;
            for (size_t j = 0; j < got && budget; j++) {
                if (pages[j] < skip || !is_mmapped_chunk(hdr[j], pages[j], v->hi, budget)) continue;
                uint64_t size = hdr[j][1] & ~(uint64_t)7;
                claim(pages[j], pages[j] + size, ledger_own_chunk(pages[j]) ? O_OWN_CHUNK : O_CHUNK);
                budget -= size;
                skip = pages[j] + size;
            }
            a = got < n ? pages[got] + PAGE_SIZE : b;
            if (skip > a) a = skip;
        }
    }
}

/* The bss of each loaded object: the part of a PT_LOAD segment past its
 * file bytes (p_memsz > p_filesz), anonymous memory right after the file's
 * mapping. Read from the ELF headers the object's first mapping holds.
 * The profiler's own bss (its static tables) is the profiler's memory. */
static void find_bss(void)
{
    for (size_t i = 0; i < L.nvmas; i++) {
        const struct vma *v = &L.vmas[i];
        Elf64_Ehdr eh;
        Elf64_Phdr ph[64];
        if (v->kind != 'f' || v->offset != 0 || !v->r || peek_bytes(v->lo, &eh, sizeof eh) ||
            memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 || !eh.e_phnum ||
            eh.e_phnum > 64 || peek_bytes(v->lo + eh.e_phoff, ph, eh.e_phnum * sizeof *ph))
            continue;
        uintptr_t bias = 0;
        int found = 0;
        for (int k = 0; k < eh.e_phnum && !found; k++)
            if (ph[k].p_type == PT_LOAD && ph[k].p_offset == 0) bias = v->lo - (ph[k].p_vaddr & ~(uint64_t)(PAGE_SIZE - 1)), found = 1;
        for (int k = 0; k < eh.e_phnum && found; k++) {
            if (ph[k].p_type != PT_LOAD || ph[k].p_memsz <= ph[k].p_filesz) continue;
            /* a loaded object's data segment: its file bytes mapped writable
             * from the same file (libdw's view of a whole file is not) */
            const struct vma *data = ph[k].p_filesz ? vma_of(bias + ph[k].p_vaddr + ph[k].p_filesz - 1) : NULL;
            if (!data || data == v || !data->w || !data->offset || data->kind != 'f' || strcmp(data->path, v->path)) continue;
            uintptr_t file_end = (bias + ph[k].p_vaddr + ph[k].p_filesz + PAGE_SIZE - 1) & ~(uintptr_t)(PAGE_SIZE - 1);
            uintptr_t end = (bias + ph[k].p_vaddr + ph[k].p_memsz + PAGE_SIZE - 1) & ~(uintptr_t)(PAGE_SIZE - 1);
            claim(file_end, end, file_end <= (uintptr_t)&L && (uintptr_t)&L < end ? O_PROFILER : O_MODULE);
        }
    }
}

static void find_stacks(void)
{
    for (struct mp_thread *t = thread_list(); t; t = t->next)
        if (t->walker.stack_hi) claim(t->walker.stack_lo, t->walker.stack_hi, O_STACK);
}

/* Stacks of threads the registry does not know (they never allocated):
 * an anonymous read-write VMA right above a small inaccessible one, the
 * guard page glibc's pthread_create (and most thread libraries) puts
 * below a stack. Runs after the arenas' heaps are claimed (a heap's
 * reserve is inaccessible too, but above its heap, and large). */
static void find_guarded_stacks(void)
{
    size_t nfixed = L.nclaims;
    for (size_t i = 1; i < L.nvmas; i++) {
        const struct vma *g = &L.vmas[i - 1], *v = &L.vmas[i];
        if (v->kind != 'a' || !v->w || g->kind != 'a' || g->r || g->w || g->hi != v->lo)
            continue;
        int known = 0;
        for (size_t k = 0; k < nfixed && !known; k++) known = L.claims[k].lo < v->hi && L.claims[k].hi > v->lo;
        if (!known) claim(v->lo, v->hi, O_STACK);
    }
}

static void find_own_and_program(void)
{
    static struct own_range own[16384];
    size_t n = mp_ranges(RANGES_PROFILER, own, sizeof own / sizeof own[0]);
    for (size_t i = 0; i < n && i < sizeof own / sizeof own[0]; i++) claim(own[i].lo, own[i].hi, O_PROFILER);
    n = mp_ranges(RANGES_HEAP, own, sizeof own / sizeof own[0]);     /* pymalloc's arenas: heap */
    for (size_t i = 0; i < n && i < sizeof own / sizeof own[0]; i++) claim(own[i].lo, own[i].hi, O_HEAP);
    static struct maps_range prog[8192];
    n = maps_ranges(prog, sizeof prog / sizeof prog[0]);
    for (size_t i = 0; i < n && i < sizeof prog / sizeof prog[0]; i++)
        claim(prog[i].start, prog[i].end, prog[i].kind == MAPS_FILE ? O_MMAP_FILE : O_MMAP_ANON);
}

/* A fork child's inherited mappings (ledger_heap.c): what nobody else
 * claims of them (the child may have unmapped one, and its address may
 * hold something else now). Claims settled before. */
static void find_inherited(void)
{
    const struct maps_range *r;
    size_t n = ledger_inherited(&r), nfixed = L.nclaims;
    for (size_t i = 0; i < n; i++) {
        enum owner o = r[i].kind == MAPS_FILE ? O_OLD_FILE : O_OLD_ANON;
        size_t lo = 0, hi = nfixed;
        while (lo < hi) {       /* the first claim ending past the range's start */
            size_t mid = (lo + hi) / 2;
            if (L.claims[mid].hi <= r[i].start) lo = mid + 1;
            else hi = mid;
        }
        uintptr_t at = r[i].start;
        for (size_t k = lo; k < nfixed && L.claims[k].lo < r[i].end && at < r[i].end; k++) {
            if (L.claims[k].lo > at) claim(at, L.claims[k].lo, o);
            if (L.claims[k].hi > at) at = L.claims[k].hi;
        }
        if (at < r[i].end) claim(at, r[i].end, o);
    }
}

/* ------------------------------------------------------------ resident bytes */

/* 1: the page at a is present (in RAM), 0: not, -1: unknown. The walks
 * go up through memory: the entries are read 512 at a time. */
static struct { uintptr_t base; size_t n; uint64_t e[512]; } pm;

static int page_present(uintptr_t a)
{
    uintptr_t page = a / PAGE_SIZE;
    if (page < pm.base || page >= pm.base + pm.n) {
        ssize_t got = L.pagemap < 0 ? -1 : pread(L.pagemap, pm.e, sizeof pm.e, (off_t)(page * 8));
        pm.base = page, pm.n = got > 0 ? (size_t)got / 8 : 0;
        if (!pm.n) return -1;
    }
    return (int)(pm.e[page - pm.base] >> 63);
}

/* Resident bytes of [lo, hi), from the page table. */
static uint64_t resident(uintptr_t lo, uintptr_t hi)
{
    uint64_t e[512], n = 0;
    for (uintptr_t a = lo; a < hi;) {
        size_t pages = (hi - a) / PAGE_SIZE < 512 ? (hi - a) / PAGE_SIZE : 512;
        ssize_t got = L.pagemap < 0 ? -1 : pread(L.pagemap, e, pages * 8, (off_t)(a / PAGE_SIZE * 8));
        if (got <= 0) break;
        for (ssize_t k = 0; k < got / 8; k++) n += e[k] >> 63;
        a += (uintptr_t)got / 8 * PAGE_SIZE;
    }
    return n * PAGE_SIZE;
}

static enum line line_of_owner(enum owner o, const struct vma *v)
{
    static const enum line by_owner[] = { L_MMAP_ANON, L_MMAP_FILE, L_PROFILER, L_FREE, L_CHUNK, L_OWN_CHUNK,
                                          L_STACKS, L_MODULES, L_OLD_ANON, L_OLD_FILE };
    if (o != O_NONE) return by_owner[o];
    switch (v->kind) {
    case 'h': return L_FREE;            /* the heap's, split later */
    case 's': return L_STACKS;
    case 'f': case 'o': return L_MODULES;
    default: return L_UNEXPLAINED;
    }
}

/* An anonymous VMA unmapped since smaps was read (a large block freed
 * meanwhile: the program's threads go on): counted nowhere, the rss line
 * included, so that it is not unexplained. */
static int gone(const struct vma *v)
{
    uint64_t w;
    return v->kind == 'a' && v->r && v->rss && peek(v->lo, &w) != 0;
}

/* Each VMA's resident bytes to lines (bytes) and its size to sizes; heap
 * bytes (the arenas') go to L_FREE, split later. The rest of a VMA nobody
 * claimed: its line's size is what the claims left of it. A VMA claimed in
 * part is counted from the page table alone, its claims and the rest, and
 * its resident bytes are their sum: its Rss in smaps is of an earlier
 * moment, and a page made resident since (a thread writing a table of the
 * profiler's that the kernel merged with the program's 4 MiB chunk above
 * it into one VMA) came off the last claim, the chunk's live bytes. */
static void attribute(uint64_t bytes[NACC], uint64_t sizes[NACC])
{
    size_t k = 0;
    for (size_t i = 0; i < L.nvmas; i++) {
        const struct vma *v = &L.vmas[i];
        if (gone(v)) continue;
        while (k < L.nclaims && L.claims[k].hi <= v->lo) k++;
        int part = k < L.nclaims && L.claims[k].lo < v->hi && (L.claims[k].lo > v->lo || L.claims[k].hi < v->hi);
        int walk = part && v->rss && L.pagemap >= 0;
        uint64_t claimed = 0, claimed_size = 0, rest = 0;
        uintptr_t at = v->lo;
        for (size_t j = k; j < L.nclaims && L.claims[j].lo < v->hi; j++) {
            const struct claim *c = &L.claims[j];
            uintptr_t lo = c->lo > v->lo ? c->lo : v->lo, hi = c->hi < v->hi ? c->hi : v->hi;
            uint64_t r = walk ? resident(lo, hi) : part ? 0 : v->rss;
            rest += walk ? resident(at, lo) : 0;
            bytes[line_of_owner(c->owner, v)] += r;
            sizes[line_of_owner(c->owner, v)] += hi - lo;
            claimed += r, claimed_size += hi - lo, at = hi;
            if (hi == v->hi) break;
        }
        rest = walk ? rest + resident(at, v->hi) : v->rss - claimed;
        bytes[L_RSS] += claimed + rest;
        enum line rest_line = line_of_owner(O_NONE, v);
        bytes[rest_line] += rest;
        if (rest_line == L_STACKS || rest_line == L_MODULES) sizes[rest_line] += v->hi - v->lo - claimed_size;
    }
}

/* ------------------------------------------------------------ the lines */

static int write_lines(struct writer *w, int64_t snapshot, const int64_t bytes[NLINES], const uint64_t sizes[NLINES])
{
    sqlite3_stmt *st = prepare_insert(w, "INSERT", FT_ledger, 1);
    if (!st) return -1;
    int rc = 0;
    for (int i = 0; i < NLINES && !rc; i++) {
        sqlite3_bind_int64(st, FORMAT_PARAM(ledger, snapshot), snapshot);
        sqlite3_bind_text(st, FORMAT_PARAM(ledger, line), line_names[i], -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, FORMAT_PARAM(ledger, bytes), bytes[i]);
        sqlite3_bind_int64(st, FORMAT_PARAM(ledger, size), (int64_t)sizes[i]);
        rc = step_done(w, st);
    }
    sqlite3_finalize(st);
    return rc;
}

static double ledger_seconds;
double ledger_time(void) { return ledger_seconds; }

/* Every VMA's resident bytes to the line of its owner (bytes), and the
 * lines' virtual sizes. */
static void account(uint64_t bytes[NACC], uint64_t sizes[NACC], const struct heap_now *h)
{
    L.pagemap = mp_kept_fd(KEPT_PAGEMAP), L.mem = mp_kept_fd(KEPT_MEM);
    pm.n = 0;
    L.nclaims = 0;
    find_own_and_program(), find_stacks(), find_bss(), find_arena_heaps(), claims_settle();
    find_mmapped_chunks(h->have_mi ? h->mi.hblkhd : (uint64_t)-1), find_guarded_stacks(), claims_settle();
    find_inherited(), claims_settle();
    attribute(bytes, sizes);
    struct maps_usage u;
    maps_usage(&u);
    bytes[L_MMAP_ANON] += bytes[L_OLD_ANON], bytes[L_MMAP_FILE] += bytes[L_OLD_FILE];
    sizes[L_MMAP_ANON] = u.mapped[MAPS_ANON] + sizes[L_OLD_ANON], sizes[L_MMAP_FILE] = u.mapped[MAPS_FILE] + sizes[L_OLD_FILE];
    sizes[L_PROFILER] = mp_memory_used();
    sizes[L_RSS] = 0;
    for (size_t i = 0; i < L.nvmas; i++) sizes[L_RSS] += L.vmas[i].hi - L.vmas[i].lo;
    split_heap(bytes, sizes, h);
}

int ledger_write(struct writer *w, int64_t snapshot, int fatal)
{
    double t0 = mp_now();
    ledger_seconds = 0;
    if (!mp_opt.ledger || read_smaps()) return 0;     /* MP_LEDGER=0, or no /proc: no ledger */
    struct heap_now h = heap_now(fatal);    /* after the ledger's buffers grew: their chunks are in it */
    uint64_t bytes[NACC] = { 0 }, sizes[NACC] = { 0 };
    account(bytes, sizes, &h);
    int64_t out[NLINES], sum = 0;
    for (int i = 0; i < NLINES; i++) out[i] = (int64_t)bytes[i];
    for (int i = L_LIVE; i < L_UNEXPLAINED; i++) sum += out[i];
    out[L_UNEXPLAINED] = out[L_RSS] - sum;
    int rc = write_lines(w, snapshot, out, sizes);
    ledger_seconds = mp_now() - t0;
    return rc;
}
