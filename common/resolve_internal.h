/* What resolve.c and resolve_symtab.c share: a module file's sorted symbol
 * table, which also holds the file's code scope indexes (resolve.c). */
#ifndef MP_RESOLVE_INTERNAL_H
#define MP_RESOLVE_INTERNAL_H

#include "resolve.h"

/* The symbol naming an address (resolve.h), as dwfl_module_addrinfo names it, without
 * its scan of the whole symbol table per address (a quarter of a python3
 * flush; hours for a framework's 100k-symbol libraries and 100k
 * addresses). A module's symbols are sorted by address once; a lookup
 * finds by binary search the few that can matter (those containing the
 * address, and sizeless labels past the end of every sized symbol before
 * it), then applies libdwfl's choice to them in table order: global
 * symbols before local ones, the closest start, then the binding (global,
 * weak, local), then the smaller size, then the first; a sizeless symbol
 * only if no sized one contains the address and it is in the address's
 * section. Tables are keyed by the module's file (path, build-id), hold
 * module-relative addresses and outlive libdwfl sessions; within a session
 * a module finds its table through its user data slot (nothing else in
 * mallocprof uses it), not by formatting its build-id per address. */
struct msym {
    GElf_Addr lo, size;
    GElf_Addr reach, reach_global;  /* largest end (start + size) of the symbols up to here */
    uint32_t index;
    uint8_t global;
};

struct scope_index;

struct symtab {
    const char *path, *build_id;    /* interned: the key */
    struct msym *v;
    size_t n;
    int first_global;
    struct scope_index **scopes;    /* the file's code scopes indexed so far (first_scope), by offset */
    size_t scopes_mask, scopes_count;
    struct symtab *next;
};

extern struct symtab *resolve_symtabs;     /* every table made, the last first */

/* The module's table (NULL: none, out of memory), its load bias in *bias
 * (resolve_symtab.c). */
struct symtab *resolve_mod_symtab(Dwfl_Module *mod, GElf_Addr *bias);

#endif
