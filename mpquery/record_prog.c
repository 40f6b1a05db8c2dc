/* mpquery record's program: the file a command names, looked up in PATH
 * as execvp and a shell do (a shell's exit codes when it is not there or
 * cannot run), and statically linked programs refused, since LD_PRELOAD
 * never reaches them; the dynamic loader run as a command (ld.so ./prog)
 * is no static program: it runs prog, and LD_PRELOAD with it. */
#include "mpquery.h"
#include "record_prog.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file execvp would run (malloc'd), or NULL with *denied the first
 * file of that name in PATH that is there but not executable (malloc'd,
 * or NULL), as a shell remembers it to say "Permission denied". */
static char *resolve(const char *cmd, char **denied)
{
    *denied = NULL;
    if (strchr(cmd, '/')) return xstrdup(cmd);
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    struct strbuf sb = { 0 };
    for (const char *p = path;; ) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        sb.len = 0;
        if (n) sb_add(&sb, p, n); else sb_puts(&sb, ".");
        sb_putc(&sb, '/');
        sb_puts(&sb, cmd);
        struct stat st;
        if (stat(sb.s, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(sb.s, X_OK) == 0) {
                free(*denied);
                *denied = NULL;
                return sb.s;
            }
            if (!*denied) *denied = xstrdup(sb.s);
        }
        if (!colon) break;
        p = colon + 1;
    }
    sb_free(&sb);
    return NULL;
}

/* An ELF file's program headers: what record_prog needs of them. */
struct segment { uint32_t type; uint64_t offset, vaddr, filesz; };
enum { MAX_SEGMENTS = 64 };

/* The program headers of the ELF file (at most MAX_SEGMENTS; *is64 its
 * class), or -1 when it is no ELF file this can read. */
static int segments(int fd, struct segment *seg, int *is64)
{
    unsigned char ident[EI_NIDENT];
    if (pread(fd, ident, sizeof ident, 0) != (ssize_t)sizeof ident || memcmp(ident, ELFMAG, SELFMAG)) return -1;
    *is64 = ident[EI_CLASS] == ELFCLASS64;
    uint64_t phoff;
    unsigned phnum;
    if (*is64) {
        Elf64_Ehdr eh;
        if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || eh.e_phentsize != sizeof(Elf64_Phdr)) return -1;
        phoff = eh.e_phoff, phnum = eh.e_phnum;
    } else if (ident[EI_CLASS] == ELFCLASS32) {
        Elf32_Ehdr eh;
        if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || eh.e_phentsize != sizeof(Elf32_Phdr)) return -1;
        phoff = eh.e_phoff, phnum = eh.e_phnum;
    } else {
        return -1;
    }
    int n = 0;
    for (unsigned i = 0; i < phnum && n < MAX_SEGMENTS; i++, n++) {
        Elf64_Phdr p64;
        Elf32_Phdr p32;
        size_t size = *is64 ? sizeof p64 : sizeof p32;
        if (pread(fd, *is64 ? (void *)&p64 : (void *)&p32, size, (off_t)(phoff + i * size)) != (ssize_t)size)
            return -1;
        if (*is64) seg[n] = (struct segment){ p64.p_type, p64.p_offset, p64.p_vaddr, p64.p_filesz };
        else seg[n] = (struct segment){ p32.p_type, p32.p_offset, p32.p_vaddr, p32.p_filesz };
    }
    return n;
}

/* The file offset of address vaddr (a PT_LOAD's bytes), or -1. */
static int64_t file_offset(const struct segment *seg, int n, uint64_t vaddr)
{
    for (int i = 0; i < n; i++)
        if (seg[i].type == PT_LOAD && vaddr >= seg[i].vaddr && vaddr - seg[i].vaddr < seg[i].filesz)
            return (int64_t)(seg[i].offset + (vaddr - seg[i].vaddr));
    return -1;
}

/* 1 when the file is a dynamic loader (ld.so: its DT_SONAME is ld-*.so*,
 * ld64.so.*, ld.so.*): run directly, it loads the program its arguments
 * name, and LD_PRELOAD with it. */
