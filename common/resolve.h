/* One return address of a module → its source-level frames, with elfutils'
 * libdw. Shared by the recorder (prof/symbols.c, at flush time, over the
 * live process) and by `mpquery symbolize` (offline, over files on disk), so
 * both name frames the same way. */
#ifndef MP_RESOLVE_H
#define MP_RESOLVE_H

#include <stdint.h>
#include <elfutils/libdwfl.h>

#define RES_MAX_INLINE 32       /* deepest inline chain kept per address */

/* One source-level frame of a return address. */
struct sym_frame {
    const char *module;         /* path, or "[unknown]" */
    const char *build_id;       /* hex or "" */
    uint64_t offset;            /* address as an ELF virtual address */
    const char *function;       /* demangled, NULL if unknown */
    const char *file;           /* NULL if unknown */
    int line;
};

/* The inline chain at return address `addr` (in libdwfl's address space) of
 * module `mod`, outermost first, into out[0..RES_MAX_INLINE): function, file
 * and line of each level (module, build_id and offset are left alone). Line
 * information is that of addr - 1, the call instruction. The real function
 * is named from the symbol table (static functions too), inlined levels from
 * DWARF. Returns the number of frames, >= 1. */
int resolve_chain(Dwfl_Module *mod, Dwarf_Addr addr, struct sym_frame *out);

/* The name of the symbol that contains addr (libdwfl's address space), the
 * one dwfl_module_addrinfo would give, from a table sorted once per module
 * file; NULL if none. */
const char *resolve_symbol(Dwfl_Module *mod, GElf_Addr addr);

/* The module's main file, its build-id in hex ("" if none) and its load bias. */
void resolve_module(Dwfl_Module *mod, const char **path, const char **build_id, GElf_Addr *bias);

/* libdwfl's find_debuginfo callback for both programs: the module's
 * separate debug info by build-id (.build-id/xx/yyyy.debug) or by
 * .gnu_debuglink along resolve_debuginfo_path (elfutils' format, default
 * ":.debug:/usr/lib/debug"). Unlike dwfl_standard_find_debuginfo it never
 * asks a debuginfod server: nothing here opens a network connection or
 * loads libdebuginfod (and with it libcurl and OpenSSL). A compressed file
 * found is replaced by its uncompressed copy in debugcache_dir, made the
 * first time (debugcache.h). */
int resolve_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                           const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                           char **debuginfo_file_name);
extern char *resolve_debuginfo_path;

/* The uncompressed copy of the debug file of the module at path, whose
 * build-id is build_id (hex), made in the debug-info cache if its debug
 * file is compressed and it has none yet (debugcache.h: debugcache_dir,
 * debugcache_writes): 0 when the module has a debug file, -1 otherwise. */
int resolve_cache_module(const char *path, const char *build_id);

/* A copy of s kept for the life of the process, equal strings shared; NULL
 * for NULL. Uses the real malloc: the recorder calls this only while marked
 * internal. */
const char *resolve_intern(const char *s);
/* Every table and string above freed (their libdwfl sessions ended first). */
void resolve_release(void);

#endif
