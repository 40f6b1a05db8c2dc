// The clang workload of `make bench` (tests/bench/run.sh): clang++-14 -O2 -c
// on this template-heavy translation unit, a copy of
// tests/progs/runtimes/templates.cc (the standard library's containers,
// variant and a recursive template instantiated for several types): a
// few seconds natively, about 500,000 stack-tree nodes and 85,000 stacks
// under full capture.
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <variant>
#include <vector>

template <int N> struct Fib { static constexpr long value = Fib<N - 1>::value + Fib<N - 2>::value; };
template <> struct Fib<0> { static constexpr long value = 0; };
template <> struct Fib<1> { static constexpr long value = 1; };

template <typename T, int N> struct Tower {
    std::map<std::string, std::vector<T>> m;
    std::unordered_map<int, std::tuple<T, std::string, double>> u;
    Tower<T, N - 1> next;
    long run(int k) {
        std::vector<T> v(k);
        std::sort(v.begin(), v.end());
        m["a" + std::to_string(k)] = v;
        u[k] = std::make_tuple(T{}, std::to_string(N), 1.5);
        return (long)v.size() + next.run(k + 1) + Fib<N + 10>::value;
    }
};
template <typename T> struct Tower<T, 0> { long run(int) { return 0; } };

using V = std::variant<int, double, std::string, std::vector<int>>;
long visit_all(const std::vector<V>& vs) {
    long s = 0;
    for (auto& v : vs)
        s += std::visit([](auto&& x) -> long {
            using X = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<X, std::string>) return (long)x.size();
            else if constexpr (std::is_same_v<X, std::vector<int>>) return (long)x.size();
            else return (long)x;
        }, v);
    return s;
}

int main(int argc, char** argv) {
    Tower<int, 4> a; Tower<double, 4> b; Tower<std::string, 3> c; Tower<long, 4> d;

    std::string s = argc > 1 ? argv[1] : "abc123";
    long r = a.run(1) + b.run(2) + c.run(3) + d.run(4);
    std::vector<V> vs{1, 2.0, std::string("x"), std::vector<int>{1, 2}};
    std::function<long(long)> f = [&](long x) { return x + visit_all(vs); };
    std::cout << f(r) << "\n";
}
