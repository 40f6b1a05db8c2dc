/* A shared object's dynamic symbols, read from its file (a process's C
 * library, maybe a container's: every offset checked against the file). */
#ifndef MPQ_ELF_DYNSYM_H
#define MPQ_ELF_DYNSYM_H
#include <elf.h>

/* each(name, sym, ctx) for every defined symbol of the file's .dynsym
 * sections (value not 0, section not undefined); fd closed. 0, or -1 when
 * fd is not a regular ELF64 file that can be read. */
int elf_each_dynsym(int fd, void (*each)(const char *name, const Elf64_Sym *sym, void *ctx), void *ctx);

#endif
