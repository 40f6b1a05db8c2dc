// Hello, world through iostreams: libstdc++'s emergency exception pool
// (allocated by its static constructor, at load) and stdout's buffer stay
// allocated to the end, leaks of the runtimes that mpquery leaks'
// built-in list suppresses.
#include <iostream>

int main()
{
    std::cout << "hello, world" << std::endl;
    return 0;
}
