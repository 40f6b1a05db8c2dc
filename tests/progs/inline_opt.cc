// Built with -O2 -g (see the Makefile): an always_inline function allocates,
// inlined into a noinline caller; a static function allocates too.
//   inner_alloc   (inlined into middle): 100 x new char[256], freed
//   static_alloc  (static, not exported): 50 x malloc(48), freed
#include <cstdlib>

static volatile int sink;
static char *volatile held[100];     // volatile: the allocations cannot be elided

__attribute__((always_inline)) static inline char *inner_alloc(int i)
{
    char *p = new char[256];
    p[0] = (char)i;
    return p;
}

__attribute__((noinline)) void middle(int n)
{
    for (int i = 0; i < n; i++) held[i % 100] = inner_alloc(i);
    for (int i = 0; i < n && i < 100; i++) delete[] held[i];
}

__attribute__((noinline)) static void static_alloc(int n)
{
    for (int i = 0; i < n; i++) {
        void *p = std::malloc(48);
        sink = (int)(long)p;
        std::free(p);
    }
}

int main()
{
    middle(100);
    static_alloc(50);
    return 0;
}
