/* The program's own mappings, each from a function of its own, for
 * tests/recorder/mmap_*.sh. Modes:
 *   kinds FILE  64 MB anonymous, half touched (map_anon); FILE (1 MB,
 *               made here) mapped shared and read through (map_file); 4 MB
 *               whose middle MB is unmapped (map_split); 1 MB grown to 8 MB
 *               by mremap (map_grow); 2 MB (map_fixed_base) whose first MB
 *               is mapped over with MAP_FIXED (map_fixed_over); 1 MB shared
 *               anonymous (map_shared); the break grown by 1 MB then
 *               shrunk by 256 KB (grow_break); then exits 3
 *   heap        malloc's own mappings only: 64 MB, a realloc growing it, two
 *               threads' arenas: none is the program's
 *   threads     two threads map 2 MB and 4 MB (map_in_thread), main 1 MB
 *   fork        1 MB before fork (map_before_fork); the child maps 3 MB
 *               (map_in_child) and unmaps the inherited MB
 *   signal      a SIGUSR1 handler maps 1 MB (map_in_handler)
 *   exec        1 MB (map_before_exec), then exec of itself in mode signal
 *   many        1000 stacks (map_leaf_K under map_deep at depths 0..199,
 *               K = 0..4) map 8 KB twice each; every other mapping unmapped
 *   race        4 threads map and unmap 16 KB 10000 times each (race_map),
 *               keeping the last one, while a fifth allocates
 *   edges       3 MB reserved (map_reserve), its first and second MB mapped
 *               over (map_over_a, map_over_b), then all 3 MB unmapped at
 *               once; 2 MB shrunk to 1 MB in place by mremap (map_shrink);
 *               1 MB moved by mremap onto another 1 MB (map_move_src,
 *               map_move_dst: MREMAP_FIXED replaces the destination)
 *   steps       1 MB (map_step_one), 300 ms, 2 MB (map_step_two) touched,
 *               300 ms, the first unmapped, 300 ms */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MB (1024 * 1024)
#define NOINLINE __attribute__((noinline))

static void *must(void *p, const char *what)
{
    if (p == MAP_FAILED) {
        perror(what);
        exit(1);
    }
    return p;
}

static void touch(char *p, size_t len)
{
    for (size_t i = 0; i < len; i += 4096) p[i] = 1;
}

NOINLINE static void *map_anon(void)
{
    char *p = must(mmap(NULL, 64 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), "map_anon");
    touch(p, 32 * MB);
    return p;
}

NOINLINE static void *map_file(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, MB) != 0) exit(1);
    volatile char *p = must(mmap(NULL, MB, PROT_READ, MAP_SHARED, fd, 0), "map_file");
    close(fd);
    for (size_t i = 0; i < MB; i += 4096) (void)p[i];
    return (void *)p;
}

NOINLINE static void *map_split(void)
{
    char *p = must(mmap(NULL, 4 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), "map_split");
    if (munmap(p + MB, MB) != 0) exit(1);
    return p;
}

NOINLINE static void *map_grow(void)
{
    char *p = must(mmap(NULL, MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), "map_grow");
    touch(p, MB);
    return must(mremap(p, MB, 8 * MB, MREMAP_MAYMOVE), "mremap");
}

NOINLINE static void *map_fixed_base(void)
{
    return must(mmap(NULL, 2 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), "map_fixed_base");
}

NOINLINE static void *map_fixed_over(void *at)
{
    return must(mmap(at, MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), "map_fixed_over");
}

NOINLINE static void *map_shared(void)
{
    char *p = must(mmap(NULL, MB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0), "map_shared");
    touch(p, MB);
    return p;
}

NOINLINE static void grow_break(void)
{
    if (sbrk(MB) == (void *)-1 || sbrk(-256 * 1024) == (void *)-1) exit(1);
}

/* errno and results are the real calls' */
static void check_errno(void)
{
    errno = 1234;
    void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || errno != 1234) printf("errno changed by a mapping that succeeded\n");
    errno = 1234;
    if (munmap(p, 4096) != 0 || errno != 1234) printf("errno changed by munmap\n");
    if (munmap((char *)p + 1, 4096) != -1 || errno != EINVAL) printf("munmap of an unaligned address: not EINVAL\n");
    if (mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED || errno != EINVAL)
        printf("mmap of 0 bytes: not EINVAL\n");
}

static int kinds(const char *path)
{
    check_errno();
    map_anon();
    map_file(path);
    map_split();
    map_grow();
    map_fixed_over(map_fixed_base());
    map_shared();
    grow_break();
    printf("mapped\n");
    return 3;
}

static void *arena_user(void *arg)
{
    (void)arg;
    char *p = malloc(200000);
    memset(p, 1, 200000);
    free(p);
    return NULL;
}

static int heap(void)
{
    char *p = malloc(64 * MB);
    memset(p, 1, 32 * MB);
    p = realloc(p, 96 * MB);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, arena_user, NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    free(p);
    printf("heap\n");
    return 0;
}

NOINLINE static void *map_in_thread(void *arg)
{
    size_t len = (size_t)(uintptr_t)arg;
    return must(mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), "map_in_thread");
}

static void *thread_main(void *arg)
{
    map_in_thread(arg);
    return NULL;
}

static int threads(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        pthread_create(&t[i], NULL, thread_main, (void *)(uintptr_t)((size_t)(i + 1) * 2 * MB));
        pthread_join(t[i], NULL);     /* one after the other: their thread seqs in order */
    }
    map_in_thread((void *)(uintptr_t)MB);
    printf("threads\n");
    return 0;
}

