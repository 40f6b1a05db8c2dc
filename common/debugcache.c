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
 * recorder writes nothing but its database, and uses the copies it finds.
 *
 * The cache trusts nothing it finds (mpquery often runs as root, with a
 * user's HOME; every preloaded program reads it): its two levels,
 * mallocprof/ and debuginfo/, are opened without following a link and
 * used only when owned by the running user or root and writable by nobody
 * else; a copy is opened from the directory's descriptor without following
 * a link and without waiting (a FIFO), and used only when it is a regular
 * file of that user or root that nobody else may write; copies are written,
 * renamed and removed through that same descriptor, and only the running
 * user's files are removed. */
#define _GNU_SOURCE
#include "debugcache.h"
#include "optdefs.h"
#include "safeopen.h"

#include <dirent.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *debugcache_dir;
static const char *cache_base;      /* debugcache_dir without its two levels */
static const char *const levels[] = { "mallocprof", "debuginfo" };
char debugcache_refused[300];
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
    static char dir[4096], base[4096];
    debugcache_dir = on && default_dir(dir, sizeof dir) == 0 ? dir : NULL;
    if (debugcache_dir)
        snprintf(base, sizeof base, "%.*s", (int)(strlen(dir) - strlen("/mallocprof/debuginfo")), dir);
    cache_base = base;
}

/* Whether st is the running user's or root's, and nobody else may write it. */
static int owned(const struct stat *st)
{
    return (st->st_uid == geteuid() || st->st_uid == 0) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* One level of the cache (name, under dir), made first when create and it
 * is missing, opened without following a link: its descriptor when owned
 * by the running user or root and writable by nobody else; otherwise -1
 * (the reason in debugcache_refused when it is there but not trusted). */
static int open_level(int dir, const char *name, int create)
{
    struct stat st;
    if (create && mkdirat(dir, name, 0755) && errno != EEXIST) return -1;
    int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno != ELOOP && errno != ENOTDIR) return -1;
    if (fd >= 0 ? fstat(fd, &st) : fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW)) {
        if (fd >= 0) close(fd);
        return -1;
    }
    if (fd >= 0 && owned(&st)) return fd;
    char kind[80];
    if (fd < 0) snprintf(kind, sizeof kind, "%s", mp_file_kind(&st));
    else if (st.st_uid != geteuid() && st.st_uid != 0) snprintf(kind, sizeof kind, "owned by uid %u", (unsigned)st.st_uid);
    else snprintf(kind, sizeof kind, "writable by others (mode %04o)", (unsigned)(st.st_mode & 07777));
    int inner = name == levels[1];
    snprintf(debugcache_refused, sizeof debugcache_refused, "%.200s/%s%s%s: %.60s", cache_base, levels[0],
             inner ? "/" : "", inner ? name : "", kind);
    if (fd >= 0) close(fd);
    return -1;
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

/* Room in the cache (its descriptor) for a copy of `need` bytes: the
 * oldest copies removed while the copies would pass debugcache_max
 * together; -1 when it cannot fit. Only regular files of the running user
 * are removed. */
static int make_room(int dir, uint64_t need)
{
    if (need > debugcache_max) return -1;
    int dfd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0) close(dfd);
        return 0;
    }
    struct copy { char name[256]; time_t mtime; uint64_t size; } *v = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    time_t now = time(NULL);
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        struct stat st;
        const char *dot = strstr(e->d_name, ".debug");
        if (!dot || len >= sizeof v->name || fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
            !S_ISREG(st.st_mode))
            continue;
        int mine = st.st_uid == geteuid();
        /* not a copy: counted; a copy being written (NAME.debug.XXXXXX)
         * too, unless an mpquery killed while writing it left it an hour
         * ago: then removed */
        if (dot[6] || !mine) {
            if (!mine || dot[6] != '.' || now - st.st_mtime < 3600 || unlinkat(dir, e->d_name, 0) != 0)
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
        if (unlinkat(dir, v[oldest].name, 0) == 0) total -= v[oldest].size;
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

/* mkdir -p path (the cache's base: $XDG_CACHE_HOME or ~/.cache, the
 * user's own choice, links in it followed). */
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

/* The cache directory's descriptor, its levels made when create (and
 * checked: open_level), or -1. */
static int open_cache(int create)
{
    char base[4096];
    snprintf(base, sizeof base, "%s", cache_base);
    if (!*base || (create && mkdirs(base))) return -1;
    int dir = open(base, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    for (size_t i = 0; dir >= 0 && i < sizeof levels / sizeof *levels; i++) {
        int next = open_level(dir, levels[i], create);
        close(dir);
        dir = next;
    }
    return dir;
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

/* An uncompressed copy of the file at fd written to name in the cache
 * (dir: its descriptor), replacing what is there: 0, or -1 with nothing
 * left behind. */
static int make_copy(int dir, int fd, const char *name)
{
    static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    char tmp[300];
    int out = -1;
    for (int attempt = 0; out < 0 && attempt < 100; attempt++) {
        unsigned char r[6];
        if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
            for (size_t i = 0; i < sizeof r; i++) r[i] = (unsigned char)(rand() ^ getpid() ^ (attempt << i));
        int n = snprintf(tmp, sizeof tmp, "%s.", name);
        if (n < 0 || (size_t)n + sizeof r >= sizeof tmp) return -1;
        for (size_t i = 0; i < sizeof r; i++) tmp[n++] = chars[r[i] % (sizeof chars - 1)];
        tmp[n] = 0;
        out = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out < 0 && errno != EEXIST) return -1;
    }
    if (out < 0) return -1;
    Elf *src = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    int ok = src && write_uncompressed(src, out) == 0 && fchmod(out, 0644) == 0;
    if (src) elf_end(src);
    if (close(out)) ok = 0;
    if (ok && renameat(dir, tmp, dir, name) == 0) return 0;
    unlinkat(dir, tmp, 0);
    return -1;
}

/* The copy called name in the cache (dir), opened without following a
 * link and without waiting: its descriptor when it is a regular file of
 * the running user or root that nobody else may write (a root process run
 * with a user's HOME parses no file that user could have put there). */
static int open_copy(int dir, const char *name)
{
    struct stat st;
    int fd = mp_open_regular(dir, name, O_NOFOLLOW, &st);
    if (fd >= 0 && !owned(&st)) {
        close(fd);
        fd = -1;
    }
    return fd;
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
    char file[2 * 64 + sizeof ".debug"];
    for (int i = 0; i < len; i++) snprintf(file + 2 * i, 3, "%02x", bits[i]);
    strcpy(file + 2 * len, ".debug");
    int dir = open_cache(debugcache_writes);
    for (int attempt = 0; dir >= 0 && attempt < 2; attempt++) {
        int c = open_copy(dir, file);
        if (c >= 0 && fd_build_id(c, have, sizeof have) == len && !memcmp(have, bits, (size_t)len)) {
            char *copy_name = malloc(strlen(debugcache_dir) + 1 + sizeof file);
            if (copy_name) {
                sprintf(copy_name, "%s/%s", debugcache_dir, file);
                free(*name);
                *name = copy_name;
                close(fd);
                close(dir);
                return c;
            }
        }
        if (c >= 0) close(c);
        if (attempt || !debugcache_writes) break;
        /* missing, or not the copy it should be (replaced) */
        if (make_room(dir, need) || make_copy(dir, fd, file)) break;
    }
    if (dir >= 0) close(dir);
    if (!debugcache_writes) debugcache_inflated++;
    return fd;
}
