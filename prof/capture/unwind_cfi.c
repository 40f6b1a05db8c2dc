/* The cfi walker's rules made (unwind.c caches them): the module of a
 * return address found with libdwfl, the rule at the call read from its
 * .eh_frame (or .debug_frame) with libdw and reduced to the packed form of
 * unwind_cfi.h, or R_NONE. Moved from unwind.c verbatim (rule_compute is
 * unwind_rule_compute; its session and the check's counts live here). */
#define _GNU_SOURCE
#include "base.h"
#include "dwfl_session.h"
#include "unwind_cfi.h"

#include <dwarf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <elfutils/libdwfl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static Dwfl *rules_dwfl;
static unsigned long long rules_loader[2];
static _Atomic uint64_t check_rules, check_rules_bad;   /* MP_UNWIND_CHECK */

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

static Dwarf_CFI *cfi_of_module(const char *path);

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

/* The module's answer, kept in its user data (NO_TABLE: its own CFI), so
 * that a rule costs no system call once its module has one: the file's
 * open, fstat and close had been 3 of them per rule (54 rules in
 * `wc -l`, 162 calls; tens of thousands in clang). */
static char no_table;

static Dwarf_CFI *cfi_with_table(Dwfl_Module *m)
{
    const char *path = NULL;
    void **kept = NULL;
    dwfl_module_info(m, &kept, NULL, NULL, NULL, NULL, &path, NULL);
    if (kept && *kept) return *kept == &no_table ? NULL : *kept;
    Dwarf_CFI *cfi = cfi_of_module(path);
    if (kept) *kept = cfi ? (void *)cfi : &no_table;
    return cfi;
}

/* The table CFI of the module's file at path (absolute), read once per
 * file (dev, ino) for the process. */
static Dwarf_CFI *cfi_of_module(const char *path)
{
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
            Elf *elf = NULL;    /* (set by cfi_of_file; gcc cannot see it here) */
            cfi = cfi_of_file(fd, (size_t)st.st_size, &elf);
            table_cfis[table_cfi_n++] = (struct table_cfi){ st.st_dev, st.st_ino, cfi, elf };
        }
    }
    close(fd);
    return cfi;
}


static uint64_t rule_of_cfi(Dwarf_CFI *cfi, Dwarf_Addr pc);
/* The files' pages are given back every TRIM_RULES rules as well as at
 * each flush (unwind_cfi_trim): between clang's start and its exit
 * snapshot, its 3,000 sampled stacks' rules held 7 MB of .eh_frame. */
#define TRIM_RULES 256
/* The rule at return address ip, from the module's CFI at the call (ip-1). */
uint64_t unwind_rule_compute(uintptr_t ip, int check)
{
    static unsigned computed;
    if (++computed % TRIM_RULES == 0) unwind_cfi_trim();
    Dwfl *d = mp_dwfl_session(&rules_dwfl, rules_loader);
    Dwfl_Module *m = d ? dwfl_addrmodule(d, ip - 1) : NULL;
    if (!m) return R_KNOWN | R_NONE;
    Dwarf_Addr bias;
    Dwarf_CFI *table = dwfl_module_getelf(m, &bias) ? cfi_with_table(m) : NULL;
    Dwarf_CFI *cfi = dwfl_module_eh_cfi(m, &bias);
    if (!cfi) cfi = dwfl_module_dwarf_cfi(m, &bias);
    if (!table) return rule_of_cfi(cfi, ip - 1 - bias);
    uint64_t rule = rule_of_cfi(table, ip - 1 - bias);
    if (unlikely(check)) {   /* MP_UNWIND_CHECK: the same rule as the module's CFI's */
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

void unwind_cfi_lost(void)
{
    rules_dwfl = NULL;
}

void unwind_cfi_release(void)
{
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
}

/* The files' pages read for rules, given back: a rule, once computed, is
 * in unwind.c's cache, and the binary search table and FDEs it was read
 * from are seldom wanted again, yet each page touched stays resident in
 * this process (with the kernel's fault-around, 64 KiB a touch): clang's
 * libLLVM kept 4 MB of its .eh_frame resident. Their contents are the
 * file's, unchanged (libdw reads in place), so a later read finds them
 * again; the first page of a table's image, whose section header fields
 * cfi_of_file cleared, stays. Under the rules' lock (no rule is being
 * read meanwhile, the session's modules stay as they are). */
void unwind_cfi_trim(void)
{
    for (int i = 0; i < table_cfi_n; i++) {
        size_t size;
        char *img = table_cfis[i].cfi ? elf_rawfile(table_cfis[i].elf, &size) : NULL;
        if (img && size > PAGE_SIZE) madvise(img + PAGE_SIZE, size - PAGE_SIZE, MADV_DONTNEED);
    }
    if (rules_dwfl) mp_dwfl_release_pages(rules_dwfl);
}

void unwind_cfi_counts(uint64_t *rules, uint64_t *bad)
{
    *rules = check_rules, *bad = check_rules_bad;
}
