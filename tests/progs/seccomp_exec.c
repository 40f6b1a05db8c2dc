/* Runs a command under a seccomp filter that allows every system call
 * (tests/recorder/attach_seccomp.sh: mpquery itself under seccomp, which
 * the kernel's PTRACE_SECCOMP_GET_FILTER refuses with EACCES). */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct sock_filter code[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
    struct sock_fprog prog = { 1, code };
    if (argc < 2 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
        fprintf(stderr, "usage: seccomp_exec COMMAND ARGS... (or the filter was refused)\n");
        return 2;
    }
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    return 127;
}
