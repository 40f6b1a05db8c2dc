/* mpquery's reader of a shared object's dynamic symbols (elf_dynsym.c),
 * on this process's libc: getpid's and getppid's values are the addresses
 * the loader gives them less libc's base (dladdr: the second source); then
 * on copies of that file made hostile (cut short, section headers past its
 * end, a string table past its end, symbol names past the string table's
 * end): no read outside the file (the test would crash or ASan would
 * say), fewer symbols or none, and -1 where the headers cannot be read. */
#define _GNU_SOURCE
#include "../../mpquery/elf_dynsym.c"
#include "check.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

struct found { const char *want[2]; uint64_t value[2]; size_t n; };

static void collect(const char *name, const Elf64_Sym *sym, void *ctx)
{
    struct found *f = ctx;
    f->n++;
    for (int i = 0; i < 2; i++)
        if (!f->value[i] && !strcmp(name, f->want[i])) f->value[i] = sym->st_value;
}

static char *libc_bytes(size_t *size, char *path, size_t n)
{
    Dl_info info;
    CHECK(dladdr((void *)&getpid, &info) && info.dli_fname);
    snprintf(path, n, "%s", info.dli_fname);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    rewind(f);
    char *b = malloc(*size);
    CHECK(b && fread(b, 1, *size, f) == *size);
    fclose(f);
    return b;
}

/* The symbols of bytes (a memfd), their count; rc the function's. */
static size_t read_copy(const char *bytes, size_t size, int *rc, struct found *f)
{
    int fd = memfd_create("libc-copy", MFD_CLOEXEC);
    CHECK(fd >= 0 && write(fd, bytes, size) == (ssize_t)size);
    *f = (struct found){ { "getpid", "getppid" }, { 0, 0 }, 0 };
    *rc = elf_each_dynsym(fd, collect, f);
    return f->n;
}

int main(void)
{
    char path[4096];
    size_t size;
    char *libc = libc_bytes(&size, path, sizeof path);
    Dl_info info;
    CHECK(dladdr((void *)&getpid, &info));
    struct found f;
    int rc;
    size_t all = read_copy(libc, size, &rc, &f);
    CHECK(rc == 0 && all > 1000);
    CHECK(f.value[0] == (uint64_t)((char *)(void *)&getpid - (char *)info.dli_fbase));
    CHECK(f.value[1] == (uint64_t)((char *)(void *)&getppid - (char *)info.dli_fbase));
    printf("  ok: %s: %zu symbols; getpid and getppid at the loader's addresses less libc's base\n", path, all);

    char *bad = malloc(size);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)bad;
    memcpy(bad, libc, size);
    CHECK(read_copy(bad, size / 2, &rc, &f) == 0 && rc == -1);      /* its section headers are at the end */
    memcpy(bad, libc, size);
    eh->e_shoff = size - 8;
    CHECK(read_copy(bad, size, &rc, &f) == 0 && rc == -1);
    memcpy(bad, libc, size);
    eh->e_shentsize = 1;
    CHECK(read_copy(bad, size, &rc, &f) == 0 && rc == -1);
    printf("  ok: cut short, section headers past the end or of another size: -1, no symbol\n");
    Elf64_Shdr *sh = (Elf64_Shdr *)(bad + ((Elf64_Ehdr *)libc)->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        memcpy(bad, libc, size);
        if (sh[i].sh_type != SHT_DYNSYM) continue;
        sh[sh[i].sh_link].sh_offset = size - 16;                   /* the names past the end */
        CHECK(read_copy(bad, size, &rc, &f) == 0 && rc == 0);
        memcpy(bad, libc, size);
        sh[sh[i].sh_link].sh_size = 64;                            /* most names past the table's end */
        size_t few = read_copy(bad, size, &rc, &f);
        CHECK(rc == 0 && few < all && !f.value[0]);
        memcpy(bad, libc, size);
        sh[i].sh_size = (uint64_t)1 << 62;                           /* the symbols past the end */
        CHECK(read_copy(bad, size, &rc, &f) == 0 && rc == 0);
    }
    printf("  ok: a string table or symbols past the end: none; names past the table's end: left out\n");
    free(bad);
    free(libc);
    return 0;
}
