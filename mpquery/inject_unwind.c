/* A stopped thread's frames read with its call frame information (libdwfl
 * over ptrace), for inject_safe.c: the return addresses of its live frames
 * only, where a scan of every stack word also meets stale ones (a buffer
 * in a live frame that held them from earlier calls). The module files
 * are opened through target_fs.c (no link followed outside the target's
 * root: issue 41); the thread is ours already (seized and stopped). */
#define _GNU_SOURCE
#include "inject.h"
#include "target_fs.h"

#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pid_t open_pid;

static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
                    Elf **elfp)
{
    (void)mod, (void)userdata, (void)base, (void)file_name;
    if (!name || name[0] != '/') return -1;       /* [vdso], [stack]: the vDSO has no frames we judge */
    int fd = target_open_library(open_pid, name);
    if (fd < 0) return -1;
    *elfp = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!*elfp) return close(fd), -1;
    return fd;
}

static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                        const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                        char **debuginfo_file_name)
{
    (void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)debuglink_file;
    (void)debuglink_crc, (void)debuginfo_file_name;
    return -1;      /* .eh_frame is in the module itself */
}

static const Dwfl_Callbacks callbacks = {
    .find_elf = find_elf,
    .find_debuginfo = no_debuginfo,
};

/* The process's modules and its threads' state, made once a process. */
static Dwfl *session(pid_t pid)
{
    static Dwfl *dwfl;
    static pid_t for_pid;
    if (for_pid == pid) return dwfl;
    if (dwfl) dwfl_end(dwfl);
    for_pid = pid, open_pid = pid;
    dwfl = dwfl_begin(&callbacks);
    if (dwfl && (dwfl_linux_proc_report(dwfl, pid) != 0 || dwfl_report_end(dwfl, NULL, NULL) != 0 ||
                 dwfl_linux_proc_attach(dwfl, pid, true) != 0))
        dwfl_end(dwfl), dwfl = NULL;
    return dwfl;
}

struct walk {
    Dwfl *dwfl;
    struct inject_frame_pc *out;
    int n, max, guessed;
};

/* The module's own CFI covers a (x86-64's libdwfl otherwise guesses the
 * caller from the frame pointer, which a judgement must not rest on). */
static int has_cfi(Dwfl *dwfl, Dwarf_Addr a)
{
    Dwfl_Module *m = dwfl_addrmodule(dwfl, a);
    Dwarf_Addr bias;
    Dwarf_CFI *cfi = m ? dwfl_module_eh_cfi(m, &bias) : NULL;
    Dwarf_Frame *f = NULL;
    if (!cfi || dwarf_cfi_addrframe(cfi, a - bias, &f) != 0) return 0;
    free(f);
    return 1;
}

static int frame(Dwfl_Frame *state, void *arg)
{
    struct walk *k = arg;
    Dwarf_Addr pc;
    bool activation;
    if (k->n == k->max || !dwfl_frame_pc(state, &pc, &activation)) return k->guessed = 1, DWARF_CB_ABORT;
    if (!has_cfi(k->dwfl, activation ? pc : pc - 1)) return k->guessed = 1, DWARF_CB_ABORT;
    k->out[k->n++] = (struct inject_frame_pc){ pc, activation };
    return DWARF_CB_OK;
}

int inject_unwound(pid_t pid, pid_t tid, struct inject_frame_pc *out, int max)
{
    Dwfl *dwfl = session(pid);
    if (!dwfl) return -1;
    struct walk k = { dwfl, out, 0, max, 0 };
    int rc = dwfl_getthread_frames(dwfl, tid, frame, &k);
    /* known only when the outermost frame was reached, every step by CFI;
     * else (no CFI, too deep, libdwfl could not go on) not */
    return rc == 0 && !k.guessed ? k.n : -1;
}
