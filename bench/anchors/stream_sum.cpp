// bench/workloads/stream_sum.pc with a C++20 generator.
#include "coro.hpp"
extern "C" {
#include "common.h"
}
volatile long long items = 100000000;
Generator<long long> numbers(long long n) { for (long long i = 0; i < n; i++) co_yield i; }
int main() {
    long long n = items, start = now_ns(), s = 0;
    for (auto g = numbers(n); g.next();) { long long v = g.value(); s += v ^ (v >> 7); }
    report(s, n, start);
}
