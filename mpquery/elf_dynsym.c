/* A shared object's dynamic symbols, read from its file, mapped once;
 * nothing read outside the file whatever its headers say. */
#include "elf_dynsym.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The section's bytes lie inside the file. */
static int inside(const Elf64_Shdr *s, uint64_t size)
{
    return s->sh_offset <= size && s->sh_size <= size - s->sh_offset;
}

static void each_in(const char *img, uint64_t size, const Elf64_Shdr *syms, const Elf64_Shdr *strs,
                    void (*each)(const char *, const Elf64_Sym *, void *), void *ctx)
{
    if (!inside(syms, size) || !inside(strs, size)) return;
    const Elf64_Sym *sym = (const Elf64_Sym *)(img + syms->sh_offset);
    const char *str = img + strs->sh_offset;
    for (size_t k = 0; k < syms->sh_size / sizeof *sym; k++) {
        if (!sym[k].st_value || sym[k].st_shndx == SHN_UNDEF || sym[k].st_name >= strs->sh_size) continue;
        const char *name = str + sym[k].st_name;
        if (memchr(name, 0, strs->sh_size - sym[k].st_name)) each(name, &sym[k], ctx);
    }
}

int elf_each_dynsym(int fd, void (*each)(const char *name, const Elf64_Sym *sym, void *ctx), void *ctx)
{
    if (fd < 0) return -1;
    struct stat st;
    const char *img = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > (off_t)sizeof(Elf64_Ehdr)
                      ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (img == MAP_FAILED) return -1;
    uint64_t size = (uint64_t)st.st_size;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    int ok = !memcmp(img, ELFMAG, SELFMAG) && img[EI_CLASS] == ELFCLASS64 &&
             eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shoff <= size &&
             (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= size - eh->e_shoff;
    for (int i = 0; ok && i < eh->e_shnum; i++) {
        const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
        if (sh[i].sh_type == SHT_DYNSYM && sh[i].sh_link < eh->e_shnum)
            each_in(img, size, &sh[i], &sh[sh[i].sh_link], each, ctx);
    }
    munmap((void *)img, (size_t)st.st_size);
    return ok ? 0 : -1;
}
