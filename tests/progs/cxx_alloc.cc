// C++ allocations with known sizes (libstdc++, x86_64):
//   make_objects:  500 x new Node (24 bytes), all deleted
//   make_arrays:   100 x new int[50] (200 bytes), all deleted
//   make_strings:  300 std::string of 40 chars: one 41-byte block each, freed
//   grow_vector:   push_back 1000 ints: blocks of 4,8,16,...,4096 bytes
//                  (11 allocations, 8188 bytes), freed at the end
//   keep_strings:  20 strings of 100 chars kept in a global: 20 x 101, freed by
//                  its destructor at exit, before the exit snapshot
#include <string>
#include <vector>
#include <cstdio>

struct Node { long a, b, c; };

std::vector<std::string> kept;

void make_objects()
{
    for (int i = 0; i < 500; i++) {
        Node *n = new Node{ i, 0, 0 };
        delete n;
    }
}

void make_arrays()
{
    for (int i = 0; i < 100; i++) {
        int *a = new int[50];
        a[0] = i;
        delete[] a;
    }
}

void make_strings()
{
    for (int i = 0; i < 300; i++) {
        std::string s(40, 'a' + i % 26);
        if (s[0] == 0) std::puts("never");
    }
}

void grow_vector()
{
    std::vector<int> v;
    for (int i = 0; i < 1000; i++) v.push_back(i);
}

void keep_strings()
{
    for (int i = 0; i < 20; i++) kept.emplace_back(100, 'x');
}

int main()
{
    kept.reserve(20);   // 1 allocation of 20 * 32 = 640 bytes from main
    make_objects();
    make_arrays();
    make_strings();
    grow_vector();
    keep_strings();
    return 0;
}
