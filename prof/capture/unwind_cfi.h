/* The cfi walker's rules (unwind.c) and their construction from a module's
 * DWARF call frame information with libdw (unwind_cfi.c). */
#ifndef MP_UNWIND_CFI_H
#define MP_UNWIND_CFI_H

#include <stdint.h>

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

/* The rule at return address ip, from the module's CFI at the call (ip-1);
 * check (MP_UNWIND_CHECK): compared with the module's own CFI's, counted
 * for unwind_cfi_counts. Called under unwind.c's rules lock, on its stack. */
uint64_t unwind_rule_compute(uintptr_t ip, int check);
/* libdw failed inside unwind_rule_compute: its session left as it is. */
void unwind_cfi_lost(void);
/* The end of an attach session: libdw's session and the files' tables ended. */
void unwind_cfi_release(void);
/* MP_UNWIND_CHECK: rules compared, rules that differed. */
void unwind_cfi_counts(uint64_t *rules, uint64_t *bad);
/* The pages of the files read for rules given back (a flush, before its
 * own work, and every 256 rules computed; under unwind.c's rules lock):
 * read again from the files when needed. */
void unwind_cfi_trim(void);

#endif
