/* A target of mpquery record --pid under a seccomp filter that kills the
 * process on openat (tests/recorder/attach_seccomp.sh, issue 41): it
 * allocates in a loop, waiting on stdin; at its end prints "N lines" and
 * exits 3. Never preloaded. */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof code / sizeof code[0], code };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) return 2;
    char line[256];
    unsigned long lines = 0;
    void *p = NULL;
    for (;;) {
        free(p);
        p = malloc(100 + lines % 100);
        struct pollfd fd = { 0, POLLIN, 0 };
        if (poll(&fd, 1, 10) <= 0) continue;
        if (!fgets(line, sizeof line, stdin)) break;
        lines++;
    }
    free(p);
    printf("%lu lines\n", lines);
    return 3;
}
