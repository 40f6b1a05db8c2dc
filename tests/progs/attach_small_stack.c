/* A target of mpquery record --pid with little stack where it waits
 * (tests/recorder/attach_small_stack.sh, issue 41). "thread": a worker
 * thread with a 64 KiB stack waits in read(0) with 6 KiB of it left (its
 * frames fill the rest), the main thread in pthread_join (never a safe
 * point): the worker is the one called into. "altstack": the main thread
 * waits in read(0) inside a SIGUSR1 handler running on an 8 KiB
 * alternate stack in the middle of a 24 KiB malloc'd block whose other
 * 16 KiB are a canary. Both print what they checked at the end of stdin
 * and exit 0, or 1 when a canary byte changed. Never preloaded. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CANARY 0x5a
#define LEFT (6 << 10)

static uintptr_t stack_lo;
static char *block;

static void wait_stdin(void)
{
    char c;
    while (read(0, &c, 1) > 0) {
    }
}

/* Recurses until less than LEFT bytes of the stack are left, then waits. */
static size_t descend(int depth)
{
    volatile char frame[512];
    memset((char *)frame, depth, sizeof frame);
    if ((uintptr_t)frame - stack_lo > LEFT + sizeof frame) return descend(depth + 1) + frame[0] - depth;
    wait_stdin();
    return (uintptr_t)frame - stack_lo;
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_attr_t a;
    void *lo;
    size_t size;
    pthread_getattr_np(pthread_self(), &a);
    pthread_attr_getstack(&a, &lo, &size);
    pthread_attr_destroy(&a);
    stack_lo = (uintptr_t)lo;
    size_t left = descend(0);
    printf("worker: %s KiB of stack left while waiting\n", left < LEFT + 1024 ? "under 7" : "over 7");
    return NULL;
}

static int thread_mode(void)
{
    pthread_attr_t a;
    pthread_t t;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 << 10);
    if (pthread_create(&t, &a, worker, NULL) != 0) return 2;
    pthread_join(t, NULL);
    return 0;
}

static void on_usr1(int sig)
{
    (void)sig;
    wait_stdin();
}

/* SIGUSR1 to the main thread once it waits in pthread_join's futex (its
 * /proc/self/task/TID/syscall says so): the handler interrupts a system
 * call, not libc's code around it. */
static void *send_usr1(void *main_thread)
{
    char path[64], text[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)getpid());
    for (;;) {
        FILE *f = fopen(path, "re");
        int waiting = f && fgets(text, sizeof text, f) && atoi(text) == SYS_futex;
        if (f) fclose(f);
        if (waiting) break;
        usleep(1000);
    }
    pthread_kill(*(pthread_t *)main_thread, SIGUSR1);
    return NULL;
}

static int altstack_mode(void)
{
    block = malloc(24 << 10);
    memset(block, CANARY, 24 << 10);
    stack_t ss = { .ss_sp = block + (8 << 10), .ss_size = 8 << 10 };
    struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK | SA_RESTART };
    sigemptyset(&sa.sa_mask);
    if (sigaltstack(&ss, NULL) || sigaction(SIGUSR1, &sa, NULL)) return 2;
    memset(block + (8 << 10), CANARY, 8 << 10);
    pthread_t self = pthread_self(), t;
    pthread_create(&t, NULL, send_usr1, &self);
    pthread_join(t, NULL);      /* the handler runs in here, waits for stdin's end */
    size_t changed = 0;
    for (size_t i = 0; i < (8u << 10); i++) changed += block[i] != CANARY || block[(16 << 10) + i] != CANARY;
    printf("altstack: %zu canary bytes changed\n", changed);
    return changed ? 1 : 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc == 2 && !strcmp(argv[1], "thread")) return thread_mode();
    if (argc == 2 && !strcmp(argv[1], "altstack")) return altstack_mode();
    fprintf(stderr, "usage: attach_small_stack thread|altstack\n");
    return 2;
}
