/* Uncompressed copies of compressed debug files (debugcache.h).
 *
 * Distributions ship separate debug info with its sections compressed
 * (SHF_COMPRESSED: Debian's -dbg and -dbgsym packages, Fedora's debuginfo,
 * what debuginfod serves), and libdw inflates every debug section of a
 * file when it first reads it (dwarf_begin_elf), whatever the addresses
 * asked: for libc6-dbg's 4 MB file, 10 MB of zlib, 65 ms of a process
 * that itself ran for 5 ms, and 8 MB of memory, in every process, since
 * every stack ends in libc's __libc_start_call_main. The copy made here the
 * first time is mapped by the next processes instead: libdw then reads
 * only the pages of the units it looks at.
 *
 * A copy is named by its build-id, written to a temporary file in the
 * same directory and renamed into place (another process writing the same
 * copy meanwhile renames an identical file), and checked against the
 * build-id of the file it stands for each time it is used. Anything that
 * fails leaves the compressed file in use, as without a cache.
 *
 * Only mpquery writes copies (record, after the run; symbolize): the
 * recorder writes nothing but its database, and uses the copies it finds. */
#define _GNU_SOURCE
#include "debugcache.h"
#include "optdefs.h"

#include <dirent.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *debugcache_dir;
int debugcache_writes;
int debugcache_inflated;
uint64_t debugcache_max = (uint64_t)4 << 30;

/* $XDG_CACHE_HOME/mallocprof/debuginfo, else ~/.cache/mallocprof/debuginfo,
 * into out: 0, or -1 when neither is set (absolute) or it does not fit. */
static int default_dir(char *out, size_t size)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/') n = snprintf(out, size, "%s/mallocprof/debuginfo", xdg);
    else if (home && home[0] == '/') n = snprintf(out, size, "%s/.cache/mallocprof/debuginfo", home);
    else return -1;
    return n > 0 && (size_t)n < size ? 0 : -1;
}

void debugcache_enable(int on)
{
    static char dir[4096];
    debugcache_dir = on && default_dir(dir, sizeof dir) == 0 ? dir : NULL;
}

const char *debugcache_setup(int writes)
{
    static char bad[200];
    const char *v = getenv("MP_DEBUGINFO_CACHE");
    int on = 1;
    bad[0] = 0;
    if (v && *v && mp_option_parse(VAL_BOOL, v, &on, sizeof on)) {
        on = 1;
        snprintf(bad, sizeof bad, "MP_DEBUGINFO_CACHE=%.60s is not 0 or 1", v);
    }
    v = getenv("MP_DEBUGINFO_CACHE_SIZE");
    uint64_t max;
    if (v && *v) {
        if (mp_option_parse(VAL_SIZE, v, &max, sizeof max) == 0) debugcache_max = max;
        else snprintf(bad, sizeof bad, "MP_DEBUGINFO_CACHE_SIZE=%.60s is not a size (bytes, or K, M, G)", v);
    }
    debugcache_enable(on);
    debugcache_writes = writes;
    elf_version(EV_CURRENT);        /* libelf before any elf_begin (libdwfl says it too) */
    return bad[0] ? bad : NULL;
}

/* The size of elf's copy, near enough (its sections inflated) when any of
 * its sections is compressed (SHF_COMPRESSED); 0 when none is. */
static uint64_t inflated_size(Elf *elf)
{
    uint64_t size = 0;
    int compressed = 0;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        GElf_Chdr ch;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS) continue;
        if ((sh.sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch)) compressed = 1, size += ch.ch_size;
        else size += sh.sh_size;
    }
    return compressed ? size : 0;
}

/* Room in dir for a copy of `need` bytes: the oldest copies removed while
 * the copies would pass debugcache_max together; -1 when it cannot fit. */
static int make_room(const char *dir, uint64_t need)
{
    if (need > debugcache_max) return -1;
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct copy { char name[256]; time_t mtime; uint64_t size; } *v = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    time_t now = time(NULL);
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        struct stat st;
        const char *dot = strstr(e->d_name, ".debug");
        if (!dot || len >= sizeof v->name || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
            !S_ISREG(st.st_mode))
            continue;
        /* not a copy: counted; a copy being written (NAME.debug.XXXXXX)
         * too, unless an mpquery killed while writing it left it an hour
         * ago: then removed */
        if (dot[6]) {
            if (dot[6] != '.' || now - st.st_mtime < 3600 || unlinkat(dirfd(d), e->d_name, 0) != 0)
                total += (uint64_t)st.st_blocks * 512;
            continue;
        }
        if (n == cap) {
            struct copy *w = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof *v);
            if (!w) break;
            v = w;
        }
        memcpy(v[n].name, e->d_name, len + 1);
        v[n].mtime = st.st_mtime;
        v[n].size = (uint64_t)st.st_blocks * 512;
        total += v[n++].size;
    }
    while (total + need > debugcache_max && n > 0) {
        size_t oldest = 0;
        for (size_t i = 1; i < n; i++)
            if (v[i].mtime < v[oldest].mtime) oldest = i;
        if (unlinkat(dirfd(d), v[oldest].name, 0) == 0) total -= v[oldest].size;
        v[oldest] = v[--n];
    }
    free(v);
    closedir(d);
    return total + need > debugcache_max ? -1 : 0;
}

/* elf's build-id into bits (up to max bytes): its length; -1 for none
 * (or a longer one). */
static int elf_build_id(Elf *elf, unsigned char *bits, int max)
{
    const void *id;
    ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
    if (n <= 0 || n > max) return -1;
    memcpy(bits, id, (size_t)n);
    return (int)n;
}

