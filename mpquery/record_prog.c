/* mpquery record's program: the file a command names, looked up in PATH
 * as execvp and a shell do (a shell's exit codes when it is not there or
 * cannot run), and statically linked programs refused, since LD_PRELOAD
 * never reaches them. */
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

/* 1 when the file is an ELF executable without a program interpreter (a
 * static or static-pie binary: the dynamic loader never runs, LD_PRELOAD is
 * ignored); 0 otherwise, including scripts and unreadable files. */
static int is_static_elf(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    unsigned char ident[EI_NIDENT];
    int result = 0;
    if (pread(fd, ident, sizeof ident, 0) != (ssize_t)sizeof ident || memcmp(ident, ELFMAG, SELFMAG))
        goto out;
    uint64_t phoff;
    unsigned phnum, phentsize;
    if (ident[EI_CLASS] == ELFCLASS64) {
        Elf64_Ehdr eh;
        if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh) goto out;
        phoff = eh.e_phoff; phnum = eh.e_phnum; phentsize = eh.e_phentsize;
        if (phentsize != sizeof(Elf64_Phdr)) goto out;
    } else if (ident[EI_CLASS] == ELFCLASS32) {
        Elf32_Ehdr eh;
        if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh) goto out;
        phoff = eh.e_phoff; phnum = eh.e_phnum; phentsize = eh.e_phentsize;
        if (phentsize != sizeof(Elf32_Phdr)) goto out;
    } else {
        goto out;
    }
    result = 1;
    for (unsigned i = 0; i < phnum && result; i++) {
        uint32_t type;
        if (pread(fd, &type, sizeof type, (off_t)(phoff + (uint64_t)i * phentsize)) != (ssize_t)sizeof type) {
            result = 0;
            break;
        }
        if (type == PT_INTERP) result = 0;
    }
out:
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