static int is_loader(int fd, const struct segment *seg, int n, int is64)
{
    uint64_t strtab = 0, soname = UINT64_MAX;
    for (int i = 0; i < n; i++) {
        if (seg[i].type != PT_DYNAMIC) continue;
        size_t size = is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
        for (uint64_t at = 0; at + size <= seg[i].filesz && at < 65536; at += size) {
            Elf64_Dyn d64;
            Elf32_Dyn d32;
            if (pread(fd, is64 ? (void *)&d64 : (void *)&d32, size, (off_t)(seg[i].offset + at)) != (ssize_t)size)
                return 0;
            int64_t tag = is64 ? d64.d_tag : d32.d_tag;
            uint64_t val = is64 ? d64.d_un.d_val : d32.d_un.d_val;
            if (tag == DT_NULL) break;
            if (tag == DT_STRTAB) strtab = val;
            if (tag == DT_SONAME) soname = val;
        }
    }
    int64_t off = strtab && soname != UINT64_MAX ? file_offset(seg, n, strtab) : -1;
    char name[64] = "";
    if (off < 0 || pread(fd, name, sizeof name - 1, (off_t)(off + (int64_t)soname)) <= 0) return 0;
    return !strncmp(name, "ld", 2) && (name[2] == '-' || name[2] == '.' || !strncmp(name + 2, "64.", 3)) &&
           strstr(name, ".so") != NULL;
}

/* 1 when the file is an ELF executable without a program interpreter (a
 * static or static-pie binary: the dynamic loader never runs, LD_PRELOAD is
 * ignored) but the loader itself; 0 otherwise, including scripts and
 * unreadable files. */
static int is_static_elf(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    struct segment seg[MAX_SEGMENTS];
    int is64, n = segments(fd, seg, &is64), interp = 0;
    for (int i = 0; i < n; i++) interp |= seg[i].type == PT_INTERP;
    int result = n >= 0 && !interp && !is_loader(fd, seg, n, is64);
    close(fd);
    return result;
}

/* The interpreter a "#!" script names (malloc'd), or NULL: the first word
 * of its first line, as the kernel reads it (at most 255 bytes). */
static char *script_interpreter(const char *path)
{
    char line[256];
    int fd = open(path, O_RDONLY);
    if (fd < 0) return NULL;
    ssize_t n = read(fd, line, sizeof line - 1);
    close(fd);
    if (n < 2 || line[0] != '#' || line[1] != '!') return NULL;
    line[n] = 0;
    char *interp = line + 2 + strspn(line + 2, " \t");
    interp[strcspn(interp, " \t\n")] = 0;
    return *interp ? xstrdup(interp) : NULL;
}

/* record_prog.h */
int record_find_program(const char *cmd, char **exe)
{
    char *denied;
    if (!(*exe = resolve(cmd, &denied))) {
        int found = denied != NULL;
        free(denied);
        return found ? error(EXIT_CANNOT_RUN, "%s: %s", cmd, strerror(EACCES))
                     : error(EXIT_NOT_FOUND, "%s: command not found", cmd);
    }
    struct stat st;
    if (stat(*exe, &st) != 0)
        return error(errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN, "%s: %s", cmd, strerror(errno));
    if (S_ISDIR(st.st_mode)) return error(EXIT_CANNOT_RUN, "%s: %s", cmd, strerror(EISDIR));
    if (access(*exe, X_OK) != 0) return error(EXIT_CANNOT_RUN, "%s: %s", cmd, strerror(errno));
    if (is_static_elf(*exe))
        return error(EXIT_BAD_INPUT, "%s: statically linked, LD_PRELOAD cannot profile it", cmd);
    char *interp = script_interpreter(*exe);
    if (interp && is_static_elf(interp))
        warning("%s: its interpreter %s is statically linked: LD_PRELOAD cannot profile it, "
                "nothing of it can be recorded", cmd, interp);
    free(interp);
    return 0;
}
