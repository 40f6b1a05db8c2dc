// C++ exceptions thrown through allocating code while the profiler records.
//   make_message: 1000 x std::string of 100 chars (101 bytes), freed during
//                 unwinding; each throw allocates one exception object
//                 (__cxa_allocate_exception), freed by the catch.
// Prints the number of exceptions caught; exit status 3.
#include <cstdio>
#include <stdexcept>
#include <string>

__attribute__((noinline)) std::string make_message(int i)
{
    return std::string(100, char('a' + i % 26));
}

__attribute__((noinline)) void thrower(int i)
{
    std::string msg = make_message(i);
    if (msg[0] != 0) throw std::out_of_range("x");
}

int main()
{
    int caught = 0;
    for (int i = 0; i < 1000; i++) {
        try {
            thrower(i);
        } catch (const std::out_of_range &) {
            caught++;
        }
    }
    std::printf("caught %d\n", caught);
    return 3;
}
