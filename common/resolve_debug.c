/* Separate debug files of a module (resolve.h: resolve_find_debuginfo,
 * resolve_cache_module): by build-id or .gnu_debuglink along
 * resolve_debuginfo_path, compressed ones through their uncompressed copy
 * (debugcache.h); moved from resolve.c verbatim. */
#define _GNU_SOURCE
#include "resolve.h"
#include "debugcache.h"
#include "safeopen.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *resolve_debuginfo_path = ":.debug:/usr/lib/debug";

/* Whether the ELF file at fd has the build-id `bits` (or either has none). */
static int same_build_id(int fd, const unsigned char *bits, int len)
{
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!elf) return 0;
    const void *other;
    ssize_t n = dwelf_elf_gnu_build_id(elf, &other);
    int same = len <= 0 || n <= 0 || (n == len && !memcmp(other, bits, (size_t)len));
    elf_end(elf);
    return same;
}

static int open_candidate(const char *path, const unsigned char *bits, int len, char **found)
{
    int fd = mp_open_regular(AT_FDCWD, path, 0, NULL);
    if (fd < 0) return fd;      /* -2: there, but a FIFO, a device... */
    if (!same_build_id(fd, bits, len) || !(*found = strdup(path))) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The entries of an elfutils search path ("+" and "-" prefixes dropped):
 * the next one from *p into *entry, *len; 0 when there is none left. */
static int path_entry(const char **p, const char **entry, int *len)
{
    if (!*p) return 0;
    const char *end = strchr(*p, ':');
    int n = end ? (int)(end - *p) : (int)strlen(*p);
    *entry = *p;
    if (n > 0 && (**entry == '+' || **entry == '-')) (*entry)++, n--;
    *len = n;
    *p = end ? end + 1 : NULL;
    return 1;
}

/* A .gnu_debuglink file along the search path, as elfutils looks for it:
 * an empty entry is the module's directory, a relative one a directory
 * under it, an absolute one a tree that mirrors the module's directory. */
static int find_by_debuglink(const char *path_list, const char *file_name, const char *link,
                             const unsigned char *bits, int len, char **found)
{
    const char *slash = strrchr(file_name, '/');
    if (!slash) return -1;
    int dirlen = (int)(slash - file_name);
    char base[300];     /* a file name (NAME_MAX) and ".debug" */
    if (!link) {
        snprintf(base, sizeof base, "%s.debug", slash + 1);
        link = base;
    }
    const char *p = path_list, *e;
    int n;
    while (path_entry(&p, &e, &n)) {
        char cand[8192];
        if (n == 0) snprintf(cand, sizeof cand, "%.*s/%s", dirlen, file_name, link);
        else if (*e == '/') snprintf(cand, sizeof cand, "%.*s%.*s/%s", n, e, dirlen, file_name, link);
        else snprintf(cand, sizeof cand, "%.*s/%.*s/%s", dirlen, file_name, n, e, link);
        if (strcmp(cand, file_name) != 0) {
            int fd = open_candidate(cand, bits, len, found);
            if (fd >= 0) return fd;
        }
    }
    return -1;
}

/* A separate debug file by build-id along the search path, as elfutils
 * looks for it: DIR/.build-id/xx/yyyy.debug for each absolute entry. */
static int find_by_build_id(const char *path_list, const unsigned char *bits, int len, char **found)
{
    if (len < 2) return -1;
    char hex[2 * 64 + 1];
    for (int i = 0; i < len && i < 64; i++) snprintf(hex + 2 * i, 3, "%02x", bits[i]);
    const char *p = path_list, *e;
    int n, odd = 0;
    while (path_entry(&p, &e, &n)) {
        if (n == 0 || *e != '/') continue;
        char cand[8192];
        snprintf(cand, sizeof cand, "%.*s/.build-id/%.2s/%s.debug", n, e, hex, hex + 2);
        int fd = open_candidate(cand, bits, len, found);
        if (fd >= 0) return fd;
        odd |= fd == -2;
    }
    return odd ? -2 : -1;
}

int resolve_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                           const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                           char **debuginfo_file_name)
{
    const unsigned char *bits = NULL;
    GElf_Addr vaddr;
    int len = dwfl_module_build_id(mod, &bits, &vaddr);
    const char *debugfile = NULL;
    Dwarf_Addr dwbias = 0;
    dwfl_module_info(mod, NULL, NULL, NULL, &dwbias, NULL, NULL, &debugfile);
    /* The module's own debug file is looked up here first: what
     * dwfl_build_id_find_debuginfo finds it opens itself, and libdwfl would
     * use that rather than the copy returned. libdwfl asks again for a dwz
     * file, its debug ELF known then (dwbias set, as elfutils tells the two
     * apart), which is left to it. */
    int own = dwbias == (Dwarf_Addr)-1 && !debugfile, fd = -1;
    if (own && (fd = find_by_build_id(resolve_debuginfo_path, bits, len, debuginfo_file_name)) >= 0)
        return debugcache_use(fd, debuginfo_file_name);
    /* libdwfl's lookup waits on a FIFO where ours found one (-2) */
    fd = fd == -2 ? -1 : dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                                      debuglink_crc, debuginfo_file_name);
    if (fd >= 0 || !file_name) return fd;
    fd = find_by_debuglink(resolve_debuginfo_path, file_name, debuglink_file, bits, len, debuginfo_file_name);
    return debugcache_use(fd, debuginfo_file_name);
}

int resolve_cache_module(const char *path, const char *build_id)
{
    unsigned char bits[64];
    int len = 0;
    for (; len < 64 && build_id[2 * len] && build_id[2 * len + 1]; len++) {
        unsigned v;
        if (sscanf(build_id + 2 * len, "%2x", &v) != 1) return -1;
        bits[len] = (unsigned char)v;
    }
    if (len < 2 || build_id[2 * len]) return -1;
    char *name = NULL;
    int fd = find_by_build_id(resolve_debuginfo_path, bits, len, &name);
    if (fd < 0) {
        int mfd = mp_open_regular(AT_FDCWD, path, 0, NULL);     /* a profile's path: maybe a FIFO */
        Elf *elf = mfd >= 0 ? elf_begin(mfd, ELF_C_READ_MMAP, NULL) : NULL;
        GElf_Word crc;
        const char *link = elf ? dwelf_elf_gnu_debuglink(elf, &crc) : NULL;
        if (link && same_build_id(mfd, bits, len))
            fd = find_by_debuglink(resolve_debuginfo_path, path, link, bits, len, &name);
        if (elf) elf_end(elf);
        if (mfd >= 0) close(mfd);
    }
    if (fd >= 0) fd = debugcache_use(fd, &name);
    free(name);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}
