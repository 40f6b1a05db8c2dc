// churn: the C++ allocation churn of the performance issue. Each thread
// repeatedly fills an unordered_map<int, std::string>, grows vectors of
// strings and concatenates strings; every thread does the same work, so
// "churn 2" measures the per-thread slowdown next to "churn 1".
// Usage: churn [THREADS] [ROUNDS]; prints a checksum so nothing is elided.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

static const int kKeys = 20000;  // map entries (and vector elements) per round

// One round makes about 90,000 allocations (80 rounds: 7.2 M): per key a map
// node, value strings, vector elements and reallocations, concatenation buffers.
static size_t round_of_churn(int round)
{
    size_t sum = 0;
    std::unordered_map<int, std::string> map;
    for (int k = 0; k < kKeys; k++)
        map[k] = "value number " + std::to_string(k * 7 + round) + " of the map";
    std::vector<std::string> vec;
    for (int k = 0; k < kKeys; k++)
        vec.push_back(map[k] + "/" + std::to_string(k));
    std::string text;
    for (int k = 0; k < kKeys; k += 4)
        text += vec[k].substr(0, 20) + ";";
    for (auto &entry : map) sum += entry.second.size();
    return sum + vec.size() + text.size();
}

static void worker(int rounds, size_t *result)
{
    size_t sum = 0;
    for (int r = 0; r < rounds; r++) sum += round_of_churn(r);
    *result = sum;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    int rounds = argc > 2 ? atoi(argv[2]) : 80;
    if (threads < 1) threads = 1;
    std::vector<size_t> results(threads);
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; t++) pool.emplace_back(worker, rounds, &results[t]);
    worker(rounds, &results[0]);
    for (auto &th : pool) th.join();
    size_t total = 0;
    for (size_t r : results) total += r;
    printf("churn: %d thread(s), checksum %zu\n", threads, total);
    return 0;
}
