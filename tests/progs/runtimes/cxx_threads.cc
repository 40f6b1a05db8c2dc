// C++ runtime: exceptions thrown and caught on 4 std::threads at once.
// Thread k (0..3) runs 100 * (k + 1) rounds, 1000 in all; each round
//   make_label:   one std::string of 40 + k chars (41 + k bytes), freed by
//                 the unwinding: 100*41 + 200*42 + 300*43 + 400*44 = 43000 bytes;
//   throw Failure: one exception object (__cxa_allocate_exception, a 128-byte
//                 header + 8), freed by the catch: 1000 x 136 bytes;
//   keep_record:  one Record (24 bytes) kept; main deletes those of the even
//                 rounds after the join and keeps the others: 500 live.
// Prints each thread's count of caught exceptions; exit status 5.
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

struct Failure { int thread, round; };
struct Record { long thread, round, length; };

static const int THREADS = 4;
static std::vector<Record *> records[THREADS];

__attribute__((noinline)) std::string make_label(int k, int round)
{
    return std::string(40 + k, char('a' + round % 26));
}

__attribute__((noinline)) Record *keep_record(int k, int round, size_t length)
{
    return new Record{k, round, long(length)};
}

__attribute__((noinline)) void do_round(int k, int round)
{
    std::string label = make_label(k, round);
    records[k][round] = keep_record(k, round, label.size());
    if (label.size() > 0) throw Failure{k, round};
}

static void worker(int k, int *caught)
{
    for (int round = 0; round < 100 * (k + 1); round++) {
        try {
            do_round(k, round);
        } catch (const Failure &f) {
            if (f.thread == k && f.round == round) ++*caught;
        }
    }
}

int main()
{
    int caught[THREADS] = {0};
    for (int k = 0; k < THREADS; k++) records[k].resize(100 * (k + 1));
    std::vector<std::thread> threads;
    for (int k = 0; k < THREADS; k++) threads.emplace_back(worker, k, &caught[k]);
    for (auto &t : threads) t.join();
    for (int k = 0; k < THREADS; k++) {
        long length = 0;
        for (size_t round = 0; round < records[k].size(); round++) {
            length += records[k][round]->length;
            if (round % 2 == 0) delete records[k][round];
        }
        std::printf("thread %d: caught %d, label bytes %ld\n", k, caught[k], length);
    }
    return 5;
}