NOINLINE static void *map_before_fork(void) { return map_in_thread((void *)(uintptr_t)MB); }
NOINLINE static void *map_in_child(void) { return map_in_thread((void *)(uintptr_t)(3 * MB)); }

static int forking(void)
{
    void *inherited = map_before_fork();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        map_in_child();
        munmap(inherited, MB);
        exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("fork %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

NOINLINE static void map_in_handler(int sig)
{
    (void)sig;
    int saved = errno;
    map_in_thread((void *)(uintptr_t)MB);
    errno = saved;
}

static int signals(void)
{
    signal(SIGUSR1, map_in_handler);
    raise(SIGUSR1);
    printf("signal\n");
    return 0;
}

NOINLINE static void *map_step_one(void) { return map_in_thread((void *)(uintptr_t)MB); }
NOINLINE static void *map_step_two(void) { return map_in_thread((void *)(uintptr_t)(2 * MB)); }

static int steps(void)
{
    struct timespec pause = { 0, 300 * 1000 * 1000 };
    void *one = map_step_one();
    nanosleep(&pause, NULL);
    touch(map_step_two(), 2 * MB);
    nanosleep(&pause, NULL);
    munmap(one, MB);
    nanosleep(&pause, NULL);
    printf("steps\n");
    return 0;
}

NOINLINE static void *map_before_exec(void) { return map_in_thread((void *)(uintptr_t)MB); }

static int exec_self(const char *self)
{
    map_before_exec();
    fflush(stdout);
    execl(self, self, "signal", (char *)NULL);
    return 1;
}

NOINLINE static char *map_reserve(void) { return must(mmap(NULL, 3 * MB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), "reserve"); }
NOINLINE static void *map_over_a(char *at) { return map_fixed_over(at); }
NOINLINE static void *map_over_b(char *at) { return map_fixed_over(at + MB); }
NOINLINE static void *map_shrink(void)
{
    void *p = must(mmap(NULL, 2 * MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), "map_shrink");
    return must(mremap(p, 2 * MB, MB, 0), "mremap shrink");
}
NOINLINE static void *map_move_src(void) { return must(mmap(NULL, MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), "src"); }
NOINLINE static void *map_move_dst(void) { return must(mmap(NULL, MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), "dst"); }

static int edges(void)
{
    char *r = map_reserve();
    map_over_a(r);
    map_over_b(r);
    if (munmap(r, 3 * MB) != 0) return 1;
    map_shrink();
    void *dst = map_move_dst();
    must(mremap(map_move_src(), MB, MB, MREMAP_MAYMOVE | MREMAP_FIXED, dst), "mremap fixed");
    printf("edges\n");
    return 0;
}

#define LEAF(k) \
    NOINLINE static void *map_leaf_##k(void) \
    { return must(mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), "map_leaf"); }
LEAF(0) LEAF(1) LEAF(2) LEAF(3) LEAF(4)
static void *(*const leaves[5])(void) = { map_leaf_0, map_leaf_1, map_leaf_2, map_leaf_3, map_leaf_4 };

NOINLINE static void *map_deep(int depth, int k)
{
    void *p = depth ? map_deep(depth - 1, k) : leaves[k]();
    __asm__ volatile("" ::: "memory");      /* not a tail call: each depth its own frame */
    return p;
}

static int many(void)
{
    static void *maps[2000];
    int n = 0;
    for (int round = 0; round < 2; round++)
        for (int depth = 0; depth < 200; depth++)
            for (int k = 0; k < 5; k++) maps[n++] = map_deep(depth, k);
    for (int i = 0; i < n; i += 2) munmap(maps[i], 8192);
    printf("many\n");
    return 0;
}

static atomic_int race_stop;

NOINLINE static void *race_map(void *arg)
{
    (void)arg;
    void *p = NULL;
    for (int i = 0; i < 10000; i++) {
        if (p) munmap(p, 16384);
        p = must(mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), "race_map");
    }
    return p;
}

static void *race_alloc(void *arg)
{
    (void)arg;
    while (!atomic_load(&race_stop)) free(malloc(100));
    return NULL;
}

static int race(void)
{
    pthread_t t[5];
    pthread_create(&t[4], NULL, race_alloc, NULL);
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, race_map, NULL);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    atomic_store(&race_stop, 1);
    pthread_join(t[4], NULL);
    printf("race\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "kinds";
    /* Resident bytes as the program touched them, whatever the machine's
     * transparent huge pages: with them ("always"), map_grow's 1 MB landed
     * in map_split's hole, merged with its two parts into one 2 MB-aligned
     * VMA, and its first touch faulted in a 2 MB page, half of it
     * map_split's untouched first MB (CI: rss 1 MB where 0 is expected,
     * 1 run in 3 with the MP_DEBUG recorder's layout). */
    prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
    if (!strcmp(mode, "kinds")) return kinds(argc > 2 ? argv[2] : "mapped.bin");
    if (!strcmp(mode, "heap")) return heap();
    if (!strcmp(mode, "threads")) return threads();
    if (!strcmp(mode, "fork")) return forking();
    if (!strcmp(mode, "signal")) return signals();
    if (!strcmp(mode, "steps")) return steps();
    if (!strcmp(mode, "many")) return many();
    if (!strcmp(mode, "edges")) return edges();
    if (!strcmp(mode, "race")) return race();
    if (!strcmp(mode, "exec")) return exec_self(argv[0]);
    return 2;
}