/* The same of the ELF file at fd. */
static int fd_build_id(int fd, unsigned char *bits, int max)
{
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!elf) return -1;
    int n = elf_build_id(elf, bits, max);
    elf_end(elf);
    return n;
}

static int mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        int r = mkdir(path, 0755);
        *p = '/';
        if (r && errno != EEXIST) return -1;
    }
    return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

/* src with every compressed section inflated, written to out: the same
 * headers, sections and data, laid out again by libelf (the program
 * headers of a debug file describe sections it does not hold: they are
 * copied as they are). */
static int write_uncompressed(Elf *src, int out)
{
    GElf_Ehdr eh;
    size_t phnum, shstrndx;
    if (!gelf_getehdr(src, &eh) || elf_getphdrnum(src, &phnum) || elf_getshdrstrndx(src, &shstrndx) ||
        shstrndx >= SHN_LORESERVE)
        return -1;
    Elf *dst = elf_begin(out, ELF_C_WRITE, NULL);
    if (!dst) return -1;
    int ok = gelf_newehdr(dst, gelf_getclass(src)) != NULL;
    if (ok && phnum) {
        ok = gelf_newphdr(dst, phnum) != NULL;
        for (size_t i = 0; ok && i < phnum; i++) {
            GElf_Phdr ph;
            ok = gelf_getphdr(src, (int)i, &ph) && gelf_update_phdr(dst, (int)i, &ph);
        }
    }
    for (Elf_Scn *scn = NULL; ok && (scn = elf_nextscn(src, scn));) {
        GElf_Shdr sh;
        ok = gelf_getshdr(scn, &sh) != NULL;
        if (ok && (sh.sh_flags & SHF_COMPRESSED))
            ok = elf_compress(scn, 0, 0) >= 0 && gelf_getshdr(scn, &sh) != NULL;
        Elf_Scn *copy = ok ? elf_newscn(dst) : NULL;
        ok = copy && gelf_update_shdr(copy, &sh);
        for (Elf_Data *d = NULL; ok && (d = elf_getdata(scn, d));) {
            Elf_Data *nd = elf_newdata(copy);
            if (!(ok = nd != NULL)) break;
            nd->d_buf = d->d_buf;
            nd->d_type = d->d_type;
            nd->d_size = d->d_size;
            nd->d_off = d->d_off;
            nd->d_align = d->d_align;
            nd->d_version = d->d_version;
        }
    }
    if (ok) {
        GElf_Ehdr neh;
        ok = gelf_getehdr(dst, &neh) != NULL;
        memcpy(neh.e_ident, eh.e_ident, EI_NIDENT);
        neh.e_type = eh.e_type;
        neh.e_machine = eh.e_machine;
        neh.e_version = eh.e_version;
        neh.e_entry = eh.e_entry;
        neh.e_flags = eh.e_flags;
        neh.e_shstrndx = (GElf_Half)shstrndx;
        ok = ok && gelf_update_ehdr(dst, &neh) && elf_update(dst, ELF_C_WRITE) >= 0;
    }
    elf_end(dst);
    return ok ? 0 : -1;
}

/* An uncompressed copy of the file at fd written to path (replacing what
 * is there): 0, or -1 with nothing left behind. */
static int make_copy(int fd, const char *path)
{
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp) return -1;
    int out = mkostemp(tmp, O_CLOEXEC);
    if (out < 0) return -1;
    Elf *src = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    int ok = src && write_uncompressed(src, out) == 0 && fchmod(out, 0644) == 0;
    if (src) elf_end(src);
    if (close(out)) ok = 0;
    if (ok && rename(tmp, path) == 0) return 0;
    unlink(tmp);
    return -1;
}

/* A copy is read only if it is this user's or root's and nobody else may
 * write it (a root process run with a user's HOME parses no file that user
 * could have put there). */
static int trusted(int fd)
{
    struct stat st;
    uid_t me = geteuid();
    return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_uid == me || st.st_uid == 0) &&
           !(st.st_mode & (S_IWGRP | S_IWOTH));
}

int debugcache_use(int fd, char **name)
{
    if (fd < 0 || !debugcache_dir || !*debugcache_dir) return fd;
    unsigned char bits[64], have[64];
    uint64_t need = 0;
    int len = -1;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);     /* its size and build-id, one reading */
    if (elf && (need = inflated_size(elf))) len = elf_build_id(elf, bits, sizeof bits);
    if (elf) elf_end(elf);
    if (len <= 0) return fd;
    char path[4096];
    int dirlen = snprintf(path, sizeof path, "%s/", debugcache_dir), n = dirlen;
    for (int i = 0; i < len && n > 0 && (size_t)n + 3 < sizeof path; i++)
        n += snprintf(path + n, sizeof path - (size_t)n, "%02x", bits[i]);
    if (dirlen <= 1 || (size_t)n + sizeof ".debug" + 8 > sizeof path) return fd;
    strcpy(path + n, ".debug");
    for (int attempt = 0; attempt < 2; attempt++) {
        int c = open(path, O_RDONLY | O_CLOEXEC);
        if (c >= 0 && trusted(c) && fd_build_id(c, have, sizeof have) == len && !memcmp(have, bits, (size_t)len)) {
            char *copy_name = strdup(path);
            if (copy_name) {
                free(*name);
                *name = copy_name;
                close(fd);
                return c;
            }
        }
        if (c >= 0) close(c);
        if (attempt || !debugcache_writes) break;
        /* missing, or not the copy it should be (replaced) */
        char path_dir[4096];
        snprintf(path_dir, sizeof path_dir, "%.*s", dirlen - 1, path);
        int made = mkdirs(path_dir);
        if (made || make_room(path_dir, need) || make_copy(fd, path)) break;
    }
    if (!debugcache_writes) debugcache_inflated++;
    return fd;
}
