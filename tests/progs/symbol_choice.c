/* resolve_symbol (common/resolve.c: a sorted table per module) against
 * libdwfl's dwfl_module_addrinfo (a scan of the whole table per address):
 * for the ELF files given, at five places in and around each of the first
 * 3000 function symbols (start, start + 1, middle, last byte, a few bytes
 * past the end), both must name the same symbol.
 * Prints "checked N, differ M"; exit 1 if M > 0. */
#include "resolve.h"

#include <gelf.h>
#include <stdio.h>
#include <string.h>

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

int main(int argc, char **argv)
{
    long checked = 0, differ = 0;
    for (int f = 1; f < argc; f++) {
        Dwfl *d = dwfl_begin(&callbacks);
        dwfl_report_begin(d);
        Dwfl_Module *mod = dwfl_report_offline(d, argv[f], argv[f], -1);
        dwfl_report_end(d, NULL, NULL);
        int n = mod ? dwfl_module_getsymtab(mod) : -1;
        if (n < 0) {
            fprintf(stderr, "%s: no symbols\n", argv[f]);
            return 2;
        }
        unsigned long long seed = 12345;
        for (int i = 1, nfunc = 0; i < n && nfunc < 3000; i++) {
            GElf_Sym sym;
            GElf_Addr v;
            GElf_Word shndx;
            const char *name = dwfl_module_getsym_info(mod, i, &sym, &v, &shndx, NULL, NULL);
            if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !v) continue;
            nfunc++;
            seed = seed * 6364136223846793005ull + 1;
            GElf_Addr size = sym.st_size;
            GElf_Addr at[5] = { v, v + 1, v + size / 2, v + (size ? size - 1 : 0), v + size + (seed >> 60) };
            for (int k = 0; k < 5; k++) {
                GElf_Off off;
                GElf_Sym s;
                const char *a = dwfl_module_addrinfo(mod, at[k], &off, &s, NULL, NULL, NULL);
                const char *b = resolve_symbol(mod, at[k]);
                checked++;
                if ((a == NULL) != (b == NULL) || (a && strcmp(a, b))) {
                    if (differ++ < 10)
                        printf("%s %#lx: libdwfl %s, resolve_symbol %s\n", argv[f], (unsigned long)at[k],
                               a ? a : "-", b ? b : "-");
                }
            }
        }
        dwfl_end(d);
    }
    printf("checked %ld, differ %ld\n", checked, differ);
    return differ != 0;
}
